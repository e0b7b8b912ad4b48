"""The safety invariants of mqjournal on a Linux queue manager's linear log (#32), checked against the simulator's truth.

Nothing here asks mqjournal what it did. The simulated host (linuxsim) is the truth about the queue manager, its
log points and its extent files; the simulator's log of received commands (each with what runmqsc read on its
standard input) is the truth about what mqjournal asked of the host; the catalog, the extent store and the audit log
are what mqjournal wrote down. The invariants:

1. **Restart**: on a copy of the host, the queue manager loses power and the simulator's `strmqm` starts it again:
   every extent from RECLOG to CURRLOG is in its log directory as MQ wrote it.
2. **Media recovery**: on that copy, `rcrmqobj` re-creates every recoverable object: every extent from the object's
   media image (MEDIALOG, the oldest) to CURRLOG is there.
3. **Nothing let go without a proven copy**: every extent a command of mqjournal's could have let go, an `rm` or a
   `SET LOG ARCHIVED` the host ran (whatever it answered, and whether or not the answer came back), has a copy the
   catalog recorded before the command arrived, whose SHA-256 the host vouched for, which is the SHA-256 of the
   bytes MQ wrote into the extent, and whose bytes in the store, read again here, have that SHA-256.
4. **Every command recorded**: `invariants.audit_report` for the host: each command it received is in the audit log
   with its standard input, the intent written before the command arrived and its outcome after, with the host's
   exit status.

5. **Every transfer recorded** (`transfers_report`, given the simulator's transfer log): each SFTP GET or PUT of an
   extent the host received is a transfer attempt in the audit log, its intent written before the file was opened,
   and every transfer intent has its outcome.

Commands someone else runs on the host (an administrator, MQ's own jobs) go to the host directly, never through the
received log, so they are not held against mqjournal.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from mqjournal.catalog import Catalog, StoredExtent
from mqjournal.errors import InvalidName
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxsim import commands, logger
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.linuxsim.model import LinuxHost
from mqjournal.sim.server import ReceivedCommand
from tests.safety.invariants import Report, audit_report, read_audit_events

__all__ = ["ADMIN", "LinuxSafetyChecker", "let_go_by", "transfers_report"]

ADMIN = "mqm"
"""Who runs the simulated restart and media recovery: a member of group mqm, as an administrator is."""
_SET_LOG_ARCHIVED = re.compile(r"\bSET\s+LOG\s+ARCHIVED\s*\(\s*'?([^')\s]*)'?\s*\)", re.IGNORECASE)
_NOT_RUN = frozenset({"dropped", "answered_by_fault"})  # the host never ran these: nothing was let go


def let_go_by(entry: ReceivedCommand) -> list[str]:
    """The extents a command the host received could have let go: the files of an `rm`, the extents of a `SET LOG
    ARCHIVED` on runmqsc's standard input (after which MQ reuses or deletes the extent itself)."""
    if entry.state in _NOT_RUN:
        return []
    words = shlex.split(entry.command)
    program = posixpath.basename(words[0]) if words else ""
    if program == "rm":
        return [posixpath.basename(w) for w in words[1:] if not w.startswith("-")]
    if program == "runmqsc":
        return _SET_LOG_ARCHIVED.findall(entry.stdin or "")
    return []


def restart_and_recover(host: LinuxHost, qmgr: str) -> Report:
    """Invariants 1 and 2 on a copy of `host`: a power loss, strmqm, then rcrmqobj of every recoverable object."""
    report = Report()
    copy = host.model_copy(deep=True)
    qm = copy.queue_managers[qmgr]
    logger.crash(qm)
    started = commands.run(copy, ADMIN, ["strmqm", qmgr])
    if started.exit_status != 0:
        report.lost_receivers.append(qmgr)
        report.add(
            "restart",
            f"{qmgr}: strmqm after a power loss ends with {started.exit_status}: {started.stderr.strip()} "
            f"(RECLOG {Extent(qm.restart).name}, CURRLOG {Extent(qm.current).name}, on disk {sorted(qm.extents)})",
        )
        return report
    for obj in qm.objects:
        out = commands.run(copy, ADMIN, ["rcrmqobj", "-m", qmgr, "-t", obj.type, obj.name])
        if out.exit_status != 0:
            report.lost_receivers.append(f"{qmgr} {obj.name}")
            report.add(
                "media recovery",
                f"{qmgr}: rcrmqobj of {obj.name} (imaged in {Extent(obj.image_extent).name}) ends with "
                f"{out.exit_status}: {out.stderr.strip()} (on disk {sorted(qm.extents)})",
            )
    return report


def transfers_report(
    host_name: str, transfers: list[ReceivedCommand], events: list[dict], *, require_outcomes: bool = True
) -> Report:
    """Invariant 5: every SFTP transfer the host received (``SFTP GET|PUT <path>``, the simulator's transfer log) is
    a transfer attempt in the audit `events` (matched in order by its text), its intent written before the file was
    opened; every transfer intent has an outcome (`require_outcomes`)."""
    report = Report()
    intents: dict[str, list[dict]] = {}
    outcomes = {e.get("id") for e in events if e.get("event") == "outcome" and e.get("transfer")}
    for e in events:
        if e.get("event") == "intent" and e.get("transfer") and e.get("host", host_name) == host_name:
            intents.setdefault(e["command"], []).append(e)
            if require_outcomes and e.get("id") not in outcomes:
                report.add("unexplained intent", f"the transfer `{e['command']}` has an intent and no outcome")
    for entry in transfers:
        if entry.host != host_name:
            continue
        queue = intents.get(entry.command)
        if not queue:
            report.unrecorded_commands.append(entry.command)
            report.add(
                "unrecorded transfer",
                f"the host received `{entry.command}` ({entry.state}) and the audit log has no record of it",
            )
            continue
        written = datetime.fromisoformat(queue.pop(0)["at"]).timestamp()
        if written > entry.arrived_at:
            report.add("intent after the transfer", f"`{entry.command}` was opened before its intent was written")
    return report


class LinuxSafetyChecker:
    """The invariants for one queue manager of one simulated Linux host, its catalog, store and audit log.

    `received` gives the commands the host received from mqjournal (the simulator's `CommandLog` entries for it)."""

    def __init__(
        self,
        *,
        live: LinuxSimulatedHost,
        qmgr: str,
        catalog: Catalog,
        store: ExtentStore,
        audit_paths: Sequence[Path],
        received: Callable[[], list[ReceivedCommand]],
    ) -> None:
        self.live, self.qmgr, self.catalog, self.store = live, qmgr, catalog, store
        self.audit_paths = list(audit_paths)
        self._received = received

    def check(self) -> Report:
        with self.live.lock:
            host = self.live.host.model_copy(deep=True)
        received = self._received()
        report = Report()
        report.extend(restart_and_recover(host, self.qmgr))
        report.extend(self.let_go(host, received))
        report.extend(audit_report(host.name, received, read_audit_events(self.audit_paths)))
        report.commands_received = len(received)
        return report

    def let_go(self, host: LinuxHost, received: list[ReceivedCommand]) -> Report:
        """Invariant 3."""
        report = Report()
        qm = host.queue_managers[self.qmgr]
        copies: dict[str, list[StoredExtent]] = {}
        for copy in self.catalog.extent_copies(host.name, self.qmgr):
            copies.setdefault(copy.extent, []).append(copy)
        reread: dict[str, str | None] = {}
        for entry in received:
            for name in let_go_by(entry):
                try:
                    extent = Extent.parse(name)
                except InvalidName:
                    report.add("let go without a proven copy", f"`{entry.command}` names {name!r}, not an extent")
                    continue
                written = logger.extent_digest(qm.name, extent.number, qm.extent_size)
                problems = [self._unproven(c, entry, written, reread) for c in copies.get(name, [])]
                if None in problems:
                    continue
                report.add(
                    "let go without a proven copy",
                    f"{self.qmgr} {name} was let go by `{entry.command}` {(entry.stdin or '').strip()!r} "
                    f"({entry.state}) and no catalogued copy proves it: " + ("; ".join(map(str, problems)) or "none"),
                )
        return report

    def _unproven(
        self, copy: StoredExtent, entry: ReceivedCommand, written: str, reread: dict[str, str | None]
    ) -> str | None:
        """Why `copy` does not prove the extent `entry` let go (None when it does)."""
        if copy.verified_at.timestamp() > entry.arrived_at:
            return f"{copy.key} was made after the command"
        if copy.host_sha256 != written or copy.sha256 != written:
            return f"{copy.key} is not of the bytes MQ wrote (host {copy.host_sha256}, copy {copy.sha256})"
        if copy.key not in reread:
            reread[copy.key] = self._sha256(copy)
        if reread[copy.key] != copy.sha256:
            return f"{copy.key} reads back as {reread[copy.key]}"
        return None

    def _sha256(self, copy: StoredExtent) -> str | None:
        digest = hashlib.sha256()
        try:
            with self.store.open_copy(copy) as stored:
                while chunk := stored.read(1 << 20):
                    digest.update(chunk)
        except OSError:
            return None
        return digest.hexdigest()
