"""The backup store: a save file copied in is verified before its sidecar says so, and a damaged copy is never used."""

from __future__ import annotations

import hashlib
import io
import json
import uuid

import pytest
from fsspec.implementations.memory import MemoryFileSystem
from pydantic import ValidationError

from mqjournal.backupstore import (
    BackupStore,
    InvalidStoreKey,
    SourceIncomplete,
    StoreObjectCorrupt,
    StoreObjectExists,
    StoreVerificationFailed,
    check_key,
)
from mqjournal.catalog import SaveFileCopy
from tests.backupstore.saves import RUN_ID, SAVE_FILE_BYTES, receiver_saves, save_file_copy


def _flip_one_byte(store: BackupStore, key: str, at: int = 1000) -> None:
    path = f"{store.root}/{key}"
    data = bytearray(store.fs.cat_file(path))
    data[at] ^= 0x01
    store.fs.pipe_file(path, bytes(data))


def _files(store: BackupStore) -> list[str]:
    # Files only: SeaweedFS's S3 keeps an emptied prefix as a folder for a while (its filer's), which s3fs's find
    # names when nothing else is there. No object is left under it.
    return sorted(path for path, info in store.fs.find(store.root, detail=True).items() if info["type"] == "file")


# --- a verified copy ----------------------------------------------------------------------------------------------


def test_a_save_file_put_in_the_store_verifies_with_its_size_and_sha256(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert stored.size_bytes == len(SAVE_FILE_BYTES)
    assert stored.sha256 == hashlib.sha256(SAVE_FILE_BYTES).hexdigest()
    result = store.verify(stored.key)
    assert result.ok and result.sha256 == stored.sha256


def test_the_layout_is_host_queue_manager_run_and_save_file(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert stored.key == "prod1/PAYROLL/scheduled__2026-11-23T02_00_00_00_00/MQSAVES.MQJ0001.savf"
    assert _files(store) == [f"{store.root}/{stored.key}", f"{store.root}/{stored.key}.json"]


def test_the_sidecar_holds_the_object_list_the_run_and_the_checksum(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    sidecar = json.loads(store.fs.cat_file(f"{store.root}/{stored.key}.json"))
    assert sidecar["sidecar"] == "mqjournal.stored-object/v1"
    assert (sidecar["host"], sidecar["qmgr"], sidecar["run_id"]) == ("prod1", "PAYROLL", RUN_ID)
    assert sidecar["sha256"] == stored.sha256 and sidecar["store_url"] == store.url
    assert [o["receiver"] for o in sidecar["objects"]] == ["AMQA000001", "AMQA000002", "AMQA000003"]
    assert store.get(stored.key) == stored


def test_chunks_from_an_iterable_are_streamed_like_a_file(store, copy):
    chunks = [SAVE_FILE_BYTES[i : i + 65536] for i in range(0, len(SAVE_FILE_BYTES), 65536)]
    stored = store.put(iter(chunks), copy)
    assert stored.sha256 == hashlib.sha256(SAVE_FILE_BYTES).hexdigest()


def test_a_restore_reads_back_the_bytes_that_were_saved(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    with store.open_for_restore(stored.key) as reader:
        read = b"".join(iter(lambda: reader.read(100_000), b""))
    assert read == SAVE_FILE_BYTES


def test_a_verified_copy_is_never_overwritten(store, copy):
    store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    with pytest.raises(StoreObjectExists, match="MQSAVES/MQJ0001 of prod1 PAYROLL"):
        store.put(io.BytesIO(b"other bytes"), copy)


def test_listing_and_the_total_per_queue_manager_come_from_the_sidecars(store):
    first = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(receiver_saves("MQJ0001", 1)))
    second = store.put(io.BytesIO(b"x" * 1000), save_file_copy(receiver_saves("MQJ0002", 4)))
    assert [s.key for s in store.list_objects("prod1", "PAYROLL")] == [first.key, second.key]
    assert store.total_bytes("prod1", "PAYROLL") == len(SAVE_FILE_BYTES) + 1000
    assert store.total_bytes("prod1", "OTHER") == 0


def test_delete_removes_the_object_and_its_sidecar(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    store.delete(stored.key)
    assert _files(store) == []
    assert store.get(stored.key) is None


# --- a damaged copy ----------------------------------------------------------------------------------------------


def test_a_flipped_byte_is_found_and_named_as_a_sha256_mismatch(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    _flip_one_byte(store, stored.key)
    result = store.verify(stored.key)
    assert not result.ok
    assert result.problem is not None and "SHA-256" in result.problem and stored.sha256 in result.problem
    assert str(result).startswith(stored.key)


def test_a_restore_refuses_an_object_whose_checksum_no_longer_matches(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    _flip_one_byte(store, stored.key)
    with pytest.raises(StoreObjectCorrupt, match="nothing is restored from it") as refused:
        store.open_for_restore(stored.key)
    assert refused.value.obj == stored.key


def test_a_truncated_object_is_a_size_mismatch(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    store.fs.pipe_file(f"{store.root}/{stored.key}", SAVE_FILE_BYTES[:-1])
    assert "size" in (store.verify(stored.key).problem or "")


def test_an_object_changed_while_a_restore_reads_it_fails_at_the_end(tmp_path, copy):
    # In a folder: fsspec's memory filesystem hands an open reader the bytes as they were when it was opened.
    store = BackupStore(tmp_path / "backups")
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    reader = store.open_for_restore(stored.key)
    first = reader.read(100)
    _flip_one_byte(store, stored.key, at=len(SAVE_FILE_BYTES) - 1)
    with pytest.raises(StoreObjectCorrupt, match="changed while it was read"):
        while reader.read(1_000_000):
            pass
    reader.close()
    assert first == SAVE_FILE_BYTES[:100]


class _FlipsOnWrite(MemoryFileSystem):
    """A store that gives back other bytes than it was given (bad memory in a gateway, a broken mount)."""

    def _open(self, path, mode="rb", **kwargs):
        f = super()._open(path, mode, **kwargs)
        if "w" in mode and path.endswith(".savf"):
            write = f.write

            def flipped(data: bytes) -> int:
                return write(bytes([data[0] ^ 0xFF]) + data[1:]) if data else 0

            f.write = flipped
        return f


def test_a_failed_verification_leaves_nothing_in_the_store_and_says_what_to_do(copy):
    store = BackupStore(f"memory://mqjournal-tests/{uuid.uuid4().hex}", fs=_FlipsOnWrite())
    with pytest.raises(StoreVerificationFailed) as failed:
        store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert "MQSAVES/MQJ0001" in str(failed.value) and "run the step again" in str(failed.value)
    assert _files(store) == []


def test_a_folder_store_is_not_read_back_after_the_write_but_proven_before_anything_counts_on_it(tmp_path, copy):
    # A read right after the write comes from the page cache just filled: the proof that counts is still_holds, right
    # before a delete or a clean-up (a full re-read on a folder), and the scrub.
    store = BackupStore(tmp_path / "backups")
    reads: list[str] = []
    digest = store._digest
    store._digest = lambda path: reads.append(path) or digest(path)  # type: ignore[method-assign]
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    assert reads == []
    _flip_one_byte(store, stored.key)
    assert "its bytes changed" in (store.still_holds(stored) or "")
    assert reads == [f"{store.root}/{stored.key}"]


def test_a_copy_nobody_vouches_for_leaves_nothing_and_a_vouched_one_records_the_description_given(store, copy):
    def refuse(sha256: str) -> SaveFileCopy:
        raise ValueError(f"not the host's bytes: {sha256}")

    with pytest.raises(ValueError, match="not the host's bytes"):
        store.put(io.BytesIO(SAVE_FILE_BYTES), copy, vouch=refuse)
    assert _files(store) == []
    digest = hashlib.sha256(SAVE_FILE_BYTES).hexdigest()
    seen: list[str] = []
    stored = store.put(
        io.BytesIO(SAVE_FILE_BYTES),
        copy,
        vouch=lambda sha256: seen.append(sha256) or copy.model_copy(update={"host_sha256": sha256}),
    )
    assert seen == [digest] and stored.host_sha256 == digest and store.get(stored.key) == stored


def test_a_copy_cut_off_by_its_source_leaves_nothing_in_the_store(store, copy):
    def dropped_session():
        yield SAVE_FILE_BYTES[:65536]
        raise ConnectionResetError("SFTP session lost")

    with pytest.raises(ConnectionResetError):
        store.put(dropped_session(), copy)
    assert _files(store) == []


def test_a_source_that_ends_short_of_its_expected_size_leaves_nothing_in_the_store(store, copy):
    # A transfer can end without an error and still be short: only the size the host gave shows it.
    with pytest.raises(SourceIncomplete, match=f"{len(SAVE_FILE_BYTES) // 2} bytes where the save file holds"):
        store.put(io.BytesIO(SAVE_FILE_BYTES[: len(SAVE_FILE_BYTES) // 2]), copy, expected_size=len(SAVE_FILE_BYTES))
    assert _files(store) == []


def test_a_source_of_its_expected_size_is_stored(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    assert store.verify(stored.key).ok


def test_an_object_without_a_sidecar_is_not_a_backup(store, copy):
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy)
    store.fs.rm_file(f"{store.root}/{stored.key}.json")  # as a copy interrupted before its verification leaves it
    assert store.list_objects() == []
    assert store.unrecorded_objects() == [stored.key]
    assert "no sidecar" in (store.verify(stored.key).problem or "")
    with pytest.raises(StoreObjectCorrupt):
        store.open_for_restore(stored.key)


# --- keys and names ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "../../etc/passwd.savf",
        "/prod1/PAYROLL/run/MQSAVES.MQJ0001.savf",
        "prod1/PAYROLL/../MQSAVES.MQJ0001.savf",
        "prod1/PAYROLL/run/../../../x.savf",
        "prod1/./run/MQSAVES.MQJ0001.savf",
        "prod1//run/MQSAVES.MQJ0001.savf",
        "prod1/PAYROLL/run/MQSAVES.MQJ0001.savf.json",
        "prod1/PAYROLL/run/sub/MQSAVES.MQJ0001.savf",
        "prod1/PAYROLL/run/..%2F..%2Fx.savf",
        "prod1\\..\\run/x.savf",
    ],
)
def test_a_key_outside_the_layout_is_refused(store, key):
    with pytest.raises(InvalidStoreKey):
        check_key(key)
    with pytest.raises(InvalidStoreKey):
        store.verify(key)
    with pytest.raises(InvalidStoreKey):
        store.delete(key)
    with pytest.raises(InvalidStoreKey):
        store.open_for_restore(key)


def test_names_that_look_like_paths_stay_in_their_own_folder(store):
    # '..' and 'A/B' are valid MQ queue manager names; run ids come from Airflow and anyone triggering a DAG.
    copy = save_file_copy(receiver_saves()).model_copy(update={"qmgr": "..", "run_id": "../../escape"})
    stored = store.put(io.BytesIO(b"savf"), copy)
    assert stored.key == "prod1/%2E./%2E._.._escape/MQSAVES.MQJ0001.savf"
    assert all(path.startswith(f"{store.root}/prod1/") for path in _files(store))
    nested = store.put(io.BytesIO(b"savf"), copy.model_copy(update={"qmgr": "A/B", "save_file": "MQ#1"}))
    assert nested.key.split("/")[1:4:2] == ["A%2FB", "MQSAVES.MQ%231.savf"]
    assert store.verify(nested.key).ok


@pytest.mark.parametrize(
    ("field", "value"),
    [("host", "../prod1"), ("save_file_library", "../MQSAVES"), ("save_file", "MQJ/0001"), ("qmgr_library", "..")],
)
def test_a_save_file_copy_with_an_invalid_name_is_refused_before_anything_is_written(copy, field, value):
    with pytest.raises(ValidationError, match=field):
        SaveFileCopy.model_validate(copy.model_dump() | {field: value})
