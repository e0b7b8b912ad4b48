"""An SSH session to one partition for a DAG task: within the host's session cap, host key verified, audited."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from mqjournal.airflow.connections import resolve_conn_id
from mqjournal.airflow.hook import IbmiHook
from mqjournal.airflow.leases import host_session_slot
from mqjournal.airflow.settings import Settings
from mqjournal.fleet import HostConfig, load_fleet
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig


@contextlib.contextmanager
def host_session(settings: Settings, host: str | HostConfig) -> Iterator[IbmiSession]:
    """An SSH session to `host` (its name, or its entry of the fleet file when the caller has read it) within its
    per-host cap (the Airflow pool caps the fleet as a whole)."""
    # The SQL runner (qsh unless the host says db2: how SQL reaches db2) and the scratch directory of a stream file
    # download are the fleet file's per-host settings. A caller opening many sessions passes the host's entry: the
    # fleet file is not read (and validated) for each.
    config = host if isinstance(host, HostConfig) else load_fleet(settings.fleet_file).host(host)
    with _session(settings, config.name, sql_runner=config.sql_runner, scratch_directory=config.scratch_directory) as s:
        yield s


@contextlib.contextmanager
def linux_host_session(settings: Settings, host: LinuxHostConfig) -> Iterator[IbmiSession]:
    """An SSH session to a Linux MQ host (#32): the same connection rules, session cap and audit log as a partition's;
    no SQL runner or scratch directory is used there."""
    with _session(settings, host.name) as session:
        yield session


@contextlib.contextmanager
def _session(settings: Settings, host: str, **host_settings: Any) -> Iterator[IbmiSession]:
    lease = settings.lease
    with host_session_slot(
        settings.catalog_url,
        host,
        slots=settings.ssh.sessions_per_host,
        wait=lease.wait_seconds,
        ttl=lease.ttl,
        poll=lease.poll_seconds,
    ):
        # The host's connection id, or the one an older mqjournal named it (ibmi_ibmi_prod1) while it is not renamed.
        hook = IbmiHook(
            ssh_conn_id=resolve_conn_id(host), ssh=settings.ssh, audit_path=settings.audit_log, **host_settings
        )
        with hook.session(host) as session:
            yield session
