"""The safety tests' shared pieces: a short SQLite lock wait, a folder per scenario, and each fault matrix case's
outcome for the session's summary line (tests/conftest.py prints it)."""

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

if TYPE_CHECKING:
    from tests.safety.matrix import Outcome


@pytest.fixture(autouse=True)
def short_sqlite_lock_wait():
    """A locked catalog fails a step in a quarter of a second instead of the engine's 30 s."""
    shorten_sqlite_busy_timeout()
    yield
    restore_sqlite_busy_timeout()


@pytest.fixture
def case_root(tmp_path: Path):
    """A folder for one scenario, in memory where there is /dev/shm: the audit log fsyncs every record."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path / "case"
        return
    root = Path(tempfile.mkdtemp(prefix="mqj-safety-", dir=shm))
    try:
        yield root / "case"
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
