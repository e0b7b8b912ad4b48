"""mq_journal_restore_drill: propose -> approval -> drill -> report.

The only end-to-end proof that a copy in the backup store restores: a sample of stored copies (the unproven ones and
those drilled least recently first, MQJOURNAL_DRILL_COPIES_PER_RUN and MQJOURNAL_DRILL_MAX_GIB_PER_RUN a run, each
copy within MQJOURNAL_DRILL_EVERY_DAYS) is uploaded into scratch save files (DRLnnnnnnn in MQJOURNAL_DRILL_LIBRARY)
on their partitions, IBM i's object list of each (QSYS2.SAVE_FILE_OBJECTS) is compared with the catalog, and the
scratch files are deleted. It writes to partitions, so it waits for an approval. Each outcome is in the catalog (a
claimed copy that passes is proven: `restore_drill`), in the run's report and note, and in the fleet view.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.providers.standard.operators.hitl import ApprovalOperator
from airflow.sdk import TriggerRule, dag, task

from mqjournal.airflow import drill as steps
from mqjournal.airflow.approval import approvers
from mqjournal.airflow.settings import settings
from mqjournal.airflow.xcom import Pulled


@dag(
    dag_id=steps.DAG_ID,
    schedule=settings().drill.schedule,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["mq", "ibmi", "journal", "backup"],
    doc_md=__doc__,
)
def mq_journal_restore_drill():
    @task
    def propose() -> dict[str, Any]:
        return steps.propose(settings())

    @task.branch
    def gate(proposal: Pulled) -> str | None:
        return steps.next_after_proposal(steps.proposal_from_xcom(proposal))

    approve = ApprovalOperator(
        task_id="approve",
        subject="Restore drill of MQ journal backups ({{ run_id }})",
        body="{{ ti.xcom_pull(task_ids='propose')['body'] }}",
        response_timeout=settings().approval.expiry_timeout,
        defaults=None,  # no answer in time fails the gate: nothing runs
        notifiers=[],  # nobody is told: the gate waits in the UI's Required Actions
        assigned_users=approvers(settings().approval),
    )

    # Never retried by Airflow: each drill's outcome is in the catalog as it ends; the next run takes what is due.
    @task(**settings().tasks.ssh_task(sessions=1, retries=0))
    def drill(proposal: Pulled, run_id=None) -> list[dict[str, Any]]:
        return steps.execute(settings(), steps.proposal_from_xcom(proposal)["keys"], run_id)

    @task(trigger_rule=TriggerRule.ALL_DONE, retries=0)
    def report(run_id=None, ti=None) -> str:
        states = ti.get_task_states(dag_id=ti.dag_id, task_ids=["approve"], run_ids=[run_id])
        approve_state = (states.get(run_id) or {}).get("approve")
        return steps.report(
            settings(),
            run_id,
            proposal=ti.xcom_pull(task_ids="propose"),
            results=ti.xcom_pull(task_ids="drill"),
            approval=ti.xcom_pull(task_ids="approve"),
            approve_state=str(approve_state) if approve_state else None,
        )

    proposal = propose()
    gate(proposal) >> approve
    drilled = drill(proposal)
    approve >> drilled
    [proposal, drilled] >> report()


mq_journal_restore_drill()
