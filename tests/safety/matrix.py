"""The fault matrix: every command a step sends in a fault-free run, times every kind of fault.

A case sets a scenario up for its step, arms one fault aimed at one command (by its exact text and how many times
that text came earlier in the step), runs the step (in a worker process for the SIGKILL kind), lets the fault play
out, then reruns the step and a whole maintenance run (collect, plan, save, delete), and checks the invariants
(`invariants.py`). Some checks belong to a fault kind: while the catalog is unavailable no command it must record
first is sent, and an error from it names the database.
"""

from __future__ import annotations

import re
import shlex
import signal
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError

from mqjournal.sim.messages import render
from mqjournal.sim.model import CommandFault
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule
from mqjournal.sim.sql import EXIT_SQL_ERROR, format_cli_error
from tests.safety import scenario as sc
from tests.safety.catalog_lock import CatalogLock
from tests.safety.invariants import CATALOGUED_VERBS, Report, cl_param, cl_text, cl_verb, read_audit_events

KINDS = ("drop_before", "drop_after", "fails", "timeout", "catalog_unavailable", "sigkill")
TIMEOUT = 0.5  # the step's command timeout in a "timeout" case: the held command hangs past it
SETTLE_SECONDS = 15.0

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
    text = command.upper()
    for needle, name in (("ASSOCIATE_JOURNAL_RECEIVER", "sql.associate"), ("JOURNAL_RECEIVER_INFO", "sql.state"),
                         ("OBJECT_STATISTICS", "sql.savefiles"), ("JOURNAL_INFO", "sql.probe")):
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


def step_commands(path: str, root: Path) -> list[str]:
    """The commands a fault-free run of the step sends, from its audit log."""
    s = sc.Scenario(root)
    try:
        arg = sc.PATHS[path].setup(s)
        before = len(read_audit_events([s.audit_path]))
        sc.PATHS[path].run(s, arg, None)
        events = read_audit_events([s.audit_path])[before:]
    finally:
        s.close()
    return [e["command"] for e in events if e.get("event") == "intent" or ("event" not in e and "command" in e)]


_ENUMERATED: dict[str, list[str]] = {}


def commands_of(path: str) -> list[str]:
    if path not in _ENUMERATED:
        with tempfile.TemporaryDirectory(prefix=f"mqj-enum-{path}-") as root:
            _ENUMERATED[path] = step_commands(path, Path(root))
    return _ENUMERATED[path]


def cases(paths=tuple(sc.PATHS), kinds=KINDS) -> list[Case]:
    found = []
    for path in paths:
        seen: dict[str, int] = {}
        for index, command in enumerate(commands_of(path)):
            occurrence = seen.get(command, 0)
            seen[command] = occurrence + 1
            found += [Case(path, index, command, occurrence, kind) for kind in kinds]
    return found


# --- running a case --------------------------------------------------------------------------------------------------


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
        lines = [f"{self.case.id}: fault {self.case.kind} at `{shown}` (occurrence {self.case.occurrence + 1} "
                 f"of that command in the step)"]
        if self.step_error is not None:
            lines.append(f"the faulted step raised {type(self.step_error).__name__}: {self.step_error}")
        lines += [f"note: {n}" for n in self.notes]
        lines += [str(v) for v in self.report.violations]
        return "\n".join(lines)


def _chain(exc: BaseException | None):
    while exc is not None:
        yield exc
        exc = exc.__cause__ or exc.__context__


def _target_entry(s: sc.Scenario, case: Case, mark: int):
    """The received-log entry of the case's command in this run, if it arrived."""
    hits = [e for e in s.received(mark) if e.command == case.command]
    return hits[case.occurrence] if len(hits) > case.occurrence else None


def _failure_reply(command: str) -> ExecResult:
    verb = cl_verb(command)
    if verb is not None:
        msg_id, tokens = _FAILURES.get(verb, ("CPF9898", lambda c: [f"{verb} failed"]))
        message = render(msg_id, *tokens(command))
        return ExecResult(255, "", f"{message.id}: {message.text}\n")
    runs = max(1, sum(1 for t in shlex.split(command) if t == "db2"))
    view = (re.search(r"QSYS2\.(\w+)", command) or re.search(r"(\w+)", command)).group(1)
    block = format_cli_error("57033", -913, f"Row or object {view} in QSYS2 type *FILE in use.")
    return ExecResult(EXIT_SQL_ERROR, block * runs, "")


def run_case(case: Case, root: Path) -> Outcome:
    started = time.monotonic()
    outcome = Outcome(case)
    s = sc.Scenario(root)
    try:
        path = sc.PATHS[case.path]
        arg = path.setup(s)
        mark = len(s.service.received)
        recovery = case.path in ("startup", "media")
        _run_faulted(s, case, arg, mark, outcome)
        if not recovery:
            # Right after the fault, before anything reruns: nothing MQ needs is gone, no deletion is unbacked.
            checker = s.checker()
            with s.host.lock:
                partition = s.host.partition.model_copy(deep=True)
            outcome.report.extend(_tagged(checker.receivers(partition), "right after the fault"))
            outcome.report.extend(_tagged(checker.deletions(partition, s.received(), s.excused_save_files),
                                          "right after the fault"))
        try:
            path.run(s, arg, None)
        except Exception as exc:  # noqa: BLE001 - any failure of the rerun is a finding
            outcome.report.add("rerun failed", f"the step, rerun without faults, raised {type(exc).__name__}: {exc}")
        if recovery:
            for problem in sc.recovered(s, case.path):
                outcome.report.add("rerun incomplete", problem)
        try:
            run = s.maintain("run2")
            for problem in run.unfinished():
                outcome.report.add("next run incomplete", problem)
        except Exception as exc:  # noqa: BLE001
            outcome.report.add("next run failed", f"a whole maintenance run after the rerun raised "
                               f"{type(exc).__name__}: {exc}")
        outcome.report.extend(s.check())
    finally:
        s.close()
    outcome.seconds = time.monotonic() - started
    return outcome


def _tagged(report: Report, when: str) -> Report:
    report.violations = [type(v)(v.rule, f"{when}: {v.detail}") for v in report.violations]
    return report


def _run_faulted(s: sc.Scenario, case: Case, arg, mark: int, outcome: Outcome) -> None:
    path = sc.PATHS[case.path]
    faults = s.service.faults[sc.HOST]
    if case.kind == "sigkill":
        _run_killed(s, case, arg, mark, outcome)
        return
    session = None
    lock = None
    release = None
    locked_at: list[int] = []
    if case.kind in ("drop_before", "drop_after"):
        faults.rules.append(CommandRule(case.pattern, case.kind, skip=case.occurrence))
    elif case.kind == "fails":
        verb = cl_verb(case.command)
        if verb is not None and case.occurrence == 0:
            msg_id, tokens = _FAILURES.get(verb, ("CPF9898", lambda c: [f"{verb} failed"]))
            with s.host.state() as partition:
                partition.faults.commands.append(CommandFault(
                    pattern="^" + re.escape(cl_text(case.command)) + "$", msg_id=msg_id, tokens=tokens(case.command)))
        else:
            faults.rules.append(CommandRule(case.pattern, "answer", skip=case.occurrence,
                                            reply=_failure_reply(case.command)))
    elif case.kind == "timeout":
        import threading

        release = threading.Event()
        faults.rules.append(CommandRule(case.pattern, "hold_before", skip=case.occurrence, release=release,
                                        seconds=60.0))
        session = s.new_session(command_timeout=TIMEOUT)
    elif case.kind == "catalog_unavailable":
        lock = CatalogLock(s.db_path)
        if case.index == 0:
            lock.acquire()
            locked_at.append(len(s.service.received))
        else:
            position = mark + case.index - 1

            def lock_after_previous(entry, event: str) -> None:
                if event == "ran" and entry.seq == position and not lock.held:
                    lock.acquire()
                    locked_at.append(entry.seq + 1)

            s.service.received.listeners.append(lock_after_previous)
    else:
        raise ValueError(case.kind)

    try:
        path.run(s, arg, session)
    except Exception as exc:  # noqa: BLE001 - the faulted step may fail; how it fails is checked below
        outcome.step_error = exc
    finally:
        s.service.received.listeners.clear()
        if release is not None:
            release.set()
            landed = s.service.received.wait_for(
                lambda entries: (e := _target_entry_live(entries, case, mark)) is None or e.state != "arrived",
                SETTLE_SECONDS)
            if not landed:
                outcome.notes.append("the held command did not land")
        if lock is not None and lock.held:
            lock.release()
        faults.rules.clear()
        with s.host.state() as partition:
            partition.faults.commands.clear()

    entry = _target_entry(s, case, mark)
    if case.kind != "catalog_unavailable" and entry is None:
        outcome.notes.append("the faulted step never sent the command")
    if case.kind == "catalog_unavailable":
        _check_catalog_stop(s, case, outcome, locked_at)


def _target_entry_live(entries, case: Case, mark: int):
    hits = [e for e in entries[mark:] if e.command == case.command]
    return hits[case.occurrence] if len(hits) > case.occurrence else None


def _check_catalog_stop(s: sc.Scenario, case: Case, outcome: Outcome, locked_at: list[int]) -> None:
    if not locked_at:
        outcome.notes.append("the step ended before the catalog was locked")
        return
    sent = [e for e in s.service.received.entries(sc.HOST, locked_at[0]) if cl_verb(e.command) in CATALOGUED_VERBS]
    for e in sent:
        outcome.report.add("catalog unavailable", f"`{cl_text(e.command)}` was sent while the catalog was locked "
                           "(the catalog must record it first, so the step must stop before it)")
    exc = outcome.step_error
    database_error = any(isinstance(e, (SQLAlchemyError, sqlite3.Error)) for e in _chain(exc))
    if exc is not None and database_error and s.db_path.name not in str(exc):
        outcome.report.add("catalog unavailable", f"the step stopped with an error that does not name the database "
                           f"({s.db_path}): {type(exc).__name__}: {str(exc)[:300]}")


def _run_killed(s: sc.Scenario, case: Case, arg, mark: int, outcome: Outcome) -> None:
    from tests.safety import worker

    faults = s.service.faults[sc.HOST]
    faults.rules.append(CommandRule(case.pattern, "hold_after", skip=case.occurrence, seconds=60.0))
    spec = worker.WorkerSpec(
        path=case.path, arg=arg, run_id=sc.PATHS[case.path].run_id, port=s.ports[sc.HOST], user=s.user,
        client_key=s.config.client_key, known_hosts=s.config.known_hosts, catalog_url=s.catalog_url,
        audit_path=s.audit_path, target=s.target, tz=s.tz,
    )
    process = worker.start(spec)
    try:
        reached = s.service.received.wait_for(
            lambda entries: (e := _target_entry_live(entries, case, mark)) is not None and e.state != "arrived"
            or not process.is_alive(), SETTLE_SECONDS)
        if not reached or not process.is_alive():
            outcome.notes.append(f"the worker ended (exit {process.exitcode}) before the host ran the command")
        process.kill()  # SIGKILL: no finally, no atexit, no flush
        process.join(10)
        if process.exitcode not in (-signal.SIGKILL, None) and outcome.notes == []:
            outcome.notes.append(f"the worker exited {process.exitcode} before it could be killed")
    finally:
        faults.rules.clear()
        if process.is_alive():
            process.kill()
            process.join(5)
    # The held answer ends when the killed client's connection goes; wait for that.
    s.service.received.wait_for(lambda entries: all(e.state != "arrived" for e in entries[mark:]), SETTLE_SECONDS)
