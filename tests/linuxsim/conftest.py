"""A small simulated Linux host: extents of a few pages, so that tens of them are quick to write and hash."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim.model import LinuxQueueManager, new_queue_manager

T0 = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
PAGES = 4
EXTENT = PAGES * 4096


def make_qm(management: LogManagement = LogManagement.MANUAL, **kwargs: Any) -> LinuxQueueManager:
    return new_queue_manager(
        "QM1",
        T0,
        log_management=management,
        log_file_pages=PAGES,
        objects=(("APP.QUEUE", "queue"), ("TO.PARTNER", "channel")),
        **kwargs,
    )


def starting_at(management: LogManagement, first: int) -> LinuxQueueManager:
    """A queue manager whose log starts at extent `first` (near the wrap, for instance), every point there."""
    return make_qm(management, first_extent=first)


@pytest.fixture
def manual() -> LinuxQueueManager:
    return make_qm(LogManagement.MANUAL)


@pytest.fixture
def automatic() -> LinuxQueueManager:
    return make_qm(LogManagement.AUTOMATIC)


@pytest.fixture
def archive() -> LinuxQueueManager:
    return make_qm(LogManagement.ARCHIVE)
