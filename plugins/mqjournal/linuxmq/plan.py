"""The reference planner for Linux queue managers' linear logs: per extent, what mqjournal may do (#32).

Pure: a collection's snapshot, the extents the catalog holds a proven copy of, and the snapshots before it, in; the
decisions and alerts out. The rules are IBM's ("Determining superfluous log files", q018510; docs/linux-interfaces.md
section 7), by extent number only, never by modification time, across the 9,999,999 wrap (extents.fate):
- the extent being written is never touched;
- an extent behind RECLOG may be copied off the host (archived): restart no longer reads it;
- an extent behind both RECLOG and MEDIALOG may go once a copy of it is proven: in Archive mode MQ is told
  (SET LOG ARCHIVED) and reuses or deletes it itself; in Manual mode mqjournal deletes it;
- in Automatic mode, and for `R` extents, MQ decides alone: mqjournal only watches;
- in Archive mode an extent behind ARCHLOG (the oldest still waiting for notification) was notified already.
A RECLOG or MEDIALOG that stays while CURRLOG moves on is the same alert as IBM i's stuck recovery points.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from mqjournal.linuxmq.extents import Extent, Fate, LogManagement, LogPoints, fate
from mqjournal.linuxmq.snapshot import LinuxSnapshot

__all__ = ["Alert", "ExtentAction", "ExtentDecision", "QueueManagerLogPlan", "plan_queue_manager"]

STUCK_AFTER_RUNS = 3
"""Collections in a row with CURRLOG moving and a point not: then it is stuck (IBM i's default is the same)."""


class ExtentAction(StrEnum):
    KEEP = "keep"  # needed by restart (or being written): stays, nothing to do
    ARCHIVE = "archive"  # behind RECLOG, still needed for media recovery: copy it off the host, keep it
    ARCHIVE_THEN_RELEASE = "archive_then_release"  # behind both points, no proven copy yet: copy, prove, release
    RELEASE = "release"  # behind both points, a proven copy exists: SET LOG ARCHIVED (Archive) or delete (Manual)
    MQ = "mq"  # MQ's own to reuse or delete (Automatic mode, an R extent, or notified already)


@dataclass(frozen=True)
class ExtentDecision:
    extent: str
    action: ExtentAction
    reason: str


class Alert(StrEnum):
    RESTART_STUCK = "restart_stuck"  # RECLOG stays: a long-running unit of work holds the log (AMQ7469 follows)
    MEDIA_STUCK = "media_stuck"  # MEDIALOG stays: a damaged object, or no media images recorded
    NOT_PLANNED = "not_planned"  # a circular or replicated log, or no log points: nothing of it is planned


@dataclass(frozen=True)
class QueueManagerLogPlan:
    host: str
    qmgr: str
    decisions: tuple[ExtentDecision, ...]
    alerts: tuple[tuple[Alert, str], ...]

    def with_action(self, action: ExtentAction) -> list[str]:
        return [d.extent for d in self.decisions if d.action is action]


def plan_queue_manager(
    snapshot: LinuxSnapshot, proven: Iterable[str], history: Sequence[LinuxSnapshot] = ()
) -> QueueManagerLogPlan:
    """`proven`: the extent names the catalog holds a copy of whose bytes the host's SHA-256 vouched for.
    `history`: this queue manager's earlier snapshots, oldest first (for the stuck alerts)."""
    alerts = list(_stuck(snapshot, history))
    points = snapshot.points()
    if snapshot.log_type != "LINEAR" or points is None:
        why = f"{snapshot.log_type.lower()} log" if snapshot.log_type != "LINEAR" else "no log points in its status"
        alerts.append((Alert.NOT_PLANNED, f"{why}: MQ manages its extents, mqjournal plans none of them"))
        keep = tuple(ExtentDecision(e.name, ExtentAction.KEEP, why) for e in snapshot.extents)
        return QueueManagerLogPlan(snapshot.host, snapshot.qmgr, keep, tuple(alerts))
    copied = set(proven)
    notified_before = Extent.parse(snapshot.archive_extent) if snapshot.archive_extent else None
    decisions = []
    for listed in snapshot.extents:
        extent = Extent.parse(listed.name)
        decisions.append(_decide(extent, points, snapshot.log_management, copied, notified_before))
    return QueueManagerLogPlan(snapshot.host, snapshot.qmgr, tuple(decisions), tuple(alerts))


def _decide(
    extent: Extent, points: LogPoints, management: LogManagement, copied: set[str], notified_before: Extent | None
) -> ExtentDecision:
    name = extent.name
    what = fate(extent, points, management)
    if what is Fate.WRITING:
        return ExtentDecision(name, ExtentAction.KEEP, "the extent being written (CURRLOG)")
    if what is Fate.MQ_REUSES:
        why = "kept by MQ for reuse (R)" if extent.reusable else f"LogManagement={management.value}: MQ reuses it"
        return ExtentDecision(name, ExtentAction.MQ, why)
    if management is LogManagement.ARCHIVE and notified_before is None:
        # ARCHLOG is blank "if the queue manager has no extents waiting" (q086250): every one was notified already.
        return ExtentDecision(name, ExtentAction.MQ, "no extent waits for archive notification (ARCHLOG blank)")
    if management is LogManagement.ARCHIVE and notified_before is not None and _behind(extent, notified_before, points):
        return ExtentDecision(
            name, ExtentAction.MQ, f"behind ARCHLOG {notified_before.name}: MQ was told it is archived"
        )
    if what is Fate.NEEDED:
        if _behind(extent, points.restart, points):
            return ExtentDecision(name, ExtentAction.ARCHIVE, f"media recovery needs it (MEDIALOG {points.media.name})")
        return ExtentDecision(name, ExtentAction.KEEP, f"restart needs it (RECLOG {points.restart.name})")
    if name in copied:
        return ExtentDecision(name, ExtentAction.RELEASE, "behind RECLOG and MEDIALOG, and its copy is proven")
    return ExtentDecision(name, ExtentAction.ARCHIVE_THEN_RELEASE, "behind RECLOG and MEDIALOG, no proven copy yet")


def _behind(extent: Extent, point: Extent, points: LogPoints) -> bool:
    """`extent` is older than `point`, counted back from CURRLOG across the wrap."""
    return extent.behind(points.current) > point.behind(points.current)


def _stuck(snapshot: LinuxSnapshot, history: Sequence[LinuxSnapshot]) -> Iterable[tuple[Alert, str]]:
    runs = [*history[-STUCK_AFTER_RUNS:], snapshot]
    if len(runs) <= STUCK_AFTER_RUNS or any(r.points() is None for r in runs):
        return
    if len({r.current_extent for r in runs}) == 1:
        return  # nothing written: no point could have moved
    if len({r.restart_extent for r in runs}) == 1:
        yield (
            Alert.RESTART_STUCK,
            f"RECLOG {snapshot.restart_extent} has not moved in {len(runs)} collections while CURRLOG did: a "
            "long-running unit of work holds it (DISPLAY CONN(*) TYPE(CONN) UOWSTDA UOWSTTI); commit or back it out",
        )
    if len({r.media_extent for r in runs}) == 1:
        yield (
            Alert.MEDIA_STUCK,
            f"MEDIALOG {snapshot.media_extent} has not moved in {len(runs)} collections while CURRLOG did: an "
            "object is damaged (AMQ7472; DISPLAY QSTATUS(*) MEDIALOG finds the oldest) or no media images are "
            "recorded (rcdmqimg, IMGSCHED(AUTO)); recover it with rcrmqobj",
        )
