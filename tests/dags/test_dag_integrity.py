"""The DAG files parse cleanly and do no work at import time."""

from __future__ import annotations

import ast
from pathlib import Path

from airflow.dag_processing.dagbag import DagBag
from airflow.providers.standard.operators.hitl import ApprovalOperator

DAGS = Path(__file__).resolve().parents[2] / "dags"


def test_the_dag_folder_imports_without_errors():
    bag = DagBag(dag_folder=str(DAGS))
    assert bag.import_errors == {}
    assert "mq_journal_maintenance" in bag.dags


def test_dag_files_do_nothing_at_module_level_but_define_and_call_their_dag():
    """Only imports, constants, function definitions and the DAG call may stand at the top of a DAG file."""
    for path in DAGS.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AnnAssign)
            is_docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            is_dag_call = isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.args
            assert isinstance(node, allowed) or is_docstring or is_dag_call, (
                f"{path.name}:{node.lineno} does work at import"
            )
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                assert not any(isinstance(n, ast.Call) for n in ast.walk(node)), (
                    f"{path.name}:{node.lineno} calls at import"
                )


def test_the_maintenance_dag_runs_the_runbook_in_order():
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_maintenance"]
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    assert "plan" in upstream["summarize"]
    # The deletes wait for the gate alone, which waits for every save, failed or not: a failed save or copy on one
    # host holds neither the gate nor the other hosts' deletes, and each delete re-checks its proof on the host.
    assert "approve" in upstream["delete"] and "save" not in upstream["delete"]
    assert dag.task_dict["approve"].trigger_rule == "all_done_min_one_success"
    assert upstream["clean_up"] == {"save", "select_targets"} and "clean_up" in upstream["report"]
    gate = dag.task_dict["approve"]
    # No preselected answer (no defaults) and no answer on timeout: the gate fails, nothing is deleted.
    assert gate.__class__.__name__ == "QueueManagerApproval" and gate.defaults is None and gate.multiple
    # The gate opens after the saves and makes its body then, so it counts their copies in the backup store.
    assert "save" in upstream["approve"] and gate.make_body is not None
    assert dag.task_dict["checkpoint_and_collect"].pool == "mqjournal_ssh"
    assert "preflight" in upstream["select_targets"]
    # The report runs whatever happened, so one leaf watches every step: a failed step fails the run.
    watched = set(dag.task_dict) - {"failed_steps"}
    assert upstream["failed_steps"] == watched and dag.task_dict["failed_steps"].trigger_rule == "one_failed"


def test_the_maintenance_run_triggers_the_recovery_of_a_queue_manager_that_cannot_start_once_per_incident():
    from mqjournal.airflow.notify import GateWaiting

    bag = DagBag(dag_folder=str(DAGS))
    dag = bag.dags["mq_journal_maintenance"]
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    assert upstream["on_call"] == {"checkpoint_and_collect"} and dag.task_dict["on_call"].trigger_rule == "all_done"
    trigger = dag.task_dict["trigger_recovery"]
    assert trigger.__class__.__name__ == "MappedOperator" and upstream["trigger_recovery"] == {"on_call"}
    assert trigger.partial_kwargs["trigger_dag_id"] == "mq_journal_recovery"
    # A rerun, or the next run on the same incident, finds the recovery run of that id and skips it.
    assert trigger.partial_kwargs["skip_when_already_exists"] is True
    # The restore plan waits at its gate with the notifier, so the on-call engineer is told.
    gate = bag.dags["mq_journal_recovery"].task_dict["approve"]
    assert any(isinstance(n, GateWaiting) for n in gate.notifiers)


def test_the_recovery_dag_plans_then_waits_for_approval_before_it_executes():
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_recovery"]
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    assert upstream["gate"] == {"plan"}
    assert "approve" in upstream["execute"] and upstream["approve"] == {"gate"}
    # An ApprovalOperator that leaves its answer in XCom before acting on it, so the report names who rejected.
    assert dag.task_dict["approve"].__class__.__name__ == "NamedApproval"
    assert dag.task_dict["execute"].pool == "mqjournal_ssh"
    assert dag.schedule is None or str(dag.timetable.summary) in ("None", "")
    assert set(dag.params.get_param("kind").schema["enum"]) == {"startup", "media", "library", "naming", "expiry"}


def test_the_backup_expiry_dag_runs_weekly_and_deletes_only_after_approval():
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_backup_expiry"]
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    assert dag.timetable.expression == "0 5 * * 0"  # Sunday 05:00, after the maintenance window
    assert upstream["plan"] == {"select_targets"} and upstream["summarize"] == {"plan"}
    assert upstream["gate"] == {"summarize"} and upstream["approve"] == {"gate"}
    assert upstream["execute"] == {"approve", "plan"}
    # Airflow's ApprovalOperator that leaves its answer before Airflow acts on it: the report names who rejected.
    assert dag.task_dict["approve"].__class__.__name__ == "NamedApproval"
    assert isinstance(dag.task_dict["approve"], ApprovalOperator)
    assert dag.task_dict["approve"].response_timeout.total_seconds() == 24 * 3600
    assert dag.task_dict["plan"].pool == "mqjournal_ssh" and dag.task_dict["execute"].pool == "mqjournal_ssh"
    assert dag.task_dict["execute"].retries == 0
    assert dag.task_dict["report"].trigger_rule == "all_done" and "execute" in upstream["report"]
    assert upstream["scrub_store"] == {"execute"} and dag.task_dict["scrub_store"].trigger_rule == "all_done"
    watched = set(dag.task_dict) - {"failed_steps"}
    assert upstream["failed_steps"] == watched and dag.task_dict["failed_steps"].trigger_rule == "one_failed"
    assert {"hosts", "queue_managers", "dry_run", "keep_library_saves", "backup_retention_days"} <= set(dag.params)


def test_the_backup_expiry_schedule_is_a_setting(monkeypatch):
    from mqjournal.airflow.settings import Settings

    monkeypatch.setenv("MQJOURNAL_EXPIRY_SCHEDULE", "0 6 1 * *")
    assert Settings.from_env().expiry_schedule == "0 6 1 * *"
    monkeypatch.setenv("MQJOURNAL_EXPIRY_SCHEDULE", "")
    assert Settings.from_env().expiry_schedule is None


def test_the_restore_drill_dag_drills_only_after_approval_and_reports_whatever_happened():
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_restore_drill"]
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    assert dag.timetable.expression == "0 6 * * 0"  # Sunday 06:00, after the backup expiry
    assert upstream["gate"] == {"propose"} and upstream["approve"] == {"gate"}
    assert upstream["drill"] == {"approve", "propose"}
    assert dag.task_dict["approve"].__class__.__name__ == "ApprovalOperator"
    assert dag.task_dict["drill"].pool == "mqjournal_ssh" and dag.task_dict["drill"].retries == 0
    assert dag.task_dict["report"].trigger_rule == "all_done" and upstream["report"] == {"propose", "drill"}


def test_the_restore_drill_settings_have_their_defaults_and_are_read_from_the_environment(monkeypatch):
    from mqjournal.airflow.settings import Settings

    drill = Settings.from_env().drill
    assert (drill.copies_per_run, drill.max_gib_per_run, drill.every_days, drill.library) == (2, 8.0, 90.0, "QGPL")
    monkeypatch.setenv("MQJOURNAL_DRILL_COPIES_PER_RUN", "5")
    monkeypatch.setenv("MQJOURNAL_DRILL_SCHEDULE", "")
    drill = Settings.from_env().drill
    assert drill.copies_per_run == 5 and drill.schedule is None


def test_with_a_spark_connect_connection_the_plan_is_a_session_on_that_server(monkeypatch):
    monkeypatch.setenv("MQJOURNAL_SPARK_CONNECT_CONN_ID", "plan_server")
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_maintenance"]
    plan = dag.task_dict["plan"]
    assert plan.__class__.__name__ == "_PySparkDecoratedOperator" and plan.conn_id == "plan_server"
    assert "plan_submission" not in dag.task_dict
    upstream = {t.task_id: set(t.upstream_task_ids) for t in dag.tasks}
    # Both platforms' collections (#32) come before the plan.
    assert upstream["plan"] == {"checkpoint_and_collect", "linux_collect"} and "plan" in upstream["summarize"]


def test_without_one_the_plan_is_a_spark_submit_through_the_spark_connection(monkeypatch):
    monkeypatch.delenv("MQJOURNAL_SPARK_CONNECT_CONN_ID", raising=False)
    dag = DagBag(dag_folder=str(DAGS)).dags["mq_journal_maintenance"]
    assert dag.task_dict["plan"].__class__.__name__ == "SparkSubmitOperator"
    assert {t.task_id for t in dag.task_dict["plan"].upstream_list} == {"plan_submission"}


GATES = {
    "mq_journal_maintenance": None,  # no answer in time fails the gate: nothing runs, nothing is preselected
    "mq_journal_recovery": None,
    "mq_journal_backup_expiry": None,
    "mq_journal_restore_drill": None,
}


def test_every_approval_gate_may_be_answered_by_anyone_unless_approvers_are_set():
    bag = DagBag(dag_folder=str(DAGS))
    for dag_id in GATES:
        assert bag.dags[dag_id].task_dict["approve"].assigned_users is None, dag_id


def test_every_approval_gate_is_answered_only_by_the_approvers_set_and_declares_its_answer_on_silence(monkeypatch):
    monkeypatch.setenv("MQJOURNAL_APPROVAL_APPROVERS", "alice, bob")
    bag = DagBag(dag_folder=str(DAGS))
    for dag_id, default in GATES.items():
        gate = bag.dags[dag_id].task_dict["approve"]
        assert gate.assigned_users == [{"id": "alice", "name": "alice"}, {"id": "bob", "name": "bob"}], dag_id
        assert gate.defaults == default, dag_id
