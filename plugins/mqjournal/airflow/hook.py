"""IbmiHook: an IBM i partition reached through an Airflow SSH connection.

The ssh provider's SSHHook owns paramiko and the secrets (key, passphrase, pinned host key) inside Airflow; this
hook only refuses a connection that would skip host-key verification and hands SSHHook's client to an IbmiSession.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from airflow.providers.ssh.hooks.ssh import SSHHook
from airflow.sdk import BaseHook

from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import HostKeyRejected, IbmiSession


class IbmiHook(BaseHook):
    """:param ssh_conn_id: an SSH connection with `host_key` pinned in its extras (or the host in known_hosts).
    :param command_timeout: seconds a single command may run.
    :param audit_path: the JSON Lines audit log every command is appended to."""

    conn_name_attr = "ssh_conn_id"
    default_conn_name = "ibmi_default"
    conn_type = "ssh"
    hook_name = "IBM i over SSH"

    def __init__(self, *, ssh_conn_id: str = default_conn_name, command_timeout: float = 60.0, audit_path: Path | None = None) -> None:
        super().__init__()
        self.ssh_conn_id = ssh_conn_id
        self.command_timeout = command_timeout
        self.audit_path = audit_path

    @cached_property
    def ssh_hook(self) -> SSHHook:
        # One connect attempt per call: IbmiSession owns retries, so backoff is not stacked twice.
        hook = SSHHook(ssh_conn_id=self.ssh_conn_id, conn_retry_attempts=1)
        if hook.no_host_key_check or hook.allow_host_key_change:
            raise HostKeyRejected(
                f"connection {self.ssh_conn_id}",
                "host key verification is disabled (no_host_key_check / allow_host_key_change)",
                "pin the partition's key in the connection's host_key extra and remove those extras",
            )
        return hook

    def get_conn(self) -> IbmiSession:
        return self.session(self.ssh_conn_id)

    def session(self, host_name: str) -> IbmiSession:
        ssh = self.ssh_hook
        return IbmiSession(
            host_name,
            (ssh.username or "").upper(),
            ssh.get_conn,
            audit=AuditLog(self.audit_path),
            command_timeout=self.command_timeout,
        )
