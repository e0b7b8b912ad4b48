"""Outside Airflow: reach one queue manager of a fleet file as `mqjournal collect` does (its client key, its
known_hosts, an audit log), with the catalog the recovery reads. SSH timeouts and retries come from the environment
(MQJOURNAL_SSH_*, mqjournal.settings), as in the DAGs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mqjournal.catalog import Catalog
from mqjournal.collection import fleet_connector
from mqjournal.fleet import FleetConfig, HostConfig, QueueManagerConfig, load_fleet
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import IbmiSession, RetryPolicy
from mqjournal.settings import CATALOG_URL_ENV, SshSettings

CATALOG_ENV = CATALOG_URL_ENV


@dataclass(frozen=True)
class Setup:
    config: FleetConfig
    host: HostConfig
    qmgr: QueueManagerConfig
    catalog: Catalog
    audit: Path

    def session(self) -> IbmiSession:
        ssh = SshSettings.from_env()
        return IbmiSession(
            self.host.name,
            self.config.user_for(self.host),
            fleet_connector(self.config, self.host),
            audit=AuditLog(self.audit),
            command_timeout=ssh.command_timeout,
            retry=RetryPolicy.of(ssh),
            sql_runner=self.host.sql_runner,
        )


def setup(fleet: Path, host: str, qmgr: str, catalog_url: str | None, audit: Path) -> Setup:
    """Raises ValueError with a message an admin can act on when the input does not name a queue manager."""
    try:
        config = load_fleet(fleet)
    except OSError as exc:
        raise ValueError(f"cannot read the fleet file {fleet}: {exc.strerror}") from None
    try:
        host_config = config.host(host)
    except KeyError:
        raise ValueError(
            f"host {host!r} is not in the fleet file {fleet} ({', '.join(h.name for h in config.hosts) or 'no hosts'})"
        ) from None
    qm = next((q for q in host_config.queue_managers if q.name == qmgr), None)
    if qm is None:
        # Not named in the fleet file: its library is derived (QM + name), as CRTMQM does for simple names.
        qm = QueueManagerConfig(name=qmgr)
        _ = qm.qmgr_library  # raises InvalidName (a ValueError) when it cannot be derived
    url = catalog_url or os.environ.get(CATALOG_ENV)
    if not url:
        raise ValueError(
            f"give the catalog with --catalog URL (or {CATALOG_ENV}): a recovery restores from the saves it records"
        )
    return Setup(config, host_config, qm, Catalog(url), audit)
