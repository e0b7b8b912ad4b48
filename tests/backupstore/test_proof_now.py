"""Right before a delete, a stored copy is proven now: its bytes re-read and their SHA-256 compared with the digest
recorded for the copy. A copy of the right size with other bytes is no backup."""

from __future__ import annotations

import io

import pytest

from mqjournal.backupstore import BackupStore
from tests.backupstore.saves import SAVE_FILE_BYTES


def _overwrite(store: BackupStore, key: str, data: bytes) -> None:
    store.fs.pipe_file(f"{store.root}/{key}", data)


def test_an_untouched_copy_still_proves_the_save(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert store.still_holds(stored) is None


def test_a_copy_overwritten_with_zeros_of_the_same_size_proves_nothing(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    _overwrite(store, stored.key, bytes(len(SAVE_FILE_BYTES)))
    problem = store.still_holds(stored)
    assert problem is not None and "SHA-256" in problem and stored.key in problem


def test_a_copy_with_one_flipped_byte_proves_nothing(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    data = bytearray(SAVE_FILE_BYTES)
    data[len(data) // 2] ^= 0x01
    _overwrite(store, stored.key, bytes(data))
    assert "SHA-256" in (store.still_holds(stored) or "")


def test_a_copy_replaced_by_a_symlink_to_a_file_of_the_same_size_proves_nothing(tmp_path, copy):
    store = BackupStore(tmp_path / "backups")
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    elsewhere = tmp_path / "same-size"
    elsewhere.write_bytes(bytes(len(SAVE_FILE_BYTES)))
    path = tmp_path / "backups" / stored.key
    path.unlink()
    path.symlink_to(elsewhere)
    problem = store.still_holds(stored)
    assert problem is not None and "symbolic link" in problem


def test_a_copy_replaced_by_a_symlink_to_its_own_bytes_elsewhere_proves_nothing(tmp_path, copy):
    # The bytes match, but the store no longer holds them: whatever else changes the other file changes the backup.
    store = BackupStore(tmp_path / "backups")
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    elsewhere = tmp_path / "same-bytes"
    elsewhere.write_bytes(SAVE_FILE_BYTES)
    path = tmp_path / "backups" / stored.key
    path.unlink()
    path.symlink_to(elsewhere)
    assert "symbolic link" in (store.still_holds(stored) or "")


def test_a_catalogued_digest_the_sidecar_and_bytes_both_lost_is_no_proof(store, copy):
    # The sidecar and the object rewritten together (another copy's): the catalog's digest is what counts.
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    recorded = stored.model_copy(update={"sha256": "0" * 64})
    assert "records another copy" in (store.still_holds(recorded) or "")


@pytest.mark.parametrize("size", [0, 1, len(SAVE_FILE_BYTES) - 1])
def test_a_copy_of_another_size_proves_nothing(store, copy, size):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    _overwrite(store, stored.key, SAVE_FILE_BYTES[:size])
    assert store.still_holds(stored) is not None
