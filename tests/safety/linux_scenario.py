"""One simulated Linux queue manager per case, reached over SSH as mqjournal reaches it, and the faults its steps meet.

A `LinuxScenario` serves one Linux host (linuxsim over real SSH) with one linear-logging queue manager in a folder of
its own, with mqjournal's session, catalog, extent store and audit log. Everything mqjournal does goes over SSH through
that session (tests/linuxcollect/fleet.py: collect and plan, archive, release); everything someone else does (an
administrator, MQ's own work) runs on the host directly (`admin`, `log_work`), so the simulator's log of received
commands holds mqjournal's commands only.

A `LinuxFault` is one fault for one mqjournal step, of the kinds the Linux fault tests use
(tests/linuxcollect/test_faults.py): the connection drops before or after a command, the command fails as the host
would fail it, the host answers "done" without doing it, or a download is cut or arrives with one byte changed.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.qmini import PAGE_BYTES
from mqjournal.linuxsim import commands, logger, mqsc
from mqjournal.linuxsim.model import LinuxQueueManager
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandRule, ReceivedCommand, TransferFault
from tests.conftest import serve
from tests.linuxcollect.fleet import LINUX, linux_only_fleet, session
from tests.safety.linux_invariants import ADMIN, LinuxSafetyChecker
from tests.safety.scenario import FAST_RETRY

__all__ = ["COMMAND_KINDS", "EXTENT_BYTES", "KINDS", "QMGR", "TRANSFER_KINDS", "LinuxFault", "LinuxScenario"]

QMGR = "QM.LEDGER"  # a '.' in the name: its directories are QM!LEDGER, as MQ transforms it
OBJECTS = (("APP.REQUEST", "queue"), ("APP.REPLY", "queue"), ("TO.PARTNER", "channel"))
PAGES = 16
"""Extents of 64 KiB: tens of them are quick to write, digest and copy, and a download is several SFTP reads."""
EXTENT_BYTES = PAGES * PAGE_BYTES

COMMAND_KINDS = ("drop_before", "drop_after", "fails", "lies")
TRANSFER_KINDS = ("cut", "corrupt")
KINDS = COMMAND_KINDS + TRANSFER_KINDS

_FAILURES = {
    # What each command answers when it fails on a real host (the simulator's own refusals, where it has one).
    "rcdmqimg": ExecResult(commands.RC_NOT_AVAILABLE, "", "AMQ8146E: IBM MQ queue manager not available.\n"),
    "dspmqinf": ExecResult(commands.RC_NOT_KNOWN_DSPMQ, "", commands.NOT_KNOWN),
    "cat": ExecResult(1, "", "cat: qm.ini: Permission denied\n"),
    "runmqsc": ExecResult(mqsc.RC_NOT_RUN, f"{mqsc.BANNER.format(qm=QMGR)}{mqsc.NOT_AVAILABLE}\n"),
    "ls": ExecResult(2, "", "ls: cannot open directory: Permission denied\n"),
    "sha256sum": ExecResult(1, "", "sha256sum: Input/output error\n"),
    "rm": ExecResult(1, "", "rm: cannot remove: Read-only file system\n"),
}


def aimed_at(program: str) -> str:
    """The command rule pattern of one program's command lines, with or without its directory."""
    return rf"(^|/){program} "


@dataclass(frozen=True)
class LinuxFault:
    """One fault for one run of a step: a command `kind` aimed at the `occurrence`-th (from 0) command line of
    `program` the step sends, or a transfer kind cutting (or corrupting) the step's first download at `at_byte`."""

    kind: str
    program: str = ""
    occurrence: int = 0
    at_byte: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"fault kind {self.kind!r} is not one of {KINDS}")
        if self.kind in COMMAND_KINDS and self.program not in _FAILURES:
            raise ValueError(f"no command of {self.program!r} to fault: one of {sorted(_FAILURES)}")

    def __str__(self) -> str:
        if self.kind in TRANSFER_KINDS:
            return f"{self.kind} download at byte {self.at_byte}"
        return f"{self.kind} {self.program} #{self.occurrence}"


class LinuxScenario:
    """One Linux host with one queue manager of `management`, its log starting at `first_extent`, served over SSH from
    `root`; mqjournal's session (retrying as the transport does), catalog, extent store and audit log."""

    def __init__(self, root: Path, *, management: LogManagement, first_extent: int = 0) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self._stack = contextlib.ExitStack()
        try:
            self.fleet = self._stack.enter_context(serve(linux_only_fleet(root)))
            self.live = self.fleet.service.linux_hosts[LINUX]
            self.live.add_queue_manager(
                QMGR, log_management=management, log_file_pages=PAGES, objects=OBJECTS, first_extent=first_extent
            )
            self.audit_path = root / "audit.jsonl"
            self.catalog = Catalog(f"sqlite:///{root / 'catalog.db'}")
            self._stack.callback(self.catalog.engine.dispose)
            self.store = ExtentStore(root / "backups")
            self.session = self._stack.enter_context(session(self.fleet, AuditLog(self.audit_path), retry=FAST_RETRY))
        except BaseException:
            self._stack.close()
            raise
        self.faults = self.fleet.service.faults[LINUX]

    # --- the host itself ---------------------------------------------------------------------------------------

    def qm(self) -> LinuxQueueManager:
        """A copy of the queue manager as it is now."""
        with self.live.lock:
            return self.live.host.queue_managers[QMGR].model_copy(deep=True)

    def log_work(self, nbytes: int) -> None:
        """Applications' work: `nbytes` of log records (filling and switching extents), then a checkpoint, as MQ takes
        one after every so many records. A minute of the host's clock goes by."""
        with self.live.state() as host:
            qm = host.queue_managers[QMGR]
            host.now += timedelta(minutes=1)
            logger.write(qm, nbytes, at=host.now)
            logger.checkpoint(qm)

    def admin(self, command_line: str, stdin: str = "") -> ExecResult:
        """An administrator runs a command on the host (not through mqjournal's sessions)."""
        return self.live.run(command_line, ADMIN, stdin)

    def received(self) -> list[ReceivedCommand]:
        return self.fleet.service.received.entries(LINUX)

    # --- faults ------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def under(self, fault: LinuxFault | None):
        """Arm `fault` for what runs inside; whatever of it was not met is disarmed after."""
        if fault is not None and fault.kind in TRANSFER_KINDS:
            self.faults.transfers.append(
                TransferFault(r"\.LOG$", after_bytes=fault.at_byte, corrupt=fault.kind == "corrupt")
            )
        elif fault is not None:
            action = {"fails": "answer", "lies": "answer"}.get(fault.kind, fault.kind)
            reply = {"fails": _FAILURES.get(fault.program), "lies": ExecResult(0)}.get(fault.kind)
            self.faults.rules.append(CommandRule(aimed_at(fault.program), action, skip=fault.occurrence, reply=reply))
        try:
            yield
        finally:
            self.faults.rules.clear()
            self.faults.transfers.clear()

    # --- the invariants ----------------------------------------------------------------------------------------

    def checker(self) -> LinuxSafetyChecker:
        return LinuxSafetyChecker(
            live=self.live,
            qmgr=QMGR,
            catalog=self.catalog,
            store=self.store,
            audit_paths=[self.audit_path],
            received=self.received,
        )

    def close(self) -> None:
        self._stack.close()
