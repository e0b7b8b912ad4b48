"""What the fleet view shows of the Linux queue managers (#32), in MQ's own terms: pure functions, no Airflow.

Sources, beside the IBM i ones of fleetview/data.py and written by the same maintenance runs:

- the plans' Linux rows, `plans/run_id=<run>/linux_queue_managers/` and `linux_extents/` (linuxmq.planrows): per
  queue manager the newest plan that has it gives its row, as for IBM i;
- the Linux snapshots, `linux-snapshots/run_id=<run>/<host>.jsonl`: the collection that plan was made from (the
  host's UTC offset, the log path, the extents' modification times for people, and which extents restart reads);
- the backup catalog's copies of extents (`Catalog.extent_copies`): each recorded only with the host's SHA-256 of
  its bytes, so every one is a proven copy;
- the run reports and Airflow's runs, through data.RunsOf, as for IBM i (a run report has no section of its own per
  Linux queue manager: the outcome is the run's note, else its report's outcome line).

A Linux queue manager is keyed by host and name (it has no library). Nothing here decides anything about an
extent: the plan's action and reason are shown as the planner wrote them, and `linux_traffic_light` only sums up
what the plan, the collection, the catalog and the run already say.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mqjournal.catalog import Catalog, CatalogUnavailable, StoredExtent
from mqjournal.fleetview.data import (
    SEVERITY,
    BackupInfo,
    LastRun,
    LaterRuns,
    Light,
    OutcomeFrom,
    PlanRun,
    RunLookup,
    RunsOf,
    light_of,
    no_airflow,
    no_later_runs,
    plan_runs,
    run_reasons,
)
from mqjournal.linuxmq import cannotstart
from mqjournal.linuxmq.extents import Extent, LogPoints
from mqjournal.linuxmq.plan import TO_ARCHIVE, TO_RELEASE, Alert, QueueManagerLogPlan
from mqjournal.linuxmq.planrows import planned_queue_managers, read_linux_plan
from mqjournal.linuxmq.snapshot import LinuxSnapshot, PlatformName, read_linux_snapshots
from mqjournal.settings import Settings

log = logging.getLogger(__name__)

Key = tuple[str, str]
"""A Linux queue manager: its host and its name, as linuxmq.planrows.KEY_COLUMNS name it."""

LINUX_RED_ALERTS = frozenset({Alert.RESTART_STUCK.value, Alert.MEDIA_STUCK.value, cannotstart.CODE})
"""Alerts that turn a Linux queue manager red: strmqm will fail (an extent restart reads is missing), or a log
point is stuck, so the log directory grows until its file system is full. Every other alert (`not_planned`) turns
it amber."""

HeldBy = Literal["RECLOG", "MEDIALOG", "RECLOG and MEDIALOG"]


class LinuxQueueManagerRow(BaseModel):
    """One Linux queue manager's row of the fleet overview: its newest plan, the collection it was made from, the
    catalog's copies of its extents and its last run, in MQ's terms. A figure that is not known is None, never 0."""

    model_config = ConfigDict(frozen=True)

    platform: Literal["linux"] = "linux"
    """Which kind of row (the IBM i rows say "ibmi"): every host with a linear log, whatever its platform."""
    host_platform: PlatformName = "linux"
    """The host's platform (linux, aix, windows), from the snapshot of the collection; linux without one."""
    host: str
    qmgr: str
    run_id: str
    collected_at: datetime
    utc_offset_minutes: int | None = None
    """The host's UTC offset at the collection (its snapshot's), None without the snapshot."""
    log_type: str
    """qm.ini's LogType: LINEAR, CIRCULAR or REPLICATED (only LINEAR is planned)."""
    log_management: str
    """qm.ini's LogManagement: Manual, Automatic or Archive."""
    log_path: str | None = None
    """The log's extent directory (DISPLAY QMSTATUS LOGPATH), from the snapshot."""
    current_extent: str | None = None
    """CURRLOG: the extent being written."""
    restart_extent: str | None = None
    """RECLOG: the oldest extent restart recovery needs."""
    media_extent: str | None = None
    """MEDIALOG: the oldest extent media recovery needs."""
    archive_extent: str | None = None
    """ARCHLOG: the oldest extent waiting for archive notification (Archive mode); None when blank."""
    restart_behind: int | None = None
    """How many extents RECLOG is behind CURRLOG, across the 9,999,999 wrap; None when the points are not known or
    cannot be ordered."""
    media_behind: int | None = None
    """How many extents MEDIALOG is behind CURRLOG, likewise."""
    oldest_needed: str | None = None
    """The older of RECLOG and MEDIALOG: every extent from it to CURRLOG stays in the log directory."""
    held_by: HeldBy | None = None
    """Which point that is."""
    extents_in_log: int
    """Extent files (S and R) in the log directory at the collection."""
    bytes_in_log: int
    """Their bytes."""
    to_archive: list[str] = Field(default_factory=list)
    """The extents the plan copies into the backup store, oldest first."""
    to_release: list[str] = Field(default_factory=list)
    """The extents the plan releases once approved (SET LOG ARCHIVED in Archive mode, deleted in Manual mode)."""
    bytes_to_release: int = 0
    """What releasing them frees in the log directory."""
    kept: int = 0
    """Extents the plan keeps or leaves to MQ."""
    awaiting_copy: list[str] = Field(default_factory=list)
    """Extents the plan archives of which the catalog holds no proven copy (yet)."""
    last_backup: BackupInfo | None = None
    """The newest proven copy of any of its extents in the backup store."""
    alerts: list[str] = Field(default_factory=list)
    """The plan's alert codes (restart_stuck, media_stuck, not_planned), after QMGR_CANNOT_START from the
    collection."""
    alert_texts: dict[str, str] = Field(default_factory=dict)
    """Each alert's text: what it means and what to do."""
    recovery_conf: dict[str, str] = Field(default_factory=dict)
    """What to enter in the recovery DAG's trigger form for it."""
    last_run_id: str | None = None
    """A run after the plan's that selected it and made no plan of it: the last run. None: the plan's run."""
    run_state: str | None = None
    outcome: str | None = None
    outcome_from: OutcomeFrom | None = None
    run_note: str | None = None
    light: Light = Light(color="green", reasons=[])

    @property
    def severity(self) -> int:
        return SEVERITY[self.light.color]


class ExtentRow(BaseModel):
    """One extent of the plan, as `ls -l` of the log directory and the plan show it, with its copies."""

    model_config = ConfigDict(frozen=True)

    name: str
    size_bytes: int
    modified_at: datetime | None = None
    """The file's modification time at the collection: for people only, never planned by."""
    action: str
    reason: str
    copies: list[str] = Field(default_factory=list)
    """The keys of its proven copies in the backup store."""


class LinuxQueueManagerPage(BaseModel):
    """Everything a Linux queue manager's page shows."""

    model_config = ConfigDict(frozen=True)

    row: LinuxQueueManagerRow
    extents: list[ExtentRow]
    alert_lines: list[str]


@dataclass(frozen=True)
class LinuxFleetEntry:
    """A Linux row with the plan, snapshot and catalog copies it was made from (the metrics read the same)."""

    row: LinuxQueueManagerRow
    plan: QueueManagerLogPlan
    snapshot: LinuxSnapshot | None
    copies: tuple[StoredExtent, ...]


# --- reading -----------------------------------------------------------------------------------------------------


def linux_plans(run: PlanRun, not_in: Collection[Key] = ()) -> list[QueueManagerLogPlan]:
    """The Linux queue managers of one plan folder but those `not_in` (their extents are not read); none when it has
    none or they cannot be read (logged)."""
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information

    try:
        wanted = planned_queue_managers(run.folder) - set(not_in)
        return read_linux_plan(run.folder, wanted) if wanted else []
    except (OSError, ValueError, KeyError, pa.ArrowException) as exc:  # KeyError: a column an older job lacks
        log.warning("the Linux plan of %s left out of the fleet view: %s", run.folder, exc)
        return []


def newest_linux_plans(runs: Sequence[PlanRun]) -> dict[Key, tuple[PlanRun, QueueManagerLogPlan]]:
    """Per Linux queue manager, the newest plan of `runs` (oldest first) that has it: a run can be narrowed to some
    hosts. Only the extents of those plans are read."""
    newest: dict[Key, tuple[PlanRun, QueueManagerLogPlan]] = {}
    for run in reversed(runs):
        for plan in linux_plans(run, not_in=newest.keys()):
            newest[(plan.host, plan.qmgr)] = (run, plan)
    return newest


def linux_snapshot_of(settings: Settings, run_id: str, host: str, qmgr: str) -> LinuxSnapshot | None:
    """The queue manager's snapshot of one run, None when it is missing or unreadable."""
    path = settings.linux_snapshot_dir(run_id) / f"{host}.jsonl"
    try:
        found = [s for s in read_linux_snapshots(path) if s.host == host and s.qmgr == qmgr]
    except (OSError, ValueError) as exc:
        if path.exists():
            log.warning("%s left out of the fleet view: %s", path, exc)
        return None
    return found[-1] if found else None


def proven_copies(catalog: Catalog | None, host: str, qmgr: str) -> tuple[StoredExtent, ...]:
    """The catalog's copies of the queue manager's extents (each vouched for by the host's SHA-256), oldest first."""
    if catalog is None:
        return ()
    try:
        return tuple(catalog.extent_copies(host, qmgr))
    except CatalogUnavailable as exc:
        log.warning("the fleet view shows no copies of %s/%s: %s", host, qmgr, exc)
        return ()


# --- a row -------------------------------------------------------------------------------------------------------


def log_points(plan: QueueManagerLogPlan) -> LogPoints | None:
    """The plan's CURRLOG, RECLOG and MEDIALOG, None when one is missing or they cannot be ordered (the planner
    then alerts not_planned)."""
    if plan.current_extent is None or plan.restart_extent is None or plan.media_extent is None:
        return None
    try:
        return LogPoints(
            current=Extent.parse(plan.current_extent),
            restart=Extent.parse(plan.restart_extent),
            media=Extent.parse(plan.media_extent),
        )
    except ValueError:
        return None


def held_by(points: LogPoints) -> HeldBy:
    restart, media = points.restart.behind(points.current), points.media.behind(points.current)
    return "RECLOG and MEDIALOG" if restart == media else "RECLOG" if restart > media else "MEDIALOG"


def newest_copy(copies: Sequence[StoredExtent]) -> BackupInfo | None:
    if not copies:
        return None
    copy = max(copies, key=lambda c: c.verified_at)
    return BackupInfo(at=copy.verified_at, where="backup store", detail=f"{copy.extent}: {copy.key}")


def linux_alerts(plan: QueueManagerLogPlan, snapshot: LinuxSnapshot | None) -> dict[str, str]:
    """The alerts with their texts: QMGR_CANNOT_START first when the collection lacks an extent restart reads (as
    the on-call step raises it from the same snapshot), then the plan's."""
    found: dict[str, str] = {}
    stuck = cannotstart.cannot_start(snapshot) if snapshot is not None else None
    if stuck is not None:
        found[cannotstart.CODE] = stuck.text.removeprefix(f"{cannotstart.CODE}: ")
    for kind, text in plan.alerts:
        found[kind.value] = text
    return found


def recovery_conf(host: str, qmgr: str, alerts: Mapping[str, str], snapshot: LinuxSnapshot | None) -> dict[str, str]:
    """The recovery DAG's form for the queue manager: a startup recovery for one that cannot start (the on-call
    step's values), a media recovery when MEDIALOG is stuck (the object to recover is the admin's to name: a Linux
    snapshot names none), else host and queue manager."""
    stuck = cannotstart.cannot_start(snapshot) if snapshot is not None else None
    if stuck is not None:
        return stuck.recovery_conf()
    conf = {"host": host, "qmgr": qmgr}
    if Alert.MEDIA_STUCK.value in alerts:
        conf["kind"] = "media"
    return conf


def linux_row(
    run_id: str,
    plan: QueueManagerLogPlan,
    snapshot: LinuxSnapshot | None,
    copies: Sequence[StoredExtent],
    last: tuple[str, LastRun],
    now: datetime,
) -> LinuxQueueManagerRow:
    offset = snapshot.collected_at.utcoffset() if snapshot is not None else None
    points = log_points(plan)
    copied = {c.extent for c in copies}
    alerts = linux_alerts(plan, snapshot)
    # The snapshot lists the log directory; the plan lists the same extents, one decision each.
    listed = [(e.name, e.size_bytes) for e in snapshot.extents] if snapshot is not None else None
    if listed is None:
        listed = [(d.extent, d.size_bytes) for d in plan.decisions]
    row = LinuxQueueManagerRow(
        host_platform=snapshot.platform if snapshot is not None else "linux",
        host=plan.host,
        qmgr=plan.qmgr,
        run_id=run_id,
        collected_at=plan.collected_at,
        utc_offset_minutes=int(offset.total_seconds() // 60) if offset is not None else None,
        log_type=plan.log_type,
        log_management=plan.log_management.value,
        log_path=snapshot.log_path if snapshot is not None else None,
        current_extent=plan.current_extent,
        restart_extent=plan.restart_extent,
        media_extent=plan.media_extent,
        archive_extent=plan.archive_extent,
        restart_behind=points.restart.behind(points.current) if points else None,
        media_behind=points.media.behind(points.current) if points else None,
        oldest_needed=points.oldest_needed.name if points else None,
        held_by=held_by(points) if points else None,
        extents_in_log=len(listed),
        bytes_in_log=sum(size for _, size in listed),
        to_archive=[d.extent for d in plan.to_archive],
        to_release=[d.extent for d in plan.to_release],
        bytes_to_release=sum(d.size_bytes for d in plan.to_release),
        kept=sum(1 for d in plan.decisions if d.action not in (*TO_ARCHIVE, *TO_RELEASE)),
        awaiting_copy=[d.extent for d in plan.to_archive if d.extent not in copied],
        last_backup=newest_copy(copies),
        alerts=list(alerts),
        alert_texts=alerts,
        recovery_conf=recovery_conf(plan.host, plan.qmgr, alerts, snapshot),
        last_run_id=last[0] if last[0] != run_id else None,
        run_state=last[1].state,
        outcome=last[1].outcome,
        outcome_from=last[1].outcome_from,
        run_note=last[1].run_note,
    )
    return row.model_copy(update={"light": linux_traffic_light(row, now)})


def linux_traffic_light(row: LinuxQueueManagerRow, now: datetime) -> Light:
    """Red: an alert of LINUX_RED_ALERTS (strmqm would fail, or RECLOG or MEDIALOG is stuck). Amber: any other alert,
    extents the plan archives without a proven copy in the backup store (work waiting: a lost one could not be put
    back), and the run and collection reasons of IBM i's light (data.run_reasons). Green otherwise. Each reason is
    said.

    Extents waiting to be released are no reason by themselves: every run of a moving log leaves some, released at
    the next gate; one that stays is what the stuck alerts catch."""
    red: list[str] = []
    amber: list[str] = []
    for code in row.alerts:
        (red if code in LINUX_RED_ALERTS else amber).append(f"{code}: {row.alert_texts.get(code, '')}")
    if row.awaiting_copy:
        amber.append(
            f"no proven copy in the backup store of {len(row.awaiting_copy)} extents the plan archives "
            f"({cannotstart.listed(row.awaiting_copy)}): run the maintenance DAG, whose archive step copies them"
        )
    amber += run_reasons(row.run_state, row.outcome, row.collected_at, now)
    return light_of(red, amber)


# --- the fleet's Linux rows and a queue manager's page -----------------------------------------------------------


def linux_entries(
    settings: Settings,
    catalog: Catalog | None,
    newest: Mapping[Key, tuple[PlanRun, QueueManagerLogPlan]],
    runs_of: RunsOf,
    *,
    now: datetime,
) -> list[LinuxFleetEntry]:
    """The rows of the Linux queue managers of `newest` (newest_linux_plans), sorted by host and name."""
    entries = []
    for (host, qmgr), (run, plan) in newest.items():
        snapshot = linux_snapshot_of(settings, run.run_id, host, qmgr)
        copies = proven_copies(catalog, host, qmgr)
        row = linux_row(run.run_id, plan, snapshot, copies, runs_of.of(run.run_id, host, qmgr, None), now)
        entries.append(LinuxFleetEntry(row, plan, snapshot, copies))
    return sorted(entries, key=lambda e: (e.row.host, e.row.qmgr))


def linux_queue_manager(
    settings: Settings,
    catalog: Catalog | None,
    host: str,
    qmgr: str,
    *,
    now: datetime | None = None,
    airflow: RunLookup = no_airflow,
    later: LaterRuns = no_later_runs,
) -> LinuxQueueManagerPage | None:
    """A Linux queue manager's page, None when no plan has it."""
    found = newest_linux_plans(plan_runs(settings)).get((host, qmgr))
    if found is None:
        return None
    run, _ = found
    runs_of = RunsOf(settings, [run.run_id], airflow, later)
    (entry,) = linux_entries(settings, catalog, {(host, qmgr): found}, runs_of, now=now or datetime.now(UTC))
    row = entry.row
    return LinuxQueueManagerPage(
        row=row,
        extents=extent_rows(entry.plan, entry.snapshot, entry.copies),
        alert_lines=[f"{code}: {row.alert_texts[code]}" for code in row.alerts],
    )


def extent_rows(
    plan: QueueManagerLogPlan, snapshot: LinuxSnapshot | None, copies: Iterable[StoredExtent]
) -> list[ExtentRow]:
    """The plan's extents, oldest first, with their modification times from the snapshot and their copies."""
    modified = {e.name: e.modified_at for e in snapshot.extents} if snapshot is not None else {}
    keys: dict[str, list[str]] = {}
    for copy in copies:
        keys.setdefault(copy.extent, []).append(copy.key)
    return [
        ExtentRow(
            name=d.extent,
            size_bytes=d.size_bytes,
            modified_at=modified.get(d.extent),
            action=d.action.value,
            reason=d.reason,
            copies=keys.get(d.extent, []),
        )
        for d in plan.decisions
    ]
