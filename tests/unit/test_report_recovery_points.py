"""The approval body shows AMQJRNINF, AMQ7460 and AMQ7462 side by side where they disagree or cannot be true."""

from __future__ import annotations

from mqjournal.report import plan_body
from tests.plan.builders import planned_queue_manager

POINTS = "AMQJRNINF ********** 2099-12-31T23:59:59.999, AMQ7460 AMQA000010 2026-11-01T21:14:09.000, AMQ7462 -"
QM = {
    "host": "prod1", "qmgr": "PAYROLL", "qmgr_library": "QMPAYROLL", "oldest_needed": "AMQA000010",
    "receivers_to_save": 0, "bytes_to_save": 0, "receivers_to_delete": 0, "bytes_freed": 0,
    "block_reason": None, "alerts": [], "recovery_points": POINTS,
}  # fmt: skip


def test_a_queue_manager_whose_points_disagree_shows_all_three():
    body = plan_body([planned_queue_manager(**{**QM, "alerts": ["RECOVERY_POINTS_DISAGREE"]})])
    assert f"- prod1/PAYROLL/QMPAYROLL: {POINTS}" in body
    assert "RECOVERY_POINTS_DISAGREE: AMQJRNINF and AMQ7460/AMQ7462 name different oldest needed receivers" in body


def test_a_queue_manager_blocked_by_a_time_in_the_future_shows_all_three():
    body = plan_body([planned_queue_manager(**{**QM, "block_reason": "AMQJRNINF_TIME_IN_FUTURE"})])
    assert f"- prod1/PAYROLL/QMPAYROLL: {POINTS}" in body


def test_a_queue_manager_whose_points_agree_does_not_list_them():
    assert "AMQJRNINF **********" not in plan_body([planned_queue_manager(**QM)])


def test_a_plan_without_the_column_still_renders():
    row = {k: v for k, v in QM.items() if k != "recovery_points"}
    body = plan_body([planned_queue_manager(**{**row, "alerts": ["RECOVERY_POINTS_DISAGREE"]})])
    assert "- prod1/PAYROLL/QMPAYROLL: -" in body
