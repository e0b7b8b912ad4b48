"""The on-call alert of a Linux queue manager (linuxmq/cannotstart.py): raised from what a collection listed."""

from __future__ import annotations

from mqjournal.linuxmq.cannotstart import cannot_start
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.linuxmq.test_snapshot import record


def snapshot(**changes: object) -> LinuxSnapshot:
    return LinuxSnapshot.model_validate(record(**changes))


def test_restart_reads_from_reclog_across_the_wrap_and_many_missing_extents_read_as_a_range():
    names = ["S9999990.LOG", "S0000003.LOG"]
    snap = snapshot(
        restart_extent="S9999990.LOG",
        current_extent="S0000003.LOG",
        media_extent="S9999990.LOG",
        archive_extent=None,
        extents=[{"name": n, "size_bytes": 1, "modified_at": None} for n in names],
    )

    alert = cannot_start(snap)

    assert alert is not None and alert.missing[0] == "S9999991.LOG" and len(alert.missing) == 12
    assert "S9999991.LOG through S0000002.LOG (12) are missing" in alert.text
    assert alert.incident == "S9999991.LOG"


def test_nothing_is_raised_for_a_complete_log_or_one_without_log_points():
    assert cannot_start(snapshot()) is None
    assert cannot_start(snapshot(log_type="CIRCULAR", current_extent=None, extents=[])) is None
