"""The fault matrix: every command a step sends in a fault-free run, times every kind of fault.

A case sets a scenario up for its step, arms one fault aimed at one command (by its exact text and how many times
that text came earlier in the step), runs the step (in a worker process for the SIGKILL kind), lets the fault play
out, then reruns the step and a whole maintenance run (collect, plan, save, delete), and checks the invariants
(`invariants.py`). Some checks belong to a fault kind: while the catalog is unavailable no command it must record
first is sent, and an error from it names the database.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from mqjournal.ibmi import commands
from mqjournal.sim.messages import render
from mqjournal.sim.model import CommandFault
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule
from mqjournal.sim.sql import EXIT_SQL_ERROR, format_cli_error
from tests.safety import scenario as sc
from tests.safety.catalog_lock import CatalogLock
from tests.safety.invariants import CATALOGUED_VERBS, Report, cl_param, cl_text, cl_verb, read_audit_events

KINDS = ("drop_before", "drop_after", "fails", "timeout", "catalog_unavailable", "sigkill")
# The step's command timeout in a "timeout" case (the held command hangs past it): long enough that no other command
# of the step times out on a busy 2-core machine, which would fault the case twice.
TIMEOUT = 0.8
SETTLE_SECONDS = 15.0
WORKER_SECONDS = 60.0

# The documented escape message each CL command fails with, and its message data.
_FAILURES = {
    "CRTSAVF": ("CPF7302", lambda c: [_obj(c, "FILE"), _lib(c, "FILE")]),
    "SAVOBJ": ("CPF3770", lambda c: [cl_param(c, "LIB") or ""]),
    "SAVLIB": ("CPF3770", lambda c: [cl_param(c, "LIB") or ""]),
    "DLTJRNRCV": ("CPF9803", lambda c: ["", _obj(c, "JRNRCV"), _lib(c, "JRNRCV")]),
    "RSTOBJ": ("CPF3773", lambda c: ["0", "1", cl_param(c, "SAVLIB") or ""]),
    "STRMQM": ("AMQ7017", lambda c: []),
    "RCRMQMOBJ": ("AMQ8146", lambda c: []),
    "RCDMQMIMG": ("AMQ8146", lambda c: []),
    "DLTF": ("CPF3202", lambda c: [_obj(c, "FILE"), _lib(c, "FILE")]),
    "CHGJRN": ("CPF9803", lambda c: ["", _obj(c, "JRN"), _lib(c, "JRN")]),
}


def _obj(command: str, keyword: str) -> str:
    return (cl_param(command, keyword) or "").rpartition("/")[2]


def _lib(command: str, keyword: str) -> str:
    return (cl_param(command, keyword) or "").rpartition("/")[0]


def label(command: str) -> str:
    """A short, stable name for a command in test ids."""
    verb = cl_verb(command)
    if verb is not None:
        obj = next((_obj(command, k) for k in ("JRNRCV", "OBJ", "FILE", "MQMNAME") if cl_param(command, k)), "")
        obj = obj.strip("'").split()[0] if obj.strip("'") else ""
        return f"{verb}.{obj}" if obj else verb
    if " dgst -sha256 " in command or "sha256sum " in command:  # the host's digest (ibmi/hostdigest.py)
        return "digest.probe" if command.endswith("/dev/null") else "digest"
    text = command.upper()
    for needle, name in (
        ("ASSOCIATE_JOURNAL_RECEIVER", "sql.associate"),
        ("JOURNAL_RECEIVER_INFO", "sql.state"),
        ("SAVE_FILE_OBJECTS", "sql.contents"),
        ("OBJECT_STATISTICS", "sql.savefiles"),
        ("JOURNAL_INFO", "sql.probe"),
    ):
        if needle in text:
            return name
    return "sql"


@dataclass(frozen=True)
class Case:
    path: str
    index: int  # the command's position in the fault-free step
    command: str
    occurrence: int  # how often the same command line came before it in the step
    kind: str

    @property
    def id(self) -> str:
        return f"{self.path}-{self.index:02d}-{label(self.command)}-{self.kind}"

    @property
    def pattern(self) -> str:
        return "^" + re.escape(self.command) + "$"


# --- enumeration from a fault-free run -----------------------------------------------------------------------------


def step_commands(path: str, root: Path, setups: sc.SetUps | None = None) -> list[str]:
    """The commands a fault-free run of the step sends, from its audit log (set up in `root`, or started from
    `setups`' copy of the set-up)."""
    s, arg = setups.start(path, root) if setups is not None else _set_up(path, root)
    try:
        before = len(read_audit_events([s.audit_path]))
        sc.PATHS[path].run(s, arg, None)
        events = read_audit_events([s.audit_path])[before:]
    finally:
        s.close()
    # SFTP transfers are audited like commands but are not command lines the simulator's command rules can fault:
    # their faults are cases of their own (tests/safety/test_transfer_faults.py).
    return [
        e["command"]
        for e in events
        if (e.get("event") == "intent" or ("event" not in e and "command" in e)) and not e.get("transfer")
    ]


_ENUMERATED: dict[str, list[str]] = {}


def commands_of(path: str) -> list[str]:
    if path not in _ENUMERATED:
        _ENUMERATED[path] = _enumerated_once_per_run(path)
    return _ENUMERATED[path]


def _enumerate(path: str) -> list[str]:
    with tempfile.TemporaryDirectory(prefix=f"mqj-enum-{path}-") as root:
        return step_commands(path, Path(root))


def _enumerated_once_per_run(path: str) -> list[str]:
    """The step's commands, enumerated once per test run: every pytest-xdist worker collects the matrix, and the
    fault-free runs behind it would otherwise be repeated in each (a few seconds of CPU per worker). The first
    worker runs them and leaves the result in a folder named for the run; the others wait for it and read it."""
    folder = _shared_folder()
    if folder is None:
        return _enumerate(path)
    folder.mkdir(exist_ok=True)
    done = folder / f"{path}.json"
    with open(folder / f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_text(json.dumps(_enumerate(path)), encoding="utf-8")
        return json.loads(done.read_text(encoding="utf-8"))


def _shared_folder() -> Path | None:
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return Path(tempfile.gettempdir()) / f"mqj-matrix-{run}" if run else None


def forget_shared_enumeration() -> None:
    """Remove the run's shared enumeration: called as a worker's session ends, when every worker has collected (xdist
    schedules no test before all have)."""
    folder = _shared_folder()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def cases(paths=tuple(sc.PATHS), kinds=KINDS) -> list[Case]:
    found = []
    for path in paths:
        seen: dict[str, int] = {}
        for index, command in enumerate(commands_of(path)):
            occurrence = seen.get(command, 0)
            seen[command] = occurrence + 1
            found += [Case(path, index, command, occurrence, kind) for kind in kinds]
    return found


# --- faults, and running a step under one ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One fault for one run of a step.

    `pattern` (a regex on the command line) and `occurrence` (how many of its matches pass first) pick the command
    for every kind but ``catalog_unavailable``, whose catalog is locked right before the step's command number
    `lock_after` is sent (0: before the step starts), i.e. once the command before it ran, before its answer.
    """

    kind: str
    pattern: str = ".*"
    occurrence: int = 0
    lock_after: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fault kind {self.kind!r} is not one of {KINDS}")


@dataclass
class Faulted:
    """What became of a step run under a fault."""

    fault: Fault
    error: BaseException | None = None
    report: Report = field(default_factory=Report)
    notes: list[str] = field(default_factory=list)
    reached: bool = False  # the faulted command (or the lock point) was reached


def _matching(entries, fault: Fault, mark: int):
    hits = [e for e in entries[mark:] if re.search(fault.pattern, e.command)]
    return hits[fault.occurrence] if len(hits) > fault.occurrence else None


def _failure_reply(command: str) -> ExecResult:
    verb = cl_verb(command)
    if verb is not None:
        msg_id, tokens = _FAILURES.get(verb, ("CPF9898", lambda c: [f"{verb} failed"]))
        message = render(msg_id, *tokens(command))
        return ExecResult(255, "", f"{message.id}: {message.text}\n")
    runs = max(1, len(commands.sql_statements(command) or []))  # one error block per db2 run, either SQL runner
    view = (re.search(r"QSYS2\.(\w+)", command) or re.search(r"(\w+)", command)).group(1)
    block = format_cli_error("57033", -913, f"Row or object {view} in QSYS2 type *FILE in use.")
    return ExecResult(EXIT_SQL_ERROR, block * runs, "")


class _FailOnArrival:
    """The "fails" kind: the matching occurrence fails with its documented message. A CL command through the
    partition's own CL faults (`CommandFault`: the simulator sends the escape message), an SQL statement through an
    `answer` rule (the db2 CLI error block). Decided when the command arrives, from its own text."""

    def __init__(self, s: sc.Scenario, fault: Fault, mark: int) -> None:
        self.s, self.fault, self.mark, self.done = s, fault, mark, False

    def __call__(self, entry, event: str) -> None:
        if event != "arrived" or self.done or entry.seq < self.mark:
            return
        target = _matching(self.s.service.received.entries(sc.HOST), self.fault, self.mark)
        if target is None or target.seq != entry.seq:
            return
        self.done = True
        verb, text = cl_verb(entry.command), cl_text(entry.command)
        if verb is not None:
            msg_id, tokens = _FAILURES.get(verb, ("CPF9898", lambda c: [f"{verb} failed"]))
            with self.s.host.state() as partition:
                partition.faults.commands.append(
                    CommandFault(pattern="^" + re.escape(text) + "$", msg_id=msg_id, tokens=tokens(entry.command))
                )
        else:
            self.s.service.faults[sc.HOST].rules.insert(
                0, CommandRule("^" + re.escape(entry.command) + "$", "answer", reply=_failure_reply(entry.command))
            )


def run_with_fault(s: sc.Scenario, path: str, arg, fault: Fault, *, lease_slots: int | None = None) -> Faulted:
    """Run the step `path` with `arg` in a worker process under `fault`, and let the fault play out completely (a
    held command has landed, a lock is released, a killed worker's connection is gone) before returning."""
    from tests.safety import worker

    mark = len(s.service.received)
    done = Faulted(fault)
    faults = s.service.faults[sc.HOST]
    lock = None
    release = None
    locked_at: list[int] = []
    command_timeout = sc.COMMAND_TIMEOUT
    if fault.kind in ("drop_before", "drop_after"):
        faults.rules.append(CommandRule(fault.pattern, fault.kind, skip=fault.occurrence))
    elif fault.kind == "fails":
        # Each arriving command is matched against the fault; the one it hits is answered with its own failure.
        s.service.received.listeners.append(_FailOnArrival(s, fault, mark))
    elif fault.kind == "timeout":
        release = threading.Event()
        faults.rules.append(
            CommandRule(fault.pattern, "hold_before", skip=fault.occurrence, release=release, seconds=60.0)
        )
        command_timeout = TIMEOUT
    elif fault.kind == "catalog_unavailable":
        lock = CatalogLock(s.db_path)
        if fault.lock_after == 0:
            lock.acquire()
            locked_at.append(mark)
        else:
            position = mark + fault.lock_after - 1

            def lock_after_previous(entry, event: str) -> None:
                if event == "ran" and entry.seq == position and not lock.held:
                    lock.acquire()
                    locked_at.append(entry.seq + 1)

            s.service.received.listeners.append(lock_after_previous)
    elif fault.kind == "sigkill":
        faults.rules.append(CommandRule(fault.pattern, "hold_after", skip=fault.occurrence, seconds=60.0))

    spec = worker.WorkerSpec(
        path=path,
        arg=arg,
        port=s.ports[sc.HOST],
        user=s.user,
        client_key=s.config.client_key,
        known_hosts=s.config.known_hosts,
        catalog_url=s.catalog_url,
        audit_path=s.audit_path,
        store_path=s.store_path,
        target=s.target,
        tz=s.tz,
        command_timeout=command_timeout,
        lease_slots=lease_slots,
    )
    process, answer = worker.start(spec)
    try:
        if fault.kind == "sigkill":
            s.service.received.wait_for(
                lambda entries: (
                    ((e := _matching(entries, fault, mark)) is not None and e.state != "arrived")
                    or not process.is_alive()
                ),
                SETTLE_SECONDS,
            )
            target = _matching(s.service.received.entries(sc.HOST), fault, mark)
            done.reached = target is not None and target.state != "arrived"
            process.kill()  # SIGKILL: no finally, no atexit, no flush
        process.join(WORKER_SECONDS)
        try:
            ended = answer.recv() if answer.poll() else None
        except EOFError:  # killed before it could answer
            ended = None
        if ended is not None and ended.error_type is not None:
            done.error = worker.WorkerError(ended)
        elif ended is None and fault.kind != "sigkill":
            done.notes.append(f"the worker ended without a word (exit {process.exitcode})")
    finally:
        if process.is_alive():
            process.kill()
            process.join(5)
            done.notes.append("the worker did not finish in time and was killed")
        answer.close()
        s.service.received.listeners.clear()
        if release is not None:
            release.set()
            if not s.service.received.wait_for(
                lambda entries: (e := _matching(entries, fault, mark)) is None or e.state != "arrived", SETTLE_SECONDS
            ):
                done.notes.append("the held command did not land")
        if lock is not None and lock.held:
            lock.release()
        faults.rules.clear()
        if fault.kind == "fails":
            with s.host.state() as partition:
                partition.faults.commands.clear()
        # A held answer ends when its (killed) client's connection goes; wait for every command to settle.
        s.service.received.wait_for(lambda entries: all(e.state != "arrived" for e in entries[mark:]), SETTLE_SECONDS)

    if fault.kind == "catalog_unavailable":
        done.reached = bool(locked_at)
        _check_catalog_stop(s, done, locked_at)
    elif fault.kind != "sigkill":
        done.reached = _matching(s.service.received.entries(sc.HOST), fault, mark) is not None
    return done


def _check_catalog_stop(s: sc.Scenario, done: Faulted, locked_at: list[int]) -> None:
    if not locked_at:
        done.notes.append("the step ended before the catalog was locked")
        return
    for e in s.service.received.entries(sc.HOST, locked_at[0]):
        if cl_verb(e.command) in CATALOGUED_VERBS:
            done.report.add(
                "catalog unavailable",
                f"`{cl_text(e.command)}` was sent while the catalog was locked "
                "(the catalog must record it first, so the step must stop before it)",
            )
    exc = done.error
    if exc is not None and exc.ended.database_error and s.db_path.name not in str(exc):
        done.report.add(
            "catalog unavailable",
            f"the step stopped with an error that does not name the database ({s.db_path}): {str(exc)[:300]}",
        )


# --- a case of the matrix ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    report: Report = field(default_factory=Report)
    step_error: BaseException | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def held(self) -> bool:
        return self.report.ok

    def explain(self) -> str:
        shown = cl_text(self.case.command) or self.case.command
        shown = shown if len(shown) <= 160 else shown[:157] + "..."
        lines = [
            f"{self.case.id}: fault {self.case.kind} at `{shown}` (occurrence {self.case.occurrence + 1} "
            f"of that command in the step)"
        ]
        if self.step_error is not None:
            lines.append(f"the faulted step raised {type(self.step_error).__name__}: {self.step_error}")
        lines += [f"note: {n}" for n in self.notes]
        lines += [str(v) for v in self.report.violations]
        return "\n".join(lines)


def _tagged(report: Report, when: str) -> Report:
    report.violations = [type(v)(v.rule, f"{when}: {v.detail}") for v in report.violations]
    return report


def _set_up(path: str, root: Path) -> tuple[sc.Scenario, object]:
    s = sc.Scenario(root)
    try:
        return s, sc.PATHS[path].setup(s)
    except BaseException:
        s.close()
        raise


def run_case(case: Case, root: Path, setups: sc.SetUps | None = None) -> Outcome:
    """Set the case's path up (or start from `setups`' copy of its set-up: the same state, a fraction of the CPU),
    run its step under its fault, rerun the step, run a whole maintenance, and check the invariants."""
    started = time.monotonic()
    outcome = Outcome(case)
    path = sc.PATHS[case.path]
    s, arg = setups.start(case.path, root) if setups is not None else _set_up(case.path, root)
    try:
        fault = Fault(case.kind, case.pattern, case.occurrence, lock_after=case.index)
        faulted = run_with_fault(s, case.path, arg, fault)
        outcome.step_error, outcome.notes = faulted.error, faulted.notes
        outcome.report.extend(faulted.report)
        if not faulted.reached:
            outcome.report.add("case not reached", "the faulted run never reached the command of the fault-free run")
        recovery = case.path in ("startup", "media")
        if not recovery:
            # Right after the fault, before anything reruns: nothing MQ needs is gone, no deletion is unbacked.
            checker = s.checker()
            with s.host.lock:
                partition = s.host.partition.model_copy(deep=True)
            outcome.report.extend(_tagged(checker.receivers(partition), "right after the fault"))
            outcome.report.extend(
                _tagged(checker.deletions(partition, s.received(), s.excused_deletions), "right after the fault")
            )
        try:
            path.run(s, arg, None)
        except Exception as exc:
            outcome.report.add("rerun failed", f"the step, rerun without faults, raised {type(exc).__name__}: {exc}")
        if recovery:
            for problem in sc.recovered(s, case.path):
                outcome.report.add("rerun incomplete", problem)
        try:
            run = s.maintain("run2")
            for problem in run.unfinished():
                outcome.report.add("next run incomplete", problem)
        except Exception as exc:
            outcome.report.add(
                "next run failed", f"a whole maintenance run after the rerun raised {type(exc).__name__}: {exc}"
            )
        outcome.report.extend(s.check())
    finally:
        s.close()
    outcome.seconds = time.monotonic() - started
    return outcome
