"""The maintenance DAG's approval gate: the approver chooses the queue managers whose receivers may be deleted.

One option per queue manager with receivers to delete, saying what choosing it deletes (`host/QMGR: 12 receivers,
48.2 MB`), one for all of them when there are several, and "Delete nothing"; several at once. The options exist only
once the plan is made, so the operator reads them from the plan's summary when it runs, and again when it resumes
(the resumed task is a fresh copy of the one the DAG file declares): both readings of the same summary give the same
texts, which is how an answer maps back to its queue managers.

No option is preselected: Airflow's form starts from the gate's `defaults`, which are also its answer on timeout, so
the gate has none. No answer within the form's "Hours to wait for approval" then fails the gate (Airflow resumes it
with a timeout error), nothing is deleted, and the unanswered gate shows red in the grid, not as a run that chose to
delete nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from airflow.providers.standard.operators.hitl import ApprovalOperator, HITLOperator

from mqjournal.airflow.xcom import RunPlan
from mqjournal.report import DELETE_NOTHING
from mqjournal.settings import ApprovalSettings
from mqjournal.sizefmt import size

if TYPE_CHECKING:
    from airflow.sdk.execution_time.hitl import HITLUser

__all__ = [
    "ALL_QUEUE_MANAGERS",
    "DELETE_NOTHING",
    "GateAnswer",
    "GateOption",
    "GateUnanswered",
    "NamedApproval",
    "QueueManagerApproval",
    "approval_options",
    "approved_keys",
    "approvers",
    "gate_options",
    "read_answer",
]

log = logging.getLogger(__name__)

ALL_QUEUE_MANAGERS = "All queue managers above"
"""The name of the option that approves every queue manager the gate lists, and only those."""


def approvers(settings: ApprovalSettings) -> list[HITLUser] | None:
    """A gate's `assigned_users`: the users of MQJOURNAL_APPROVAL_APPROVERS, the only ones the UI and the API let
    answer it; None (the setting empty): anyone who may use the UI."""
    return [{"id": user, "name": user} for user in settings.approvers] or None


class GateUnanswered(Exception):
    """Nobody answered the gate in time: nothing is deleted."""


@dataclass(frozen=True)
class GateOption:
    text: str  # what the form shows, and what Airflow returns when it is chosen
    name: str  # host/QMGR, ALL_QUEUE_MANAGERS or DELETE_NOTHING: all an option said before it carried counts
    keys: frozenset[str]  # the RunPlan keys (host/QMGR/LIBRARY) choosing it approves


def _deletes(count: int, n_bytes: int, extents: int = 0) -> str:
    """`12 receivers, 48.2 MB`; a Linux queue manager's `3 log extents, 12.0 MB`; all of both: `12 receivers and 3
    log extents, 60.2 MB`."""
    what = [f"{count} receiver{'s' if count != 1 else ''}"] if count or not extents else []
    what += [f"{extents} log extent{'s' if extents != 1 else ''}"] if extents else []
    return f"{' and '.join(what)}, {size(n_bytes)}"


def gate_options(summary: RunPlan) -> list[GateOption]:
    """The queue managers with receivers to delete, by `host/QMGR`, then all of them (when more than one), then
    "Delete nothing". Counts come from the lists the deletes act on, sizes from the plan's rows."""
    keys: dict[str, set[str]] = {}  # host/QMGR -> its keys: one option per name, even should a plan repeat one
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for q in {q.ref.key: q for q in summary.queue_managers if summary.to_delete.get(q.ref.key)}.values():
        label = q.ref.label
        keys.setdefault(label, set()).add(q.ref.key)
        counts[label] = counts.get(label, 0) + len(summary.to_delete[q.ref.key])
        sizes[label] = sizes.get(label, 0) + q.bytes_to_delete
    # A Linux queue manager (#32): its extents to release, under the same `host/QMGR` label form.
    extents: dict[str, int] = {}
    for p in summary.linux:
        if p.to_release:
            keys.setdefault(p.key, set()).add(p.key)
            extents[p.key] = extents.get(p.key, 0) + len(p.to_release)
            sizes[p.key] = sizes.get(p.key, 0) + p.bytes_to_release
    options = [
        GateOption(
            f"{label}: {_deletes(counts.get(label, 0), sizes[label], extents.get(label, 0))}",
            label,
            frozenset(keys[label]),
        )
        for label in sorted(keys)
    ]
    if len(options) > 1:
        every = frozenset().union(*keys.values())
        totals = _deletes(sum(counts.values()), sum(sizes.values()), sum(extents.values()))
        options.append(GateOption(f"{ALL_QUEUE_MANAGERS}: {totals}", ALL_QUEUE_MANAGERS, every))
    return [*options, GateOption(DELETE_NOTHING, DELETE_NOTHING, frozenset())]


def approval_options(summary: RunPlan) -> list[str]:
    """The gate's options as the form shows them."""
    return [o.text for o in gate_options(summary)]


@dataclass(frozen=True)
class GateAnswer:
    keys: set[str]  # the RunPlan keys the answer approves
    refusal: str  # why it approves nothing although options were chosen ("" when it approves, or nothing was chosen)


def read_answer(summary: RunPlan, chosen_options: Iterable[str]) -> GateAnswer:
    """What the chosen option texts approve. Each is matched whole, against the texts the same summary gives (or
    against the option's name alone, as an answer given before the options carried counts named it), never parsed.
    Two readings win over everything chosen with them, because both leave the receivers where they are: "Delete
    nothing" (a contradiction, whose safe reading is nothing) and a text that matches no option (the approver chose
    from options this plan does not offer, so what they meant is not known)."""
    chosen = list(dict.fromkeys(chosen_options))
    options = gate_options(summary)
    by_text = {o.text: o for o in options} | {o.name: o for o in options if o.name not in {p.text for p in options}}
    unknown = [c for c in chosen if c not in by_text]
    if unknown:
        offered = "; ".join(o.text for o in options)
        return GateAnswer(
            set(),
            f"the gate's answer {unknown} matches none of the options this plan offers ({offered}): nothing is deleted",
        )
    picked = [by_text[c] for c in chosen]
    if any(o.name == DELETE_NOTHING for o in picked):
        return GateAnswer(set(), "")
    return GateAnswer(set().union(*(o.keys for o in picked)), "")


def approved_keys(summary: RunPlan, answer: Mapping[str, Any] | None) -> set[str]:
    """What the gate's XCom value (None: the gate did not answer) approves; an answer that matches no option is
    logged, since it approves nothing."""
    if not answer:
        return set()
    read = read_answer(summary, answer.get("chosen_options") or [])
    if read.refusal:
        log.warning("%s", read.refusal)
    return read.keys


BodyMaker = Callable[[Any, RunPlan], str]
"""(task context, the run's plan) -> the gate's Markdown body, made when the gate opens."""


class QueueManagerApproval(HITLOperator):
    """HITLOperator whose options are the plan's queue managers, read from `summary_task_id`'s XCom; with
    `make_body`, its body is made when it opens (after the steps it waits for), not when the plan was summarized."""

    def __init__(
        self, *, summary_task_id: str, timeout_param: str, make_body: BodyMaker | None = None, **kwargs: Any
    ) -> None:
        # No defaults: they would be preselected in the form and be the answer on timeout (see the module's doc).
        super().__init__(options=[DELETE_NOTHING], defaults=None, multiple=True, **kwargs)
        self.summary_task_id = summary_task_id
        self.timeout_param = timeout_param
        self.make_body = make_body

    def _summary(self, context: Any) -> RunPlan:
        return RunPlan.from_xcom(context["ti"].xcom_pull(task_ids=self.summary_task_id))

    def execute(self, context: Any) -> Any:
        summary = self._summary(context)
        self.options = approval_options(summary)
        if self.make_body is not None:
            self.body = self.make_body(context, summary)
        self.response_timeout = timedelta(hours=float(context["params"][self.timeout_param]))
        return super().execute(context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        # A gate asked before it had no defaults may still resume with "Delete nothing" applied (`timedout`).
        if event.get("error_type") == "timeout" or event.get("timedout"):
            hours = context["params"][self.timeout_param]
            raise GateUnanswered(
                f"nobody answered the approval gate within {hours} h: nothing was deleted; the saves stand. Trigger "
                "a new run (or clear this task to ask again)"
            )
        self.options = approval_options(self._summary(context))
        return super().execute_complete(context, event)


ANSWER_KEY = "answer"
"""The XCom key under which a NamedApproval leaves its answer."""


class NamedApproval(ApprovalOperator):
    """ApprovalOperator that leaves its answer (who, what, when) in XCom under ANSWER_KEY before Airflow acts on it:
    on Reject, Airflow skips the downstream tasks before the answer reaches the task's value, and the report must
    still say who rejected."""

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        if "error" not in event:
            at = event.get("responded_at")
            context["ti"].xcom_push(
                ANSWER_KEY,
                {
                    "chosen_options": list(event.get("chosen_options") or []),
                    "responded_by_user": event.get("responded_by_user"),
                    "responded_at": at.isoformat() if isinstance(at, datetime) else at,
                },
            )
        return super().execute_complete(context, event)
