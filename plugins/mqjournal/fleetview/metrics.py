"""The fleet's figures for Prometheus, at /mqjournal/metrics on the Airflow API server: per host and queue manager,
what the fleet view shows, as gauges named in the style of IBM's MQ exporter for Prometheus
(ibm-messaging/mq-metric-samples: `ibmmq_qmgr_...`), so they sit beside its series in the same dashboards.

The figures are read at each scrape with the fleet view's own readers (`data.fleet`, `data.snapshot_of`,
`data.backups_of`): a scrape and a look at the fleet view at the same moment say the same. Nothing here decides,
writes or talks to a partition. A figure that is not known (no snapshot, no ASP read, no backup yet) has no series,
never a made-up 0: an alert rule on it then sees the absence (`absent(...)`), not a healthy value.

Every series carries IBM's labels of a queue manager, `qmgr` and `platform` (`OS400`: what IBM's exporter reports
for a queue manager on IBM i, MQPL_OS400 without its prefix), and ours: `host` (the partition, as the fleet file
names it) and `library` (QMxxx), since a queue manager's name alone can live on two hosts.

The queue managers with linear logs (#32: Linux, AIX, Windows) have series of their own, `ibmmq_qmgr_linear_log_...`
(IBM's exporter has `ibmmq_qmgr_log_...` of its own, from DISPLAY QMSTATUS), with `qmgr`, `platform` and `host`:
IBM's exporter writes the queue manager's MQIA_PLATFORM as MQItoString("PL", ...) less its `MQPL_` prefix
(ibm-messaging/mq-metric-samples, cmd/mq_prometheus/exporter.go), and a queue manager on Linux answers MQPL_UNIX
(3, cmqc.h; the same repository's cp4i/README.md logs "Platform is UNIX" for one), as does one on AIX, and one on
Windows MQPL_WINDOWS_NT (11): `UNIX` or `WINDOWS_NT`. Such a queue manager has no library.

Who may scrape: Prometheus with the bearer token of the setting `metrics_token` (MQJOURNAL_METRICS_TOKEN), or an
Airflow login that may read the maintenance DAG, as for the fleet view's pages. docs/monitoring.md says why a
Prometheus endpoint rather than Airflow's own metrics, and what each series means.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric

from mqjournal.catalog import Catalog
from mqjournal.fleetview import data, fleetrows, linuxdata
from mqjournal.settings import Settings
from mqjournal.snapshot import RecoveryPoint, Snapshot

PATH = "/metrics"
"""The route under the fleet view's mount: /mqjournal/metrics (docker/prometheus/prometheus.yml scrapes it)."""

PLATFORM = "OS400"
"""IBM's exporter's `platform` label for a queue manager on IBM i."""

LABELS = ("qmgr", "platform", "host", "library")

LINUX_PLATFORM = "UNIX"
"""IBM's exporter's `platform` label for a queue manager on Linux or AIX (MQPL_UNIX)."""

HOST_PLATFORMS: Mapping[str, str] = MappingProxyType(
    {"linux": LINUX_PLATFORM, "aix": LINUX_PLATFORM, "windows": "WINDOWS_NT"}
)
"""IBM's exporter's `platform` label by the fleet file's platform of the host: MQPL_UNIX (3) for Linux and AIX alike,
MQPL_WINDOWS_NT (11) for Windows, each less its `MQPL_` prefix (cmqc.h)."""

LINUX_LABELS = ("qmgr", "platform", "host")

RUN_STATES = ("queued", "running", "success", "failed", "unknown")
"""Airflow's states of a DAG run, and `unknown` where Airflow's DB was not read or does not have the run."""


@dataclass(frozen=True)
class Figures:
    """One queue manager as the fleet view reads it: its row, the snapshot its newest plan was made from, and what
    the backup catalog records of it."""

    row: data.QueueManagerRow
    snapshot: Snapshot | None
    backups: data.Backups

    @property
    def labels(self) -> list[str]:
        return [self.row.qmgr, PLATFORM, self.row.host, self.row.library]


@dataclass(frozen=True)
class LinuxFigures:
    """One Linux queue manager as the fleet view reads it (its row holds every figure: the newest plan, the snapshot
    it was made from, the catalog's copies of its extents), and the time of the scrape (copy ages are counted to it)."""

    row: linuxdata.LinuxQueueManagerRow
    now: datetime

    @property
    def labels(self) -> list[str]:
        return [self.row.qmgr, HOST_PLATFORMS[self.row.host_platform], self.row.host]


def read_figures(
    settings: Settings,
    catalog: Catalog | None,
    *,
    airflow: data.RunLookup = data.no_airflow,
    later: data.LaterRuns = data.no_later_runs,
    now: datetime | None = None,
) -> list[Figures | LinuxFigures]:
    """Each queue manager of the fleet view, with its snapshot and catalog records (as the fleet view read them), in
    the fleet view's order."""
    now = now or datetime.now(UTC)
    found: list[Figures | LinuxFigures] = []
    for e in fleetrows.fleet_entries(settings, catalog, now=now, airflow=airflow, later=later):
        if isinstance(e, linuxdata.LinuxFleetEntry):
            found.append(LinuxFigures(row=e.row, now=now))
        else:
            found.append(Figures(row=e.row, snapshot=e.snapshot, backups=e.backups))
    return found


# --- the figures, one function each -------------------------------------------------------------------------------


def saved_bytes(f: Figures) -> int:
    """Bytes of the receivers the catalog holds a verified save of whose save file backup expiry has not discarded:
    what the saves can bring back, whether the receiver is still online or was deleted since."""
    return sum(r.size_bytes for r in f.backups.receivers if r.saves)


def store_bytes(f: Figures) -> int:
    """Bytes of the queue manager's save files in the backup store whose copy is proven (the catalog's reader leaves
    out copies a re-read or a restore drill found wrong)."""
    return sum(s.size_bytes for s in f.backups.stored)


def point_age(f: Figures, point: RecoveryPoint | None) -> float | None:
    """Seconds from a recovery point to the collection, right after its forced checkpoint: the age the planner's
    STARTUP_POINT_OLD and MEDIA_POINT_OLD judge."""
    if f.snapshot is None or point is None:
        return None
    return (f.snapshot.collected_at - point.at).total_seconds()


def point_time(point: RecoveryPoint | None) -> float | None:
    return point.at.timestamp() if point is not None else None


def startup_point(f: Figures) -> RecoveryPoint | None:
    return f.snapshot.startup_recovery if f.snapshot is not None else None


def media_point(f: Figures) -> RecoveryPoint | None:
    return f.snapshot.media_recovery if f.snapshot is not None else None


def last_verified_backups(f: Figures) -> dict[str, datetime]:
    """The newest verified backup per location: `backup_store` (a proven copy off the partition) and `partition` (a
    verified save file still there, lost with the partition's disk); a location without one is left out."""
    found: dict[str, datetime] = {}
    if f.backups.stored:
        found["backup_store"] = max(s.verified_at for s in f.backups.stored)
    gone = f.backups.removed_from_host
    saves = [
        s.verified_at
        for r in f.backups.receivers
        for s in r.saves
        if f"{s.save_file_library}/{s.save_file}" not in gone
    ]
    if saves:
        found["partition"] = max(saves)
    return found


@dataclass(frozen=True)
class Gauge:
    """A gauge with the queue manager's labels only."""

    name: str
    documentation: str
    value: Callable[[Figures], float | int | None]


def _timestamp(moment: datetime | None) -> float | None:
    return moment.timestamp() if moment is not None else None


GAUGES: tuple[Gauge, ...] = (
    Gauge(
        "ibmmq_qmgr_journal_receivers_online",
        "Journal receivers on the partition: every receiver of the newest plan but the freed ones",
        lambda f: f.row.receivers_online,
    ),
    Gauge(
        "ibmmq_qmgr_journal_receivers_online_bytes",
        "Bytes of those receivers on the ASP",
        lambda f: f.row.bytes_online,
    ),
    Gauge(
        "ibmmq_qmgr_journal_receivers_saved_bytes",
        "Bytes of the receivers the backup catalog holds a verified, unexpired save of (online or deleted since)",
        saved_bytes,
    ),
    Gauge(
        "ibmmq_qmgr_journal_backup_store_bytes",
        "Bytes of the queue manager's save files proven in the backup store",
        store_bytes,
    ),
    Gauge(
        "ibmmq_qmgr_journal_startup_recovery_point_age_seconds",
        "Age of the startup recovery point (AMQ7460) at the collection, right after the forced checkpoint",
        lambda f: point_age(f, startup_point(f)),
    ),
    Gauge(
        "ibmmq_qmgr_journal_media_recovery_point_age_seconds",
        "Age of the media recovery point (AMQ7462) at the collection, right after the forced checkpoint",
        lambda f: point_age(f, media_point(f)),
    ),
    Gauge(
        "ibmmq_qmgr_journal_startup_recovery_point_timestamp_seconds",
        "When the startup recovery point (AMQ7460) is, in Unix seconds: time() minus it is its age now",
        lambda f: point_time(startup_point(f)),
    ),
    Gauge(
        "ibmmq_qmgr_journal_media_recovery_point_timestamp_seconds",
        "When the media recovery point (AMQ7462) is, in Unix seconds: time() minus it is its age now",
        lambda f: point_time(media_point(f)),
    ),
    Gauge(
        "ibmmq_qmgr_journal_oldest_needed_age_seconds",
        "Age of AMQJRNINF's oldest needed entry at the planning time, as the newest plan says",
        lambda f: f.row.oldest_needed_age_seconds,
    ),
    Gauge(
        "ibmmq_qmgr_journal_collected_timestamp_seconds",
        "When the snapshot of the newest plan was collected, in Unix seconds",
        lambda f: _timestamp(f.row.collected_at),
    ),
    Gauge(
        "ibmmq_qmgr_journal_severity",
        "The fleet view's light of the queue manager: 0 green, 1 amber, 2 red",
        lambda f: f.row.severity,
    ),
    Gauge(
        "ibmmq_qmgr_journal_blocked",
        "1 when the newest plan deletes nothing of the queue manager (a block reason applies), else 0",
        lambda f: int(f.row.blocked),
    ),
)


@dataclass(frozen=True)
class LinuxGauge:
    """A gauge of the Linux queue managers, with their labels only."""

    name: str
    documentation: str
    value: Callable[[LinuxFigures], float | int | None]


def copy_age(f: LinuxFigures) -> float | None:
    """Seconds from the newest proven copy of any of the queue manager's extents to the scrape."""
    newest = f.row.last_backup
    return (f.now - newest.at).total_seconds() if newest is not None else None


LINUX_GAUGES: tuple[LinuxGauge, ...] = (
    LinuxGauge(
        "ibmmq_qmgr_linear_log_restart_behind_extents",
        "Extents RECLOG is behind CURRLOG at the collection (CURRLOG - RECLOG across the 9,999,999 wrap): the "
        "extents restart recovery reads",
        lambda f: f.row.restart_behind,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_media_behind_extents",
        "Extents MEDIALOG is behind CURRLOG at the collection (CURRLOG - MEDIALOG across the wrap): the extents media "
        "recovery reads",
        lambda f: f.row.media_behind,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_extents",
        "Extent files (S and R) in the log directory at the collection of the newest plan",
        lambda f: f.row.extents_in_log,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_bytes",
        "Bytes of those extents in the log directory",
        lambda f: f.row.bytes_in_log,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_extents_to_archive",
        "Extents the newest plan copies into the backup store",
        lambda f: len(f.row.to_archive),
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_extents_to_release",
        "Extents the newest plan releases once approved (SET LOG ARCHIVED in Archive mode, deleted in Manual mode)",
        lambda f: len(f.row.to_release),
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_release_bytes",
        "Bytes releasing those extents frees in the log directory",
        lambda f: f.row.bytes_to_release,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_extents_awaiting_copy",
        "Extents the newest plan archives of which the backup catalog holds no proven copy",
        lambda f: len(f.row.awaiting_copy),
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_last_copy_age_seconds",
        "Age at the scrape of the newest proven copy of any of the queue manager's extents in the backup store",
        copy_age,
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_collected_timestamp_seconds",
        "When the snapshot of the newest plan was collected, in Unix seconds",
        lambda f: f.row.collected_at.timestamp(),
    ),
    LinuxGauge(
        "ibmmq_qmgr_linear_log_severity",
        "The fleet view's light of the Linux queue manager: 0 green, 1 amber, 2 red",
        lambda f: f.row.severity,
    ),
)


def _labelled(name: str, documentation: str, *more: str) -> GaugeMetricFamily:
    """A gauge of the queue manager's labels and `more` of its own."""
    return GaugeMetricFamily(name, documentation, labels=[*LABELS, *more])


def linux_families(figures: Iterable[LinuxFigures]) -> list[Metric]:
    """The Linux queue managers' families: every family, with one series per queue manager that has the figure."""
    figures = list(figures)
    found = _gauge_families(
        LINUX_GAUGES, figures, lambda name, doc: GaugeMetricFamily(name, doc, labels=list(LINUX_LABELS))
    )
    alert = GaugeMetricFamily(
        "ibmmq_qmgr_linear_log_alert",
        "1 for each alert of the Linux queue manager: the newest plan's (restart_stuck, media_stuck, not_planned), "
        "and QMGR_CANNOT_START from its collection",
        labels=[*LINUX_LABELS, "alert"],
    )
    run_state = GaugeMetricFamily(
        "ibmmq_qmgr_linear_log_last_run_state",
        "1 for the state Airflow gives the Linux queue manager's last maintenance run, 0 for the others (unknown: "
        "Airflow does not have the run)",
        labels=[*LINUX_LABELS, "state"],
    )
    for f in figures:
        for code in f.row.alerts:
            alert.add_metric([*f.labels, code], 1.0)
        state = f.row.run_state if f.row.run_state in RUN_STATES else "unknown"
        for candidate in RUN_STATES:
            run_state.add_metric([*f.labels, candidate], 1.0 if candidate == state else 0.0)
    return [*found, alert, run_state]


def families(figures: Iterable[Figures | LinuxFigures]) -> list[Metric]:
    """The metric families of the queue managers: every family, with one series per queue manager that has the
    figure; the IBM i families, then the Linux ones."""
    figures = list(figures)
    linux = [f for f in figures if isinstance(f, LinuxFigures)]
    return [*_ibmi_families([f for f in figures if isinstance(f, Figures)]), *linux_families(linux)]


def _gauge_families(
    gauges: Iterable[Any], figures: list[Any], family_of: Callable[[str, str], GaugeMetricFamily]
) -> list[Metric]:
    """A family per gauge, with one series per queue manager that has the figure (none where it is not known)."""
    found: list[Metric] = []
    for gauge in gauges:
        family = family_of(gauge.name, gauge.documentation)
        for f in figures:
            value = gauge.value(f)
            if value is not None:
                family.add_metric(f.labels, float(value))
        found.append(family)
    return found


def _ibmi_families(figures: list[Figures]) -> list[Metric]:
    found = _gauge_families(GAUGES, figures, _labelled)

    backup = _labelled(
        "ibmmq_qmgr_journal_last_verified_backup_timestamp_seconds",
        "When the newest verified backup of the queue manager's receivers was verified, in Unix seconds, per "
        "location: backup_store (a proven copy off the partition) or partition (a save file on it)",
        "location",
    )
    asp_capacity = _labelled(
        "ibmmq_qmgr_journal_asp_capacity_bytes",
        "Capacity of the ASP that holds the queue manager's receivers (QSYS2.ASP_INFO), at the collection",
        "asp",
    )
    asp_free = _labelled(
        "ibmmq_qmgr_journal_asp_free_bytes",
        "Free space of that ASP at the collection",
        "asp",
    )
    asp_limit_days = _labelled(
        "ibmmq_qmgr_journal_asp_limit_days",
        "Days from the newest collection until that ASP reaches the policy's limit (asp_limit_percent) at its fitted "
        "growth when nothing is freed (mqjournal.forecast); 0 when it has; no series without a date",
        "asp",
    )
    asp_full_days = _labelled(
        "ibmmq_qmgr_journal_asp_full_days",
        "Days from the newest collection until that ASP is full at the same growth; no series without a date",
        "asp",
    )
    run_state = _labelled(
        "ibmmq_qmgr_journal_last_run_state",
        "1 for the state Airflow gives the queue manager's last maintenance run, 0 for the others (unknown: Airflow "
        "does not have the run)",
        "state",
    )
    run_info = _labelled(
        "ibmmq_qmgr_journal_last_run_info",
        "The queue manager's last maintenance run: its run id and outcome (its note in the grid, else its report)",
        "run_id",
        "outcome",
    )
    alert = _labelled(
        "ibmmq_qmgr_journal_alert",
        "1 for each alert the newest plan raises for the queue manager (docs/planning-rules.md)",
        "alert",
    )
    for f in figures:
        row = f.row
        for location, at in last_verified_backups(f).items():
            backup.add_metric([*f.labels, location], at.timestamp())
        if row.asp_capacity_bytes is not None and row.asp_available_bytes is not None:
            asp = "" if row.asp_number is None else str(row.asp_number)
            asp_capacity.add_metric([*f.labels, asp], float(row.asp_capacity_bytes))
            asp_free.add_metric([*f.labels, asp], float(row.asp_available_bytes))
        asp_forecast = row.asp_forecast
        if asp_forecast is not None:
            days_to = ((asp_limit_days, asp_forecast.days_to_limit), (asp_full_days, asp_forecast.days_to_full))
            for family, days in days_to:
                if days is not None:
                    family.add_metric([*f.labels, str(asp_forecast.asp_number)], days)
        state = row.run_state if row.run_state in RUN_STATES else "unknown"
        for candidate in RUN_STATES:
            run_state.add_metric([*f.labels, candidate], 1.0 if candidate == state else 0.0)
        run_info.add_metric([*f.labels, row.last_run_id or row.run_id, row.outcome or ""], 1.0)
        for code in row.alerts:
            alert.add_metric([*f.labels, code], 1.0)
    return [*found, backup, asp_capacity, asp_free, asp_limit_days, asp_full_days, run_state, run_info, alert]


class _Scrape:
    """What prometheus_client's `generate_latest` reads: an object whose `collect()` gives the families."""

    def __init__(self, found: list[Metric]) -> None:
        self._found = found

    def collect(self) -> Iterator[Metric]:
        return iter(self._found)


def exposition(figures: Iterable[Figures | LinuxFigures]) -> bytes:
    """The figures in Prometheus's text format."""
    return generate_latest(_Scrape(families(figures)))


# --- the endpoint ------------------------------------------------------------------------------------------------

Login = Callable[[Request], Awaitable[Any]]


async def airflow_login(request: Request) -> Any:
    """Airflow's login as the fleet view's pages check it (`app.airflow_viewer`): the UI's cookie or a bearer JWT,
    and read access to the maintenance DAG. Raises HTTPException 401 or 403."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import DagDetails
    from airflow.api_fastapi.core_api.security import bearer_scheme, get_user

    user = await get_user(request, None, await bearer_scheme(request))
    if not get_auth_manager().is_authorized_dag(method="GET", details=DagDetails(id=data.MAINTENANCE_DAG), user=user):
        raise HTTPException(403, f"{user.get_name()} may not read the DAG {data.MAINTENANCE_DAG}")
    return user


def scrape_access(current_settings: Callable[[], Settings], login: Login = airflow_login) -> Callable[..., Any]:
    """The endpoint's guard: the scrape token (constant-time comparison), else `login`."""

    async def allowed(request: Request) -> None:
        token = current_settings().metrics_token
        scheme, _, presented = request.headers.get("authorization", "").partition(" ")
        if (
            token is not None
            and scheme.lower() == "bearer"
            and presented
            and hmac.compare_digest(presented.strip().encode(), token.get_secret_value().encode())
        ):
            return
        await login(request)

    return allowed


def router(
    *,
    current_settings: Callable[[], Settings],
    catalog_of: Callable[[str], Catalog | None],
    dag_runs: data.RunLookup,
    later_runs: data.LaterRuns,
    login: Login = airflow_login,
) -> APIRouter:
    """The /metrics route of the fleet view's app, read with the app's settings, catalogs and Airflow lookups."""
    routes = APIRouter()

    @routes.get(PATH, include_in_schema=False, dependencies=[Depends(scrape_access(current_settings, login))])
    def metrics() -> Response:
        s = current_settings()
        figures = read_figures(s, catalog_of(s.catalog_url), airflow=dag_runs, later=later_runs)
        # The classic text format: every Prometheus 2 and 3, and OpenTelemetry's prometheus receiver, read it (the
        # names are plain ASCII, so it is what generate_latest writes).
        return Response(exposition(figures), media_type=CONTENT_TYPE_PLAIN_0_0_4, headers={"Cache-Control": "no-store"})

    return routes
