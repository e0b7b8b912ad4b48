"""What the DAG steps' tests share: settings whose fleet is the simulator's host ibmi1, reached as the DAGs reach
a partition, through an Airflow connection (here in the environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.settings import Settings
from tests.conftest import SimFleet


def ibmi1_settings(
    sim_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, queue_managers: list[dict] | None = None
) -> Settings:
    """A fleet file of ibmi1 alone (with these queue managers, else those the host has), its connection, and a
    data folder and SQLite catalog in tmp_path."""
    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for('ibmi1').upper()}", json.dumps(conn))
    host: dict = {"name": "ibmi1", "port": sim_fleet.ports["ibmi1"]}
    if queue_managers is not None:
        host["queue_managers"] = queue_managers
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"hosts": [host]}))
    data = tmp_path / "data"
    return Settings(
        fleet_file=fleet,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )


@pytest.fixture
def settings(sim_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return ibmi1_settings(sim_fleet, tmp_path, monkeypatch)
