"""mq_journal_recovery: plan -> approval -> execute -> verify, for one queue manager, triggered by an on-call engineer.

Kinds: startup (STRMQM failed with AMQ7432), media (a damaged object, RCRMQMOBJ), library (the queue manager library
is lost), naming (receiver switching stopped, CPI70E3, or a new threshold), expiry (discard save files no restore
can need). The plan is built from the live partition and the backup catalog; a plan with gaps (a needed save that
does not exist) fails before the gate and changes nothing; a plan with nothing to do goes straight to the report. After approval the plan is re-made on the live host and
only steps the approver saw are run, so a rerun of a failed run only does what is still missing.
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.providers.standard.operators.hitl import ApprovalOperator
from airflow.sdk import Param, TriggerRule, dag, task

from mqjournal.airflow import recovery as steps
from mqjournal.airflow.settings import settings

SSH = {"pool": "mqjournal_ssh", "retries": 0}
KINDS = ["startup", "media", "library", "naming", "expiry"]


@dag(
    dag_id="mq_journal_recovery",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    tags=["mq", "ibmi", "journal", "recovery"],
    doc_md=__doc__,
    params={
        "host": Param(
            "", type="string", minLength=1, title="Host", description="the partition, as named in the fleet file"
        ),
        "qmgr": Param("", type="string", minLength=1, title="Queue manager"),
        "kind": Param("startup", type="string", enum=KINDS, title="Kind of recovery"),
        "timestamp": Param(
            None,
            type=["null", "string"],
            title="Journal entry time (startup)",
            description="the date and time AMQ7432 reports, e.g. 2026-11-22T03:14:00 (host's local time); empty: the latest AMQ7432",
        ),
        "object": Param(
            None, type=["null", "string"], title="Damaged object (media)", description="empty: the latest AMQ7472"
        ),
        "object_type": Param(
            "*ALL", type="string", title="Object type (media)", description="RCRMQMOBJ OBJTYPE, e.g. *LCLQ"
        ),
        "threshold_kb": Param(None, type=["null", "integer"], minimum=1, title="New receiver threshold in KB (naming)"),
    },
)
def mq_journal_recovery():
    @task(**SSH)
    def plan(params=None, run_id=None) -> dict:
        return steps.make_plan(settings(), params, run_id)

    @task.branch
    def gate(made: dict) -> list[str]:
        return steps.next_after_plan(made)

    @task
    def blocked(made: dict) -> None:
        steps.refuse(made)

    approve = ApprovalOperator(
        task_id="approve",
        subject="MQ recovery {{ params.kind }} of {{ params.qmgr }} on {{ params.host }} ({{ run_id }})",
        body="{{ ti.xcom_pull(task_ids='plan')['body'] }}",
        response_timeout=timedelta(hours=4),
    )

    @task(**SSH)
    def execute(made: dict, run_id=None) -> dict:
        return steps.execute(settings(), made, run_id)

    @task(trigger_rule=TriggerRule.ALL_DONE)
    def report(run_id=None, ti=None) -> str:
        return steps.write_report(settings(), run_id, ti.xcom_pull(task_ids="plan"), ti.xcom_pull(task_ids="execute"))

    made = plan()
    branch = gate(made)
    done = execute(made)
    reported = report()
    branch >> [approve, blocked(made), reported]
    approve >> done
    [made, done] >> reported


mq_journal_recovery()
