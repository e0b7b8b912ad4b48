"""What an approval gate's answer was, as the reports of the DAGs with a gate say it (maintenance, expiry)."""

from __future__ import annotations

from typing import Any, NamedTuple


class GateAnswer(NamedTuple):
    approved_by: str | None  # who approved; None when the gate did not approve
    refusal: str  # the report's line when it did not ("..., nothing was deleted"); "" when it approved


def gate_answer(
    approval: dict[str, Any] | None,
    approve_state: str | None,
    *,
    answer: dict[str, Any] | None = None,
    nothing: str = "nothing was deleted",
) -> GateAnswer:
    """`approval`: the ApprovalOperator's XCom value; `approve_state`: its task state; `answer`: the answer a
    NamedApproval pushed before Airflow's reject handling (mqjournal.airflow.approval), which names who rejected;
    `nothing`: what the refusal left undone, as the report says it."""
    if approval is None and answer is not None:
        approval = answer
    if approval is None and approve_state == "success":
        # On Reject the ApprovalOperator skips downstream before its answer reaches XCom.
        return GateAnswer(None, f"rejected at the approval gate: {nothing}")
    if approval is None:
        return GateAnswer(None, f"not approved (no answer before the timeout, or the gate failed): {nothing}")
    who = (approval.get("responded_by_user") or {}).get("name", "the timeout default")
    if "Approve" not in approval.get("chosen_options", []):
        return GateAnswer(None, f"rejected by {who}: {nothing}")
    return GateAnswer(who, "")
