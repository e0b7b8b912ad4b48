"""The run's outcome as its note in the grid ("approved by admin: 114 deleted, 389 MB freed", "rejected by admin:
nothing deleted", "dry run ..."), so that a run is told apart without opening it.

Tasks cannot write a run's note (the Task SDK has no call for it), so the report task writes the line beside the
report (`Settings.note_file`) and this listener, which Airflow calls where the run's state changes (the scheduler,
or `dag.test()`), puts it on the run when it ends. A note a person wrote is never replaced.
"""

from __future__ import annotations

import logging
from typing import Any

from airflow.listeners import hookimpl
from sqlalchemy.orm import object_session

from mqjournal.airflow.settings import settings

log = logging.getLogger(__name__)

NOTED_DAGS = frozenset({"mq_journal_maintenance", "mq_journal_restore_drill"})
MAX_NOTE = 1000  # the UI shows a note as a line: the outcome is one


def outcome_note(dag_id: str, run_id: str) -> str | None:
    """The line the run's report task left, or None (another DAG, or the report did not run)."""
    if dag_id not in NOTED_DAGS:
        return None
    s = settings()
    path = s.drill_note_file(run_id) if dag_id == "mq_journal_restore_drill" else s.note_file(run_id)
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8").strip()[:MAX_NOTE] or None


def _note(dag_run: Any) -> None:
    try:
        text = outcome_note(dag_run.dag_id, dag_run.run_id)
        if not text:
            return
        if object_session(dag_run) is not None:
            # The scheduler's run, in its transaction (which holds the run's row): the note is written with it.
            _set(dag_run, text)
            return
        # dag.test() hands listeners a detached run; its own transaction is committed by then.
        from airflow.models.dagrun import DagRun
        from airflow.utils.session import create_session

        with create_session() as session:
            _set(session.query(DagRun).filter_by(dag_id=dag_run.dag_id, run_id=dag_run.run_id).one(), text)
    except Exception:  # a note is a convenience: it must never disturb the scheduler
        log.exception("could not set the note of %s %s", dag_run.dag_id, dag_run.run_id)


def _set(dag_run: Any, text: str) -> None:
    if not dag_run.note:  # a note a person wrote stays
        dag_run.note = text


@hookimpl
def on_dag_run_success(dag_run: Any, msg: str) -> None:
    _note(dag_run)


@hookimpl
def on_dag_run_failed(dag_run: Any, msg: str) -> None:
    _note(dag_run)
