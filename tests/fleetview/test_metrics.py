"""The metrics endpoint as the Airflow API server serves it: the fleet view's app (mounted under /mqjournal), scraped
as Prometheus scrapes it, with its bearer token, and read back with prometheus_client's parser of the text format.
Its figures are those of the plan, the snapshots and the catalog of the fleet of conftest.py: BILLING on ibmi-prod2,
PAYROLL on ibmi-prod1, newest plan run 2."""

from __future__ import annotations

import socket
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from mqjournal.fleetview.app import create_app
from mqjournal.fleetview.data import AirflowRun
from mqjournal.planrows import read_queue_managers, read_receivers
from mqjournal.policy import Policy
from mqjournal.settings import Settings
from mqjournal.snapshot import read_snapshots
from mqjournal.vocabulary import ReceiverStatus
from tests.fleetview.conftest import COLLECTED1, MB, RUN2
from tests.fleetview.test_app import StandInAuthManager, StandInRuns

REPO = Path(__file__).resolve().parents[2]
TOKEN = "the-scrape-token-of-this-test"
BILLING, PAYROLL = ("ibmi-prod2", "BILLING"), ("ibmi-prod1", "PAYROLL")

Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


@pytest.fixture
def auth(monkeypatch):
    from airflow.api_fastapi import app as airflow_app

    manager = StandInAuthManager({"mq_journal_maintenance"})
    monkeypatch.setattr(airflow_app._AuthManagerState, "instance", manager)
    return manager


@pytest.fixture
def runs() -> StandInRuns:
    return StandInRuns({RUN2: AirflowRun(run_id=RUN2, state="success", note="approved by admin: 1 receivers deleted")})


@pytest.fixture
def client(fleet, auth, runs) -> TestClient:
    settings = fleet.settings.model_copy(update={"metrics_token": SecretStr(TOKEN)})
    return TestClient(create_app(current_settings=lambda: settings, dag_runs=runs))


def scrape(client: TestClient) -> Samples:
    """Every sample of one scrape, by metric name, then by its labels (sorted (name, value) pairs)."""
    from prometheus_client.parser import text_string_to_metric_families

    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    samples: Samples = defaultdict(dict)
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[sample.name][tuple(sorted(sample.labels.items()))] = sample.value
    return samples


def per_queue_manager(samples: Samples, name: str, **labels: str) -> dict[tuple[str, str], float]:
    """{(host, qmgr): value} of one metric, among its series with `labels`."""
    found = {}
    for key, value in samples[name].items():
        series = dict(key)
        if all(series.get(k) == v for k, v in labels.items()):
            found[(series["host"], series["qmgr"])] = value
    return found


def test_each_series_names_the_queue_manager_as_ibms_exporter_does_with_its_host_and_library(client):
    samples = scrape(client)

    series = {dict(key)["qmgr"]: dict(key) for key in samples["ibmmq_qmgr_journal_receivers_online_bytes"]}
    assert series == {
        "BILLING": {"qmgr": "BILLING", "platform": "OS400", "host": "ibmi-prod2", "library": "QMBILL01"},
        "PAYROLL": {"qmgr": "PAYROLL", "platform": "OS400", "host": "ibmi-prod1", "library": "QMPAYROLL"},
    }


def test_receivers_online_and_their_bytes_are_the_newest_plans_but_the_freed(client, fleet):
    online: dict[tuple[str, str], list[int]] = defaultdict(list)
    for r in read_receivers(fleet.settings.plan_dir(RUN2)):
        if r.status != ReceiverStatus.FREED:
            online[(r.host, r.qmgr)].append(r.size_bytes)

    samples = scrape(client)

    assert per_queue_manager(samples, "ibmmq_qmgr_journal_receivers_online") == {k: len(v) for k, v in online.items()}
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_receivers_online_bytes") == {
        k: sum(v) for k, v in online.items()
    }
    # PAYROLL's two freed receivers are not online: 6 of 8, 3 MB each.
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_receivers_online_bytes") == {
        BILLING: 12 * 2 * MB,
        PAYROLL: 6 * 3 * MB,
    }


def test_bytes_saved_and_in_the_backup_store_are_the_catalogs(client, fleet):
    samples = scrape(client)

    saved = sum(r.size_bytes for r in fleet.catalog.receivers("ibmi-prod2", "QMBILL01"))
    stored = sum(s.size_bytes for s in fleet.catalog.stored_objects("ibmi-prod2", "BILLING"))
    assert (saved, stored) == (4 * 2 * MB, 8 * MB)
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_receivers_saved_bytes") == {BILLING: saved, PAYROLL: 0}
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_backup_store_bytes") == {BILLING: stored, PAYROLL: 0}


def test_the_recovery_points_ages_are_the_snapshots_at_its_collection_and_amqjrninfs_the_plans(client, fleet):
    expected: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    for host, library in (("ibmi-prod2", "QMBILL01"), ("ibmi-prod1", "QMPAYROLL")):
        (s,) = read_snapshots(fleet.settings.snapshot_dir(RUN2) / f"{host}__{library}.jsonl")
        assert s.startup_recovery is not None and s.media_recovery is not None
        key = (s.host, s.qmgr)
        expected["startup"][key] = (s.collected_at - s.startup_recovery.at).total_seconds()
        expected["media"][key] = (s.collected_at - s.media_recovery.at).total_seconds()
        expected["startup_at"][key] = s.startup_recovery.at.timestamp()
        expected["media_at"][key] = s.media_recovery.at.timestamp()
    planned = {
        (q.host, q.qmgr): q.oldest_needed_age_seconds for q in read_queue_managers(fleet.settings.plan_dir(RUN2))
    }

    samples = scrape(client)

    assert per_queue_manager(samples, "ibmmq_qmgr_journal_startup_recovery_point_age_seconds") == expected["startup"]
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_media_recovery_point_age_seconds") == expected["media"]
    assert (
        per_queue_manager(samples, "ibmmq_qmgr_journal_startup_recovery_point_timestamp_seconds")
        == expected["startup_at"]
    )
    assert (
        per_queue_manager(samples, "ibmmq_qmgr_journal_media_recovery_point_timestamp_seconds") == expected["media_at"]
    )
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_oldest_needed_age_seconds") == planned
    assert planned == {BILLING: 46 * 3600, PAYROLL: 42 * 3600}


def test_the_last_verified_backup_is_per_location_and_absent_where_there_is_none(client):
    saved_at = COLLECTED1 + timedelta(minutes=10)  # conftest: run 1 saved and verified BILLING's first 4 receivers

    samples = scrape(client)

    name = "ibmmq_qmgr_journal_last_verified_backup_timestamp_seconds"
    assert per_queue_manager(samples, name, location="backup_store") == {
        BILLING: (saved_at + timedelta(minutes=2)).timestamp()
    }
    assert per_queue_manager(samples, name, location="partition") == {BILLING: saved_at.timestamp()}


def test_a_save_file_removed_from_the_partition_after_its_copy_is_no_backup_on_the_partition(client, fleet):
    fleet.catalog.record_removed_from_host(
        "ibmi-prod2", "QGPL", "MQJAAAAAA0", "ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf", "cleanup-run"
    )

    samples = scrape(client)

    name = "ibmmq_qmgr_journal_last_verified_backup_timestamp_seconds"
    assert per_queue_manager(samples, name, location="partition") == {}
    assert set(per_queue_manager(samples, name, location="backup_store")) == {BILLING}


def test_the_last_runs_state_and_outcome_are_airflows_and_the_light_and_alerts_are_the_fleet_views(client):
    samples = scrape(client)

    state = "ibmmq_qmgr_journal_last_run_state"
    assert per_queue_manager(samples, state, state="success") == {BILLING: 1.0, PAYROLL: 1.0}
    assert per_queue_manager(samples, state, state="failed") == {BILLING: 0.0, PAYROLL: 0.0}
    info = {
        dict(key)["qmgr"]: (dict(key)["run_id"], dict(key)["outcome"])
        for key in samples["ibmmq_qmgr_journal_last_run_info"]
    }
    assert info == dict.fromkeys(("BILLING", "PAYROLL"), (RUN2, "approved by admin: 1 receivers deleted"))
    # MEDIA_POINT_OLD (a damaged object) is red, STARTUP_POINT_OLD amber.
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_severity") == {BILLING: 2, PAYROLL: 1}
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_alert", alert="MEDIA_POINT_OLD") == {BILLING: 1}
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_alert", alert="STARTUP_POINT_OLD") == {PAYROLL: 1}
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_blocked") == {BILLING: 0, PAYROLL: 0}


def test_without_the_run_in_airflow_its_state_is_unknown_and_the_outcome_the_reports(client, runs):
    runs.clear()

    samples = scrape(client)

    assert per_queue_manager(samples, "ibmmq_qmgr_journal_last_run_state", state="unknown") == {
        BILLING: 1.0,
        PAYROLL: 1.0,
    }
    outcomes = {dict(key)["outcome"] for key in samples["ibmmq_qmgr_journal_last_run_info"]}
    assert outcomes == {"dry run: plan only, nothing saved or deleted"}


def test_the_asps_capacity_and_free_space_are_the_plans(client):
    samples = scrape(client)

    assert per_queue_manager(samples, "ibmmq_qmgr_journal_asp_capacity_bytes", asp="2") == {
        BILLING: 1000 * MB,
        PAYROLL: 1000 * MB,
    }
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_asp_free_bytes", asp="2") == {
        BILLING: 500 * MB,
        PAYROLL: 500 * MB,
    }


def test_the_days_until_an_asp_reaches_its_limit_and_is_full_are_the_forecasts(client, fleet):
    from mqjournal import forecast
    from tests.fleetview.test_data import fill_payrolls_asp

    assert "ibmmq_qmgr_journal_asp_full_days" not in scrape(client)  # two collections: no date yet
    fill_payrolls_asp(fleet, [500, 540, 580, 620])  # PAYROLL's ASP 2: 40 MB a day, 90% in 7 days, full in 9.5

    samples = scrape(client)

    payroll = forecast.read_forecasts(fleet.settings.snapshots, Policy())[forecast.AspKey("ibmi-prod1", 2)]
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_asp_limit_days", asp="2") == {
        PAYROLL: pytest.approx(payroll.days_to_limit)
    }
    assert per_queue_manager(samples, "ibmmq_qmgr_journal_asp_full_days", asp="2") == {
        PAYROLL: pytest.approx(payroll.days_to_full)
    }
    assert (payroll.days_to_limit, payroll.days_to_full) == (pytest.approx(7), pytest.approx(9.5))


def test_prometheus_scrapes_its_jobs_path_over_http_from_the_app_mounted_as_the_api_server_mounts_it(fleet, auth, runs):
    """docker/prometheus/prometheus.yml's job, against the app mounted under /mqjournal as Airflow's API server mounts
    a plugin's app (`app.mount(url_prefix, app)`), served by uvicorn on loopback."""
    import urllib.request

    import yaml
    from fastapi import FastAPI
    from prometheus_client.parser import text_string_to_metric_families

    from mqjournal.fleetview.app import MOUNT

    (job,) = yaml.safe_load((REPO / "docker" / "prometheus" / "prometheus.yml").read_text())["scrape_configs"]
    settings = fleet.settings.model_copy(update={"metrics_token": SecretStr(TOKEN)})
    api_server = FastAPI()
    api_server.mount(MOUNT, create_app(current_settings=lambda: settings, dag_runs=runs))

    with served(api_server) as base:
        request = urllib.request.Request(base + job["metrics_path"], headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read().decode()

    online = {
        (s.labels["host"], s.labels["qmgr"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "ibmmq_qmgr_journal_receivers_online_bytes"
    }
    assert online == {BILLING: 12 * 2 * MB, PAYROLL: 6 * 3 * MB}


@contextmanager
def served(app) -> Iterator[str]:
    """`app` served over HTTP on a free loopback port, in a thread; yields its base URL."""
    import uvicorn

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        listening.close()


# --- who may scrape ----------------------------------------------------------------------------------------------


def test_a_scrape_without_a_token_is_refused(client):
    answer = client.get("/metrics")

    assert answer.status_code == 401
    assert "BILLING" not in answer.text


def test_a_wrong_token_is_refused(client):
    answer = client.get("/metrics", headers={"Authorization": "Bearer not-the-scrape-token"})

    assert answer.status_code in (401, 403)
    assert "BILLING" not in answer.text


@pytest.fixture
def bare_client(tmp_path, auth, runs) -> TestClient:
    """The app on an empty data folder, with the scrape token: for who may scrape, not what is scraped."""
    settings = Settings.from_env({"MQJOURNAL_DATA_DIR": str(tmp_path / "data"), "MQJOURNAL_METRICS_TOKEN": TOKEN})
    return TestClient(create_app(current_settings=lambda: settings, dag_runs=runs))


def test_an_airflow_login_that_may_read_the_maintenance_dag_may_read_the_metrics(bare_client, auth):
    client = bare_client
    assert client.get("/metrics", headers={"Authorization": "Bearer good"}).status_code == 200
    client.cookies.set("_token", "good")  # the Airflow UI's login, as a browser opening /mqjournal/metrics sends it
    assert client.get("/metrics").status_code == 200
    auth.readable = {"some_other_dag"}
    assert client.get("/metrics", headers={"Authorization": "Bearer good"}).status_code == 403


def test_without_a_scrape_token_set_only_an_airflow_login_reads_the_metrics(tmp_path, auth, runs):
    settings = Settings.from_env({"MQJOURNAL_DATA_DIR": str(tmp_path / "data")})
    client = TestClient(create_app(current_settings=lambda: settings, dag_runs=runs))

    assert client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code in (401, 403)
    assert client.get("/metrics", headers={"Authorization": "Bearer good"}).status_code == 200
