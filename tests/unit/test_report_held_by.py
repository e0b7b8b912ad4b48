"""The gate's "held by": a recovery point seconds old (the checkpoint mqjournal forces) reads as normal; one older
than the policy's alert limit (STARTUP_POINT_OLD, MEDIA_POINT_OLD) keeps the terse code and age an admin looks into."""

from __future__ import annotations

from mqjournal.policy import Policy
from mqjournal.report import held_by, plan_body
from tests.plan.builders import changed
from tests.unit.test_explain import fleet_rows


def _billing(age_seconds: int):
    qms, _ = fleet_rows()
    billing = next(q for q in qms if q.qmgr == "BILLING")  # held by AMQ7462, the media recovery point
    return changed(billing, holding_point_age_seconds=age_seconds)


def test_a_point_seconds_old_is_said_neutrally():
    q = _billing(4)
    assert held_by(q, Policy()) == "the latest media recovery point (AMQ7462), 4 s old"
    assert "| AMQ7462, 4 s |" not in plan_body([q])
    assert "| the latest media recovery point (AMQ7462), 4 s old |" in plan_body([q])


def test_a_point_older_than_the_policys_alert_limit_keeps_its_code_and_age():
    assert held_by(_billing(37 * 3600), Policy()) == "AMQ7462, 37 h"
    assert "| AMQ7462, 37 h |" in plan_body([_billing(37 * 3600)])


def test_the_limit_is_the_policys_recovery_point_alert_age():
    q = _billing(37 * 3600)
    assert held_by(q, Policy(recovery_point_alert_hours=48)) == "the latest media recovery point (AMQ7462), 37 h old"
    assert "| the latest media recovery point (AMQ7462), 37 h old |" in plan_body(
        [q], policy=Policy(recovery_point_alert_hours=48)
    )


def test_the_startup_point_and_amqjrninf_read_the_same_way():
    q = _billing(4)
    assert held_by(changed(q, holding_point="AMQ7460"), Policy()) == (
        "the latest startup recovery point (AMQ7460), 4 s old"
    )
    assert held_by(changed(q, holding_point="AMQJRNINF"), Policy()) == "AMQJRNINF's oldest needed entry, 4 s old"


def test_a_point_without_its_time_or_no_point_at_all_is_unchanged():
    q = _billing(4)
    assert held_by(changed(q, holding_point_age_seconds=None), Policy()) == "AMQ7462"
    assert held_by(changed(q, holding_point=None), Policy()) == "-"
