"""What an admin reads at the approval gate and in the run report."""

from __future__ import annotations

from mqjournal.airflow.maintenance import outcome
from mqjournal.airflow.xcom import DeleteOutcome, PlanSummary
from mqjournal.report import plan_body

QM = {
    "host": "prod1",
    "qmgr": "PAYROLL",
    "qmgr_library": "QMPAYROLL",
    "oldest_needed": "AMQA000024",
    "receivers_to_save": 3,
    "bytes_to_save": 3 * 1024**2,
    "receivers_to_delete": 2,
    "bytes_freed": 2 * 1024**2,
    "block_reason": None,
    "alerts": ["STARTUP_RECOVERY_STUCK"],
}


def test_the_gate_body_lists_each_queue_manager_its_deletes_and_what_its_alerts_mean():
    body = plan_body(
        [QM],
        {"prod1/PAYROLL/QMPAYROLL": ["AMQA000022", "AMQA000023"]},
        {"prod1/PAYROLL/QMPAYROLL": ["AMQA000022", "AMQA000023"]},
    )
    assert "**2 receivers to delete, 2.0 MB to free, -1.0 MB net**" in body
    assert (
        "| prod1 | PAYROLL | QMPAYROLL | AMQA000024 | 3 (3.0 MB) | 2 | 2.0 MB | -1.0 MB | - | no "
        "| STARTUP_RECOVERY_STUCK |" in body
    )
    assert "prod1/PAYROLL/QMPAYROLL: AMQA000022, AMQA000023" in body
    assert "open unit of work" in body


def test_the_gate_shows_what_each_queue_manager_has_in_the_backup_store():
    body = plan_body([{**QM, "store_bytes": 5 * 1024**2}], {}, {})
    assert "| 2.0 MB | -1.0 MB | 5.0 MB | no |" in body


def test_a_blocked_queue_manager_shows_why():
    body = plan_body([{**QM, "block_reason": "SNAPSHOT_STALE", "receivers_to_delete": 0}], {}, {})
    assert "| SNAPSHOT_STALE |" in body


def test_the_report_says_who_decided_what():
    summary = PlanSummary(anything_to_delete=True)
    approved = {"chosen_options": ["Approve"], "responded_by_user": {"id": "u1", "name": "Ana"}}
    rejected = {"chosen_options": ["Reject"], "responded_by_user": {"id": "u2", "name": "Bo"}}
    assert (
        outcome(False, summary, approved, [DeleteOutcome(target="prod1/PAYROLL/QMPAYROLL", deleted=["A", "B"])])
        == "approved by Ana: 2 receivers deleted"
    )
    assert outcome(False, summary, rejected, []) == "rejected by Bo: nothing was deleted"
    assert outcome(False, summary, None, []).startswith("not approved")
    assert (
        outcome(False, summary, None, [], approve_state="success")
        == "rejected at the approval gate: nothing was deleted"
    )
    assert outcome(True, summary, None, []).startswith("dry run")
    assert outcome(False, PlanSummary(anything_to_delete=False), None, []).startswith("nothing to delete")
    assert outcome(False, None, None, []).startswith("failed before a plan")


def test_mapped_results_are_always_a_list():
    from mqjournal.airflow.maintenance import mapped_results

    assert mapped_results(None) == []
    assert mapped_results({"deleted": ["A"]}) == [{"deleted": ["A"]}]
    assert mapped_results([{"deleted": ["A"]}, None]) == [{"deleted": ["A"]}]
