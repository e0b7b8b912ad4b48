"""Backup expiry in the backup store: only copies of save files the catalog has discarded leave the store, each
audited, idempotently; a failing store is reported and leaves the catalog as it was."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.ibmi.audit import AuditLog, read_audit
from mqjournal.recovery.store_expiry import expire_copies, in_store, leftover_copies
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy

HOST, QMGR = "prod1", "PAYROLL"


@pytest.fixture(params=["folder", "memory"])
def store(request, tmp_path: Path) -> BackupStore:
    if request.param == "folder":
        return BackupStore(tmp_path / "backups")
    return BackupStore(f"memory://mqjournal-store-expiry/{uuid.uuid4().hex}")


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    return Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")


@pytest.fixture
def audit(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "store-audit.jsonl")


def copied(catalog: Catalog, store: BackupStore, save_file: str, first: int = 1) -> StoredObject:
    """A save file of PAYROLL copied into the store and recorded, as the save step does."""
    saves = receiver_saves(save_file, first=first)
    for s in saves:
        catalog.record_save(s)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves))
    catalog.record_stored(stored)
    return stored


def discard(catalog: Catalog, stored: StoredObject) -> None:
    catalog.record_discarded(HOST, stored.save_file_library, stored.save_file, "expiry1")


def expire(catalog: Catalog, store: BackupStore, audit: AuditLog, approved: set[str]):
    return expire_copies(catalog, store, host=HOST, qmgr=QMGR, approved=approved, audit=audit)


def test_the_copy_of_a_discarded_save_file_is_deleted_and_audited(catalog, store, audit):
    old, new = copied(catalog, store, "MQJ0001"), copied(catalog, store, "MQJ0002", first=4)
    discard(catalog, old)
    result = expire(catalog, store, audit, {old.key, new.key})
    assert result.deleted == [old.key] and result.freed_bytes == old.size_bytes
    assert not in_store(store, old.key) and in_store(store, new.key)
    (record,) = read_audit(audit.path)
    assert record["outcome"] == "ok" and record["command"] == f"DELETE {store.url}/{old.key}"
    assert record["host"] == HOST


def test_a_copy_whose_save_file_is_not_discarded_stays_even_when_approved(catalog, store, audit):
    kept = copied(catalog, store, "MQJ0001")
    result = expire(catalog, store, audit, {kept.key})
    assert result.deleted == [] and in_store(store, kept.key)
    assert read_audit(audit.path) == []


def test_a_copy_the_approver_did_not_see_stays_for_the_next_run(catalog, store, audit):
    old = copied(catalog, store, "MQJ0001")
    discard(catalog, old)
    result = expire(catalog, store, audit, set())
    assert result.not_approved == [old.key] and in_store(store, old.key)
    assert [s.key for s in leftover_copies(catalog, store, HOST, QMGR)] == [old.key]


def test_deleting_again_finds_the_copy_gone_and_changes_nothing(catalog, store, audit):
    old = copied(catalog, store, "MQJ0001")
    discard(catalog, old)
    expire(catalog, store, audit, {old.key})
    again = expire(catalog, store, audit, {old.key})
    assert again.deleted == [] and again.already_gone == [old.key] and again.failed == []
    assert leftover_copies(catalog, store, HOST, QMGR) == []


def test_an_object_left_without_its_sidecar_by_a_cut_off_delete_is_still_deleted(catalog, store, audit):
    old = copied(catalog, store, "MQJ0001")
    discard(catalog, old)
    store.fs.rm_file(f"{store.root}/{old.key}.json")  # BackupStore.delete removes the sidecar first
    assert in_store(store, old.key) and [s.key for s in leftover_copies(catalog, store, HOST, QMGR)] == [old.key]
    result = expire(catalog, store, audit, {old.key})
    assert result.deleted == [old.key] and not store.fs.exists(f"{store.root}/{old.key}")


def test_a_store_that_fails_is_reported_per_copy_and_the_others_are_still_deleted(catalog, store, audit, monkeypatch):
    first, second = copied(catalog, store, "MQJ0001"), copied(catalog, store, "MQJ0002", first=4)
    discard(catalog, first)
    discard(catalog, second)
    real_delete = BackupStore.delete

    def failing(self, key):
        if key == first.key:
            raise OSError("permission denied")
        real_delete(self, key)

    monkeypatch.setattr(BackupStore, "delete", failing)
    result = expire(catalog, store, audit, {first.key, second.key})
    assert result.deleted == [second.key] and [k for k, _ in result.failed] == [first.key]
    assert "permission denied" in result.failed[0][1]
    # The catalog is as it was: both discarded, so no restore is offered the copy that is still there.
    assert catalog.discarded_save_files(HOST) == {first.save_file_path, second.save_file_path}
    outcomes = {r["command"]: r["outcome"] for r in read_audit(audit.path)}
    assert outcomes == {f"DELETE {store.url}/{first.key}": "failed", f"DELETE {store.url}/{second.key}": "ok"}


def test_copies_in_another_store_are_named_and_left_there(catalog, store, audit, tmp_path):
    other = BackupStore(tmp_path / "other-store")
    old = copied(catalog, other, "MQJ0001")
    discard(catalog, old)
    result = expire(catalog, store, audit, {old.key})
    assert result.elsewhere == [f"{other.url} {old.key}"] and in_store(other, old.key)
