"""The IBM i hook inside Airflow: credentials and the pinned host key come from an Airflow SSH connection."""

from __future__ import annotations

import json

import pytest

from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.hook import IbmiHook
from mqjournal.ibmi.transport import Command, HostKeyRejected
from tests.conftest import SimFleet


def as_env(monkeypatch, conn_id: str, conn: dict) -> None:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))


def test_a_session_from_an_airflow_connection_runs_commands_on_the_partition(sim_fleet: SimFleet, monkeypatch):
    connections = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)
    conn_id = conn_id_for("ibmi1")
    as_env(monkeypatch, conn_id, connections[conn_id])
    with IbmiHook(ssh_conn_id=conn_id).session("ibmi1") as session:
        first = session.run(Command("uname", idempotent=True))
        second = session.run(Command("system 'CRTSAVF FILE(QGPL/VIAHOOK)'", idempotent=False))
    assert first.stdout == "OS400\n"
    assert second.exit_status == 0 and second.msg_ids == ["CPC9801"]


def test_a_connection_with_host_key_checking_disabled_is_refused(sim_fleet: SimFleet, monkeypatch):
    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    extra = json.loads(conn["extra"])
    extra.pop("host_key")
    extra["no_host_key_check"] = "true"
    as_env(monkeypatch, "ibmi_unsafe", {**conn, "extra": json.dumps(extra)})
    with pytest.raises(HostKeyRejected, match="pin the partition's key"):
        IbmiHook(ssh_conn_id="ibmi_unsafe").session("ibmi1")


def test_a_pinned_host_key_that_does_not_match_is_refused(sim_fleet: SimFleet, monkeypatch):
    import paramiko

    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    extra = json.loads(conn["extra"])
    forged = paramiko.ECDSAKey.generate()
    extra["host_key"] = f"{forged.get_name()} {forged.get_base64()}"
    as_env(monkeypatch, "ibmi_forged", {**conn, "extra": json.dumps(extra)})
    with IbmiHook(ssh_conn_id="ibmi_forged").session("ibmi1") as session:
        with pytest.raises(HostKeyRejected):
            session.run(Command("uname", idempotent=True))
