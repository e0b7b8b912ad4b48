"""The Linux planner's rules, one case each (the property test against the simulator is in tests/linuxsim)."""

from __future__ import annotations

from mqjournal.linuxmq.plan import Alert, ExtentAction, plan_queue_manager
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.linuxmq.test_snapshot import record


def snap(**changes: object) -> LinuxSnapshot:
    return LinuxSnapshot.model_validate(record(**changes))


def actions(plan) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {d.extent: d.action.value for d in plan.decisions}


def test_archive_mode_releases_only_proven_copies_behind_both_points_and_leaves_notified_ones_to_mq() -> None:
    # CURRLOG 12, RECLOG 11, MEDIALOG 3, ARCHLOG 1 (0 was notified already); 2 has a proven copy.
    found = actions(plan_queue_manager(snap(), proven={"S0000002.LOG"}))

    assert found["S0000012.LOG"] == "keep"  # being written
    # Copied off the host, kept: restart reads 11 on, media recovery 3 on.
    assert {found[f"S{n:07d}.LOG"] for n in range(3, 12)} == {"archive"}
    assert found["S0000002.LOG"] == "release" and found["S0000001.LOG"] == "archive_then_release"
    assert found["S0000000.LOG"] == "mq"


def test_manual_mode_deletes_nothing_unproven_and_automatic_mode_is_mqs() -> None:
    manual = plan_queue_manager(snap(log_management="Manual", archive_extent=None), proven={"S0000000.LOG"})
    assert manual.with_action(ExtentAction.RELEASE) == ["S0000000.LOG"]
    assert manual.with_action(ExtentAction.ARCHIVE_THEN_RELEASE) == ["S0000001.LOG", "S0000002.LOG"]
    automatic = plan_queue_manager(snap(log_management="Automatic", archive_extent=None), proven=set())
    assert set(actions(automatic).values()) == {"mq", "keep"} and actions(automatic)["S0000012.LOG"] == "keep"


def test_a_circular_log_is_never_planned_and_says_why() -> None:
    plan = plan_queue_manager(snap(log_type="CIRCULAR", current_extent=None), proven={"S0000000.LOG"})

    assert set(actions(plan).values()) == {"keep"}
    assert [a for a, _ in plan.alerts] == [Alert.NOT_PLANNED]


def test_a_restart_point_that_stays_while_the_log_moves_is_stuck_and_says_what_to_do() -> None:
    history = [snap(run_id=f"r{n}", current_extent=f"S{12 + n:07d}.LOG") for n in range(3)]
    now = snap(run_id="r3", current_extent="S0000016.LOG", media_extent="S0000015.LOG")

    plan = plan_queue_manager(now, proven=set(), history=history)

    assert [a for a, _ in plan.alerts] == [Alert.RESTART_STUCK]
    assert "unit of work" in plan.alerts[0][1]
    quiet = [snap(run_id=f"r{n}") for n in range(3)]  # nothing written: nothing could move
    assert plan_queue_manager(snap(run_id="r3"), proven=set(), history=quiet).alerts == ()


def test_archive_mode_with_no_extent_waiting_for_notification_leaves_every_extent_to_mq() -> None:
    plan = plan_queue_manager(snap(archive_extent=None), proven={"S0000002.LOG"})

    assert {a for e, a in actions(plan).items() if e != "S0000012.LOG"} == {"mq"}
    assert actions(plan)["S0000012.LOG"] == "keep"


def test_log_points_that_cannot_be_ordered_keep_every_extent_and_say_which_answer_and_what_to_do() -> None:
    # RECLOG ahead of CURRLOG: not an answer to plan from, and not a reason to stop the rest of the fleet's plan.
    plan = plan_queue_manager(snap(restart_extent="S0000013.LOG"), proven={"S0000000.LOG"})

    assert set(actions(plan).values()) == {"keep"}
    assert {d.reason for d in plan.decisions} == {"log points that cannot be ordered"}
    [(alert, text)] = plan.alerts
    assert alert is Alert.NOT_PLANNED
    assert "RECLOG S0000013.LOG is ahead of CURRLOG S0000012.LOG" in text
    assert "DISPLAY QMSTATUS TYPE(LOG)" in text and "collect again" in text


def test_an_r_extent_named_as_a_log_point_is_not_planned_from() -> None:
    plan = plan_queue_manager(snap(media_extent="R0000003.LOG"), proven=set())

    assert set(actions(plan).values()) == {"keep"}
    assert "MEDIALOG R0000003.LOG: an R extent (kept for reuse) is not a log point" in plan.alerts[0][1]


def test_an_earlier_collection_with_unorderable_points_raises_no_stuck_alert_and_no_error() -> None:
    history = [snap(run_id=f"r{n}", current_extent=f"S{12 + n:07d}.LOG") for n in range(3)]
    history[1] = snap(run_id="r1", current_extent="S0000013.LOG", restart_extent="R0000011.LOG")
    now = snap(run_id="r3", current_extent="S0000016.LOG")

    assert plan_queue_manager(now, proven=set(), history=history).alerts == ()


def test_a_plan_carries_each_extent_s_size_and_the_log_state_it_was_made_from() -> None:
    snapshot = snap(extents=[{"name": "S0000011.LOG", "size_bytes": 4096, "modified_at": None}])

    plan = plan_queue_manager(snapshot, proven=set())

    assert [(d.extent, d.size_bytes) for d in plan.decisions] == [("S0000011.LOG", 4096)]
    assert (plan.run_id, plan.collected_at, plan.log_type, plan.log_management) == (
        "collect_1",
        snapshot.collected_at,
        "LINEAR",
        "Archive",
    )
    assert (plan.current_extent, plan.restart_extent, plan.media_extent, plan.archive_extent) == (
        "S0000012.LOG",
        "S0000011.LOG",
        "S0000003.LOG",
        "S0000001.LOG",
    )


def test_decisions_come_oldest_first_across_the_wrap_and_one_formatted_ahead_comes_last() -> None:
    names = ["S0000000.LOG", "S0000001.LOG", "S0000003.LOG", "S9999998.LOG", "S9999999.LOG", "R0000001.LOG"]
    snapshot = snap(
        log_management="Manual",
        current_extent="S0000001.LOG",
        restart_extent="S0000000.LOG",
        media_extent="S9999999.LOG",
        archive_extent=None,
        extents=[{"name": n, "size_bytes": 1, "modified_at": None} for n in names],
    )

    plan = plan_queue_manager(snapshot, proven=set())

    assert [d.extent for d in plan.decisions] == [
        "S9999998.LOG",
        "S9999999.LOG",
        "S0000000.LOG",
        "R0000001.LOG",
        "S0000001.LOG",
        "S0000003.LOG",
    ]
    assert actions(plan)["S9999998.LOG"] == "archive_then_release"


def test_an_extent_numbered_after_currlog_is_never_copied_nor_released_in_any_mode() -> None:
    # S0000013 is formatted ahead of use: MQ has not written it, so a copy now would not be of the bytes it will hold
    # (and would later count as a proven copy of them).
    extents = [{"name": f"S{n:07d}.LOG", "size_bytes": 1024, "modified_at": None} for n in range(14)]
    for management, archive_extent in (("Manual", None), ("Archive", "S0000001.LOG"), ("Archive", None)):
        plan = plan_queue_manager(
            snap(extents=extents, log_management=management, archive_extent=archive_extent), proven={"S0000013.LOG"}
        )
        (ahead,) = [d for d in plan.decisions if d.extent == "S0000013.LOG"]
        assert ahead.action is ExtentAction.KEEP and "formatted ahead of use" in ahead.reason, management
        assert plan.decisions[-1] == ahead  # oldest first: the one after CURRLOG comes last
