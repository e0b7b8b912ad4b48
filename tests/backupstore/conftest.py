"""Fixtures: the payroll save file's receiver saves and its copy, and a backup store in a folder or in memory."""

from __future__ import annotations

import uuid

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import SaveFileCopy, SaveRecord
from tests.backupstore.saves import receiver_saves, save_file_copy


@pytest.fixture
def saves() -> list[SaveRecord]:
    return receiver_saves()


@pytest.fixture
def copy(saves) -> SaveFileCopy:
    return save_file_copy(saves)


@pytest.fixture(params=["folder", "memory"])
def store(request, tmp_path) -> BackupStore:
    """A store in a temporary folder, and one on fsspec's in-memory filesystem (a fresh root for each test: it is
    one filesystem per process)."""
    if request.param == "folder":
        return BackupStore(tmp_path / "backups")
    return BackupStore(f"memory://mqjournal-tests/{uuid.uuid4().hex}")
