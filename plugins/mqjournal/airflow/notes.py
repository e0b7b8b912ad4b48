"""The run's outcome as its note in the grid ("approved by admin: 114 deleted, 389 MB freed", "rejected by admin:
nothing deleted", "dry run ...", and what a failed run left undone), so that a run is told apart without opening
it, with a link to the run's report page at its end. The maintenance, recovery, backup expiry and restore drill DAGs
are noted.

Tasks cannot write a run's note (the Task SDK has no call for it), so the report task writes the line beside the
report (`Settings.note_file`) and this listener, which Airflow calls where the run's state changes (the scheduler,
or `dag.test()`), puts it on the run when it ends. A note a person wrote is never replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from airflow.listeners import hookimpl
from sqlalchemy.orm import object_session

from mqjournal.airflow.settings import Settings, settings
from mqjournal.datafolder import DataPath
from mqjournal.reportlinks import REPORT_DAGS, valid_run_id, with_report_link

log = logging.getLogger(__name__)

MAX_NOTE = 1000  # the UI's note editor warns past this: the outcome is one line


def _note_files(s: Settings) -> dict[str, Callable[[str], DataPath]]:
    """Each noted DAG's outcome line, by run id: the file its report task writes beside the report."""
    return {
        "mq_journal_maintenance": s.note_file,
        "mq_journal_restore_drill": s.drill_note_file,
        "mq_journal_recovery": s.recovery_note_file,
        "mq_journal_backup_expiry": s.expiry_note_file,
    }


NOTED_DAGS = frozenset(REPORT_DAGS)


def outcome_note(dag_id: str, run_id: str) -> str | None:
    """The line the run's report task left, ending with the link to the run's report page (mqjournal.reportlinks);
    None for another DAG, or when the report did not run."""
    if dag_id not in NOTED_DAGS:
        return None
    path = _note_files(settings())[dag_id](run_id)
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8").strip()
    if not text:
        return None
    if valid_run_id(run_id):
        return with_report_link(text, dag_id, run_id, MAX_NOTE)
    return text[:MAX_NOTE]


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
