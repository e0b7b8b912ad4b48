"""The Linux plan as the plan job writes it (Parquet `linux_extents/` and `linux_queue_managers/`, next to the IBM i
plan's) and every reader reads it back: the reference planner's own values (`linuxmq.plan`), typed.

The columns are the fields of `ExtentDecision` (after its queue manager's host and qmgr) and of `QueueManagerLogPlan`
(but its decisions, which are the other dataset's rows), in their order: the Spark plan (`mqjournal.sparkplan.linux`)
writes these and never lists them again. Parquet keeps no extent order, nor a UTC offset: the reader puts each queue
manager's decisions back in the planner's order (the oldest first, counted back from CURRLOG across the wrap), and
gives `collected_at` in UTC.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mqjournal.linuxmq.extents import LogManagement, oldest_first
from mqjournal.linuxmq.plan import Alert, ExtentAction, ExtentDecision, QueueManagerLogPlan
from mqjournal.planrows import read_rows

if TYPE_CHECKING:
    from mqjournal.datafolder import DataPath

EXTENTS = "linux_extents"
QUEUE_MANAGERS = "linux_queue_managers"
OUTPUTS = (EXTENTS, QUEUE_MANAGERS)
"""The Linux plan's datasets in a plan folder, in the order they are moved into place: the queue managers last, so
a reader that finds them finds their extents of the same plan."""

KEY_COLUMNS = ("host", "qmgr")
"""The columns that name a Linux queue manager in both datasets (a `wanted` pair of `read_linux_plan`)."""
EXTENT_COLUMNS = (*KEY_COLUMNS, *(f.name for f in fields(ExtentDecision)))
QUEUE_MANAGER_COLUMNS = tuple(f.name for f in fields(QueueManagerLogPlan) if f.name != "decisions")


def planned_queue_managers(plan_dir: DataPath) -> set[tuple[str, str]]:
    """The (host, qmgr) pairs of the Linux queue managers the plan in `plan_dir` has, without reading their extents;
    none when the plan has no Linux queue managers."""
    if not (plan_dir / QUEUE_MANAGERS).exists():
        return set()
    return {(row["host"], row["qmgr"]) for row in read_rows(plan_dir / QUEUE_MANAGERS, hosts=None)}


def read_linux_plan(plan_dir: DataPath, wanted: set[tuple[str, str]] | None = None) -> list[QueueManagerLogPlan]:
    """The Linux queue managers' plan the job wrote to `plan_dir` (only the (host, qmgr) pairs `wanted`, when given:
    only their hosts' rows are read), by host and queue manager; [] when the plan has no Linux queue managers."""
    if not (plan_dir / QUEUE_MANAGERS).exists():
        return []
    hosts = None if wanted is None else {host for host, _ in wanted}
    decisions: dict[tuple[str, str], list[ExtentDecision]] = defaultdict(list)
    for row in read_rows(plan_dir / EXTENTS, hosts=hosts):
        decisions[(row["host"], row["qmgr"])].append(
            ExtentDecision(row["extent"], ExtentAction(row["action"]), row["reason"], row["size_bytes"])
        )
    plans = [
        _queue_manager(row, decisions[(row["host"], row["qmgr"])])
        for row in read_rows(plan_dir / QUEUE_MANAGERS, hosts=hosts)
        if wanted is None or (row["host"], row["qmgr"]) in wanted
    ]
    return sorted(plans, key=lambda p: (p.host, p.qmgr))


def _queue_manager(row: dict[str, Any], decisions: list[ExtentDecision]) -> QueueManagerLogPlan:
    current = row["current_extent"]
    return QueueManagerLogPlan(
        host=row["host"],
        qmgr=row["qmgr"],
        run_id=row["run_id"],
        collected_at=_utc(row["collected_at"]),
        log_type=row["log_type"],
        log_management=LogManagement(row["log_management"]),
        current_extent=current,
        restart_extent=row["restart_extent"],
        media_extent=row["media_extent"],
        archive_extent=row["archive_extent"],
        decisions=tuple(sorted(decisions, key=lambda d: oldest_first(d.extent, current))),
        alerts=tuple((Alert(a["kind"]), a["text"]) for a in row["alerts"]),
    )


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
