"""The catalog database's schema, brought to the revision this code knows before anything reads or writes it.

The revisions are Alembic's, in versions/, run through Alembic's API on a connection this module holds: no
alembic.ini, nothing to run by hand. A catalog already at the known revision is only read (a read-only user can
open it). Otherwise one opener at a time migrates, in one transaction: the others wait, then find nothing to do.

A catalog made by `create_all`, before there were migrations, has the tables and no version table: revision 0001
adopts its tables as they are, and the later revisions alter them in place. A catalog at a revision this code
does not have was migrated by a newer mqjournal; it is refused (UnknownRevision) before anything is written.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Iterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.pool import NullPool

log = logging.getLogger(__name__)

# Not Alembic's default name: the catalog may share a database with Airflow's metadata, which has alembic_version.
VERSION_TABLE = "mqjournal_catalog_version"

# The PostgreSQL advisory lock openers take around an upgrade ("mqjrnsch" in ASCII): per database, so two catalogs
# on one server do not wait for each other.
_PG_LOCK_KEY = 0x6D716A726E736368

# Every table revision 0001 knows: finding one without a version table means a catalog made by create_all.
FIRST_REVISION_TABLES = frozenset(
    {
        "receiver_saves",
        "receiver_deletions",
        "library_saves",
        "discarded_save_files",
        "stored_objects",
        "operations",
        "save_files_removed_from_host",
        "host_session_leases",
    }
)


class UnknownRevision(Exception):
    """The database is at a revision this code does not have: a newer mqjournal migrated it."""

    def __init__(self, found: list[str], known_head: str) -> None:
        self.found, self.known_head = found, known_head
        super().__init__(f"schema revision {', '.join(found)} is unknown (this code knows up to {known_head})")


@functools.cache
def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(_config())


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    return config


def head() -> str:
    """The newest revision this code knows."""
    found = _script().get_current_head()
    assert found is not None, "the migrations folder has no revision"
    return found


def current(connection: Connection) -> set[str]:
    """The revision the database is at: empty for a new database or one made by create_all."""
    # Read directly rather than through Alembic's MigrationContext, which logs twice at INFO on every open.
    if not inspect(connection).has_table(VERSION_TABLE):
        return set()
    return {row[0] for row in connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}"))}


def _refuse_unknown(found: set[str]) -> None:
    known = {script.revision for script in _script().walk_revisions()}
    if found - known:
        raise UnknownRevision(sorted(found - known), head())


def upgrade(engine: Engine, *, to: str = "head", lock_timeout: float = 30.0) -> None:
    """Bring the database to revision `to` (the newest by default); waits at most `lock_timeout` seconds for
    another opener that is migrating it."""
    target = _script().get_revision(to)
    assert target is not None, f"no revision {to}"
    with engine.connect() as connection:
        found = current(connection)
    _refuse_unknown(found)
    if found == {target.revision}:
        return
    with _one_at_a_time(engine, lock_timeout) as connection:
        found = current(connection)  # again: another opener may have migrated it while this one waited
        _refuse_unknown(found)
        if found == {target.revision}:
            return
        where = engine.url.render_as_string(hide_password=True)
        if not found and (adopted := FIRST_REVISION_TABLES & set(inspect(connection).get_table_names())):
            log.warning(
                "backup catalog %s was made before its schema had migrations: adopting its %d tables at revision "
                "0001 (rows kept), then migrating",
                where,
                len(adopted),
            )
        log.info("backup catalog %s: schema from %s to %s", where, ", ".join(sorted(found)) or "none", target.revision)
        config = _config()
        config.attributes["connection"] = connection
        command.upgrade(config, target.revision)


@contextlib.contextmanager
def _one_at_a_time(engine: Engine, lock_timeout: float) -> Iterator[Connection]:
    """A transaction no other opener migrates in at the same time; committed when the block ends."""
    backend, database = engine.url.get_backend_name(), engine.url.database
    if backend == "postgresql":
        with engine.begin() as connection:
            # Bounds the wait for the lock, and for the tables' locks behind readers; DDL is transactional here.
            connection.execute(text(f"SET LOCAL lock_timeout = '{int(lock_timeout * 1000)}ms'"))
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            yield connection
    elif backend == "sqlite" and database not in (None, "", ":memory:"):
        # BEGIN IMMEDIATE takes the database's write lock before the version is read; other openers wait for it
        # (the busy timeout). The Python driver would begin no transaction before DDL, hence a driver left in
        # autocommit and the BEGIN sent here (SQLAlchemy's documented recipe for pysqlite).
        serial = create_engine(engine.url, connect_args={"timeout": lock_timeout}, poolclass=NullPool)
        event.listen(serial, "connect", lambda dbapi, _: setattr(dbapi, "isolation_level", None))
        event.listen(serial, "begin", lambda connection: connection.exec_driver_sql("BEGIN IMMEDIATE"))
        try:
            with serial.begin() as connection:
                yield connection
        finally:
            serial.dispose()
    else:
        # An in-memory SQLite database has one opener; other databases get no lock: one upgrade at a time is then
        # the operator's to ensure (docs/catalog.md).
        with engine.begin() as connection:
            yield connection
