"""At most N SSH sessions per IBM i host across every worker: leases in the catalog database.

Airflow pools cap sessions overall, but a pool is fixed for all instances of a mapped task, so it cannot cap one
host. A row per (host, slot), unique, is a semaphore every worker sharing the catalog database respects.

A lease is short (`ttl`, 2 minutes by default: mqjournal.settings.LeaseSettings) and renewed by its holder every
quarter of it while the work goes on. A task that is killed (SIGKILL, a lost worker, an OOM) stops renewing, so its
slot is free again within one `ttl`, not after the longest a step could take; a live task holds its slot for as
long as it works.

Every time a lease is compared with is the catalog database's own clock, read in the statement that takes, renews
or expires the lease: the workers' clocks take no part. A worker whose clock ran 10 minutes ahead used to take the
leases of the others for expired (a third session on a host capped at two), and one 10 minutes behind wrote leases
the others took for long expired.

The lease table is made by the catalog's migrations (`mqjournal.migrations`), like the catalog's own tables.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import DateTime, Engine, Float, Integer, String, UniqueConstraint, delete, insert, literal, update
from sqlalchemy.exc import CompileError, IntegrityError, SQLAlchemyError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from mqjournal.catalog import catalog_errors, engine_for, prepare_schema
from mqjournal.errors import MqJournalError
from mqjournal.settings import LeaseSettings, SshSettings

log = logging.getLogger(__name__)

_DEFAULTS = LeaseSettings()
DEFAULT_TTL = _DEFAULTS.ttl


class _Base(DeclarativeBase):
    pass


class _Lease(_Base):
    __tablename__ = "host_session_leases"
    __table_args__ = (UniqueConstraint("host", "slot"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    slot: Mapped[int] = mapped_column(Integer)
    holder: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column(DateTime)  # naive UTC, by the database's clock


class HostBusy(MqJournalError):
    pass


class _DatabaseTime(FunctionElement[datetime]):
    """The catalog database's time now plus `seconds`, in UTC without a zone, as `expires_at` holds it."""

    type = DateTime()
    inherit_cache = True

    def __init__(self, seconds: float = 0.0) -> None:
        super().__init__(literal(seconds, Float()))


@compiles(_DatabaseTime, "sqlite")
def _sqlite_time(element: _DatabaseTime, compiler: SQLCompiler, **kw: Any) -> str:
    # 'now' is UTC and the same for the whole statement; %f is seconds with milliseconds, and the 000 makes the
    # microseconds of the text SQLAlchemy stores for a DateTime, so the two compare as times (SQLite compares text).
    (seconds,) = element.clauses
    return f"strftime('%Y-%m-%d %H:%M:%f000', 'now', {compiler.process(seconds, **kw)} || ' seconds')"


@compiles(_DatabaseTime, "postgresql")
def _postgresql_time(element: _DatabaseTime, compiler: SQLCompiler, **kw: Any) -> str:
    # now() is the time the transaction that takes or renews the lease began, the same for each of its statements.
    (seconds,) = element.clauses
    return f"(now() AT TIME ZONE 'UTC') + make_interval(secs => {compiler.process(seconds, **kw)})"


@compiles(_DatabaseTime)
def _other_time(element: _DatabaseTime, compiler: SQLCompiler, **kw: Any) -> str:
    raise CompileError(
        f"SSH session leases read the catalog database's clock, which mqjournal reads on SQLite and PostgreSQL, "
        f"not on {compiler.dialect.name}: put the catalog on one of those"
    )


class _Renewal(threading.Thread):
    """Pushes the lease's expiry forward while its holder works; stops with the holder's process."""

    def __init__(self, engine: Engine, holder: str, ttl: timedelta) -> None:
        super().__init__(name=f"lease-{holder[:8]}", daemon=True)
        self._engine, self._holder, self._ttl = engine, holder, ttl
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(self._ttl.total_seconds() / 4):
            try:
                with Session(self._engine) as session, session.begin():
                    session.execute(
                        update(_Lease)
                        .where(_Lease.holder == self._holder)
                        .values(expires_at=_DatabaseTime(self._ttl.total_seconds()))
                        .execution_options(synchronize_session=False)
                    )
            except SQLAlchemyError as exc:  # a missed renewal is retried; the lease lasts a whole ttl
                log.warning("could not renew the SSH session lease %s: %s", self._holder, exc)

    def stop(self) -> None:
        self._done.set()
        self.join()


@contextlib.contextmanager
def _database(url: str, doing: str) -> Iterator[None]:
    """The lease table is in the catalog database: a failure there is the catalog's, named as such."""
    try:
        yield
    except IntegrityError:  # a slot taken by another holder: the caller tries the next one
        raise
    except SQLAlchemyError:
        with catalog_errors(url, doing):
            raise


@contextlib.contextmanager
def host_session_slot(
    url: str,
    host: str,
    *,
    slots: int = SshSettings().sessions_per_host,
    wait: float = _DEFAULTS.wait_seconds,
    ttl: timedelta = DEFAULT_TTL,
    poll: float = _DEFAULTS.poll_seconds,
) -> Iterator[int]:
    engine = engine_for(url)
    prepare_schema(engine, url)
    holder = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while True:
        with _database(url, f"take an SSH session lease for {host}"), Session(engine) as session, session.begin():
            session.execute(
                delete(_Lease)
                .where(_Lease.host == host, _Lease.expires_at < _DatabaseTime())
                .execution_options(synchronize_session=False)
            )
        for slot in range(slots):
            try:
                with (
                    _database(url, f"take an SSH session lease for {host}"),
                    Session(engine) as session,
                    session.begin(),
                ):
                    session.execute(
                        insert(_Lease).values(
                            host=host, slot=slot, holder=holder, expires_at=_DatabaseTime(ttl.total_seconds())
                        )
                    )
            except IntegrityError:
                continue
            renewal = _Renewal(engine, holder, ttl)
            renewal.start()
            try:
                yield slot
            finally:
                renewal.stop()
                try:
                    with Session(engine) as session, session.begin():
                        session.execute(delete(_Lease).where(_Lease.holder == holder))
                except SQLAlchemyError as exc:  # it expires by itself within one ttl
                    log.warning("could not release the SSH session lease of %s: %s", host, exc)
                engine.dispose()
            return
        if time.monotonic() > deadline:
            engine.dispose()
            raise HostBusy(host, f"all {slots} SSH session slots stayed taken for {wait:.0f} s", "retry the task later")
        time.sleep(poll)
