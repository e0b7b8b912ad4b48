"""The maintenance runs as Airflow knows them: each run's state and note, read from Airflow's metadata DB.

The fleet view runs inside the Airflow API server, so this uses the server's own ORM session
(`airflow.utils.session.create_session`) and models (`DagRun`, and `DagRunNote`, which holds `DagRun.note` in
Airflow 3). It is the fleet view's only read of Airflow's DB, kept apart so that `data` stays pure and testable
without Airflow: `data.fleet(..., airflow=dag_runs)`.

When the DB cannot be read (Airflow not installed, no metadata DB configured in this process, a DB not migrated or
down) the answer is no runs, and the fleet view shows the reports' outcome lines: the page never fails on it. The
first such failure in a process is logged (a warning when a configured DB failed, debug when there is none here);
after it, debug only, since the view reads anew on every request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from mqjournal.fleetview.data import MAINTENANCE_DAG, AirflowRun
from mqjournal.reportlinks import without_report_link

log = logging.getLogger(__name__)
T = TypeVar("T")


class NoAirflowDB(Exception):
    """This process has no Airflow metadata DB to read (not a failure of one)."""


class _Once:
    """Whether a failure to read was logged yet in this process."""

    told = False


def dag_runs(run_ids: Collection[str]) -> dict[str, AirflowRun]:
    """The runs of the maintenance DAG among `run_ids` that Airflow's DB has, by run id: one query for all of them
    (the note joined in, not loaded per run). Never raises."""
    return _guarded(lambda: _read(sorted(set(run_ids))), {}) if run_ids else {}


LATER_RUNS = 200
"""At most this many runs after the plans' are read: enough for weeks of runs that planned nothing."""


def later_runs(run_ids: Collection[str]) -> list[AirflowRun]:
    """The maintenance DAG's runs after the earliest of `run_ids`, newest first, with their forms (which queue
    managers each selected): a run that failed before planning a queue manager is still its last run. Never
    raises."""
    return _guarded(lambda: _read_later(sorted(set(run_ids))), []) if run_ids else []


def _guarded(read: Callable[[], T], empty: T) -> T:
    """`read()`, or `empty` when Airflow's DB cannot be read: the page shows the reports' outcomes instead."""
    try:
        return read()
    except (ImportError, NoAirflowDB) as exc:
        _tell(logging.DEBUG, "no Airflow metadata DB to read here (%s): the outcomes are the run reports'", exc)
    except Exception as exc:  # whatever the DB or its driver raises
        _tell(logging.WARNING, "could not read the runs in Airflow's DB (%s): the outcomes are the run reports'", exc)
    return empty


def _runs_query():
    """The maintenance DAG's runs with what the fleet view shows of each (the note joined in, not loaded per run)."""
    from airflow.models.dagrun import DagRun, DagRunNote
    from sqlalchemy import select

    return (
        select(DagRun.run_id, DagRun.state, DagRunNote.content, DagRun.run_after, DagRun.conf)
        .outerjoin(DagRunNote, DagRunNote.dag_run_id == DagRun.id)
        .where(DagRun.dag_id == MAINTENANCE_DAG)
    )


def _session():
    from airflow import settings as airflow_settings
    from airflow.utils.session import create_session

    engine = airflow_settings.engine
    if engine is None:
        raise NoAirflowDB("Airflow's ORM is not configured in this process")
    if _absent_sqlite_file(engine.url):
        # Connecting would create an empty file where a default configuration points (e.g. ~/airflow/airflow.db).
        raise NoAirflowDB(f"no SQLite file {engine.url.database}")
    return create_session()


def _run(row: Any) -> AirflowRun:
    run_id, state, note, at, conf = row
    return AirflowRun(
        run_id=str(run_id),
        state=_text(state),
        # The outcome the note says: the link to the report it ends with is the page's own (pages.last_run).
        note=without_report_link(_text(note)),
        at=at,
        conf=conf if isinstance(conf, dict) else {},
    )


def _read(run_ids: list[str]) -> dict[str, AirflowRun]:
    from airflow.models.dagrun import DagRun

    with _session() as session:
        rows = session.execute(_runs_query().where(DagRun.run_id.in_(run_ids))).all()
    return {run.run_id: run for run in map(_run, rows)}


def _read_later(run_ids: list[str]) -> list[AirflowRun]:
    from airflow.models.dagrun import DagRun
    from sqlalchemy import func, select

    with _session() as session:
        earliest = session.execute(
            select(func.min(DagRun.run_after)).where(DagRun.dag_id == MAINTENANCE_DAG, DagRun.run_id.in_(run_ids))
        ).scalar()
        if earliest is None:
            return []
        later = _runs_query().where(DagRun.run_after > earliest).order_by(DagRun.run_after.desc()).limit(LATER_RUNS)
        rows = session.execute(later).all()
    return [_run(row) for row in rows]


def _absent_sqlite_file(url: Any) -> bool:
    local = url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")
    return local and not Path(str(url.database)).exists()


def _text(value: object) -> str | None:
    """DagRunState members and plain strings alike, as their value."""
    if value is None:
        return None
    return str(value.value) if isinstance(value, Enum) else str(value)


def _tell(level: int, message: str, exc: BaseException) -> None:
    log.log(logging.DEBUG if _Once.told else level, message, exc)
    _Once.told = True
