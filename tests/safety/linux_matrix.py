"""The Linux fault matrix (#32): every command and every SFTP transfer a Linux step sends in a fault-free run, times
every kind of fault that makes sense for it, in both LogManagement modes that let extents go (Archive, Manual).

The steps (`STEPS`), each set up once per process and mode (`Rig.setup`), every case starting from a copy of that
set-up (the host's state, the catalog, the extent store, the audit log and the simulator's logs):

- ``collect``: collect and plan (linuxmq/collector.py, plan.py): rcdmqimg, dspmqinf, cat qm.ini, runmqsc DISPLAY
  QMSTATUS, ls;
- ``archive``: each extent the plan archives (linuxmq/archive.py): sha256sum beside the SFTP GET; right after the
  faulted run, before its rerun, a release (what a fault left in the store and catalog is let go against);
- ``release``: linuxmq/release.py: the live re-read, then SET LOG ARCHIVED on runmqsc's stdin (Archive) or rm
  (Manual) of each extent, then the confirmation read (DISPLAY QMSTATUS, or ls);
- ``startup``: the execution of an approved startup recovery (linuxmq/recover.py) after a power loss and an extent
  RECLOG needs deleted by someone: the live re-read (dspmq, dspmqinf, cat, ls), the SFTP PUT of the copy, sha256sum,
  strmqm, dspmq, and the status read at the end;
- ``media``: the execution of an approved media recovery of a damaged queue whose image's next extent was deleted:
  the re-read with DISPLAY QMSTATUS and DISPLAY QSTATUS, the PUT, sha256sum, rcrmqobj, DISPLAY QSTATUS, the status.

The cases come from the step's fault-free run (its audit log: `step_items`), so a command or transfer added to a
path is covered without touching this file. A command is aimed at by its exact line and how often that line came
earlier in the step (`CommandRule.skip`; runmqsc's DISPLAY and SET LOG share their line and differ by stdin only);
a transfer by its path (`TransferFault`). Kinds:

- commands: ``drop_before`` / ``drop_after`` (the connection drops before the host runs it, or after it ran and
  before its answer); ``fails`` (the host answers the program's documented failure and exit status: `failure`);
  ``timeout`` (it hangs on the host past the session's command timeout and lands once the step gave up); ``lies``
  (the host answers "done", exit 0, without running it: SET LOG ARCHIVED's success message, else nothing);
- transfers: ``drop_before`` (the connection drops at the transfer's first byte), ``fails`` (the server refuses to
  open the file: "permission denied"), ``cut`` (midway), ``corrupt`` (one byte changed midway, the rest whole);
- both: ``catalog_unavailable`` (from right before the item is recorded, every statement of the catalog fails as a
  database out of reach, reads too: a step it stops must name the database); ``sigkill`` (the step runs in a worker
  process, linux_worker.py, SIGKILLed once the host ran the command, before its answer, or halfway through the
  transfer; an upload's bytes after that point never arrive), aimed at the items that change something: transfers,
  and commands of the programs that change the host (rcdmqimg, SET LOG ARCHIVED, rm, strmqm, rcrmqobj).

After the fault plays out: the invariants right away (linux_invariants.py; restart and media recovery only for the
maintenance steps: a recovery step starts from a queue manager that does not start), then the step rerun without
the fault (it must end without an error, with nothing left undone), then, after collect, archive and release, a whole
maintenance (collect, plan, archive, release: what a fault left in the store is let go against, so a copy kept that
is no copy shows), then every invariant: a power loss and strmqm restarts the queue manager, rcrmqobj re-creates
every object, every extent let go (rm or SET LOG ARCHIVED sent, whatever became of it) has a catalogued copy whose
bytes the store proves and the host's digest vouched for, every command and every transfer the host received was in
the audit log before it arrived, and (but after a sigkill) every intent has its outcome.

Not checked: after a sigkill, that the killed worker's open intents are reconciled. The Linux steps reconcile none
(IBM i's executor does: ibmi/reconcile.py), so those cases check only that each command was recorded before it was
sent.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from mqjournal.catalog import Catalog, CatalogUnavailable
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.linuxmq.archive import ArchiveError
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.recover import LinuxRecovery
from mqjournal.linuxmq.recovery import LinuxRecoveryRequest
from mqjournal.linuxsim import commands as simcommands
from mqjournal.linuxsim import logger, mqsc
from mqjournal.linuxsim.model import LinuxHost
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule, ReceivedCommand, TransferFault
from tests.conftest import serve
from tests.linuxcollect.fleet import (
    BIN,
    LINUX,
    archive,
    collect_and_plan,
    linux_only_fleet,
    maintain,
    release,
    to_archive,
)
from tests.safety.invariants import Report, audit_report, read_audit_events
from tests.safety.linux_invariants import ADMIN, LinuxSafetyChecker, restart_and_recover, transfers_report
from tests.safety.linux_scenario import EXTENT_BYTES, OBJECTS, PAGES, QMGR
from tests.safety.matrix import _shared_folder
from tests.safety.scenario import FAST_RETRY

__all__ = ["COMMAND_KINDS", "MODES", "PATHS", "TRANSFER_KINDS", "LinuxCase", "Outcome", "Rig", "cases", "run_case"]

COMMAND_KINDS = ("drop_before", "drop_after", "fails", "timeout", "lies", "catalog_unavailable", "sigkill")
TRANSFER_KINDS = ("drop_before", "fails", "cut", "corrupt", "catalog_unavailable", "sigkill")
# A worker killed while the host runs a command that only reads leaves the host as it was and an intent open, which
# drop_after (the answer lost) already covers on the host's side; so sigkill is aimed at what changes something: a
# transfer (a download into the store, an upload onto the host), or a command of a program that changes the host
# (the simulator's list), runmqsc when its MQSC is not a DISPLAY.
_READS_ONLY_MQSC = re.compile(r"\s*DISPLAY\s", re.IGNORECASE)
MODES = {"archive": LogManagement.ARCHIVE, "manual": LogManagement.MANUAL}
STEP_NAMES = ("collect", "archive", "release", "startup", "media")
PATHS = tuple(f"{step}.{mode}" for mode in MODES for step in STEP_NAMES)
RECOVERY = ("startup", "media")
USER = "mqjournal"
QUEUE = "APP.REQUEST"  # the damaged queue of the media path (one of linux_scenario's OBJECTS)
COMMAND_TIMEOUT = 10.0
# The session's command timeout in a "timeout" case: the simulator answers every other command of a step in
# milliseconds, so a command that takes this long is the held one, even on a busy 2-core machine.
TIMEOUT = 0.3
SETTLE_SECONDS = 15.0
WORKER_SECONDS = 60.0
_SET_LOG = re.compile(r"SET\s+LOG\s+ARCHIVED\s*\(\s*'?([^')\s]*)'?\s*\)", re.IGNORECASE)


# --- the documented failures --------------------------------------------------------------------------------------


def _runmqsc_answer(lines: list[str], stdin: str, rc: int, failed: int) -> ExecResult:
    echo = [f"{n:6d} : {text}" for n, text in enumerate(mqsc.read_commands(stdin), start=1)]
    body = echo + lines + mqsc.summary(len(echo), 0, failed)
    return ExecResult(rc, mqsc.BANNER.format(qm=QMGR) + "\n".join(body) + "\n")


def failure(command: str, stdin: str) -> ExecResult:
    """What the program of `command` answers when it fails on a host, with its exit status (the simulator's own
    refusals: linuxsim/commands.py and mqsc.py, where their sources and ASSUMED parts are named)."""
    program = command.split()[0].rsplit("/", 1)[-1]
    path = command.split()[-1].strip("'")
    if program == "runmqsc":
        archived = _SET_LOG.search(stdin)
        if archived is None:  # a DISPLAY: runmqsc cannot reach the queue manager
            return ExecResult(mqsc.RC_NOT_RUN, f"{mqsc.BANNER.format(qm=QMGR)}{mqsc.NOT_AVAILABLE}\n")
        refused = mqsc.REFUSALS[logger.ExtentNotFound].format(name=archived.group(1))
        return _runmqsc_answer([refused], stdin, mqsc.RC_SOME_FAILED, 1)
    failures = {
        "rcdmqimg": ExecResult(simcommands.RC_NOT_AVAILABLE, "", f"{mqsc.NOT_AVAILABLE}\n"),
        "dspmqinf": ExecResult(simcommands.RC_NOT_KNOWN_DSPMQ, "", simcommands.NOT_KNOWN),
        "dspmq": ExecResult(simcommands.RC_NOT_KNOWN_DSPMQ, "", simcommands.NOT_KNOWN),
        "strmqm": ExecResult(simcommands.RC_NOT_AUTHORIZED, "", simcommands.NOT_AUTHORIZED),
        "rcrmqobj": ExecResult(simcommands.RC_NOT_AUTHORIZED, "", simcommands.NOT_AUTHORIZED),
        "cat": ExecResult(1, "", f"cat: {path}: Permission denied\n"),
        "ls": ExecResult(2, "", f"ls: cannot open directory '{path}': Permission denied\n"),
        "sha256sum": ExecResult(1, "", f"sha256sum: {path}: Input/output error\n"),
        "rm": ExecResult(1, "", f"rm: cannot remove '{path}': Read-only file system\n"),
    }
    if program not in failures:
        raise AssertionError(f"no documented failure of {program} for the fault matrix: add one to failure()")
    return failures[program]


def lie(command: str, stdin: str) -> ExecResult:
    """The host says "done" and does nothing: SET LOG ARCHIVED's success message, or nothing at all, with exit 0."""
    archived = _SET_LOG.search(stdin) if "runmqsc" in command else None
    if archived is not None:
        return _runmqsc_answer([mqsc.ARCHIVED.format(name=archived.group(1))], stdin, mqsc.RC_OK, 0)
    return ExecResult(0)


# --- one case's world: the rig's host and a copy of a set-up ----------------------------------------------------


class LinuxCase:
    """One run on the rig's Linux host: a catalog, an extent store and an audit log in `root`, and sessions."""

    def __init__(self, rig: Rig, root: Path) -> None:
        self.rig, self.root = rig, root
        root.mkdir(parents=True, exist_ok=True)
        self.audit_path = root / "audit.jsonl"
        self.catalog = Catalog(f"sqlite:///{root / 'catalog.db'}")
        self.store = ExtentStore(root / "backups")
        self._sessions: list[IbmiSession] = []

    def session(self, command_timeout: float = COMMAND_TIMEOUT, audit: AuditLog | None = None) -> IbmiSession:
        fleet = self.rig.fleet
        connect = ssh_connector(
            address="127.0.0.1",
            port=fleet.ports[LINUX],
            user=USER,
            key=fleet.service.client_key,
            known_hosts=fleet.config.known_hosts,
        )
        session = IbmiSession(
            LINUX,
            USER,
            connect,
            audit=audit or AuditLog(self.audit_path),
            retry=FAST_RETRY,
            command_timeout=command_timeout,
        )
        self._sessions.append(session)
        return session

    def log_work(self, extents: int) -> None:
        """Applications' work: `extents` extents of log records, then a checkpoint."""
        with self.rig.live.state() as host:
            qm = host.queue_managers[QMGR]
            logger.write(qm, extents * qm.extent_size, at=host.now)
            logger.checkpoint(qm)

    def admin(self, command_line: str, stdin: str = "") -> ExecResult:
        return self.rig.live.run(command_line, ADMIN, stdin)

    def on_host(self, extent: str) -> bool:
        with self.rig.live.lock:
            return extent in self.rig.live.host.queue_managers[QMGR].extents

    def checker(self) -> LinuxSafetyChecker:
        return LinuxSafetyChecker(
            live=self.rig.live,
            qmgr=QMGR,
            catalog=self.catalog,
            store=self.store,
            audit_paths=[self.audit_path],
            received=self.rig.received,
        )

    def check(self, *, restart: bool = True, outcomes: bool = True) -> Report:
        """The invariants (`restart`: with restart and media recovery), the transfers' audit included; `outcomes`:
        every intent must have its outcome (not so after a worker was killed: the Linux steps reconcile no open
        intent, so only that each command was recorded before it arrived is checked then)."""
        with self.rig.live.lock:
            host = self.rig.live.host.model_copy(deep=True)
        received, events = self.rig.received(), read_audit_events([self.audit_path])
        report = restart_and_recover(host, QMGR) if restart else Report()
        report.extend(self.checker().let_go(host, received))
        report.extend(audit_report(LINUX, received, events, require_reconciled=outcomes))
        report.extend(transfers_report(LINUX, self.rig.transfers(), events, require_outcomes=outcomes))
        return report

    def close(self) -> None:
        for session in self._sessions:
            session.close()
        self.catalog.engine.dispose()


# --- the steps under test ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """A Linux step: how to set a case up for it (returns the step's argument), how to run it, and what it left
    undone when it returned (a fault-free rerun must leave nothing)."""

    setup: Callable[[LinuxCase], Any]
    run: Callable[[LinuxCase, IbmiSession, Any], Any]
    undone: Callable[[LinuxCase, Any], list[str]] = lambda case, result: []
    # What runs right after the faulted step, before its rerun, fault-free (the step that acts on what it left).
    then: Callable[[LinuxCase, IbmiSession, Any], Any] | None = None


def _collected(case: LinuxCase, extents: int) -> tuple[Any, Any, str]:
    case.log_work(extents)
    with case.session() as session:
        snap, plan = collect_and_plan(session, QMGR, case.catalog, "run1")
    return snap, plan, "run1"


def _archive_set_up(case: LinuxCase) -> tuple[Any, list[str], str]:
    snap, plan, run = _collected(case, 2)  # two closed extents to archive: S0000000, S0000001
    names = to_archive(plan)
    assert len(names) == 2, names
    return snap, names, run


def _archive(case: LinuxCase, session: IbmiSession, arg) -> None:
    snap, names, run = arg
    for name in names:
        try:
            archive(session, snap, name, run, case.store, case.catalog)
        except ArchiveError:
            if case.on_host(name):
                raise
            # The plan is older than the log: a release since (the one right after a faulted archive) let it go.


def _release_set_up(case: LinuxCase) -> str:
    snap, names, run = _archive_set_up(case)
    with case.session() as session:
        _archive(case, session, (snap, names, run))
    return run


def _release_undone(case: LinuxCase, result) -> list[str]:
    return [f"{name} not released: {result.kept[name]}" for name in sorted(result.undone)]


def _startup_set_up(case: LinuxCase) -> tuple[Any, Any]:
    """A unit of work holds RECLOG back; a maintenance copies what it may; the power goes, and someone deletes an
    extent restart needs (one the maintenance copied): strmqm fails (AMQ6767)."""
    with case.rig.live.state() as host:
        logger.open_unit_of_work(host.queue_managers[QMGR], "long")
    case.log_work(3)
    with case.session() as session:
        maintain(session, QMGR, case.store, case.catalog, "maint1")
        snap, _ = collect_and_plan(session, QMGR, case.catalog, "maint2")
    points = snap.points()
    assert points is not None and points.restart.behind(points.current) >= 2, snap
    doomed = Extent(points.restart.number + 1).name
    assert doomed in {c.extent for c in case.catalog.extent_copies(LINUX, QMGR)}
    with case.rig.live.state() as host:
        qm = host.queue_managers[QMGR]
        logger.crash(qm)
        logger.remove_extent(qm, doomed)
    assert case.admin(f"{BIN}/strmqm {QMGR}").exit_status != 0
    with case.session() as session:
        plan = LinuxRecovery(session, BIN, case.catalog, case.store, last=snap).plan(
            LinuxRecoveryRequest.checked(host=LINUX, qmgr=QMGR, kind="startup")
        )
    assert plan.executable and [s.stored.extent for s in plan.steps if s.stored] == [doomed], plan.markdown()
    return snap, plan


def _media_set_up(case: LinuxCase) -> tuple[Any, Any]:
    """A queue imaged then damaged holds MEDIALOG; a maintenance copies the log and keeps what media recovery needs;
    someone deletes the extent after the queue's image: rcrmqobj fails (AMQ6767)."""
    with case.rig.live.state() as host:
        qm = host.queue_managers[QMGR]
        logger.record_media_images(qm, at=host.now)
        logger.damage(qm, QUEUE)
        image = next(o.image_extent for o in qm.objects if o.name == QUEUE)
    case.log_work(3)
    with case.session() as session:
        maintain(session, QMGR, case.store, case.catalog, "maint1")
    doomed = Extent(image + 1).name
    with case.rig.live.state() as host:
        logger.remove_extent(host.queue_managers[QMGR], doomed)
    assert case.admin(f"{BIN}/rcrmqobj -m {QMGR} -t queue {QUEUE}").exit_status != 0
    with case.session() as session:
        plan = LinuxRecovery(session, BIN, case.catalog, case.store).plan(
            LinuxRecoveryRequest.checked(host=LINUX, qmgr=QMGR, kind="media", object=QUEUE, object_type="queue")
        )
    assert plan.executable and [s.stored.extent for s in plan.steps if s.stored] == [doomed], plan.markdown()
    return None, plan


def _recover(case: LinuxCase, session: IbmiSession, arg) -> Any:
    snap, plan = arg
    return LinuxRecovery(session, BIN, case.catalog, case.store, last=snap).execute(plan)


def _not_started(case: LinuxCase, result) -> list[str]:
    qm = case.rig.live.host.queue_managers[QMGR]
    return [] if qm.running else ["the queue manager does not run after the recovery"]


def _not_recreated(case: LinuxCase, result) -> list[str]:
    qm = case.rig.live.host.queue_managers[QMGR]
    return [f"{o.name} is still damaged after the recovery" for o in qm.objects if o.damaged]


STEPS: dict[str, Step] = {
    "collect": Step(
        setup=lambda case: _collected(case, 2)[2],
        run=lambda case, session, run: collect_and_plan(session, QMGR, case.catalog, run),
    ),
    # A release right after a faulted archive: whatever the fault left in the store and the catalog, only an extent
    # with a proven copy may go.
    "archive": Step(
        setup=_archive_set_up,
        run=_archive,
        then=lambda case, session, arg: release(session, QMGR, arg[2], case.store, case.catalog),
    ),
    "release": Step(
        setup=_release_set_up,
        run=lambda case, session, run: release(session, QMGR, run, case.store, case.catalog),
        undone=_release_undone,
    ),
    "startup": Step(setup=_startup_set_up, run=_recover, undone=_not_started),
    "media": Step(setup=_media_set_up, run=_recover, undone=_not_recreated),
}


def step_of(path: str) -> Step:
    return STEPS[path.split(".")[0]]


# --- the rig: one simulated host per process, and the set-ups it restores -------------------------------------------


@dataclass(frozen=True)
class SetUp:
    host: str  # the host's state as JSON
    received: tuple[ReceivedCommand, ...]
    transfers: tuple[ReceivedCommand, ...]
    folder: Path  # the copy of the case folder (catalog, store, audit log)
    arg: Any


class Rig:
    """One simulated Linux host served over SSH for a whole process; each case restores a set-up into it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._stack = contextlib.ExitStack()
        self.fleet = self._stack.enter_context(serve(linux_only_fleet(folder / "sim")))
        self.live = self.fleet.service.linux_hosts[LINUX]
        self.faults = self.fleet.service.faults[LINUX]
        with self.live.lock:
            self._empty = self.live.host.model_dump_json()
        self.case_root = folder / "case"
        self._setups: dict[str, SetUp] = {}

    def received(self) -> list[ReceivedCommand]:
        return self.fleet.service.received.entries(LINUX)

    def transfers(self) -> list[ReceivedCommand]:
        return self.fleet.service.transfers.entries(LINUX)

    def _reset(self, host_json: str, received=(), transfers=()) -> None:
        self.faults.rules.clear()
        self.faults.transfers.clear()
        with self.live.state():
            self.live.host = LinuxHost.model_validate_json(host_json)
        for log, entries in ((self.fleet.service.received, received), (self.fleet.service.transfers, transfers)):
            log.clear()
            log.listeners.clear()
            for entry in entries:
                added = log.arrived(entry.host, entry.user, entry.command)
                log.settle(added, **{k: v for k, v in vars(entry).items() if k != "seq"})
        shutil.rmtree(self.case_root, ignore_errors=True)

    def setup(self, path: str) -> SetUp:
        """The set-up of `path`, taken the first time it is asked for (in the case folder, then kept aside)."""
        if path not in self._setups:
            self._reset(self._empty)
            self.live.add_queue_manager(QMGR, log_management=MODES[path.split(".")[1]], log_file_pages=PAGES,
                                        objects=OBJECTS)  # fmt: skip
            case = LinuxCase(self, self.case_root)
            try:
                arg = step_of(path).setup(case)
            finally:
                case.close()
            kept = self.folder / "setups" / path
            shutil.copytree(self.case_root, kept)
            with self.live.lock:
                host = self.live.host.model_dump_json()
            self._setups[path] = SetUp(
                host, tuple(copy.copy(e) for e in self.received()), tuple(copy.copy(e) for e in self.transfers()),
                kept, arg,
            )  # fmt: skip
        return self._setups[path]

    def start(self, path: str) -> tuple[LinuxCase, Any]:
        """A case of `path` as its set-up left the host and the folder, and the step's argument."""
        setup = self.setup(path)
        self._reset(setup.host, setup.received, setup.transfers)
        shutil.copytree(setup.folder, self.case_root)
        return LinuxCase(self, self.case_root), copy.deepcopy(setup.arg)

    def close(self) -> None:
        self._stack.close()


# --- enumeration from a fault-free run --------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """A command (its line and stdin) or a transfer (`transfer` "get" or "put", `command` ``SFTP GET <path>``)."""

    command: str
    stdin: str = ""
    transfer: str | None = None


def step_items(rig: Rig, path: str) -> list[Item]:
    """What a fault-free run of the step sends, in the order of its audit log's intents."""
    case, arg = rig.start(path)
    try:
        before = len(read_audit_events([case.audit_path]))
        with case.session() as session:
            step_of(path).run(case, session, arg)
        events = read_audit_events([case.audit_path])[before:]
    finally:
        case.close()
    return [Item(e["command"], e.get("input") or "", e.get("transfer")) for e in events if e.get("event") == "intent"]


_ENUMERATED: dict[str, list[Item]] = {}


def _enumerate_all() -> None:
    """Every path's items, from fault-free runs on one rig (one simulator for them all)."""
    folder = scratch_folder()
    rig = Rig(folder)
    try:
        for path in PATHS:
            _ENUMERATED[path] = step_items(rig, path)
    finally:
        rig.close()
        shutil.rmtree(folder, ignore_errors=True)


def items_of(path: str) -> list[Item]:
    """The step's items, enumerated once per test run and shared by the pytest-xdist workers (matrix.py's way: the
    first worker runs the fault-free runs and leaves them in a file named for the run; the others read it)."""
    if path not in _ENUMERATED:
        folder = _shared_folder()
        if folder is None:
            _enumerate_all()
        else:
            folder.mkdir(exist_ok=True)
            done = folder / "linux-items.json"
            with open(folder / "linux-items.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not done.exists():
                    _enumerate_all()
                    shared = {p: [vars(i) for i in items] for p, items in _ENUMERATED.items()}
                    done.write_text(json.dumps(shared), encoding="utf-8")
                for p, items in json.loads(done.read_text(encoding="utf-8")).items():
                    _ENUMERATED[p] = [Item(**i) for i in items]
    return _ENUMERATED[path]


def label(item: Item) -> str:
    """A short, stable name for an item in test ids."""
    if item.transfer is not None:
        return f"{item.transfer}.{item.command.rsplit('/', 1)[-1]}"
    program = item.command.split()[0].rsplit("/", 1)[-1]
    if program == "runmqsc":
        archived = _SET_LOG.search(item.stdin)
        shown = re.match(r"\s*DISPLAY\s+([A-Z]+)", item.stdin, re.IGNORECASE)
        return f"setlog.{archived.group(1)}" if archived else (shown.group(1).lower() if shown else "runmqsc")
    if program in ("sha256sum", "rm"):
        return f"{program}.{item.command.rsplit('/', 1)[-1].strip(chr(39))}"
    return program


def changes_something(item: Item) -> bool:
    """Whether the item may change the host or the store (the items a sigkill case is aimed at)."""
    if item.transfer is not None:
        return True
    program = item.command.split()[0].rsplit("/", 1)[-1]
    if program == "runmqsc":
        return not _READS_ONLY_MQSC.match(item.stdin)
    return program in simcommands.CHANGES_STATE


@dataclass(frozen=True)
class Case:
    path: str
    index: int
    item: Item
    occurrence: int  # how often the same command line (or transfer) came before it in the step
    kind: str

    @property
    def id(self) -> str:
        return f"{self.path}-{self.index:02d}-{label(self.item)}-{self.kind}"


def cases(paths=PATHS) -> list[Case]:
    found = []
    for path in paths:
        seen: dict[str, int] = {}
        for index, item in enumerate(items_of(path)):
            occurrence = seen.get(item.command, 0)
            seen[item.command] = occurrence + 1
            kinds = TRANSFER_KINDS if item.transfer else COMMAND_KINDS
            found += [
                Case(path, index, item, occurrence, k) for k in kinds if k != "sigkill" or changes_something(item)
            ]
    return found


# --- a case ----------------------------------------------------------------------------------------------------------


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

    @property
    def extents_lost(self) -> int:
        return len(self.report.lost_receivers) + sum(
            1 for v in self.report.violations if v.rule == "let go without a proven copy"
        )

    def explain(self) -> str:
        item = self.case.item
        shown = item.command + (f" <<< {item.stdin.strip()!r}" if item.stdin else "")
        lines = [f"{self.case.id}: fault {self.case.kind} at `{shown}` (occurrence {self.case.occurrence + 1})"]
        if self.step_error is not None:
            lines.append(f"the faulted step raised {type(self.step_error).__name__}: {self.step_error}")
        lines += [f"note: {n}" for n in self.notes]
        lines += [str(v) for v in self.report.violations]
        return "\n".join(lines)


class _CatalogGoes:
    """The catalog's database stops answering (a server gone, a file system unmounted): once `gone` is set, every
    statement the catalog's engine sends fails as the driver says when it cannot reach the database. Reads fail too,
    which a write lock cannot do to a catalog in WAL mode (catalog.py: readers never block on the writer)."""

    def __init__(self, catalog: Catalog) -> None:
        self.engine, self.gone = catalog.engine, threading.Event()
        event.listen(self.engine, "before_cursor_execute", self._refuse)

    def _refuse(self, conn, cursor, statement, parameters, context, executemany) -> None:
        if self.gone.is_set():
            raise OperationalError(statement, parameters, sqlite3.OperationalError("unable to open database file"))

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._refuse)


class _CountingAudit(AuditLog):
    """The session's audit log, which makes the catalog go (`catalog`) right before the step's item number `at` is
    recorded, so before it is sent: every catalog read or write after that point fails."""

    def __init__(self, path: Path, catalog: _CatalogGoes, at: int) -> None:
        super().__init__(path)
        self._catalog, self._at, self._count = catalog, at, 0
        self._counting = threading.Lock()

    def intent(self, **fields: Any) -> str:
        with self._counting:
            if self._count == self._at:
                self._catalog.gone.set()
            self._count += 1
        return super().intent(**fields)


def _unnamed_database(error: BaseException | None, db: Path) -> str | None:
    """Why `error` (the step's) does not name the catalog's database though the catalog caused it; None if fine."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    if not chain or not any(isinstance(e, (CatalogUnavailable, SQLAlchemyError, sqlite3.Error)) for e in chain):
        return None
    return None if db.name in str(chain[0]) else f"{type(chain[0]).__name__}: {str(chain[0])[:300]}"


def _tagged(report: Report, when: str) -> Report:
    report.violations = [type(v)(v.rule, f"{when}: {v.detail}") for v in report.violations]
    return report


def _arm(rig: Rig, case: Case) -> tuple[float, threading.Event | None, TransferFault | None]:
    """Arm the case's fault; returns the step's command timeout, the event that lets a held command go, and the
    transfer fault (spent once met)."""
    item, kind = case.item, case.kind
    if kind == "catalog_unavailable":
        return COMMAND_TIMEOUT, None, None  # the lock is the audit log's (`_LockingAudit`)
    if item.transfer is not None:
        if case.occurrence:
            raise AssertionError(f"{case.id}: a transfer of the same path twice in one step: aim at it by occurrence")
        path = item.command.split(" ", 2)[2]
        fault = TransferFault(
            "^" + re.escape(path.upper()) + "$",
            item.transfer,
            after_bytes={"drop_before": 0, "fails": 0, "cut": EXTENT_BYTES // 2, "corrupt": EXTENT_BYTES // 2 + 7}[
                kind
            ],
            corrupt=kind == "corrupt",
            refuse=kind == "fails",
        )
        rig.faults.transfers.append(fault)
        return COMMAND_TIMEOUT, None, fault
    pattern = "^" + re.escape(item.command) + "$"
    if kind == "timeout":
        release = threading.Event()
        rig.faults.rules.append(CommandRule(pattern, "hold_before", skip=case.occurrence, release=release, seconds=60))
        return TIMEOUT, release, None
    if kind in ("fails", "lies"):
        reply = (failure if kind == "fails" else lie)(item.command, item.stdin)
        rig.faults.rules.append(CommandRule(pattern, "answer", skip=case.occurrence, reply=reply))
    else:
        rig.faults.rules.append(CommandRule(pattern, kind, skip=case.occurrence))
    return COMMAND_TIMEOUT, None, None


def _in_process(rig: Rig, run: LinuxCase, case: Case, arg, outcome: Outcome) -> bool:
    """Run the step in this process under the case's fault (every kind but sigkill), let the fault play out; whether
    it was met."""
    mark = len(rig.fleet.service.received)
    timeout, release, transfer_fault = _arm(rig, case)
    lock = _CatalogGoes(run.catalog) if case.kind == "catalog_unavailable" else None
    audit = _CountingAudit(run.audit_path, lock, case.index) if lock is not None else None
    try:
        with run.session(timeout, audit) as session:
            step_of(case.path).run(run, session, arg)
    except MqJournalError as exc:
        outcome.step_error = exc  # the fault's own failure, named; what it left is what is checked
    except Exception as exc:
        outcome.step_error = exc
        where = "".join(traceback.format_exception(exc)[-6:])  # where it escaped: the fix starts there
        outcome.report.add("unnamed error", f"the faulted step raised {type(exc).__name__}: {exc}\n{where}")
    finally:
        if release is not None:
            release.set()
        if lock is not None:
            lock.close()
        _settle(rig, mark, outcome)
        rig.faults.rules.clear()
        rig.faults.transfers.clear()
    if lock is not None and (unnamed := _unnamed_database(outcome.step_error, run.root / "catalog.db")):
        outcome.report.add(
            "catalog unavailable", f"the step stopped with an error that does not name the database: {unnamed}"
        )
    if lock is not None:
        return lock.gone.is_set()
    if transfer_fault is not None:
        return transfer_fault.times == 0
    return any(e.fault for e in rig.fleet.service.received.entries(LINUX, mark))


def _settle(rig: Rig, mark: int, outcome: Outcome) -> None:
    """Wait until every command and transfer since `mark` has landed (a held one, a killed worker's)."""
    for log, since in ((rig.fleet.service.received, mark), (rig.fleet.service.transfers, 0)):
        if not log.wait_for(
            lambda entries, since=since: all(e.state != "arrived" for e in entries[since:]), SETTLE_SECONDS
        ):
            outcome.notes.append("a held command or transfer did not land")


def _killed(rig: Rig, run: LinuxCase, case: Case, arg, outcome: Outcome) -> bool:
    """The sigkill kind: the step runs in a worker process, which is SIGKILLed once the host ran the case's command
    (before its answer) or once its transfer is halfway (held there); whether that point was reached."""
    from tests.safety import linux_worker

    mark = len(rig.fleet.service.received)
    item = case.item
    release = threading.Event()
    transfer_fault = None
    if item.transfer is not None:
        path = item.command.split(" ", 2)[2]
        transfer_fault = TransferFault(
            "^" + re.escape(path.upper()) + "$", item.transfer, after_bytes=EXTENT_BYTES // 2, release=release
        )
        rig.faults.transfers.append(transfer_fault)
    else:
        pattern = "^" + re.escape(item.command) + "$"
        rig.faults.rules.append(CommandRule(pattern, "hold_after", skip=case.occurrence, seconds=60.0))

    def target(entries: list[ReceivedCommand]) -> ReceivedCommand | None:
        return next((e for e in entries[mark:] if e.fault == "hold_after"), None)

    spec = linux_worker.LinuxWorkerSpec(
        path=case.path,
        arg=arg,
        port=rig.fleet.ports[LINUX],
        client_key=rig.fleet.config.client_key,
        known_hosts=rig.fleet.config.known_hosts,
        catalog_url=run.catalog.url,
        audit_path=run.audit_path,
        store_path=run.root / "backups",
    )
    process, answer = linux_worker.start(spec)
    reached = False
    try:
        deadline = time.monotonic() + SETTLE_SECONDS
        while process.is_alive() and time.monotonic() < deadline:
            if transfer_fault is not None and transfer_fault.held:
                reached = True
                break
            if transfer_fault is None:
                entry = target(rig.fleet.service.received.entries())
                if entry is not None and entry.state != "arrived":
                    reached = True
                    break
            time.sleep(0.005)
        process.kill()  # SIGKILL: no finally, no atexit, no flush
        process.join(WORKER_SECONDS)
        try:
            ended = answer.recv() if answer.poll() else None
        except EOFError:  # killed before it could answer
            ended = None
        if ended is not None:
            outcome.notes.append(f"the worker's step ended before the kill: {ended}")
    finally:
        if process.is_alive():
            process.kill()
            process.join(5)
        answer.close()
        release.set()
        _settle(rig, mark, outcome)
        rig.faults.rules.clear()
        rig.faults.transfers.clear()
    return reached


def run_case(case: Case, rig: Rig) -> Outcome:
    """Start from the path's set-up, run the step under the case's fault, check, rerun the step, check again."""
    started = time.monotonic()
    outcome = Outcome(case)
    step = step_of(case.path)
    run, arg = rig.start(case.path)
    killed = case.kind == "sigkill"
    try:
        met = (_killed if killed else _in_process)(rig, run, case, arg, outcome)
        if not met:
            outcome.report.add("case not reached", "the faulted run never reached the item of the fault-free run")
        recovery = case.path.split(".")[0] in RECOVERY
        outcome.report.extend(_tagged(run.check(restart=not recovery, outcomes=not killed), "right after the fault"))
        if step.then is not None:
            try:
                with run.session() as session:
                    step.then(run, session, arg)
            except Exception as exc:
                outcome.report.add("next step failed", f"right after the fault it raised {type(exc).__name__}: {exc}")
            outcome.report.extend(_tagged(run.check(outcomes=not killed), "after the next step"))
        try:
            with run.session() as session:
                result = step.run(run, session, arg)
            for problem in step.undone(run, result):
                outcome.report.add("rerun incomplete", problem)
        except Exception as exc:
            outcome.report.add("rerun failed", f"the step, rerun without faults, raised {type(exc).__name__}: {exc}")
        if not recovery:
            # The next maintenance lets go what it may, a copy the fault left among the rest: what was kept as a
            # proven copy must be one. (After a recovery, its rerun and the invariants are the proof: what a
            # recovery writes is an extent from a proven copy, checked by the host's digest, or taken back.)
            try:
                with run.session() as session:
                    done = maintain(session, QMGR, run.store, run.catalog, "next")
                for name in sorted(done.undone):
                    outcome.report.add("next run incomplete", f"{name} not released: {done.kept[name]}")
            except Exception as exc:
                outcome.report.add(
                    "next run failed", f"a whole maintenance after the rerun raised {type(exc).__name__}: {exc}"
                )
        outcome.report.extend(
            _tagged(run.check(outcomes=not killed), "after the rerun" + ("" if recovery else " and a maintenance"))
        )
    finally:
        run.close()
    outcome.seconds = time.monotonic() - started
    return outcome


def scratch_folder() -> Path:
    """A folder for a process's rig, in memory where there is /dev/shm (the audit log fsyncs every record)."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="mqj-linux-matrix-", dir=base))
