"""A Linux queue manager that cannot start (#32): the on-call alert, from a collection's snapshot. Pure functions.

strmqm replays the log from RECLOG, so every extent from RECLOG to the current one must be in the log directory; one
that is not makes the start fail with AMQ6767 (RDO; docs/linux-interfaces.md section 6), the counterpart of IBM i's
AMQ7432. A queue manager that runs does not notice: its next restart does. So the alert is raised from what the
collection listed, before anyone tries strmqm, as IBM i's `cannotstart` raises it from the receivers listed; the
rule of which extents restart reads is linuxmq/restore.py's, the one a recovery plan puts them back by.
A media recovery is not raised here: a Linux snapshot names no damaged object (rcdmqimg's AMQ7472 is recorded by
its ID only), and the queue manager starts without one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mqjournal.linuxmq.restore import plan_restore
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.vocabulary import Alert

__all__ = ["LinuxCannotStart", "cannot_start", "listed", "newest_by_queue_manager"]

CODE = str(Alert.QMGR_CANNOT_START)
LISTED = 6  # more missing extents than this are written as a range


@dataclass(frozen=True)
class LinuxCannotStart:
    """Why `qmgr` on the Linux host `host` cannot start: extents its restart reads are not in its log directory."""

    host: str
    qmgr: str
    log_path: str
    restart: str  # RECLOG, as collected
    current: str  # CURRLOG
    missing: tuple[str, ...]  # oldest first
    kind: RecoveryKind = RecoveryKind.STARTUP

    @property
    def incident(self) -> str:
        """What makes this incident this one (the recovery run's id): the first extent missing. The same extent
        missing in the next collection is the same incident; another one is another."""
        return self.missing[0]

    def recovery_conf(self) -> dict[str, str]:
        """The recovery DAG's form, filled in: a Linux plan reads the log points itself."""
        return {"host": self.host, "qmgr": self.qmgr, "kind": self.kind.value}

    @property
    def text(self) -> str:
        names = self.missing
        what = f"extent{'s' if len(names) > 1 else ''} {listed(names)} {'are' if len(names) > 1 else 'is'}"
        conf = ", ".join(f"{k}={v}" for k, v in self.recovery_conf().items())
        return (
            f"{CODE}: strmqm will fail with AMQ6767: needed {what} missing from {self.log_path} (restart reads "
            f"RECLOG {self.restart} through CURRLOG {self.current}); put them back from the backup store: run "
            f"mq_journal_recovery with {conf}"
        )


def listed(names: Sequence[str]) -> str:
    """Extent names, oldest first, as an alert writes them: each one, or more than LISTED as a range."""
    return ", ".join(names) if len(names) <= LISTED else f"{names[0]} through {names[-1]} ({len(names)})"


def cannot_start(snapshot: LinuxSnapshot) -> LinuxCannotStart | None:
    """The alert for one collection of a queue manager; None when every extent its restart reads is listed, or its
    log has no points (circular: MQ reuses its files, nothing is restored extent by extent)."""
    if snapshot.log_type != "LINEAR" or snapshot.points() is None:
        return None
    listed = [e.name for e in snapshot.extents]
    missing = plan_restore(snapshot, listed, (), media=False).missing
    if not missing:
        return None
    assert snapshot.restart_extent is not None and snapshot.current_extent is not None  # points() is not None
    return LinuxCannotStart(
        host=snapshot.host,
        qmgr=snapshot.qmgr,
        log_path=snapshot.log_path,
        restart=snapshot.restart_extent,
        current=snapshot.current_extent,
        missing=missing,
    )


def newest_by_queue_manager(snapshots: Iterable[LinuxSnapshot]) -> dict[tuple[str, str], LinuxSnapshot]:
    """Each queue manager's newest snapshot, by (host, queue manager)."""
    newest: dict[tuple[str, str], LinuxSnapshot] = {}
    for s in sorted(snapshots, key=lambda s: s.collected_at):
        newest[(s.host, s.qmgr)] = s
    return newest
