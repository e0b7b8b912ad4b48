"""Stored objects on PostgreSQL: recorded when a save file is copied into the backup store, and rebuilt from the store
alone into an empty database."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import inspect

from mqjournal.backupstore import BackupStore, rebuild_catalog
from mqjournal.catalog import Catalog
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy
from tests.catalog.databases import new_postgres_database

# Under xdist (make test-fast) these run in one worker, which starts the one PostgreSQL server they share.
pytestmark = pytest.mark.xdist_group("postgresql")


def test_a_catalog_rebuilt_from_the_store_on_postgresql_has_the_rows_recorded_when_putting(postgres_url, tmp_path):
    store = BackupStore(tmp_path / "backups")
    recorded = Catalog(new_postgres_database(postgres_url))
    for save_file, first in [("MQJ0001", 1), ("MQJ0002", 4)]:
        saves = receiver_saves(save_file, first)
        recorded.record_stored(store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves)))
        for save in saves:
            recorded.record_save(save)
    rebuilt = Catalog(new_postgres_database(postgres_url))
    assert rebuild_catalog(store, rebuilt).clean
    assert rebuild_catalog(store, rebuilt).clean  # again: nothing recorded twice
    assert recorded.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000005")
    # Rebuilt rows are claims (their sidecars say so, nothing proves it yet): no receiver counts as backed up.
    assert not rebuilt.is_backed_up_off_partition("prod1", "QMPAYROLL", "AMQA000005")
    assert {c.proof for c in rebuilt.stored_copies(store.url)} == {"claimed_by_sidecar"}
    assert rebuilt.stored_objects("prod1", "PAYROLL", unproven=True) == recorded.stored_objects("prod1", "PAYROLL")
    assert rebuilt.saves_for("prod1", "QMPAYROLL") == recorded.saves_for("prod1", "QMPAYROLL")


def test_a_stored_object_size_is_64_bit(postgres_url):
    catalog = Catalog(postgres_url)
    columns = {c["name"]: c["type"] for c in inspect(catalog.engine).get_columns("stored_objects")}
    assert columns["size_bytes"].python_type is int and "BIGINT" in str(columns["size_bytes"]).upper()
