"""The safety tests' shared pieces: a short SQLite lock wait, a folder per scenario (the fault matrix's: one per
process, with each path's set-up kept to start cases from), and each fault matrix case's outcome for the session's
summary line (tests/conftest.py prints it)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import FAULT_MATRIX_PROPERTY
from tests.safety.catalog_lock import restore_sqlite_busy_timeout, shorten_sqlite_busy_timeout
from tests.safety.scenario import SetUps

if TYPE_CHECKING:
    from tests.safety.matrix import Outcome


@pytest.fixture(autouse=True)
def short_sqlite_lock_wait():
    """A locked catalog fails a step in a quarter of a second instead of the engine's 30 s."""
    shorten_sqlite_busy_timeout()
    yield
    restore_sqlite_busy_timeout()


def _in_memory() -> Path | None:
    """/dev/shm where there is one to write to: the audit log fsyncs every record."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else None


@pytest.fixture
def case_root(tmp_path: Path):
    """A folder for one scenario, in memory where there is /dev/shm."""
    shm = _in_memory()
    if shm is None:
        yield tmp_path / "case"
        return
    root = Path(tempfile.mkdtemp(prefix="mqj-safety-", dir=shm))
    try:
        yield root / "case"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def _matrix_folder(tmp_path_factory: pytest.TempPathFactory):
    """This process's folder for the fault matrix: its case folder and its copies of each path's set-up."""
    root = Path(tempfile.mkdtemp(prefix="mqj-matrix-cases-", dir=_in_memory() or tmp_path_factory.getbasetemp()))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def matrix_setups(_matrix_folder: Path) -> SetUps:
    """Each path set up once in this process; its cases start from a copy of what the set-up left."""
    return SetUps(_matrix_folder / "setups")


@pytest.fixture
def matrix_case_root(_matrix_folder: Path):
    """The one folder every fault matrix case of this process runs in, emptied after each: a set-up's copy goes
    back into the folder the set-up ran in, whose absolute path its catalog records (the backup store's URL)."""
    root = _matrix_folder / "case"
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def matrix_outcomes(request: pytest.FixtureRequest) -> Callable[[Outcome], None]:
    """Records a case's outcome for the summary line."""

    def record(outcome: Outcome) -> None:
        tally = (outcome.held, len(outcome.report.lost_receivers), len(outcome.report.unrecorded_commands))
        request.node.user_properties.append((FAULT_MATRIX_PROPERTY, tally))

    return record


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests.safety.matrix import forget_shared_enumeration

    forget_shared_enumeration()
