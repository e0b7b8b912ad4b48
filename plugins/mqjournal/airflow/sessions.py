"""An SSH session to one host for a DAG task (an IBM i partition, or a Linux host: #32): within the host's session
cap, host key verified, audited."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mqjournal.airflow.connections import resolve_conn_id
from mqjournal.airflow.hook import IbmiHook
from mqjournal.airflow.leases import host_session_slot
from mqjournal.airflow.settings import Settings
from mqjournal.fleet import HostConfig, load_fleet
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig


@contextlib.contextmanager
def _slot(settings: Settings, host: str) -> Iterator[None]:
    lease = settings.lease
    with host_session_slot(
        settings.catalog_url,
        host,
        slots=settings.ssh.sessions_per_host,
        wait=lease.wait_seconds,
        ttl=lease.ttl,
        poll=lease.poll_seconds,
    ):
        yield


@contextlib.contextmanager
def linux_host_session(settings: Settings, host: LinuxHostConfig) -> Iterator[IbmiSession]:
    """An SSH session to a Linux host of the fleet file, within the same per-host cap, through its Airflow
    connection (the same id rule as a partition's: mqjournal.fleet.conn_id_for)."""
    with _slot(settings, host.name):
        hook = IbmiHook(ssh_conn_id=resolve_conn_id(host.name), ssh=settings.ssh, audit_path=settings.audit_log)
        with hook.session(host.name, linux=True) as session:
            yield session


@contextlib.contextmanager
def host_session(settings: Settings, host: str | HostConfig) -> Iterator[IbmiSession]:
    """An SSH session to `host` (its name, or its entry of the fleet file when the caller has read it) within its
    per-host cap (the Airflow pool caps the fleet as a whole)."""
    # The SQL runner (qsh unless the host says db2: how SQL reaches db2) and the scratch directory of a stream file
    # download are the fleet file's per-host settings. A caller opening many sessions passes the host's entry: the
    # fleet file is not read (and validated) for each.
    config = host if isinstance(host, HostConfig) else load_fleet(settings.fleet_file).host(host)
    host, runner = config.name, config.sql_runner
    with _slot(settings, host):
        # The host's connection id, or the one an older mqjournal named it (ibmi_ibmi_prod1) while it is not renamed.
        hook = IbmiHook(
            ssh_conn_id=resolve_conn_id(host),
            ssh=settings.ssh,
            audit_path=settings.audit_log,
            sql_runner=runner,
            scratch_directory=config.scratch_directory,
        )
        with hook.session(host) as session:
            yield session
