"""The catalog's writes: SQLite writes ahead (WAL), an intent is synced to disk before its command may leave, and an
operation's outcome lands in one transaction with the saves or deletion it proved."""

from __future__ import annotations

import sqlite3
import threading

import pytest
from sqlalchemy import event

from mqjournal.catalog import Catalog, CatalogUnavailable, DeletionRecord, Operation
from tests.backupstore.saves import RUN_ID, receiver_saves

# PRAGMA synchronous reads back as a number (sqlite.org): 1 NORMAL, 2 FULL.
NORMAL, FULL = 1, 2


def _save_intent(catalog: Catalog, save_file: str = "MQJ0001") -> Operation:
    return catalog.begin(
        Operation(
            host="prod1",
            qmgr="PAYROLL",
            qmgr_library="QMPAYROLL",
            kind="save",
            library="QMPAYROLL",
            receivers="AMQA000001 AMQA000002 AMQA000003",
            save_file_library="MQSAVES",
            save_file=save_file,
            run_id=RUN_ID,
        )
    )


def _synchronous_at_each_commit(catalog: Catalog) -> list[int]:
    seen: list[int] = []

    def commit(connection) -> None:
        dbapi = connection.connection.dbapi_connection
        seen.append(dbapi.execute("PRAGMA synchronous").fetchone()[0])

    event.listen(catalog.engine, "commit", commit)
    return seen


def test_a_sqlite_catalog_writes_ahead_with_normal_sync(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    with catalog.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == NORMAL
    catalog.engine.dispose()
    # The mode stays with the file: any other client of it writes ahead too.
    with sqlite3.connect(tmp_path / "catalog.db") as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_catalog_opened_while_another_connection_holds_the_new_files_lock_waits_for_it(tmp_path):
    # Two workers opening a new catalog together: SQLite answers the switch to WAL "database is locked" at once,
    # busy timeout or not, while the other holds the file's lock (CI saw a parallel host survey fail on it).
    path = tmp_path / "catalog.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE other_opener (x)")
    released = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    released.start()
    try:
        catalog = Catalog(f"sqlite:///{path}")
    finally:
        released.join()
        holder.close()
    with catalog.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    catalog.engine.dispose()


def test_a_catalog_whose_lock_is_held_past_its_lock_timeout_is_named_unavailable(tmp_path):
    path = tmp_path / "catalog.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("CREATE TABLE other_opener (x)")
    try:
        with pytest.raises(CatalogUnavailable, match="database is locked"):
            Catalog(f"sqlite:///{path}", lock_timeout=0.3)
    finally:
        holder.close()


def test_an_intent_is_committed_synced_and_an_outcome_is_not(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    seen = _synchronous_at_each_commit(catalog)

    intent = _save_intent(catalog)
    at_intent = list(seen)
    catalog.finish(intent, "done", "3 of 3 saved", saves=receiver_saves())

    assert FULL in at_intent  # the intent's own commit
    assert seen[-1] == NORMAL  # the outcome's: reconciled from the host if a power cut takes it back
    with catalog.engine.connect() as connection:  # the pooled connection went back to NORMAL
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == NORMAL


def test_a_save_outcome_records_its_saves_with_it(empty_database):
    catalog = Catalog(empty_database)
    intent = _save_intent(catalog)

    catalog.finish(intent, "done", "3 of 3 saved in MQSAVES/MQJ0001", saves=receiver_saves())
    catalog.finish(intent, "done", "the same outcome again", saves=receiver_saves())

    assert [s.receiver for s in catalog.saves_for("prod1", "QMPAYROLL")] == ["AMQA000001", "AMQA000002", "AMQA000003"]
    assert catalog.open_operations("prod1", "QMPAYROLL") == []


def test_an_outcome_that_cannot_be_written_leaves_no_save_and_the_intent_open(tmp_path):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}", lock_timeout=0.2)
    intent = _save_intent(catalog)
    holder = sqlite3.connect(tmp_path / "catalog.db")
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        with pytest.raises(CatalogUnavailable, match="record the outcome of save"):
            catalog.finish(intent, "done", "3 of 3 saved", saves=receiver_saves())
    finally:
        holder.rollback()
        holder.close()

    assert catalog.saves_for("prod1", "QMPAYROLL") == []
    assert [op.id for op in catalog.open_operations("prod1", "QMPAYROLL")] == [intent.id]


def test_a_delete_outcome_records_its_deletion_with_it(empty_database):
    catalog = Catalog(empty_database)
    save = receiver_saves()[0]
    intent = catalog.begin(
        Operation(
            host="prod1",
            qmgr="PAYROLL",
            qmgr_library="QMPAYROLL",
            kind="delete",
            library="QMPAYROLL",
            receivers=save.receiver,
            attached_at=save.attached_at,
            delete_option="*NONE",
            run_id=RUN_ID,
        )
    )
    deletion = DeletionRecord(
        host="prod1",
        qmgr="PAYROLL",
        receiver=save.receiver,
        library="QMPAYROLL",
        attached_at=save.attached_at,
        deleted_at=save.saved_at,
        delete_option="*NONE",
        run_id=RUN_ID,
    )

    catalog.finish(intent, "done", "deleted", deletions=[deletion])

    assert catalog.deletions_for("prod1", "QMPAYROLL") == [deletion]
    assert catalog.open_operations("prod1", "QMPAYROLL") == []
