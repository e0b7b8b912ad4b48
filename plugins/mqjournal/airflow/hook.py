"""IbmiHook: an IBM i partition reached through an Airflow SSH connection.

The ssh provider's SSHHook reads the connection (host, port, login, key or password, pinned host key, timeouts,
~/.ssh/config); this hook refuses a connection that would skip host-key verification, and connects with those
values through `ssh_connector`, the one verification path mqjournal has. SSHHook.get_conn is not used: it checks
the worker's ~/.ssh/known_hosts before the pinned key, so a host listed there would be accepted whatever the pin.
Here a pinned `host_key` is the only key accepted; without one, ~/.ssh/known_hosts must list the host.
"""

from __future__ import annotations

import getpass
import os
from functools import cached_property
from pathlib import Path
from typing import Literal

from airflow.providers.ssh.hooks.ssh import SSHHook
from airflow.sdk import BaseHook

from mqjournal.errors import MqJournalError
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import (
    DEFAULT_MAX_ANSWER_BYTES,
    ConnectFactory,
    HostKeyRejected,
    IbmiSession,
    RetryPolicy,
    ssh_connector,
)
from mqjournal.names import SCRATCH_DIRECTORY
from mqjournal.settings import SshSettings


class ConnectionMissing(MqJournalError):
    """No Airflow connection has the id a host is reached through; nothing was sent."""


class IbmiHook(BaseHook):
    """:param ssh_conn_id: an SSH connection with `host_key` pinned in its extras (or the host in known_hosts).
    :param ssh: timeouts and retries (mqjournal.settings); the connection's `conn_timeout` extra, when set, is its
        connect timeout instead of `ssh.connect_timeout`.
    :param audit_path: the JSON Lines audit log every command is appended to.
    :param max_answer_bytes: the most one command's answer may bring back (stdout and stderr, 64 MiB by default).
    :param sql_runner: how SQL reaches the partition's db2 utility, the fleet file's `sql_runner` for the host: "qsh"
        (the default, /QOpenSys/usr/bin/qsh -c "db2 ...", what a stock partition has) or "db2" (an admin's link).
    :param scratch_directory: the fleet file's `scratch_directory` for the host: where a save file is copied to a
        stream file for its download where the host needs that (/tmp/mqjournal by default)."""

    conn_name_attr = "ssh_conn_id"
    default_conn_name = "ibmi_default"
    conn_type = "ssh"
    hook_name = "IBM i over SSH"

    def __init__(
        self,
        *,
        ssh_conn_id: str = default_conn_name,
        ssh: SshSettings | None = None,
        audit_path: Path | None = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        sql_runner: Literal["qsh", "db2"] = "qsh",
        scratch_directory: str = SCRATCH_DIRECTORY,
    ) -> None:
        super().__init__()
        self.sql_runner = sql_runner
        self.scratch_directory = scratch_directory
        self.ssh_conn_id = ssh_conn_id
        self.ssh = ssh or SshSettings()
        self.audit_path = audit_path
        self.max_answer_bytes = max_answer_bytes

    @cached_property
    def ssh_hook(self) -> SSHHook:
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            # One connect attempt per call: IbmiSession owns retries, so backoff is not stacked twice.
            hook = SSHHook(ssh_conn_id=self.ssh_conn_id, conn_retry_attempts=1)
        except AirflowNotFoundException:
            raise ConnectionMissing(
                f"connection {self.ssh_conn_id}",
                "Airflow has no connection with this id",
                "create it (type ssh: the partition's address, port and user, the private_key and the pinned "
                "host_key in its extras), e.g. with `airflow connections import` of the file mqjournal writes "
                "(mqjournal.airflow.connections.fleet_connections)",
            ) from None
        if hook.no_host_key_check or hook.allow_host_key_change:
            raise HostKeyRejected(
                f"connection {self.ssh_conn_id}",
                "host key verification is disabled (no_host_key_check / allow_host_key_change)",
                "pin the partition's key in the connection's host_key extra and remove those extras",
            )
        return hook

    def get_conn(self) -> IbmiSession:
        return self.session(self.ssh_conn_id)

    def connector(self) -> ConnectFactory:
        """Connections made from the Airflow connection's values, host key verified as `ssh_connector` does."""
        ssh = self.ssh_hook
        pinned = ssh.host_key
        extra = self.get_connection(self.ssh_conn_id).extra_dejson
        if ssh.port is None:
            raise ValueError(f"connection {self.ssh_conn_id} has no port: give the partition's SSH port")
        return ssh_connector(
            address=ssh.remote_host,
            port=int(ssh.port),
            # Without a login paramiko logs in as the local user: said here, as the transport takes a name.
            user=ssh.username or getpass.getuser(),
            key=ssh.pkey,
            key_file=Path(os.path.expanduser(ssh.key_file)) if ssh.key_file else None,
            passphrase=extra.get("private_key_passphrase") if ssh.key_file else None,
            password=ssh.password.strip() if ssh.password else None,
            host_key=f"{pinned.get_name()} {pinned.get_base64()}" if pinned is not None else None,
            # Read only without a pin, as OpenSSH would: a pinned key is the only one accepted.
            known_hosts=None if pinned is not None else Path(os.path.expanduser("~/.ssh/known_hosts")),
            timeout=float(ssh.conn_timeout or self.ssh.connect_timeout),
            look_for_keys=ssh.look_for_keys,
            proxy_command=ssh.host_proxy_cmd,
            disabled_algorithms=ssh.disabled_algorithms,
            compress=ssh.compress,
            keepalive_interval=ssh.keepalive_interval,
        )

    def session(self, host_name: str, *, linux: bool = False) -> IbmiSession:
        """The session to `host_name`; `linux`: a Linux host, whose user names are case-sensitive (an IBM i user
        profile is upper case, however the connection spells it)."""
        ssh = self.ssh_hook
        return IbmiSession(
            host_name,
            (ssh.username or "") if linux else (ssh.username or "").upper(),
            self.connector(),
            audit=AuditLog(self.audit_path),
            command_timeout=self.ssh.command_timeout,
            retry=RetryPolicy.of(self.ssh),
            max_answer_bytes=self.max_answer_bytes,
            sql_runner=self.sql_runner,
            scratch_directory=self.scratch_directory,
        )
