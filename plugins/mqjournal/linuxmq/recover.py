"""Recover a Linux queue manager's log on its host (#32): read what the host shows, plan (linuxmq/recovery.py), and
carry out an approved plan, every command through the session (audited: intent before, outcome after).

Reading, right before each plan (the approval waits, and the host changes meanwhile):
1. `dspmq -m QM`: whether it runs (a name dspmq does not know is refused, listing the ones it knows);
2. qm.ini's Log: stanza (dspmqinf, cat): the log's type and path;
3. running: `DISPLAY QMSTATUS` for CURRLOG, RECLOG, MEDIALOG and LOGPATH; not running: its last snapshot's points;
4. `ls -l <active>`: the extents there now;
5. media of a queue: `DISPLAY QSTATUS('Q') TYPE(QUEUE) MEDIALOG`, the queue's own first needed extent;
6. the catalog's copies of the missing extents, each proven again in the store (ExtentStore.still_holds).
Running: the plan is made again and only steps the approved plan has are run (so a rerun after a partial restore
puts back only the rest); each extent is uploaded and proven by the host's own SHA-256 (linuxmq/restore.py), then
strmqm or rcrmqobj, each judged by its exit status and then by what the host shows (dspmq Running; the queue's
status shown, not AMQ8149S); at the end the queue manager's status is read again.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mqjournal.catalog import Catalog, StoredExtent
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.transport import CommandOutput, IbmiSession, OutcomeUnknown, TransportError
from mqjournal.linuxmq import collector, commands
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.platforms import LINUX, HostPlatform
from mqjournal.linuxmq.qmstatus import QmStatusError, log_points, queue_media_log
from mqjournal.linuxmq.readings import ReadingError, queue_manager_names, queue_manager_running
from mqjournal.linuxmq.recovery import (
    LinuxAction,
    LinuxRecoveryPlan,
    LinuxRecoveryRequest,
    LinuxStep,
    LogState,
    missing_extents,
    plan_linux_recovery,
    refuse_unrunnable,
    steps_to_run,
)
from mqjournal.linuxmq.restore import RestoreError, restore_extent
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from mqjournal.recovery.connect import UnknownQueueManager
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.restore import RecoveryRefused

__all__ = [
    "LinuxRecovery",
    "LinuxRecoveryResult",
    "LinuxStepDone",
    "LinuxStepFailed",
    "proven_copies",
    "read_log_state",
]

log = logging.getLogger(__name__)
_AMQ = re.compile(r"\b(AMQ\d{4}[IWES])\b")
RC_UNKNOWN_QMGR = 72  # dspmq of a name it does not know (mq-ansible)
RC_ALREADY_RUNNING = 5  # strmqm of a running queue manager (mq-ansible)
_RERUN = "fix the cause, then trigger the recovery again: it reads the host again and puts back only what is missing"


class LinuxStepDone(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: LinuxAction
    command: str
    outcome: str = Field(description="done, or already done when the host showed it done instead")
    messages: list[str] = Field(default_factory=list)


class LinuxRecoveryResult(BaseModel):
    """What an execution did: the plan that ran (made on the live host), its steps, and the status read after."""

    model_config = ConfigDict(frozen=True)

    platform: Literal["linux"] = "linux"  # tells it from a partition's RecoveryResult in the execute task's XCom
    plan: LinuxRecoveryPlan
    done: list[LinuxStepDone]
    skipped: list[str] = Field(description="approved steps the live host no longer needed")
    status_after: str = Field(description="the queue manager's status read again at the end")

    def markdown(self) -> str:
        r = self.plan.request
        lines = [f"## Recovery of {r.qmgr} on {r.host}: {len(self.done)} step(s) run", ""]
        lines += [f"- {d.outcome}: `{d.command}`" for d in self.done]
        lines += [f"- already done before this run: `{text}`" for text in self.skipped]
        lines += [f"- afterwards: {self.status_after}"]
        return "\n".join(lines) + "\n"


class LinuxStepFailed(MqJournalError):
    """A step failed or could not be confirmed; the steps before it were done (`done`), none after it was run."""

    def __init__(self, obj: str, problem: str, action: str, *, done: list[LinuxStepDone], msg_id: str | None = None):
        self.done = list(done)
        super().__init__(obj, problem, action, msg_id=msg_id)


def _said(out: CommandOutput) -> str:
    lines = [line.strip() for line in (out.stdout + "\n" + out.stderr).splitlines() if line.strip()]
    return " / ".join(line for line in lines if _AMQ.search(line)) or (lines[-1] if lines else "no output")


# --- reading the host -----------------------------------------------------------------------------------------------


def _running(session: IbmiSession, request: LinuxRecoveryRequest, bin_dir: str, platform: HostPlatform) -> bool:
    out = session.run(platform.queue_manager_status(bin_dir, request.qmgr))
    try:
        return queue_manager_running(out.stdout, request.qmgr)
    except ReadingError:
        if out.exit_status != RC_UNKNOWN_QMGR:
            raise RecoveryRefused(
                f"{request.qmgr} on {request.host}",
                f"dspmq answered with status {out.exit_status}: {_said(out)}",
                "check that the user is in group mqm and that mq_bin in the fleet file is the installation's",
            ) from None
    known = queue_manager_names(session.run(platform.list_queue_managers(bin_dir)).stdout)
    raise UnknownQueueManager(
        f"{request.qmgr} on {request.host}",
        "dspmq does not know this queue manager",
        f"check the spelling (MQ names are case-sensitive); the queue managers of {request.host} are "
        + (", ".join(known) or "none"),
    )


def read_log_state(
    session: IbmiSession,
    request: LinuxRecoveryRequest,
    *,
    bin_dir: str,
    last: LinuxSnapshot | None,
    platform: HostPlatform = LINUX,
) -> LogState:
    """What the host shows of the queue manager's log now (and, when it does not run, its last snapshot's points)."""
    running = _running(session, request, bin_dir, platform)
    config = collector.log_configuration(session, request.qmgr, bin_dir=bin_dir, platform=platform)
    if not config.linear:
        raise RecoveryRefused(
            f"{request.qmgr} on {request.host}",
            f"its log is {config.log_type.lower()}: MQ keeps no extents a restore could bring back one by one",
            "restore the queue manager from a backup of its data and log directories",
        )
    current = restart = media = None
    if running:
        found = collector.log_status(session, request.qmgr, bin_dir=bin_dir, platform=platform)
        try:
            points = log_points(found)
        except QmStatusError as exc:
            raise RecoveryRefused(f"{request.qmgr} on {request.host}", f"DISPLAY QMSTATUS: {exc}", _RERUN) from exc
        current, restart, media = points.current.name, points.restart.name, points.media.name
        log_path = found.get("LOGPATH") or platform.active_log_path(config.log_path)
        points_from = "DISPLAY QMSTATUS now"
    else:
        log_path = platform.active_log_path(config.log_path)
        points_from = "no snapshot of it (it does not run, and has not been collected)"
        if last is not None and last.points() is not None:
            current, restart, media = last.current_extent, last.restart_extent, last.media_extent
            points_from = f"its last snapshot (run {last.run_id}, collected {last.collected_at.isoformat()})"
    listed = collector.log_extents(session, request.qmgr, log_path, platform=platform)
    # Every extent of a queue manager has the size LogFilePages gives (fixed at crtmqm, q018470): a closed extent
    # shorter than the others is none MQ can replay but what an upload cut short left (its worker killed before it
    # could take it back). Planned as missing, it is put back from its copy, over that file (restore_extent). The
    # current extent, which MQ may still be allocating, is taken as listed.
    whole = max((e.size_bytes for e in listed), default=0)
    on_disk = [e.name for e in listed if e.size_bytes == whole or e.name == current]
    object_media, object_media_from = None, ""
    if request.kind is RecoveryKind.MEDIA and running and request.object is not None:
        object_media, object_media_from = _object_media(session, request, bin_dir, platform)
    return LogState(
        read_at=datetime.now(UTC),
        running=running,
        log_path=log_path,
        extent_bytes=config.extent_bytes,
        current=current,
        restart=restart,
        media=media,
        points_from=points_from,
        on_disk=on_disk,
        object_media=object_media,
        object_media_from=object_media_from,
    )


def _object_media(
    session: IbmiSession, request: LinuxRecoveryRequest, bin_dir: str, platform: HostPlatform
) -> tuple[str | None, str]:
    """The object's own first needed extent, and how it was found (or why the queue manager's MEDIALOG is used)."""
    fallback = "the queue manager's MEDIALOG, the oldest any object's media recovery needs, is used"
    if not request.object_is_queue:
        return None, f"MQ shows a media recovery extent of queues only (DISPLAY QSTATUS MEDIALOG): {fallback}"
    assert request.object is not None
    out = session.run(platform.display_queue_media_log(bin_dir, request.qmgr, request.object))
    try:
        own = queue_media_log(out.stdout)
    except QmStatusError as exc:
        return None, f"DISPLAY QSTATUS({request.object}) shows no MEDIALOG ({exc}): {fallback}"
    return own.name, f"DISPLAY QSTATUS({request.object}) MEDIALOG"


def proven_copies(
    catalog: Catalog, store: ExtentStore, request: LinuxRecoveryRequest, state: LogState
) -> tuple[list[StoredExtent], dict[str, str]]:
    """The catalog's copies of the queue manager's extents, and of those of the missing extents, each that the store
    no longer proves (its key, and why): a copy counts when it proves now, not when it was made."""
    copies = catalog.extent_copies(request.host, request.qmgr)
    wanted = set(missing_extents(request, state))
    unproven = {}
    for copy in copies:
        if copy.extent in wanted and (problem := store.still_holds(copy)) is not None:
            unproven[copy.key] = problem
    return copies, unproven


# --- planning and running -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinuxRecovery:
    """Plans and runs the recovery of one queue manager's log on the host of `session`."""

    session: IbmiSession
    bin_dir: str
    catalog: Catalog
    store: ExtentStore
    last: LinuxSnapshot | None = None  # its newest snapshot: the log points of a queue manager that does not run
    platform: HostPlatform = LINUX  # the host's: how its log directory is listed and its extents digested

    def plan(self, request: LinuxRecoveryRequest) -> LinuxRecoveryPlan:
        state = read_log_state(self.session, request, bin_dir=self.bin_dir, last=self.last, platform=self.platform)
        copies, unproven = proven_copies(self.catalog, self.store, request, state)
        return plan_linux_recovery(
            request, state, copies, bin_dir=self.bin_dir, unproven=unproven, platform=self.platform
        )

    def execute(self, approved: LinuxRecoveryPlan) -> LinuxRecoveryResult:
        """Plan again, then run what the approved plan has. Raises PlanHasGaps/PlanWentStale (nothing run) or
        LinuxStepFailed."""
        refuse_unrunnable(approved, host=self.session.host)
        fresh, skipped = steps_to_run(approved, self.plan(approved.request))
        for text in skipped:
            log.info("%s %s: already done, skipped: %s", self.session.host, approved.request.qmgr, text)
        done: list[LinuxStepDone] = []
        for number, step in enumerate(fresh.steps, start=1):
            where = f"{self.session.host} {approved.request.qmgr}"
            log.info("%s: step %d/%d: %s", where, number, len(fresh.steps), step.text)
            done.append(self._run(fresh, step, number, done))
        return LinuxRecoveryResult(plan=fresh, done=done, skipped=skipped, status_after=self._status(fresh.request))

    def _run(self, plan: LinuxRecoveryPlan, step: LinuxStep, number: int, done: list[LinuxStepDone]) -> LinuxStepDone:
        r = plan.request

        def failed(problem: str, action: str = _RERUN, msg_id: str | None = None) -> LinuxStepFailed:
            before = "; ".join(f"`{d.command}`" for d in done) or "nothing"
            return LinuxStepFailed(
                f"{r.qmgr} on {r.host}",
                f"step {number} of {len(plan.steps)}, `{step.text}`: {problem}. Done before it: {before}",
                action,
                done=done,
                msg_id=msg_id,
            )

        if step.action is LinuxAction.PUT_EXTENT:
            assert step.stored is not None
            try:
                restore_extent(
                    self.session,
                    active=plan.state.log_path,
                    copy=step.stored,
                    store=self.store,
                    platform=self.platform,
                )
            except (RestoreError, TransportError) as exc:
                raise failed(exc.problem, exc.action, exc.msg_id) from None
            return LinuxStepDone(
                action=step.action,
                command=step.text,
                outcome="done",
                messages=[f"the host's SHA-256 is the copy's: {step.stored.sha256}"],
            )
        # Each command is built again from the validated request, never from the step's text.
        if step.action is LinuxAction.START_QMGR:
            return self._start(step, r.qmgr, failed)
        return self._recreate(step, r.qmgr, failed)

    def _start(self, step: LinuxStep, qmgr: str, failed: Callable[..., LinuxStepFailed]) -> LinuxStepDone:
        try:
            out = self.session.run(self.platform.start_queue_manager(self.bin_dir, qmgr))
        except OutcomeUnknown as lost:
            if self._runs(qmgr):
                return LinuxStepDone(action=step.action, command=step.text, outcome="done (dspmq shows it running)")
            raise failed("the connection dropped while it ran, and dspmq does not show it running") from lost
        except TransportError as exc:
            raise failed(f"it could not be sent: {exc.problem}", exc.action, exc.msg_id) from None
        messages = _AMQ.findall(out.stdout + out.stderr)
        if out.exit_status == RC_ALREADY_RUNNING:
            return LinuxStepDone(action=step.action, command=step.text, outcome="already done", messages=messages)
        if out.exit_status != 0:
            missing = "AMQ6767" in "".join(messages)
            raise failed(
                f"it ended with status {out.exit_status}: {_said(out)}",
                "an extent it needs is still missing: plan the startup recovery again (it reads the directory "
                "again); " + _RERUN
                if missing
                else "read the queue manager's error log (AMQERR01.LOG); " + _RERUN,
                "AMQ6767" if missing else None,
            )
        if not self._runs(qmgr):
            raise failed("it ended with status 0, but dspmq does not show the queue manager running")
        return LinuxStepDone(action=step.action, command=step.text, outcome="done", messages=messages)

    def _recreate(self, step: LinuxStep, qmgr: str, failed: Callable[..., LinuxStepFailed]) -> LinuxStepDone:
        assert step.object is not None and step.object_type is not None
        try:
            out = self.session.run(self.platform.recreate_object(self.bin_dir, qmgr, step.object_type, step.object))
        except OutcomeUnknown as lost:
            if step.object_type in commands.QUEUE_TYPES and self._queue_shown(qmgr, step.object):
                return LinuxStepDone(action=step.action, command=step.text, outcome="done (its status is shown)")
            raise failed("the connection dropped while it ran, and the host does not show it re-created") from lost
        except TransportError as exc:
            raise failed(f"it could not be sent: {exc.problem}", exc.action, exc.msg_id) from None
        messages = _AMQ.findall(out.stdout + out.stderr)
        if out.exit_status != 0:
            raise failed(
                f"it ended with status {out.exit_status}: {_said(out)}",
                "read the queue manager's error log (AMQERR01.LOG) for the object; " + _RERUN,
                "AMQ6767" if "AMQ6767" in "".join(messages) else None,
            )
        if step.object_type in commands.QUEUE_TYPES and not self._queue_shown(qmgr, step.object):
            raise failed("it ended with status 0, but DISPLAY QSTATUS still shows the queue damaged (AMQ8149S)")
        return LinuxStepDone(action=step.action, command=step.text, outcome="done", messages=messages)

    def _runs(self, qmgr: str) -> bool:
        out = self.session.run(self.platform.queue_manager_status(self.bin_dir, qmgr))
        try:
            return queue_manager_running(out.stdout, qmgr)
        except ReadingError:
            return False

    def _queue_shown(self, qmgr: str, queue: str) -> bool:
        out = self.session.run(self.platform.display_queue_media_log(self.bin_dir, qmgr, queue))
        try:
            queue_media_log(out.stdout)
        except QmStatusError:
            return False
        return True

    def _status(self, request: LinuxRecoveryRequest) -> str:
        """The queue manager's status read again: dspmq, and its log points when it runs."""
        if not self._runs(request.qmgr):
            return "dspmq does not show the queue manager running"
        try:
            points = log_points(
                collector.log_status(self.session, request.qmgr, bin_dir=self.bin_dir, platform=self.platform)
            )
        except (QmStatusError, MqJournalError) as exc:
            return f"running; DISPLAY QMSTATUS could not be read ({exc})"
        return (
            f"running: CURRLOG {points.current.name}, RECLOG {points.restart.name}, MEDIALOG {points.media.name} "
            "(DISPLAY QMSTATUS)"
        )
