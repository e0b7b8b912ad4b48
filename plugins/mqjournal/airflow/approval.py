"""The maintenance DAG's approval gate: the approver chooses the queue managers whose receivers may be deleted.

One option per queue manager with receivers to delete (`host/QMGR`, as the gate's body lists them), several at
once, and "Delete nothing". The options exist only once the plan is made, so the operator reads them from the plan's
summary when it runs, and again when it resumes (the resumed task is a fresh copy of the one the DAG file declares).
No answer within the form's "Hours to wait for approval" answers "Delete nothing" (`defaults`), and the gate then
fails, so that an unanswered gate shows red in the grid, not as a run that chose to delete nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.providers.standard.operators.hitl import HITLOperator

from mqjournal.airflow.xcom import RunPlan
from mqjournal.report import DELETE_NOTHING
from mqjournal.settings import ApprovalSettings

if TYPE_CHECKING:
    from airflow.sdk.execution_time.hitl import HITLUser

__all__ = [
    "DELETE_NOTHING",
    "GateUnanswered",
    "QueueManagerApproval",
    "approval_options",
    "approved_keys",
    "approvers",
    "chosen_keys",
]


def approvers(settings: ApprovalSettings) -> list[HITLUser] | None:
    """A gate's `assigned_users`: the users of MQJOURNAL_APPROVAL_APPROVERS, the only ones the UI and the API let
    answer it; None (the setting empty): anyone who may use the UI."""
    return [{"id": user, "name": user} for user in settings.approvers] or None


class GateUnanswered(Exception):
    """Nobody answered the gate in time: its default, "Delete nothing", was applied."""


def approval_options(summary: RunPlan) -> list[str]:
    """`host/QMGR` of every queue manager with receivers to delete, sorted, then "Delete nothing"."""
    keys = {k for k, names in summary.to_delete.items() if names}
    options = sorted({q.ref.label for q in summary.queue_managers if q.ref.key in keys})
    return [*options, DELETE_NOTHING]


def chosen_keys(summary: RunPlan, chosen_options: Iterable[str]) -> set[str]:
    """The RunPlan keys (host/QMGR/LIBRARY) the answer approves. "Delete nothing" among other choices is a
    contradiction, and the safe reading of it wins: nothing."""
    chosen = set(chosen_options)
    if DELETE_NOTHING in chosen:
        return set()
    return {q.ref.key for q in summary.queue_managers if q.ref.label in chosen and summary.to_delete.get(q.ref.key)}


def approved_keys(summary: RunPlan, answer: Mapping[str, Any] | None) -> set[str]:
    """What the gate's XCom value (None: the gate did not answer) approves."""
    if not answer:
        return set()
    return chosen_keys(summary, answer.get("chosen_options") or [])


class QueueManagerApproval(HITLOperator):
    """HITLOperator whose options are the plan's queue managers, read from `summary_task_id`'s XCom."""

    def __init__(self, *, summary_task_id: str, timeout_param: str, **kwargs: Any) -> None:
        # Declared here, not left to Airflow's defaults: on timeout the answer is "Delete nothing".
        super().__init__(options=[DELETE_NOTHING], defaults=[DELETE_NOTHING], multiple=True, **kwargs)
        self.summary_task_id = summary_task_id
        self.timeout_param = timeout_param

    def _plan_options(self, context: Any) -> None:
        summary = RunPlan.from_xcom(context["ti"].xcom_pull(task_ids=self.summary_task_id))
        self.options = approval_options(summary)

    def execute(self, context: Any) -> Any:
        self._plan_options(context)
        self.response_timeout = timedelta(hours=float(context["params"][self.timeout_param]))
        return super().execute(context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        self._plan_options(context)
        result = super().execute_complete(context, event)
        if event.get("timedout"):
            hours = context["params"][self.timeout_param]
            raise GateUnanswered(
                f"nobody answered the approval gate within {hours} h: its answer is '{DELETE_NOTHING}', nothing was "
                "deleted; the saves stand. Trigger a new run (or clear this task to ask again)"
            )
        return result
