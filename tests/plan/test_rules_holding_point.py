"""What holds the oldest needed receiver, and the first-run alerts about old recovery points (docs/planning-rules.md,
sections 2.5 and 4).

Issue #16: on the first run BILLING kept 38 receivers (a damaged queue held the AMQ7462 point; the collector saw
AMQ7472) and PAYROLL 36 (a unit of work open for 42 h held AMQ7460), and nothing said why until the stuck alerts
fired runs later.
"""

from __future__ import annotations

from datetime import timedelta

from mqjournal.snapshot import DamagedObject
from mqjournal.vocabulary import Alert, HoldingPoint
from tests.plan.builders import HOUR, T0, chain, names, snapshot
from tests.plan.test_rules import only_qm, plan

MINUTE = timedelta(minutes=1)
CHAIN = chain(names(1, 50), saved=tuple(names(1, 49)))  # one receiver an hour; AMQA000050 attached at T0 + 49 h
NOW = T0 + 49 * HOUR + 30 * MINUTE


def test_an_open_unit_of_work_holds_the_startup_point_and_is_named_with_its_time_and_age():
    since = T0 + 7 * HOUR + 5 * MINUTE  # 42 h before the collection
    snap = snapshot(CHAIN, oldest="AMQA000008", needed_at=since, startup="AMQA000008", startup_at=since,
                    media="AMQA000050", media_at=NOW - MINUTE, collected_at=NOW)  # fmt: skip
    qm = only_qm(plan(snap, as_of=NOW))
    assert (qm.oldest_needed, qm.holding_point, qm.holding_point_at) == ("AMQA000008", HoldingPoint.STARTUP, since)
    assert qm.holding_point_age_seconds == int((NOW - since).total_seconds())
    assert Alert.STARTUP_POINT_OLD in qm.alerts and Alert.MEDIA_POINT_OLD not in qm.alerts
    assert qm.utc_offset_minutes == 60


def test_a_damaged_object_holds_the_media_point_and_its_amq7472_is_the_evidence():
    damaged_at = T0 + 11 * HOUR
    snap = snapshot(CHAIN, oldest="AMQA000011", needed_at=T0 + 10 * HOUR + MINUTE, startup="AMQA000050",
                    startup_at=NOW - MINUTE, media="AMQA000011", media_at=T0 + 10 * HOUR + MINUTE,
                    collected_at=NOW)  # fmt: skip
    snap = snap.model_copy(
        update={
            "damaged_objects": [
                DamagedObject(object="OLD.FIXED.QUEUE", object_type="QLOCAL", reported_at=T0),  # before the point
                DamagedObject(object="APP.REQUEST.QUEUE", object_type="QLOCAL", reported_at=damaged_at),
            ]
        }
    )
    qm = only_qm(plan(snap, as_of=NOW))
    assert (qm.holding_point, qm.oldest_needed) == (HoldingPoint.MEDIA, "AMQA000011")
    assert qm.damaged_objects == ("APP.REQUEST.QUEUE (QLOCAL)",)
    assert Alert.MEDIA_POINT_OLD in qm.alerts and Alert.STARTUP_POINT_OLD not in qm.alerts


def test_both_points_at_the_oldest_needed_receiver_name_the_earlier_one():
    snap = snapshot(CHAIN, oldest="AMQA000040", needed_at=T0 + 39 * HOUR + 2 * MINUTE, startup="AMQA000040",
                    startup_at=T0 + 39 * HOUR + 30 * MINUTE, media="AMQA000040",
                    media_at=T0 + 39 * HOUR + 2 * MINUTE, collected_at=NOW)  # fmt: skip
    assert only_qm(plan(snap, as_of=NOW)).holding_point == HoldingPoint.MEDIA


def test_amqjrninf_holds_when_neither_point_is_at_the_oldest_needed_receiver():
    snap = snapshot(CHAIN, oldest="AMQA000049", needed_at=T0 + 48 * HOUR + MINUTE, startup=None, media=None,
                    collected_at=NOW)  # fmt: skip
    qm = only_qm(plan(snap, as_of=NOW))
    assert (qm.holding_point, qm.holding_point_at) == (HoldingPoint.AMQJRNINF, T0 + 48 * HOUR + MINUTE)
    assert not {Alert.STARTUP_POINT_OLD, Alert.MEDIA_POINT_OLD} & set(qm.alerts)


def test_a_blocked_queue_manager_names_no_holding_point():
    snap = snapshot(CHAIN, amqjrninf=None, collected_at=NOW)
    qm = only_qm(plan(snap, as_of=NOW))
    assert qm.blocked and (qm.holding_point, qm.holding_point_at, qm.holding_point_age_seconds) == (None, None, None)


def test_an_old_point_alerts_only_right_after_a_checkpoint_that_worked():
    since = T0 + 7 * HOUR
    snap = snapshot(CHAIN, oldest="AMQA000008", needed_at=since, startup="AMQA000008", startup_at=since,
                    collected_at=NOW, checkpoint_ok=False)  # fmt: skip
    assert Alert.STARTUP_POINT_OLD not in only_qm(plan(snap, as_of=NOW)).alerts
    fresh = snap.model_copy(update={"checkpoint": snap.checkpoint.model_copy(update={"ok": True})})
    assert Alert.STARTUP_POINT_OLD in only_qm(plan(fresh, as_of=NOW)).alerts
    # The limit is the policy's: 48 h lets a 42 h unit of work pass.
    assert Alert.STARTUP_POINT_OLD not in only_qm(plan(fresh, as_of=NOW, recovery_point_alert_hours=48)).alerts


def test_the_plan_carries_what_wrkjrnrcv_shows_and_the_asp():
    snap = snapshot(CHAIN, collected_at=NOW).model_copy(
        update={"asp_number": 1, "asp_capacity_bytes": 500 * 2**30, "asp_available_bytes": 120 * 2**30}
    )
    result = plan(snap, as_of=NOW)
    qm = only_qm(result)
    assert (qm.asp_number, qm.asp_capacity_bytes, qm.asp_available_bytes) == (1, 500 * 2**30, 120 * 2**30)
    first = next(r for r in result.receivers if r.receiver == "AMQA000001")
    assert (first.attached_at, first.detached_at, first.first_sequence, first.last_sequence) == (T0, T0 + HOUR, 1, 100)
    assert first.saved_at == T0 + HOUR + 5 * MINUTE
