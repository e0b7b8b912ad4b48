"""Restore plans for a Linux queue manager's log: what restart and media recovery need that is not on disk."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mqjournal.catalog import StoredExtent
from mqjournal.linuxmq.restore import RestoreError, plan_restore
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.linuxmq.test_snapshot import record

SHA = "a" * 64


def copy(extent: str, *, sha: str = SHA, at: int = 0) -> StoredExtent:
    return StoredExtent(
        host="mq-linux1", qmgr="QM.ORDERS", extent=extent, run_id="r1", host_sha256=SHA, store_url="file:///b",
        key=f"linux/mq-linux1/QM.ORDERS/r1/{extent}", size_bytes=1, sha256=sha,
        created_at=datetime(2026, 12, 1, at, tzinfo=UTC), verified_at=datetime(2026, 12, 1, at, tzinfo=UTC),
    )  # fmt: skip


def test_restart_needs_reclog_to_currlog_across_the_wrap_and_a_missing_one_without_a_copy_is_a_gap() -> None:
    snap = LinuxSnapshot.model_validate(
        record(current_extent="S0000001.LOG", restart_extent="S9999998.LOG", media_extent="S9999990.LOG")
    )
    on_disk = ["S9999998.LOG", "S0000001.LOG"]

    plan = plan_restore(snap, on_disk, [copy("S9999999.LOG")], media=False)

    assert plan.missing == ("S9999999.LOG", "S0000000.LOG") and plan.gaps == ("S0000000.LOG",)
    assert not plan.complete and list(plan.copies) == ["S9999999.LOG"]
    with_media = plan_restore(snap, on_disk, [], media=True)
    assert with_media.missing[0] == "S9999990.LOG" and len(with_media.missing) == 10


def test_a_copy_the_host_did_not_vouch_for_is_never_planned_and_a_circular_log_is_refused() -> None:
    snap = LinuxSnapshot.model_validate(record())
    plan = plan_restore(snap, [], [copy("S0000011.LOG", sha="b" * 64)], media=False)
    assert "S0000011.LOG" in plan.gaps
    with pytest.raises(RestoreError, match="circular"):
        plan_restore(LinuxSnapshot.model_validate(record(current_extent=None)), [], [])
