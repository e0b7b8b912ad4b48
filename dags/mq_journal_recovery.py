"""mq_journal_recovery: plan -> approval -> execute -> verify, for one queue manager, triggered by an on-call engineer.

Kinds: startup (STRMQM failed with AMQ7432), media (a damaged object, RCRMQMOBJ), library (the queue manager library
is lost), naming (receiver switching stopped, CPI70E3, or a new threshold), expiry (discard save files no restore
can need). A Linux host of the fleet file (#32) takes startup (strmqm fails: an extent from RECLOG on is missing,
AMQ6767) and media (rcrmqobj of one object): the extents are put back from the backup store into the log directory
first. The plan is built from the live host and the backup catalog; a plan with gaps (a needed save or extent that
no copy holds) fails before the gate and changes nothing; a plan with nothing to do goes straight to the report.
After approval the plan is re-made on the live host and only steps the approver saw are run, so a rerun of a failed
run only does what is still missing.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import Param, TriggerRule, dag, task

from mqjournal.airflow import recovery as steps
from mqjournal.airflow.approval import ANSWER_KEY, NamedApproval, approvers
from mqjournal.airflow.forms import fleet_choices
from mqjournal.airflow.notify import GateWaiting
from mqjournal.airflow.settings import settings
from mqjournal.airflow.xcom import Pulled
from mqjournal.linuxmq.recovery import LINUX_KINDS
from mqjournal.recovery.kinds import RecoveryKind


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
            "",
            type="string",
            minLength=1,
            examples=fleet_choices(settings()).hosts + fleet_choices(settings()).linux_hosts,
            title="Host",
            description="the partition or Linux host, as named in the fleet file (another is refused, listing its "
            "hosts)",
        ),
        "qmgr": Param(
            "",
            type="string",
            minLength=1,
            examples=fleet_choices(settings()).queue_managers + fleet_choices(settings()).linux_queue_managers,
            title="Queue manager",
            description="its name on that host (the fleet file's, or any the host has); a name the host does not "
            "have is refused before anything is planned, listing the ones it has",
        ),
        "kind": Param(
            RecoveryKind.STARTUP.value,
            type="string",
            enum=[kind.value for kind in RecoveryKind],
            title="Kind of recovery",
            description=RecoveryKind.described()
            + ". On a Linux host: "
            + "; ".join(f"{kind.value}: {line}" for kind, line in LINUX_KINDS.items()),
        ),
        "timestamp": Param(
            None,
            type=["null", "string"],
            title="Journal entry time (startup)",
            description="the date and time AMQ7432 reports, e.g. 2026-11-22T03:14:00 (host's local time); "
            "empty: the latest AMQ7432",
        ),
        "object": Param(
            None,
            type=["null", "string"],
            title="Damaged object (media)",
            description="empty: the latest AMQ7472 (IBM i); a Linux host needs the name (AMQ7472 in AMQERR01.LOG)",
        ),
        "object_type": Param(
            "*ALL",
            type="string",
            title="Object type (media)",
            description="RCRMQMOBJ OBJTYPE, e.g. *LCLQ; on a Linux host rcrmqobj's -t, e.g. queue or channel "
            "(*ALL: all)",
        ),
        "threshold_kb": Param(None, type=["null", "integer"], minimum=1, title="New receiver threshold in KB (naming)"),
    },
)
def mq_journal_recovery():
    # Never retried by Airflow: a rerun of a recovery is an engineer's decision, after reading why it stopped.
    pool = settings().tasks.ssh_pool

    @task(pool=pool, retries=0)
    def plan(params=None, run_id=None) -> dict[str, Any]:
        return steps.make_plan(settings(), params, run_id).to_xcom()

    @task.branch
    def gate(made: Pulled) -> list[str]:
        return steps.next_after_plan(steps.plan_made(made))

    @task
    def blocked(made: Pulled) -> None:
        steps.refuse(steps.plan_made(made))

    # Its answer is left in XCom before Airflow acts on it, so the report names who rejected too (NamedApproval).
    approve = NamedApproval(
        task_id="approve",
        subject="MQ recovery {{ params.kind }} of {{ params.qmgr }} on {{ params.host }} ({{ run_id }})",
        body="{{ ti.xcom_pull(task_ids='plan')['body'] }}",
        response_timeout=settings().approval.recovery_timeout,
        defaults=None,  # no answer in time fails the gate: nothing runs
        # The on-call engineer is told that a plan waits, with its link: the maintenance run triggers this DAG for
        # a queue manager that cannot start (mqjournal.airflow.oncall), before anyone has looked.
        notifiers=[GateWaiting(subject="mq_journal_recovery {{ run_id }}: a restore plan waits for approval")],
        assigned_users=approvers(settings().approval),
    )

    @task(pool=pool, retries=0)
    def execute(made: Pulled, run_id=None) -> dict[str, Any]:
        return steps.execute(settings(), steps.plan_made(made), run_id).model_dump(mode="json")

    @task(trigger_rule=TriggerRule.ALL_DONE)
    def report(run_id=None, ti=None) -> str:
        made, result = ti.xcom_pull(task_ids="plan"), ti.xcom_pull(task_ids="execute")
        states = ti.get_task_states(dag_id=ti.dag_id, task_ids=["approve"], run_ids=[run_id])
        approve_state = (states.get(run_id) or {}).get("approve")
        return steps.write_report(
            settings(),
            run_id,
            steps.plan_made(made) if made is not None else None,
            steps.result_made(result) if result is not None else None,
            approval=ti.xcom_pull(task_ids="approve"),
            approve_state=str(approve_state) if approve_state else None,
            answer=ti.xcom_pull(task_ids="approve", key=ANSWER_KEY),
        )

    made = plan()
    branch = gate(made)
    done = execute(made)
    reported = report()
    branch >> [approve, blocked(made), reported]
    approve >> done
    [made, done] >> reported


mq_journal_recovery()
