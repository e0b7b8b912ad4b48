"""mq_journal_backup_expiry: select -> plan expiry per batch of hosts -> summary -> approval -> delete -> report.

The retention policy applied to the backups: per queue manager, every save a restore could still need is kept (from
the oldest receiver the live queue manager needs, AMQJRNINF / AMQ7460 / AMQ7462, back to the oldest library save the
policy keeps), and the policy's days; the rest is proposed for deletion, by the same planner as
`mqjournal recover --kind expiry`. Nothing is deleted before an admin approves. Then each plan is made again on its
live partition (a plan that went stale deletes nothing), the save files are deleted (DLTF) and recorded discarded in
the catalog, and only then are their copies deleted from the backup store. As in mq_journal_maintenance, the SSH
steps are mapped over batches of hosts (at most MQJOURNAL_TASK_MAX_MAPPED_TASKS instances), each queue manager named
in the logs, the gate and the report. Last, `scrub_store` reads again the backup store's copies that are due
(docs/backup-store.md) and fails when one no longer matches its recorded digest.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import Param, TriggerRule, dag, task

from mqjournal.airflow import expiry as steps
from mqjournal.airflow import maintenance
from mqjournal.airflow.approval import ANSWER_KEY, NamedApproval, approvers
from mqjournal.airflow.hostwork import LABEL, host_batches, labelled, returned
from mqjournal.airflow.settings import settings
from mqjournal.airflow.xcom import ExpirySummary, HostBatch, Pulled
from mqjournal.policy import Policy


def _policy_field(field: str, bound: str) -> float:
    """The policy's own default or upper bound for a field, so the form and the policy agree."""
    if bound == "default":
        return Policy.model_fields[field].default
    return next(m.le for m in Policy.model_fields[field].metadata if getattr(m, "le", None) is not None)


def _policy(params: dict[str, Any]) -> Policy:
    return Policy(
        keep_library_saves=params["keep_library_saves"], backup_retention_days=params["backup_retention_days"]
    )


@dag(
    dag_id="mq_journal_backup_expiry",
    schedule=settings().expiry_schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["mq", "ibmi", "journal", "backup"],
    doc_md=__doc__,
    params={
        "hosts": Param(
            [], type="array", items={"type": "string"}, title="Hosts", description="empty: every host of the fleet file"
        ),
        "queue_managers": Param(
            [], type="array", items={"type": "string"}, title="Queue managers", description="empty: all"
        ),
        "dry_run": Param(False, type="boolean", title="Dry run", description="propose only: nothing is deleted"),
        "keep_library_saves": Param(
            _policy_field("keep_library_saves", "default"),
            type="integer",
            minimum=1,
            maximum=_policy_field("keep_library_saves", "max"),
            title="Keep the newest N library saves",
            description="and every receiver save a restore of them needs (at least 1)",
        ),
        "backup_retention_days": Param(
            _policy_field("backup_retention_days", "default"),
            type="number",
            minimum=0,
            maximum=_policy_field("backup_retention_days", "max"),
            title="Keep every backup younger than (days)",
            description="no save file holding a save younger than this is deleted, needed or not (at most 3660)",
        ),
    },
)
def mq_journal_backup_expiry():
    tasks = settings().tasks

    @task
    def select_targets(params=None) -> list[dict[str, Any]]:
        """The run's queue managers, in batches of hosts: one mapped instance per batch (hostwork.host_batches)."""
        targets = maintenance.select_targets(settings(), params["hosts"], params["queue_managers"])
        return [b.to_xcom() for b in host_batches(targets.targets, tasks.max_mapped_tasks, targets.not_found)]

    # Reads only, so a retry after a dropped connection is safe.
    @task(**tasks.ssh_task(sessions=settings().sessions_per_task), map_index_template=LABEL)
    def plan(batch: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        hosts = labelled(HostBatch.from_xcom(batch))
        return returned(steps.plan_batch(settings(), hosts, run_id, _policy(params)), hosts, "plan the expiry")

    @task
    def summarize(proposals: Pulled) -> dict[str, Any]:
        return steps.summarize(steps.proposals_from_xcom(proposals)).to_xcom()

    @task.branch
    def gate(summary: Pulled, params=None) -> str | None:
        return steps.next_after_summary(ExpirySummary.from_xcom(summary), params["dry_run"])

    # Its answer is left in XCom before Airflow acts on it, so the report names who rejected too (NamedApproval).
    approve = NamedApproval(
        task_id="approve",
        subject="Delete expired MQ journal backups ({{ run_id }})",
        body="{{ ti.xcom_pull(task_ids='summarize')['body'] }}",
        response_timeout=settings().approval.expiry_timeout,
        defaults=None,  # no answer in time fails the gate: nothing runs
        notifiers=[],  # nobody is told: the gate waits in the UI's Required Actions
        assigned_users=approvers(settings().approval),
    )

    # Never retried by Airflow: a plan that went stale or a failed DLTF is for an admin to look at first; a rerun
    # (clear the task) plans again on the live host and deletes only what is still proposed.
    @task(**tasks.ssh_task(sessions=settings().sessions_per_task, retries=0), map_index_template=LABEL)
    def execute(proposals: Pulled, params=None, run_id=None) -> list[dict[str, Any]]:
        approved = steps.proposals_from_xcom(proposals)  # the batch's list
        hosts = labelled(HostBatch(targets=[p.target for p in approved]))
        return returned(steps.execute_batch(settings(), approved, run_id, _policy(params)), hosts, "expiry")

    @task(trigger_rule=TriggerRule.ALL_DONE)
    def report(params=None, run_id=None, ti=None) -> str:
        states = ti.get_task_states(dag_id=ti.dag_id, task_ids=["approve"], run_ids=[run_id])
        approve_state = (states.get(run_id) or {}).get("approve")
        steps.report(
            settings(),
            run_id,
            dry_run=params["dry_run"],
            summary=ti.xcom_pull(task_ids="summarize"),
            outcomes=ti.xcom_pull(task_ids="execute"),
            approval=ti.xcom_pull(task_ids="approve"),
            approve_state=str(approve_state) if approve_state else None,
            answer=ti.xcom_pull(task_ids="approve", key=ANSWER_KEY),
        )
        return str(settings().expiry_report_file(run_id))

    # The store only, no SSH: every copy re-read within MQJOURNAL_SCRUB_EVERY_DAYS (docs/backup-store.md), after the
    # expiry, so nothing about to be deleted is read. A copy that no longer matches fails the task, loudly.
    @task(trigger_rule=TriggerRule.ALL_DONE, retries=0)
    def scrub_store() -> str:
        return steps.scrub_store(settings())

    @task(trigger_rule=TriggerRule.ONE_FAILED, retries=0)
    def failed_steps() -> None:
        """Fails the run when any step failed: the report runs whatever happened (ALL_DONE), and a run whose leaves
        all succeeded shows as a success."""
        raise RuntimeError("a step of this run failed: its log says why; the report says what was done")

    targets = select_targets()
    planned = plan.expand(batch=targets)
    summary = summarize(planned)
    branch = gate(summary)
    done = execute.expand(proposals=planned)
    branch >> approve >> done
    reported = report()
    [summary, done] >> reported
    scrubbed = scrub_store()
    done >> scrubbed
    [targets, planned, summary, branch, approve, done, reported, scrubbed] >> failed_steps()


mq_journal_backup_expiry()
