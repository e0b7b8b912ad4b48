"""Carry out an approved recovery plan on its partition: re-check it on the live host, run it, verify every step.

A plan waits for approval, and the host changes meanwhile. So right before running, the inputs are gathered again
and the plan is made again: if the fresh plan has gaps, or needs a step the approved one does not have, nothing is
run. Otherwise the fresh plan's steps run, in order; they are a subset of the approved ones, because whatever an
earlier attempt already did drops out of a plan made now. That is what makes a rerun after a failure safe.

Each command is judged by its exit status and its messages, then by what the host shows (the receiver is back with
its attach time, the journal exists, the save file is gone, ...). The first failure stops the run with an error
naming the step, the object, the message, what to do, and what was done before it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from mqjournal import timefmt
from mqjournal.catalog import Operation
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.context import HostContext
from mqjournal.ibmi.transport import OutcomeUnknown, TransportError
from mqjournal.names import qmgr_directory
from mqjournal.policy import Policy
from mqjournal.recovery import gather as gathering
from mqjournal.recovery.decisions import (
    associated,
    not_approved,
    refuse_unrunnable,
    started_since,
    step_key,
    steps_to_run,
)
from mqjournal.recovery.fromstore import upload_targets
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.outcome import ALREADY_RUNNING, ENTRY_NOT_AVAILABLE, Verdict, judge
from mqjournal.recovery.plan import RUN_BY_THE_EXECUTOR, Action, RecoveryPlan, Step
from mqjournal.recovery.planner import plan_recovery
from mqjournal.recovery.refusals import PlanHasGaps, PlanWentStale
from mqjournal.recovery.restore import amq7432_unread, latest_amq7432
from mqjournal.recovery.resume import restored, resume_library, resume_naming
from mqjournal.recovery.upload import OwnStepFailed, run_check, run_upload
from mqjournal.snapshot import ReceiverStatus, receivers_by_name

__all__ = [
    "PlanHasGaps",
    "PlanWentStale",
    "RecoveryExecutor",
    "RecoveryResult",
    "StepDone",
    "StepFailed",
    "step_key",
]

log = logging.getLogger(__name__)

_RERUN = "fix the cause, then run the recovery again: it re-checks the host first and skips what is done"


class StepFailed(MqJournalError):
    """A step failed or could not be confirmed; the steps before it were done (`done`), none after it was run."""

    def __init__(
        self,
        obj: str,
        problem: str,
        action: str,
        *,
        msg_id: str | None = None,
        step: Step | None = None,
        done: list[StepDone] | None = None,
    ) -> None:
        self.step = step
        self.done = list(done or [])
        super().__init__(obj, problem, action, msg_id=msg_id)


class StepDone(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    command: str
    outcome: str  # "done", or "already done" when the host showed it done before or instead of running it
    messages: list[str] = []


class RecoveryResult(BaseModel):
    """What an execution did: the plan that ran (made on the live host), its steps, what an earlier run had done."""

    model_config = ConfigDict(frozen=True)

    plan: RecoveryPlan
    done: list[StepDone]
    skipped: list[str]  # approved steps the live host no longer needed (done by an earlier attempt)
    reconciled: list[str] = []  # what an interrupted earlier step turned out to have done, from the host

    def markdown(self) -> str:
        lines = [
            f"## Recovery of {self.plan.request.qmgr} on {self.plan.request.host}: {len(self.done)} step(s) run",
            "",
        ]
        lines += [f"- {d.outcome}: `{d.command}`" for d in self.done]
        lines += [f"- already done before this run: `{text}`" for text in self.skipped]
        lines += [f"- reconciled: {text}" for text in self.reconciled]
        return "\n".join(lines) + "\n"


def describe(s: Step) -> str:
    """The object a step is about, as an admin looks it up."""
    a = s.args
    if s.action is Action.CREATE_JOURNAL:
        return f"journal {a['library']}/{a['journal']}"
    if "receiver" in a:
        return f"{a.get('qmgr_library') or a.get('library')}/{a['receiver']}"
    if s.action is Action.RESTORE_LIBRARY:
        return f"library {a['qmgr_library']} (from {a['save_library']}/{a['save_file']})"
    if s.action is Action.RESTORE_QMGR_DIRECTORY:
        return f"IFS directory {qmgr_directory(str(a['qmgr']))} (from {a['save_library']}/{a['save_file']})"
    if s.action in (Action.DELETE_SAVE_FILE, Action.DELETE_PARTIAL_UPLOAD, Action.CREATE_SAVE_FILE):
        return f"save file {a['library']}/{a['name']}"
    if s.action in (Action.UPLOAD_SAVE_FILE, Action.CHECK_SAVE_FILE):
        return f"save file {a['library']}/{a['name']} (from the backup store)"
    if s.action is Action.ASSOCIATE_RECEIVERS:
        return f"journal {a['library']}/{a['journal']}"
    if s.action is Action.RECREATE_OBJECT:
        return f"{a['obj']} ({a['objtype']}) of {a['qmgr']}"
    if a.get("cluster"):
        return f"queue manager {a['qmgr']} in cluster {a['cluster']}"
    return f"queue manager {a.get('qmgr', '?')}"


@dataclass(frozen=True)
class RecoveryExecutor(HostContext):
    """Runs an approved recovery plan on the queue manager it was made for."""

    clusters: tuple[str, ...] = ()  # the queue manager's clusters (fleet file): a restore refreshes each
    policy: Policy = field(default_factory=Policy)
    # Where a save file brought back from the backup store goes when its own library is not on the host.
    save_library: str = gathering.DEFAULT_SAVE_LIBRARY

    # --- before anything runs ------------------------------------------------------------------------------

    def recheck(self, approved: RecoveryPlan) -> tuple[RecoveryPlan, list[str]]:
        """The plan to run now (a subset of the approved one) and the approved steps no longer needed.

        Raises PlanHasGaps / PlanWentStale / RecoveryRefused; sends nothing that changes the host.
        """
        self.refuse_unrunnable(approved)
        inputs = gathering.gather(
            self.session,
            self.target,
            host=self.host,
            tz=self.tz,
            catalog=self.catalog,
            request=approved.request,
            clusters=self.clusters,
            run_id=self.run_id,
            store=self.store,
            save_library=self.save_library,
            upload_targets=upload_targets(approved),
        )
        return steps_to_run(approved, self._fresh_plan(approved, inputs), host=self.host)

    def refuse_unrunnable(self, approved: RecoveryPlan) -> None:
        """A plan for another queue manager, or with gaps, is refused before anything is sent."""
        refuse_unrunnable(approved, host=self.host, target=self.target)

    def _fresh_plan(self, approved: RecoveryPlan, inputs) -> RecoveryPlan:
        kind = approved.request.kind
        if kind is RecoveryKind.LIBRARY:
            found = gathering.probe(self.session, self.target, self.tz)
            if found.library_exists or inputs.snapshot is not None:
                return resume_library(
                    approved,
                    self.live(),
                    journal_exists=found.journal_exists,
                    save_files=inputs.save_files_on_host,
                    store=inputs.store,
                )
        fresh = plan_recovery(inputs, policy=self.policy)
        if kind is RecoveryKind.NAMING and inputs.snapshot is not None and not_approved(approved, fresh):
            return resume_naming(approved, inputs.snapshot) or fresh
        return fresh

    # --- running -------------------------------------------------------------------------------------------

    def execute(self, approved: RecoveryPlan) -> RecoveryResult:
        """Re-check, then run the plan. Raises PlanHasGaps/PlanWentStale (nothing run) or StepFailed."""
        self.refuse_unrunnable(approved)
        found = gathering.probe(self.session, self.target, self.tz)
        started = found.now
        # An interrupted earlier attempt (a killed worker, a lost answer) is explained from the host first, so the
        # catalog the re-plan reads is right (a DLTF that ran is a discarded save file).
        reconciled = self.reconciled(self.live()) if found.journal_exists else []
        fresh, skipped = self.recheck(approved)
        for text in skipped:
            log.info("%s/%s: already done, skipped: %s", self.host, self.target.qmgr, text)
        done: list[StepDone] = []
        for number, s in enumerate(fresh.steps, start=1):
            log.info("%s/%s: step %d/%d: %s", self.host, self.target.qmgr, number, len(fresh.steps), s.text)
            done.append(self._run(s, number, len(fresh.steps), done, started, approved))
        return RecoveryResult(plan=fresh, done=done, skipped=skipped, reconciled=reconciled)

    def _run(
        self, s: Step, number: int, total: int, done: list[StepDone], started: datetime, approved: RecoveryPlan
    ) -> StepDone:
        intent = self._intent(s)

        def failed(problem: str, action: str = _RERUN, msg_id: str | None = None) -> StepFailed:
            if intent is not None:
                self.catalog.finish(intent, "failed", problem)
            before = "; ".join(f"`{d.command}`" for d in done) or "nothing"
            return StepFailed(
                describe(s),
                f"step {number} of {total}, `{s.text}`: {problem}. Done before it: {before}",
                action,
                msg_id=msg_id,
                step=s,
                done=done,
            )

        if s.action in RUN_BY_THE_EXECUTOR:
            try:
                outcome, message = self._run_own(s)
            except OwnStepFailed as exc:
                raise failed(exc.problem, exc.action, exc.msg_id) from None
            except TransportError as exc:
                raise failed(f"the host could not be reached: {exc.problem}", exc.action, exc.msg_id) from None
            return StepDone(action=s.action, command=s.text, outcome=outcome, messages=[message])
        try:
            out = self.session.run(s.command(runner=self.session.sql_runner))
        except OutcomeUnknown as lost:
            # The answer was lost: the host says whether it happened.
            shown, problem = self._host_shows_done(s, started, approved)
            if shown:
                self._after(s, intent)
                return StepDone(
                    action=s.action, command=s.text, outcome="done (confirmed on the host after the connection dropped)"
                )
            raise failed(
                f"the connection dropped while it ran, and {problem}",
                "look at the host (job log, QMQMMSG), then run the recovery again: it re-checks the host",
            ) from lost
        except TransportError as exc:
            raise failed(f"it could not be sent: {exc.problem}", exc.action, exc.msg_id) from None

        verdict = judge(out, sql=s.action is Action.ASSOCIATE_RECEIVERS)
        messages = [f"{m.id}: {m.text}" for m in verdict.messages]
        if not verdict.ok:
            if s.action is Action.START_QMGR and ALREADY_RUNNING in verdict.ids:
                # Only a completed startup recovery pass leaves the queue manager running.
                return StepDone(action=s.action, command=s.text, outcome="already done", messages=messages)
            if ENTRY_NOT_AVAILABLE in verdict.ids:
                raise failed(*self._entry_missing(verdict, s), msg_id=ENTRY_NOT_AVAILABLE)
            shown, _ = self._host_shows_done(s, started, approved)
            if shown:
                self._after(s, intent)
                return StepDone(action=s.action, command=s.text, outcome="already done", messages=messages)
            raise failed(f"it failed with {verdict.failure}", _action_for(s), verdict.msg_id)

        shown, problem = self._host_shows_done(s, started, approved)
        if shown is False:
            raise failed(f"it reported success ({verdict.text()}) but {problem}", _action_for(s))
        self._after(s, intent)
        return StepDone(action=s.action, command=s.text, outcome="done", messages=messages)

    def _run_own(self, s: Step) -> tuple[str, str]:
        """A step that is not one command: the upload from the backup store, or the check of what it put there."""
        if s.action is Action.UPLOAD_SAVE_FILE:
            return run_upload(self.session, self.store, s)
        return run_check(self.session, s)

    def _intent(self, s: Step) -> Operation | None:
        """A step that destroys a backup is written to the catalog before it is sent (CatalogUnavailable stops it)."""
        if s.action is not Action.DELETE_SAVE_FILE:
            return None
        return self.catalog.begin(
            self.operation("discard", [], save_file_library=str(s.args["library"]), save_file=str(s.args["name"]))
        )

    def _after(self, s: Step, intent: Operation | None = None) -> None:
        """What the catalog must learn once the host shows a step done."""
        if s.action is Action.DELETE_SAVE_FILE:
            # Its saves are gone: a restore must no longer offer them.
            self.catalog.record_discarded(self.host, str(s.args["library"]), str(s.args["name"]), self.run_id)
        if intent is not None:
            self.catalog.finish(intent, "done", f"{s.text}: done")

    def _entry_missing(self, verdict: Verdict, s: Step) -> tuple[str, str]:
        # `system` prints AMQ7432 in the job's language and date format: the time is read from the replacement data
        # of the AMQ7432 on QMQMMSG instead (restore.latest_amq7432), never from the text.
        try:
            live = self.live()
            needed, unread = latest_amq7432(live), amq7432_unread(live)
        except (MqJournalError, TransportError):
            needed, unread = None, "QMQMMSG could not be read"
        when = self._host_time(needed) if needed else f"(not known: {unread})"
        return (
            f"{ENTRY_NOT_AVAILABLE}: the recovery pass still needs the journal entry of {when} (host time), which "
            "no readable receiver on the host holds",
            f"plan the {self.target.qmgr} {'media' if s.action is Action.RECREATE_OBJECT else 'startup'} recovery "
            "again (it restores from that time), or restore the receiver holding that entry by hand and associate it "
            "with the journal",
        )

    # --- what the host shows ---------------------------------------------------------------------------------

    def _host_shows_done(self, s: Step, started: datetime, approved: RecoveryPlan) -> tuple[bool | None, str]:
        """(True, "") when the host shows the step's effect, (False, why not), or (None, ...) when it cannot tell."""
        a, library, journal = s.args, self.target.library, self.target.journal
        if s.action is Action.RESTORE_RECEIVER:
            on_host = receivers_by_name(self.live(), library)
            if restored(s, on_host):
                return True, ""
            r = on_host.get(str(a["receiver"]))
            seen = (
                "it is not on the host"
                if r is None
                else f"the host has it attached {self._host_time(r.attached_at)}, status {r.status}"
            )
            return False, f"{library}/{a['receiver']} attached {self._host_time(s.attached_at)} is not back: {seen}"
        if s.action is Action.ASSOCIATE_RECEIVERS:
            return self._associated(approved)
        if s.action is Action.CREATE_RECEIVER:
            if any(r.name == a["receiver"] for r in self.live().receivers if r.library == library):
                return True, ""
            return False, f"{library}/{a['receiver']} is not on the host"
        if s.action is Action.ATTACH_RECEIVER:
            r = next((r for r in self.live().receivers if r.library == library and r.name == a["receiver"]), None)
            if r is not None and r.status is ReceiverStatus.ATTACHED and r.journal == journal:
                return True, ""
            return False, f"{library}/{a['receiver']} is not the journal's attached receiver"
        if s.action is Action.RESTORE_LIBRARY:
            if gathering.probe(self.session, self.target, self.tz).library_exists:
                return True, ""
            return False, f"library {library} (its AMQJRNINF) is not on the host"
        if s.action is Action.CREATE_JOURNAL:
            if gathering.probe(self.session, self.target, self.tz).journal_exists:
                return True, ""
            return False, f"journal {library}/{journal} is not on the host"
        if s.action in (Action.DELETE_SAVE_FILE, Action.DELETE_PARTIAL_UPLOAD):
            path = f"{a['library']}/{a['name']}"
            if path not in gathering.save_files_on_host(self.session, [str(a["library"])]):
                return True, ""
            return False, f"save file {path} is still on the host"
        if s.action is Action.CREATE_SAVE_FILE:
            # Only an empty one is this step's: the plan made right before the run found the name free (or deleted
            # what an interrupted upload left in it), and the upload that follows refuses a save file holding data.
            path = f"{a['library']}/{a['name']}"
            if path in gathering.save_files_on_host(self.session, [str(a["library"])]):
                return True, ""
            return False, f"save file {path} is not on the host"
        if s.action is Action.START_QMGR:
            return self._started_since(started)
        return None, "mqjournal cannot read from the host whether it ran"

    def _host_time(self, moment: datetime | None) -> str:
        # A plan's times may be the catalog's, in UTC; the admin compares these with WRKJRNRCV and QMQMMSG, which
        # show each time in the offset then in force.
        if moment is None:
            return timefmt.local_time(None)
        return timefmt.local_time(self.tz.at(moment if moment.tzinfo else moment.replace(tzinfo=UTC)))

    def _associated(self, approved: RecoveryPlan) -> tuple[bool, str]:
        return associated(approved, self.live(), library=self.target.library, journal=self.target.journal)

    def _started_since(self, started: datetime) -> tuple[bool | None, str]:
        return started_since(self.live(since=started).messages, started, library=self.target.library)


def _action_for(s: Step) -> str:
    if s.action is Action.RESTORE_RECEIVER:
        return (
            "check that the save file holds the receiver and the user profile may restore into the library; " + _RERUN
        )
    if s.action is Action.ASSOCIATE_RECEIVERS:
        return "associate the receivers by hand (WRKJRN, option 9), then run the recovery again"
    if s.action is Action.RECREATE_OBJECT:
        return "read the job log and QMQMMSG for the object; " + _RERUN
    if s.action in (Action.REFRESH_CLUSTER, Action.SET_FULL_REPOSITORY):
        return "check the cluster channels and the repository, run the command by hand if needed; " + _RERUN
    return _RERUN
