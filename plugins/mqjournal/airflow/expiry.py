"""The backup expiry DAG's steps as plain functions: the DAG file only wires them; tests call them directly.

The rules are the expiry planner's (mqjournal.recovery.expiry, the one `mqjournal recover --kind expiry` uses):
per queue manager, keep every save a restore could still need, from the oldest receiver the live queue manager
needs back to the oldest library save the policy keeps, and the policy's days; propose the rest. After approval the
RecoveryExecutor makes the plan again on the live host and refuses a plan that went stale; each save file it deletes
(or finds gone) is recorded discarded in the catalog, and only then are its copies deleted from the backup store
(mqjournal.recovery.store_expiry).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mqjournal.airflow.gate import gate_answer
from mqjournal.airflow.hostwork import BatchResult, run_per_queue_manager, run_where_needed, with_not_found
from mqjournal.airflow.maintenance import mapped_results
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import (
    ExpiringSaveFile,
    ExpiryOutcome,
    ExpiryProposal,
    ExpirySummary,
    HostBatch,
    MaintenanceTarget,
    StoreCopy,
)
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.policy import Policy
from mqjournal.recovery import expiry, store_expiry
from mqjournal.recovery.execute import RecoveryExecutor, RecoveryResult, StepFailed
from mqjournal.recovery.gather import gather
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, RecoveryPlan, Request
from mqjournal.recovery.planner import plan_recovery
from mqjournal.recovery.restore import Inputs
from mqjournal.scrub import scrub
from mqjournal.sizefmt import size

log = logging.getLogger(__name__)


# --- plan ---------------------------------------------------------------------------------------------------------


def plan_one(settings: Settings, target: MaintenanceTarget, run_id: str, policy: Policy) -> ExpiryProposal:
    """`plan_on` over a session of its own (one queue manager: the tests' and a script's way in)."""
    with host_session(settings, target.host) as session:
        return plan_on(session, settings, target, run_id, policy)


def plan_on(
    session: IbmiSession, settings: Settings, target: MaintenanceTarget, run_id: str, policy: Policy
) -> ExpiryProposal:
    """The expiry plan of one queue manager, read from its live partition (no checkpoint: reads only) and the
    catalog, with what each proposed save file holds and its copies in the backup store."""
    catalog = Catalog(settings.catalog_url)
    store = BackupStore.from_settings(settings)
    request = Request(host=target.host, qmgr=target.qmgr, kind=RecoveryKind.EXPIRY)
    inputs = gather(
        session,
        target.target,
        host=target.host,
        tz=target.tz,
        catalog=catalog,
        request=request,
        run_id=run_id,
        store=store,
    )
    plan = plan_recovery(inputs, policy=policy)
    proposal = ExpiryProposal(
        target=target,
        plan=plan,
        save_files=expiring_save_files(
            plan, inputs, catalog.stored_objects(target.host, target.qmgr, unproven=True), store.url
        ),
        leftover_copies=[store_copy(s) for s in store_expiry.leftover_copies(catalog, store, target.host, target.qmgr)],
        store_keeps_versions=store_expiry.keeps_versions(store),
    )
    path = settings.expiry_plan_file(run_id, target.host, target.qmgr)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(proposal.to_xcom(), indent=2, default=str), encoding="utf-8")
    log.info("%s", plan.markdown())
    return proposal


def plan_batch(settings: Settings, batch: HostBatch, run_id: str, policy: Policy) -> BatchResult[ExpiryProposal]:
    """The expiry plans of a batch of hosts' queue managers (mqjournal.airflow.hostwork); those whose journal was
    not found fail here, by name."""
    done = run_per_queue_manager(
        settings, batch, lambda session, t: plan_on(session, settings, t, run_id, policy), doing="plan the expiry"
    )
    return with_not_found(done, batch)


def store_copy(stored: StoredObject) -> StoreCopy:
    return StoreCopy(
        save_file=stored.save_file_path, key=stored.key, store_url=stored.store_url, size_bytes=stored.size_bytes
    )


def expiring_save_files(
    plan: RecoveryPlan, inputs: Inputs, stored: Sequence[StoredObject], store_url: str
) -> list[ExpiringSaveFile]:
    """One entry per DLTF step of the plan: what the catalog records in the save file, whether the partition still
    has it, and its copies in this store (those go with it)."""
    files = {f.path: f for f in expiry.save_files(inputs.cataloged, inputs.library_saves)}
    copies: dict[str, list[StoreCopy]] = defaultdict(list)
    for copy in stored:
        if copy.store_url == store_url:
            copies[copy.save_file_path].append(store_copy(copy))
    on_host = inputs.save_files_on_host
    found = []
    for s in plan.steps:
        if s.action is not Action.DELETE_SAVE_FILE:
            continue
        path = f"{s.args['library']}/{s.args['name']}"
        f = files.get(path)
        found.append(
            ExpiringSaveFile(
                path=path,
                why=s.why,
                on_host=on_host is None or path in on_host,
                receiver_saves=len(f.receiver_saves) if f else 0,
                library_saves=len(f.library_saves) if f else 0,
                receiver_bytes=f.receiver_bytes if f else 0,
                copies=copies.get(path, []),
            )
        )
    return found


def proposals_from_xcom(pulled: object) -> list[ExpiryProposal]:
    """The plan task's mapped values (a lazy sequence, or one bare value) as proposals."""
    return [ExpiryProposal.from_xcom(p) for p in mapped_results(pulled)]


# --- the gate -----------------------------------------------------------------------------------------------------


def summarize(proposals: Sequence[ExpiryProposal]) -> ExpirySummary:
    """What the approval gate shows: per queue manager, the save files to delete and why, their copies, and the
    queue managers where nothing may go."""
    ordered = sorted(proposals, key=lambda p: p.target.key)
    summary = ExpirySummary(
        anything_to_delete=any(p.anything_to_delete for p in ordered),
        save_files=sum(len(p.save_files) for p in ordered if not p.plan.gaps),
        store_bytes=sum(_store_bytes(p) for p in ordered),
        body=gate_body(ordered),
    )
    log.info("the backup expiry proposal of this run:\n%s", summary.body)
    return summary


def _store_bytes(p: ExpiryProposal) -> int:
    return sum(c.size_bytes for f in p.save_files for c in f.copies) + sum(c.size_bytes for c in p.leftover_copies)


def gate_body(proposals: Sequence[ExpiryProposal]) -> str:
    lines = [
        "Backup expiry: save files no restore of their queue manager can need any more (docs/recovery.md, section "
        "6), deleted from the partition (DLTF) and their copies from the backup store. Each deleted save file is "
        "recorded discarded in the catalog, so no restore offers it again. Right before deleting, each plan is made "
        "again on its live partition: a plan that went stale deletes nothing.",
        "",
        "| host | queue manager | save files | receiver saves | library saves | receivers' bytes | store copies |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in proposals:
        files = [] if p.plan.gaps else p.save_files
        copies = [c for f in files for c in f.copies] + p.leftover_copies
        lines.append(
            f"| {p.target.host} | {p.target.qmgr} | {len(files)} | {sum(f.receiver_saves for f in files)} | "
            f"{sum(f.library_saves for f in files)} | {size(sum(f.receiver_bytes for f in files))} | "
            f"{len(copies)} ({size(sum(c.size_bytes for c in copies))}) |"
        )
    lines.append("")
    if any(p.store_keeps_versions for p in proposals):
        lines += [
            "The backup store keeps older versions (S3 versioning or object lock): deleting a copy hides it from "
            "restores and listings, but the store keeps its bytes until the bucket's lifecycle rule or the copy's "
            "retention lets them go. The store copies' bytes above are not freed by this run.",
            "",
        ]
    for p in proposals:
        lines += _queue_manager_section(p)
    return "\n".join(lines).rstrip() + "\n"


def _queue_manager_section(p: ExpiryProposal) -> list[str]:
    lines = [f"## {p.target.qmgr} ({p.target.library}) on {p.target.host}", ""]
    if p.plan.gaps:
        lines += ["Nothing is discarded:", ""] + [f"- {gap}" for gap in p.plan.gaps] + [""]
    elif p.save_files:
        lines += [
            "| save file | on the partition | copies in the store | why no restore needs it |",
            "|---|---|---|---|",
        ]
        for f in p.save_files:
            copies = ", ".join(f"`{c.key}` ({size(c.size_bytes)})" for c in f.copies) or "none"
            on_host = "yes" if f.on_host else "no (gone already: its copies go)"
            lines.append(f"| {f.path} | {on_host} | {copies} | {f.why} |")
        lines.append("")
    if p.leftover_copies:
        lines += ["Copies still in the backup store of save files discarded earlier:", ""]
        lines += [f"- `{c.key}` ({c.save_file}, {size(c.size_bytes)})" for c in p.leftover_copies] + [""]
    lines += [f"- {note}" for note in p.plan.notes]
    return [*lines, ""]


def next_after_summary(summary: ExpirySummary, dry_run: bool) -> str | None:
    """The approval gate when there is anything to delete and this is no dry run; otherwise nothing (the report runs
    whatever happened)."""
    if dry_run or not summary.anything_to_delete:
        return None
    return "approve"


# --- execute ------------------------------------------------------------------------------------------------------


def scrub_store(settings: Settings) -> str:
    """The backup store's weekly scrub (mqjournal.scrub), after the expiry deleted what goes: its report, or
    CopiesMismatched (the task fails, and the run with it) when a copy no longer matches."""
    result = scrub(
        BackupStore.from_settings(settings),
        Catalog(settings.catalog_url),
        every=settings.scrub.every,
        max_bytes=settings.scrub.max_bytes,
    )
    log.info("%s", result.text())
    result.check()
    return result.text()


def execute_one(settings: Settings, proposal: ExpiryProposal, run_id: str, policy: Policy) -> ExpiryOutcome:
    """`execute_on` over a session of its own when its plan runs anything on the partition (one queue manager)."""
    if not runs_on_host(proposal):
        return execute_on(None, settings, proposal, run_id, policy)
    with host_session(settings, proposal.target.host) as session:
        return execute_on(session, settings, proposal, run_id, policy)


def runs_on_host(proposal: ExpiryProposal) -> bool:
    """Whether the approved plan has anything to run on the partition; without, only the store's copies go."""
    return bool(proposal.plan.steps) and not proposal.plan.gaps


def execute_on(
    session: IbmiSession | None, settings: Settings, proposal: ExpiryProposal, run_id: str, policy: Policy
) -> ExpiryOutcome:
    """Run one approved expiry plan on its partition, then delete the copies of what it discarded from the store.

    The RecoveryExecutor makes the plan again on the live host first and refuses (nothing run) when it has gaps now
    or needs a step the approver did not see. A refusal or a failed step is reported in `failure`; the copies of
    whatever was discarded before it are still deleted from the store. `session` is None when the plan runs nothing
    on the partition (runs_on_host).
    """
    target = proposal.target
    catalog = Catalog(settings.catalog_url)
    store = BackupStore.from_settings(settings)
    planned = {f.path for f in proposal.save_files}
    discarded_before = catalog.discarded_save_files(target.host) & planned
    host_part: dict[str, Any] = {}
    if session is not None and runs_on_host(proposal):
        routes = DownloadRoutes(settings.data_folder)  # as the maintenance DAG's steps: the doctor's record
        host_part = _expire_on_host(session, proposal, run_id, policy, catalog, store, routes)
    removed = store_expiry.expire_copies(
        catalog,
        store,
        host=target.host,
        qmgr=target.qmgr,
        approved=proposal.approved_keys,
        audit=AuditLog(settings.store_audit_log),
    )
    outcome = ExpiryOutcome(
        target=target.key,
        discarded=sorted((catalog.discarded_save_files(target.host) & planned) - discarded_before),
        store_deleted=removed.deleted,
        store_freed_bytes=removed.freed_bytes,
        store_kept_as_versions=removed.kept_as_versions,
        store_already_gone=removed.already_gone,
        store_failed=removed.failed,
        store_not_approved=removed.not_approved,
        store_elsewhere=removed.elsewhere,
        **host_part,
    )
    log.info("%s: %s", target.key, json.dumps(outcome.to_xcom()))
    return outcome


def execute_batch(
    settings: Settings, proposals: Sequence[ExpiryProposal], run_id: str, policy: Policy
) -> BatchResult[ExpiryOutcome]:
    """The approved plans of a batch of hosts, over sessions only to the hosts whose plans run anything there. A
    queue manager whose expiry stopped or left a copy in the store is among the failures, by name, with its outcome
    still among the done ones (the report shows what it did)."""
    by_key = {p.target.key: p for p in proposals}
    done = run_where_needed(
        settings,
        HostBatch(targets=[p.target for p in proposals]),
        lambda t: runs_on_host(by_key[t.key]),
        lambda session, t: execute_on(session, settings, by_key[t.key], run_id, policy),
        lambda t: execute_on(None, settings, by_key[t.key], run_id, policy),
        doing="expire the backups",
    )
    for key, outcome in done.done.items():
        if problems := outcome_problems(outcome):
            done.failures[by_key[key].target.label] = problems
    return done


def _expire_on_host(
    session: IbmiSession,
    proposal: ExpiryProposal,
    run_id: str,
    policy: Policy,
    catalog: Catalog,
    store: BackupStore,
    routes: DownloadRoutes,
) -> dict[str, Any]:
    """The executor's run, as ExpiryOutcome fields: what it ran, or why it stopped and what it ran before."""
    target = proposal.target
    try:
        result = RecoveryExecutor(
            session,
            target.target,
            target.host,
            target.tz,
            catalog,
            run_id,
            store,
            routes=routes,
            policy=policy,
        ).execute(proposal.plan)
    except StepFailed as exc:
        return {"steps": [f"{d.outcome}: {d.command}" for d in exc.done], "failure": str(exc)}
    except MqJournalError as exc:  # went stale, has gaps now, the host dropped or busy: nothing was run
        return {"failure": str(exc)}
    return _ran(result)


def _ran(result: RecoveryResult) -> dict[str, Any]:
    return {
        "steps": [f"{d.outcome}: {d.command}" for d in result.done],
        "skipped": result.skipped,
        "reconciled": result.reconciled,
    }


def outcome_problems(outcome: ExpiryOutcome) -> str | None:
    """Why a queue manager's expiry failed, in one line; None when it did not."""
    if not outcome.failed:
        return None
    problems = [outcome.failure] if outcome.failure else []
    problems += [f"the copy {key} is still in the backup store: {why}" for key, why in outcome.store_failed]
    return "; ".join(problems)


# --- report -------------------------------------------------------------------------------------------------------


def outcome_line(
    dry_run: bool,
    summary: ExpirySummary | None,
    approval: dict[str, Any] | None,
    outcomes: Sequence[ExpiryOutcome],
    approve_state: str | None = None,
    answer: dict[str, Any] | None = None,
) -> str:
    """One line for the report: what the run decided, and who decided it (`answer`: the gate's answer as
    NamedApproval left it, which names who rejected)."""
    if summary is None:
        return "failed before a proposal was made: nothing was deleted"
    if dry_run:
        return "dry run: proposal only, nothing deleted"
    if not summary.anything_to_delete:
        return "nothing to delete: no approval was needed"
    who, refusal = gate_answer(approval, approve_state, answer=answer)
    if who is None:
        return refusal
    discarded = sum(len(o.discarded) for o in outcomes)
    copies = sum(len(o.store_deleted) for o in outcomes)
    failed = [o.target for o in outcomes if o.failed]
    tail = f"; failed on {', '.join(failed)} (see below)" if failed else ""
    return f"approved by {who}: {discarded} save file(s) discarded, {copies} copies deleted from the store{tail}"


def write_report(
    settings: Settings, run_id: str, summary: ExpirySummary | None, outcomes: Sequence[ExpiryOutcome], outcome: str
) -> str:
    """The run's report: the outcome, the proposal as the gate showed it, what each queue manager's expiry did."""
    lines = [f"# mq_journal_backup_expiry {run_id}", "", f"Outcome: {outcome}", ""]
    if summary is not None:
        lines += ["## Proposal", "", summary.body, ""]
    if outcomes:
        lines += ["## Done", ""]
        for o in sorted(outcomes, key=lambda o: o.target):
            done = {k: v for k, v in o.to_xcom().items() if k != "target" and v}
            lines.append(f"- `{o.target}`: {json.dumps(done)}")
        lines.append("")
    text = "\n".join(lines)
    path = settings.expiry_report_file(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def report(
    settings: Settings,
    run_id: str,
    *,
    dry_run: bool,
    summary: object,
    outcomes: object,
    approval: dict[str, Any] | None,
    approve_state: str | None,
    answer: dict[str, Any] | None = None,
) -> str:
    """The report task: what the run's tasks pushed (each may be missing when its task did not run), the outcome
    line, and the report file written. Returns the Markdown text."""
    proposal = ExpirySummary.from_xcom(summary) if summary is not None else None
    done = [ExpiryOutcome.from_xcom(o) for o in mapped_results(outcomes)]
    outcome = outcome_line(dry_run, proposal, approval, done, approve_state, answer)
    text = write_report(settings, run_id, proposal, done, outcome)
    # The run's note in the grid (mqjournal.airflow.notes), as the maintenance run's.
    settings.expiry_note_file(run_id).write_text(outcome, encoding="utf-8")
    log.info("%s", text)
    return text
