"""The catalog's schema migrations, on SQLite and on PostgreSQL: an older catalog is brought up to date with every
row kept, one made before migrations is adopted, one from a newer mqjournal is refused untouched, and openers racing
on one catalog migrate it once."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, create_engine, event, inspect, text
from sqlalchemy.engine import make_url

from mqjournal import catalog, migrations
from mqjournal.airflow.leases import host_session_slot
from mqjournal.catalog import MAX_SEQUENCE_NUMBER, Catalog, CatalogSchemaTooNew, display_url
from tests.catalog.databases import (
    BIGGEST_BIGINT,
    drift_from_the_models,
    every_row,
    insert_one_row_per_table,
    make_legacy_catalog,
    new_postgres_database,
    save_with_sequences,
    schema_revision,
)


def _another_database(url: str, tmp_path: Path) -> str:
    if url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'other.db'}"
    return new_postgres_database(url)


def _upgrade(url: str, to: str) -> None:
    engine = create_engine(url)
    migrations.upgrade(engine, to=to)
    engine.dispose()


def _sequence_column_types(url: str) -> set[str]:
    engine = create_engine(url)
    columns = inspect(engine).get_columns("receiver_saves")
    engine.dispose()
    return {str(c["type"]) for c in columns if c["name"] in ("first_sequence", "last_sequence")}


_PROOF_COLUMNS = ("proof", "proof_checked_at", "proof_problem")


def _as_before_proof(rows: dict[str, list[dict[str, object]]]) -> dict[str, list[dict[str, object]]]:
    """The rows without revision 0004's columns, each checked to say what every copy before it was: copied."""
    stored = rows["stored_objects"]
    assert all((r["proof"], r["proof_checked_at"], r["proof_problem"]) == ("copied", None, None) for r in stored)
    # Revision 0007's IFS part of a library save: none for the saves catalogued before it.
    saves = rows.get("library_saves", [])
    assert all((r["directory"], r["directory_save_file"]) == (None, None) for r in saves)
    return rows | {
        "stored_objects": [{k: v for k, v in r.items() if k not in _PROOF_COLUMNS} for r in stored],
        **(
            {"library_saves": [{k: v for k, v in r.items() if k not in _DIRECTORY_COLUMNS} for r in saves]}
            if saves
            else {}
        ),
    }


_DIRECTORY_COLUMNS = ("directory", "directory_save_file")


WIDE = {"sqlite": {"VARCHAR(20)"}, "postgresql": {"NUMERIC(20, 0)"}}


def test_revision_1_is_the_schema_create_all_made(empty_database, tmp_path):
    _upgrade(empty_database, "0001")
    legacy = _another_database(empty_database, tmp_path)
    make_legacy_catalog(legacy)
    made_by_create_all = MetaData()
    engine = create_engine(legacy)
    made_by_create_all.reflect(engine)
    engine.dispose()
    engine = create_engine(empty_database)
    with engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"version_table": migrations.VERSION_TABLE, "compare_type": True}
        )
        assert compare_metadata(context, made_by_create_all) == []
    engine.dispose()


def test_a_catalog_at_revision_1_keeps_every_row_and_gets_20_digit_sequence_numbers(empty_database):
    _upgrade(empty_database, "0001")
    insert_one_row_per_table(empty_database)
    before = every_row(empty_database)
    assert _sequence_column_types(empty_database) == {"BIGINT"}

    catalog = Catalog(empty_database)

    assert schema_revision(empty_database) == {migrations.head()} == {"0008_linux_extent_copies"}
    assert _as_before_proof(every_row(empty_database)) == before
    assert _sequence_column_types(empty_database) == WIDE[make_url(empty_database).get_backend_name()]
    assert drift_from_the_models(empty_database) == []
    (kept,) = catalog.saves_for("prod1", "QMPAYROLL")
    assert (kept.first_sequence, kept.last_sequence) == (1, BIGGEST_BIGINT)
    catalog.record_save(save_with_sequences(MAX_SEQUENCE_NUMBER - 10, MAX_SEQUENCE_NUMBER))
    assert [s.last_sequence for s in catalog.saves_for("prod1", "QMPAYROLL")] == [
        BIGGEST_BIGINT,
        MAX_SEQUENCE_NUMBER,
    ]
    catalog.engine.dispose()


def test_a_catalog_made_by_create_all_before_migrations_is_adopted_with_every_row(empty_database, caplog):
    make_legacy_catalog(empty_database)
    insert_one_row_per_table(empty_database)
    before = every_row(empty_database)
    assert schema_revision(empty_database) == set()

    with caplog.at_level(logging.WARNING, logger="mqjournal.migrations"):
        Catalog(empty_database).engine.dispose()

    assert "made before its schema had migrations: adopting its 8 tables" in caplog.text
    assert schema_revision(empty_database) == {migrations.head()}
    assert _as_before_proof(every_row(empty_database)) == before
    assert drift_from_the_models(empty_database) == []


def test_a_catalog_no_lease_was_ever_taken_on_gets_the_lease_table(empty_database):
    make_legacy_catalog(empty_database, without=("host_session_leases",))
    with host_session_slot(empty_database, "prod1", slots=1) as slot:
        assert slot == 0
    assert drift_from_the_models(empty_database) == []


def test_a_catalog_from_a_newer_mqjournal_is_refused_and_left_as_it_is(empty_database):
    Catalog(empty_database).engine.dispose()
    engine = create_engine(empty_database)
    with engine.begin() as connection:  # what a later revision might have done
        connection.execute(text(f"UPDATE {migrations.VERSION_TABLE} SET version_num = '0099'"))
        connection.execute(text("ALTER TABLE receiver_saves ADD COLUMN retention_class VARCHAR(10)"))
    engine.dispose()
    insert_one_row_per_table(empty_database)
    before = every_row(empty_database)
    url = empty_database
    if url.startswith("postgresql"):  # the test server trusts any password: this one is only to be hidden
        url = make_url(url).set(password="s3cret").render_as_string(hide_password=False)

    with pytest.raises(CatalogSchemaTooNew) as refused:
        Catalog(url)
    with pytest.raises(CatalogSchemaTooNew), host_session_slot(url, "prod1", slots=1):
        pass

    message = str(refused.value)
    assert display_url(url) in message and "s3cret" not in message
    assert "revision 0099" in message and f"knows up to {migrations.head()}" in message
    assert "upgrade mqjournal" in message and "not changed" in message
    assert schema_revision(empty_database) == {"0099"}
    assert every_row(empty_database) == before


def test_a_server_catalog_is_checked_once_a_minute_and_a_newer_revision_is_still_refused(empty_database, monkeypatch):
    engine = Catalog(empty_database).engine
    reads: list[str] = []

    def read(_connection, _cursor, statement, *_) -> None:
        if migrations.VERSION_TABLE in statement:
            reads.append(statement)

    event.listen(engine, "before_cursor_execute", read)  # the shared engine of the URL: taken off below
    try:
        Catalog(empty_database)
        with host_session_slot(empty_database, "prod1", slots=1):
            pass
    finally:
        event.remove(engine, "before_cursor_execute", read)
    server = not empty_database.startswith("sqlite")
    # A file catalog is checked at every open; a server's once in SCHEMA_RECHECK_SECONDS.
    assert (not reads) if server else reads

    with create_engine(empty_database).begin() as connection:  # a newer mqjournal migrates it meanwhile
        connection.execute(text(f"UPDATE {migrations.VERSION_TABLE} SET version_num = '0099'"))
    if server:
        Catalog(empty_database)  # within the minute: not looked at again
        monkeypatch.setattr(catalog, "SCHEMA_RECHECK_SECONDS", 0.0)  # the minute is over
    with pytest.raises(CatalogSchemaTooNew):
        Catalog(empty_database)
    with pytest.raises(CatalogSchemaTooNew), host_session_slot(empty_database, "prod1", slots=1):
        pass


_OPEN = """
import pathlib, sys, time
from mqjournal.catalog import Catalog
go = pathlib.Path(sys.argv[2])
print("ready", flush=True)
while not go.exists():
    time.sleep(0.002)
Catalog(sys.argv[1]).saves_for("prod1", "QMPAYROLL")
"""


def test_openers_racing_on_a_catalog_made_before_migrations_migrate_it_once(empty_database, tmp_path):
    make_legacy_catalog(empty_database)
    insert_one_row_per_table(empty_database)
    before = every_row(empty_database)
    go = tmp_path / "go"
    openers = [
        subprocess.Popen(
            [sys.executable, "-c", _OPEN, empty_database, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    try:
        for opener in openers:
            assert opener.stdout is not None and opener.stdout.readline().strip() == "ready"
        go.touch()
        deadline = time.monotonic() + 60
        results = [opener.communicate(timeout=max(1.0, deadline - time.monotonic())) for opener in openers]
    finally:
        for opener in openers:
            opener.kill()
    assert [o.returncode for o in openers] == [0, 0, 0], [err for _, err in results]
    assert schema_revision(empty_database) == {migrations.head()}
    assert _as_before_proof(every_row(empty_database)) == before
    assert drift_from_the_models(empty_database) == []


def test_stored_objects_of_a_catalog_at_revision_2_are_kept_as_copied_and_still_prove_their_saves(empty_database):
    _upgrade(empty_database, "0002")
    insert_one_row_per_table(empty_database)
    before = every_row(empty_database)

    catalog = Catalog(empty_database)

    assert schema_revision(empty_database) == {migrations.head()}
    assert _as_before_proof(every_row(empty_database)) == before
    assert drift_from_the_models(empty_database) == []
    (row,) = before["stored_objects"]
    (copy,) = catalog.stored_copies(str(row["store_url"]))
    assert copy.proof == "copied" and copy.proves
    catalog.engine.dispose()
