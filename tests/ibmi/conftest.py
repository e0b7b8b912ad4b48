"""The executor on a simulated partition, shared by the save/delete tests."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession
from tests.conftest import SimFleet
from tests.ibmi.rcvsav import connector


@pytest.fixture
def executor(sim_fleet: SimFleet, tmp_path):
    sim_fleet.host().advance(timedelta(hours=3))
    session = IbmiSession(
        "ibmi1", sim_fleet.config.user, connector(sim_fleet), audit=AuditLog(tmp_path / "audit.jsonl")
    )
    found = survey(session, "ibmi1", [])
    (target,) = found.targets
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    yield Executor(session, target, "ibmi1", found.tz, catalog, "run1", BackupStore(tmp_path / "backups"))
    session.close()
