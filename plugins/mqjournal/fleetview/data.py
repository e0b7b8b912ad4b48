"""What the fleet view shows, read from the data folder and the backup catalog: pure functions, no Airflow.

Sources, all written by the maintenance runs (README, "Connections and settings"):

- the plans, `plans/run_id=<run>/` (Parquet `queue_managers` and `receivers`, and `summary.json`, read as
  mqjournal.planrows' rows): per queue manager the newest plan that has it gives its row; older plans give the
  history. Columns a plan of an older planner lacks are read as missing (the page shows "-"), never as an error;
- the snapshot history, `snapshots/run_id=<run>/<host>__<library>.jsonl`: receiver bytes online per run, receiver
  attach and detach times and sequence ranges, the partition's UTC offset (the offset of `collected_at`);
- the run reports, `reports/<run>.md`: the run's outcome line;
- the backup catalog: verified saves (where each receiver's backup is), copies in the backup store, deletions;
- the runs as Airflow knows them (state and note), from a `RunLookup` the caller passes: the app passes
  `airflow_runs.dag_runs`, which reads Airflow's metadata DB; without one (`no_airflow`) the reports alone say.

A queue manager is keyed by host and library (`QMxxx`): its name alone can live on two hosts. Nothing here decides
anything about a receiver: the plan's action and reason are shown as the planner wrote them, and `traffic_light`
only sums up what the plan and the run already say.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from mqjournal import forecast
from mqjournal.cannotstart import cannot_start, with_cannot_start_alerts
from mqjournal.catalog import (
    Catalog,
    CatalogedReceiver,
    CatalogUnavailable,
    DeletionRecord,
    DrillRecord,
    SaveRecord,
    StoredObject,
)
from mqjournal.datafolder import DataPath, arrow_source, modified
from mqjournal.forecast import AspForecast, AspKey
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver, QueueManagerRef, in_chain_order
from mqjournal.pointwords import points_sentence
from mqjournal.policy import Policy
from mqjournal.settings import Settings
from mqjournal.snapshot import Snapshot, read_snapshots, snapshots_of
from mqjournal.vocabulary import Alert, ReceiverStatus, alert_text

log = logging.getLogger(__name__)

MAINTENANCE_DAG = "mq_journal_maintenance"
RECOVERY_DAG = "mq_journal_recovery"

HISTORY_RUNS = 60
"""Runs the charts of a queue manager page go back (a year of weekly runs)."""

POLICY = Policy()
"""The limits the fleet view judges by (held_by's age, the ASP forecast's limit, window and alert days): the
policy's defaults, as the maintenance runs use them (their trigger form sets retention and saving, not these)."""

Row = TypeVar("Row", PlannedQueueManager, PlannedReceiver)

# --- the traffic light -------------------------------------------------------------------------------------------

RED_ALERTS = frozenset(
    {
        "QMGR_CANNOT_START",  # STRMQM ends with AMQ7432: the queue manager does not come back after a restart
        "CHECKPOINT_FAILED",
        "OLDEST_NEEDED_NOT_ON_SYSTEM",
        "NEEDED_RECEIVER_NOT_ONLINE",
        "NEXT_RECEIVER_NAME_TAKEN",  # switching will stop: the attached receiver then grows until the ASP fills
        "RECEIVER_OVER_THRESHOLD",
        "MEDIA_POINT_OLD",  # a damaged object: applications using it fail until RCRMQMOBJ
        "MEDIA_RECOVERY_STUCK",
    }
)
"""Alerts that turn a queue manager red: MQ cannot start or recover as things stand, or soon will not. Every other
alert (a newer planner's too) turns it amber."""

ASP_RED_PERCENT = 90.0
ASP_AMBER_PERCENT = 75.0
STALE_AFTER = timedelta(days=8)
"""A queue manager not collected for longer than a weekly schedule plus a day is amber: its row may be out of date."""

Color = Literal["red", "amber", "green"]
SEVERITY: dict[str, int] = {"green": 0, "amber": 1, "red": 2}

# --- the runs as Airflow knows them ------------------------------------------------------------------------------


class AirflowRun(BaseModel):
    """A maintenance run's row in Airflow's metadata DB: its state (queued, running, success, failed) and its note
    (the listener of mqjournal.airflow.notes sets it to the outcome line when the run ends; a person may write one)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    state: str | None = None
    note: str | None = None
    at: datetime | None = None
    """When the run was to run (Airflow's run_after): the order of the runs."""
    conf: dict[str, Any] = Field(default_factory=dict)
    """Its trigger form: which hosts and queue managers it selected."""


RunLookup = Callable[[Collection[str]], Mapping[str, AirflowRun]]
"""Given run ids of the maintenance DAG, the ones Airflow knows (one read for all of them); never raises."""

LaterRuns = Callable[[Collection[str]], Sequence[AirflowRun]]
"""Given run ids of the maintenance DAG, the runs Airflow has after the earliest of them, newest first (one read);
never raises."""


def no_airflow(run_ids: Collection[str]) -> Mapping[str, AirflowRun]:
    """The lookup where no Airflow metadata DB is read: every outcome comes from the run reports."""
    return {}


def no_later_runs(run_ids: Collection[str]) -> Sequence[AirflowRun]:
    return []


def selects(conf: Mapping[str, Any], host: str, qmgr: str) -> bool:
    """Whether a maintenance run's form selected the queue manager: its hosts (none: all) and its queue managers,
    `host/QMGR` or a bare `QMGR` on every selected host (none: all)."""
    hosts = conf.get("hosts") or []
    if hosts and host not in hosts:
        return False
    pairs = [str(c).rpartition("/") for c in conf.get("queue_managers") or []]
    return not pairs or any(q == qmgr and h in ("", host) for h, _, q in pairs)


def newer_run(host: str, qmgr: str, plan_run: AirflowRun | None, later: Sequence[AirflowRun]) -> AirflowRun | None:
    """The newest run that selected the queue manager after the run of its newest plan, if any: one that failed
    before planning it (a collect that could not reach the host), or one still on its way. Its outcome is the
    queue manager's last run; the plan stays what the row's other columns show."""
    if plan_run is None or plan_run.at is None:
        return None
    for run in later:  # newest first
        if run.run_id != plan_run.run_id and run.at and run.at > plan_run.at and selects(run.conf, host, qmgr):
            return run
    return None


OutcomeFrom = Literal["queue manager", "note", "report"]
"""Where a row's outcome comes from: the run report's section of that queue manager (its own outcome), the run's
note in Airflow (the whole run's), the run report's outcome line (the whole run's)."""


class LastRun(BaseModel):
    """What the fleet view says of a run: Airflow's state of it (None when Airflow's DB was not read or does not
    have the run) and its outcome, from the run's note or else its report (`outcome_from` says which)."""

    model_config = ConfigDict(frozen=True)

    state: str | None = None
    outcome: str | None = None
    outcome_from: OutcomeFrom | None = None
    run_note: str | None = None
    """The whole run's note in Airflow (else its report's outcome line) where `outcome` is the queue manager's own."""


def last_run(report_outcome: str | None, run: AirflowRun | None, own: str | None = None) -> LastRun:
    """The queue manager's `own` outcome (its section of the run report) first: the run's note and outcome line
    are the whole run's, and a queue manager declined at the gate is not "approved... 60 deleted". Without it, the
    note beats the report's line: it is what the admin sees in Airflow's grid, and a person may have corrected it;
    the report's line stays the answer for runs Airflow's DB does not have (a data folder read elsewhere)."""
    state = run.state if run is not None else None
    note = (run.note or "").strip() if run is not None else ""
    if own:
        return LastRun(state=state, outcome=own, outcome_from="queue manager", run_note=note or report_outcome)
    if note:
        return LastRun(state=state, outcome=note, outcome_from="note")
    if report_outcome:
        return LastRun(state=state, outcome=report_outcome, outcome_from="report")
    return LastRun(state=state)


class Light(BaseModel):
    """The traffic light of a queue manager and the reasons for its color (none for green)."""

    model_config = ConfigDict(frozen=True)

    color: Color
    reasons: list[str]


class BackupInfo(BaseModel):
    """The newest verified backup of a queue manager's receivers: in the backup store, or a save file on the
    partition only (lost with the partition's disk)."""

    model_config = ConfigDict(frozen=True)

    at: datetime
    where: Literal["backup store", "save file on the partition"]
    detail: str


class DrillInfo(BaseModel):
    """The last restore drill run that drilled any copy of a queue manager (mq_journal_restore_drill): when, how many
    of its copies, and how each came out."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    at: datetime
    copies: int
    passed: int
    failed: list[str] = Field(default_factory=list)  # keys of the copies that do not restore
    not_made: list[str] = Field(default_factory=list)  # keys whose drill could not be made (nothing known)
    problems: list[str] = Field(default_factory=list)

    @property
    def outcome(self) -> Literal["passed", "failed", "not made"]:
        if self.failed:
            return "failed"
        return "not made" if self.not_made else "passed"


def last_drill(drills: Iterable[DrillRecord]) -> DrillInfo | None:
    """The newest drill run among one queue manager's drills, summed up."""
    runs: dict[str, list[DrillRecord]] = defaultdict(list)
    for d in drills:
        runs[d.run_id].append(d)
    if not runs:
        return None
    run_id, done = max(runs.items(), key=lambda item: max(d.drilled_at for d in item[1]))
    return DrillInfo(
        run_id=run_id,
        at=max(d.drilled_at for d in done),
        copies=len(done),
        passed=sum(1 for d in done if d.outcome == "passed"),
        failed=[d.key for d in done if d.outcome == "failed"],
        not_made=[d.key for d in done if d.outcome == "error"],
        problems=[f"{d.key}: {d.problem}" for d in done if d.problem],
    )


class QueueManagerRow(BaseModel):
    """One row of the fleet overview: the queue manager as its newest plan, snapshot and run (Airflow's state and note,
    else its report) show it."""

    model_config = ConfigDict(frozen=True)

    platform: Literal["ibmi"] = "ibmi"
    """A queue manager on IBM i (the fleet file's `platform`); a Linux one is a linuxdata.LinuxQueueManagerRow."""
    host: str
    qmgr: str
    library: str
    run_id: str
    collected_at: datetime | None
    utc_offset_minutes: int | None
    receivers_online: int
    """The plan's receivers not freed, less those the catalog records deleted since the plan's collection."""
    bytes_online: int
    deleted_since_plan: int = 0
    """Receivers of the plan the catalog records deleted after its collection: not online any more."""
    bytes_deleted_since_plan: int = 0
    last_deleted_at: datetime | None = None
    asp_number: int | None = None
    asp_capacity_bytes: int | None = None
    asp_available_bytes: int | None = None
    oldest_needed: str | None = None
    oldest_needed_age_seconds: int | None = None
    holding_point: str | None = None
    holding_point_at: datetime | None = None
    holding_point_age_seconds: int | None = None
    damaged_objects: list[str] = Field(default_factory=list)
    recovery_points: str | None = None
    blocked: bool = False
    block_reason: str | None = None
    alerts: list[str] = Field(default_factory=list)
    receivers_to_save: int = 0
    receivers_to_delete: int = 0
    bytes_to_delete: int = 0
    last_backup: BackupInfo | None = None
    last_drill: DrillInfo | None = None
    last_run_id: str | None = None
    """A run after the plan's that selected the queue manager and made no plan of it (it failed before planning, or
    is on its way): the last run, whose state and outcome follow. None: the last run is the plan's."""
    run_state: str | None = None
    """Airflow's state of the run (queued, running, success, failed); None when Airflow's DB was not read or does not
    have the run."""
    outcome: str | None = None
    outcome_from: OutcomeFrom | None = None
    run_note: str | None = None
    """The whole run's note (or outcome line) where `outcome` is the queue manager's own."""
    asp_forecast: AspForecast | None = None
    """The forecast of the ASP holding its receivers (mqjournal.forecast), without its history."""
    light: Light = Light(color="green", reasons=[])
    plan: PlannedQueueManager | None = Field(None, exclude=True, repr=False)
    """The plan's row of it as read (explain.py reads it)."""

    @property
    def asp_used_percent(self) -> float | None:
        if not self.asp_capacity_bytes or self.asp_available_bytes is None:
            return None
        return 100.0 * (self.asp_capacity_bytes - self.asp_available_bytes) / self.asp_capacity_bytes

    @property
    def severity(self) -> int:
        return SEVERITY[self.light.color]


class RunPoint(BaseModel):
    """One run of one queue manager, for the charts: what its snapshot, plan and catalog records say."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    at: datetime | None
    receivers_online: int | None = None
    bytes_online: int | None = None
    oldest_needed_age_seconds: int | None = None
    saved: int = 0
    deleted: int = 0


class ReceiverRow(BaseModel):
    """One receiver as WRKJRNRCV and Navigator for i list it, with the plan's action and where its backup is."""

    model_config = ConfigDict(frozen=True)

    name: str
    library: str
    chain_position: int | None = None
    status: str | None = None
    attached_at: datetime | None = None
    detached_at: datetime | None = None
    saved_at: datetime | None = None
    size_bytes: int | None = None
    first_sequence: int | None = None
    last_sequence: int | None = None
    action: str | None = None
    reason: str | None = None
    explanation: str | None = None
    backups: list[str] = Field(default_factory=list)
    deleted_at: datetime | None = None
    """When the catalog records it deleted, after the plan's collection: it is not online any more."""


class QueueManagerPage(BaseModel):
    """Everything the queue manager page shows."""

    model_config = ConfigDict(frozen=True)

    row: QueueManagerRow
    history: list[RunPoint]
    receivers: list[ReceiverRow]
    alert_lines: list[str]
    recovery_conf: dict[str, str]
    # Why AMQJRNINF, AMQ7460, AMQ7462 and the oldest needed receiver name different receivers (pointwords.py).
    points_explained: str | None = None
    asp_forecast: AspForecast | None = None
    """The forecast of the ASP holding its receivers, with the collections it was fitted to (the chart's)."""


# --- reading the plans -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanRun:
    """One maintenance run's plan folder, with its `queue_managers` rows."""

    run_id: str
    folder: DataPath
    as_of: datetime | None
    queue_managers: tuple[PlannedQueueManager, ...]

    @property
    def at(self) -> datetime:
        """When the run planned (summary.json's as_of, else its newest collection, else the folder's time)."""
        if self.as_of is not None:
            return self.as_of
        collected = [q.collected_at for q in self.queue_managers]
        if collected:
            return max(collected)
        return datetime.fromtimestamp(modified(self.folder), UTC)


def read_rows(
    dataset: DataPath, model: type[Row], *, filters: list[tuple[str, str, Any]] | None = None
) -> list[Row] | None:
    """A plan dataset's rows, None when there is none (yet) or it cannot be read. pyarrow skips files whose names
    start with '_' or '.', so a Spark job still writing (its _temporary/) shows nothing half-written."""
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    if not dataset.is_dir():
        return None
    source, filesystem = arrow_source(dataset)
    try:
        rows = pq.read_table(source, filesystem=filesystem, filters=filters).to_pylist()
        return [model.model_validate(row) for row in rows]
    except (OSError, ValueError, pa.ArrowException) as exc:  # pydantic's ValidationError is a ValueError
        log.warning("%s left out of the fleet view: %s", dataset, exc)
        return None


def plan_runs(settings: Settings, *, newest: int = HISTORY_RUNS) -> list[PlanRun]:
    """The newest `newest` plans under the data folder, oldest first."""
    root = settings.plan_dir("-").parent
    runs = []
    folders: list[DataPath] = sorted(root.glob("run_id=*"), key=lambda p: p.name) if root.is_dir() else []
    for folder in folders:
        rows = read_rows(folder / "queue_managers", PlannedQueueManager)
        if rows is None:
            continue
        run_id = next((q.run_id for q in rows if q.run_id), folder.name.removeprefix("run_id="))
        runs.append(PlanRun(run_id, folder, _summary_as_of(folder / "summary.json"), tuple(rows)))
    runs.sort(key=lambda run: run.at)
    return runs[-newest:]


def _summary_as_of(path: DataPath) -> datetime | None:
    try:
        return _aware(datetime.fromisoformat(json.loads(path.read_text(encoding="utf-8"))["as_of"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def newest_plans(runs: Iterable[PlanRun]) -> dict[QueueManagerRef, tuple[PlanRun, PlannedQueueManager]]:
    """Per queue manager, the newest plan that has it (a run can be narrowed to some hosts and queue managers)."""
    newest: dict[QueueManagerRef, tuple[PlanRun, PlannedQueueManager]] = {}
    for run in runs:  # oldest first: a newer run replaces an older one
        for q in run.queue_managers:
            newest[q.ref] = (run, q)
    return newest


def run_receivers(run: PlanRun, host: str | None = None, library: str | None = None) -> list[PlannedReceiver]:
    """The run's receivers (of one queue manager with `host` and `library`), in chain order."""
    filters = [("host", "=", host), ("qmgr_library", "=", library)] if host is not None else None
    return in_chain_order(read_rows(run.folder / "receivers", PlannedReceiver, filters=filters) or [])


def snapshot_of(settings: Settings, run_id: str, host: str, library: str) -> Snapshot | None:
    """The queue manager's snapshot of one run, None when it is missing or unreadable."""
    path = settings.snapshot_dir(run_id) / f"{host}__{library}.jsonl"
    try:
        found = [s for s in read_snapshots(path) if s.host == host and s.qmgr_library == library]
    except (OSError, ValueError) as exc:
        if path.exists():
            log.warning("%s left out of the fleet view: %s", path, exc)
        return None
    return found[-1] if found else None


def report_outcome(settings: Settings, run_id: str) -> str | None:
    """The report's outcome line ("approved by admin: 114 receivers deleted", "dry run: ..."), None without one."""
    try:
        text = settings.report_file(run_id).read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        words = line.strip().lstrip("#*-> ").replace("**", "").replace("__", "")
        if words.lower().startswith("outcome:"):
            return words.split(":", 1)[1].strip() or None
    return None


QUIET = "nothing to do: nothing saved, deleted or alerted"
"""A queue manager the run report counts among those with nothing to do, in the report's words."""


def report_statuses(settings: Settings, run_id: str) -> dict[str, str]:
    """Each queue manager's own outcome in the run report, by QueueManagerRef.key: the line under its heading
    (`## host/QMGR (library LIB)`: "declined at the approval gate: nothing was deleted", "36 receivers deleted, 87.3
    MB freed"), or QUIET for those the report lists as having nothing to do. Empty without a report."""
    try:
        lines = [line.strip() for line in settings.report_file(run_id).read_text(encoding="utf-8").splitlines()]
    except OSError:
        return {}
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        heading = _QM_HEADING.match(line)
        if heading:
            status = next((t for t in lines[i + 1 :] if t), "")
            if status and not status.startswith("#"):
                key = f"{heading['label']}/{heading['library']}"
                found[key] = status.replace("\\*", "*").replace("\\\\", "\\")
        elif line.startswith("Nothing saved, deleted or alerted on "):
            named = line.split(": ", 1)[-1].rstrip(".")
            for key in named.split(" and ")[0].split(", "):
                found.setdefault(key.strip(), QUIET)
    return found


_QM_HEADING = re.compile(r"^## (?P<label>[^/\s]+/\S+) \(library (?P<library>[^)\s]+)\)$")


# --- the catalog -------------------------------------------------------------------------------------------------


def open_catalog(url: str) -> Catalog | None:
    """The backup catalog to read, None when there is none yet (a SQLite file no run has written: opening it would
    create it) or it cannot be opened."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    local = parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:")
    if local and not Path(str(parsed.database)).exists():
        return None
    try:
        return Catalog(url)
    except CatalogUnavailable as exc:
        log.warning("the fleet view shows no backups: %s", exc)
        return None


@dataclass(frozen=True)
class Backups:
    """What the catalog knows of one queue manager."""

    receivers: tuple[CatalogedReceiver, ...] = ()  # with their saves not discarded by backup expiry
    stored: tuple[StoredObject, ...] = ()
    removed_from_host: frozenset[str] = frozenset()  # save files ("LIB/NAME") deleted after the store verified them
    saves: tuple[SaveRecord, ...] = ()  # every save ever recorded, discarded or not: the history
    deletions: tuple[DeletionRecord, ...] = ()  # every deletion (with `history`), else those since `deleted_since`
    drills: tuple[DrillRecord, ...] = ()  # the restore drills of the queue manager's copies

    def newest(self) -> BackupInfo | None:
        """The newest verified backup: a copy in the store, else a save file on the partition."""
        if self.stored:
            copy = max(self.stored, key=lambda s: s.verified_at)
            return BackupInfo(at=copy.verified_at, where="backup store", detail=f"{copy.save_file_path}: {copy.key}")
        saves = [s for r in self.receivers for s in r.saves]
        if saves:
            save = max(saves, key=lambda s: s.verified_at)
            return BackupInfo(
                at=save.verified_at,
                where="save file on the partition",
                detail=f"{save.save_file_library}/{save.save_file}",
            )
        return None

    def of_receiver(self, name: str, library: str, attached_at: datetime | None) -> list[str]:
        """Where the receiver's backups are: each verified save file (and whether it is still on the partition),
        each copy in the backup store. With `attached_at`, only that incarnation of the name (names wrap)."""
        where = []
        for cataloged in self.receivers:
            if cataloged.name != name or cataloged.library != library:
                continue
            if attached_at is not None and _aware(attached_at) != cataloged.attached_at:
                continue
            for save in cataloged.saves:
                path = f"{save.save_file_library}/{save.save_file}"
                gone = " (removed from the partition)" if path in self.removed_from_host else ""
                where.append(f"save file {path}{gone}")
        for copy in self.stored:
            if copy.holds(library, name, _aware(attached_at) if attached_at else None):
                where.append(f"backup store: {copy.key}")
        return list(dict.fromkeys(where))


def backups_of(
    catalog: Catalog | None,
    host: str,
    qmgr: str,
    library: str,
    *,
    history: bool = False,
    deleted_since: datetime | None = None,
) -> Backups:
    """The catalog's records of one queue manager (with `history`, also every save and deletion by run; else the
    deletions at or after `deleted_since`, if given)."""
    if catalog is None:
        return Backups()
    try:
        if history:
            deletions = catalog.deletions_for(host, library)
        elif deleted_since is not None:
            deletions = catalog.deletions_for(host, library, since=deleted_since)
        else:
            deletions = []
        return Backups(
            receivers=tuple(catalog.receivers(host, library)),
            stored=tuple(catalog.stored_objects(host, qmgr)),
            removed_from_host=frozenset(catalog.removed_from_host(host)),
            saves=tuple(catalog.saves_for(host, library)) if history else (),
            deletions=tuple(deletions),
            drills=tuple(catalog.drills(host=host, qmgr=qmgr)),
        )
    except CatalogUnavailable as exc:
        log.warning("the fleet view shows no backups of %s/%s: %s", host, qmgr, exc)
        return Backups()


# --- the fleet overview ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FleetEntry:
    """A row of the fleet overview, with the snapshot and the catalog's records it was made from (the metrics
    exporter's figures come from the same reads)."""

    row: QueueManagerRow
    snapshot: Snapshot | None
    backups: Backups


def fleet(
    settings: Settings,
    catalog: Catalog | None,
    *,
    now: datetime | None = None,
    airflow: RunLookup = no_airflow,
    later: LaterRuns = no_later_runs,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> list[QueueManagerRow]:
    """One row per host and queue manager that any plan has, from its newest plan; sorted by host, queue manager.
    `airflow` is asked once, for every run the rows show, and `later` once for the runs after them. `forecasts`:
    the ASP forecasts, when the caller has read them (else read here)."""
    entries = fleet_entries(settings, catalog, now=now, airflow=airflow, later=later, forecasts=forecasts)
    return [e.row for e in entries]


def fleet_entries(
    settings: Settings,
    catalog: Catalog | None,
    *,
    now: datetime | None = None,
    airflow: RunLookup = no_airflow,
    later: LaterRuns = no_later_runs,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> list[FleetEntry]:
    """`fleet`'s rows with the snapshot and catalog records each was made from (its deletions those since the plan),
    in the same order."""
    newest = newest_plans(plan_runs(settings))
    runs_of = RunsOf(settings, list(dict.fromkeys(run.run_id for run, _ in newest.values())), airflow, later)
    return ibmi_entries(settings, catalog, newest, runs_of, now=now or datetime.now(UTC), forecasts=forecasts)


def ibmi_entries(
    settings: Settings,
    catalog: Catalog | None,
    newest: Mapping[QueueManagerRef, tuple[PlanRun, PlannedQueueManager]],
    runs_of: RunsOf,
    *,
    now: datetime,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> list[FleetEntry]:
    """The rows of the queue managers of `newest` (newest_plans), sorted by host, queue manager; `runs_of` knows
    their runs (fleetrows asks Airflow once for both platforms' runs)."""
    by_run: dict[str, list[QueueManagerRef]] = defaultdict(list)
    runs: dict[str, PlanRun] = {}
    for ref, (run, _) in newest.items():
        by_run[run.run_id].append(ref)
        runs[run.run_id] = run
    planned: dict[QueueManagerRef, list[PlannedReceiver]] = defaultdict(list)
    for run_id, refs in by_run.items():
        wanted = set(refs)
        for r in run_receivers(runs[run_id]):
            if r.ref in wanted:
                planned[r.ref].append(r)
    forecasts = asp_forecasts(settings) if forecasts is None else forecasts
    entries = []
    for ref, (run, q) in newest.items():
        snapshot = snapshot_of(settings, run.run_id, ref.host, ref.library)
        q = with_after_plan_alerts(q, snapshot, forecasts)
        backups = backups_of(catalog, ref.host, ref.qmgr, ref.library, deleted_since=_aware(q.collected_at))
        online = _online(planned.get(ref, []), backups.deletions, q)
        row = _row(run, q, snapshot, online, backups, runs_of(run.run_id, q), now, forecasts)
        entries.append(FleetEntry(row, snapshot, backups))
    return sorted(entries, key=lambda e: (e.row.host, e.row.qmgr))


def with_after_plan_alerts(
    q: PlannedQueueManager, snapshot: Snapshot | None, forecasts: Mapping[AspKey, AspForecast]
) -> PlannedQueueManager:
    """The plan's row with the alerts raised after the plan job, by the rules the run's summarize step adds them
    with: ASP_FULL_SOON from the ASP forecast, QMGR_CANNOT_START from the collection."""
    [q] = forecast.with_forecast_alerts([q], forecasts, POLICY)
    [q] = with_cannot_start_alerts([q], {(q.host, q.qmgr_library): snapshot} if snapshot is not None else {})
    return q


def asp_forecasts(settings: Settings) -> dict[AspKey, AspForecast]:
    """Each ASP's forecast from the data folder's snapshot history (mqjournal.forecast), by the fleet view's
    policy; none when the history cannot be read."""
    try:
        return forecast.read_forecasts(settings.snapshots, POLICY)
    except OSError as exc:
        log.warning("the fleet view shows no ASP forecasts: %s", exc)
        return {}


class RunsOf:
    """Each queue manager's last run: its plan's run, or a later run that selected it (RunsOf asks Airflow once for
    the plans' runs and once for the runs after them, whatever the number of rows)."""

    def __init__(self, settings: Settings, run_ids: list[str], airflow: RunLookup, later: LaterRuns) -> None:
        self._settings = settings
        self._known = airflow(run_ids) if run_ids else {}
        self._later = later(run_ids) if run_ids else []
        self._reports: dict[str, tuple[str | None, dict[str, str]]] = {}

    def __call__(self, plan_run: str, q: PlannedQueueManager) -> tuple[str, LastRun]:
        return self.of(plan_run, q.host, q.qmgr, q.ref.key)

    def of(self, plan_run: str, host: str, qmgr: str, report_key: str | None) -> tuple[str, LastRun]:
        """The last run of `qmgr` on `host` whose newest plan is `plan_run`, and what the fleet view says of it;
        `report_key` names the queue manager's own section in a run report (None: the report has none)."""
        newer = newer_run(host, qmgr, self._known.get(plan_run), self._later)
        run_id, run = (newer.run_id, newer) if newer else (plan_run, self._known.get(plan_run))
        if run_id not in self._reports:  # one read of a run's report for all its queue managers
            self._reports[run_id] = (report_outcome(self._settings, run_id), report_statuses(self._settings, run_id))
        outcome, statuses = self._reports[run_id]
        return run_id, last_run(outcome, run, statuses.get(report_key) if report_key else None)


@dataclass(frozen=True)
class Online:
    """A queue manager's receivers online: the plan's, less the freed ones and those deleted since its collection."""

    count: int
    bytes: int
    deleted: int = 0
    deleted_bytes: int = 0
    last_deleted_at: datetime | None = None
    deleted_names: frozenset[tuple[str, str]] = frozenset()  # (receiver, library)


def _online(
    receivers: Iterable[PlannedReceiver], deletions: Iterable[DeletionRecord], q: PlannedQueueManager
) -> Online:
    """Every receiver of the plan but the freed ones, whose storage is gone until a restore, and those the catalog
    records deleted after the plan's collection: the plan is what the host had then, the catalog what mqjournal did
    since. A deletion is matched by name, library and attach time (names wrap: an earlier receiver of the same name
    is another receiver); a plan without attach times matches by name and library."""
    collected = _aware(q.collected_at)
    gone: dict[tuple[str, str], list[DeletionRecord]] = defaultdict(list)
    for d in deletions:
        if d.deleted_at >= collected:
            gone[(d.receiver, d.library)].append(d)
    count = size = deleted = deleted_bytes = 0
    last: datetime | None = None
    names: set[tuple[str, str]] = set()
    for r in receivers:
        if r.status == ReceiverStatus.FREED:
            continue
        library = r.library or q.qmgr_library
        match = [
            d
            for d in gone.get((r.receiver, library), [])
            if r.attached_at is None or d.attached_at == _aware(r.attached_at)
        ]
        if match:
            deleted += 1
            deleted_bytes += r.size_bytes
            names.add((r.receiver, library))
            last = max([d.deleted_at for d in match] + ([last] if last else []))
            continue
        count += 1
        size += r.size_bytes
    return Online(count, size, deleted, deleted_bytes, last, frozenset(names))


def _row(
    run: PlanRun,
    q: PlannedQueueManager,
    snapshot: Snapshot | None,
    online: Online,
    backups: Backups,
    last: tuple[str, LastRun],
    now: datetime,
    forecasts: Mapping[AspKey, AspForecast],
) -> QueueManagerRow:
    def plan_or_snapshot(value: int | None, column: str) -> int | None:
        return value if value is not None else getattr(snapshot, column, None)

    offset = q.utc_offset_minutes
    if offset is None and snapshot is not None:
        delta = snapshot.collected_at.utcoffset()
        offset = int(delta.total_seconds() // 60) if delta is not None else None
    values: dict[str, Any] = {
        "host": q.host,
        "qmgr": q.qmgr,
        "library": q.qmgr_library,
        "run_id": run.run_id,
        "collected_at": q.collected_at,
        "utc_offset_minutes": offset,
        "receivers_online": online.count,
        "bytes_online": online.bytes,
        "deleted_since_plan": online.deleted,
        "bytes_deleted_since_plan": online.deleted_bytes,
        "last_deleted_at": online.last_deleted_at,
        "asp_number": plan_or_snapshot(q.asp_number, "asp_number"),
        "asp_capacity_bytes": plan_or_snapshot(q.asp_capacity_bytes, "asp_capacity_bytes"),
        "asp_available_bytes": plan_or_snapshot(q.asp_available_bytes, "asp_available_bytes"),
        "oldest_needed": q.oldest_needed,
        "oldest_needed_age_seconds": q.oldest_needed_age_seconds,
        "holding_point": str(q.holding_point) if q.holding_point else None,
        "holding_point_at": q.holding_point_at,
        "holding_point_age_seconds": q.holding_point_age_seconds,
        "damaged_objects": _damaged(q, snapshot),
        "recovery_points": q.recovery_points,
        "blocked": q.blocked,
        "block_reason": q.block_reason,
        "alerts": [str(code) for code in q.alerts],
        "receivers_to_save": q.receivers_to_save,
        "receivers_to_delete": q.receivers_to_delete,
        "bytes_to_delete": q.bytes_to_delete,
        "last_backup": backups.newest(),
        "last_drill": last_drill(backups.drills),
        "last_run_id": last[0] if last[0] != run.run_id else None,
        "run_state": last[1].state,
        "outcome": last[1].outcome,
        "outcome_from": last[1].outcome_from,
        "run_note": last[1].run_note,
        "plan": q,
    }
    asp = values["asp_number"]
    found = forecasts.get(AspKey(q.host, asp)) if asp is not None else None
    if found is not None:
        values["asp_forecast"] = found.model_copy(update={"history": []})
    row = QueueManagerRow.model_validate(values)
    return row.model_copy(update={"light": traffic_light(row, now)})


def _damaged(q: PlannedQueueManager, snapshot: Snapshot | None) -> list[str]:
    """The damaged objects as the plan lists them, else as the snapshot's AMQ7472 reports name them."""
    if q.damaged_objects:
        return list(q.damaged_objects)
    objects = getattr(snapshot, "damaged_objects", None) or []
    return [f"{o.object} ({o.object_type})" for o in objects]


def traffic_light(row: QueueManagerRow, now: datetime) -> Light:
    """Red: blocked, an alert of RED_ALERTS, the ASP at least 90% full, a last restore drill that failed. Amber: any
    other alert, the ASP at least 75% full, a last run Airflow says failed (or, where Airflow's DB is not read, a run
    without its report), no collection for over 8 days. Green otherwise. Each reason is said.

    A failed run is amber, not red: it asks for a look at the run, while what MQ needs is judged by the plan's
    alerts and blocks, red on their own; what it left undone costs space, and the ASP and threshold reasons turn the
    light red when space runs short. A queued or running run is no reason: its plan, which the light sums up, is
    already there, and it has no outcome yet.

    Which point holds the oldest needed receiver is no reason by itself: right after a forced checkpoint the three
    agree, and one held for long raises the planner's STARTUP_POINT_OLD or MEDIA_POINT_OLD (its policy's limit)."""
    red: list[str] = []
    amber: list[str] = []
    if row.blocked:
        red.append(f"blocked, nothing is deleted: {row.block_reason or 'see the plan'}")
    for code in row.alerts:
        (red if code in RED_ALERTS else amber).append(f"{code}: {alert_text(code)}")
    used = row.asp_used_percent
    if used is not None and used >= ASP_RED_PERCENT:
        red.append(f"ASP {row.asp_number if row.asp_number is not None else '?'} is {used:.0f}% full")
    elif used is not None and used >= ASP_AMBER_PERCENT:
        amber.append(f"ASP {row.asp_number if row.asp_number is not None else '?'} is {used:.0f}% full")
    if row.last_drill is not None and row.last_drill.failed:
        # A copy that does not restore is a backup that is not there: a restore counting on it would stop.
        red.append(
            f"the last restore drill ({row.last_drill.at:%Y-%m-%d}) failed: {', '.join(row.last_drill.failed)} "
            "do not restore what the catalog says"
        )
    amber += run_reasons(row.run_state, row.outcome, row.collected_at, now)
    return light_of(red, amber)


def run_reasons(state: str | None, outcome: str | None, collected_at: datetime | None, now: datetime) -> list[str]:
    """The amber reasons of the last run and the collection, alike on both platforms: a run Airflow says failed, a
    run without its report where Airflow's state is not known, no collection for over 8 days."""
    amber = []
    if state == "failed":
        amber.append("the last run failed" + (f": {outcome}" if outcome else ""))
    elif state is None and outcome is None:
        amber.append("the last run has no report: still running, or it failed")
    if collected_at is not None and now - collected_at > STALE_AFTER:
        amber.append(f"not collected since {collected_at:%Y-%m-%d}")
    return amber


def light_of(red: list[str], amber: list[str]) -> Light:
    """Red with any red reason, else amber with any amber one, else green; the red reasons first."""
    color: Color = "red" if red else "amber" if amber else "green"
    return Light(color=color, reasons=red + amber)


# --- a queue manager page ----------------------------------------------------------------------------------------


def queue_manager(
    settings: Settings,
    catalog: Catalog | None,
    host: str,
    library: str,
    *,
    now: datetime | None = None,
    airflow: RunLookup = no_airflow,
    later: LaterRuns = no_later_runs,
) -> QueueManagerPage | None:
    """The queue manager page's data, None when no plan has the queue manager."""
    now = now or datetime.now(UTC)
    runs = plan_runs(settings)
    # The page's address names the queue manager by host and library: its name alone can live on two hosts.
    newest = next((v for ref, v in newest_plans(runs).items() if (ref.host, ref.library) == (host, library)), None)
    if newest is None:
        return None
    run, q = newest
    backups = backups_of(catalog, host, q.qmgr, library, history=True)
    snapshot = snapshot_of(settings, run.run_id, host, library)
    receivers = run_receivers(run, host, library)
    forecasts = asp_forecasts(settings)
    q = with_after_plan_alerts(q, snapshot, forecasts)
    online = _online(receivers, backups.deletions, q)
    last = RunsOf(settings, [run.run_id], airflow, later)(run.run_id, q)
    row = _row(run, q, snapshot, online, backups, last, now, forecasts)
    # The on-call alert comes first, in its own words (the missing receivers, the restore), and its values fill the
    # recovery form: the restore it needs, kind included.
    stuck = cannot_start(snapshot) if snapshot is not None else None
    lines = [line for line in alert_lines(q) if stuck is None or not line.startswith(f"{Alert.QMGR_CANNOT_START}:")]
    return QueueManagerPage(
        row=row,
        history=history(settings, runs, backups, host, library),
        receivers=receiver_rows(receivers, snapshot, backups, q, online),
        alert_lines=([stuck.text] if stuck else []) + lines,
        recovery_conf=stuck.recovery_conf() if stuck else recovery_conf(row),
        points_explained=points_sentence(snapshot, q.oldest_needed) if snapshot is not None else None,
        asp_forecast=forecasts.get(AspKey(host, row.asp_number)) if row.asp_number is not None else None,
    )


def history(settings: Settings, runs: Iterable[PlanRun], backups: Backups, host: str, library: str) -> list[RunPoint]:
    """One point per run that collected or planned the queue manager, oldest first: receivers online from the
    snapshot, the oldest needed entry's age from the plan, receivers saved and deleted from the catalog."""
    snapshots = {s.run_id: s for s in snapshots_of(settings.snapshots, host, library, newest_runs=HISTORY_RUNS)}
    planned = {run.run_id: q for run in runs for q in run.queue_managers if (q.host, q.qmgr_library) == (host, library)}
    saved: dict[str, set[tuple[str, datetime]]] = defaultdict(set)
    for save in backups.saves:
        saved[save.run_id].add((save.receiver, save.attached_at))
    deleted: dict[str, int] = defaultdict(int)
    for deletion in backups.deletions:
        deleted[deletion.run_id] += 1
    points = []
    for run_id in dict.fromkeys([*snapshots, *planned]):
        snapshot, q = snapshots.get(run_id), planned.get(run_id)
        at = snapshot.collected_at if snapshot else q.collected_at if q else None
        mine = (
            [r for r in snapshot.receivers if r.library == library and r.status != ReceiverStatus.FREED]
            if snapshot
            else []
        )
        points.append(
            RunPoint(
                run_id=run_id,
                at=_aware(at) if at else None,
                receivers_online=len(mine) if snapshot else None,
                bytes_online=sum(r.size_bytes for r in mine) if snapshot else None,
                oldest_needed_age_seconds=q.oldest_needed_age_seconds if q else None,
                saved=len(saved.get(run_id, ())),
                deleted=deleted.get(run_id, 0),
            )
        )
    points.sort(key=lambda p: p.at or datetime.min.replace(tzinfo=UTC))
    return points[-HISTORY_RUNS:]


def receiver_rows(
    receivers: Iterable[PlannedReceiver],
    snapshot: Snapshot | None,
    backups: Backups,
    q: PlannedQueueManager,
    online: Online | None = None,
) -> list[ReceiverRow]:
    """The plan's receivers in chain order, with the snapshot's attach and detach times and sequence range where the
    plan lacks them, the catalog's backups, why each has its action (explain.py, where it is installed), and when
    the catalog records it deleted since the plan's collection (from `online`)."""
    seen = {r.name: r for r in snapshot.receivers} if snapshot else {}
    explain = explainer()
    collected = _aware(q.collected_at)
    deleted_at = {
        (d.receiver, d.library, d.attached_at): d.deleted_at for d in backups.deletions if d.deleted_at >= collected
    }
    gone = online.deleted_names if online is not None else frozenset()
    rows = []
    for r in receivers:
        name = r.receiver
        live = seen.get(name)

        def value(column: str, r: PlannedReceiver = r, live: Any = live) -> Any:
            found = getattr(r, column)
            return found if found is not None else getattr(live, column, None)

        attached = value("attached_at")
        library = r.library or q.qmgr_library
        rows.append(
            ReceiverRow(
                name=name,
                library=library,
                chain_position=r.chain_position,
                status=r.status,
                attached_at=_aware(attached) if attached else None,
                detached_at=_aware(value("detached_at")) if value("detached_at") else None,
                saved_at=_aware(value("saved_at")) if value("saved_at") else None,
                size_bytes=r.size_bytes,
                first_sequence=_int(value("first_sequence")),
                last_sequence=_int(value("last_sequence")),
                action=str(r.action),
                reason=str(r.reason),
                explanation=explain.explanation(r, q) if explain is not None else None,
                backups=backups.of_receiver(name, library, attached),
                deleted_at=_deleted_at(deleted_at, name, library, attached) if (name, library) in gone else None,
            )
        )
    return rows


def alert_lines(q: PlannedQueueManager) -> list[str]:
    """`CODE: what it means and what to do` per alert of the plan (explain.py's words with the evidence, where it
    is installed; else the vocabulary's sentence)."""
    explain = explainer()
    if explain is not None:
        return list(explain.alert_explanations(q))
    return [f"{code}: {alert_text(code)}" for code in q.alerts]


def recovery_conf(row: QueueManagerRow) -> dict[str, str]:
    """What to enter in the recovery DAG's trigger form for this queue manager: host and queue manager, and for a
    damaged object the media recovery of it (kind, object, RCRMQMOBJ object type)."""
    conf = {"host": row.host, "qmgr": row.qmgr}
    explain = explainer()
    damaged = explain.damaged_objects(row.plan) if explain is not None and row.plan and row.plan.damaged_objects else []
    if damaged:
        name, object_type, _ = damaged[0]
        conf |= {"kind": "media", "object": name, "object_type": object_type}
    elif row.damaged_objects:
        conf |= {"kind": "media", "object": row.damaged_objects[0].split(" ")[0]}
    elif row.holding_point == "AMQ7462":
        conf["kind"] = "media"
    return conf


def _deleted_at(
    deleted: Mapping[tuple[str, str, datetime], datetime], name: str, library: str, attached: datetime | None
) -> datetime | None:
    if attached is not None:
        return deleted.get((name, library, _aware(attached)))
    return max((at for (n, lib, _), at in deleted.items() if (n, lib) == (name, library)), default=None)


# --- small helpers -----------------------------------------------------------------------------------------------


def explainer() -> ModuleType | None:
    """mqjournal.explain (the words for a plan's reasons and alerts), None on an installation without it."""
    try:
        return importlib.import_module("mqjournal.explain")
    except ImportError as exc:
        log.debug("no mqjournal.explain: %s", exc)
        return None


def _aware(moment: datetime) -> datetime:
    """Parquet gives timestamps back naive in UTC, or with a UTC zone; snapshots carry the partition's offset."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _int(value: Any) -> int | None:
    """Sequence numbers come as int (snapshots) or Decimal (the plan's DECIMAL(38,0) columns)."""
    return int(value) if value is not None else None
