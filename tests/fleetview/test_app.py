"""The fleet view's FastAPI app: the pages it serves, and that nothing but its icon is served without an Airflow
login allowed to read the maintenance DAG. Airflow's own `get_user` runs here; the auth manager is a stand-in, so
no login DB is needed (tests/fleetview/test_browser.py logs in to a real one). The runs' states and notes come from a
stand-in too, except in the last tests: a real metadata DB made by `airflow db migrate`, read by Airflow's own ORM."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Collection
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from mqjournal.fleetview import airflow_runs
from mqjournal.fleetview.app import create_app
from mqjournal.fleetview.data import AirflowRun
from mqjournal.runreport import RunFacts, render_html
from tests.fleetview.conftest import RUN1, RUN2, add_dag_run, lost_payroll, narrow_plan


class StandInAuthManager:
    """Knows one token, `good`, of a user who may read the DAGs `readable`."""

    def __init__(self, readable: set[str]) -> None:
        self.readable = readable
        self.asked: list[str | None] = []

    async def get_user_from_token(self, token: str):
        from jwt import InvalidTokenError

        if token != "good":
            raise InvalidTokenError("not a token of ours")
        return User()

    def is_authorized_dag(self, *, method, details, user, access_entity=None) -> bool:
        self.asked.append(details.id)
        return method == "GET" and details.id in self.readable


class User:
    def get_name(self) -> str:
        return "viewer"


@pytest.fixture
def auth(monkeypatch):
    from airflow.api_fastapi import app as airflow_app

    manager = StandInAuthManager({"mq_journal_maintenance"})
    monkeypatch.setattr(airflow_app._AuthManagerState, "instance", manager)
    return manager


class StandInRuns(dict[str, AirflowRun]):
    """The runs Airflow's DB would have, by run id."""

    def __call__(self, run_ids: Collection[str]) -> dict[str, AirflowRun]:
        return {i: self[i] for i in run_ids if i in self}


@pytest.fixture
def runs() -> StandInRuns:
    return StandInRuns()


@pytest.fixture
def client(fleet, auth, runs) -> TestClient:
    return TestClient(create_app(current_settings=lambda: fleet.settings, dag_runs=runs))


# --- authentication ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/qm/ibmi-prod2/QMBILL01", "/api/fleet", "/api/qm/ibmi-prod2/QMBILL01"])
def test_a_request_without_a_token_is_refused(client, path):
    answer = client.get(path)

    assert answer.status_code == 401
    assert "BILLING" not in answer.text


def test_a_browser_without_a_login_is_sent_to_log_in_to_airflow(client):
    answer = client.get("/", headers={"Accept": "text/html"})

    assert answer.status_code == 401
    assert "log in to Airflow" in answer.text
    assert "BILLING" not in answer.text


@pytest.mark.parametrize(
    "credentials", [{"headers": {"Authorization": "Bearer forged"}}, {"cookies": {"_token": "forged"}}]
)
def test_an_invalid_token_is_refused(client, credentials):
    client.cookies.update(credentials.get("cookies", {}))

    answer = client.get("/api/fleet", headers=credentials.get("headers", {}))

    assert answer.status_code in (401, 403)
    assert "BILLING" not in answer.text


def test_the_airflow_uis_cookie_or_a_bearer_token_lets_a_user_in(client):
    assert client.get("/api/fleet", headers={"Authorization": "Bearer good"}).status_code == 200
    client.cookies.set("_token", "good")
    assert client.get("/").status_code == 200


def test_a_user_who_may_not_read_the_maintenance_dag_is_refused(client, auth):
    auth.readable = {"some_other_dag"}

    answer = client.get("/api/fleet", headers={"Authorization": "Bearer good"})

    assert answer.status_code == 403
    assert auth.asked == ["mq_journal_maintenance"]


def test_the_navigation_icon_needs_no_login(client):
    answer = client.get("/icon.svg")

    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("image/svg+xml")


# --- the pages ---------------------------------------------------------------------------------------------------


@pytest.fixture
def logged_in(client) -> TestClient:
    client.cookies.set("_token", "good")
    return client


def rows(html: str) -> list[str]:
    return re.findall(r'<tr data-host="[^"]*" data-qmgr="([^"]*)"', html)


def test_the_fleet_page_has_a_row_per_queue_manager_reddest_first(logged_in):
    html = logged_in.get("/").text

    assert rows(html) == ["BILLING", "PAYROLL"]
    assert 'data-light="red"' in html and 'data-light="amber"' in html
    assert "AMQ7462" in html and "APP.REQUEST.QUEUE" in html and "AMQ7460" in html


@pytest.mark.parametrize(("order", "expected"), [("asc", ["PAYROLL", "BILLING"]), ("desc", ["BILLING", "PAYROLL"])])
def test_the_fleet_page_sorts_by_a_column(logged_in, order, expected):
    # BILLING: 12 receivers of 2 MB online (24 MB); PAYROLL: 6 of 3 MB (18 MB), its two freed ones not counted.
    html = logged_in.get(f"/?sort=bytes&order={order}").text

    assert rows(html) == expected
    assert f'<table id="fleet" class="grid" data-sort="bytes" data-order="{order}">' in html


def test_the_fleet_page_links_the_queue_manager_page_the_runs_grid_and_the_recovery_dag(logged_in):
    html = logged_in.get("/").text

    assert 'href="/qm/ibmi-prod2/QMBILL01"' in html
    assert f'href="/dags/mq_journal_maintenance/runs/{RUN2}"' in html
    assert 'href="/dags/mq_journal_recovery"' in html


def test_the_queue_manager_page_draws_its_history_in_chart_elements_carrying_the_numbers(logged_in):
    html = logged_in.get("/qm/ibmi-prod2/QMBILL01").text
    series = {
        name: json.loads(raw.replace("&quot;", '"'))
        for name, raw in re.findall(
            r'<svg class="chart" data-chart="([^"]+)" data-unit="[^"]*" data-series="([^"]*)"', html
        )
    }

    assert [p["value"] for p in series["bytes-online"]] == [10 * 2 * 1024 * 1024, 12 * 2 * 1024 * 1024]
    assert [p["value"] for p in series["oldest-needed-age"]] == [3600, 46 * 3600]
    assert [(p["saved"], p["deleted"]) for p in series["saved-deleted"]] == [(4, 0), (0, 0)]
    assert len(re.findall(r'<circle class="point" data-run="[^"]*" data-at="[^"]*" data-value="\d+"', html)) == 4
    assert 'data-series="saved" data-run="scheduled__2026-11-15T01:00:00+00:00"' in html


def test_the_queue_manager_page_lists_the_receivers_with_the_plans_action_and_reason(logged_in):
    html = logged_in.get("/qm/ibmi-prod2/QMBILL01").text

    assert len(re.findall(r'<tr data-receiver="AMQA\d{6}"', html)) == 12
    assert '<tr data-receiver="AMQA000011" data-action="keep" data-reason="ATTACHED">' in html
    assert "2026-11-21 18:05:00 +01:00" in html  # AMQA000000 attached, in the partition's local time


def test_the_queue_manager_page_says_what_to_enter_in_the_recovery_form(logged_in):
    html = logged_in.get("/qm/ibmi-prod2/QMBILL01").text

    conf = json.loads(re.search(r'<pre class="conf" id="recovery-conf">([^<]*)</pre>', html)[1].replace("&quot;", '"'))
    assert conf["kind"] == "media" and conf["object"] == "APP.REQUEST.QUEUE"


def test_the_queue_manager_page_of_one_that_cannot_start_shows_the_alert_the_values_and_why_the_points_differ(
    logged_in, fleet
):
    lost_payroll(fleet)
    html = logged_in.get("/qm/ibmi-prod1/QMPAYROLL").text
    alerts = html.split('id="alerts">', 1)[1].split("</ul>", 1)[0]
    assert alerts.startswith("<li>QMGR_CANNOT_START: STRMQM will fail with AMQ7432: needed receivers AMQA000000")
    assert "kind=startup, timestamp=2026-11-21T22:06:00+01:00" in alerts
    conf = html.split('id="recovery-conf">', 1)[1].split("</pre>", 1)[0]
    assert "&quot;kind&quot;: &quot;startup&quot;" in conf and "2026-11-21T22:06:00+01:00" in conf
    assert '<span class="why" id="points-explained">AMQJRNINF names AMQA000000, the oldest receiver MQ needs' in html


def test_an_unknown_queue_manager_is_not_found(logged_in):
    assert logged_in.get("/qm/ibmi-prod2/QMNONE").status_code == 404
    assert logged_in.get("/api/qm/ibmi-prod2/QMNONE").status_code == 404


def test_the_json_answers_hold_the_same_rows(logged_in):
    fleet = logged_in.get("/api/fleet").json()
    page = logged_in.get("/api/qm/ibmi-prod1/QMPAYROLL").json()

    assert [(r["qmgr"], r["light"]["color"], r["holding_point"]) for r in fleet] == [
        ("PAYROLL", "amber", "AMQ7460"),
        ("BILLING", "red", "AMQ7462"),
    ]
    assert page["row"]["qmgr"] == "PAYROLL"
    assert len(page["history"]) == 2


# --- the run as Airflow knows it ---------------------------------------------------------------------------------


def row_html(html: str, qmgr: str) -> str:
    return re.search(rf'<tr data-host="[^"]*" data-qmgr="{qmgr}".*?</tr>', html)[0]


def run_cell(html: str) -> str:
    return re.search(r'<td class="time" data-col="run"[^>]*>(.*?)</td>', html)[1]


def test_the_last_run_cell_shows_airflows_state_as_a_badge_and_the_note_as_the_outcome(logged_in, runs):
    runs[RUN2] = AirflowRun(run_id=RUN2, state="failed", note="approved by admin: 2 receivers deleted; 1 failed")

    cell = run_cell(row_html(logged_in.get("/").text, "BILLING"))

    assert (
        '<span class="state state-failed" data-state="failed" title="the run&#x27;s state in Airflow">failed</span>'
        in cell
    )
    assert (
        '<span class="why outcome" data-outcome-from="note" title="the run&#x27;s note in Airflow (the whole run)">'
        "approved by admin: 2 receivers deleted; 1 failed</span>"
    ) in cell
    # The run's link into Airflow's grid, and its report's page.
    assert re.findall(r'<a [^>]*class="(\w+)"', cell) == ["run", "report"]


def test_without_the_run_in_airflow_the_cell_has_no_badge_and_the_reports_outcome(logged_in):
    cell = run_cell(row_html(logged_in.get("/").text, "BILLING"))

    assert "data-state" not in cell
    assert 'data-outcome-from="report"' in cell and "dry run: plan only, nothing saved or deleted" in cell


def test_a_running_run_without_an_outcome_says_so(logged_in, runs, fleet):
    fleet.settings.report_file(RUN2).unlink()
    runs[RUN2] = AirflowRun(run_id=RUN2, state="running")

    cell = run_cell(row_html(logged_in.get("/").text, "BILLING"))

    assert 'data-state="running"' in cell
    assert '<span class="why outcome">no outcome yet</span>' in cell


def test_the_queue_manager_pages_last_run_fact_has_the_state_and_the_note(logged_in, runs):
    runs[RUN2] = AirflowRun(run_id=RUN2, state="success", note="rejected by admin: nothing deleted")

    html = logged_in.get("/qm/ibmi-prod2/QMBILL01").text
    fact = re.search(r'<dd data-fact="last run">(.*?)</dd>', html)[1]

    assert 'data-state="success"' in fact and "rejected by admin: nothing deleted" in fact
    api = logged_in.get("/api/qm/ibmi-prod2/QMBILL01").json()["row"]
    assert (api["run_state"], api["outcome"], api["outcome_from"]) == (
        "success",
        "rejected by admin: nothing deleted",
        "note",
    )


# --- the runs' reports ----------------------------------------------------------------------------------------------


def write_html_report(settings, run_id: str, outcome: str) -> None:
    path = settings.report_file(run_id).with_suffix(".html")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(RunFacts(run_id=run_id, outcome=outcome)), encoding="utf-8")


def report_url(run_id: str, dag_id: str = "mq_journal_maintenance") -> str:
    return f"/runs/{dag_id}/{quote(run_id, safe='')}/report"


def test_a_runs_html_report_is_served_at_its_own_address(logged_in, fleet):
    write_html_report(fleet.settings, RUN2, "approved by Ana: 3 deleted, 4.0 MB freed")

    answer = logged_in.get(report_url(RUN2))

    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    assert f"<title>mq_journal_maintenance {RUN2}</title>" in answer.text
    assert "Outcome: approved by Ana: 3 deleted, 4.0 MB freed" in answer.text
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")


def test_a_runs_report_needs_a_login(client, fleet):
    write_html_report(fleet.settings, RUN2, "approved by Ana: 3 deleted, 4.0 MB freed")

    answer = client.get(report_url(RUN2))

    assert answer.status_code == 401 and "Ana" not in answer.text


def test_a_run_without_a_report_yet_says_so(logged_in):
    answer = logged_in.get(report_url("manual__2026-11-28T09:00:00+00:00"))

    assert answer.status_code == 404
    assert "No report yet: mq_journal_maintenance manual__2026-11-28T09:00:00+00:00" in answer.text
    assert "written when its report task runs" in answer.text


@pytest.mark.parametrize("run_id", ["<img src=x onerror=alert(1)>", "a b", "x" * 251])
def test_a_run_id_airflow_would_refuse_is_not_looked_up_and_is_escaped(logged_in, run_id):
    answer = logged_in.get(report_url(run_id))

    assert answer.status_code == 404 and "<img" not in answer.text
    assert "not a run id Airflow accepts" in answer.text


def test_a_path_out_of_the_reports_folder_is_not_served(logged_in, fleet):
    (fleet.settings.data_folder / "secret.html").write_text("<title>secret</title>", encoding="utf-8")

    for path in ("/runs/mq_journal_maintenance/..%2Fsecret/report", "/runs/mq_journal_maintenance/../secret/report"):
        answer = logged_in.get(path)
        assert answer.status_code == 404 and "secret</title>" not in answer.text, path


def test_another_run_id_written_to_the_same_file_name_does_not_show_that_report(logged_in, fleet):
    write_html_report(fleet.settings, RUN2, "approved by Ana: 3 deleted, 4.0 MB freed")
    alike = RUN2.replace(":", "_")  # safe() writes both to one file name

    answer = logged_in.get(report_url(alike))

    assert answer.status_code == 404 and "Ana" not in answer.text


def test_a_recovery_runs_markdown_report_is_served_escaped(logged_in, fleet):
    path = fleet.settings.recovery_report_file("manual__r1")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# mq_journal_recovery manual__r1\n\nOutcome: approved by <b>Ana</b>: executed\n")

    answer = logged_in.get(report_url("manual__r1", "mq_journal_recovery"))

    assert answer.status_code == 200 and "approved by &lt;b&gt;Ana&lt;/b&gt;: executed" in answer.text


def test_a_dag_that_writes_no_report_has_no_report_page(logged_in):
    assert logged_in.get(report_url(RUN2, "some_other_dag")).status_code == 404


def test_the_fleet_row_links_its_runs_report(logged_in):
    cell = run_cell(row_html(logged_in.get("/").text, "BILLING"))

    assert f'<a class="report" href="/runs/mq_journal_maintenance/{quote(RUN2, safe="")}/report"' in cell


# --- a real Airflow metadata DB ------------------------------------------------------------------------------------


@pytest.fixture
def in_airflow(fleet, auth) -> TestClient:
    """The app as the plugin makes it (the runs from Airflow's DB through its ORM), logged in."""
    client = TestClient(create_app(current_settings=lambda: fleet.settings))
    client.cookies.set("_token", "good")
    return client


def test_the_fleet_shows_each_runs_state_and_note_from_airflows_metadata_db_in_one_query(
    airflow_orm, fleet, in_airflow
):
    from sqlalchemy import event

    narrow_plan(fleet.settings, RUN2, "PAYROLL")  # PAYROLL's row is run 1's: two runs to look up
    # Run 2 selected BILLING's host only (had it selected PAYROLL too, it would be PAYROLL's last run).
    add_dag_run(RUN2, "success", "rejected by admin: nothing deleted", conf={"hosts": ["ibmi-prod2"]})
    add_dag_run(RUN1, "failed")  # no note: its report's line is the outcome
    add_dag_run(RUN2, "failed", "another DAG's note", dag_id="mq_journal_recovery")
    statements: list[str] = []
    event.listen(airflow_orm, "before_cursor_execute", lambda *args: statements.append(args[2]))

    fleet_rows = {r["qmgr"]: r for r in in_airflow.get("/api/fleet").json()}

    # The runs shown in one query, the runs after them in two (their earliest time, then the runs), for every row.
    assert len([s for s in statements if "dag_run" in s]) == 3
    billing, payroll = fleet_rows["BILLING"], fleet_rows["PAYROLL"]
    assert (billing["run_id"], billing["run_state"], billing["outcome"], billing["outcome_from"]) == (
        RUN2,
        "success",
        "rejected by admin: nothing deleted",
        "note",
    )
    assert (payroll["run_id"], payroll["run_state"], payroll["outcome"], payroll["outcome_from"]) == (
        RUN1,
        "failed",
        "approved by admin: 1 receivers deleted",
        "report",
    )
    assert payroll["light"]["color"] != "green"
    assert "the last run failed: approved by admin: 1 receivers deleted" in payroll["light"]["reasons"]

    html = in_airflow.get("/").text
    assert 'data-state="success"' in run_cell(row_html(html, "BILLING"))
    assert "rejected by admin: nothing deleted" in run_cell(row_html(html, "BILLING"))
    assert 'data-state="failed"' in run_cell(row_html(html, "PAYROLL"))


def test_a_later_run_that_failed_before_planning_is_the_last_run_of_the_queue_managers_it_selected(
    airflow_orm, fleet, in_airflow
):
    run3 = "manual__2026-11-23T05:00:00+00:00"
    add_dag_run(RUN1, "success")
    add_dag_run(RUN2, "success", "rejected by admin: nothing deleted")
    failed = "failed before a plan was made: nothing was saved or deleted"
    add_dag_run(run3, "failed", failed, conf={"hosts": ["ibmi-prod1"], "queue_managers": []})

    rows = {r["qmgr"]: r for r in in_airflow.get("/api/fleet").json()}

    payroll, billing = rows["PAYROLL"], rows["BILLING"]
    assert (payroll["run_id"], payroll["last_run_id"], payroll["run_state"], payroll["outcome"]) == (
        RUN2,  # the plan it shows
        run3,
        "failed",
        failed,
    )
    assert f"the last run failed: {failed}" in payroll["light"]["reasons"]
    # BILLING is on ibmi-prod2, which run 3 did not select: its last run is still its plan's.
    assert (billing["last_run_id"], billing["run_state"]) == (None, "success")
    cell = run_cell(row_html(in_airflow.get("/").text, "PAYROLL"))
    assert run3 in cell and 'data-state="failed"' in cell and f'data-planned-in="{RUN2}"' in cell


def test_without_an_airflow_db_here_the_reports_say_and_no_db_file_is_made(fleet, in_airflow, monkeypatch, tmp_path):
    from airflow import settings as airflow_settings
    from sqlalchemy import create_engine

    missing = tmp_path / "airflow" / "airflow.db"
    monkeypatch.setattr(airflow_settings, "engine", create_engine(f"sqlite:///{missing}"))

    billing = next(r for r in in_airflow.get("/api/fleet").json() if r["qmgr"] == "BILLING")

    assert (billing["run_state"], billing["outcome_from"]) == (None, "report")
    assert not missing.exists()


def test_an_airflow_db_that_cannot_be_read_is_logged_once_and_the_page_still_shows(
    fleet, in_airflow, airflow_orm, caplog, monkeypatch
):
    from sqlalchemy import text

    with airflow_orm.begin() as connection:  # as a DB whose migration has not run yet
        connection.execute(text("ALTER TABLE dag_run_note RENAME TO dag_run_note_away"))
    monkeypatch.setattr(airflow_runs._Once, "told", False)
    try:
        with caplog.at_level(logging.DEBUG, logger=airflow_runs.__name__):
            first, second = in_airflow.get("/"), in_airflow.get("/api/fleet")
    finally:
        with airflow_orm.begin() as connection:
            connection.execute(text("ALTER TABLE dag_run_note_away RENAME TO dag_run_note"))

    assert (first.status_code, second.status_code) == (200, 200)
    assert "dry run: plan only, nothing saved or deleted" in first.text
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "could not read the runs in Airflow's DB" in warnings[0].getMessage()
