"""The fleet overview's rows of both platforms in one list: the partitions' queue managers (data.py) and the Linux
hosts' (linuxdata.py), each in its platform's own terms, sorted together by host then queue manager (#32).

The plans are listed once and Airflow is asked once for the runs of every row, whatever the platform.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from mqjournal.catalog import Catalog
from mqjournal.fleetview import data, linuxdata
from mqjournal.forecast import AspForecast, AspKey
from mqjournal.settings import Settings

AnyRow = data.QueueManagerRow | linuxdata.LinuxQueueManagerRow
"""A row of the overview: its `platform` says which ("ibmi" or "linux", as the fleet file writes it)."""

Entry = data.FleetEntry | linuxdata.LinuxFleetEntry


def fleet_entries(
    settings: Settings,
    catalog: Catalog | None,
    *,
    now: datetime | None = None,
    airflow: data.RunLookup = data.no_airflow,
    later: data.LaterRuns = data.no_later_runs,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> list[Entry]:
    """One entry per host and queue manager that any plan has, from its newest plan, with what it was made from;
    sorted by host, queue manager. `forecasts`: the ASP forecasts, when the caller has read them."""
    now = now or datetime.now(UTC)
    runs = data.plan_runs(settings)
    ibmi = data.newest_plans(runs)
    linux = linuxdata.newest_linux_plans(runs)
    run_ids = [run.run_id for run, _ in ibmi.values()] + [run.run_id for run, _ in linux.values()]
    runs_of = data.RunsOf(settings, list(dict.fromkeys(run_ids)), airflow, later)
    entries: list[Entry] = [
        *data.ibmi_entries(settings, catalog, ibmi, runs_of, now=now, forecasts=forecasts),
        *linuxdata.linux_entries(settings, catalog, linux, runs_of, now=now),
    ]
    return sorted(entries, key=lambda e: (e.row.host, e.row.qmgr))


def fleet(
    settings: Settings,
    catalog: Catalog | None,
    *,
    now: datetime | None = None,
    airflow: data.RunLookup = data.no_airflow,
    later: data.LaterRuns = data.no_later_runs,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> list[AnyRow]:
    """`fleet_entries`' rows."""
    entries = fleet_entries(settings, catalog, now=now, airflow=airflow, later=later, forecasts=forecasts)
    return [e.row for e in entries]
