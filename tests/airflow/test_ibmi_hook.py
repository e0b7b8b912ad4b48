"""The IBM i hook inside Airflow: credentials and the pinned host key come from an Airflow SSH connection."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow import connections
from mqjournal.airflow.connections import conn_id_for, fleet_connections, resolve_conn_id
from mqjournal.airflow.hook import ConnectionMissing, IbmiHook
from mqjournal.airflow.sessions import host_session
from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.ibmi.commands import Command
from mqjournal.ibmi.transport import HostKeyRejected
from mqjournal.settings import Settings
from tests.conftest import SimFleet, fleet_config, serve


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


# --- connection ids that read well, and the ones an older mqjournal made ----------------------------------------


@pytest.fixture
def prod1(tmp_path, monkeypatch) -> Iterator[tuple[SimFleet, Settings]]:
    """A partition named ibmi-prod1 (as in the demo's fleet), and the settings a DAG task reaches it with."""
    config = fleet_config(
        tmp_path, [HostConfig(name="ibmi-prod1", port=0, queue_managers=[QueueManagerConfig(name="TEST")])]
    )
    with serve(config) as fleet:
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(yaml.safe_dump({"hosts": [{"name": "ibmi-prod1", "port": fleet.ports["ibmi-prod1"]}]}))
        data = tmp_path / "data"
        yield (
            fleet,
            Settings(
                fleet_file=fleet_file,
                data_dir=data,
                catalog_url=f"sqlite:///{data / 'catalog.db'}",
                spark_app=Path("unused"),
                spark_conn_id="spark_default",
                schedule=None,
            ),
        )


def test_a_host_named_ibmi_prod1_has_the_connection_ibmi_prod1(prod1):
    fleet, _ = prod1
    connections = fleet_connections(fleet.config, fleet.service.host_keys, fleet.ports)
    assert list(connections) == ["ibmi_prod1"]
    assert conn_id_for("ibmi-prod1") == "ibmi_prod1" and conn_id_for("prod-1") == "ibmi_prod_1"


def test_a_task_reaches_the_host_through_its_new_connection_id(prod1, monkeypatch, caplog):
    fleet, settings = prod1
    (conn,) = fleet_connections(fleet.config, fleet.service.host_keys, fleet.ports).values()
    as_env(monkeypatch, "ibmi_prod1", conn)
    with host_session(settings, "ibmi-prod1") as session:
        assert session.run(Command("uname", idempotent=True)).stdout == "OS400\n"
    assert not [r for r in caplog.records if "rename" in r.getMessage()]


def test_a_connection_under_the_former_id_is_still_read_and_named_for_renaming_once(prod1, monkeypatch, caplog):
    fleet, settings = prod1
    (conn,) = fleet_connections(fleet.config, fleet.service.host_keys, fleet.ports).values()
    as_env(monkeypatch, "ibmi_ibmi_prod1", conn)  # made by an older mqjournal: no ibmi_prod1 exists
    monkeypatch.setattr(connections, "_told_to_rename", set())  # a fresh worker process
    caplog.set_level(logging.WARNING, logger="mqjournal.airflow.connections")
    for _ in range(2):
        with host_session(settings, "ibmi-prod1") as session:
            assert session.run(Command("uname", idempotent=True)).stdout == "OS400\n"
    (told,) = [r.getMessage() for r in caplog.records if r.name == "mqjournal.airflow.connections"]
    assert "ibmi_ibmi_prod1" in told and "rename it ibmi_prod1" in told


def test_the_new_connection_id_wins_over_the_former_one(monkeypatch):
    existing = {"ibmi_prod1", "ibmi_ibmi_prod1"}
    assert resolve_conn_id("ibmi-prod1", exists=existing.__contains__) == "ibmi_prod1"
    assert resolve_conn_id("ibmi-prod1", exists={"ibmi_ibmi_prod1"}.__contains__) == "ibmi_ibmi_prod1"
    # With neither, the new id: the error names the connection to create.
    assert resolve_conn_id("ibmi-prod1", exists=set().__contains__) == "ibmi_prod1"


def test_a_missing_connection_is_named_with_what_to_create():
    with pytest.raises(ConnectionMissing, match=r"connection ibmi_nowhere.*airflow connections import"):
        IbmiHook(ssh_conn_id="ibmi_nowhere").session("nowhere")
