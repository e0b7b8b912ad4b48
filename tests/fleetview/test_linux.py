"""Linux queue managers in the fleet view and the metrics (#32): one overview of both platforms, sorted by host then
queue manager, each row in its platform's terms; a Linux queue manager's page with its extents; its Prometheus
series. The data folder is conftest's `mixed`: BILLING and PAYROLL on IBM i, QM.EDGE (circular log), QM.AUDIT (RECLOG
stuck, across the wrap) and QM.ORDERS (Archive mode, its extents copied) on Linux."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from mqjournal.fleetview import fleetrows, linuxdata, metrics
from mqjournal.fleetview.app import create_app
from mqjournal.fleetview.data import AirflowRun, QueueManagerRow, RunsOf, no_airflow, no_later_runs
from mqjournal.fleetview.linuxdata import LinuxQueueManagerRow
from mqjournal.linuxmq.plan import plan_queue_manager
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.linuxmq.snapshot import read_linux_snapshots
from tests.fleetview.conftest import (
    COLLECTED1,
    COLLECTED2,
    COPIED_AT,
    MIB,
    RUN1,
    RUN2,
    extent_copy,
    orders,
    write_linux_snapshots_of,
)
from tests.fleetview.test_app import StandInRuns
from tests.fleetview.test_data import StandInAirflow

NOW = COLLECTED2 + timedelta(hours=1)
EDGE, AUDIT, ORDERS = ("app-linux1", "QM.EDGE"), ("mq-linux1", "QM.AUDIT"), ("mq-linux1", "QM.ORDERS")
PAYROLL, BILLING = ("ibmi-prod1", "PAYROLL"), ("ibmi-prod2", "BILLING")


def rows_of(mixed, **options) -> dict[tuple[str, str], QueueManagerRow | LinuxQueueManagerRow]:
    return {(r.host, r.qmgr): r for r in fleetrows.fleet(mixed.settings, mixed.catalog, now=NOW, **options)}


def linux_row(mixed, key: tuple[str, str], **options) -> LinuxQueueManagerRow:
    row = rows_of(mixed, **options)[key]
    assert isinstance(row, LinuxQueueManagerRow)
    return row


# --- the rows ----------------------------------------------------------------------------------------------------


def test_both_platforms_are_one_list_sorted_by_host_then_queue_manager_each_from_its_newest_plan(mixed):
    rows = fleetrows.fleet(mixed.settings, mixed.catalog, now=NOW)

    assert [(r.host, r.qmgr, r.platform, r.run_id) for r in rows] == [
        ("app-linux1", "QM.EDGE", "linux", RUN1),  # in run 1's plan only
        ("ibmi-prod1", "PAYROLL", "ibmi", RUN2),
        ("ibmi-prod2", "BILLING", "ibmi", RUN2),
        ("mq-linux1", "QM.AUDIT", "linux", RUN2),
        ("mq-linux1", "QM.ORDERS", "linux", RUN2),  # run 2's, not run 1's
    ]


def test_a_linux_row_says_its_log_in_mqs_terms(mixed):
    row = linux_row(mixed, ORDERS)

    assert (row.log_type, row.log_management, row.log_path) == ("LINEAR", "Archive", "/var/mqm/log/QM!ORDERS/active/")
    points = (row.current_extent, row.restart_extent, row.media_extent, row.archive_extent)
    assert points == ("S0000012.LOG", "S0000011.LOG", "S0000003.LOG", "S0000001.LOG")
    assert (row.restart_behind, row.media_behind, row.oldest_needed, row.held_by) == (1, 9, "S0000003.LOG", "MEDIALOG")
    assert (row.extents_in_log, row.bytes_in_log) == (13, 13 * 16 * MIB)  # S0000000-S0000012 in the log directory
    assert row.to_archive == [f"S{n:07d}.LOG" for n in range(1, 12)]
    assert (row.to_release, row.bytes_to_release) == (["S0000001.LOG", "S0000002.LOG"], 2 * 16 * MIB)
    assert row.kept == 2  # S0000000 (behind ARCHLOG: MQ was told) and S0000012 (CURRLOG)
    assert row.collected_at == COLLECTED2 and row.utc_offset_minutes == 60  # the host's offset, from its snapshot


def test_the_newest_proven_copy_is_the_catalogs_newest_copy_of_any_of_its_extents(mixed):
    mixed.catalog.record_extent_copy(extent_copy("S0000000.LOG", verified_at=COPIED_AT - timedelta(days=3)))

    row = linux_row(mixed, ORDERS)

    assert row.last_backup is not None
    assert (row.last_backup.at, row.last_backup.where) == (COPIED_AT, "backup store")
    assert row.last_backup.detail.startswith("S0000001.LOG: linux/mq-linux1/QM.ORDERS/")
    assert row.awaiting_copy == []
    assert linux_row(mixed, AUDIT).last_backup is None


def test_how_far_reclog_and_medialog_are_behind_currlog_is_counted_across_the_wrap(mixed):
    row = linux_row(mixed, AUDIT)

    assert (row.current_extent, row.restart_extent, row.media_extent) == (
        "S0000002.LOG",
        "S9999998.LOG",
        "S9999997.LOG",
    )
    assert (row.restart_behind, row.media_behind, row.held_by) == (4, 5, "MEDIALOG")
    assert row.to_release == ["S9999996.LOG"] and row.bytes_to_release == 4 * MIB


def test_a_log_mqjournal_does_not_plan_has_no_log_point_figures_not_made_up_ones(mixed):
    row = linux_row(mixed, EDGE)

    assert (row.log_type, row.alerts) == ("CIRCULAR", ["not_planned"])
    assert (row.restart_behind, row.media_behind, row.oldest_needed, row.held_by) == (None, None, None, None)
    assert (row.to_archive, row.to_release, row.kept) == ([], [], 3)
    assert "MQ manages its extents" in row.alert_texts["not_planned"]


def test_the_linux_outcome_is_the_runs_and_airflow_is_asked_once_for_both_platforms_runs(mixed):
    airflow = StandInAirflow(AirflowRun(run_id=RUN2, state="success", note="approved by admin: 2 log extents released"))

    rows = rows_of(mixed, airflow=airflow)

    assert airflow.asked == [sorted([RUN1, RUN2])]
    orders_row = rows[ORDERS]
    assert (orders_row.run_state, orders_row.outcome, orders_row.outcome_from) == (
        "success",
        "approved by admin: 2 log extents released",
        "note",
    )
    assert rows[EDGE].outcome == "approved by admin: 1 receivers deleted"  # run 1's report, no note


# --- the traffic light -------------------------------------------------------------------------------------------


def test_a_stuck_reclog_is_red_a_log_not_planned_amber_and_a_copied_archive_log_green(mixed):
    rows = rows_of(mixed)

    assert {key: rows[key].light.color for key in (EDGE, AUDIT, ORDERS)} == {
        EDGE: "amber",
        AUDIT: "red",
        ORDERS: "green",
    }
    audit_reasons = rows[AUDIT].light.reasons
    assert audit_reasons[0].startswith("restart_stuck: RECLOG S9999998.LOG has not moved in 4 collections")
    assert audit_reasons[1].startswith("no proven copy in the backup store of 6 extents the plan archives")
    assert rows[EDGE].light.reasons == [f"not_planned: {rows[EDGE].alert_texts['not_planned']}"]


def test_an_extent_to_archive_without_a_proven_copy_is_work_waiting_amber(mixed):
    plan = plan_queue_manager(orders(RUN2, COLLECTED2), ())
    copies = [extent_copy(f"S{n:07d}.LOG") for n in range(1, 11)]  # not S0000011

    last = RunsOf(mixed.settings, [RUN2], no_airflow, no_later_runs).of(RUN2, *ORDERS, None)

    row = linuxdata.linux_row(RUN2, plan, orders(RUN2, COLLECTED2), copies, last, NOW)

    assert row.awaiting_copy == ["S0000011.LOG"]
    assert row.light.color == "amber"
    assert row.light.reasons == [
        "no proven copy in the backup store of 1 extents the plan archives (S0000011.LOG): run the maintenance DAG, "
        "whose archive step copies them"
    ]


def test_a_failed_last_run_turns_a_linux_queue_manager_amber(mixed):
    row = linux_row(mixed, ORDERS, airflow=StandInAirflow(AirflowRun(run_id=RUN2, state="failed", note="failed")))

    assert (row.light.color, row.light.reasons) == ("amber", ["the last run failed: failed"])


def test_a_linux_queue_manager_missing_an_extent_restart_reads_is_red_with_the_startup_recovery(mixed):
    # Run 2's collection of mq-linux1 again, QM.ORDERS without S0000011 (RECLOG): deleted outside mqjournal.
    path = mixed.settings.linux_snapshot_dir(RUN2) / "mq-linux1.jsonl"
    audit, orders2 = sorted(read_linux_snapshots(path), key=lambda s: s.qmgr)
    lost = orders2.model_copy(update={"extents": [x for x in orders2.extents if x.name != "S0000011.LOG"]})
    write_linux_snapshots_of(mixed.settings, audit, lost)

    row = linux_row(mixed, ORDERS)

    assert row.alerts == ["QMGR_CANNOT_START"]
    assert row.light.color == "red"
    assert row.light.reasons[0].startswith("QMGR_CANNOT_START: strmqm will fail with AMQ6767: needed extent S0000011")
    assert row.recovery_conf == {"host": "mq-linux1", "qmgr": "QM.ORDERS", "kind": "startup"}
    assert (row.extents_in_log, row.bytes_in_log) == (12, 12 * 16 * MIB)  # the log directory as collected


# --- the pages ---------------------------------------------------------------------------------------------------


@pytest.fixture
def logged_in(mixed, auth) -> TestClient:
    client = TestClient(create_app(current_settings=lambda: mixed.settings, dag_runs=StandInRuns()))
    client.cookies.set("_token", "good")
    return client


@pytest.fixture
def auth(monkeypatch):
    from airflow.api_fastapi import app as airflow_app

    from tests.fleetview.test_app import StandInAuthManager

    manager = StandInAuthManager({"mq_journal_maintenance"})
    monkeypatch.setattr(airflow_app._AuthManagerState, "instance", manager)
    return manager


def table_rows(html: str) -> list[tuple[str, str, str]]:
    return re.findall(r'<tr data-host="([^"]*)" data-qmgr="([^"]*)"[^>]*? data-platform="([^"]*)"', html)


def cell(html: str, host: str, qmgr: str, column: str) -> str:
    row = re.search(rf'<tr data-host="{re.escape(host)}" data-qmgr="{re.escape(qmgr)}".*?</tr>', html)
    assert row is not None, (host, qmgr)
    found = re.search(rf'<td class="[^"]*" data-col="{column}" data-value="([^"]*)">(.*?)</td>', row[0])
    assert found is not None, column
    return found[2]


def test_the_overview_has_both_platforms_in_one_table_by_host_then_queue_manager(logged_in):
    html = logged_in.get("/?sort=host&order=asc").text

    assert table_rows(html) == [
        ("app-linux1", "QM.EDGE", "linux"),
        ("ibmi-prod1", "PAYROLL", "ibmi"),
        ("ibmi-prod2", "BILLING", "ibmi"),
        ("mq-linux1", "QM.AUDIT", "linux"),
        ("mq-linux1", "QM.ORDERS", "linux"),
    ]
    # The header counts both platforms (the colors depend on today: a collection older than 8 days is amber).
    assert re.search(r"5 queue managers: 2 red, \d amber, \d green", html)


def test_by_default_the_reddest_come_first_whatever_the_platform(logged_in):
    # Red BILLING and QM.AUDIT, amber QM.EDGE and PAYROLL, then QM.ORDERS (green, or amber once its collection is
    # older than 8 days: it still sorts last, by host and name).
    assert [(h, q) for h, q, _ in table_rows(logged_in.get("/").text)] == [BILLING, AUDIT, EDGE, PAYROLL, ORDERS]


def test_a_linux_row_fills_the_columns_in_linux_terms_and_a_dash_where_one_does_not_apply(logged_in):
    html = logged_in.get("/").text

    assert 'data-platform="linux">Linux</span>' in cell(html, *ORDERS, "platform")
    assert 'data-platform="ibmi">IBM i</span>' in cell(html, *BILLING, "platform")
    name = cell(html, *ORDERS, "qmgr")
    assert 'href="/linux/mq-linux1/QM.ORDERS"' in name and "LogManagement Archive" in name
    assert cell(html, *ORDERS, "receivers") == "13 extents"
    assert cell(html, *ORDERS, "bytes").startswith("208.0 MB")
    assert cell(html, *ORDERS, "oldest") == "S0000003.LOG"
    held = cell(html, *ORDERS, "held")
    assert re.findall(r'data-log-point="(\w+)" data-extent="([^"]*)" data-behind="([^"]*)"', held) == [
        ("CURRLOG", "S0000012.LOG", "-"),
        ("RECLOG", "S0000011.LOG", "1"),
        ("MEDIALOG", "S0000003.LOG", "9"),
        ("ARCHLOG", "S0000001.LOG", "-"),
    ]
    assert '<span class="log-point point-name" data-log-point="MEDIALOG"' in held  # it holds the oldest needed
    planned = cell(html, *ORDERS, "planned")
    assert 'data-to-archive="11" data-to-release="2" data-bytes-to-release="33554432"' in planned
    assert "archive 11, release 2 (32.0 MB)" in planned and "by SET LOG ARCHIVED" in planned
    assert "backup store" in cell(html, *ORDERS, "backup")
    for column in ("asp", "age", "drill"):  # an ASP, an entry's age, a restore drill: IBM i's only
        assert cell(html, *ORDERS, column) == "-", column
    assert cell(html, *BILLING, "planned") == "save 0, delete 0 (0 B)"


def test_a_manual_log_shows_no_archlog_and_its_releases_are_deletes(logged_in):
    html = logged_in.get("/").text

    held = cell(html, *AUDIT, "held")
    assert re.findall(r'data-log-point="(\w+)"', held) == ["CURRLOG", "RECLOG", "MEDIALOG"]
    assert "by deleting them" in cell(html, *AUDIT, "planned")
    assert 'data-alert="restart_stuck"' in cell(html, *AUDIT, "alerts")
    assert '<span class="alert red" data-alert="restart_stuck"' in cell(html, *AUDIT, "alerts")
    # A circular log has a CURRLOG and no other point: shown as it is, nothing made up.
    edge_points = re.findall(r'data-log-point="(\w+)" data-extent="([^"]*)"', cell(html, *EDGE, "held"))
    assert edge_points == [("CURRLOG", "S0000002.LOG"), ("RECLOG", "-"), ("MEDIALOG", "-")]
    assert cell(html, *EDGE, "oldest") == "-"


def test_sorting_by_bytes_orders_both_platforms_bytes_online_and_by_asp_puts_linux_last(logged_in):
    by_bytes = logged_in.get("/?sort=bytes&order=desc").text
    assert [(h, q) for h, q, _ in table_rows(by_bytes)] == [ORDERS, EDGE, AUDIT, BILLING, PAYROLL]

    by_asp = logged_in.get("/?sort=asp&order=desc").text
    assert [p for _, _, p in table_rows(by_asp)] == ["ibmi", "ibmi", "linux", "linux", "linux"]


def test_the_fleet_json_has_both_platforms_rows_with_their_platform(logged_in):
    rows = {(r["host"], r["qmgr"]): r for r in logged_in.get("/api/fleet").json()}

    assert {key: r["platform"] for key, r in rows.items()} == {
        EDGE: "linux",
        PAYROLL: "ibmi",
        BILLING: "ibmi",
        AUDIT: "linux",
        ORDERS: "linux",
    }
    assert rows[ORDERS]["to_release"] == ["S0000001.LOG", "S0000002.LOG"] and "library" not in rows[ORDERS]


def test_a_linux_queue_managers_page_lists_its_extents_with_action_reason_and_copies(logged_in, mixed):
    html = logged_in.get("/linux/mq-linux1/QM.ORDERS").text

    (plan,) = read_linux_plan(mixed.settings.plan_dir(RUN2), {ORDERS})
    listed = re.findall(
        r'<tr data-extent="([^"]*)" data-action="([^"]*)" data-reason="([^"]*)" data-copies="(\d+)"', html
    )
    assert [(name, action, reason) for name, action, reason, _ in listed] == [
        (d.extent, d.action.value, d.reason) for d in plan.decisions
    ]
    assert {name: int(copies) for name, _, _, copies in listed} == {
        f"S{n:07d}.LOG": 1 if 1 <= n <= 11 else 0 for n in range(13)
    }
    assert "<h2>Extents (newest plan, 13)</h2>" in html
    assert "S0000003.LOG" in re.search(r'<dd data-fact="oldest needed extent">(.*?)</dd>', html)[1]
    assert "held by MEDIALOG" in html
    assert re.search(r'<dd data-fact="log directory">/var/mqm/log/QM!ORDERS/active/</dd>', html)
    assert '<pre class="conf" id="recovery-conf">{&quot;host&quot;: &quot;mq-linux1&quot;, &quot;qmgr&quot;: ' in html


def test_a_linux_queue_managers_page_says_each_alert_with_what_to_do(logged_in):
    html = logged_in.get("/linux/mq-linux1/QM.AUDIT").text

    alerts = re.search(r'<ul class="reasons" id="alerts">(.*?)</ul>', html)[1]
    assert alerts.startswith("<li>restart_stuck: RECLOG S9999998.LOG has not moved in 4 collections")
    assert "commit or back it out" in alerts
    light = re.search(r'<ul class="reasons" id="light-reasons">(.*?)</ul>', html)[1]
    assert light.startswith("<li>restart_stuck: ")
    assert "<li>no proven copy in the backup store of 6 extents the plan archives" in light


def test_the_linux_page_api_and_an_unknown_one(logged_in):
    page = logged_in.get("/api/linux/mq-linux1/QM.AUDIT").json()
    assert page["row"]["restart_behind"] == 4 and len(page["extents"]) == 7

    # An MQ name may hold '/': the route takes it whole, and a name no plan has is a 404 naming it.
    missing = logged_in.get("/linux/mq-linux1/QM%2FNONE")
    assert missing.status_code == 404 and "QM/NONE" in missing.text
    assert logged_in.get("/api/linux/mq-linux1/QM.NONE").status_code == 404


# --- the metrics -------------------------------------------------------------------------------------------------

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


def scrape(mixed) -> Samples:
    from prometheus_client.parser import text_string_to_metric_families

    text = metrics.exposition(metrics.read_figures(mixed.settings, mixed.catalog, now=NOW)).decode()
    samples: Samples = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def by_queue_manager(samples: Samples, name: str, **labels: str) -> dict[tuple[str, str], float]:
    found = {}
    for key, value in samples[name].items():
        series = dict(key)
        if all(series.get(k) == v for k, v in labels.items()):
            found[(series["host"], series["qmgr"])] = value
    return found


def test_a_linux_series_names_the_queue_manager_as_ibms_exporter_does_on_linux_without_a_library(mixed):
    samples = scrape(mixed)

    assert {dict(key)["qmgr"]: dict(key) for key in samples["ibmmq_qmgr_linear_log_bytes"]} == {
        "QM.EDGE": {"qmgr": "QM.EDGE", "platform": "UNIX", "host": "app-linux1"},
        "QM.AUDIT": {"qmgr": "QM.AUDIT", "platform": "UNIX", "host": "mq-linux1"},
        "QM.ORDERS": {"qmgr": "QM.ORDERS", "platform": "UNIX", "host": "mq-linux1"},
    }
    # The IBM i families keep their queue managers only.
    assert set(by_queue_manager(samples, "ibmmq_qmgr_journal_receivers_online")) == {PAYROLL, BILLING}


def test_the_log_points_distance_in_extents_has_no_series_where_it_is_not_known(mixed):
    samples = scrape(mixed)

    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_restart_behind_extents") == {AUDIT: 4, ORDERS: 1}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_media_behind_extents") == {AUDIT: 5, ORDERS: 9}


def test_the_log_directory_and_what_the_plan_releases(mixed):
    samples = scrape(mixed)

    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_extents") == {EDGE: 3, AUDIT: 7, ORDERS: 13}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_bytes") == {
        EDGE: 3 * 16 * MIB,
        AUDIT: 7 * 4 * MIB,
        ORDERS: 13 * 16 * MIB,
    }
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_extents_to_archive") == {EDGE: 0, AUDIT: 6, ORDERS: 11}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_extents_to_release") == {EDGE: 0, AUDIT: 1, ORDERS: 2}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_release_bytes") == {
        EDGE: 0,
        AUDIT: 4 * MIB,
        ORDERS: 32 * MIB,
    }
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_extents_awaiting_copy") == {EDGE: 0, AUDIT: 6, ORDERS: 0}


def test_the_newest_copys_age_only_for_a_queue_manager_with_a_copy(mixed):
    samples = scrape(mixed)

    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_last_copy_age_seconds") == {
        ORDERS: (NOW - COPIED_AT).total_seconds()
    }


def test_the_light_alerts_collection_and_run_state_of_each_linux_queue_manager(mixed):
    samples = scrape(mixed)

    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_severity") == {EDGE: 1, AUDIT: 2, ORDERS: 0}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_alert", alert="restart_stuck") == {AUDIT: 1}
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_alert", alert="not_planned") == {EDGE: 1}
    assert len(samples["ibmmq_qmgr_linear_log_alert"]) == 2  # QM.ORDERS has none
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_collected_timestamp_seconds") == {
        EDGE: COLLECTED1.timestamp(),
        AUDIT: COLLECTED2.timestamp(),
        ORDERS: COLLECTED2.timestamp(),
    }
    assert by_queue_manager(samples, "ibmmq_qmgr_linear_log_last_run_state", state="unknown") == {
        EDGE: 1,
        AUDIT: 1,
        ORDERS: 1,
    }


def test_every_linux_series_is_documented_in_monitoring_md():
    from pathlib import Path

    documented = (Path(__file__).resolve().parents[2] / "docs" / "monitoring.md").read_text(encoding="utf-8")
    served = [f.name for f in metrics.linux_families([])]

    assert served and all(name.startswith("ibmmq_qmgr_linear_log_") for name in served)
    # Each by its whole name, `name` or `name{label}`: ..._extents is not documented by ..._extents_to_archive.
    assert [name for name in served if not re.search(rf"`{name}(`|\{{)", documented)] == []


def test_a_row_names_its_host_s_platform_in_its_own_terms_from_the_snapshot(mixed):
    from mqjournal.fleetview import pages

    snapshot = orders(RUN2, COLLECTED2).model_copy(update={"platform": "windows"})
    last = RunsOf(mixed.settings, [RUN2], no_airflow, no_later_runs).of(RUN2, *ORDERS, None)
    row = linuxdata.linux_row(RUN2, plan_queue_manager(snapshot, ()), snapshot, [], last, NOW)
    assert (row.platform, row.host_platform) == ("linux", "windows")
    assert pages.platform(row) == '<span class="platform" data-platform="linux">Windows</span>'
    aix = row.model_copy(update={"host_platform": "aix"})
    assert pages.platform_name(aix) == "AIX" and pages.platform_name(linux_row(mixed, ORDERS)) == "Linux"


def test_a_queue_managers_platform_label_is_its_hosts_as_ibms_exporter_writes_it(mixed):
    from dataclasses import replace
    from typing import get_args

    from mqjournal.linuxmq.snapshot import PlatformName

    assert set(metrics.HOST_PLATFORMS) == set(get_args(PlatformName))  # every platform of the fleet file has one
    one = next(
        f for f in metrics.read_figures(mixed.settings, mixed.catalog, now=NOW) if isinstance(f, metrics.LinuxFigures)
    )
    on = {
        p: replace(one, row=one.row.model_copy(update={"host_platform": p})).labels[1] for p in get_args(PlatformName)
    }
    assert on == {"linux": "UNIX", "aix": "UNIX", "windows": "WINDOWS_NT"}
