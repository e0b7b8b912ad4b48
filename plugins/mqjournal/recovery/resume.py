"""Resume a half-done recovery whose planner cannot plan from where it stopped.

The planners plan from a whole state: a library plan from a lost library, a naming repair from a journal whose
switching stopped. After a failure half way the host is in neither state (the library is back but the journal is
not, or the new receiver exists but is not attached), so re-planning would refuse or choose another name. Here the
approved plan is kept and the steps the host shows done drop out; nothing is added, so this can only run less than
was approved.
"""

from __future__ import annotations

from mqjournal.recovery.fromstore import StoreView, fetched_later, resume_fetches
from mqjournal.recovery.plan import Action, Gap, RecoveryPlan, Step
from mqjournal.recovery.refusals import PlanWentStale
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot, receivers_by_name


def restored(step: Step, on_host: dict[str, Receiver]) -> bool:
    """The receiver of a RESTORE_RECEIVER step is on the host: the same incarnation, readable."""
    r = on_host.get(str(step.args["receiver"]))
    return r is not None and r.attached_at == step.attached_at and r.status is not ReceiverStatus.FREED


def _new_receiver(approved: RecoveryPlan) -> str:
    for s in approved.steps:
        if s.action is Action.CREATE_RECEIVER:
            return str(s.args["receiver"])
    raise RecoveryRefused(
        f"plan of {approved.request.qmgr}",
        "it creates no receiver",
        "plan again: a library or naming plan always creates one",
    )


def resume_library(
    approved: RecoveryPlan,
    live: Snapshot,
    *,
    journal_exists: bool,
    save_files: set[str] | None,
    store: StoreView | None = None,
) -> RecoveryPlan:
    """What remains of an approved library plan once its library is back on the host (with what remains of its
    fetches from the backup store: `fromstore.resume_fetches`).

    The journal may only be back if this plan created it, on the plan's new receiver; anything else means someone
    else brought the queue manager back, and restoring over it could lose data, so that is refused.
    """
    library, journal = approved.qmgr_library, approved.journal
    on_host = receivers_by_name(live, library)
    fresh = _new_receiver(approved)
    if journal_exists:
        ours = on_host.get(fresh)
        if ours is None or ours.attached_at is None or ours.journal != journal:
            raise PlanWentStale(
                f"{library}/{journal} on {approved.request.host}",
                f"the library and its journal are on the host, and the journal is not on {fresh}, the receiver "
                "this plan creates: someone else restored the queue manager since the plan was approved",
                "the plan went stale; plan and approve again (a startup or media recovery if the queue manager is "
                "back)",
            )
    remaining, gaps = [], []
    steps = resume_fetches(approved.steps, save_files, store)
    for s in steps:
        if s.action is Action.RESTORE_LIBRARY:
            continue  # the library is on the host
        if s.action is Action.CREATE_RECEIVER and s.args["receiver"] in on_host:
            continue
        if s.action in (Action.GIVE_RECEIVER_TO_QMQM, Action.CREATE_JOURNAL) and journal_exists:
            continue  # both come before the journal exists
        if s.action is Action.RESTORE_RECEIVER:
            if restored(s, on_host):
                continue
            path = f"{s.args['save_library']}/{s.args['save_file']}"
            if save_files is not None and path not in save_files and not fetched_later(steps, path):
                gaps.append(
                    Gap(
                        obj=f"{library}/{s.args['receiver']}",
                        problem=f"its save file {path} no longer exists",
                        action="bring the save file back from backup media, then run the recovery again",
                    )
                )
        remaining.append(s)
    return approved.model_copy(update={"steps": remaining, "gaps": gaps})


def resume_naming(approved: RecoveryPlan, live: Snapshot) -> RecoveryPlan | None:
    """What remains of an approved naming repair whose new receiver already exists; None if it does not exist.

    A receiver the plan named that was never attached is the one to attach; once it is attached, nothing remains.
    """
    fresh = _new_receiver(approved)
    r = receivers_by_name(live, approved.qmgr_library).get(fresh)
    if r is None:
        return None
    if r.status is ReceiverStatus.ATTACHED and r.journal == approved.journal:
        return approved.model_copy(update={"steps": []})
    if r.status is not ReceiverStatus.EMPTY:
        return None  # another incarnation of the name: let the fresh plan decide
    remaining = [s for s in approved.steps if s.action is not Action.CREATE_RECEIVER]
    return approved.model_copy(update={"steps": remaining})
