"""The fleet view's HTML: the fleet overview and a queue manager page, server-rendered and self-contained.

The overview has both platforms' queue managers in one table, each row in its platform's terms: receivers, ASP and
recovery points for IBM i, extents and log points for Linux (#32); a cell that does not apply to a row's platform
shows "-". Every value from the data folder is escaped. Times are the host's local time with its offset
(mqjournal.timefmt), sizes as the reports write them (mqjournal.sizefmt). Links into Airflow (a run's grid, the
recovery DAG) leave the fleet view's frame for the Airflow UI itself (the few lines of script at the end); without
a frame they are plain links.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from mqjournal import report
from mqjournal.fleetview.charts import Point, Reading, bar_chart, forecast_chart, line_chart
from mqjournal.fleetview.data import (
    MAINTENANCE_DAG,
    POLICY,
    RECOVERY_DAG,
    RED_ALERTS,
    QueueManagerPage,
    QueueManagerRow,
    ReceiverRow,
    RunPoint,
    explainer,
    recovery_conf,
)
from mqjournal.fleetview.fleetrows import AnyRow
from mqjournal.fleetview.linuxdata import LINUX_RED_ALERTS, ExtentRow, LinuxQueueManagerPage, LinuxQueueManagerRow
from mqjournal.forecast import AspForecast, days_text
from mqjournal.linuxmq.cannotstart import listed
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.reportlinks import report_path
from mqjournal.sizefmt import signed_size, size
from mqjournal.timefmt import age, local_time
from mqjournal.vocabulary import alert_text


@dataclass(frozen=True)
class Links:
    """Where the fleet view (`base`, e.g. /mqjournal) and the Airflow UI (`airflow`, e.g. /) are served."""

    base: str
    airflow: str

    def fleet(self, **query: str) -> str:
        return f"{self.base}/" + (f"?{urlencode(query)}" if query else "")

    def queue_manager(self, host: str, library: str) -> str:
        return f"{self.base}/qm/{quote(host, safe='')}/{quote(library, safe='')}"

    def linux_queue_manager(self, host: str, qmgr: str) -> str:
        """A Linux queue manager's page: by host and name (MQ names may hold '/', quoted here)."""
        return f"{self.base}/linux/{quote(host, safe='')}/{quote(qmgr, safe='')}"

    def run(self, run_id: str) -> str:
        """The run in Airflow's grid."""
        return f"{self.airflow}dags/{MAINTENANCE_DAG}/runs/{quote(run_id, safe=':+')}"

    def report(self, run_id: str) -> str:
        """The run's report page, which this app serves (mqjournal.reportlinks)."""
        return f"{self.base}/{report_path(MAINTENANCE_DAG, run_id)}"

    def recovery(self) -> str:
        """The recovery DAG's page, whose Trigger button opens its form. Airflow 3.3's UI takes no form values from
        the URL, so the values to enter are shown next to the link."""
        return f"{self.airflow}dags/{RECOVERY_DAG}"


def e(value: object) -> str:
    return escape("-" if value is None else str(value), quote=True)


def when(moment: datetime | None, row: AnyRow) -> str:
    return local_time(moment, row.utc_offset_minutes)


def short(moment: datetime | None, row: AnyRow) -> str:
    """`24 Nov 04:08` in the partition's local time: a chart's axis label."""
    text = local_time(moment, row.utc_offset_minutes)
    if moment is None:
        return text
    day = datetime.strptime(text[:16], "%Y-%m-%d %H:%M")
    return f"{day.day} {day:%b} {day:%H:%M}"


# --- the page frame ----------------------------------------------------------------------------------------------

STYLE = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --bg: #f6f8fa; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; margin: 0;
       color: #1f2328; background: #fff; }
header { padding: 12px 20px; border-bottom: 1px solid var(--line); background: var(--bg); }
header h1 { font-size: 20px; margin: 0; }
header .sub, .muted { color: var(--muted); }
nav.crumbs a { color: #0969da; text-decoration: none; }
main { padding: 12px 20px 32px; }
a { color: #0969da; }
/* The overview lives in Airflow's plugin frame, narrower than the window: cells wrap, less needed columns fold
   away as it narrows (their numbers stay in the neighbouring cell or on the queue manager page), and what still
   does not fit scrolls inside .table-wrap rather than being cut off. */
.table-wrap { overflow-x: auto; max-width: 100%; }
table.grid { border-collapse: collapse; width: 100%; }
table.grid th, table.grid td { border-bottom: 1px solid var(--line); padding: 4px 6px; text-align: left;
       vertical-align: top; overflow-wrap: anywhere; }
table.grid th { background: var(--bg); position: sticky; top: 0; font-weight: 600; }
table#fleet { font-size: 13px; }
.why.narrow-only { display: none; }
@media (max-width: 1400px) { .wide-only { display: none; } .why.narrow-only { display: block; } }
@media (max-width: 1000px) { .roomy-only { display: none; } }
table.grid th a { color: inherit; text-decoration: none; }
table.grid th.sorted { background: #ddf4ff; }
td.num, th.num { text-align: right; }
.deleted { color: #a40e26; }
.soon { color: #9a6700; font-weight: 600; }
.light { display: inline-block; width: 14px; height: 14px; border-radius: 50%; border: 1px solid #0003;
       vertical-align: middle; }
.light-red { background: #cf222e; } .light-amber { background: #d4a72c; } .light-green { background: #2da44e; }
.alert { display: inline-block; background: #fff8c5; border: 1px solid #d4a72c66; border-radius: 4px;
       padding: 0 4px; margin: 1px 2px 1px 0; font-size: 12px; }
.alert.red { background: #ffebe9; border-color: #cf222e66; }
.state { display: inline-block; border-radius: 9px; padding: 0 6px; margin-left: 4px; font-size: 11px;
       border: 1px solid #0002; background: var(--bg); color: var(--muted); }
.state-success { background: #dafbe1; color: #116329; } .state-failed { background: #ffebe9; color: #a40e26; }
.drill-failed { background: #ffebe9; color: #a40e26; font-weight: 600; padding: 0 4px; border-radius: 4px; }
.drill-not-made { color: #9a6700; }
.state-running, .state-queued { background: #ddf4ff; color: #0550ae; }
.point-name { font-weight: 600; }
.log-point { display: block; white-space: nowrap; }
.platform { white-space: nowrap; }
.why { display: block; color: var(--muted); font-size: 12px; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0 16px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
figure.chart-box { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
figure.chart-box figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart .grid { stroke: #eaeef2; } svg.chart .tick { font-size: 11px; fill: var(--muted); }
svg.chart .legend { font-size: 12px; } svg.chart .empty { fill: var(--muted); }
pre.conf { background: var(--bg); border: 1px solid var(--line); padding: 6px 8px; display: inline-block;
       margin: 4px 0; }
ul.reasons { margin: 4px 0 12px; padding-left: 20px; }
h2 { font-size: 16px; margin: 20px 0 8px; }
a.report { margin-left: 6px; font-size: 12px; }
"""

# Links into Airflow leave the frame the Airflow UI shows this page in. The frame may not navigate the whole window
# (its sandbox has no allow-top-navigation), but it is same-origin: push the URL into the UI's history and let its
# router, which listens to popstate, show the page. Outside a frame the links work as they are.
SCRIPT = """
document.addEventListener("click", function (event) {
  var link = event.target.closest && event.target.closest("a[data-airflow]");
  if (!link || window.top === window || event.button !== 0 || event.ctrlKey || event.metaKey) return;
  try {
    var top = window.top;
    top.history.pushState(null, "", link.getAttribute("href"));
    top.dispatchEvent(new top.PopStateEvent("popstate", { state: null }));
    event.preventDefault();
  } catch (e) { /* not same-origin: the link opens in the frame */ }
});
"""


def page(title: str, crumbs: Sequence[tuple[str, str | None]], body: str, subtitle: str = "") -> str:
    trail = " &rsaquo; ".join(f'<a href="{e(href)}">{e(text)}</a>' if href else e(text) for text, href in crumbs)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>"
        f'<header><nav class="crumbs">{trail}</nav><h1>{e(title)}</h1>'
        + (f'<div class="sub">{subtitle}</div>' if subtitle else "")
        + f"</header><main>{body}</main><script>{SCRIPT}</script></body></html>"
    )


def light(row: AnyRow) -> str:
    reasons = "; ".join(row.light.reasons) or "nothing to look at"
    return (
        f'<span class="light light-{e(row.light.color)}" data-light="{e(row.light.color)}" '
        f'title="{e(reasons)}" aria-label="{e(row.light.color)}: {e(reasons)}"></span>'
    )


def asp(row: QueueManagerRow) -> str:
    """`30% of 200.0 GB` and, under it, `ASP 1, 139.9 GB free` and when it reaches the policy's limit (HTML)."""
    used = row.asp_used_percent
    if used is None:
        return "-"
    number = row.asp_number if row.asp_number is not None else "?"
    return (
        f"{used:.0f}% of {e(size(row.asp_capacity_bytes))}"
        f'<span class="why">ASP {e(number)}, {e(size(row.asp_available_bytes))} free</span>'
        + forecast_line(row.asp_forecast)
    )


def forecast_line(f: AspForecast | None) -> str:
    """`90% in 12 days, full in 15 days` (or why there is no date), for a cell."""
    if f is None:
        return ""
    if f.growth_bytes_per_day is None:
        text, css = "no forecast yet: too few collections", ""
    elif f.days_to_limit is None:
        text, css = "not filling", ""
    else:
        soon = f.days_to_limit <= POLICY.asp_forecast_alert_days
        reached = "reached" if f.days_to_limit <= 0 else f"in {days_text(f.days_to_limit)}"
        text = f"{f.limit_percent:g}% {reached}, full in {days_text(f.days_to_full)}"
        css = " soon" if soon else ""
    return (
        f'<span class="why forecast{css}" data-days-to-limit="{e(_days(f.days_to_limit))}" '
        f'data-days-to-full="{e(_days(f.days_to_full))}">{e(text)}</span>'
    )


def _days(days: float | None) -> str | None:
    return None if days is None else f"{days:.2f}"


def held_by(row: QueueManagerRow) -> str:
    """Which point holds the oldest needed receiver, in the run report's words (report.held_by): right after the
    checkpoint mqjournal forces, `the latest media recovery point (AMQ7462), 4 s old`, which is MQ's normal state;
    only a point older than the policy's recovery_point_alert_hours reads `AMQ7462, 46 h`, in bold, over `since
    <time>`. Then the damaged objects; "-" when the plan does not say."""
    if not row.holding_point or row.plan is None:
        return "-"
    words = report.held_by(row.plan, POLICY)
    old = row.holding_point_age_seconds is not None and (
        row.holding_point_age_seconds > POLICY.recovery_point_alert_age.total_seconds()
    )
    css = "point-name" if old else "point-words"
    text = f'<span class="{css}" data-point="{e(row.holding_point)}">{e(words)}</span>'
    if old and row.holding_point_at is not None:
        text += f'<span class="why">since {e(when(row.holding_point_at, row))}</span>'
    if row.damaged_objects:
        text += f'<span class="why">damaged: {e(", ".join(row.damaged_objects))}</span>'
    return text


def online_bytes(row: QueueManagerRow) -> str:
    """Bytes online, the count under it where its own column is folded away, and the receivers the catalog records
    deleted since the plan (not counted online)."""
    text = f'{e(size(row.bytes_online))}<span class="why narrow-only">{e(row.receivers_online)} receivers</span>'
    return text + deleted_since(row)


def deleted_since(row: QueueManagerRow) -> str:
    if not row.deleted_since_plan:
        return ""
    return (
        f'<span class="why deleted" data-deleted-since-plan="{row.deleted_since_plan}" '
        f'title="the catalog records them deleted after the plan\'s collection">'
        f"{row.deleted_since_plan} deleted since ({e(size(row.bytes_deleted_since_plan))})</span>"
    )


def alerts(codes: Sequence[str]) -> str:
    if not codes:
        return "-"
    return "".join(
        f'<span class="alert{" red" if code in RED_ALERTS else ""}" data-alert="{e(code)}" '
        f'title="{e(alert_text(code))}">{e(code)}</span>'
        for code in codes
    )


def backup(row: AnyRow) -> str:
    if row.last_backup is None:
        return "-"
    return f'{e(when(row.last_backup.at, row))}<span class="why">{e(row.last_backup.where)}</span>'


def drill(row: QueueManagerRow) -> str:
    """The last restore drill: when, how many copies, the outcome; a failed one in the drill-failed class."""
    d = row.last_drill
    if d is None:
        return '<span class="why">never drilled</span>'
    css = {"failed": "drill-failed", "not made": "drill-not-made", "passed": "drill-passed"}[d.outcome]
    detail = f"{d.passed} of {d.copies} passed"
    if d.failed:
        detail += f"; FAILED: {', '.join(d.failed)}"
    if d.not_made:
        detail += f"; not made: {len(d.not_made)}"
    return (
        f'<span class="drill {css}" data-drill="{e(d.outcome)}" title="{e("; ".join(d.problems))}">'
        f'{e(when(d.at, row))}</span><span class="why">{e(d.outcome)}: {e(detail)}</span>'
    )


STATE_TITLE = "the run's state in Airflow"
OUTCOME_FROM = {
    "queue manager": "this queue manager's outcome in the run report",
    "note": "the run's note in Airflow (the whole run)",
    "report": "the run report's outcome line (the whole run)",
}


def last_run(row: AnyRow, links: Links) -> str:
    """The run's time (its link into Airflow's grid, the run's note in its title), Airflow's state of it as a badge
    (none where Airflow's DB is not read), and under them the queue manager's own outcome from the run report, else
    the run's note, else the report's outcome line."""
    state = (
        f'<span class="state state-{e(row.run_state)}" data-state="{e(row.run_state)}" '
        f'title="{e(STATE_TITLE)}">{e(row.run_state)}</span>'
        if row.run_state
        else ""
    )
    if row.outcome_from is not None:
        outcome = (
            f'<span class="why outcome" data-outcome-from="{e(row.outcome_from)}" '
            f'title="{e(OUTCOME_FROM[row.outcome_from])}">{e(row.outcome)}</span>'
        )
    else:
        unfinished = row.run_state in ("queued", "running")
        outcome = f'<span class="why outcome">{"no outcome yet" if unfinished else "no report yet"}</span>'
    run_id = row.last_run_id or row.run_id
    title = run_id + (f" - the run: {row.run_note}" if row.run_note and row.outcome_from == "queue manager" else "")
    if row.last_run_id is not None:  # a later run that made no plan of it: its run id, since it has no collection
        return (
            f'<a data-airflow class="run" href="{e(links.run(row.last_run_id))}" title="{e(title)}">'
            f'{e(row.last_run_id)}</a>{state}{outcome}<span class="why" data-planned-in="{e(row.run_id)}">'
            f"no plan of it: the row shows the plan of {e(row.run_id)}</span>"
        )
    report = f'<a class="report" href="{e(links.report(row.run_id))}" title="{e(row.run_id)}">report</a>'
    return (
        f'<a data-airflow class="run" href="{e(links.run(row.run_id))}" title="{e(title)}">'
        f"{e(when(row.collected_at, row))}</a>{state}{report}{outcome}"
    )


def recovery_link(links: Links, conf: dict[str, str], text: str = "recovery form") -> str:
    return (
        f'<a data-airflow class="recovery" href="{e(links.recovery())}" data-conf="{e(json.dumps(conf))}" '
        f'title="{e("Trigger " + RECOVERY_DAG + " with: " + json.dumps(conf))}">{e(text)}</a>'
    )


def its_plan(row: QueueManagerRow) -> str:
    """The plan's saves and deletes, as the queue manager page's "its plan" says them."""
    return e(f"save {row.receivers_to_save}, delete {row.receivers_to_delete} ({size(row.bytes_to_delete)})")


# --- a Linux queue manager's cells -------------------------------------------------------------------------------

PLATFORM_NAMES = {"ibmi": "IBM i", "linux": "Linux", "aix": "AIX", "windows": "Windows"}


def platform_name(row: AnyRow) -> str:
    """The row's platform in its own terms: IBM i, or the host's (Linux, AIX, Windows) for a linear log's row."""
    return PLATFORM_NAMES[row.host_platform if isinstance(row, LinuxQueueManagerRow) else row.platform]


def platform(row: AnyRow) -> str:
    return f'<span class="platform" data-platform="{e(row.platform)}">{e(platform_name(row))}</span>'


def log_words(row: LinuxQueueManagerRow) -> str:
    """qm.ini's words for the log: `LogManagement Archive`, after the log type when it is not linear."""
    words = f"LogManagement {row.log_management}"
    return words if row.log_type == "LINEAR" else f"{row.log_type.lower()} log, {words}"


def release_words(log_management: str) -> str:
    """How the release step lets an extent go, by LogManagement."""
    if log_management == LogManagement.ARCHIVE.value:
        return "by SET LOG ARCHIVED"
    if log_management == LogManagement.MANUAL.value:
        return "by deleting them"
    return "MQ reuses or deletes them itself"


def linux_alerts(row: LinuxQueueManagerRow) -> str:
    """The alert codes, each with its text (what to do) in its title; red ones in red."""
    if not row.alerts:
        return "-"
    return "".join(
        f'<span class="alert{" red" if code in LINUX_RED_ALERTS else ""}" data-alert="{e(code)}" '
        f'title="{e(row.alert_texts.get(code))}">{e(code)}</span>'
        for code in row.alerts
    )


def log_points(row: LinuxQueueManagerRow) -> str:
    """CURRLOG, RECLOG and MEDIALOG, and ARCHLOG in Archive mode, one a line as DISPLAY QMSTATUS TYPE(LOG) names them,
    with how many extents RECLOG and MEDIALOG are behind CURRLOG; the point that holds the oldest needed extent in
    bold."""
    points: list[tuple[str, str | None, int | None]] = [
        ("CURRLOG", row.current_extent, None),
        ("RECLOG", row.restart_extent, row.restart_behind),
        ("MEDIALOG", row.media_extent, row.media_behind),
    ]
    if row.log_management == LogManagement.ARCHIVE.value:
        points.append(("ARCHLOG", row.archive_extent, None))
    if all(extent is None for _, extent, _ in points):
        return "-"
    holding = (row.held_by or "").split(" and ")
    lines = []
    for name, extent, behind in points:
        if name == "ARCHLOG" and extent is None:
            text = "ARCHLOG blank: none waiting"
        else:
            text = f"{name} {extent or '-'}" + (f", {behind} behind" if behind is not None else "")
        css = "log-point point-name" if name in holding else "log-point"
        lines.append(
            f'<span class="{css}" data-log-point="{name}" data-extent="{e(extent)}" data-behind="{e(behind)}">'
            f"{e(text)}</span>"
        )
    return "".join(lines)


def log_bytes(row: LinuxQueueManagerRow) -> str:
    """Bytes in the log directory, the extents under it where their own column is folded away."""
    return f'{e(size(row.bytes_in_log))}<span class="why narrow-only">{row.extents_in_log} extents</span>'


def linux_plan(row: LinuxQueueManagerRow) -> str:
    """The plan's archives and releases, and how a release lets the extents go."""
    text = e(f"archive {len(row.to_archive)}, release {len(row.to_release)} ({size(row.bytes_to_release)})")
    if row.to_release:
        text += f'<span class="why">{e(release_words(row.log_management))}</span>'
    return (
        f'<span data-to-archive="{len(row.to_archive)}" data-to-release="{len(row.to_release)}" '
        f'data-bytes-to-release="{row.bytes_to_release}">{text}</span>'
    )


def linux_name(row: LinuxQueueManagerRow, links: Links) -> str:
    return (
        f'<a class="qm" href="{e(links.linux_queue_manager(row.host, row.qmgr))}">{e(row.qmgr)}</a>'
        f'<span class="why">{e(log_words(row))}</span>'
    )


# --- the fleet overview ------------------------------------------------------------------------------------------


def _unknown(row: LinuxQueueManagerRow) -> Any:
    return None


def _not_applicable(row: LinuxQueueManagerRow, links: Links) -> str:
    return "-"


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    sort: Callable[[QueueManagerRow], Any]
    cell: Callable[[QueueManagerRow, Links], str]
    css: str = ""
    numeric: bool = False  # sorted by a number: descending first
    fold: str = ""  # "wide-only": folded away in a narrow frame (its number shown in a neighbour); "roomy-only"
    # A Linux row's value and cell: none, and "-", where the column does not apply to Linux.
    linux_sort: Callable[[LinuxQueueManagerRow], Any] = _unknown
    linux_cell: Callable[[LinuxQueueManagerRow, Links], str] = _not_applicable

    @property
    def classes(self) -> str:
        return " ".join(c for c in (self.css, self.fold) if c)

    def sort_value(self, row: AnyRow) -> Any:
        return self.linux_sort(row) if isinstance(row, LinuxQueueManagerRow) else self.sort(row)

    def cell_of(self, row: AnyRow, links: Links) -> str:
        return self.linux_cell(row, links) if isinstance(row, LinuxQueueManagerRow) else self.cell(row, links)


def both(
    key: str,
    title: str,
    sort: Callable[[AnyRow], Any],
    cell: Callable[[AnyRow, Links], str],
    css: str = "",
    numeric: bool = False,
    fold: str = "",
) -> Column:
    """A column alike on both platforms."""
    return Column(key, title, sort, cell, css, numeric, fold, linux_sort=sort, linux_cell=cell)


# The alerts come right after the queue manager: they are what the admin reads first, and the last column is the
# first one a narrow frame hides.
# A Linux row fills the columns in MQ's terms on Linux: its extents and their bytes in the log directory are what is
# online, the older of RECLOG and MEDIALOG is the oldest needed, the log points are what holds it, its newest proven
# copy of an extent is its last verified backup. ASP, age and restore drill do not apply to it.
COLUMNS: tuple[Column, ...] = (
    both("light", "", lambda r: r.severity, lambda r, _: light(r), "", True),
    both("platform", "platform", platform_name, lambda r, _: platform(r), "platform"),
    both("host", "host", lambda r: r.host, lambda r, _: e(r.host)),
    Column(
        "qmgr",
        "queue manager",
        lambda r: r.qmgr,
        lambda r, links: (
            f'<a class="qm" href="{e(links.queue_manager(r.host, r.library))}">{e(r.qmgr)}</a>'
            f'<span class="why">{e(r.library)}</span>'
        ),
        linux_sort=lambda r: r.qmgr,
        linux_cell=linux_name,
    ),
    Column(
        "alerts",
        "alerts",
        lambda r: len(r.alerts),
        lambda r, _: alerts(r.alerts),
        numeric=True,
        linux_sort=lambda r: len(r.alerts),
        linux_cell=lambda r, _: linux_alerts(r),
    ),
    Column(
        "receivers",
        "receivers online",
        lambda r: r.receivers_online,
        lambda r, _: e(r.receivers_online),
        "num",
        True,
        "wide-only",
        linux_sort=lambda r: r.extents_in_log,
        linux_cell=lambda r, _: e(f"{r.extents_in_log} extents"),
    ),
    Column(
        "bytes",
        "bytes online",
        lambda r: r.bytes_online,
        lambda r, _: online_bytes(r),
        "num",
        True,
        linux_sort=lambda r: r.bytes_in_log,
        linux_cell=lambda r, _: log_bytes(r),
    ),
    Column("asp", "ASP use", lambda r: r.asp_used_percent, lambda r, _: asp(r), "num", True),
    Column(
        "oldest",
        "oldest needed",
        lambda r: r.oldest_needed,
        lambda r, _: e(r.oldest_needed),
        linux_sort=lambda r: r.oldest_needed,
        linux_cell=lambda r, _: e(r.oldest_needed),
    ),
    Column(
        "age",
        "its age",
        lambda r: r.oldest_needed_age_seconds,
        lambda r, _: e(age(r.oldest_needed_age_seconds)),
        "num",
        True,
        "roomy-only",
    ),
    Column(
        "held",
        "held by",
        lambda r: r.holding_point,
        lambda r, _: held_by(r),
        linux_sort=lambda r: r.held_by,
        linux_cell=lambda r, _: log_points(r),
    ),
    Column(
        "planned",
        "planned",
        lambda r: r.bytes_to_delete,
        lambda r, _: its_plan(r),
        "",
        True,
        "roomy-only",
        linux_sort=lambda r: r.bytes_to_release,
        linux_cell=lambda r, _: linux_plan(r),
    ),
    both(
        "backup",
        "last verified backup",
        lambda r: r.last_backup.at if r.last_backup else None,
        lambda r, _: backup(r),
        "time",
        True,
        "roomy-only",
    ),
    Column(
        "drill",
        "last restore drill",
        lambda r: r.last_drill.at if r.last_drill else None,
        lambda r, _: drill(r),
        "time",
        True,
        "wide-only",
    ),
    both("run", "last run", lambda r: r.collected_at, last_run, "time", True),
    Column(
        "recovery",
        "",
        lambda r: 0,
        lambda r, links: recovery_link(links, recovery_conf(r)),
        linux_sort=lambda r: 0,
        linux_cell=lambda r, links: recovery_link(links, r.recovery_conf),
    ),
)
SORTABLE = {c.key: c for c in COLUMNS if c.title}


def sort_rows(rows: Sequence[AnyRow], key: str | None, order: str | None) -> list[AnyRow]:
    """By a column (unknown values last, whatever the order, and so a column that does not apply to a platform puts
    its rows last), then host and queue manager; by default the reddest first."""
    ordered = sorted(rows, key=lambda r: (r.host, r.qmgr))
    column = SORTABLE.get(key or "") or COLUMNS[0]
    descending = (order or ("desc" if column.numeric else "asc")) == "desc"
    known = [r for r in ordered if column.sort_value(r) is not None]
    unknown = [r for r in ordered if column.sort_value(r) is None]
    return sorted(known, key=column.sort_value, reverse=descending) + unknown


def fleet_page(
    rows: Sequence[AnyRow],
    links: Links,
    *,
    sort: str | None,
    order: str | None,
    forecasts: Sequence[AspForecast] = (),
) -> str:
    column = SORTABLE.get(sort or "") or COLUMNS[0]
    descending = (order or ("desc" if column.numeric else "asc")) == "desc"
    head = []
    for c in COLUMNS:
        if not c.title and c.key != "light":
            head.append(f'<th class="{c.classes}"></th>')
            continue
        sorted_here = c.key == column.key
        next_order = ("asc" if descending else "desc") if sorted_here else ("desc" if c.numeric else "asc")
        arrow = (" &#9660;" if descending else " &#9650;") if sorted_here else ""
        label = c.title or "&#9679;"
        head.append(
            f'<th class="{c.classes}{" sorted" if sorted_here else ""}" data-col="{c.key}"'
            + (f' aria-sort="{"descending" if descending else "ascending"}"' if sorted_here else "")
            + f'><a href="{e(links.fleet(sort=c.key, order=next_order))}">{label}</a>{arrow}</th>'
        )
    body = []
    for r in sort_rows(rows, column.key, "desc" if descending else "asc"):
        cells = "".join(
            f'<td class="{c.classes}" data-col="{c.key}" data-value="{e(_sort_value(c.sort_value(r)))}">'
            f"{c.cell_of(r, links)}</td>"
            for c in COLUMNS
        )
        library = f' data-library="{e(r.library)}"' if isinstance(r, QueueManagerRow) else ""
        body.append(
            f'<tr data-host="{e(r.host)}" data-qmgr="{e(r.qmgr)}"{library} data-platform="{e(r.platform)}" '
            f'data-light="{e(r.light.color)}">{cells}</tr>'
        )
    if not rows:
        content = (
            "<p>No plan yet: the fleet view shows what the maintenance runs found. Trigger "
            f'<a data-airflow href="{e(links.airflow)}dags/{MAINTENANCE_DAG}">{MAINTENANCE_DAG}</a> '
            "(a dry run is enough) and come back when its plan task has run.</p>"
        )
    else:
        content = (
            '<div class="table-wrap">'
            f'<table id="fleet" class="grid" data-sort="{column.key}" data-order="{"desc" if descending else "asc"}">'
            f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
            '<p class="muted">The light: red when a queue manager is blocked, has an alert MQ cannot live with for '
            "long, or its ASP is at least 90% full; amber for any other alert, an ASP at least 75% full, a last run "
            "that failed (or, without its state from Airflow, one without its report), or no collection for over 8 "
            "days. A Linux queue manager is red when strmqm would fail (an extent restart reads is missing) or RECLOG "
            "or MEDIALOG is stuck; amber when it is not planned, when extents its plan archives have no proven copy in "
            "the backup store, and for its last run and collection as above. Hover over it for the reasons.</p>"
        )
    counts = {color: sum(1 for r in rows if r.light.color == color) for color in ("red", "amber", "green")}
    # Where the data folder is stays out of the page: it is the deployment's business, not the admin's.
    subtitle = f"{len(rows)} queue managers: {counts['red']} red, {counts['amber']} amber, {counts['green']} green"
    return page("MQ journals", [("MQ journals", None)], content + forecast_section(forecasts), subtitle)


def _sort_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


# --- a queue manager page ----------------------------------------------------------------------------------------


def queue_manager_page(p: QueueManagerPage, links: Links) -> str:
    row = p.row
    facts = [
        ("traffic light", f"{light(row)} {e(row.light.color)}"),
        ("receivers online", f"{row.receivers_online} ({e(size(row.bytes_online))})" + deleted_since(row)),
        ("ASP use", asp(row)),
        (
            "oldest needed receiver",
            f"{e(row.oldest_needed)} ({e(age(row.oldest_needed_age_seconds))} old)"
            + (f'<span class="why">{e(_needed_because(row))}</span>' if _needed_because(row) else ""),
        ),
        ("held by", held_by(row)),
        (
            "recovery points",
            e(row.recovery_points)
            + (f'<span class="why" id="points-explained">{e(p.points_explained)}</span>' if p.points_explained else ""),
        ),
        ("blocked", e(f"yes: {row.block_reason}" if row.blocked else "no")),
        (
            "last verified backup",
            backup(row) + (f'<span class="why">{e(row.last_backup.detail)}</span>' if row.last_backup else ""),
        ),
        ("last restore drill", drill(row)),
        ("last run", last_run(row, links)),
        (
            "its plan",
            e(f"save {row.receivers_to_save}, delete {row.receivers_to_delete} ({size(row.bytes_to_delete)})"),
        ),
    ]
    dl = "".join(f'<dt>{e(k)}</dt><dd data-fact="{e(k)}">{v}</dd>' for k, v in facts)
    reasons = "".join(f"<li>{e(r)}</li>" for r in row.light.reasons) or "<li>nothing to look at</li>"
    alert_items = "".join(f"<li>{e(line)}</li>" for line in p.alert_lines) or "<li>none</li>"
    conf = json.dumps(p.recovery_conf)
    recovery = (
        f"<p>If this queue manager needs a restore or a repair: {recovery_link(links, p.recovery_conf, RECOVERY_DAG)} "
        "(its Trigger button opens the form). Enter these values, or paste them into the form's configuration JSON:"
        f'<br><pre class="conf" id="recovery-conf">{e(conf)}</pre></p>'
    )
    body = (
        f'<dl class="facts">{dl}</dl>'
        f'<h2>Why this light</h2><ul class="reasons" id="light-reasons">{reasons}</ul>'
        f'<h2>Alerts</h2><ul class="reasons" id="alerts">{alert_items}</ul>'
        f"<h2>Recovery</h2>{recovery}"
        f'<h2>Over time</h2><div class="charts">{charts(p)}{asp_chart(p.asp_forecast, row)}</div>'
        f"<h2>Receivers (newest plan, {len(p.receivers)})</h2>{receiver_table(p.receivers, row)}"
    )
    crumbs = [("MQ journals", links.fleet()), (row.host, None), (row.qmgr, None)]
    subtitle = (
        f"library {e(row.library)} &middot; collected {e(when(row.collected_at, row))} &middot; run {e(row.run_id)}"
    )
    return page(f"{row.qmgr} on {row.host}", crumbs, body, subtitle)


def _needed_because(row: QueueManagerRow) -> str:
    explain = explainer()
    return explain.needed_because(row.plan) if explain is not None and row.plan else ""


def charts(p: QueueManagerPage) -> str:
    row = p.row
    labels = [short(h.at, row) for h in p.history]
    runs = [h.run_id for h in p.history]
    return "".join(
        [
            line_chart(
                "bytes-online",
                "Receiver bytes online",
                "bytes",
                [Point(h.run_id, label, h.bytes_online) for h, label in zip(p.history, labels, strict=True)],
                lambda v: size(int(v)),
                step=_bytes_step(p.history),
            ),
            line_chart(
                "oldest-needed-age",
                "Age of the oldest needed entry",
                "seconds",
                [
                    Point(h.run_id, label, h.oldest_needed_age_seconds)
                    for h, label in zip(p.history, labels, strict=True)
                ],
                lambda v: f"{v / 3600:g} h",
                step=3600,
            ),
            bar_chart(
                "saved-deleted",
                "Receivers saved and deleted per run",
                "receivers",
                runs,
                labels,
                {"saved": [h.saved for h in p.history], "deleted": [h.deleted for h in p.history]},
            ),
        ]
    )


def asp_chart(f: AspForecast | None, row: QueueManagerRow | None = None, name: str = "asp-forecast") -> str:
    """The ASP's used bytes over the forecast's window, its limit and capacity, and the projection from the newest
    reading to the day it is full (at most FORECAST_HORIZON_DAYS ahead), or to the window's length ahead when it is not
    filling."""
    if f is None:
        return ""
    offset = row.utc_offset_minutes if row is not None else _offset(f.as_of)
    start = f.history[0].at if f.history else f.as_of
    readings = [
        Reading(h.at.isoformat(), local_time(h.at, offset), h.used_bytes, (h.at - start).total_seconds())
        for h in f.history
    ]
    now_s = (f.as_of - start).total_seconds()
    ahead = f.days_to_full if f.days_to_full else f.window_days
    ahead = min(ahead, FORECAST_HORIZON_DAYS)
    projection = None
    end_label = local_time(f.as_of, offset)
    if f.growth_bytes_per_day is not None:
        end = f.as_of + timedelta(days=ahead)
        projection = (now_s, float(f.used_bytes), (end - start).total_seconds(), f.fitted_used(end) or 0.0)
        end_label = local_time(end, offset)
    facts = {
        "host": f.host,
        "asp_number": f.asp_number,
        "growth_bytes_per_day": f.growth_bytes_per_day,
        "days_to_limit": f.days_to_limit,
        "days_to_full": f.days_to_full,
        "limit_bytes": f.limit_bytes,
        "capacity_bytes": f.capacity_bytes,
    }
    if f.growth_bytes_per_day is None:
        said = "no forecast yet: too few collections"
    elif f.days_to_limit is None:
        said = f"{signed_size(int(f.growth_bytes_per_day))} a day: not filling"
    else:
        said = f"{size(int(f.growth_bytes_per_day))} a day, {f.limit_percent:g}% in {days_text(f.days_to_limit)}"
    title = f"ASP {f.asp_number} on {f.host}: {said}"
    return forecast_chart(
        name if row is not None else f"{name}-{f.host}-{f.asp_number}",
        title,
        readings,
        capacity=f.capacity_bytes,
        limit=f.limit_bytes,
        projection=projection,
        end_label=end_label,
        facts=facts,
        fmt=lambda v: size(int(v)),
    )


FORECAST_HORIZON_DAYS = 366.0
"""How far ahead the chart draws the projection: past a year, the date matters less than the trend."""


def _offset(moment: datetime) -> int | None:
    delta = moment.utcoffset()
    return int(delta.total_seconds() // 60) if delta is not None else None


def forecast_section(forecasts: Sequence[AspForecast]) -> str:
    """Per host and ASP: use now, growth a day, when it reaches the policy's limit and is full, and its chart."""
    if not forecasts:
        return ""
    rows = []
    for f in sorted(forecasts, key=lambda f: (f.days_to_limit is None, f.days_to_limit or 0, f.host, f.asp_number)):
        growth = signed_size(int(f.growth_bytes_per_day)) if f.growth_bytes_per_day is not None else "-"
        soon = f.days_to_limit is not None and f.days_to_limit <= POLICY.asp_forecast_alert_days
        limit_at = f" ({f.limit_at:%Y-%m-%d})" if f.limit_at and f.days_to_limit else ""
        full_at = f" ({f.full_at:%Y-%m-%d})" if f.full_at and f.days_to_full else ""
        rows.append(
            f'<tr data-asp-host="{e(f.host)}" data-asp="{f.asp_number}"'
            f' data-days-to-limit="{e(_days(f.days_to_limit))}" data-days-to-full="{e(_days(f.days_to_full))}">'
            f"<td>{e(f.host)}</td><td class=num>{f.asp_number}</td>"
            f'<td class=num>{f.used_percent:.1f}%<span class="why">{e(size(f.used_bytes))} of '
            f"{e(size(f.capacity_bytes))}</span></td>"
            f'<td class=num data-value="{e(f.growth_bytes_per_day)}">{e(growth)}</td>'
            f'<td class="num{" soon" if soon else ""}">{e(days_text(f.days_to_limit))}{e(limit_at)}</td>'
            f"<td class=num>{e(days_text(f.days_to_full))}{e(full_at)}</td>"
            f"<td class=num>{f.samples}</td>"
            f"<td><details><summary>chart</summary>{asp_chart(f)}</details></td></tr>"
        )
    limit = f"{POLICY.asp_limit_percent:g}%"
    return (
        f"<h2>ASP forecasts</h2>"
        f'<div class="table-wrap"><table id="asp-forecasts" class="grid"><thead><tr><th>host</th><th class=num>ASP</th>'
        f"<th class=num>used</th><th class=num>growth a day</th><th class=num>{limit} in</th>"
        "<th class=num>full in</th><th class=num>collections</th><th></th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="muted">The growth is fitted by least squares to the used space of the collections of the last '
        f"{POLICY.asp_forecast_window_days:g} days, between the drops deletes make: how fast the ASP fills if nothing "
        f"is deleted. Under {POLICY.asp_forecast_alert_days:g} days to {limit}, its queue managers get the alert "
        "ASP_FULL_SOON. Days count from the newest collection.</p>"
    )


def _bytes_step(history: Sequence[RunPoint]) -> float:
    top = max((h.bytes_online or 0 for h in history), default=0)
    return 1024.0**3 if top >= 10 * 1024**3 else 1024.0**2 if top >= 1024**2 else 1.0


def receiver_table(receivers: Sequence[ReceiverRow], row: QueueManagerRow) -> str:
    head = (
        "<tr><th>receiver</th><th>library</th><th class=num>#</th><th>status</th><th>attached</th><th>detached</th>"
        "<th class=num>size</th><th class=num>sequence range</th><th>saved (IBM i)</th><th>backup</th>"
        "<th>planned action</th><th>reason</th></tr>"
    )
    body = []
    for r in receivers:
        sequence = f"{r.first_sequence}-{r.last_sequence}" if r.first_sequence is not None else "-"
        shown = size(r.size_bytes) if r.size_bytes is not None else None
        reason = e(r.reason) + (f'<span class="why">{e(r.explanation)}</span>' if r.explanation else "")
        status = e(r.status)
        if r.deleted_at is not None:  # the plan's status is what the host had then; the catalog says what followed
            status = f'<span class="deleted">deleted</span><span class="why">{e(when(r.deleted_at, row))}</span>'
        gone = f' data-deleted-at="{e(r.deleted_at.isoformat())}"' if r.deleted_at is not None else ""
        body.append(
            f'<tr data-receiver="{e(r.name)}" data-action="{e(r.action)}" data-reason="{e(r.reason)}"{gone}>'
            f"<td>{e(r.name)}</td><td>{e(r.library)}</td><td class=num>{e(r.chain_position)}</td><td>{status}</td>"
            f'<td class="time">{e(when(r.attached_at, row))}</td><td class="time">{e(when(r.detached_at, row))}</td>'
            f'<td class=num data-value="{e(r.size_bytes)}">{e(shown)}</td>'
            f"<td class=num>{e(sequence)}</td>"
            f'<td class="time">{e(when(r.saved_at, row))}</td><td>{backups(r.backups)}</td>'
            f"<td>{e(r.action)}</td><td>{reason}</td></tr>"
        )
    return (
        f'<div class="table-wrap"><table id="receivers" class="grid"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def backups(where: Sequence[str]) -> str:
    """Each save file by name; copies in the backup store as one line, their keys in its title."""
    if not where:
        return "-"
    files = [w.removeprefix("save file ") for w in where if w.startswith("save file ")]
    stored = [w.removeprefix("backup store: ") for w in where if w.startswith("backup store: ")]
    text = "<br>".join(e(f) for f in files)
    if stored:
        copies = "a copy" if len(stored) == 1 else f"{len(stored)} copies"
        text += f'<span class="why" title="{e(chr(10).join(stored))}">{copies} in the backup store</span>'
    return text


# --- a Linux queue manager page ----------------------------------------------------------------------------------


def linux_queue_manager_page(p: LinuxQueueManagerPage, links: Links) -> str:
    row = p.row
    waiting = (
        f'<span class="why">no proven copy yet of {len(row.awaiting_copy)}: {e(listed(row.awaiting_copy))}</span>'
        if row.awaiting_copy
        else ""
    )
    facts = [
        ("traffic light", f"{light(row)} {e(row.light.color)}"),
        ("log", e(f"{row.log_type.lower()} log, LogManagement {row.log_management}")),
        ("log directory", e(row.log_path)),
        ("extents in it", e(f"{row.extents_in_log} ({size(row.bytes_in_log)})")),
        ("log points", log_points(row)),
        (
            "oldest needed extent",
            e(row.oldest_needed) + (f'<span class="why">held by {e(row.held_by)}</span>' if row.held_by else ""),
        ),
        ("its plan", linux_plan(row) + f'<span class="why">kept: {row.kept}</span>' + waiting),
        (
            "newest proven copy",
            backup(row) + (f'<span class="why">{e(row.last_backup.detail)}</span>' if row.last_backup else ""),
        ),
        ("last run", last_run(row, links)),
    ]
    dl = "".join(f'<dt>{e(k)}</dt><dd data-fact="{e(k)}">{v}</dd>' for k, v in facts)
    reasons = "".join(f"<li>{e(r)}</li>" for r in row.light.reasons) or "<li>nothing to look at</li>"
    alert_items = "".join(f"<li>{e(line)}</li>" for line in p.alert_lines) or "<li>none</li>"
    conf = json.dumps(row.recovery_conf)
    link = recovery_link(links, row.recovery_conf, RECOVERY_DAG)
    recovery = (
        f"<p>If this queue manager needs a restore or a repair: {link} "
        "(its Trigger button opens the form). Enter these values, or paste them into the form's configuration JSON:"
        f'<br><pre class="conf" id="recovery-conf">{e(conf)}</pre></p>'
    )
    body = (
        f'<dl class="facts">{dl}</dl>'
        f'<h2>Why this light</h2><ul class="reasons" id="light-reasons">{reasons}</ul>'
        f'<h2>Alerts</h2><ul class="reasons" id="alerts">{alert_items}</ul>'
        f"<h2>Recovery</h2>{recovery}"
        f"<h2>Extents (newest plan, {len(p.extents)})</h2>{extent_table(p.extents, row)}"
    )
    crumbs = [("MQ journals", links.fleet()), (row.host, None), (row.qmgr, None)]
    collected = e(when(row.collected_at, row))
    subtitle = f"{e(platform_name(row))} &middot; collected {collected} &middot; run {e(row.run_id)}"
    return page(f"{row.qmgr} on {row.host}", crumbs, body, subtitle)


def extent_table(extents: Sequence[ExtentRow], row: LinuxQueueManagerRow) -> str:
    """The plan's extents, oldest first, as `ls -l` of the log directory and the plan show them."""
    head = (
        "<tr><th>extent</th><th class=num>size</th><th>modified</th><th>planned action</th><th>reason</th>"
        "<th>backup</th></tr>"
    )
    body = []
    for x in extents:
        copies = (
            f'<span title="{e(chr(10).join(x.copies))}">'
            f"{'a copy' if len(x.copies) == 1 else f'{len(x.copies)} copies'} in the backup store</span>"
            if x.copies
            else "-"
        )
        body.append(
            f'<tr data-extent="{e(x.name)}" data-action="{e(x.action)}" data-reason="{e(x.reason)}" '
            f'data-copies="{len(x.copies)}">'
            f'<td>{e(x.name)}</td><td class=num data-value="{x.size_bytes}">{e(size(x.size_bytes))}</td>'
            f'<td class="time">{e(when(x.modified_at, row))}</td><td>{e(x.action)}</td><td>{e(x.reason)}</td>'
            f"<td>{copies}</td></tr>"
        )
    return (
        f'<div class="table-wrap"><table id="extents" class="grid"><thead>{head}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def linux_not_found(host: str, qmgr: str, links: Links) -> str:
    body = (
        f"<p>No plan has a Linux queue manager {e(qmgr)} on {e(host)}. "
        f'<a href="{e(links.fleet())}">Back to the fleet</a>.</p>'
    )
    return page("Queue manager not found", [("MQ journals", links.fleet()), (host, None)], body)


def not_found(host: str, library: str, links: Links) -> str:
    body = (
        f"<p>No plan has a queue manager in library {e(library)} on {e(host)}. "
        f'<a href="{e(links.fleet())}">Back to the fleet</a>.</p>'
    )
    return page("Queue manager not found", [("MQ journals", links.fleet()), (host, None)], body)


def refused(status: int, detail: str, login: str) -> str:
    body = (
        f"<p>{e(detail)} ({status}). The fleet view is behind Airflow's login: "
        f'<a href="{e(login)}" target="_top">log in to Airflow</a>, then open "MQ journals" in its navigation.</p>'
    )
    return page("Not logged in" if status == 401 else "Not allowed", [("MQ journals", None)], body)
