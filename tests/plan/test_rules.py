"""The reference planner, rule by rule (docs/planning-rules.md)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mqjournal.policy import Policy
from mqjournal.rules import plan_fleet
from mqjournal.snapshot import Receiver
from tests.plan.builders import HOUR, KB, T0, chain, names, snapshot

FIVE = names(1, 5)  # AMQA000001 .. AMQA000005, the last attached


def plan(*snapshots, as_of=None, **policy):
    as_of = as_of or max(s.collected_at for s in snapshots) + timedelta(minutes=5)
    return plan_fleet(list(snapshots), as_of=as_of, policy=Policy(**policy))


def actions(result) -> dict[str, tuple[str, str]]:
    return {r.receiver: (r.action, r.reason) for r in result.receivers}


def only_qm(result):
    (qm,) = result.queue_managers
    return qm


# --- the chain -----------------------------------------------------------------------------------------------


def test_chain_order_comes_from_attach_times_when_names_wrap():
    wrapped = ["AMQA099998", "AMQA099999", "AMQA000000", "AMQA000001"]
    result = plan(snapshot(chain(wrapped, saved=tuple(wrapped)), oldest="AMQA000000"))
    positions = {r.receiver: r.chain_position for r in result.receivers}
    assert positions == {"AMQA099998": 0, "AMQA099999": 1, "AMQA000000": 2, "AMQA000001": 3}
    assert actions(result)["AMQA099998"] == ("delete", "NOT_NEEDED_SAVED")
    assert actions(result)["AMQA000000"] == ("keep", "NEEDED_SAVED")
    assert only_qm(result).oldest_needed == "AMQA000000"


def test_identical_receiver_names_in_two_libraries_are_planned_apart():
    a = snapshot(chain(FIVE, library="QMONE", saved=tuple(FIVE)), qmgr="ONE", library="QMONE", oldest="AMQA000004")
    b = snapshot(chain(FIVE, library="QMTWO"), qmgr="TWO", library="QMTWO", oldest="AMQA000002")
    result = plan(a, b)
    one = {r.receiver: r.action for r in result.receivers if r.qmgr_library == "QMONE"}
    two = {r.receiver: r.action for r in result.receivers if r.qmgr_library == "QMTWO"}
    assert one["AMQA000003"] == "delete" and two["AMQA000003"] == "save"
    assert [q.oldest_needed for q in result.queue_managers] == ["AMQA000004", "AMQA000002"]


def test_the_same_queue_manager_name_on_two_hosts_is_two_queue_managers():
    result = plan(
        snapshot(chain(FIVE, saved=tuple(FIVE)), host="prod1", oldest="AMQA000005"),
        snapshot(chain(FIVE), host="prod2", oldest="AMQA000001"),
    )
    by_host = {q.host: q for q in result.queue_managers}
    assert by_host["prod1"].receivers_to_delete == 4 and by_host["prod2"].receivers_to_delete == 0


def test_a_receiver_in_the_library_but_not_in_the_chain_is_kept():
    stray = Receiver(name="AMQA000006", library="QMTEST", status="EMPTY", size_bytes=16 * KB)
    result = plan(snapshot([*chain(FIVE, saved=tuple(FIVE)), stray], oldest="AMQA000005"))
    row = next(r for r in result.receivers if r.receiver == "AMQA000006")
    assert (row.action, row.reason, row.chain_position) == ("keep", "NOT_IN_CHAIN", None)


# --- actions ------------------------------------------------------------------------------------------------------


def test_the_attached_receiver_is_kept():
    assert actions(plan(snapshot(chain(FIVE))))["AMQA000005"] == ("keep", "ATTACHED")


def test_needed_receivers_are_kept_once_saved_and_saved_otherwise():
    result = plan(snapshot(chain(FIVE, saved=("AMQA000003",)), oldest="AMQA000003"))
    assert actions(result)["AMQA000003"] == ("keep", "NEEDED_SAVED")
    assert actions(result)["AMQA000004"] == ("save", "NEEDED_NOT_SAVED")


def test_a_needed_freed_receiver_is_kept_and_alerted():
    result = plan(snapshot(chain(FIVE, freed=("AMQA000004",), saved=("AMQA000003",)), oldest="AMQA000003"))
    assert actions(result)["AMQA000004"] == ("keep", "NEEDED_FREED")
    assert "NEEDED_RECEIVER_NOT_ONLINE" in only_qm(result).alerts


def test_not_needed_receivers_are_deleted_if_saved_and_saved_then_deleted_if_not():
    result = plan(snapshot(chain(FIVE, saved=("AMQA000001",), freed=("AMQA000002",)), oldest="AMQA000004"))
    assert actions(result)["AMQA000001"] == ("delete", "NOT_NEEDED_SAVED")
    assert actions(result)["AMQA000002"] == ("delete", "NOT_NEEDED_SAVED")  # FREED is saved
    assert actions(result)["AMQA000003"] == ("save_then_delete", "NOT_NEEDED_NOT_SAVED")


def test_a_receiver_saved_while_attached_is_not_saved():
    receivers = chain(FIVE)
    receivers[0] = receivers[0].model_copy(update={"saved_at": receivers[0].attached_at + timedelta(minutes=10)})
    result = plan(snapshot(receivers, oldest="AMQA000004"))
    assert actions(result)["AMQA000001"] == ("save_then_delete", "NOT_NEEDED_NOT_SAVED")


def test_retention_keeps_recently_detached_receivers_online():
    snap = snapshot(chain(FIVE, saved=tuple(FIVE[:3])), oldest="AMQA000005")
    # Detached at T0+1h .. T0+4h; as_of T0+4h35m; 2 days' retention keeps them all.
    result = plan(snap, retention_days=2)
    assert actions(result)["AMQA000001"] == ("keep", "RETAINED")
    assert actions(result)["AMQA000004"] == ("save", "RETAINED_NOT_SAVED")
    assert only_qm(result).receivers_to_delete == 0


def test_retention_has_no_effect_once_receivers_are_older_than_it():
    snap = snapshot(chain(FIVE, saved=tuple(FIVE[:4])), oldest="AMQA000005")
    result = plan(snap, as_of=T0 + timedelta(days=3), retention_days=1, max_snapshot_age_hours=100)
    assert only_qm(result).receivers_to_delete == 4


def test_a_minimum_count_keeps_the_newest_not_needed_receivers():
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE[:4])), oldest="AMQA000005"), keep_min_receivers=2)
    assert [actions(result)[n][0] for n in FIVE] == ["delete", "delete", "keep", "keep", "keep"]
    assert actions(result)["AMQA000003"][1] == "RETAINED"


# --- blocked queue managers ---------------------------------------------------------------------------------------


def blocked(result) -> tuple[bool, str | None]:
    qm = only_qm(result)
    return qm.blocked, qm.block_reason


def test_a_stale_snapshot_blocks_deletes_but_not_saves():
    snap = snapshot(chain(FIVE, saved=("AMQA000001",)), oldest="AMQA000004")
    result = plan(snap, as_of=snap.collected_at + timedelta(hours=25))
    assert blocked(result) == (True, "SNAPSHOT_STALE")
    assert actions(result)["AMQA000001"] == ("keep", "BLOCKED")
    assert actions(result)["AMQA000002"] == ("save", "BLOCKED_NOT_SAVED")


@pytest.mark.parametrize(
    "raw, reason",
    [(None, "AMQJRNINF_MISSING"), ("AMQA000003QMTEST    2026112", "AMQJRNINF_MALFORMED")],
    ids=["missing", "malformed"],
)
def test_an_unusable_amqjrninf_blocks_and_treats_everything_as_needed(raw, reason):
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE)), amqjrninf=raw))
    assert blocked(result) == (True, reason)
    assert {a for a, _ in actions(result).values()} == {"keep"}
    assert only_qm(result).oldest_needed is None and only_qm(result).oldest_needed_age_seconds is None


def test_amqjrninf_naming_a_receiver_outside_the_chain_blocks():
    snap = snapshot(
        chain(FIVE, saved=tuple(FIVE)), oldest="AMQA000009", needed_at=T0 + 2 * HOUR, startup=None, media=None
    )
    result = plan(snap)
    assert blocked(result) == (True, "AMQJRNINF_RECEIVER_NOT_IN_CHAIN")
    assert only_qm(result).receivers_to_delete == 0


def test_amqjrninf_whose_name_and_time_disagree_blocks():
    # Names AMQA000004 (attached T0+3h) but the needed entry is at T0+1h30: that entry is in AMQA000002.
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE)), oldest="AMQA000004", needed_at=T0 + timedelta(minutes=90)))
    assert blocked(result) == (True, "AMQJRNINF_NAME_TIME_DISAGREE")
    assert only_qm(result).receivers_to_delete == 0


def test_a_gap_in_the_sequence_numbers_breaks_the_chain():
    receivers = chain(FIVE, saved=tuple(FIVE))
    receivers[2] = receivers[2].model_copy(update={"first_sequence": receivers[2].first_sequence + 5})
    assert blocked(plan(snapshot(receivers, oldest="AMQA000005"))) == (True, "CHAIN_BROKEN")


def test_a_missing_receiver_in_the_middle_breaks_the_chain():
    receivers = chain(FIVE, saved=tuple(FIVE))
    del receivers[2]
    result = plan(snapshot(receivers, oldest="AMQA000005"))
    assert blocked(result) == (True, "CHAIN_BROKEN")
    assert only_qm(result).receivers_to_delete == 0


def test_two_attached_receivers_break_the_chain():
    receivers = chain(FIVE, saved=tuple(FIVE))
    receivers[1] = receivers[1].model_copy(update={"status": "ATTACHED"})
    assert blocked(plan(snapshot(receivers, oldest="AMQA000005")))[1] == "CHAIN_BROKEN"


def test_every_block_reason_is_listed_in_order():
    receivers = chain(FIVE)
    del receivers[1]
    snap = snapshot(receivers, amqjrninf=None)
    result = plan(snap, as_of=snap.collected_at + timedelta(days=2))
    assert blocked(result) == (True, "SNAPSHOT_STALE,AMQJRNINF_MISSING,CHAIN_BROKEN")


# --- the oldest needed receiver when it is gone ------------------------------------------------------------------


def test_asterisks_locate_the_oldest_needed_receiver_by_time():
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE)), oldest="*", needed_at=T0 + timedelta(minutes=210)))
    qm = only_qm(result)
    assert qm.oldest_needed == "AMQA000003" and not qm.blocked
    assert "OLDEST_NEEDED_NOT_ON_SYSTEM" in qm.alerts
    assert qm.receivers_to_delete == 2


def test_asterisks_look_the_receiver_up_an_hour_early_for_a_dst_change_since_the_time_was_written():
    """AMQJRNINF's local time may be an hour late once read with today's offset (written in summer time, read in
    winter time): the receiver attached 30 minutes before that reading may not hold the entry, the one before does."""
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE)), oldest="*", needed_at=T0 + timedelta(minutes=150)))
    qm = only_qm(result)
    assert qm.oldest_needed == "AMQA000002" and not qm.blocked
    assert qm.receivers_to_delete == 1


def test_asterisks_before_every_receiver_make_them_all_needed():
    result = plan(snapshot(chain(FIVE, saved=tuple(FIVE)), oldest="*", needed_at=T0 - HOUR))
    assert only_qm(result).oldest_needed == "AMQA000001"
    assert only_qm(result).receivers_to_delete == 0


# --- alerts -------------------------------------------------------------------------------------------------------


def test_a_failed_checkpoint_is_alerted():
    assert "CHECKPOINT_FAILED" in only_qm(plan(snapshot(chain(FIVE), checkpoint_ok=False))).alerts


def test_an_attached_receiver_past_its_threshold_is_alerted():
    receivers = chain(FIVE)
    receivers[-1] = receivers[-1].model_copy(update={"size_bytes": 3000 * KB})
    assert "RECEIVER_OVER_THRESHOLD" in only_qm(plan(snapshot(receivers))).alerts


def test_a_taken_next_receiver_name_is_alerted_even_across_the_wrap():
    receivers = chain(["AMQA099998", "AMQA099999"])
    taken = Receiver(name="AMQA000000", library="QMTEST", status="SAVED", size_bytes=KB, saved_at=T0)
    result = plan(snapshot([*receivers, taken]))
    assert "NEXT_RECEIVER_NAME_TAKEN" in only_qm(result).alerts


def test_no_name_alert_when_the_next_name_is_in_another_library():
    taken = Receiver(name="AMQA000006", library="QMOTHER", status="EMPTY", size_bytes=KB)
    assert "NEXT_RECEIVER_NAME_TAKEN" not in only_qm(plan(snapshot([*chain(FIVE), taken]))).alerts


def history(points: list[tuple[int, str]], field: str = "startup") -> list:
    """One snapshot per run: (number of receivers attached so far, receiver named by AMQ7460/7462)."""
    runs = []
    for run, (count, named) in enumerate(points):
        receivers = chain(names(1, count))
        runs.append(snapshot(receivers, oldest="AMQA000001", run_id=f"r{run}", **{field: named}))
    return runs


def test_a_startup_recovery_point_that_does_not_move_while_receivers_change_is_stuck():
    runs = history([(3, "AMQA000001"), (4, "AMQA000001"), (5, "AMQA000001")])
    assert "STARTUP_RECOVERY_STUCK" in only_qm(plan(*runs)).alerts


def test_a_media_recovery_point_that_does_not_move_is_stuck():
    runs = history([(3, "AMQA000002"), (4, "AMQA000002"), (6, "AMQA000002")], field="media")
    assert "MEDIA_RECOVERY_STUCK" in only_qm(plan(*runs)).alerts


def test_a_recovery_point_that_moves_is_not_stuck():
    runs = history([(3, "AMQA000001"), (4, "AMQA000002"), (5, "AMQA000002")])
    assert "STARTUP_RECOVERY_STUCK" not in only_qm(plan(*runs)).alerts


def test_fewer_runs_than_the_window_are_not_stuck():
    runs = history([(3, "AMQA000001"), (5, "AMQA000001")])
    assert "STARTUP_RECOVERY_STUCK" not in only_qm(plan(*runs)).alerts


def test_no_new_receivers_means_not_stuck():
    runs = history([(3, "AMQA000001"), (3, "AMQA000001"), (3, "AMQA000001")])
    assert "STARTUP_RECOVERY_STUCK" not in only_qm(plan(*runs)).alerts


# --- current state, figures, summary -----------------------------------------------------------------------------


def test_the_latest_snapshot_of_a_queue_manager_is_its_current_state():
    older = snapshot(chain(names(1, 3), saved=("AMQA000001",)), oldest="AMQA000003", run_id="a")
    newer = snapshot(chain(names(1, 5), saved=("AMQA000001",)), oldest="AMQA000002", run_id="b")
    result = plan(newer, older)
    assert only_qm(result).run_id == "b" and only_qm(result).chain_length == 5


def test_figures_count_receivers_and_bytes_to_save_and_delete():
    snap = snapshot(chain(FIVE, saved=("AMQA000001",), size=2 * KB), oldest="AMQA000004")
    qm = only_qm(plan(snap, as_of=snap.collected_at + timedelta(seconds=90)))
    assert (qm.receivers_to_save, qm.bytes_to_save) == (3, 6 * KB)  # 2, 3 (save then delete) and 4 (needed)
    assert (qm.receivers_to_delete, qm.bytes_to_delete, qm.bytes_freed) == (3, 6 * KB, 6 * KB)
    assert qm.chain_length == 5
    # AMQJRNINF's entry is one minute after AMQA000004 was attached (T0+3h01); collected at T0+4h30.
    assert qm.oldest_needed_age_seconds == int(timedelta(hours=1, minutes=29, seconds=90).total_seconds())


def test_summary_totals_the_fleet():
    result = plan(
        snapshot(chain(FIVE, saved=tuple(FIVE)), host="a", oldest="AMQA000005"),
        snapshot(chain(FIVE), host="b", oldest="AMQA000001", checkpoint_ok=False),
    )
    summary = result.summary()
    assert summary.queue_managers == 2 and summary.receivers == 10
    assert summary.actions == {"delete": 4, "keep": 2, "save": 4}
    assert summary.alerts == {"CHECKPOINT_FAILED": 1}
    assert summary.bytes_freed == 4 * 1000 * KB


def test_amqjrninf_milliseconds_match_a_receiver_attached_within_that_millisecond():
    receivers = chain(FIVE, saved=tuple(FIVE), start=T0 + timedelta(microseconds=736_873))
    # MQ wrote the entry in the microsecond AMQA000003 was attached; AMQJRNINF shows it as ...736 ms.
    needed = receivers[2].attached_at.replace(microsecond=736_000)
    result = plan(snapshot(receivers, oldest="AMQA000003", needed_at=needed))
    assert blocked(result) == (False, None)
    assert only_qm(result).oldest_needed == "AMQA000003"
