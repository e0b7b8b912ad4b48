"""The deployment's monitoring (docs/monitoring.md), checked without Docker: Prometheus scrapes the route the fleet
view's app serves, on the API server, with the token the API server checks; Grafana is provisioned with that
Prometheus and the dashboard; the dashboard's and the alert rules' queries name only series and labels the endpoint
exposes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from mqjournal.fleetview import metrics
from mqjournal.fleetview.app import MOUNT
from tests.deploy.test_compose_topology import DOCKER, INTERPOLATION, compose, environment, mounts, service, settings_of

SERIES = re.compile(r"\bibmmq_\w+")
MATCHER = re.compile(r"\b(\w+)\s*(?:=~|!~|!=|=)\s*\"")
GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")


def exposed() -> tuple[set[str], set[str]]:
    """The metric names the endpoint serves, and every label name of them."""
    families = metrics.families([])
    return {f.name for f in families}, {label for f in families for label in f._labelnames}


def prometheus_config() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text(encoding="utf-8"))


def in_container(service_name: str, path: str) -> Path:
    """The repository file a service sees at `path` through its bind mounts of docker/ (AssertionError if none)."""
    for source, target in mounts(service_name):
        if source.startswith("./") and (path == target or path.startswith(target.rstrip("/") + "/")):
            return DOCKER / source / Path(path).relative_to(target)
    raise AssertionError(f"{service_name} mounts nothing of docker/ at {path}")


def container_port(service_name: str) -> str:
    return service(service_name)["ports"][0].split(":")[-1]


def dashboard() -> dict[str, Any]:
    return json.loads((DOCKER / "grafana" / "dashboards" / "mqjournal.json").read_text(encoding="utf-8"))


def dashboard_queries() -> list[str]:
    board = dashboard()
    queries = [t["expr"] for panel in board["panels"] for t in panel.get("targets", [])]
    queries += [v["definition"] for v in board["templating"]["list"]]
    return queries


def rule_queries() -> list[str]:
    rules = yaml.safe_load((DOCKER / "prometheus" / "rules.yml").read_text(encoding="utf-8"))
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


def assert_only_exposed(queries: list[str]) -> None:
    names, labels = exposed()
    for query in queries:
        unknown = set(SERIES.findall(query)) - names
        assert not unknown, f"{query} names {unknown}, which /mqjournal/metrics does not serve"
        used = set(MATCHER.findall(query)) | {
            word.strip() for group in GROUPING.findall(query) for word in group.split(",") if word.strip()
        }
        # __name__ is Prometheus's own label of every series: the dashboard's variables select both platforms' by it.
        assert used <= labels | {"job", "instance", "__name__"}, (
            f"{query} uses labels {used - labels} the series do not have"
        )


def test_prometheus_scrapes_the_metrics_route_of_the_api_server():
    (job,) = [j for j in prometheus_config()["scrape_configs"] if j["job_name"] == "mqjournal"]

    assert job["metrics_path"] == MOUNT + metrics.PATH
    (target,) = job["static_configs"][0]["targets"]
    host, port = target.split(":")
    assert (host, port) == ("airflow-apiserver", container_port("airflow-apiserver"))
    assert service("prometheus")["depends_on"]["airflow-apiserver"]["condition"] == "service_healthy"


def test_prometheus_presents_the_token_the_api_server_checks_from_a_compose_secret_never_written():
    (job,) = [j for j in prometheus_config()["scrape_configs"] if j["job_name"] == "mqjournal"]

    secret = Path(job["authorization"]["credentials_file"])
    assert job["authorization"]["type"] == "Bearer" and secret.parent == Path("/run/secrets")
    assert secret.name in service("prometheus")["secrets"]
    variable = compose()["secrets"][secret.name]["environment"]
    checked = INTERPOLATION.fullmatch(environment("airflow-apiserver")["MQJOURNAL_METRICS_TOKEN"])
    assert checked is not None and checked["name"] == variable
    assert settings_of("airflow-apiserver").metrics_token is not None
    # Only the API server checks it: the workers, which run the tasks, are not given it.
    assert "MQJOURNAL_METRICS_TOKEN" not in environment("airflow-worker")


def test_prometheus_reads_its_configuration_and_rules_from_the_repository():
    command = service("prometheus")["command"]
    (config,) = [c.split("=", 1)[1] for c in command if c.startswith("--config.file=")]
    assert in_container("prometheus", config).resolve() == (DOCKER / "prometheus" / "prometheus.yml").resolve()
    for rules in prometheus_config()["rule_files"]:
        assert in_container("prometheus", rules).is_file(), rules


def test_the_alert_rules_name_only_series_and_labels_the_endpoint_serves():
    assert_only_exposed(rule_queries())


def test_grafana_is_provisioned_with_the_prometheus_service_and_the_dashboard():
    provisioning = "/etc/grafana/provisioning"
    datasources = yaml.safe_load(in_container("grafana", f"{provisioning}/datasources/prometheus.yaml").read_text())
    (source,) = datasources["datasources"]
    assert source["type"] == "prometheus"
    assert source["url"] == f"http://prometheus:{container_port('prometheus')}"

    providers = yaml.safe_load(in_container("grafana", f"{provisioning}/dashboards/mqjournal.yaml").read_text())
    (provider,) = providers["providers"]
    folder = in_container("grafana", provider["options"]["path"])
    assert (folder / "mqjournal.json").resolve() == (DOCKER / "grafana" / "dashboards" / "mqjournal.json").resolve()

    used = {t["datasource"]["uid"] for panel in dashboard()["panels"] for t in panel.get("targets", [])}
    assert used == {source["uid"]}


def test_the_dashboards_queries_name_only_series_and_labels_the_endpoint_serves():
    queries = dashboard_queries()

    assert_only_exposed(queries)
    shown = {name for query in queries for name in SERIES.findall(query)}
    for figure in (
        "ibmmq_qmgr_journal_receivers_online_bytes",
        "ibmmq_qmgr_journal_receivers_saved_bytes",
        "ibmmq_qmgr_journal_backup_store_bytes",
        "ibmmq_qmgr_journal_startup_recovery_point_timestamp_seconds",
        "ibmmq_qmgr_journal_media_recovery_point_timestamp_seconds",
        "ibmmq_qmgr_journal_last_verified_backup_timestamp_seconds",
        "ibmmq_qmgr_journal_last_run_state",
        # The Linux queue managers' series (#32), in MQ's own terms.
        "ibmmq_qmgr_linear_log_severity",
        "ibmmq_qmgr_linear_log_restart_behind_extents",
        "ibmmq_qmgr_linear_log_media_behind_extents",
        "ibmmq_qmgr_linear_log_bytes",
        "ibmmq_qmgr_linear_log_extents_to_release",
        "ibmmq_qmgr_linear_log_last_copy_age_seconds",
        "ibmmq_qmgr_linear_log_alert",
        "ibmmq_qmgr_linear_log_last_run_state",
    ):
        assert figure in shown, f"the dashboard does not show {figure}"


def test_the_dashboards_choices_and_red_and_amber_counts_take_both_platforms():
    board = dashboard()
    for variable in board["templating"]["list"]:
        assert {"ibmmq_qmgr_journal_severity", "ibmmq_qmgr_linear_log_severity"} <= set(
            SERIES.findall(variable["definition"])
        ), f"the {variable['name']} choice leaves a platform's queue managers out"
    counts = {p["title"]: p["targets"][0]["expr"] for p in board["panels"] if p["type"] == "stat"}
    for title in ("Queue managers red", "Queue managers amber"):
        assert {"ibmmq_qmgr_journal_severity", "ibmmq_qmgr_linear_log_severity"} <= set(SERIES.findall(counts[title]))
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids)), "two panels share an id"


def test_the_monitoring_images_are_pinned():
    for name in ("prometheus", "grafana"):
        image, _, tag = service(name)["image"].partition(":")
        assert tag and tag != "latest", f"{name} runs {image} unpinned"
