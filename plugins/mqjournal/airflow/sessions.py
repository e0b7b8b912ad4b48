"""An SSH session to one host (a partition or a Linux host) for a DAG task: within the host's session cap, host key
verified, audited."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from mqjournal.airflow.connections import resolve_conn_id
from mqjournal.airflow.hook import IbmiHook
from mqjournal.airflow.leases import host_session_slot
from mqjournal.airflow.settings import Settings
from mqjournal.fleet import HostConfig, load_fleet
from mqjournal.ibmi.commands import SqlRunner
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.names import SCRATCH_DIRECTORY


@contextlib.contextmanager
def host_session(settings: Settings, host: str | HostConfig | LinuxHostConfig) -> Iterator[IbmiSession]:
    """An SSH session to `host` (its name, or its entry of the fleet file when the caller has read it: a partition's
    or a Linux host's) within its per-host cap (the Airflow pool caps the fleet as a whole)."""
    # The SQL runner (qsh unless the host says db2: how SQL reaches db2) and the scratch directory of a stream file
    # download are the fleet file's per-host settings. A caller opening many sessions passes the host's entry: the
    # fleet file is not read (and validated) for each. A Linux host has neither: the hook's defaults stand, unused.
    config = host if isinstance(host, HostConfig | LinuxHostConfig) else load_fleet(settings.fleet_file).host(host)
    runner: SqlRunner = config.sql_runner if isinstance(config, HostConfig) else "qsh"
    scratch = config.scratch_directory if isinstance(config, HostConfig) else SCRATCH_DIRECTORY
    lease = settings.lease
    with host_session_slot(
        settings.catalog_url,
        config.name,
        slots=settings.ssh.sessions_per_host,
        wait=lease.wait_seconds,
        ttl=lease.ttl,
        poll=lease.poll_seconds,
    ):
        # The host's connection id, or the one an older mqjournal named it (ibmi_ibmi_prod1) while it is not renamed.
        hook = IbmiHook(
            ssh_conn_id=resolve_conn_id(config.name),
            ssh=settings.ssh,
            audit_path=settings.audit_log,
            sql_runner=runner,
            scratch_directory=scratch,
        )
        # A Linux user name is case-sensitive; an IBM i user profile is upper case however the connection spells it.
        with hook.session(config.name, linux=isinstance(config, LinuxHostConfig)) as session:
            yield session


def linux_host_session(settings: Settings, host: LinuxHostConfig) -> contextlib.AbstractContextManager[IbmiSession]:
    """`host_session` for a Linux host's entry of the fleet file."""
    return host_session(settings, host)
