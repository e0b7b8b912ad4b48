"""The fleet view's FastAPI app: the pages it serves, and that nothing but its icon is served without an Airflow
login allowed to read the maintenance DAG. Airflow's own `get_user` runs here; the auth manager is a stand-in, so
no Airflow metadata DB is needed (tests/fleetview/test_browser.py logs in to a real one)."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient

from mqjournal.fleetview.app import create_app
from tests.fleetview.conftest import RUN2


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


@pytest.fixture
def client(fleet, auth) -> TestClient:
    return TestClient(create_app(current_settings=lambda: fleet.settings))


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
