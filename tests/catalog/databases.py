"""Catalog databases for the tests: new ones on the shared PostgreSQL server, ones made the way catalogs were made
before migrations, their rows, and how far their schema is from the models."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, Table, create_engine, select, text
from sqlalchemy.engine import make_url

from mqjournal import catalog, migrations
from mqjournal.airflow import leases
from mqjournal.catalog import SaveRecord

LEGACY_SCHEMA = Path(__file__).parent / "legacy_schema"
SEQUENCE_COLUMNS = ("first_sequence", "last_sequence")
BIGGEST_BIGINT = 2**63 - 1


def new_postgres_database(postgres_url: str) -> str:
    """A database of its own on the shared server: other tests' rows and schema revisions stay out of it."""
    name = f"catalog_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(postgres_url).set(database=name).render_as_string(hide_password=False)


def make_legacy_catalog(url: str, *, without: tuple[str, ...] = ()) -> None:
    """The tables as create_all made them before migrations (the frozen DDL), but the tables `without`."""
    engine = create_engine(url)
    ddl = (LEGACY_SCHEMA / f"{engine.dialect.name}.sql").read_text()
    statements = [s.strip().rstrip(";") for s in ddl.split("\n\n") if s.strip() and not s.startswith("--")]
    with engine.begin() as connection:
        for statement in statements:
            if not any(f" {table} " in statement or f" {table}(" in statement for table in without):
                connection.exec_driver_sql(statement)
    engine.dispose()


_T0 = datetime(2026, 11, 2, 8, 0)


def insert_one_row_per_table(url: str) -> None:
    """A row in every table of revision 0001, with the biggest sequence number a BIGINT holds."""
    common = {"host": "prod1", "run_id": "scheduled__1"}
    save_file = {"save_file_library": "MQSAVES", "save_file": "MQJ0001"}
    rows: dict[str, dict[str, object]] = {
        "receiver_saves": common
        | save_file
        | {
            "qmgr": "PAYROLL",
            "qmgr_library": "QMPAYROLL",
            "receiver": "AMQA000042",
            "library": "QMPAYROLL",
            "attached_at": _T0,
            "detached_at": _T0,
            "first_sequence": 1,
            "last_sequence": BIGGEST_BIGINT,
            "previous": "AMQA000041",
            "next": "AMQA000043",
            "size_bytes": 3 * 2**30,
            "device": "*SAVF",
            "saved_at": _T0,
            "verified_at": _T0,
        },
        "receiver_deletions": common
        | {
            "qmgr": "PAYROLL",
            "receiver": "AMQA000041",
            "library": "QMPAYROLL",
            "attached_at": _T0,
            "deleted_at": _T0,
            "delete_option": "*NONE",
        },
        "library_saves": common
        | save_file
        | {
            "qmgr": "PAYROLL",
            "qmgr_library": "QMPAYROLL",
            "journal": "AMQAJRN",
            "device": "*SAVF",
            "saved_at": _T0,
            "verified_at": _T0,
            "attached_receiver": "AMQA000043",
            "attached_at": _T0,
            "oldest_needed_receiver": "AMQA000040",
            "oldest_needed_at": _T0,
            "threshold_kb": 2**40,
        },
        "discarded_save_files": common | save_file | {"discarded_at": _T0},
        "stored_objects": common
        | save_file
        | {
            "qmgr": "PAYROLL",
            "qmgr_library": "QMPAYROLL",
            "store_url": "s3://backups/mqjournal",
            "key": "prod1/MQSAVES/MQJ0001.savf",
            "size_bytes": 3 * 2**30,
            "sha256": "0" * 64,
            "created_at": _T0,
            "verified_at": _T0,
            "objects": "[]",
        },
        "operations": common
        | save_file
        | {
            "qmgr": "PAYROLL",
            "qmgr_library": "QMPAYROLL",
            "kind": "save",
            "library": "QMPAYROLL",
            "receivers": "AMQA000042",
            "worker": "worker-1",
            "state": "done",
            "started_at": _T0,
        },
        "save_files_removed_from_host": common | save_file | {"store_key": "k", "removed_at": _T0},
        "host_session_leases": {"host": "prod1", "slot": 0, "holder": "a" * 32, "expires_at": _T0},
    }
    engine = create_engine(url)
    with engine.begin() as connection:
        for name, row in rows.items():
            connection.execute(Table(name, MetaData(), autoload_with=connection).insert().values(**row))
    engine.dispose()


LATER_COLUMNS = frozenset({("stored_objects", "host_sha256")})  # revision 0003_host_sha256


def every_row(url: str) -> dict[str, list[dict[str, object]]]:
    """Every row of every catalog table, sequence numbers as ints whatever their column type."""
    engine = create_engine(url)
    found = {}
    with engine.connect() as connection:
        for name in sorted(migrations.FIRST_REVISION_TABLES):
            table = Table(name, MetaData(), autoload_with=connection)
            found[name] = [
                {
                    k: int(v) if k in SEQUENCE_COLUMNS and v is not None else v
                    for k, v in row.items()
                    # A column a later revision added is NULL in the rows it found: compared as absent.
                    if not ((name, k) in LATER_COLUMNS and v is None)
                }
                for row in connection.execute(select(table).order_by(table.c.id)).mappings()
            ]
    engine.dispose()
    return found


def schema_revision(url: str) -> set[str]:
    engine = create_engine(url)
    with engine.connect() as connection:
        found = migrations.current(connection)
    engine.dispose()
    return found


def drift_from_the_models(url: str) -> list:
    """What Alembic would change for the database to match the models: nothing once the migrations ran."""
    models = MetaData()
    for metadata in (catalog._Base.metadata, leases._Base.metadata):
        for table in metadata.tables.values():
            table.to_metadata(models)
    engine = create_engine(url)
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"version_table": migrations.VERSION_TABLE, "compare_type": True}
        )
        found = compare_metadata(context, models)
    engine.dispose()
    return found


def save_with_sequences(first: int, last: int, *, receiver: str = "AMQA000043") -> SaveRecord:
    """A verified save of a receiver whose entries are numbered `first` to `last`."""
    attached = datetime(2026, 11, 9, 8, 0, tzinfo=UTC)
    return SaveRecord(
        host="prod1",
        qmgr="PAYROLL",
        qmgr_library="QMPAYROLL",
        receiver=receiver,
        library="QMPAYROLL",
        attached_at=attached,
        detached_at=attached + timedelta(hours=1),
        first_sequence=first,
        last_sequence=last,
        previous=None,
        next=None,
        size_bytes=2**31 + 1,
        save_file_library="MQSAVES",
        save_file=f"MQJ{receiver[-4:]}",
        saved_at=attached + timedelta(hours=2),
        verified_at=attached + timedelta(hours=2),
        run_id="scheduled__2",
    )
