"""The reference planner for Linux queue managers' linear logs: per extent, what mqjournal may do (#32).

Pure: a collection's snapshot, the extents the catalog holds a proven copy of, and the snapshots before it, in; the
decisions and alerts out. The rules are IBM's ("Determining superfluous log files", q018510; docs/linux-interfaces.md
section 7), by extent number only, never by modification time, across the 9,999,999 wrap (extents.fate):
- the extent being written is never touched, nor one numbered after it (formatted ahead of use, not written yet);
- every other S extent is copied off the host (archived), the extents restart or media recovery still need too: MQ
  has finished writing them (q129100), and a copy is what brings one back that is lost before it may go;
- an extent behind both RECLOG and MEDIALOG may go once a copy of it is proven: in Archive mode MQ is told
  (SET LOG ARCHIVED) and reuses or deletes it itself; in Manual mode mqjournal deletes it;
- in Automatic mode, and for `R` extents, MQ decides alone: mqjournal only watches;
- in Archive mode an extent behind ARCHLOG (the oldest still waiting for notification) was notified already.
A RECLOG or MEDIALOG that stays while CURRLOG moves on is the same alert as IBM i's stuck recovery points.
A log that is not linear, without log points, or whose points cannot be ordered (one ahead of CURRLOG, an R extent
named as a point) is not planned: every extent is kept, and the alert says why and what to do.

`mqjournal.sparkplan.linux` is the same planner in DataFrame form; a property test holds the two equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, Fate, LogManagement, LogPoints, fate, oldest_first
from mqjournal.linuxmq.snapshot import LinuxSnapshot, LogExtent

__all__ = [
    "TO_ARCHIVE",
    "TO_RELEASE",
    "Alert",
    "ExtentAction",
    "ExtentDecision",
    "QueueManagerLogPlan",
    "plan_queue_manager",
]

STUCK_AFTER_RUNS = 3
"""Collections in a row with CURRLOG moving and a point not: then it is stuck (IBM i's default is the same)."""


class ExtentAction(StrEnum):
    KEEP = "keep"  # needed by restart (or being written): stays, nothing to do
    ARCHIVE = "archive"  # behind RECLOG, still needed for media recovery: copy it off the host, keep it
    ARCHIVE_THEN_RELEASE = "archive_then_release"  # behind both points, no proven copy yet: copy, prove, release
    RELEASE = "release"  # behind both points, a proven copy exists: SET LOG ARCHIVED (Archive) or delete (Manual)
    MQ = "mq"  # MQ's own to reuse or delete (Automatic mode, an R extent, or notified already)


TO_ARCHIVE = (ExtentAction.ARCHIVE, ExtentAction.ARCHIVE_THEN_RELEASE)
"""The actions whose extent the archive step copies into the backup store."""
TO_RELEASE = (ExtentAction.ARCHIVE_THEN_RELEASE, ExtentAction.RELEASE)
"""The actions whose extent the release step lets go once approved (each only with a proven copy)."""


@dataclass(frozen=True)
class ExtentDecision:
    """One listed extent of the plan (a row of the plan's `linux_extents/`, with its queue manager's host, qmgr)."""

    extent: str
    """The extent's file name as MQ writes it (S0000123.LOG, R0000007.LOG)."""
    action: ExtentAction
    """What mqjournal does with it."""
    reason: str
    """Why, in MQ's terms (the point or the mode that decided it)."""
    size_bytes: int
    """Its size as listed in the log path, in bytes: what copying it moves, and releasing it frees."""


class Alert(StrEnum):
    RESTART_STUCK = "restart_stuck"  # RECLOG stays: a long-running unit of work holds the log (AMQ7469 follows)
    MEDIA_STUCK = "media_stuck"  # MEDIALOG stays: a damaged object, or no media images recorded
    NOT_PLANNED = "not_planned"  # a circular or replicated log, no log points, or points that cannot be ordered


@dataclass(frozen=True)
class QueueManagerLogPlan:
    """One Linux queue manager of the plan (a row of the plan's `linux_queue_managers/`, its decisions the rows of
    `linux_extents/`): the log state it was planned from, as the snapshot has it, in MQ's own terms."""

    host: str
    """The host, as the fleet file names it."""
    qmgr: str
    """The queue manager's name."""
    run_id: str
    """The run whose collection the plan used."""
    collected_at: datetime
    """When that snapshot was collected (read back from the plan in UTC)."""
    log_type: str
    """qm.ini's LogType: LINEAR, CIRCULAR or REPLICATED (only LINEAR is planned)."""
    log_management: LogManagement
    """qm.ini's LogManagement: Manual, Automatic or Archive."""
    current_extent: str | None
    """CURRLOG: the extent being written; None when the status did not name it."""
    restart_extent: str | None
    """RECLOG: the oldest extent restart recovery needs."""
    media_extent: str | None
    """MEDIALOG: the oldest extent media recovery needs."""
    archive_extent: str | None
    """ARCHLOG: the oldest extent waiting for archive notification (Archive mode); None when blank."""
    decisions: tuple[ExtentDecision, ...]
    """Each listed extent, the oldest first (counted back from CURRLOG across the wrap)."""
    alerts: tuple[tuple[Alert, str], ...]
    """What an admin should look at, and what to do about it."""

    def with_action(self, action: ExtentAction) -> list[str]:
        return [d.extent for d in self.decisions if d.action is action]

    @property
    def to_archive(self) -> tuple[ExtentDecision, ...]:
        """The extents to copy into the backup store, oldest first."""
        return tuple(d for d in self.decisions if d.action in TO_ARCHIVE)

    @property
    def to_release(self) -> tuple[ExtentDecision, ...]:
        """The extents to release once approved, oldest first: their sizes are what the release frees."""
        return tuple(d for d in self.decisions if d.action in TO_RELEASE)


class Why:
    """The reasons and alert texts, as templates: the reference fills them in with str.format, the Spark plan
    (mqjournal.sparkplan.linux) builds the same words from columns."""

    WRITING = "the extent being written (CURRLOG)"
    KEPT_FOR_REUSE = "kept by MQ for reuse (R)"
    MQ_REUSES = "LogManagement={management}: MQ reuses it"
    ARCHLOG_BLANK = "no extent waits for archive notification (ARCHLOG blank)"
    NOTIFIED = "behind ARCHLOG {archive}: MQ was told it is archived"
    AHEAD = "numbered after CURRLOG {current}: formatted ahead of use, not written yet"
    MEDIA_NEEDS = "media recovery needs it (MEDIALOG {media})"
    RESTART_NEEDS = "restart needs it (RECLOG {restart})"
    PROVEN = "behind RECLOG and MEDIALOG, and its copy is proven"
    NOT_PROVEN = "behind RECLOG and MEDIALOG, no proven copy yet"
    # Not planned: each extent's reason, and the alert.
    NOT_LINEAR = "{log_type} log"  # in lower case
    NO_POINTS = "no log points in its status"
    MQ_MANAGES = "{why}: MQ manages its extents, mqjournal plans none of them"
    UNORDERABLE = "log points that cannot be ordered"
    UNORDERABLE_ALERT = (
        "DISPLAY QMSTATUS answered {problem}: mqjournal keeps every extent of it; check the log status on the host "
        "(DISPLAY QMSTATUS TYPE(LOG) CURRLOG RECLOG MEDIALOG) and collect again"
    )
    RESTART_STUCK = (
        "RECLOG {restart} has not moved in {runs} collections while CURRLOG did: a long-running unit of work holds "
        "it (DISPLAY CONN(*) TYPE(CONN) UOWSTDA UOWSTTI); commit or back it out"
    )
    MEDIA_STUCK = (
        "MEDIALOG {media} has not moved in {runs} collections while CURRLOG did: an object is damaged (AMQ7472; "
        "DISPLAY QSTATUS(*) MEDIALOG finds the oldest) or no media images are recorded (rcdmqimg, IMGSCHED(AUTO)); "
        "recover it with rcrmqobj"
    )


class _NotPlanned(NamedTuple):
    reason: str  # each extent's
    alert: str


def plan_queue_manager(
    snapshot: LinuxSnapshot, proven: Iterable[str], history: Sequence[LinuxSnapshot] = ()
) -> QueueManagerLogPlan:
    """`proven`: the extent names the catalog holds a copy of whose bytes the host's SHA-256 vouched for.
    `history`: this queue manager's earlier snapshots, oldest first (for the stuck alerts)."""
    alerts = list(_stuck(snapshot, history))
    listed = sorted(snapshot.extents, key=lambda e: oldest_first(e.name, snapshot.current_extent))
    points = _log_points(snapshot)
    if isinstance(points, _NotPlanned):
        alerts.append((Alert.NOT_PLANNED, points.alert))
        keep = tuple(ExtentDecision(e.name, ExtentAction.KEEP, points.reason, e.size_bytes) for e in listed)
        return _plan(snapshot, keep, alerts)
    copied = set(proven)
    notified_before = Extent.parse(snapshot.archive_extent) if snapshot.archive_extent else None
    decisions = tuple(_decide(e, points, snapshot.log_management, copied, notified_before) for e in listed)
    return _plan(snapshot, decisions, alerts)


def _plan(
    snapshot: LinuxSnapshot, decisions: tuple[ExtentDecision, ...], alerts: list[tuple[Alert, str]]
) -> QueueManagerLogPlan:
    return QueueManagerLogPlan(
        host=snapshot.host,
        qmgr=snapshot.qmgr,
        run_id=snapshot.run_id,
        collected_at=snapshot.collected_at,
        log_type=snapshot.log_type,
        log_management=snapshot.log_management,
        current_extent=snapshot.current_extent,
        restart_extent=snapshot.restart_extent,
        media_extent=snapshot.media_extent,
        archive_extent=snapshot.archive_extent,
        decisions=decisions,
        alerts=tuple(alerts),
    )


def _log_points(snapshot: LinuxSnapshot) -> LogPoints | _NotPlanned:
    """The points to plan by, or why nothing of the queue manager is planned."""
    if snapshot.log_type != "LINEAR":
        why = Why.NOT_LINEAR.format(log_type=snapshot.log_type.lower())
        return _NotPlanned(why, Why.MQ_MANAGES.format(why=why))
    try:
        points = snapshot.points()
    except ValueError as exc:
        # One queue manager's odd answer must not stop the fleet's plan, nor be planned from: every extent is kept.
        return _NotPlanned(Why.UNORDERABLE, Why.UNORDERABLE_ALERT.format(problem=exc))
    if points is None:
        return _NotPlanned(Why.NO_POINTS, Why.MQ_MANAGES.format(why=Why.NO_POINTS))
    return points


def _decide(
    listed: LogExtent,
    points: LogPoints,
    management: LogManagement,
    copied: set[str],
    notified_before: Extent | None,
) -> ExtentDecision:
    extent = Extent.parse(listed.name)
    name = extent.name

    def decision(action: ExtentAction, reason: str) -> ExtentDecision:
        return ExtentDecision(name, action, reason, listed.size_bytes)

    what = fate(extent, points, management)
    if what is Fate.WRITING:
        return decision(ExtentAction.KEEP, Why.WRITING)
    if what is Fate.MQ_REUSES:
        why = Why.KEPT_FOR_REUSE if extent.reusable else Why.MQ_REUSES.format(management=management.value)
        return decision(ExtentAction.MQ, why)
    if extent.behind(points.current) >= EXTENT_NUMBERS // 2:
        # MQ has not written it yet: a copy now would not be of the bytes it will hold, so none is made.
        return decision(ExtentAction.KEEP, Why.AHEAD.format(current=points.current.name))
    if management is LogManagement.ARCHIVE and notified_before is None:
        # ARCHLOG is blank "if the queue manager has no extents waiting" (q086250): every one was notified already.
        return decision(ExtentAction.MQ, Why.ARCHLOG_BLANK)
    if management is LogManagement.ARCHIVE and notified_before is not None and _behind(extent, notified_before, points):
        return decision(ExtentAction.MQ, Why.NOTIFIED.format(archive=notified_before.name))
    if what is Fate.NEEDED:
        # Copied off the host while MQ still needs it, as IBM i's needed receivers are saved: MQ has finished writing
        # every extent but the current one (q129100), and a copy is what restores one lost before it may go.
        if _behind(extent, points.restart, points):
            return decision(ExtentAction.ARCHIVE, Why.MEDIA_NEEDS.format(media=points.media.name))
        return decision(ExtentAction.ARCHIVE, Why.RESTART_NEEDS.format(restart=points.restart.name))
    if name in copied:
        return decision(ExtentAction.RELEASE, Why.PROVEN)
    return decision(ExtentAction.ARCHIVE_THEN_RELEASE, Why.NOT_PROVEN)


def _behind(extent: Extent, point: Extent, points: LogPoints) -> bool:
    """`extent` is older than `point`, counted back from CURRLOG across the wrap."""
    return extent.behind(points.current) > point.behind(points.current)


def _orderable(snapshot: LinuxSnapshot) -> bool:
    """It has the three log points, and they can be ordered."""
    try:
        return snapshot.points() is not None
    except ValueError:
        return False


def _stuck(snapshot: LinuxSnapshot, history: Sequence[LinuxSnapshot]) -> Iterable[tuple[Alert, str]]:
    runs = [*history[-STUCK_AFTER_RUNS:], snapshot]
    if len(runs) <= STUCK_AFTER_RUNS or not all(_orderable(r) for r in runs):
        return
    if len({r.current_extent for r in runs}) == 1:
        return  # nothing written: no point could have moved
    if len({r.restart_extent for r in runs}) == 1:
        yield (Alert.RESTART_STUCK, Why.RESTART_STUCK.format(restart=snapshot.restart_extent, runs=len(runs)))
    if len({r.media_extent for r in runs}) == 1:
        yield (Alert.MEDIA_STUCK, Why.MEDIA_STUCK.format(media=snapshot.media_extent, runs=len(runs)))
