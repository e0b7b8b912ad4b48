"""The restore drill DAG's steps on a simulated partition over SSH: the proposal is the sampling rule's, an approved
one drills each copy through the task's own SSH session (connection, lease, audit), and the report and the run's
note say what came out; a failed drill fails the report task, so the run is red."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal.airflow import drill as steps
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.executor import Executor
from tests.conftest import SimFleet
from tests.ibmi.executing import planned


@pytest.fixture
def copied(sim_fleet: SimFleet, settings: Settings) -> str:
    """TEST's receivers saved and copied into the settings' backup store: the copy's key."""
    sim_fleet.host().advance(timedelta(hours=3))
    with host_session(settings, "ibmi1") as session:
        found = survey(session, "ibmi1", [])
        (target,) = found.targets
        catalog, store = Catalog(settings.catalog_url), BackupStore.from_settings(settings)
        executor = Executor(session, target, "ibmi1", found.tz, catalog, "run1", store)
        to_save, _ = planned(executor)
        (key,) = executor.save(to_save, save_library="QGPL").copied
    return key


APPROVED = {"chosen_options": ["Approve"], "responded_by_user": {"name": "admin"}}


def test_an_approved_drill_passes_and_its_report_and_note_say_so(sim_fleet: SimFleet, settings: Settings, copied):
    proposal = steps.propose(settings)
    assert proposal["keys"] == [copied] and proposal["anything"]
    assert copied in proposal["body"] and "DRLnnnnnnn" in proposal["body"]
    assert steps.next_after_proposal(proposal) == "approve"

    results = steps.execute(settings, proposal["keys"], "drill-run-1")

    assert [(r["key"], r["outcome"], r["scratch_left"]) for r in results] == [(copied, "passed", None)]
    text = steps.report(
        settings, "drill-run-1", proposal=proposal, results=results, approval=APPROVED, approve_state="success"
    )
    assert "Outcome: approved by admin: 1 copy drilled, 1 passed" in text
    assert settings.drill_report_file("drill-run-1").read_text() == text
    assert settings.drill_note_file("drill-run-1").read_text() == "approved by admin: 1 copy drilled, 1 passed"
    with sim_fleet.host().lock:
        assert not [k for k in sim_fleet.host().partition.save_files if "/DRL" in k]
    # Drilled just now: nothing is due in the next run.
    assert steps.propose(settings)["anything"] is False


def test_a_failed_drill_is_named_in_the_report_and_fails_the_report_task(sim_fleet, settings: Settings, copied):
    store = BackupStore.from_settings(settings)
    path = Path(store.root) / copied
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    proposal = steps.propose(settings)
    results = steps.execute(settings, proposal["keys"], "drill-run-2")

    with pytest.raises(steps.DrillsFailed, match=re.escape(copied)):
        steps.report(
            settings, "drill-run-2", proposal=proposal, results=results, approval=APPROVED, approve_state="success"
        )

    note = settings.drill_note_file("drill-run-2").read_text()
    assert note == f"approved by admin: 1 copy drilled, 0 passed, 1 FAILED ({copied})"
    assert f"FAILED: {copied}" in settings.drill_report_file("drill-run-2").read_text()


def test_nothing_is_drilled_without_an_approval():
    proposal = {"keys": ["k"], "body": "", "anything": True}
    assert steps.outcome_line(proposal, None, [], "success") == "rejected at the approval gate: nothing was drilled"
    rejected = {"chosen_options": ["Reject"], "responded_by_user": {"name": "ops"}}
    assert steps.outcome_line(proposal, rejected, []) == "rejected by ops: nothing was drilled"
    assert steps.next_after_proposal({"keys": [], "body": "", "anything": False}) is None
    assert steps.outcome_line({"anything": False}, None, []) == (
        "no stored copy is due for a restore drill: nothing to approve"
    )
