"""What the recovery executor may run, and what counts as done, decided on the live state: pure functions, no I/O.

The executor (mqjournal.recovery.execute) reads the host, asks these, and sends what they allow. A plan waits for
approval and the host changes meanwhile, so the plan made again right before running decides; the approved one
bounds it: nothing the approver did not see is run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from mqjournal import rules
from mqjournal.ibmi.collector import Target
from mqjournal.recovery.outcome import ENTRY_NOT_AVAILABLE
from mqjournal.recovery.plan import Action, RecoveryPlan, Step
from mqjournal.recovery.refusals import PlanHasGaps, PlanWentStale
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.recovery.resume import restored
from mqjournal.snapshot import QueueMessage, Snapshot, receivers_by_name

STARTED = "AMQ7460"  # STRMQM's recovery pass succeeded (ENTRY_NOT_AVAILABLE, AMQ7432: it could not read an entry)


def step_key(s: Step) -> tuple[str, str]:
    """Steps are the same when they run the same builder with the same arguments."""
    return s.action.value, json.dumps(s.args, sort_keys=True, default=str)


def not_approved(approved: RecoveryPlan, fresh: RecoveryPlan) -> list[Step]:
    """The steps of `fresh` that the approved plan does not have.

    One step counts as approved without being in it: deleting what an interrupted upload left in a save file the
    approved plan uploads into (DELETE_PARTIAL_UPLOAD). The approver approved that upload; IBM i places data only
    into an empty save file and an upload is never made twice into one, so making it again means DLTF and CRTSAVF
    first. The name was free when the plan was made, so the save file is the approved plan's own."""
    approved_keys = {step_key(s) for s in approved.steps}
    uploaded_into = {(s.args["library"], s.args["name"]) for s in approved.steps if s.action is Action.UPLOAD_SAVE_FILE}
    return [
        s
        for s in fresh.steps
        if step_key(s) not in approved_keys
        and not (s.action is Action.DELETE_PARTIAL_UPLOAD and (s.args["library"], s.args["name"]) in uploaded_into)
    ]


def refuse_unrunnable(approved: RecoveryPlan, *, host: str, target: Target) -> None:
    """A plan for another queue manager, or with gaps, is refused before anything is sent."""
    r = approved.request
    if (r.host, r.qmgr, approved.qmgr_library, approved.journal) != (
        host,
        target.qmgr,
        target.library,
        target.journal,
    ):
        raise RecoveryRefused(
            f"plan of {r.qmgr} ({approved.qmgr_library}/{approved.journal}) on {r.host}",
            f"this executor works on {target.qmgr} ({target.library}/{target.journal}) on {host}",
            "run the plan against the queue manager it was made for",
        )
    if approved.gaps:
        raise PlanHasGaps(
            f"{r.kind.value} plan of {r.qmgr} on {host}",
            "the plan has gaps: " + " | ".join(str(g) for g in approved.gaps),
            "resolve every gap, then plan and approve again; nothing was run",
        )
    if approved.site_media:
        raise PlanHasGaps(
            f"{r.kind.value} plan of {r.qmgr} on {host}",
            "the plan needs receivers only the site's backup media hold: " + " | ".join(approved.site_media),
            "restore them from the site's media, then plan and approve again; nothing was run",
        )


def steps_to_run(approved: RecoveryPlan, fresh: RecoveryPlan, *, host: str) -> tuple[RecoveryPlan, list[str]]:
    """The plan to run now (`fresh`, a subset of the approved one) and the approved steps no longer needed.

    Raises PlanHasGaps when the fresh plan has gaps, PlanWentStale when it needs a step the approved one has not.
    """
    r = approved.request
    if fresh.gaps:
        raise PlanHasGaps(
            f"{r.kind.value} plan of {r.qmgr} on {host}",
            "planned again on the live host, it has gaps: " + " | ".join(str(g) for g in fresh.gaps),
            "resolve every gap, then plan and approve again; nothing was run",
        )
    extra = not_approved(approved, fresh)
    if extra:
        raise PlanWentStale(
            f"{r.kind.value} plan of {r.qmgr} on {host}",
            f"the live host now needs {len(extra)} step(s) the approved plan does not have: "
            + "; ".join(f"`{s.text}`" for s in extra),
            "the plan went stale; plan and approve again (nothing was run)",
        )
    fresh_keys = {step_key(s) for s in fresh.steps}
    return fresh, [s.text for s in approved.steps if step_key(s) not in fresh_keys]


def associated(approved: RecoveryPlan, live: Snapshot, *, library: str, journal: str) -> tuple[bool, str]:
    """Every receiver the plan restores is in the journal, and the journal links them up to the attached one.

    JOURNAL_NAME alone does not tell: a restored receiver keeps the name of the journal it was attached to
    whether or not it is in that journal's directory; only association links it into the chain.
    """
    on_host = receivers_by_name(live, library)
    wanted = [x for x in approved.steps if x.action is Action.RESTORE_RECEIVER]
    loose = [
        x.args["receiver"]
        for x in wanted
        if not restored(x, on_host) or on_host[str(x.args["receiver"])].journal != journal
    ]
    if loose:
        return False, f"receivers {', '.join(map(str, loose))} are not in journal {journal}"
    oldest = min((x.attached_at for x in wanted if x.attached_at), default=None)
    chain = [r for r in rules.chain_of(live) if oldest is None or rules.attached_at(r) >= oldest]
    if chain and rules.chain_is_broken(chain):
        links = ", ".join(f"{r.name}->{r.next or '-'}" for r in chain)
        return False, f"the journal's receiver chain is broken from {chain[0].name} on ({links})"
    return True, ""


def started_since(messages: Sequence[QueueMessage], started: datetime, *, library: str) -> tuple[bool | None, str]:
    """Whether STRMQM's recovery pass ended since `started`, from QMQMMSG: AMQ7460 when it succeeded, AMQ7432 when
    it could not read an entry; (None, why) when neither is there."""
    recent = [
        m
        for m in messages
        if m.at >= started and m.queue == f"{library}/QMQMMSG" and m.id in (STARTED, ENTRY_NOT_AVAILABLE)
    ]
    latest = max(recent, key=lambda m: m.at, default=None)
    if latest is None:
        return None, "QMQMMSG shows neither AMQ7460 (started) nor AMQ7432 since the recovery began"
    if latest.id == ENTRY_NOT_AVAILABLE:
        return False, f"QMQMMSG has {latest.id}: {latest.text}"
    return True, ""
