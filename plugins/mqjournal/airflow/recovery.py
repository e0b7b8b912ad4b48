"""The recovery DAG's steps as plain functions: the DAG file only wires them; tests call them directly.

The plan travels through XCom as JSON (it is small: one queue manager's steps; RecoveryPlanMade says what it
holds); the approval gate shows its Markdown. Execution re-makes the plan on the live host and runs only steps the
approver saw. A Linux host of the fleet file (#32) is planned and run by airflow/linuxrecovery.py; its values
(LinuxRecoveryPlanMade, LinuxRecoveryResult) answer the gate, the refusal and the report as a partition's do.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from mqjournal.airflow import linuxrecovery
from mqjournal.airflow.gate import gate_answer
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import (
    JournalTarget,
    LinuxRecoveryPlanMade,
    PartitionTimeZone,
    RecoveryPlanMade,
    recovery_plan_made,
)
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.datafolder import DataPath
from mqjournal.errors import InvalidName, MqJournalError
from mqjournal.fleet import QueueManagerConfig, load_fleet
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.readings import PartitionZone
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxmq.recover import LinuxRecoveryResult
from mqjournal.recovery import connect
from mqjournal.recovery.execute import RecoveryExecutor, RecoveryResult
from mqjournal.recovery.gather import clusters_of, gather, locate
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Request
from mqjournal.recovery.planner import plan_recovery
from mqjournal.snapshot import snapshots_of

log = logging.getLogger(__name__)

PlanMade = RecoveryPlanMade | LinuxRecoveryPlanMade
Result = RecoveryResult | LinuxRecoveryResult


class RecoveryBlocked(MqJournalError):
    """The plan has gaps: nothing was sent to the host but reads."""


def request_from(params: Mapping[str, Any], tz: PartitionZone) -> Request:
    """The trigger form as a validated request; a timestamp without an offset is the host's local time, read with the
    offset in force then (AMQ7432's time, copied from the partition)."""
    needed_at = None
    if params.get("timestamp"):
        needed_at = datetime.fromisoformat(str(params["timestamp"]).replace(" ", "T"))
        if needed_at.tzinfo is None:
            needed_at = tz.aware(needed_at)
    return Request(
        host=params["host"],
        qmgr=params["qmgr"],
        kind=RecoveryKind(params["kind"]),
        needed_at=needed_at,
        object=params.get("object") or None,
        object_type=params.get("object_type") or "*ALL",
        threshold_kb=params.get("threshold_kb") or None,
    )


def setup_from_form(settings: Settings, host: str, qmgr: str) -> connect.Setup:
    """The trigger form's host and queue manager as `mqjournal recover` takes them (connect.setup), refused here,
    before any lease or SSH, when the fleet file does not have the host (its hosts listed) or the name is one whose
    library cannot be derived and the fleet file does not name (the host's queue managers there listed). A name the
    fleet file lists for the host in another case is that queue manager (`payroll` is PAYROLL), as the CLI takes it."""
    try:
        return connect.setup(settings.fleet_file, host, qmgr, settings.catalog_url, settings.audit_log)
    except InvalidName as exc:
        # Most often a typo (`test` for TEST): the names the admin may have meant help more than the rule alone.
        listed = [q.name for q in load_fleet(settings.fleet_file).host(host).queue_managers]
        known = ", ".join(listed) if listed else "none: it leaves them to discovery (see the host's mqs.ini)"
        raise InvalidName(
            f"{qmgr} on {host}",
            exc.problem,
            f"check the spelling (names are case-sensitive); the fleet file's queue managers for {host}: {known}. "
            f"For a queue manager of that exact name, {exc.action}",
        ) from None


def confirm_queue_manager(settings: Settings, setup: connect.Setup, session: IbmiSession) -> QueueManagerConfig:
    """The queue manager as `mqjournal recover` confirms it; UnknownQueueManager, naming it and listing the ones known
    for the host, before anything is planned.

    The session connects on its first command only: a queue manager the fleet file or the snapshots know costs no
    SSH; any other costs one read of the host's mqs.ini, which is how a host left to discovery knows its own."""
    return connect.confirm_queue_manager(setup, session, settings.snapshots).qmgr


def _clusters(settings: Settings, host: str, qmgr: str) -> list:
    """The fleet file's clusters of the queue manager; none for one it does not list (as `mqjournal recover`)."""
    listed = next((q for q in load_fleet(settings.fleet_file).host(host).queue_managers if q.name == qmgr), None)
    return clusters_of(listed)


def _plan_file(settings: Settings, run_id: str) -> DataPath:
    return settings.recovery_plan_file(run_id)


def plan_made(value: object) -> PlanMade:
    """The plan task's XCom value, of either platform."""
    return recovery_plan_made(value)


def result_made(value: object) -> Result:
    """The execute task's XCom value, of either platform."""
    if isinstance(value, dict) and value.get("platform") == "linux":
        return LinuxRecoveryResult.model_validate(value)
    return RecoveryResult.model_validate(value)


def make_plan(settings: Settings, params: Mapping[str, Any], run_id: str) -> PlanMade:
    linux = linuxrecovery.linux_host_of(settings, params["host"])
    if linux is not None:
        return linuxrecovery.make_plan(settings, params, run_id, linux)
    setup = setup_from_form(settings, params["host"], params["qmgr"])
    with host_session(settings, params["host"]) as session:
        # A mistyped name must not be planned as a queue manager whose library is lost.
        qm = confirm_queue_manager(settings, setup, session)
        target, tz = locate(session, params["host"], qm, time_zone_rules=setup.host.time_zone_rules)
        # The queue manager as the fleet file or the host spells it, whatever case the form gave.
        request = request_from({**params, "qmgr": qm.name}, tz)
        inputs = gather(
            session,
            target,
            host=params["host"],
            tz=tz,
            catalog=setup.catalog,
            request=request,
            clusters=clusters_of(qm),
            run_id=run_id,
            store=BackupStore.from_settings(settings),
            earlier=snapshots_of(settings.snapshots, params["host"], target.library),
        )
        plan = plan_recovery(inputs)
    path = _plan_file(settings, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan.model_dump_json(indent=2), encoding="utf-8")
    log.info("%s", plan.markdown())
    offset = tz.offset_on(datetime.now(UTC))
    return RecoveryPlanMade(
        plan=plan,
        body=plan.markdown(),
        executable=plan.executable,
        target=JournalTarget.of(target),
        utc_offset_minutes=int(offset.total_seconds() // 60),
        time_zone=PartitionTimeZone.of(tz),
    )


def next_after_plan(made: PlanMade) -> list[str]:
    """The branch after planning: gaps fail the run, nothing to do needs no approval, anything else does.

    The report is always followed (a branch would skip it otherwise); it waits for whatever else runs.
    """
    if made.plan.gaps:
        return ["blocked", "report"]
    return ["approve", "report"] if made.executable else ["report"]


def refuse(made: PlanMade) -> None:
    """Fail the run before the gate: say what is missing and what to do."""
    plan = made.plan
    raise RecoveryBlocked(
        f"{plan.request.kind.value} recovery of {plan.request.qmgr} on {plan.request.host}",
        "the plan has gaps: " + " | ".join(str(g) for g in plan.gaps),
        "resolve each gap as it says, then trigger the recovery again; nothing was changed on the host",
    )


def execute(settings: Settings, made: PlanMade, run_id: str) -> Result:
    if isinstance(made, LinuxRecoveryPlanMade):
        host = linuxrecovery.linux_host_of(settings, made.plan.request.host)
        if host is None:
            raise ValueError(f"host {made.plan.request.host!r} is no longer a Linux host of {settings.fleet_file}")
        return linuxrecovery.execute(settings, made, host)
    approved = made.plan
    clusters = _clusters(settings, approved.request.host, approved.request.qmgr)
    with host_session(settings, approved.request.host) as session:
        result = RecoveryExecutor(
            session,
            made.target.target,
            approved.request.host,
            made.tz,
            Catalog(settings.catalog_url),
            run_id,
            BackupStore.from_settings(settings),
            routes=DownloadRoutes(settings.data_folder),  # as the maintenance DAG's steps: the doctor's record
            clusters=tuple(clusters),
        ).execute(approved)
    log.info("%s", result.markdown())
    return result


def outcome_line(
    made: PlanMade | None,
    result: Result | None,
    approval: dict[str, Any] | None = None,
    approve_state: str | None = None,
    answer: dict[str, Any] | None = None,
) -> str:
    """One line for the report and the run's note: what the run did, and who approved or rejected it."""
    if made is None:
        return "failed before a plan was made: nothing was changed"
    plan = made.plan
    if plan.gaps:
        return "blocked by gaps: nothing was changed"
    if not plan.steps:
        return "nothing to do: no approval was needed, nothing was changed"
    who, refusal = gate_answer(approval, approve_state, answer=answer, nothing="nothing was changed")
    if who is None:
        return refusal
    if result is None:
        return f"approved by {who}, but the execution failed: see the execute task's log"
    return f"approved by {who}: executed: {len(result.done)} step(s) run, verified"


def write_report(
    settings: Settings,
    run_id: str,
    made: PlanMade | None,
    result: Result | None,
    *,
    approval: dict[str, Any] | None = None,
    approve_state: str | None = None,
    answer: dict[str, Any] | None = None,
) -> str:
    """The run's report (Markdown), and its outcome line beside it for the run's note (Settings.recovery_note_file).
    Returns the report's path."""
    outcome = outcome_line(made, result, approval, approve_state, answer)
    lines = [f"# mq_journal_recovery {run_id}", "", f"Outcome: {outcome}", ""]
    responded = approval or answer or {}
    if responded.get("responded_by_user"):
        who = responded["responded_by_user"].get("name", "?")
        verb = "Approved" if "Approve" in (responded.get("chosen_options") or []) else "Rejected"
        when = f" at {responded['responded_at']}" if responded.get("responded_at") else ""
        lines += [f"{verb} by {who}{when}.", ""]
    if made is not None:
        lines += ["## Plan", "", made.plan.markdown()]
        if result is not None:
            lines += ["## Execution", ""]
            lines += [f"- {d.outcome}: `{d.command}`" for d in result.done]
            lines += [f"- already done before this run: `{text}`" for text in result.skipped]
            if isinstance(result, LinuxRecoveryResult):
                lines.append(f"- afterwards: {result.status_after}")
    text = "\n".join(lines) + "\n"
    path = settings.recovery_report_file(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    settings.recovery_note_file(run_id).write_text(outcome, encoding="utf-8")
    log.info("%s", text)
    return str(path)
