"""A queue manager that cannot start (or cannot re-create a damaged object): the on-call alert. Pure functions.

MQ reads its journal only in a recovery pass, at STRMQM (from the AMQ7460 startup recovery point) or at RCRMQMOBJ
(from the AMQ7462 media recovery point). A receiver from that point on that is not on the partition, or whose
storage is freed, makes the pass end with AMQ7432, and STRMQM fails (seeds, "Journal management": "If it finds that
a journal it requires is not present, it issues message AMQ7432 ... restore all journal receivers that were detached
after this date"). A queue manager running today does not notice; its next restart, after a power loss, does. So the
alert is raised from what the collection read, before anyone tries STRMQM:

- an AMQ7432 on QMQMMSG that no later AMQ7460 answered (a start, or a checkpoint, worked since), or
- the receiver AMQJRNINF, AMQ7460 or AMQ7462 names is missing on the host or freed, or AMQJRNINF shows asterisks
  (MQ itself found the receiver of its oldest needed entry gone).

The kind of recovery follows from which point lost its receiver: `startup` when an AMQ7432 was seen, or the
restart's point (AMQ7460) lost it, or only AMQJRNINF tells (no AMQ7460 read); `media` when only the older, media point
(AMQ7462, or AMQJRNINF beside a readable AMQ7460) lost it and an object is damaged (AMQ7472): the queue manager starts,
its damaged object cannot be re-created. The media point lost with nothing damaged raises nothing here (MQ starts,
and the next RCDMQMIMG images past the loss; the plan's own alerts say it). `recovery_conf` is the recovery DAG's
form filled in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.names import ReceiverName, is_receiver_name
from mqjournal.planrows import PlannedQueueManager
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.snapshot import QueueMessage, Receiver, Snapshot
from mqjournal.timefmt import local_time
from mqjournal.vocabulary import Alert, ReceiverStatus

CODE = str(Alert.QMGR_CANNOT_START)
# More than this many names between the missing one and the oldest left are written as a range.
LISTED = 6
# A walk along receiver names that never meets a receiver on the host (a restored AMQA1nnnnn series) stops here.
WALK_LIMIT = 10_000


@dataclass(frozen=True)
class CannotStart:
    """Why `qmgr` on `host` cannot start (kind startup) or cannot re-create a damaged object (kind media)."""

    host: str
    qmgr: str
    library: str
    kind: RecoveryKind
    missing: tuple[str, ...]  # the receivers MQ needs that are not readable on the host, oldest first; () unknown
    evidence: str  # what told: "AMQ7432", "AMQ7460", "AMQ7462" or "AMQJRNINF"
    needed_at: datetime | None  # the oldest journal entry the recovery must restore from (the partition's offset)
    damaged_object: tuple[str, str] | None = None  # media: (name, type as AMQ7472 gives it)
    freed: tuple[str, ...] = ()  # those of `missing` still on the host with their storage freed (restore them)

    @property
    def timestamp(self) -> str | None:
        """The form's `timestamp`: the entry time with the partition's offset, so no DST rule is needed to read it."""
        return self.needed_at.isoformat(timespec="seconds") if self.needed_at is not None else None

    def recovery_conf(self) -> dict[str, str]:
        """The recovery DAG's params for this queue manager: its trigger form, filled in."""
        conf = {"host": self.host, "qmgr": self.qmgr, "kind": self.kind.value}
        if self.kind is RecoveryKind.STARTUP and self.timestamp:
            conf["timestamp"] = self.timestamp
        if self.kind is RecoveryKind.MEDIA and self.damaged_object is not None:
            conf["object"] = self.damaged_object[0]
        return conf

    @property
    def missing_text(self) -> str:
        if not self.missing:
            return "the receiver holding its oldest needed entry is gone (its name is no longer known)"
        names = self.missing
        listed = ", ".join(names) if len(names) <= LISTED else f"{names[0]} through {names[-1]} ({len(names)})"
        text = f"needed receiver{'s' if len(names) > 1 else ''} {listed} {'are' if len(names) > 1 else 'is'} missing"
        return text + (f" (freed: {', '.join(self.freed)})" if self.freed else "")

    @property
    def text(self) -> str:
        """The alert as the on-call engineer reads it: what fails, what is missing, from when, what to trigger."""
        conf = ", ".join(f"{k}={v}" for k, v in self.recovery_conf().items())
        restore = "restore the receivers it needs"
        if self.needed_at is not None:
            restore = f"restore the receivers holding entries from {local_time(self.needed_at)} on"
        if self.kind is RecoveryKind.STARTUP:
            what = "STRMQM will fail with AMQ7432" if self.evidence != "AMQ7432" else "STRMQM failed with AMQ7432"
        else:
            what = "RCRMQMOBJ of its damaged object will fail with AMQ7432"
        return f"{CODE}: {what}: {self.missing_text} ({self.evidence}); {restore}: run mq_journal_recovery with {conf}"


def cannot_start(snapshot: Snapshot) -> CannotStart | None:
    """The alert for one collection of a queue manager, None when every receiver MQ needs is readable on the host."""
    on_host = {r.name: r for r in snapshot.receivers if r.library == snapshot.qmgr_library}
    startup, media = snapshot.startup_recovery, snapshot.media_recovery
    startup_missing = startup is not None and _gone(startup.receiver, on_host)
    media_missing = media is not None and _gone(media.receiver, on_host)
    jrninf = _jrninf(snapshot)
    jrninf_missing = jrninf is not None and _gone(jrninf[0], on_host)
    unanswered = _unanswered_amq7432(snapshot.messages)
    # AMQ7472 reports since the media point: an object repaired since has its report before the point moved past it.
    damaged_now = [d for d in snapshot.damaged_objects if media is None or d.reported_at >= media.at]
    damaged: tuple[str, str] | None = None
    evidence: str
    first: str | None
    at: datetime | None

    if unanswered is not None:
        kind, evidence, first, at = (
            RecoveryKind.STARTUP,
            "AMQ7432",
            _first_gone(snapshot, on_host),
            snapshot.entry_needed_at,
        )
    elif startup_missing and startup is not None:
        kind, evidence, first, at = RecoveryKind.STARTUP, "AMQ7460", startup.receiver, startup.at
    elif jrninf_missing and jrninf is not None and startup is None:
        # No AMQ7460 read to say where the restart replays from: AMQJRNINF's receiver may be the one it needs.
        kind, evidence, first, at = RecoveryKind.STARTUP, "AMQJRNINF", jrninf[0], jrninf[1]
    elif (media_missing or jrninf_missing) and damaged_now:
        # The restart's point is on the host: the older, media point lost its receiver, and an object needs it.
        kind, evidence = RecoveryKind.MEDIA, "AMQ7462" if media_missing else "AMQJRNINF"
        first, at = (media.receiver, media.at) if media is not None and media_missing else jrninf or (None, None)
        newest = max(damaged_now, key=lambda d: d.reported_at)
        damaged = (newest.object, newest.object_type)
    else:
        # Every point a pass would start from is readable, or only the media point is lost with no object damaged:
        # MQ starts, and the next RCDMQMIMG records new media images past the loss.
        return None
    # AMQ7432's time is the entry the pass could not read; without it, the restart replays from AMQ7460.
    at = at or (startup.at if startup is not None else jrninf[1] if jrninf is not None else None)
    missing = _missing_from(first, on_host)
    return CannotStart(
        host=snapshot.host,
        qmgr=snapshot.qmgr,
        library=snapshot.qmgr_library,
        kind=kind,
        missing=missing,
        evidence=evidence,
        needed_at=at,
        damaged_object=damaged,
        freed=tuple(name for name in missing if name in on_host),
    )


def _gone(name: str | None, on_host: dict[str, Receiver]) -> bool:
    """A receiver MQ names (None: MQ printed asterisks, it found the receiver gone) that cannot be read on the host."""
    if name is None:
        return True
    found = on_host.get(name)
    return found is None or found.status == ReceiverStatus.FREED


def _jrninf(snapshot: Snapshot) -> tuple[str | None, datetime] | None:
    """AMQJRNINF's receiver (None: asterisks) and entry time in the partition's offset; None when unreadable."""
    try:
        record = parse_amqjrninf(snapshot.amqjrninf, qmgr=snapshot.qmgr)
    except MalformedAmqjrninf:
        return None
    return record.receiver, record.needed_at.replace(tzinfo=snapshot.collected_at.tzinfo)


def _unanswered_amq7432(messages: list[QueueMessage]) -> QueueMessage | None:
    """The newest AMQ7432 when no AMQ7460 came after it: a start or checkpoint that worked since answers it."""
    failed = max((m for m in messages if m.id == "AMQ7432"), key=lambda m: m.at, default=None)
    if failed is None:
        return None
    answered = any(m.id == "AMQ7460" and m.at > failed.at for m in messages)
    return None if answered else failed


def _first_gone(snapshot: Snapshot, on_host: dict[str, Receiver]) -> str | None:
    """For an AMQ7432 (which names no receiver): the oldest of MQ's named receivers that is gone."""
    jrninf = _jrninf(snapshot)
    named = [
        jrninf[0] if jrninf is not None else None,
        snapshot.startup_recovery.receiver if snapshot.startup_recovery else None,
        snapshot.media_recovery.receiver if snapshot.media_recovery else None,
    ]
    return next((name for name in named if name is not None and _gone(name, on_host)), None)


def _missing_from(first: str | None, on_host: dict[str, Receiver]) -> tuple[str, ...]:
    """`first` and the receivers after it, by MQ's naming rule, up to the next one readable on the host."""
    if first is None:
        return ()
    if not is_receiver_name(first):
        return (first,)
    readable = {name for name in on_host if not _gone(name, on_host)}
    names = [first]
    name = ReceiverName.parse(first)
    for _ in range(WALK_LIMIT):
        name = name.successor()
        if str(name) in readable or str(name) == first:
            return tuple(names)
        names.append(str(name))
    return (first,)  # no receiver of its series is left: only the one MQ named is known


def newest_by_queue_manager(snapshots: Iterable[Snapshot]) -> dict[tuple[str, str], Snapshot]:
    """Each queue manager's newest snapshot, by (host, library)."""
    newest: dict[tuple[str, str], Snapshot] = {}
    for s in sorted(snapshots, key=lambda s: s.collected_at):
        newest[(s.host, s.qmgr_library)] = s
    return newest


def with_cannot_start_alerts(
    qms: Iterable[PlannedQueueManager], snapshots: Mapping[tuple[str, str], Snapshot]
) -> list[PlannedQueueManager]:
    """The plan's queue managers with QMGR_CANNOT_START added where their snapshot of the run (`snapshots`, by
    (host, library): newest_by_queue_manager) says they cannot start. The plan job does not raise it: it is this
    module's rule, which the on-call step triggers the recovery by, so that the gate, the run report and the fleet
    view say it from the same rule."""
    out = []
    for q in qms:
        snapshot = snapshots.get((q.host, q.qmgr_library))
        if snapshot is not None and Alert.QMGR_CANNOT_START not in q.alerts and cannot_start(snapshot) is not None:
            q = q.model_copy(update={"alerts": tuple(sorted({*q.alerts, Alert.QMGR_CANNOT_START}))})
        out.append(q)
    return out
