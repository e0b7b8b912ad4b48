"""At most N SSH sessions per IBM i host across every worker: leases in the catalog database.

Airflow pools cap sessions overall, but a pool is fixed for all instances of a mapped task, so it cannot cap one
host. A row per (host, slot), unique, is a semaphore every worker sharing the catalog database respects; a lease
left by a killed task expires.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from sqlalchemy import DateTime, Integer, String, UniqueConstraint, delete
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from mqjournal.catalog import engine_for
from mqjournal.errors import MqJournalError


class _Base(DeclarativeBase):
    pass


class _Lease(_Base):
    __tablename__ = "host_session_leases"
    __table_args__ = (UniqueConstraint("host", "slot"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    slot: Mapped[int] = mapped_column(Integer)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC


class HostBusy(MqJournalError):
    pass


@contextlib.contextmanager
def host_session_slot(
    url: str, host: str, *, slots: int = 2, wait: float = 600.0, lease: timedelta = timedelta(hours=2), poll: float = 1.0
) -> Iterator[int]:
    engine = engine_for(url)
    try:
        _Base.metadata.create_all(engine)
    except OperationalError:
        pass  # another worker created the table at the same moment
    holder = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while True:
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        with Session(engine) as session, session.begin():
            session.execute(delete(_Lease).where(_Lease.host == host, _Lease.expires_at < now))
        for slot in range(slots):
            try:
                with Session(engine) as session, session.begin():
                    session.add(_Lease(host=host, slot=slot, holder=holder, expires_at=now + lease))
            except IntegrityError:
                continue
            try:
                yield slot
            finally:
                with Session(engine) as session, session.begin():
                    session.execute(delete(_Lease).where(_Lease.holder == holder))
                engine.dispose()
            return
        if time.monotonic() > deadline:
            engine.dispose()
            raise HostBusy(host, f"all {slots} SSH session slots stayed taken for {wait:.0f} s", "retry the task later")
        time.sleep(poll)
