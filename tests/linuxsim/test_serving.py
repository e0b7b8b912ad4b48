"""A fleet file's Linux host as the simulator makes it (linuxsim/serving.py): each queue manager's own workload and
the events the file names happen during the warm-up."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim.serving import linux_host

START = datetime(2026, 12, 1, tzinfo=UTC)


def test_each_queue_manager_writes_its_own_rate_and_the_files_events_hold_its_points_back(tmp_path: Path):
    config = LinuxHostConfig(
        name="lnx",
        queue_managers=[
            # 256 KiB extents: QM.FAST fills one every ~2.6 minutes, QM.SLOW every ~26.
            LinuxQueueManagerConfig(name="QM.FAST", log_file_pages=64, log_bytes_per_minute=100_000),
            LinuxQueueManagerConfig(
                name="QM.SLOW",
                log_management=LogManagement.ARCHIVE,
                log_file_pages=64,
                log_bytes_per_minute=10_000,
                long_running_unit_of_work_at_hour=1,
            ),
            LinuxQueueManagerConfig(
                name="QM.DAMAGED",
                log_file_pages=64,
                log_bytes_per_minute=100_000,
                damaged_object="APP.QUEUE",
                damaged_at_hour=1,
            ),
        ],
    )
    host = linux_host(config, tmp_path, START, warmup_hours=4).host
    fast, slow, damaged = (host.queue_managers[n] for n in ("QM.FAST", "QM.SLOW", "QM.DAMAGED"))

    assert fast.current > 5 * slow.current > 0  # ten times the bytes, ten times the extents (give or take one)
    # QM.SLOW's unit of work began an hour in (about its second extent) and never ended: RECLOG stays there.
    assert slow.restart <= 3 < slow.current and [u.id for u in slow.units_of_work] == ["long-running"]
    # Media images of QM.DAMAGED record nothing of its damaged queue, so MEDIALOG stays before the damage.
    assert next(o for o in damaged.objects if o.name == "APP.QUEUE").damaged
    assert fast.restart > slow.restart
