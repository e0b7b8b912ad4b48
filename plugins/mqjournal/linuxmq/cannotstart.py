"""A Linux queue manager that cannot start (#32): the on-call alert, from a collection's snapshot. Pure functions.

strmqm replays the log from RECLOG, so every extent from RECLOG to the current one must be in the log directory; one
that is not makes the start fail with AMQ6767 (RDO; docs/linux-interfaces.md section 6), the counterpart of IBM i's
AMQ7432. A queue manager that runs does not notice: its next restart does. So the alert is raised from what the
collection listed, before anyone tries strmqm, as IBM i's `cannotstart` raises it from the receivers listed; the
rule of which extents restart reads is linuxmq/restore.py's, the one a recovery plan puts them back by.
A media recovery is raised as IBM i's is: when the restart's extents are all there, but one from MEDIALOG on is not,
and the collection's rcdmqimg reported an object damaged (AMQ7472, linuxmq.collector.damaged_objects): the queue
manager starts, its damaged object cannot be re-created (rcrmqobj reads the log from the object's media image on).
The media extents lost with nothing damaged raise nothing (the next rcdmqimg images past the loss; the plan's
`media_stuck` alert says when MEDIALOG does not move), and a host whose policy is `imgsched` runs no rcdmqimg, so
its collections name no damaged object and no media alert is raised for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.commands import object_type
from mqjournal.linuxmq.restore import plan_restore
from mqjournal.linuxmq.snapshot import DamagedObject, LinuxSnapshot
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.vocabulary import Alert

__all__ = ["LinuxCannotStart", "cannot_start", "listed", "newest_by_queue_manager", "rcrmqobj_type"]

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
    media: str | None = None  # MEDIALOG, as collected: where a media recovery reads from
    damaged_object: DamagedObject | None = None  # media: the object to re-create

    @property
    def incident(self) -> str:
        """What makes this incident this one (the recovery run's id): the first extent missing. The same extent
        missing in the next collection is the same incident; another one is another."""
        return self.missing[0]

    def recovery_conf(self) -> dict[str, str]:
        """The recovery DAG's form, filled in: a Linux plan reads the log points itself; a media recovery names its
        object and rcrmqobj's type word (`all` for a type AMQ7472 wrote that rcrmqobj does not take)."""
        conf = {"host": self.host, "qmgr": self.qmgr, "kind": self.kind.value}
        if self.kind is RecoveryKind.MEDIA and self.damaged_object is not None:
            conf["object"] = self.damaged_object.name
            conf["object_type"] = rcrmqobj_type(self.damaged_object.type)
        return conf

    @property
    def text(self) -> str:
        names = self.missing
        what = f"extent{'s' if len(names) > 1 else ''} {listed(names)} {'are' if len(names) > 1 else 'is'}"
        conf = ", ".join(f"{k}={v}" for k, v in self.recovery_conf().items())
        if self.kind is RecoveryKind.MEDIA and self.damaged_object is not None:
            failing = (
                f"rcrmqobj of the damaged {self.damaged_object.type} {self.damaged_object.name} (AMQ7472) will fail "
                f"with AMQ6767: needed {what} missing from {self.log_path} (media recovery reads MEDIALOG "
                f"{self.media} through CURRLOG {self.current})"
            )
        else:
            failing = (
                f"strmqm will fail with AMQ6767: needed {what} missing from {self.log_path} (restart reads RECLOG "
                f"{self.restart} through CURRLOG {self.current})"
            )
        return f"{CODE}: {failing}; put them back from the backup store: run mq_journal_recovery with {conf}"


def rcrmqobj_type(written: str) -> str:
    """rcrmqobj's -t word for a type as AMQ7472 writes it; `all` when rcrmqobj takes no such word (it then re-creates
    every object of that name, whatever its type)."""
    try:
        return object_type(written)
    except InvalidName:
        return "all"


def listed(names: Sequence[str]) -> str:
    """Extent names, oldest first, as an alert writes them: each one, or more than LISTED as a range."""
    return ", ".join(names) if len(names) <= LISTED else f"{names[0]} through {names[-1]} ({len(names)})"


def cannot_start(snapshot: LinuxSnapshot) -> LinuxCannotStart | None:
    """The alert for one collection of a queue manager; None when every extent its restart reads is listed, or its
    log has no points (circular: MQ reuses its files, nothing is restored extent by extent)."""
    if snapshot.log_type != "LINEAR" or snapshot.points() is None:
        return None
    listed = [e.name for e in snapshot.extents]
    assert snapshot.restart_extent is not None and snapshot.current_extent is not None  # points() is not None
    alert = LinuxCannotStart(
        host=snapshot.host,
        qmgr=snapshot.qmgr,
        log_path=snapshot.log_path,
        restart=snapshot.restart_extent,
        current=snapshot.current_extent,
        media=snapshot.media_extent,
        missing=(),
    )
    if missing := plan_restore(snapshot, listed, (), media=False).missing:
        return replace(alert, missing=missing)
    damaged = snapshot.media_images.damaged
    if damaged and (missing := plan_restore(snapshot, listed, (), media=True).missing):
        # The newest report last: rcdmqimg reports in its own order, one collection at a time.
        return replace(alert, missing=missing, kind=RecoveryKind.MEDIA, damaged_object=damaged[-1])
    return None


def newest_by_queue_manager(snapshots: Iterable[LinuxSnapshot]) -> dict[tuple[str, str], LinuxSnapshot]:
    """Each queue manager's newest snapshot, by (host, queue manager)."""
    newest: dict[tuple[str, str], LinuxSnapshot] = {}
    for s in sorted(snapshots, key=lambda s: s.collected_at):
        newest[(s.host, s.qmgr)] = s
    return newest
