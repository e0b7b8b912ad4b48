"""The reference planner against AMQJRNINF, AMQ7460 and AMQ7462 together (docs/planning-rules.md, section 2).

Issue #12 ("Safety proof"): AMQJRNINF `********************20991231235959999` (asterisks, a time decades ahead)
while an open unit of work holds AMQ7460 back was planned "not blocked", and every detached receiver was deleted,
the one AMQ7460 names included.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from mqjournal.jrninf import format_amqjrninf
from mqjournal.policy import Policy
from mqjournal.vocabulary import BLOCK_ORDER, DELETES
from tests.plan.builders import HOUR, T0, chain, names, snapshot
from tests.plan.test_rules import FIVE, actions, blocked, only_qm, plan

MINUTE = timedelta(minutes=1)
SAVED = chain(FIVE, saved=tuple(FIVE))  # AMQA000001 .. 4 saved, attached T0, T0+1h, ..; AMQA000005 attached
ATTACK = "********************20991231235959999"


def deleted(result) -> list[str]:
    return sorted(r.receiver for r in result.receivers if r.action in DELETES)


# --- the record of the issue ----------------------------------------------------------------------------------


def test_the_attack_record_with_amq7460_naming_an_earlier_receiver_blocks_and_deletes_nothing():
    snap = snapshot(
        SAVED, amqjrninf=ATTACK,
        startup="AMQA000002", startup_at=T0 + HOUR + 5 * MINUTE,  # an open unit of work since then
        media="AMQA000005", media_at=T0 + 4 * HOUR + MINUTE,
    )  # fmt: skip
    qm = only_qm(plan(snap))
    assert (qm.blocked, qm.block_reason) == (True, "AMQJRNINF_TIME_IN_FUTURE")
    assert qm.receivers_to_delete == 0 and deleted(plan(snap)) == []
    assert "RECOVERY_POINTS_DISAGREE" in qm.alerts and "OLDEST_NEEDED_NOT_ON_SYSTEM" in qm.alerts
    assert qm.oldest_needed == "AMQA000001"  # blocked: everything is needed
    assert qm.recovery_points == (
        "AMQJRNINF ********** 2099-12-31T23:59:59.999, AMQ7460 AMQA000002 2026-11-20T09:05:00.000, "
        "AMQ7462 AMQA000005 2026-11-20T12:01:00.000"
    )


def test_the_attack_record_with_amq7460_asterisks_blocks_and_deletes_nothing():
    snap = snapshot(SAVED, amqjrninf=ATTACK, startup="*", startup_at=T0 + HOUR + 5 * MINUTE, media=None)
    result = plan(snap)
    assert blocked(result) == (True, "AMQJRNINF_TIME_IN_FUTURE")
    assert deleted(result) == []
    assert "RECOVERY_POINTS_DISAGREE" in only_qm(result).alerts


def test_without_the_future_time_the_receiver_amq7460_names_is_kept():
    # AMQJRNINF (asterisks) places the oldest needed entry in AMQA000005; AMQ7460 names AMQA000002.
    jrninf = format_amqjrninf(None, None, (T0 + 4 * HOUR + MINUTE).replace(tzinfo=None))
    snap = snapshot(SAVED, amqjrninf=jrninf, startup="AMQA000002", startup_at=T0 + HOUR + 5 * MINUTE, media=None)
    result = plan(snap)
    assert blocked(result) == (False, None)
    assert deleted(result) == ["AMQA000001"]
    assert actions(result)["AMQA000002"] == ("keep", "NEEDED_SAVED")
    assert only_qm(result).oldest_needed == "AMQA000002"


# --- the points' positions -----------------------------------------------------------------------------------


def test_a_startup_point_older_than_amqjrninf_keeps_its_receiver():
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000002", media="AMQA000004"))
    assert only_qm(result).oldest_needed == "AMQA000002"
    assert deleted(result) == ["AMQA000001"]
    assert not only_qm(result).blocked


def test_a_media_point_older_than_amqjrninf_keeps_its_receiver():
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000004", media="AMQA000003"))
    assert only_qm(result).oldest_needed == "AMQA000003"
    assert deleted(result) == ["AMQA000001", "AMQA000002"]


def test_the_oldest_of_amqjrninf_and_both_points_is_the_oldest_needed():
    result = plan(snapshot(SAVED, oldest="AMQA000003", startup="AMQA000004", media="AMQA000002"))
    assert only_qm(result).oldest_needed == "AMQA000002"


def test_amqjrninf_older_than_the_points_stays_the_oldest_needed():
    result = plan(snapshot(SAVED, oldest="AMQA000002", startup="AMQA000004", media="AMQA000004"))
    assert only_qm(result).oldest_needed == "AMQA000002"
    assert deleted(result) == ["AMQA000001"]


def test_an_asterisks_point_is_placed_by_its_time():
    snap = snapshot(SAVED, oldest="AMQA000004", startup="*", startup_at=T0 + 2 * HOUR + 30 * MINUTE, media=None)
    assert only_qm(plan(snap)).oldest_needed == "AMQA000003"


def test_an_asterisks_point_before_every_receiver_makes_them_all_needed():
    snap = snapshot(SAVED, oldest="AMQA000004", startup="*", startup_at=T0 - HOUR, media=None)
    result = plan(snap)
    assert only_qm(result).oldest_needed == "AMQA000001" and deleted(result) == []
    assert not only_qm(result).blocked  # asterisks: the receiver is gone, a time before the chain is normal


def test_an_asterisks_point_compares_attach_times_at_millisecond_precision():
    receivers = chain(FIVE, saved=tuple(FIVE), start=T0 + timedelta(microseconds=400))
    # AMQA000003 was attached at T0+2h plus 400 microseconds: a point at T0+2h exactly is in it.
    snap = snapshot(receivers, oldest="AMQA000004", startup="*", startup_at=T0 + 2 * HOUR, media=None)
    assert only_qm(plan(snap)).oldest_needed == "AMQA000003"


def test_missing_points_do_not_constrain():
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup=None, media=None))
    assert only_qm(result).oldest_needed == "AMQA000004"
    assert deleted(result) == ["AMQA000001", "AMQA000002", "AMQA000003"]
    assert "RECOVERY_POINTS_DISAGREE" not in only_qm(result).alerts


# --- points that block ------------------------------------------------------------------------------------------


def test_a_point_naming_a_receiver_outside_the_chain_blocks():
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000009", media=None))
    assert blocked(result) == (True, "RECOVERY_POINT_NOT_IN_CHAIN")
    assert deleted(result) == [] and only_qm(result).oldest_needed == "AMQA000001"


def test_a_named_point_before_the_first_attach_blocks():
    result = plan(snapshot(SAVED, oldest="AMQA000004", media="AMQA000002", media_at=T0 - MINUTE))
    assert blocked(result) == (True, "RECOVERY_POINT_BEFORE_CHAIN")
    assert deleted(result) == []


def test_a_named_point_in_the_second_of_the_first_attach_does_not_block():
    # AMQ7460/AMQ7462 show whole seconds: an entry at 08:00:00.700 shows as 08:00:00, before an 08:00:00.500 attach.
    receivers = chain(FIVE, saved=tuple(FIVE), start=T0 + timedelta(milliseconds=500))
    snap = snapshot(receivers, oldest="AMQA000004", startup="AMQA000001", startup_at=T0, media=None)
    result = plan(snap)
    assert blocked(result) == (False, None)
    assert only_qm(result).oldest_needed == "AMQA000001"


def test_a_point_after_the_collection_beyond_the_clock_skew_blocks():
    snap = snapshot(SAVED, oldest="AMQA000004")
    late = snap.collected_at + timedelta(seconds=301)
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000004", startup_at=late))
    assert blocked(result) == (True, "RECOVERY_POINT_IN_FUTURE")
    assert deleted(result) == []


def test_a_point_within_the_clock_skew_does_not_block():
    snap = snapshot(SAVED, oldest="AMQA000004")
    late = snap.collected_at + timedelta(seconds=300)
    assert blocked(plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000004", startup_at=late))) == (False, None)


def test_an_asterisks_point_in_the_future_blocks_too():
    snap = snapshot(SAVED, oldest="AMQA000004", startup="*", startup_at=T0 + 30 * 24 * HOUR, media=None)
    assert blocked(plan(snap)) == (True, "RECOVERY_POINT_IN_FUTURE")


# --- AMQJRNINF's time -------------------------------------------------------------------------------------------


def test_amqjrninf_after_the_collection_beyond_the_clock_skew_blocks():
    collected = T0 + 4 * HOUR + 30 * MINUTE
    needed = collected + timedelta(seconds=300, milliseconds=1)
    snap = snapshot(SAVED, oldest="AMQA000005", needed_at=needed, startup=None, media=None)
    result = plan(snap)
    assert blocked(result) == (True, "AMQJRNINF_TIME_IN_FUTURE")
    assert deleted(result) == []


def test_amqjrninf_at_the_end_of_the_clock_skew_does_not_block():
    collected = T0 + 4 * HOUR + 30 * MINUTE
    snap = snapshot(SAVED, oldest="AMQA000005", needed_at=collected + timedelta(seconds=300), startup=None, media=None)
    result = plan(snap, as_of=collected + timedelta(seconds=300))
    assert blocked(result) == (False, None)
    assert only_qm(result).oldest_needed_age_seconds == 0


def test_the_clock_skew_is_the_policy_s():
    collected = T0 + 4 * HOUR + 30 * MINUTE
    snap = snapshot(SAVED, oldest="AMQA000005", needed_at=collected + timedelta(seconds=10), startup=None, media=None)
    assert blocked(plan(snap, clock_skew_seconds=5)) == (True, "AMQJRNINF_TIME_IN_FUTURE")
    assert blocked(plan(snap, clock_skew_seconds=10)) == (False, None)


def test_a_partition_clock_ahead_of_the_controller_is_not_taken_for_a_time_in_the_future():
    collected = T0 + 4 * HOUR + 30 * MINUTE
    snap = snapshot(SAVED, oldest="AMQA000005", needed_at=collected - MINUTE, startup=None, media=None)
    result = plan(snap, as_of=collected - HOUR)  # the controller's clock an hour behind the partition's
    assert blocked(result) == (False, None)


def test_a_named_amqjrninf_before_the_chain_is_a_name_time_disagreement():
    snap = snapshot(SAVED, oldest="AMQA000001", needed_at=T0 - HOUR, startup=None, media=None)
    assert blocked(plan(snap)) == (True, "AMQJRNINF_NAME_TIME_DISAGREE")


def test_asterisks_in_the_future_still_raise_the_not_on_system_alert():
    snap = snapshot(SAVED, amqjrninf=ATTACK, startup=None, media=None)
    assert "OLDEST_NEEDED_NOT_ON_SYSTEM" in only_qm(plan(snap)).alerts


def test_the_age_of_the_oldest_needed_entry_is_never_below_minus_the_skew_unless_blocked():
    collected = T0 + 4 * HOUR + 30 * MINUTE
    for seconds in (0, 299, 300, 301, 10**6):
        needed = collected + timedelta(seconds=seconds)
        qm = only_qm(plan(snapshot(SAVED, oldest="*", needed_at=needed, startup=None, media=None), as_of=collected))
        assert qm.blocked or qm.oldest_needed_age_seconds >= -300, seconds


# --- disagreement -----------------------------------------------------------------------------------------------


def test_points_that_agree_with_amqjrninf_raise_no_alert():
    assert "RECOVERY_POINTS_DISAGREE" not in only_qm(plan(snapshot(SAVED, oldest="AMQA000003"))).alerts


def test_amqjrninf_newer_than_a_point_is_a_disagreement():
    result = plan(snapshot(SAVED, oldest="AMQA000004", startup="AMQA000002", media=None))
    assert "RECOVERY_POINTS_DISAGREE" in only_qm(result).alerts


def test_amqjrninf_older_than_both_points_is_a_disagreement():
    result = plan(snapshot(SAVED, oldest="AMQA000002", startup="AMQA000004", media="AMQA000003"))
    assert "RECOVERY_POINTS_DISAGREE" in only_qm(result).alerts


def test_amqjrninf_older_than_the_only_point_is_not_a_disagreement():
    # AMQ7462 is missing, and may be the older point AMQJRNINF shows.
    result = plan(snapshot(SAVED, oldest="AMQA000002", startup="AMQA000004", media=None))
    assert "RECOVERY_POINTS_DISAGREE" not in only_qm(result).alerts


def test_an_unusable_amqjrninf_disagrees_with_nothing():
    result = plan(snapshot(SAVED, amqjrninf=None, startup="AMQA000002", media="AMQA000003"))
    assert "RECOVERY_POINTS_DISAGREE" not in only_qm(result).alerts


# --- recovery_points ----------------------------------------------------------------------------------------------


def test_recovery_points_names_all_three_with_their_times():
    snap = snapshot(
        SAVED, oldest="AMQA000003", needed_at=T0 + 2 * HOUR + timedelta(minutes=1, milliseconds=250),
        startup="AMQA000003", startup_at=T0 + 2 * HOUR + timedelta(minutes=1, microseconds=999_999), media="*",
    )  # fmt: skip
    assert only_qm(plan(snap)).recovery_points == (
        "AMQJRNINF AMQA000003 2026-11-20T10:01:00.250, AMQ7460 AMQA000003 2026-11-20T10:01:00.999, "
        "AMQ7462 ********** 2026-11-20T10:01:00.250"
    )


@pytest.mark.parametrize(
    "raw, shown",
    [(None, "AMQJRNINF -"), ("AMQA000003QMTEST    2026112", "AMQJRNINF malformed")],
    ids=["missing", "malformed"],
)
def test_recovery_points_shows_a_missing_or_malformed_amqjrninf_and_missing_points(raw, shown):
    snap = snapshot(SAVED, amqjrninf=raw, startup=None, media=None)
    assert only_qm(plan(snap)).recovery_points == f"{shown}, AMQ7460 -, AMQ7462 -"


def test_recovery_points_is_filled_without_any_alert():
    qm = only_qm(plan(snapshot(SAVED, oldest="AMQA000003")))
    assert qm.alerts == () and qm.recovery_points.startswith("AMQJRNINF AMQA000003 ")


# --- the order of block reasons -----------------------------------------------------------------------------------


def test_the_new_block_reasons_are_listed_in_the_documented_order():
    receivers = chain(names(1, 5), saved=tuple(FIVE))
    del receivers[1]  # CHAIN_BROKEN
    collected = T0 + 4 * HOUR + 30 * MINUTE
    snap = snapshot(
        receivers, oldest="AMQA000005", needed_at=collected + HOUR,  # in the future, and not the time of AMQA000005
        startup="AMQA000009", startup_at=collected + HOUR,  # not in the chain, in the future
        media="AMQA000003", media_at=T0 - HOUR,  # before the chain
    )  # fmt: skip
    result = plan(snap, as_of=collected + timedelta(days=2))
    expected = [
        "SNAPSHOT_STALE", "AMQJRNINF_TIME_IN_FUTURE", "RECOVERY_POINT_NOT_IN_CHAIN", "RECOVERY_POINT_BEFORE_CHAIN",
        "RECOVERY_POINT_IN_FUTURE", "CHAIN_BROKEN",
    ]  # fmt: skip
    assert blocked(result) == (True, ",".join(expected))
    assert [code for code in BLOCK_ORDER if code in expected] == expected


# --- the policy field ---------------------------------------------------------------------------------------------


def test_clock_skew_defaults_to_five_minutes():
    assert Policy().clock_skew_seconds == 300 and Policy().clock_skew == timedelta(minutes=5)


@pytest.mark.parametrize(
    "value", [-1, 86_401, float("inf"), float("nan")], ids=["negative", "over-a-day", "inf", "nan"]
)
def test_clock_skew_outside_zero_to_a_day_or_not_finite_is_refused(value):
    with pytest.raises(ValidationError, match="clock_skew_seconds"):
        Policy(clock_skew_seconds=value)
