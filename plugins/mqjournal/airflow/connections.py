"""Airflow connections for a fleet: what `airflow connections import` takes, one SSH connection per host.

A host's connection id is `mqjournal.fleet.conn_id_for`: the host name with '-' and '.' as '_', after `ibmi_` unless
the name already starts with it (`ibmi-prod1` -> `ibmi_prod1`, `prod1` -> `ibmi_prod1`). Connections made under the
rule before it (`ibmi_` always: `ibmi_ibmi_prod1`) keep working: `resolve_conn_id` reads the old id when the new one
does not exist, and says once that it should be renamed.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable
from pathlib import Path

import paramiko

from mqjournal.fleet import FleetConfig, HostConfig, conn_id_for, legacy_conn_id_for
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.settings import SshSettings

__all__ = ["conn_id_for", "fleet_connections", "legacy_conn_id_for", "resolve_conn_id", "write_connections"]

log = logging.getLogger(__name__)

_told_to_rename: set[str] = set()
_told_lock = threading.Lock()


def connection_exists(conn_id: str) -> bool:
    """Whether Airflow (its database, environment or secrets backend) has a connection with this id."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return False
    return True


def resolve_conn_id(host: str, *, exists: Callable[[str], bool] = connection_exists) -> str:
    """The id of the connection to reach `host` through: `conn_id_for(host)`, or, when no connection has that id
    but one has the id the former rule gave (`ibmi_ibmi_prod1`), that one, logging once per process that it should
    be renamed. With neither, the new id, so that the error names the connection to create."""
    new, old = conn_id_for(host), legacy_conn_id_for(host)
    if new == old or exists(new) or not exists(old):
        return new
    with _told_lock:
        first = old not in _told_to_rename
        _told_to_rename.add(old)
    if first:
        log.warning(
            "%s: reached through the Airflow connection %s, named by mqjournal's former rule; rename it %s "
            "(Admin > Connections, or `airflow connections import` of a file with the new id): the old id is read "
            "only while %s does not exist",
            host,
            old,
            new,
            new,
        )
    return old


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
    hosts: list[HostConfig | LinuxHostConfig] = [*config.hosts, *config.linux_hosts]
    for host in hosts:
        key = host_keys[host.name]
        kind = "Linux host" if isinstance(host, LinuxHostConfig) else "IBM i partition"
        connections[conn_id_for(host.name)] = {
            "conn_type": "ssh",
            "description": f"{kind} {host.name}",
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
