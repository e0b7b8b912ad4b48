"""Where the Airflow UI finds a run's report: a page per run that the mqjournal plugin serves, behind Airflow's login
(mqjournal.fleetview.app, `/mqjournal/runs/<dag>/<run id>/report`), and the links to it from the run's note, the
approval gate's body and the fleet view.

Run ids are typed by whoever triggers a run, so a run id is accepted only as Airflow's default
`[scheduler] allowed_run_id_pattern` allows it, at most 250 characters (Airflow's column), and is quoted whole in
every URL; the file it names is Settings' (`safe()`: no separator survives), and the page served must name that run
id, so two ids that `safe()` writes alike never show each other's report.
"""

from __future__ import annotations

import re
from urllib.parse import quote

RUN_ID = re.compile(r"[A-Za-z0-9_.~:+-]{1,250}")
"""Airflow's default allowed_run_id_pattern, bounded as its run_id column is."""

MOUNT = "/mqjournal"
"""Where the Airflow API server mounts the fleet view's app (plugins/mqjournal_fleetview_plugin.py)."""

REPORT_DAGS = ("mq_journal_maintenance", "mq_journal_recovery", "mq_journal_backup_expiry", "mq_journal_restore_drill")
"""The DAGs whose runs write a report the plugin serves."""

REPORT_LINK_TEXT = "run report"
"""The words of the link a note ends with: the fleet view, which shows a note as the run's outcome, leaves it out."""


def valid_run_id(run_id: str) -> bool:
    return RUN_ID.fullmatch(run_id) is not None


def report_path(dag_id: str, run_id: str) -> str:
    """The report page's path under the plugin's mount, its parts quoted whole (`:` and `+` included)."""
    return f"runs/{quote(dag_id, safe='')}/{quote(run_id, safe='')}/report"


def report_href(dag_id: str, run_id: str) -> str:
    """The page's address relative to the Airflow UI's `<base href>`, where the run's note and the gate's body are
    rendered: it resolves under `[api] base_url`'s path, whether or not one is set."""
    return f"{MOUNT.lstrip('/')}/{report_path(dag_id, run_id)}"


def report_link_markdown(dag_id: str, run_id: str, text: str = REPORT_LINK_TEXT) -> str:
    return f"[{text}]({report_href(dag_id, run_id)})"


def with_report_link(note: str, dag_id: str, run_id: str, limit: int) -> str:
    """The run's note ending with the link to its report, the note's text shortened (never the link) to fit
    `limit` characters."""
    tail = f" ({report_link_markdown(dag_id, run_id)})"
    room = limit - len(tail)
    text = note if len(note) <= room else note[: max(room - 3, 0)].rstrip() + "..."
    return text + tail


def without_report_link(note: str | None) -> str | None:
    """A note as the outcome it says, without the report link `with_report_link` put at its end (any other link, a
    person's, stays)."""
    if note is None:
        return None
    found = re.search(rf" \(\[{re.escape(REPORT_LINK_TEXT)}\]\({re.escape(MOUNT.lstrip('/'))}/runs/[^)\s]*\)\)$", note)
    return note[: found.start()] if found else note
