"""A run's report as a page of the plugin (`/mqjournal/runs/<dag>/<run id>/report`, mqjournal.reportlinks): the
maintenance run's self-contained HTML report as its report task wrote it, the other DAGs' Markdown reports as text.

The run id comes from the URL: it is checked before any path is made of it, the file is the settings' own for that
run (no separator survives `safe()`), and a file is served only when it names that very run id, so two run ids that
`safe()` writes alike never show each other's report. Everything this page writes is escaped; the maintenance
report escapes its own values (runreport.render_html).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from mqjournal.reportlinks import REPORT_DAGS, valid_run_id
from mqjournal.settings import Settings

HEADERS = {
    # A report is a document, never a program: no script, frame or fetch of its own, whatever a value in it says.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "X-Content-Type-Options": "nosniff",
}


@dataclass(frozen=True)
class ReportPage:
    status: int
    html: str


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>body {{ font: 14px/1.45 system-ui, sans-serif; margin: 2rem "
        "auto; max-width: 72rem; padding: 0 1rem; color: #1d2329; } pre { white-space: pre-wrap; }</style>\n"
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _missing(title: str, why: str) -> ReportPage:
    return ReportPage(404, _page(title, f"<h1>{html.escape(title)}</h1>\n<p>{html.escape(why)}</p>"))


def report_page(settings: Settings, dag_id: str, run_id: str) -> ReportPage:
    """The page of the run's report: 200 with it, 404 (saying why) when there is none yet, or the DAG writes none,
    or the run id is not one Airflow accepts."""
    title = f"{dag_id} {run_id}"
    if dag_id not in REPORT_DAGS:
        return _missing("No such report", f"{dag_id} writes no report; these do: {', '.join(REPORT_DAGS)}")
    if not valid_run_id(run_id):
        return _missing("No such report", "not a run id Airflow accepts (letters, digits and _ . ~ : + - only)")
    path = settings.report_page_file(dag_id, run_id)
    text = path.read_text(encoding="utf-8") if path is not None and path.is_file() else None
    if text is None:
        return _missing(
            f"No report yet: {title}",
            "The run's report is written when its report task runs, at the end of the run: until then, and for a "
            "run that never reached it, there is none. The run's task logs say what it did.",
        )
    if path is not None and path.suffix == ".html":
        # The maintenance report's title is its DAG and run id, escaped: another run id that safe() writes alike
        # has another title.
        if f"<title>{html.escape(title)}</title>" not in text:
            return _missing(f"No report yet: {title}", "the report file here is another run's")
        return ReportPage(200, text)
    if text.partition("\n")[0].strip() != f"# {title}":  # how each DAG's Markdown report begins
        return _missing(f"No report yet: {title}", "the report file here is another run's")
    return ReportPage(200, _page(title, f"<pre>{html.escape(text)}</pre>"))
