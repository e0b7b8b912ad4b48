"""The reference planner: which receivers to keep, save or delete, and what looks wrong. Pure functions, no I/O.

`docs/planning-rules.md` is the text of these rules, and this module their one implementation: the Spark job plans each
queue manager with `plan_queue_manager` in an Arrow function over sorted partitions (`mapInArrow`)
(`mqjournal.sparkplan.grouped`), and a property test holds its plan equal to `plan_fleet`'s. The words (actions,
reasons, block reasons, alerts) are `mqjournal.vocabulary`'s. Right before deleting, `delete_decisions` applies
`plan_queue_manager` to the live state again (docs, section 6), so a stale plan can never delete what is needed now.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import DST_MARGIN, parse_amqjrninf
from mqjournal.names import ReceiverName, is_receiver_name
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver, PlanTotals, QueueManagerRef
from mqjournal.policy import Policy
from mqjournal.snapshot import Receiver, RecoveryPoint, Snapshot
from mqjournal.vocabulary import (
    BLOCK_ORDER,
    DELETES,
    SAVES,
    SITE_WAITS,
    Action,
    Alert,
    BlockReason,
    DeleteReason,
    HoldingPoint,
    Reason,
    ReceiverStatus,
)

STARS = "*" * 10


@dataclass(frozen=True)
class FleetPlan:
    """The reference planner's plan of a fleet: the rows the plan job writes, and the planning time and policy."""

    as_of: datetime
    policy: Policy
    queue_managers: list[PlannedQueueManager]
    receivers: list[PlannedReceiver]

    def summary(self) -> PlanTotals:
        actions: dict[Action, int] = defaultdict(int)
        for r in self.receivers:
            actions[r.action] += 1
        alerts: dict[Alert, int] = defaultdict(int)
        for q in self.queue_managers:
            for code in q.alerts:
                alerts[code] += 1
        return PlanTotals(
            as_of=self.as_of,
            policy=self.policy,
            queue_managers=len(self.queue_managers),
            blocked_queue_managers=sum(q.blocked for q in self.queue_managers),
            receivers=len(self.receivers),
            actions=dict(sorted(actions.items())),
            alerts=dict(sorted(alerts.items())),
            bytes_to_save=sum(q.bytes_to_save for q in self.queue_managers),
            bytes_to_delete=sum(q.bytes_to_delete for q in self.queue_managers),
            bytes_freed=sum(q.bytes_freed for q in self.queue_managers),
        )


# --- 1. the chain ---------------------------------------------------------------------------------------------


def chain_of(snapshot: Snapshot) -> list[Receiver]:
    """The journal's receivers in attach order (names wrap, so they only break ties)."""
    members = [
        r
        for r in snapshot.receivers
        if r.journal == snapshot.journal.name
        and r.journal_library == snapshot.journal.library
        and r.attached_at is not None
    ]
    return sorted(
        members,
        key=lambda r: (r.attached_at, r.first_sequence is None, r.first_sequence or 0, r.name),
    )


def chain_is_broken(chain: list[Receiver]) -> bool:
    for a, b in pairwise(chain):
        if a.next is not None and (a.next, a.next_library) != (b.name, b.library):
            return True
        if b.previous is not None and (b.previous, b.previous_library) != (a.name, a.library):
            return True
        if a.last_sequence is not None and b.first_sequence is not None and b.first_sequence != a.last_sequence + 1:
            return True
    attached = [i for i, r in enumerate(chain) if r.status == ReceiverStatus.ATTACHED]
    return len(attached) != 1 or attached[0] != len(chain) - 1


# --- 2. the oldest needed receiver ------------------------------------------------------------------------------


@dataclass(frozen=True)
class OldestNeeded:
    position: int  # n: every chain member at or after it is needed
    blocks: tuple[BlockReason, ...]
    needed_at: datetime | None  # AMQJRNINF's; None when AMQJRNINF is unusable
    not_on_system: bool
    points_disagree: bool = False
    recovery_points: str = ""
    holding_point: HoldingPoint | None = None
    holding_point_at: datetime | None = None


def to_milliseconds(moment: datetime) -> datetime:
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def attached_at(member: Receiver) -> datetime:
    """A chain member's attach time: `chain_of` keeps only receivers that have one."""
    assert member.attached_at is not None, f"{member.name} is not a chain member"
    return member.attached_at


def _by_time(chain: list[Receiver], moment: datetime) -> int | None:
    """The last chain member attached at or before `moment`, compared at AMQJRNINF's precision (milliseconds)."""
    attached_before = [i for i, r in enumerate(chain) if to_milliseconds(attached_at(r)) <= moment]
    return attached_before[-1] if attached_before else None


def _wall_clock(moment: datetime) -> str:
    """YYYY-MM-DDTHH:MM:SS.mmm of the time as read where it was recorded (its own offset; naive: as written)."""
    m = moment
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond // 1000:03d}"
    )


def recovery_points_text(snapshot: Snapshot) -> str:
    """AMQJRNINF, AMQ7460 and AMQ7462 side by side, as the approval body and the report show them (docs, 2.3)."""
    if snapshot.amqjrninf is None:
        parts = ["AMQJRNINF -"]
    else:
        try:
            record = parse_amqjrninf(snapshot.amqjrninf, qmgr=snapshot.qmgr)
        except MalformedAmqjrninf:
            parts = ["AMQJRNINF malformed"]
        else:
            parts = [f"AMQJRNINF {record.receiver or STARS} {_wall_clock(record.needed_at)}"]
    for label, point in (("AMQ7460", snapshot.startup_recovery), ("AMQ7462", snapshot.media_recovery)):
        parts.append(f"{label} -" if point is None else f"{label} {point.receiver or STARS} {_wall_clock(point.at)}")
    return ", ".join(parts)


@dataclass(frozen=True)
class _Jrninf:
    position: int | None  # j
    blocks: tuple[BlockReason, ...]
    needed_at: datetime | None
    not_on_system: bool


def _amqjrninf(snapshot: Snapshot, chain: list[Receiver], latest: datetime) -> _Jrninf:
    """Section 2.1: the AMQJRNINF position j and AMQJRNINF's block reasons."""
    if snapshot.amqjrninf is None:
        return _Jrninf(None, (BlockReason.AMQJRNINF_MISSING,), None, False)
    try:
        record = parse_amqjrninf(snapshot.amqjrninf, qmgr=snapshot.qmgr)
    except MalformedAmqjrninf:
        return _Jrninf(None, (BlockReason.AMQJRNINF_MALFORMED,), None, False)
    needed_at = record.needed_at.replace(tzinfo=snapshot.collected_at.tzinfo)
    # Whatever the name field holds, an entry MQ needs cannot have been written after the collection read it.
    future = (BlockReason.AMQJRNINF_TIME_IN_FUTURE,) if needed_at > latest else ()
    by_time = _by_time(chain, needed_at)
    if record.receiver is None:
        earlier = _by_time(chain, needed_at - DST_MARGIN)  # never a receiver too new (jrninf.DST_MARGIN)
        return _Jrninf(earlier if earlier is not None else 0, future, needed_at, True)
    named = next((i for i, r in enumerate(chain) if (r.name, r.library) == (record.receiver, record.library)), None)
    if named is None:
        return _Jrninf(None, (BlockReason.AMQJRNINF_RECEIVER_NOT_IN_CHAIN, *future), needed_at, False)
    if named != by_time:
        # MQ names the receiver holding the oldest needed entry: it was attached at or before that entry, and it
        # is the newest such receiver. Anything else (a time before the chain too) means the chain or the record
        # is not what we think.
        return _Jrninf(named, (BlockReason.AMQJRNINF_NAME_TIME_DISAGREE, *future), needed_at, False)
    return _Jrninf(named, future, needed_at, False)


def _point(point: RecoveryPoint, chain: list[Receiver], latest: datetime) -> tuple[int | None, tuple[BlockReason, ...]]:
    """Section 2.2: one recovery point's position (None: none) and block reasons."""
    future = (BlockReason.RECOVERY_POINT_IN_FUTURE,) if point.at > latest else ()
    if point.receiver is None:
        by_time = _by_time(chain, point.at)
        return (by_time if by_time is not None else 0), future
    named = next((i for i, r in enumerate(chain) if r.name == point.receiver), None)
    if named is None:
        return None, (BlockReason.RECOVERY_POINT_NOT_IN_CHAIN, *future)
    # AMQ7460/AMQ7462 show whole seconds: the first attach is compared at that precision.
    if point.at < attached_at(chain[0]).replace(microsecond=0):
        return named, (BlockReason.RECOVERY_POINT_BEFORE_CHAIN, *future)
    return named, future


def oldest_needed(snapshot: Snapshot, chain: list[Receiver], *, policy: Policy | None = None) -> OldestNeeded:
    """Section 2: n from AMQJRNINF, AMQ7460 and AMQ7462, the most conservative of them; what blocks; what disagrees."""
    policy = policy or Policy()
    # Against the partition's own clock (collected_at), never the controller's: a partition whose clock runs ahead
    # of the controller writes needed times that are plausible for it.
    latest = snapshot.collected_at + policy.clock_skew
    jrninf = _amqjrninf(snapshot, chain, latest)
    blocks: list[BlockReason] = list(jrninf.blocks)
    present = [p for p in (snapshot.startup_recovery, snapshot.media_recovery) if p is not None]
    positions = []
    for point in present:
        position, point_blocks = _point(point, chain, latest)
        blocks += point_blocks
        if position is not None:
            positions.append(position)
    j = jrninf.position
    p = min(positions) if positions else None
    disagree = j is not None and p is not None and (j != p if len(present) == 2 else j > p)
    # Any block makes everything needed; unblocked, AMQJRNINF is usable, so j is set.
    n = 0 if blocks else min(x for x in (j, p) if x is not None)
    holding: tuple[HoldingPoint | None, datetime | None] = (None, None)
    if not blocks:
        holding = _holding_point(snapshot, chain, latest, n, jrninf.needed_at)
    return OldestNeeded(
        position=n,
        blocks=tuple(dict.fromkeys(blocks)),
        needed_at=jrninf.needed_at,
        not_on_system=jrninf.not_on_system,
        points_disagree=disagree,
        recovery_points=recovery_points_text(snapshot),
        holding_point=holding[0],
        holding_point_at=holding[1],
    )


def _holding_point(
    snapshot: Snapshot, chain: list[Receiver], latest: datetime, n: int, needed_at: datetime | None
) -> tuple[HoldingPoint, datetime | None]:
    """Section 2.5: the recovery point at n, the earliest of them if both are (AMQ7460 on a tie); else AMQJRNINF.

    AMQJRNINF records the older of MQ's two points, so it usually sits at n with one of them: the point is named,
    because it says why (a unit of work, a damaged object) where AMQJRNINF only says when.
    """
    at_n = [
        (point.at, order, label)
        for order, (label, point) in enumerate(
            ((HoldingPoint.STARTUP, snapshot.startup_recovery), (HoldingPoint.MEDIA, snapshot.media_recovery))
        )
        if point is not None and _point(point, chain, latest)[0] == n
    ]
    if at_n:
        at, _, label = min(at_n)
        return label, at
    return HoldingPoint.AMQJRNINF, needed_at


# --- 3. action and reason -----------------------------------------------------------------------------------------


def is_saved(receiver: Receiver) -> bool:
    """Saved after it was detached: a save taken while attached leaves it ONLINE (never fully saved)."""
    return receiver.saved_at is not None and receiver.status in (ReceiverStatus.SAVED, ReceiverStatus.FREED)


@dataclass(frozen=True)
class SiteBackup:
    """`backup: site`: the site's own backup saves the receivers, and mqjournal deletes only what it has saved."""

    as_of: datetime  # the planning time; at the re-check, the live snapshot's collection (the partition's clock)
    min_age: timedelta  # policy.site_save_min_age


def site_saved(receiver: Receiver) -> bool:
    """Fully saved by a save taken after the detach, as IBM i shows it: SAVE_TIMESTAMP set, SAVED or FREED.

    A save of the attached receiver (a nightly SAVLIB of the queue manager library takes one) sets SAVE_TIMESTAMP
    but leaves the receiver ONLINE, never fully saved: the entries written after it are on no media.
    """
    if not is_saved(receiver):
        return False
    assert receiver.saved_at is not None  # is_saved
    return receiver.detached_at is None or receiver.saved_at >= receiver.detached_at


def site_save_age(receiver: Receiver, now: datetime) -> timedelta | None:
    """How long ago the site's backup saved the receiver (by the partition's clock), or None when it has not."""
    return now - receiver.saved_at if site_saved(receiver) and receiver.saved_at is not None else None


def _site_decision(receiver: Receiver, site: SiteBackup) -> tuple[Action, Reason]:
    """Section 3.1, the rows after `retained`: a not-needed receiver is deleted once the site's save is old enough."""
    age = site_save_age(receiver, site.as_of)
    if age is None:
        return Action.KEEP, Reason.NOT_SAVED_BY_SITE
    if age < site.min_age:
        return Action.KEEP, Reason.SITE_SAVE_TOO_RECENT
    return Action.DELETE, Reason.SAVED_BY_SITE


def _oldest_first(rows: list[PlannedReceiver]) -> list[PlannedReceiver]:
    """Section 3.1, the last row: behind a member that waits for the site's backup, nothing is deletable.

    With mqjournal's own backup every not-needed, not-retained member is deleted (after its save if need be), so
    the deletable ones are always the oldest. The site's saves need not come in chain order (a save of the attached
    receiver leaves it never fully saved while the next one is), and DLTJRNRCV deletes the oldest receiver only.
    """
    waits = [r.chain_position for r in rows if r.reason in SITE_WAITS and r.chain_position is not None]
    if not waits:
        return rows
    first = min(waits)
    return [
        r.model_copy(update={"action": Action.KEEP, "reason": Reason.OLDER_NOT_SAVED_BY_SITE})
        if r.reason == Reason.SAVED_BY_SITE and r.chain_position is not None and r.chain_position > first
        else r
        for r in rows
    ]


def decide(
    receiver: Receiver, *, needed: bool, blocked: bool, retained: bool, site: SiteBackup | None = None
) -> tuple[Action, Reason]:
    """The action for one chain member, and why (docs/planning-rules.md, section 3; with `site`, section 3.1)."""
    saved = is_saved(receiver)
    # With the site's backup, mqjournal saves nothing: what it would save, it keeps, for the same reason.
    save = Action.KEEP if site is not None else Action.SAVE
    if receiver.status == ReceiverStatus.ATTACHED:
        return Action.KEEP, Reason.ATTACHED
    if needed:
        if receiver.status == ReceiverStatus.FREED:
            return Action.KEEP, Reason.NEEDED_FREED
        return (Action.KEEP, Reason.NEEDED_SAVED) if saved else (save, Reason.NEEDED_NOT_SAVED)
    if blocked:
        return (Action.KEEP, Reason.BLOCKED) if saved else (save, Reason.BLOCKED_NOT_SAVED)
    if retained:
        return (Action.KEEP, Reason.RETAINED) if saved else (save, Reason.RETAINED_NOT_SAVED)
    if site is not None:
        return _site_decision(receiver, site)
    if saved:
        return Action.DELETE, Reason.NOT_NEEDED_SAVED
    return Action.SAVE_THEN_DELETE, Reason.NOT_NEEDED_NOT_SAVED


def retained_positions(chain: list[Receiver], n: int, *, as_of: datetime, policy: Policy) -> set[int]:
    """Not-needed members the policy keeps online: recently detached ones, and the newest `keep_min_receivers`."""
    kept = set(range(max(0, n - policy.keep_min_receivers), n))
    if policy.retention_days > 0:
        cutoff = as_of - policy.retention
        kept |= {i for i in range(n) if _detached_after(chain[i], cutoff)}
    return kept


def _detached_after(receiver: Receiver, cutoff: datetime) -> bool:
    """Detached after `cutoff`, or not detached yet."""
    return receiver.detached_at is None or receiver.detached_at > cutoff


# --- 4. alerts ----------------------------------------------------------------------------------------------------


def next_name_taken(snapshot: Snapshot, attached: Receiver) -> bool:
    if not is_receiver_name(attached.name):
        return False
    following = str(ReceiverName.parse(attached.name).successor())
    return any(r.name == following and r.library == attached.library for r in snapshot.receivers)


def recovery_stuck(history: list[Snapshot], field: str, runs: int) -> bool:
    window = history[-runs:]
    if len(window) < runs:
        return False
    points = [getattr(s, field) for s in window]
    if any(p is None or p.receiver is None for p in points) or len({p.receiver for p in points}) != 1:
        return False
    return _attached_names(window[0]) != _attached_names(window[-1])


def _attached_names(snapshot: Snapshot) -> list[str]:
    return sorted(r.name for r in snapshot.receivers if r.status == ReceiverStatus.ATTACHED)


def point_old(snapshot: Snapshot, point: RecoveryPoint | None, policy: Policy) -> bool:
    """Right after a forced checkpoint that worked, the point is older than the policy's limit (partition clock)."""
    checkpointed = snapshot.checkpoint.forced and snapshot.checkpoint.ok
    return checkpointed and point is not None and snapshot.collected_at - point.at > policy.recovery_point_alert_age


def damaged_objects(snapshot: Snapshot) -> tuple[str, ...]:
    """The AMQ7472 objects reported at or after the media recovery point, as "NAME (TYPE)", sorted.

    An object repaired since (RCRMQMOBJ, then RCDMQMIMG) has its report before the point that moved past it.
    """
    media = snapshot.media_recovery
    return tuple(
        sorted(
            {
                f"{d.object} ({d.object_type})"
                for d in snapshot.damaged_objects
                if media is None or d.reported_at >= media.at
            }
        )
    )


def undecodable_messages(snapshot: Snapshot) -> tuple[str, ...]:
    """`MSGID: DSPMSGD ...` of each message ID whose replacement data did not decode in the collection, sorted.

    Only said, never planned from: the collector kept such a message and it moved no recovery point (section 4).
    """
    return tuple(sorted({f"{m.message_id}: {m.dspmsgd}" for m in snapshot.undecodable_messages}))


def over_threshold(receiver: Receiver) -> bool:
    return receiver.threshold_kb is not None and receiver.size_bytes > receiver.threshold_kb * 1024


def alerts_for(
    snapshot: Snapshot, history: list[Snapshot], chain: list[Receiver], needed: OldestNeeded, policy: Policy
) -> tuple[Alert, ...]:
    # Any ATTACHED receiver counts: with two (a broken chain) the alert errs on the side of telling.
    attached = [r for r in snapshot.receivers if r.status == ReceiverStatus.ATTACHED]
    raised = {
        Alert.CHECKPOINT_FAILED: snapshot.checkpoint.forced and not snapshot.checkpoint.ok,
        Alert.OLDEST_NEEDED_NOT_ON_SYSTEM: needed.not_on_system,
        Alert.RECOVERY_POINTS_DISAGREE: needed.points_disagree,
        Alert.NEEDED_RECEIVER_NOT_ONLINE: any(r.status == ReceiverStatus.FREED for r in chain[needed.position :]),
        Alert.RECEIVER_OVER_THRESHOLD: any(over_threshold(r) for r in attached),
        Alert.NEXT_RECEIVER_NAME_TAKEN: any(next_name_taken(snapshot, r) for r in attached),
        Alert.STARTUP_RECOVERY_STUCK: recovery_stuck(history, "startup_recovery", policy.stuck_after_runs),
        Alert.MEDIA_RECOVERY_STUCK: recovery_stuck(history, "media_recovery", policy.stuck_after_runs),
        Alert.STARTUP_POINT_OLD: point_old(snapshot, snapshot.startup_recovery, policy),
        Alert.MEDIA_POINT_OLD: point_old(snapshot, snapshot.media_recovery, policy),
        Alert.MESSAGE_UNDECODABLE: bool(snapshot.undecodable_messages),
    }
    return tuple(sorted(alert for alert, found in raised.items() if found))


# --- the plan --------------------------------------------------------------------------------------------------


def key_of(snapshot: Snapshot) -> QueueManagerRef:
    return QueueManagerRef(host=snapshot.host, qmgr=snapshot.qmgr, library=snapshot.qmgr_library)


def plan_queue_manager(
    current: Snapshot, history: list[Snapshot], *, as_of: datetime, policy: Policy
) -> tuple[PlannedQueueManager, list[PlannedReceiver]]:
    """Plan one queue manager from its current snapshot; `history` (oldest first, current included) feeds alerts."""
    chain = chain_of(current)
    needed = oldest_needed(current, chain, policy=policy)
    blocks = set(needed.blocks)
    if as_of - current.collected_at > policy.max_snapshot_age:
        blocks.add(BlockReason.SNAPSHOT_STALE)
    if chain_is_broken(chain):
        blocks.add(BlockReason.CHAIN_BROKEN)
    blocked = bool(blocks)
    n = needed.position
    retained = retained_positions(chain, n, as_of=as_of, policy=policy)
    position = {(r.name, r.library): i for i, r in enumerate(chain)}
    site = SiteBackup(as_of=as_of, min_age=policy.site_save_min_age) if policy.site_backup else None

    rows = []
    for r in current.receivers:
        i = position.get((r.name, r.library))
        if i is None:
            action, reason = Action.KEEP, Reason.NOT_IN_CHAIN
        else:
            action, reason = decide(r, needed=i >= n, blocked=blocked, retained=i in retained, site=site)
        rows.append(
            PlannedReceiver(
                host=current.host,
                qmgr=current.qmgr,
                qmgr_library=current.qmgr_library,
                receiver=r.name,
                library=r.library,
                chain_position=i,
                status=str(r.status),
                size_bytes=r.size_bytes,
                action=action,
                reason=reason,
                attached_at=r.attached_at,
                detached_at=r.detached_at,
                saved_at=r.saved_at,
                first_sequence=r.first_sequence,
                last_sequence=r.last_sequence,
            )
        )
    if site is not None:
        rows = _oldest_first(rows)
    to_save = [r for r in rows if r.action in SAVES]
    to_delete = [r for r in rows if r.action in DELETES]
    needed_at = needed.needed_at  # None: AMQJRNINF is unusable
    qm = PlannedQueueManager(
        host=current.host,
        qmgr=current.qmgr,
        qmgr_library=current.qmgr_library,
        oldest_needed=chain[n].name if needed_at is not None and chain else None,
        blocked=blocked,
        block_reason=",".join(code for code in BLOCK_ORDER if code in blocks) or None,
        alerts=alerts_for(current, history, chain, needed, policy),
        recovery_points=needed.recovery_points,
        receivers_to_save=len(to_save),
        bytes_to_save=sum(r.size_bytes for r in to_save),
        receivers_to_delete=len(to_delete),
        bytes_to_delete=sum(r.size_bytes for r in to_delete),
        bytes_freed=sum(r.size_bytes for r in to_delete),
        chain_length=len(chain),
        oldest_needed_age_seconds=None if needed_at is None else math.floor((as_of - needed_at).total_seconds()),
        collected_at=current.collected_at,
        run_id=current.run_id,
        utc_offset_minutes=_offset_minutes(current.collected_at),
        holding_point=needed.holding_point,
        holding_point_at=needed.holding_point_at,
        holding_point_age_seconds=(
            None if needed.holding_point_at is None else math.floor((as_of - needed.holding_point_at).total_seconds())
        ),
        damaged_objects=damaged_objects(current),
        undecodable_messages=undecodable_messages(current),
        asp_number=current.asp_number,
        asp_capacity_bytes=current.asp_capacity_bytes,
        asp_available_bytes=current.asp_available_bytes,
    )
    return qm, rows


def _offset_minutes(moment: datetime) -> int:
    offset = moment.utcoffset()
    assert offset is not None, "snapshot times are aware"
    return math.floor(offset.total_seconds() / 60)


def plan_fleet(
    snapshots: Iterable[Snapshot], *, as_of: datetime | None = None, policy: Policy | None = None
) -> FleetPlan:
    """Plan every queue manager; per key the latest snapshot is the current state, all of them its history."""
    as_of = as_of or datetime.now(UTC)
    policy = policy or Policy()
    by_key: dict[QueueManagerRef, dict[tuple[str, datetime], Snapshot]] = defaultdict(dict)
    for s in snapshots:
        seen = by_key[key_of(s)].get((s.run_id, s.collected_at))
        if seen is not None and seen != s:
            raise ValueError(f"two different snapshots of {key_of(s).order} for run {s.run_id} at {s.collected_at}")
        by_key[key_of(s)][(s.run_id, s.collected_at)] = s
    queue_managers, receivers = [], []
    for key in sorted(by_key, key=lambda ref: ref.order):
        history = sorted(by_key[key].values(), key=lambda s: (s.collected_at, s.run_id))
        qm, rows = plan_queue_manager(history[-1], history, as_of=as_of, policy=policy)
        queue_managers.append(qm)
        receivers.extend(rows)
    return FleetPlan(as_of=as_of, policy=policy, queue_managers=queue_managers, receivers=receivers)


def as_rows(plan: FleetPlan) -> tuple[list[dict], list[dict]]:
    """Plain dicts, in the Parquet datasets' column order (for comparison with the Spark job)."""
    return [q.model_dump() for q in plan.queue_managers], [r.model_dump() for r in plan.receivers]


# --- 6. deleting: the re-check on the live host ----------------------------------------------------------------


@dataclass(frozen=True)
class BackupEvidence:
    """One catalogued save of one receiver incarnation, as checked right before deleting."""

    save_file: str  # "LIB/NAME"
    on_host: bool  # the save file exists on the host now
    lists_receiver: bool  # its content (QSYS2.SAVE_FILE_OBJECTS) lists this receiver: library, name, *JRNRCV
    discarded: bool  # the catalog marks the save file discarded (backup expiry)
    complete: bool  # taken after detach and covering every entry (catalog last_sequence == the live receiver's)
    # The backup store's key of a verified copy of the save file whose object list holds this receiver, found in
    # the store now; None when there is none. A save file on the partition it saves is lost with that disk or ASP,
    # so it alone is no backup to delete against.
    stored_key: str | None = None

    @property
    def off_partition(self) -> bool:
        return self.stored_key is not None

    @property
    def saved_on_host(self) -> bool:
        """The save file on the host holds the receiver: nothing needs saving again (a copy may still be due)."""
        return self.on_host and self.lists_receiver and self.complete and not self.discarded

    @property
    def proven(self) -> bool:
        """A backup to delete against: a complete save, not discarded, verified in the backup store, and, while the
        save file is still on the host, listed by it there too (a host copy that no longer lists it is suspect)."""
        listed_where_it_is = self.lists_receiver or not self.on_host
        return self.complete and not self.discarded and self.off_partition and listed_where_it_is

    def why_not(self) -> str:
        """Why this save does not prove the receiver saved (empty when it does)."""
        if not self.on_host and not self.off_partition:
            return f"{self.save_file} no longer exists and has no verified copy in the backup store"
        problems = []
        if self.on_host and not self.lists_receiver:
            problems.append("does not list it")
        if self.discarded:
            problems.append("is discarded in the catalog")
        if not self.complete:
            problems.append("does not cover all of its entries")
        if not self.off_partition:
            problems.append("has no verified copy in the backup store (it is only on the partition it saves)")
        return f"{self.save_file} {' and '.join(problems)}" if problems else ""


@dataclass(frozen=True)
class DeleteDecision:
    receiver: str
    library: str
    delete: bool
    reason: DeleteReason
    detail: str  # one sentence an admin reads: why (docs/planning-rules.md, section 6)
    # DLTOPT(*IGNINQMSG): only for a delete the catalog proves while the host does not show the receiver saved
    ignore_inquiry: bool = False


EvidenceKey = tuple[str, str, datetime]  # (library, receiver, attached_at)


def delete_decisions(
    approved: Sequence[str],
    live: Snapshot,
    evidence: Mapping[EvidenceKey, Sequence[BackupEvidence]],
    *,
    policy: Policy,
) -> list[DeleteDecision]:
    """What to delete now of the approved receivers, from the live state (docs/planning-rules.md, section 6).

    With `policy.backup == "site"` the proof of a backup is the live receiver's save history, not `evidence`
    (unused then): IBM i shows it fully saved by a save at least `site_save_min_age_hours` old (section 6.1).

    One decision per approved name: first those no longer on the host, then the chain members oldest first, then
    the names that are not chain members. `delete` is true only for a contiguous run of the oldest chain members
    that are approved, deletable by the rules applied to the live state, and proven saved on the host; the first
    chain member that is not deleted stops every later one (DLTJRNRCV deletes the oldest receiver only).
    """
    library = live.qmgr_library
    names = list(dict.fromkeys(approved))
    on_host = {r.name for r in live.receivers if r.library == library}
    decisions = [
        DeleteDecision(name, library, False, DeleteReason.ALREADY_GONE, "not on the system")
        for name in names
        if name not in on_host
    ]
    pending = [name for name in names if name in on_host]
    chain = chain_of(live)
    members = [r for r in chain if r.library == library and r.name in pending]
    strays = [
        DeleteDecision(name, library, False, DeleteReason.NOT_IN_CHAIN, "not in the journal's receiver chain")
        for name in pending
        if name not in {r.name for r in members}
    ]
    qm, rows = plan_queue_manager(live, [live], as_of=live.collected_at, policy=policy)
    if qm.blocked:
        blocked = f"blocked on the live host: {qm.block_reason}"
        kept = [DeleteDecision(r.name, r.library, False, DeleteReason.BLOCKED, blocked) for r in members]
        return [*decisions, *kept, *strays]
    planned = {(r.receiver, r.library): (r.action, r.reason) for r in rows}
    for done, receiver in enumerate(chain):  # oldest first, as DLTJRNRCV requires
        if done == len(members):
            break
        if receiver is not members[done]:
            why = f"{receiver.name}, older in the chain, is not approved for deletion"
            decisions += [_older_not_deleted(r, why) for r in members[done:]]
            break
        live_plan = planned[(receiver.name, receiver.library)]
        if policy.site_backup:
            # The site's backup is the backup: the live receiver's own save history is the proof, by the partition's
            # clock at this collection; mqjournal's catalog and store play no part.
            decision = _decide_site_delete(receiver, live_plan, now=live.collected_at, policy=policy)
        else:
            saves = evidence.get((receiver.library, receiver.name, attached_at(receiver)), ())
            decision = _decide_delete(receiver, live_plan, saves)
        decisions.append(decision)
        if not decision.delete:
            why = f"{receiver.name}, older in the chain, was not deleted"
            later = members[done + 1 :]
            decisions += [_older_not_deleted(r, why) for r in later]
            break
    return [*decisions, *strays]


def _older_not_deleted(receiver: Receiver, why: str) -> DeleteDecision:
    return DeleteDecision(receiver.name, receiver.library, False, DeleteReason.OLDER_NOT_DELETED, why)


def _decide_delete(
    receiver: Receiver, planned: tuple[Action, Reason], saves: Sequence[BackupEvidence]
) -> DeleteDecision:
    action, reason = planned

    def keep(code: DeleteReason, detail: str) -> DeleteDecision:
        return DeleteDecision(receiver.name, receiver.library, False, code, detail)

    if action not in DELETES:
        code = DeleteReason.ATTACHED if reason == Reason.ATTACHED else DeleteReason.NOT_DELETABLE_NOW
        return keep(code, f"not deletable now ({reason})")
    if not saves:
        return keep(DeleteReason.NO_PROVEN_BACKUP, "not verifiably saved: no verified save in the catalog")
    proof = next((s for s in saves if s.proven), None)
    if proof is None:
        why_not = "; ".join(s.why_not() for s in saves)
        return keep(DeleteReason.NO_PROVEN_BACKUP, f"no proven backup: {why_not}")
    return DeleteDecision(
        receiver.name,
        receiver.library,
        True,
        DeleteReason.DELETE,
        f"not needed, saved in {proof.save_file} and copied to the backup store as {proof.stored_key}",
        ignore_inquiry=not is_saved(receiver),
    )


# --- 6.1 deleting with the site's backup -----------------------------------------------------------------------


def _when(moment: datetime) -> str:
    return moment.isoformat(sep=" ", timespec="seconds")


def _hours(span: timedelta) -> str:
    """Hours to a tenth, rounded down: a save 11.99 h old reads "11.9 h", never the 12 h it has not reached."""
    tenths = math.floor(span.total_seconds() / 360)
    return f"{tenths // 10} h" if tenths % 10 == 0 else f"{tenths / 10:.1f} h"


def site_save_problem(receiver: Receiver, *, now: datetime, min_age: timedelta) -> str | None:
    """Why the site's backup does not let the receiver be deleted at `now` (the partition's clock), as an admin
    reads it; None when IBM i shows it fully saved by a save at least `min_age` old (section 6.1)."""
    if receiver.saved_at is None:
        return "not saved by the site's backup yet (IBM i shows no save of it)"
    if not is_saved(receiver):
        return (
            f"not saved by the site's backup yet: its last save, on {_when(receiver.saved_at)}, does not cover all "
            f"of it (IBM i shows it {receiver.status}, not SAVED or FREED: a save taken while it was attached is never "
            "a full one)"
        )
    if receiver.detached_at is not None and receiver.saved_at < receiver.detached_at:
        return (
            f"not saved by the site's backup yet: its last save, on {_when(receiver.saved_at)}, is older than its "
            f"detach on {_when(receiver.detached_at)}"
        )
    age = now - receiver.saved_at
    if age < timedelta(0):
        return (
            f"saved by the site's backup on {_when(receiver.saved_at)}, later than the partition's clock at this "
            f"collection ({_when(now)}); deletable {_hours(min_age)} after that save"
        )
    if age < min_age:
        return f"saved by the site's backup {_hours(age)} ago; deletable after {_hours(min_age)}"
    return None


def _decide_site_delete(
    receiver: Receiver, planned: tuple[Action, Reason], *, now: datetime, policy: Policy
) -> DeleteDecision:
    """The live plan's word, then the live receiver's save checked again as the proof (catalog proof's place)."""
    action, reason = planned

    def keep(code: DeleteReason, detail: str) -> DeleteDecision:
        return DeleteDecision(receiver.name, receiver.library, False, code, detail)

    if action in DELETES or reason in SITE_WAITS:
        problem = site_save_problem(receiver, now=now, min_age=policy.site_save_min_age)
        if problem is not None:
            return keep(DeleteReason.NOT_SAVED_BY_SITE, problem)
    if action not in DELETES:
        code = DeleteReason.ATTACHED if reason == Reason.ATTACHED else DeleteReason.NOT_DELETABLE_NOW
        return keep(code, f"not deletable now ({reason})")
    assert receiver.saved_at is not None  # site_save_problem found a save
    # IBM i shows it fully saved, so DLTJRNRCV sends no CPA7025 and the option to ignore it is never wanted.
    return DeleteDecision(
        receiver.name,
        receiver.library,
        True,
        DeleteReason.DELETE,
        f"saved by the site's backup on {_when(receiver.saved_at)}; not in mqjournal's store",
    )
