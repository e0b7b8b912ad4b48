"""The maintenance DAG's preflight task: the doctor's checks for hosts never collected, failing the run when one is
not ready (before anything is collected, saved or deleted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.settings import Settings
from mqjournal.snapshot import write_snapshots
from tests.doctor.test_doctor import Doctor, _host


def _settings(doctor: Doctor, tmp_path: Path, monkeypatch) -> Settings:
    conn = fleet_connections(doctor.config, doctor.service.host_keys, doctor.ports)[conn_id_for("ibmi1")]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for('ibmi1').upper()}", json.dumps(conn))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        yaml.safe_dump(
            {"hosts": [{"name": "ibmi1", "port": doctor.ports["ibmi1"], "queue_managers": [{"name": "TEST"}]}]}
        )
    )
    data = tmp_path / "data"
    return Settings(
        fleet_file=fleet,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )


def test_a_ready_host_passes_the_preflight(tmp_path: Path, monkeypatch):
    doctor = Doctor(tmp_path, [_host()])
    try:
        result = steps.preflight(_settings(doctor, tmp_path, monkeypatch), [], "QGPL")
    finally:
        doctor.stop()
    assert result.to_xcom() == {"checked": ["ibmi1"], "ready": True}


def test_a_host_that_is_not_ready_fails_the_run_naming_it(tmp_path: Path, monkeypatch, caplog):
    doctor = Doctor(tmp_path, [_host(release="7.3")])
    try:
        with pytest.raises(RuntimeError, match="hosts not ready for mqjournal: ibmi1"):
            steps.preflight(_settings(doctor, tmp_path, monkeypatch), [], "QGPL")
    finally:
        doctor.stop()
    assert "SAVE_FILE_OBJECTS" in caplog.text


def test_a_host_collected_before_is_not_checked_again(tmp_path: Path, monkeypatch):
    from tests.plan.builders import chain, names, snapshot

    doctor = Doctor(tmp_path, [_host(release="7.3")])
    try:
        settings = _settings(doctor, tmp_path, monkeypatch)
        write_snapshots(
            settings.snapshot_dir("earlier") / "ibmi1__QMTEST.jsonl", [snapshot(chain(names(1, 3)), host="ibmi1")]
        )
        result = steps.preflight(settings, [], "QGPL")
    finally:
        doctor.stop()
    assert result.to_xcom() == {"checked": [], "ready": True} and len(doctor.service.received) == 0
