"""The safety tests' shared pieces: a short SQLite lock wait, and the fault matrix's one-line summary."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.safety.catalog_lock import restore_sqlite_busy_timeout, shorten_sqlite_busy_timeout

# Every case the fault matrix ran in this session (tests/safety/matrix.Outcome), for the summary line.
MATRIX_OUTCOMES: list = []


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
def matrix_outcomes() -> list:
    return MATRIX_OUTCOMES


def matrix_line(outcomes: list) -> str:
    held = sum(1 for o in outcomes if o.held)
    lost = sum(len(o.report.lost_receivers) for o in outcomes)
    unrecorded = sum(len(o.report.unrecorded_commands) for o in outcomes)
    return f"fault matrix: {len(outcomes)} cases, {held} held, {lost} receivers lost, {unrecorded} unrecorded commands"


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if MATRIX_OUTCOMES:
        terminalreporter.write_line(matrix_line(MATRIX_OUTCOMES))
