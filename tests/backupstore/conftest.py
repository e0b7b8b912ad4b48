"""Fixtures: the payroll save file's receiver saves and its copy, and a backup store in a folder, in memory, or in a
bucket of a real S3 server (SeaweedFS on loopback, reached through s3fs)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import SaveFileCopy, SaveRecord
from tests.backupstore.saves import receiver_saves, save_file_copy
from tests.backupstore.seaweedfs import S3Server, seaweedfs, weed_binary

# Every test that talks to the S3 server runs in the one xdist worker that started it (--dist loadgroup).
SEAWEEDFS = pytest.mark.xdist_group("seaweedfs")


@pytest.fixture
def saves() -> list[SaveRecord]:
    return receiver_saves()


@pytest.fixture
def copy(saves) -> SaveFileCopy:
    return save_file_copy(saves)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """SeaweedFS's S3 gateway on loopback, for the whole session of the worker that owns the group."""
    try:
        weed_binary()
    except RuntimeError as exc:
        # Never a skip: a machine without the server would pass while proving nothing about S3.
        pytest.fail(str(exc), pytrace=False)
    with seaweedfs() as server:
        yield server


@pytest.fixture
def s3_url(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh prefix of the server's bucket, with the standard AWS variables pointing s3fs at the server, as a
    deployment sets them: the store is opened from its URL alone."""
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    return f"s3://{s3_server.bucket}/{uuid.uuid4().hex}"


@pytest.fixture(params=["folder", "memory", pytest.param("s3", marks=SEAWEEDFS)])
def store(request, tmp_path) -> BackupStore:
    """A store in a temporary folder, one on fsspec's in-memory filesystem (a fresh root for each test: it is one
    filesystem per process), and one under a fresh prefix of a bucket on a real S3 server."""
    if request.param == "folder":
        return BackupStore(tmp_path / "backups")
    if request.param == "s3":
        return BackupStore(request.getfixturevalue("s3_url"))
    return BackupStore(f"memory://mqjournal-tests/{uuid.uuid4().hex}")
