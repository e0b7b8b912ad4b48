"""The backup catalog: where every receiver was saved, verified on the host, and which receivers were deleted.

A receiver is identified by host, library, name *and attach time*: names wrap and come back, attach times do not.
SQLite by default; any SQLAlchemy URL in production. The recovery side reads it to find the save files to restore.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pydantic import AwareDatetime, BaseModel, ConfigDict
from sqlalchemy import DateTime, Integer, String, TypeDecorator, UniqueConstraint, create_engine, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


class _UtcDateTime(TypeDecorator):
    """Stored as UTC whatever the database does with time zones; read back aware."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("the catalog stores aware timestamps only")
        return value.astimezone(timezone.utc).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=timezone.utc)


class _Base(DeclarativeBase):
    pass


class _Save(_Base):
    __tablename__ = "receiver_saves"
    __table_args__ = (UniqueConstraint("host", "library", "receiver", "attached_at", "save_file_library", "save_file"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    qmgr_library: Mapped[str] = mapped_column(String(10))
    receiver: Mapped[str] = mapped_column(String(10), index=True)
    library: Mapped[str] = mapped_column(String(10))
    attached_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    detached_at: Mapped[datetime | None] = mapped_column(_UtcDateTime, nullable=True)
    first_sequence: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_sequence: Mapped[int | None] = mapped_column(Integer, nullable=True)
    previous: Mapped[str | None] = mapped_column(String(10), nullable=True)
    next: Mapped[str | None] = mapped_column(String(10), nullable=True)
    size_bytes: Mapped[int] = mapped_column(Integer)
    device: Mapped[str] = mapped_column(String(10), default="*SAVF")
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    saved_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    verified_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    run_id: Mapped[str] = mapped_column(String(250))


class _Deletion(_Base):
    __tablename__ = "receiver_deletions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    receiver: Mapped[str] = mapped_column(String(10))
    library: Mapped[str] = mapped_column(String(10))
    attached_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    deleted_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    delete_option: Mapped[str] = mapped_column(String(12))
    run_id: Mapped[str] = mapped_column(String(250))


class SaveRecord(BaseModel):
    """One verified save of one receiver."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    host: str
    qmgr: str
    qmgr_library: str
    receiver: str
    library: str
    attached_at: AwareDatetime
    detached_at: AwareDatetime | None
    first_sequence: int | None
    last_sequence: int | None
    previous: str | None
    next: str | None
    size_bytes: int
    device: str = "*SAVF"
    save_file_library: str
    save_file: str
    saved_at: AwareDatetime
    verified_at: AwareDatetime
    run_id: str


class DeletionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True)

    host: str
    qmgr: str
    receiver: str
    library: str
    attached_at: AwareDatetime
    deleted_at: AwareDatetime
    delete_option: str
    run_id: str


def engine_for(url: str):
    """An engine for the catalog database; for SQLite, its folder is created and writers wait for the lock."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        return create_engine(url, connect_args={"timeout": 30})
    return create_engine(url)


class Catalog:
    def __init__(self, url: str) -> None:
        self.engine = engine_for(url)
        try:
            _Base.metadata.create_all(self.engine)
        except OperationalError:
            pass  # created by another task at the same moment

    def record_save(self, record: SaveRecord) -> None:
        """Idempotent: recording the same save twice keeps one row."""
        with Session(self.engine) as session, session.begin():
            exists = session.scalar(
                select(_Save.id).where(
                    _Save.host == record.host,
                    _Save.library == record.library,
                    _Save.receiver == record.receiver,
                    _Save.attached_at == record.attached_at,
                    _Save.save_file_library == record.save_file_library,
                    _Save.save_file == record.save_file,
                )
            )
            if exists is None:
                session.add(_Save(**record.model_dump()))

    def saves_of(self, host: str, library: str, receiver: str, attached_at: datetime | None = None) -> list[SaveRecord]:
        """Every verified save of a receiver, newest first (all of its incarnations unless `attached_at`)."""
        query = select(_Save).where(_Save.host == host, _Save.library == library, _Save.receiver == receiver)
        if attached_at is not None:
            query = query.where(_Save.attached_at == attached_at)
        with Session(self.engine) as session:
            rows = session.scalars(query.order_by(_Save.saved_at.desc())).all()
            return [SaveRecord.model_validate(row) for row in rows]

    def is_saved(self, host: str, library: str, receiver: str, attached_at: datetime) -> bool:
        return bool(self.saves_of(host, library, receiver, attached_at))

    def saves_for(self, host: str, qmgr_library: str) -> list[SaveRecord]:
        with Session(self.engine) as session:
            rows = session.scalars(
                select(_Save).where(_Save.host == host, _Save.qmgr_library == qmgr_library).order_by(_Save.attached_at)
            ).all()
            return [SaveRecord.model_validate(row) for row in rows]

    def record_deletion(self, record: DeletionRecord) -> None:
        with Session(self.engine) as session, session.begin():
            session.add(_Deletion(**record.model_dump()))

    def deletions_for(self, host: str, library: str) -> list[DeletionRecord]:
        with Session(self.engine) as session:
            rows = session.scalars(
                select(_Deletion).where(_Deletion.host == host, _Deletion.library == library).order_by(_Deletion.deleted_at)
            ).all()
            return [DeletionRecord.model_validate(row) for row in rows]
