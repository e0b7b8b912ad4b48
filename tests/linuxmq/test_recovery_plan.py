"""Recovery plans of a Linux queue manager's log (linuxmq/recovery.py): what a restart or an rcrmqobj reads, what is
put back from the store first, what stops the plan before its gate, and what a rerun still does."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mqjournal.catalog import StoredExtent
from mqjournal.linuxmq.recovery import (
    LinuxAction,
    LinuxRecoveryRequest,
    LogState,
    plan_linux_recovery,
    steps_to_run,
)
from mqjournal.recovery.refusals import PlanHasGaps, PlanWentStale
from mqjournal.recovery.restore import RecoveryRefused

BIN = "/opt/mqm/bin"
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def name(n: int) -> str:
    return f"S{n:07d}.LOG"


def copy(n: int, *, run: str = "maint_1", hour: int = 1) -> StoredExtent:
    sha = f"{n:064x}"
    return StoredExtent(
        host="mq-linux1", qmgr="QM.ORDERS", extent=name(n), run_id=run, host_sha256=sha, store_url="file:///b",
        key=f"linux/mq-linux1/QM.ORDERS/{run}/{name(n)}", size_bytes=16 * 1024 * 1024, sha256=sha,
        created_at=datetime(2026, 12, 1, hour, tzinfo=UTC), verified_at=datetime(2026, 12, 1, hour, tzinfo=UTC),
    )  # fmt: skip


def state(*, on_disk: list[int], running: bool = False, current: int = 9, restart: int = 5, media: int = 2,
          object_media: int | None = None) -> LogState:  # fmt: skip
    return LogState(
        read_at=AT, running=running, log_path="/var/mqm/log/QM!ORDERS/active/", extent_bytes=16 * 1024 * 1024,
        current=name(current), restart=name(restart), media=name(media),
        points_from="DISPLAY QMSTATUS now" if running else "its last snapshot (run maint_1)",
        on_disk=[name(n) for n in on_disk], object_media=None if object_media is None else name(object_media),
        object_media_from="DISPLAY QSTATUS(APP.REQUEST) MEDIALOG" if object_media is not None else "",
    )  # fmt: skip


def startup() -> LinuxRecoveryRequest:
    return LinuxRecoveryRequest.checked(host="mq-linux1", qmgr="QM.ORDERS", kind="startup")


def media(object_type: str = "queue") -> LinuxRecoveryRequest:
    return LinuxRecoveryRequest.checked(
        host="mq-linux1", qmgr="QM.ORDERS", kind="media", object="APP.REQUEST", object_type=object_type
    )


def test_a_deleted_restart_extent_is_put_back_from_its_copy_then_strmqm_and_the_gate_says_what_and_whence():
    plan = plan_linux_recovery(startup(), state(on_disk=[5, 6, 8, 9]), [copy(7), copy(6)], bin_dir=BIN)

    assert [s.action for s in plan.steps] == [LinuxAction.PUT_EXTENT, LinuxAction.START_QMGR]
    assert plan.steps[0].stored == copy(7) and plan.steps[1].text == "/opt/mqm/bin/strmqm QM.ORDERS"
    assert (plan.first_needed, plan.last_needed) == (name(5), name(9)) and plan.executable
    body = plan.markdown()
    assert f"| {name(7)} | 16.0 MB | maint_1 | linux/mq-linux1/QM.ORDERS/maint_1/{name(7)} |" in body
    assert f"SFTP PUT /var/mqm/log/QM!ORDERS/active/{name(7)}" in body


def test_a_needed_extent_without_a_proven_copy_is_a_gap_that_stops_the_plan_before_its_gate():
    plan = plan_linux_recovery(startup(), state(on_disk=[5, 8, 9]), [copy(7)], bin_dir=BIN)

    assert not plan.executable
    (gap,) = plan.gaps
    assert gap.obj == f"extent {name(6)} of QM.ORDERS on mq-linux1"
    assert "no copy of it the host vouched for" in gap.problem and "AMQ6767" in gap.action
    assert "This plan cannot run" in plan.markdown()
    with pytest.raises(PlanHasGaps, match=name(6)):
        steps_to_run(plan, plan)


def test_a_copy_the_store_no_longer_proves_is_passed_over_for_an_older_one_or_named_in_the_gap():
    newer, older = copy(7, run="maint_2", hour=2), copy(7)
    plan = plan_linux_recovery(
        startup(), state(on_disk=[5, 6, 8, 9]), [older, newer], bin_dir=BIN, unproven={newer.key: "changed"}
    )
    assert plan.steps[0].stored == older and any("changed" in note for note in plan.notes)

    blocked = plan_linux_recovery(startup(), state(on_disk=[5, 6, 8, 9]), [older], bin_dir=BIN,
                                  unproven={older.key: "its object is gone"})  # fmt: skip
    assert "its copies no longer prove" in blocked.gaps[0].problem and "its object is gone" in blocked.gaps[0].problem


def test_a_rerun_after_a_partial_restore_puts_back_only_the_rest_and_says_what_was_done_before():
    copies = [copy(6), copy(7), copy(8)]
    approved = plan_linux_recovery(startup(), state(on_disk=[5, 9]), copies, bin_dir=BIN)
    assert [s.stored.extent for s in approved.steps if s.stored] == [name(6), name(7), name(8)]

    # The first attempt put S0000006 back, then the connection dropped: the plan made again right before running.
    fresh = plan_linux_recovery(startup(), state(on_disk=[5, 6, 9]), copies, bin_dir=BIN)
    to_run, skipped = steps_to_run(approved, fresh)

    assert [s.stored.extent for s in to_run.steps if s.stored] == [name(7), name(8)]
    assert to_run.steps[-1].action is LinuxAction.START_QMGR
    assert skipped == [approved.steps[0].text]


def test_a_step_the_approver_did_not_see_is_never_run():
    approved = plan_linux_recovery(startup(), state(on_disk=[5, 6, 8, 9]), [copy(7)], bin_dir=BIN)
    # Meanwhile another extent went: the fresh plan needs more than was approved.
    fresh = plan_linux_recovery(startup(), state(on_disk=[5, 8, 9]), [copy(6), copy(7)], bin_dir=BIN)

    with pytest.raises(PlanWentStale, match=name(6)):
        steps_to_run(approved, fresh)


def test_a_queue_manager_that_does_not_run_reads_up_to_the_newest_extent_listed_past_its_snapshot():
    # Its last snapshot said CURRLOG S0000009; the log went on to S0000011 before it stopped.
    plan = plan_linux_recovery(startup(), state(on_disk=[5, 6, 7, 8, 9, 11]), [copy(10)], bin_dir=BIN)

    assert plan.last_needed == name(11) and [s.stored.extent for s in plan.steps if s.stored] == [name(10)]
    assert any("last collection" in note for note in plan.notes)


def test_a_running_queue_manager_gets_its_extents_back_for_its_next_restart_and_is_not_started():
    plan = plan_linux_recovery(startup(), state(on_disk=[5, 7, 8, 9], running=True), [copy(6)], bin_dir=BIN)

    assert [s.action for s in plan.steps] == [LinuxAction.PUT_EXTENT]
    assert any("not started" in note for note in plan.notes)
    nothing = plan_linux_recovery(startup(), state(on_disk=[5, 6, 7, 8, 9], running=True), [], bin_dir=BIN)
    assert nothing.steps == [] and not nothing.executable and not nothing.gaps


def test_media_recovery_of_a_queue_reads_from_its_own_medialog_and_ends_with_rcrmqobj():
    plan = plan_linux_recovery(
        media(), state(on_disk=[2, 3, 5, 6, 7, 8, 9], running=True, object_media=4), [copy(4)], bin_dir=BIN
    )

    assert plan.first_needed == name(4)  # not the queue manager's MEDIALOG S0000002: S0000003 is not needed
    assert [s.action for s in plan.steps] == [LinuxAction.PUT_EXTENT, LinuxAction.RECREATE_OBJECT]
    assert plan.steps[-1].text == "/opt/mqm/bin/rcrmqobj -m QM.ORDERS -t queue APP.REQUEST"


def test_media_recovery_without_an_own_medialog_reads_from_the_queue_managers_and_never_from_a_newer_one():
    channel = plan_linux_recovery(
        media("channel"), state(on_disk=[3, 4, 5, 6, 7, 8, 9], running=True), [copy(2)], bin_dir=BIN
    )
    assert channel.first_needed == name(2) and channel.steps[0].stored == copy(2)
    # An answer older than the queue manager's own MEDIALOG (which is the oldest of any object's) is taken as it is.
    older = plan_linux_recovery(
        media(), state(on_disk=list(range(1, 10)), running=True, object_media=1), [], bin_dir=BIN
    )
    assert older.first_needed == name(1)


def test_a_media_recovery_of_a_queue_manager_that_does_not_run_is_refused_pointing_at_its_startup_recovery():
    with pytest.raises(RecoveryRefused, match="startup recovery"):
        plan_linux_recovery(media(), state(on_disk=list(range(2, 10))), [], bin_dir=BIN)


@pytest.mark.parametrize("kind", ["library", "naming", "expiry"])
def test_an_ibm_i_kind_on_a_linux_host_is_refused_naming_the_kinds_it_takes(kind):
    with pytest.raises(RecoveryRefused) as refused:
        LinuxRecoveryRequest.checked(host="mq-linux1", qmgr="QM.ORDERS", kind=kind)
    assert f"a {kind} recovery is IBM i's" in str(refused.value)
    assert "use startup (" in str(refused.value) and "or media (" in str(refused.value)


def test_a_media_recovery_names_its_object_and_an_object_type_rcrmqobj_takes():
    with pytest.raises(RecoveryRefused, match="AMQ7472"):
        LinuxRecoveryRequest.checked(host="mq-linux1", qmgr="QM.ORDERS", kind="media")
    with pytest.raises(ValueError, match="rcrmqobj"):
        LinuxRecoveryRequest.checked(host="mq-linux1", qmgr="QM.ORDERS", kind="media", object="Q", object_type="*LCLQ")
    assert media("*ALL").object_type == "all"


def test_without_log_points_nothing_is_planned():
    unknown = state(on_disk=[5]).model_copy(update={"current": None, "points_from": "no snapshot of it"})
    with pytest.raises(RecoveryRefused, match="no snapshot of it"):
        plan_linux_recovery(startup(), unknown, [], bin_dir=BIN)
