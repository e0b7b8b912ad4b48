"""Airflow connections for a fleet: what `airflow connections import` takes, one SSH connection per host."""

from __future__ import annotations

import json
import math
from pathlib import Path

import paramiko

from mqjournal.fleet import FleetConfig, conn_id_for
from mqjournal.settings import SshSettings

__all__ = ["conn_id_for", "fleet_connections", "write_connections"]


def fleet_connections(
    config: FleetConfig,
    host_keys: dict[str, paramiko.PKey],
    ports: dict[str, int] | None = None,
    ssh: SshSettings | None = None,
) -> dict[str, dict[str, object]]:
    """{conn_id: connection} with the client key inlined and each host's key pinned (no known_hosts needed)."""
    if config.client_key is None:
        raise ValueError("the fleet file names no client_key: an Airflow connection needs the key to log in with")
    private_key = config.client_key.read_text(encoding="utf-8")
    connect_timeout = (ssh or SshSettings()).connect_timeout
    connections: dict[str, dict[str, object]] = {}
    for host in config.hosts:
        key = host_keys[host.name]
        connections[conn_id_for(host.name)] = {
            "conn_type": "ssh",
            "description": f"IBM i partition {host.name}",
            "host": host.address,
            "port": (ports or {}).get(host.name, host.port),
            "login": config.user_for(host),
            "extra": json.dumps(
                {
                    "private_key": private_key,
                    "host_key": f"{key.get_name()} {key.get_base64()}",
                    "look_for_keys": "false",
                    # SSHHook reads it as a whole number of seconds.
                    "conn_timeout": str(math.ceil(connect_timeout)),
                }
            ),
        }
    return connections


def write_connections(path: Path, connections: dict[str, dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(connections, indent=2), encoding="utf-8")
    tmp.chmod(0o600)  # it carries a private key
    tmp.replace(path)
    return path
