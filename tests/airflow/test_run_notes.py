"""Each run's note in the grid: its outcome line, ending with the link to its report page; for the maintenance,
recovery, backup expiry and restore drill runs. And the recovery run's outcome, which names who approved or
rejected it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mqjournal.airflow import recovery
from mqjournal.airflow.approval import ANSWER_KEY, NamedApproval
from mqjournal.airflow.notes import MAX_NOTE, outcome_note
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import JournalTarget, RecoveryPlanMade
from mqjournal.recovery.execute import RecoveryResult, StepDone
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, RecoveryPlan, Request, Step
from mqjournal.reportlinks import without_report_link

RUN = "manual__2026-11-28T08:00:00+00:00"
LINK = "([run report](mqjournal/runs/{dag}/manual__2026-11-28T08%3A00%3A00%2B00%3A00/report))"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    s = Settings.from_env()
    (tmp_path / "data" / "reports").mkdir(parents=True)
    return s


@pytest.mark.parametrize(
    ("dag_id", "note_file"),
    [
        ("mq_journal_maintenance", Settings.note_file),
        ("mq_journal_recovery", Settings.recovery_note_file),
        ("mq_journal_backup_expiry", Settings.expiry_note_file),
        ("mq_journal_restore_drill", Settings.drill_note_file),
    ],
)
def test_a_runs_note_is_its_outcome_line_ending_with_the_link_to_its_report(settings, dag_id, note_file):
    note_file(settings, RUN).write_text("approved by Ana: 3 deleted, 4.0 MB freed\n")

    note = outcome_note(dag_id, RUN)

    assert note == f"approved by Ana: 3 deleted, 4.0 MB freed {LINK.format(dag=dag_id)}"
    assert without_report_link(note) == "approved by Ana: 3 deleted, 4.0 MB freed"


def test_a_long_outcome_is_shortened_and_the_link_kept_within_the_notes_limit(settings):
    settings.note_file(RUN).write_text("approved by Ana: " + "x" * 2000)

    note = outcome_note("mq_journal_maintenance", RUN)

    assert note is not None and len(note) <= MAX_NOTE
    assert note.endswith(LINK.format(dag="mq_journal_maintenance")) and "x..." in note


def test_another_dags_run_or_one_without_a_report_gets_no_note(settings):
    settings.note_file(RUN).write_text("approved by Ana")

    assert outcome_note("some_other_dag", RUN) is None
    assert outcome_note("mq_journal_recovery", RUN) is None


# --- the recovery run's outcome --------------------------------------------------------------------------------


def made() -> RecoveryPlanMade:
    at = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)
    plan = RecoveryPlan(
        request=Request(host="ibmi1", qmgr="PAYROLL", kind=RecoveryKind.STARTUP),
        created_at=at,
        qmgr_library="QMPAYROLL",
        journal="AMQAJRN",
        steps=[Step(action=Action.START_QMGR, args={"qmgr": "PAYROLL"}, why="start it")],
    )
    target = JournalTarget(
        qmgr="PAYROLL", library="QMPAYROLL", journal="AMQAJRN", instance="A", journal_queue=["QMPAYROLL", "AMQAJRNMSG"]
    )
    return RecoveryPlanMade(plan=plan, body="", executable=True, target=target, utc_offset_minutes=0)


ANA = {"id": "ana", "name": "Ana"}


def test_an_executed_recovery_names_its_approver_in_the_report_and_the_note(settings):
    plan = made()
    result = RecoveryResult(
        plan=plan.plan,
        done=[StepDone(action=Action.START_QMGR, command="STRMQM MQMNAME(PAYROLL)", outcome="done")],
        skipped=[],
    )
    approval = {"chosen_options": ["Approve"], "responded_by_user": ANA, "responded_at": "2026-11-28T08:05:00+00:00"}

    path = recovery.write_report(settings, RUN, plan, result, approval=approval, approve_state="success")

    text = Path(path).read_text()
    assert "Outcome: approved by Ana: executed: 1 step(s) run, verified" in text
    assert "Approved by Ana at 2026-11-28T08:05:00+00:00." in text
    assert settings.recovery_note_file(RUN).read_text() == "approved by Ana: executed: 1 step(s) run, verified"


def test_a_rejected_recovery_names_who_rejected_it_from_the_answer_the_gate_left(settings):
    answer = {"chosen_options": ["Reject"], "responded_by_user": ANA, "responded_at": "2026-11-28T08:05:00+00:00"}

    recovery.write_report(settings, RUN, made(), None, approval=None, approve_state="success", answer=answer)

    assert settings.recovery_note_file(RUN).read_text() == "rejected by Ana: nothing was changed"
    assert "Rejected by Ana at 2026-11-28T08:05:00+00:00." in settings.recovery_report_file(RUN).read_text()


def test_a_recovery_nobody_answered_says_so(settings):
    recovery.write_report(settings, RUN, made(), None, approval=None, approve_state="failed")

    assert settings.recovery_note_file(RUN).read_text() == (
        "not approved (no answer before the timeout, or the gate failed): nothing was changed"
    )


class _Ti:
    def __init__(self) -> None:
        self.pushed: dict[str, object] = {}

    def xcom_push(self, key: str, value: object) -> None:
        self.pushed[key] = value


def test_the_recovery_gate_leaves_who_rejected_it_before_airflow_acts_on_the_answer():
    gate = NamedApproval(task_id="approve", subject="MQ recovery", defaults=None)
    ti = _Ti()
    at = datetime(2026, 11, 28, 8, 5, tzinfo=UTC)
    event = {"chosen_options": ["Reject"], "params_input": {}, "responded_at": at, "responded_by_user": ANA}

    gate.execute_complete({"ti": ti, "task": gate}, event)

    assert ti.pushed[ANSWER_KEY] == {
        "chosen_options": ["Reject"],
        "responded_by_user": ANA,
        "responded_at": "2026-11-28T08:05:00+00:00",
    }
