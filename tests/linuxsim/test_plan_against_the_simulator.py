"""The Linux planner (linuxmq/plan.py) held against the simulated queue manager: whatever happened to the log, doing
what the plan says (SET LOG ARCHIVED in Archive mode, deleting in Manual mode) never stops a restart or the media
recovery of any object, and no extent leaves without a proven copy."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, LogManagement
from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
from mqjournal.linuxmq.snapshot import LinuxSnapshot, LogExtent, MediaImages
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.model import LinuxQueueManager

from .conftest import EXTENT, T0, starting_at
from .test_logger_properties import apply, steps


def snapshot_of(qm: LinuxQueueManager, run: int) -> LinuxSnapshot:
    archlog = logger.archive_waiting(qm)
    return LinuxSnapshot(
        run_id=f"run{run}",
        collected_at=T0 + timedelta(hours=run),
        host="mq-linux1",
        qmgr=qm.name,
        log_type="LINEAR",
        log_management=qm.log_management,
        log_path=f"/var/mqm/log/{qm.directory}/active/",
        extent_bytes=qm.extent_size,
        current_extent=Extent(qm.current).name,
        restart_extent=Extent(qm.restart).name,
        media_extent=Extent(qm.media).name,
        archive_extent=archlog[0].name if archlog else None,
        media_images=MediaImages(forced=False, ok=False),
        extents=[LogExtent(name=name, size_bytes=qm.extent_size) for name in sorted(qm.extents)],
    )


@settings(max_examples=300, deadline=None)
@given(
    management=st.sampled_from([LogManagement.MANUAL, LogManagement.ARCHIVE]),
    first=st.sampled_from([0, EXTENT_NUMBERS - 3]),
    sequence=steps,
    # Often every extent has a proven copy (a shop that archives everything): then only the rules hold extents back.
    copied=st.one_of(st.just(frozenset(range(41))), st.sets(st.integers(0, 40))),
)
@example(LogManagement.MANUAL, 0, [("write", 3 * EXTENT)] * 3 + [("checkpoint", None)], frozenset(range(41)))
def test_doing_what_the_plan_says_never_stops_a_restart_or_a_media_recovery(management, first, sequence, copied):
    qm = starting_at(management, first)
    for step, arg in sequence:
        apply(qm, step, arg)
    logger.write(qm, EXTENT // 2, at=T0)  # whatever the steps left, the queue manager is running and writing
    proven = {Extent((first + n) % EXTENT_NUMBERS).name for n in copied}
    plan = plan_queue_manager(snapshot_of(qm, 1), proven)

    released = plan.with_action(ExtentAction.RELEASE)
    assert set(released) <= proven, "an extent released without a proven copy"
    for name in released:
        if management is LogManagement.ARCHIVE:
            logger.set_log_archived(qm, name)
        else:
            logger.remove_extent(qm, name)
    # Whatever the plan let go: a restart still finds every extent it replays, and media recovery of every object
    # every extent from its image on (an extent missing for another reason, the steps' own rm, is not the plan's).
    for who, since in [("restart", qm.restart), *((obj.name, obj.image_extent) for obj in qm.objects)]:
        missing = logger.first_missing(qm, since)
        assert missing not in released, f"{who} needs {missing}, which the plan let go"
