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
    with IbmiHook(ssh_conn_id="ibmi_forged").session("ibmi1") as session, pytest.raises(HostKeyRejected):
        session.run(Command("uname", idempotent=True))


# --- the pinned host key wins over the worker's ~/.ssh/known_hosts ---------------------------------------------


def _worker_known_hosts(tmp_path, monkeypatch, sim_fleet: SimFleet, key) -> None:
    """A worker whose ~/.ssh/known_hosts lists `key` for the simulated host."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "known_hosts").write_text(
        f"[127.0.0.1]:{sim_fleet.ports['ibmi1']} {key.get_name()} {key.get_base64()}\n"
    )
    monkeypatch.setenv("HOME", str(home))


def _ed25519():
    import base64

    import paramiko
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    text = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    kind, blob = text.split()[:2]
    return paramiko.PKey.from_type_string(kind, base64.b64decode(blob))


def _pinning(monkeypatch, sim_fleet: SimFleet, conn_id: str, key) -> None:
    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    extra = json.loads(conn["extra"])
    extra["host_key"] = f"{key.get_name()} {key.get_base64()}"
    as_env(monkeypatch, conn_id, {**conn, "extra": json.dumps(extra)})


@pytest.mark.parametrize("pin", ["ecdsa", "ed25519"], ids=["pin-of-the-same-type", "pin-of-another-type"])
def test_a_host_in_the_workers_known_hosts_that_does_not_match_the_pin_is_refused(
    sim_fleet: SimFleet, monkeypatch, tmp_path, pin
):
    import paramiko

    presented = sim_fleet.service.host_keys["ibmi1"]
    _worker_known_hosts(tmp_path, monkeypatch, sim_fleet, presented)  # the impostor is listed there
    pinned = paramiko.ECDSAKey.generate() if pin == "ecdsa" else _ed25519()
    _pinning(monkeypatch, sim_fleet, "ibmi_pinned", pinned)
    with IbmiHook(ssh_conn_id="ibmi_pinned").session("ibmi1") as session, pytest.raises(HostKeyRejected) as caught:
        session.run(Command("uname", idempotent=True))
    message = str(caught.value)
    assert presented.fingerprint in message and pinned.fingerprint in message and "pinned" in message
    assert session.round_trips == 0


def test_the_pinned_key_is_accepted_whatever_the_workers_known_hosts_lists(sim_fleet: SimFleet, monkeypatch, tmp_path):
    import paramiko

    _worker_known_hosts(tmp_path, monkeypatch, sim_fleet, paramiko.ECDSAKey.generate())
    _pinning(monkeypatch, sim_fleet, "ibmi_pinned", sim_fleet.service.host_keys["ibmi1"])
    with IbmiHook(ssh_conn_id="ibmi_pinned").session("ibmi1") as session:
        assert session.run(Command("uname", idempotent=True)).stdout == "OS400\n"


def test_without_a_pin_the_workers_known_hosts_verifies_the_host(sim_fleet: SimFleet, monkeypatch, tmp_path):
    import paramiko

    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    extra = json.loads(conn["extra"])
    extra.pop("host_key")
    as_env(monkeypatch, "ibmi_known", {**conn, "extra": json.dumps(extra)})

    _worker_known_hosts(tmp_path, monkeypatch, sim_fleet, sim_fleet.service.host_keys["ibmi1"])
    with IbmiHook(ssh_conn_id="ibmi_known").session("ibmi1") as session:
        assert session.run(Command("uname", idempotent=True)).stdout == "OS400\n"

    other = paramiko.ECDSAKey.generate()
    _worker_known_hosts(tmp_path / "other", monkeypatch, sim_fleet, other)
    with IbmiHook(ssh_conn_id="ibmi_known").session("ibmi1") as session, pytest.raises(HostKeyRejected) as caught:
        session.run(Command("uname", idempotent=True))
    assert other.fingerprint in str(caught.value)
