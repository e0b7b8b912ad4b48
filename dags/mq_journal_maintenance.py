"""mq_journal_maintenance: checkpoint -> collect -> plan -> save (and copy off) -> approval -> delete -> report.

The runbook of MQ journal housekeeping on IBM i, for a fleet. Saves run before the approval gate because they are
safe: each save file is copied into the backup store, and after `keep_on_host_days` the cleanup removes it from the
partition, once its copy verifies again. Deletes run only after an admin approves, and each re-checks its live
partition (and the store) first. Rerunning any task, or
the whole run, repeats nothing that was done and loses nothing.

A run is green only when it did all it promised, or a person chose less (rejected: the deletes are skipped, pink). A
copy into the backup store that failed, a delete refused for lack of a proven backup, a queue manager not found:
the step that left it ends red, and so does the run, whose note says what and why and links the run's report
(docs/run-states.md). One run at a time: a run triggered while another runs (or waits at its gate) is queued until
that one ends.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.operators.trigger_dagrun import TriggerDagRunOperator
from airflow.sdk import Param, TriggerRule, XComArg, dag, task
from airflow.sdk.exceptions import AirflowSkipException

from mqjournal.airflow import linuxwork, oncall
from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.approval import QueueManagerApproval, approved_keys, approvers
from mqjournal.airflow.forms import fleet_choices
from mqjournal.airflow.hostwork import LABEL, host_batches, labelled, returned
from mqjournal.airflow.notify import GateWaiting
from mqjournal.airflow.settings import settings
from mqjournal.airflow.xcom import HostBatch, LinuxTarget, Pulled, RunPlan
from mqjournal.backupstore import BackupStore
from mqjournal.names import OBJECT_NAME_PATTERN
from mqjournal.policy import Policy
from mqjournal.space import DATA_COMPRESSION_VALUES
from mqjournal.undone import delete_left_undone, save_left_undone


def _policy_max(field: str) -> float:
    """The policy's own upper bound for a field, so the form and the policy refuse the same values."""
    return next(m.le for m in Policy.model_fields[field].metadata if getattr(m, "le", None) is not None)


def _policy(params: dict[str, Any]) -> Policy:
    return Policy(
        retention_days=params["retention_days"],
        keep_min_receivers=params["keep_min_receivers"],
        keep_on_host_days=params["keep_on_host_days"],
        backup=params["backup"],
        site_save_min_age_hours=params["site_save_min_age_hours"],
        # A run triggered before the parameter existed has none: the policy's default.
        save_compression=params.get("save_compression") or Policy.model_fields["save_compression"].default,
    )


def _gate_body(context: Any, summary: RunPlan) -> str:
    s = settings()
    store = BackupStore.from_settings(s)
    run_id = context["run_id"]
    saves = context["ti"].xcom_pull(task_ids="save")
    return steps.gate_body(
        s.plan_dir(run_id),
        summary,
        store,
        _policy(context["params"]),
        saves=saves,
        run_id=run_id,
        linux_archives=context["ti"].xcom_pull(task_ids="linux_archive"),
    )


@dag(
    dag_id="mq_journal_maintenance",
    schedule=settings().schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    # SparkSubmitOperator's application_args come from XCom as a list, not as its text.
    render_template_as_native_obj=True,
    tags=["mq", "ibmi", "journal"],
    doc_md=__doc__,
    params={
        "hosts": Param(
            [],
            type="array",
            items={"type": "string"},
            examples=fleet_choices(settings()).hosts,
            title="Hosts",
            description="empty: every host of the fleet file",
        ),
        "queue_managers": Param(
            [],
            type="array",
            items={"type": "string"},
            examples=fleet_choices(settings()).pairs,
            title="Queue managers",
            description="host/QMGR pairs of the fleet file (a bare QMGR: that name on every selected host); "
            "empty: every queue manager of the selected hosts",
        ),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="plan only, changing nothing on any partition: it reads the QSYS2 SQL services "
            "(JOURNAL_RECEIVER_INFO, MESSAGE_QUEUE_INFO, ASP_INFO) and the user space AMQJRNINF, and sends no CHGJRN, "
            "no RCDMQMIMG, no save and no delete; AMQJRNINF and AMQ7460/AMQ7462 are then as of MQ's last checkpoint",
        ),
        "change_receiver": Param(
            True, type="boolean", title="Change receiver first", description="CHGJRN JRNRCV(*GEN) before the checkpoint"
        ),
        "retention_days": Param(
            0,
            type="number",
            minimum=0,
            maximum=_policy_max("retention_days"),
            title="Retention (days)",
            description="keep not-needed receivers online this long after detach (at most 3660: 10 years)",
        ),
        "keep_min_receivers": Param(
            0,
            type="integer",
            minimum=0,
            maximum=_policy_max("keep_min_receivers"),
            title="Keep at least N not-needed receivers",
            description="at most 100000",
        ),
        "keep_on_host_days": Param(
            Policy.model_fields["keep_on_host_days"].default,
            type="number",
            minimum=0,
            maximum=_policy_max("keep_on_host_days"),
            title="Keep save files on the partition (days)",
            description="after this, a save file whose copy in the backup store verifies is deleted from the "
            "partition (at most 3660: 10 years)",
        ),
        "backup": Param(
            Policy.model_fields["backup"].default,
            type="string",
            enum=["mqjournal", "site"],
            title="Who saves the receivers",
            description="mqjournal: saved here and copied to the backup store; site: the site's own backup (BRMS, "
            "SAVLIB) saves them and mqjournal only deletes what IBM i shows saved (docs/site-backup.md)",
        ),
        "save_compression": Param(
            Policy.model_fields["save_compression"].default,
            type="string",
            enum=list(DATA_COMPRESSION_VALUES),
            title="Data compression of the saves (DTACPR)",
            description="*LOW (the default) about halves the save files for about twice the save's time; *MEDIUM "
            "and *HIGH make them smaller still, at much more of the partition's CPU; *NO: none "
            "(docs/ibmi-interfaces.md)",
        ),
        "site_save_min_age_hours": Param(
            Policy.model_fields["site_save_min_age_hours"].default,
            type="number",
            minimum=0,
            maximum=_policy_max("site_save_min_age_hours"),
            title="Site backup: hours a save must be old",
            description="backup: site deletes a receiver only once its save is this old (at most 8760: a year)",
        ),
        "save_library": Param(
            "QGPL",
            type="string",
            pattern=f"^{OBJECT_NAME_PATTERN}$",
            title="Save file library",
            description="QGPL or a library of your own; "
            "not the queue manager's library, QTEMP or another IBM library (Q...)",
        ),
        "approval_hours": Param(
            settings().approval.maintenance_hours,
            type="number",
            minimum=0.01,
            maximum=168,
            title="Hours to wait for approval",
            description="no answer in this time fails the gate and deletes nothing (at most 168: a week)",
        ),
    },
)
def mq_journal_maintenance():
    # Each SSH step is idempotent, so a retry after a dropped connection repeats nothing that was done.
    tasks = settings().tasks
    # A batch task holds a pool slot per SSH session it may open, so the pool caps sessions fleet-wide.
    ssh = tasks.ssh_task(sessions=settings().sessions_per_task)

    @task(pool=tasks.ssh_pool)
    def preflight(params=None) -> dict[str, Any]:
        """`mqjournal doctor` for hosts never collected before: a host that is not ready stops the run here."""
        return steps.preflight(settings(), params["hosts"], params["save_library"]).to_xcom()

    @task
    def select_targets(params=None) -> list[dict[str, Any]]:
        """The run's queue managers, in batches of hosts: one mapped instance per batch (hostwork.host_batches)."""
        targets = steps.select_targets(settings(), params["hosts"], params["queue_managers"])
        return [b.to_xcom() for b in host_batches(targets.targets, tasks.max_mapped_tasks, targets.not_found)]

    @task
    def select_linux(params=None) -> list[dict[str, Any]]:
        """The run's Linux queue managers (#32): the fleet file's, narrowed by the form."""
        targets = linuxwork.select(settings(), params["hosts"], params["queue_managers"])
        return [t.to_xcom() for t in targets]

    @task(**ssh)
    def linux_collect(targets: Pulled, params=None, run_id=None) -> list[str]:
        """Media images where the host's policy says so, then each Linux queue manager's log state (DISPLAY QMSTATUS
        TYPE(LOG), the extents of its log directory) into this run's Linux snapshots."""
        done = linuxwork.collect(settings(), LinuxTarget.list_from_xcom(targets), run_id, dry_run=params["dry_run"])
        return linuxwork.returned(done, "collect")

    @task(**ssh, map_index_template=LABEL)
    def checkpoint_and_collect(batch: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        hosts = labelled(HostBatch.from_xcom(batch))
        done = steps.collect_batch(settings(), hosts, run_id, params["change_receiver"], dry_run=params["dry_run"])
        return returned(done, hosts, "checkpoint and collect")

    # With a Spark Connect connection the plan is a session on that standing server (no JVM started per run);
    # without, a spark-submit through the Spark connection.
    # A run of Linux hosts only maps its IBM i collect over nothing (skipped): the plan still runs; a failed collect
    # of either platform still stops it.
    @task.pyspark(
        task_id="plan", conn_id=settings().spark_connect_conn_id, trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS
    )
    def plan_on_spark_connect(snapshot_files: Pulled, spark=None, params=None, run_id=None) -> None:
        steps.plan_in_session(spark, settings(), run_id, _policy(params))

    @task(trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    def plan_submission(snapshot_files: Pulled, params=None, run_id=None) -> dict[str, Any]:
        s = settings()
        # The hook resolves the master from the connection exactly as the operator will (no public accessor).
        master = SparkSubmitHook(conn_id=s.spark_conn_id)._connection["master"]
        return steps.plan_submission(s, run_id, _policy(params), master).to_xcom()

    @task
    def summarize(batches: Pulled, linux_targets: Pulled, params=None, run_id=None) -> dict[str, Any]:
        run = [t for b in HostBatch.list_from_xcom(batches) for t in b.targets]
        s = settings()
        collected = oncall.run_snapshots(s, run_id)
        summary = steps.summarize(s.plan_dir(run_id), run, _policy(params), snapshots=s.snapshots, collected=collected)
        linux = linuxwork.planned(s, run_id, LinuxTarget.list_from_xcom(linux_targets))
        return linuxwork.with_linux(summary, linux).to_xcom()

    @task.branch
    def gate(summary: Pulled, params=None) -> list[str] | str:
        if params["dry_run"]:
            return "report"
        then = "approve" if RunPlan.from_xcom(summary).anything_to_delete else "report"
        return ["save", "linux_archive", then]

    @task(**ssh, map_index_template=LABEL)
    def save(batch: Pulled, summary: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        hosts = labelled(HostBatch.from_xcom(batch))
        plan = RunPlan.from_xcom(summary)
        done = steps.save_batch(settings(), hosts, plan, run_id, params["save_library"], _policy(params))
        return returned(done, hosts, "save and copy to the backup store", undone=save_left_undone)

    @task(**ssh)
    def linux_archive(summary: Pulled, run_id=None) -> list[dict[str, Any]]:
        """Before the gate, as the saves: each extent the plan archives copied into the backup store, its bytes
        vouched for by the host's SHA-256, and catalogued. Safe: it changes nothing on the host."""
        done = linuxwork.archive(settings(), RunPlan.from_xcom(summary), run_id)
        return linuxwork.returned(done, "archive")

    @task(**ssh, map_index_template=LABEL)
    def clean_up(batch: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        hosts = labelled(HostBatch.from_xcom(batch))
        return returned(steps.clean_up_batch(settings(), hosts, run_id, _policy(params)), hosts, "clean up")

    # One option per queue manager with receivers to delete, several at once, none preselected; no answer in the
    # form's hours fails the gate and deletes nothing (QueueManagerApproval). Its body is made when it opens, after
    # the saves, so that it shows what the backup store holds now, and warns of what they left undone: it opens
    # after a failed save too (ALL_DONE_MIN_ONE_SUCCESS, the branch being the success), since each delete re-checks
    # its proof on the live host and a store outage on one host must not hold the fleet's deletes.
    approve = QueueManagerApproval(
        task_id="approve",
        trigger_rule=TriggerRule.ALL_DONE_MIN_ONE_SUCCESS,
        subject="Delete MQ journal receivers ({{ run_id }})",
        summary_task_id="summarize",
        timeout_param="approval_hours",
        make_body=_gate_body,
        notifiers=[GateWaiting(subject="mq_journal_maintenance {{ run_id }}: approval waiting")],
        assigned_users=approvers(settings().approval),
    )

    @task(**ssh, map_index_template=LABEL)
    def delete(batch: Pulled, summary: Pulled, approval: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        hosts = labelled(HostBatch.from_xcom(batch))
        plan = RunPlan.from_xcom(summary)
        chosen = approved_keys(plan, approval)  # type: ignore[arg-type]  # the gate's XCom dict
        done = steps.delete_batch(settings(), hosts, plan, chosen, run_id, _policy(params))
        if done is None:
            raise AirflowSkipException(f"{hosts.label}: no queue manager chosen at the approval gate, nothing deleted")
        return returned(done, hosts, "delete", undone=delete_left_undone)

    @task(**ssh)
    def linux_release(summary: Pulled, approval: Pulled, run_id=None) -> list[dict[str, Any]]:
        """After the gate, for the Linux queue managers chosen there: the live queue manager re-read and re-planned,
        then SET LOG ARCHIVED (Archive mode) or the file deleted (Manual mode), each extent only with a copy proven
        now."""
        plan = RunPlan.from_xcom(summary)
        chosen = approved_keys(plan, approval)  # type: ignore[arg-type]  # the gate's XCom dict
        done = linuxwork.release(settings(), plan, chosen, run_id)
        if done is None:
            raise AirflowSkipException("no Linux queue manager chosen at the approval gate, nothing released")
        return linuxwork.returned(done, "release")

    @task(trigger_rule=TriggerRule.ALL_DONE)
    def report(params=None, run_id=None, ti=None) -> str:
        states = ti.get_task_states(dag_id=ti.dag_id, task_ids=["approve"], run_ids=[run_id])
        approve_state = (states.get(run_id) or {}).get("approve")
        steps.report(
            settings(),
            run_id,
            dry_run=params["dry_run"],
            summary=ti.xcom_pull(task_ids="summarize"),
            saves=ti.xcom_pull(task_ids="save"),
            deletes=ti.xcom_pull(task_ids="delete"),
            cleanups=ti.xcom_pull(task_ids="clean_up"),
            batches=ti.xcom_pull(task_ids="select_targets"),
            approval=ti.xcom_pull(task_ids="approve"),
            approve_state=str(approve_state) if approve_state else None,
            linux_archives=ti.xcom_pull(task_ids="linux_archive"),
            linux_releases=ti.xcom_pull(task_ids="linux_release"),
        )
        return str(settings().report_file(run_id))

    @task(trigger_rule=TriggerRule.ALL_DONE)
    def on_call(params=None, run_id=None, ti=None) -> list[dict[str, Any]]:
        """A queue manager that cannot start (AMQ7432, or a receiver MQ needs gone): the alert in this log, and its
        recovery to trigger, so that its plan already waits at the recovery DAG's gate (mqjournal.airflow.oncall)."""
        state_of = oncall.recovery_run_state(ti)
        alerts, chosen = oncall.on_call(settings(), run_id, state_of, dry_run=params["dry_run"])
        # The alerts' sentences, dry run included, for the report and the run's note to show (key "alerts").
        ti.xcom_push(key=oncall.ALERTS_KEY, value=alerts)
        return [t.to_kwargs() for t in chosen]

    # One recovery run per queue manager that cannot start; an incident's run id is fixed, so a rerun skips it.
    trigger_recovery = TriggerDagRunOperator.partial(
        task_id="trigger_recovery",
        trigger_dag_id=oncall.RECOVERY_DAG,
        logical_date=None,
        skip_when_already_exists=True,
        map_index_template="{{ task.conf['host'] }}/{{ task.conf['qmgr'] }} {{ task.conf['kind'] }}",
    )

    @task(trigger_rule=TriggerRule.ONE_FAILED, retries=0)
    def failed_steps() -> None:
        """Fails the run when any step failed. The report runs whatever happened (ALL_DONE), and a run whose leaves
        all succeeded shows as a success: without this leaf a preflight refusal would show green."""
        raise RuntimeError("a step of this run failed: its log says why; the report says what was done")

    batches = select_targets()
    ready = preflight()
    ready >> batches
    linux_targets = select_linux()
    batches >> linux_targets  # the IBM i selection checks the form's names against both platforms first
    collected = checkpoint_and_collect.expand(batch=batches)
    linux_collected = linux_collect(linux_targets)
    stuck = on_call()
    collected >> stuck
    triggered = trigger_recovery.expand_kwargs(stuck)
    plan: XComArg | SparkSubmitOperator
    if settings().spark_connect_conn_id:
        submission = plan = plan_on_spark_connect(collected)
    else:
        submission = plan_submission(collected)
        plan = SparkSubmitOperator(
            task_id="plan",
            conn_id=settings().spark_conn_id,
            application=str(settings().spark_app),
            # Templates, rendered to the list and dicts at run time (render_template_as_native_obj).
            application_args="{{ ti.xcom_pull(task_ids='plan_submission')['args'] }}",  # type: ignore[arg-type]
            py_files="{{ ti.xcom_pull(task_ids='plan_submission')['py_files'] }}",
            env_vars="{{ ti.xcom_pull(task_ids='plan_submission')['env'] }}",  # type: ignore[arg-type]
            conf="{{ ti.xcom_pull(task_ids='plan_submission')['conf'] }}",  # type: ignore[arg-type]
            name="mq-journal-plan",
        )
        submission >> plan
    linux_collected >> submission
    summary = summarize(batches, linux_targets)
    plan >> summary
    branch = gate(summary)
    saved = save.partial(summary=summary).expand(batch=batches)
    deleted = delete.partial(summary=summary, approval=approve.output).expand(batch=batches)
    cleaned = clean_up.expand(batch=batches)
    archived = linux_archive(summary)
    released = linux_release(summary, approve.output)
    branch >> [saved, archived, approve]
    # The gate opens once the saves are done, failed or not: its body then counts their copies in the backup store
    # and names what a failed save or copy leaves undeletable. The deletes wait for the gate alone, so that an
    # approval is carried out after a failed save too; they need its answer, and a proven backup of each receiver.
    [saved, archived] >> approve >> [deleted, released]
    saved >> cleaned
    reported = report()
    [summary, saved, deleted, cleaned, archived, released] >> reported
    steps_that_fail = [ready, batches, collected, submission, plan, summary, branch, saved, approve, deleted, cleaned]
    steps_that_fail += [linux_targets, linux_collected, archived, released]
    [*steps_that_fail, stuck, triggered, reported] >> failed_steps()


mq_journal_maintenance()
