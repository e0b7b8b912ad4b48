"""A partition whose Db2 PTF group predates some services (issue #13): mqjournal uses what is there, and where what
is missing is what proves a save, it deletes nothing and says which PTF group brings it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from mqjournal.catalog import Catalog
from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi import capabilities
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.collector import collect
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.policy import Policy
from tests.conftest import fleet_config, serve

# IBM i 7.4 with Db2 PTF group SF99704 Level 20: JOURNAL_RECEIVER_INFO (Level 18) is there; MESSAGE_TOKENS (23,
# assumed) and SAVE_FILE_OBJECTS (25) are not.
LEVEL_20 = PartitionSystemConfig(release="7.4", db2_group_level=20)


@pytest.fixture
def executor(tmp_path):
    qm = QueueManagerConfig(name="TEST", threshold_kb=500)
    config = fleet_config(tmp_path, [HostConfig(name="ibmi1", port=0, system=LEVEL_20, queue_managers=[qm])])
    with serve(config, advance=timedelta(hours=3)) as fleet:
        connect = ssh_connector(
            address="127.0.0.1",
            port=fleet.ports["ibmi1"],
            user=config.user,
            key=fleet.service.client_key,
            known_hosts=config.known_hosts,
        )
        session = IbmiSession("ibmi1", config.user, connect, audit=AuditLog(tmp_path / "audit.jsonl"))
        found = survey(session, "ibmi1", [])
        (target,) = found.targets
        yield fleet, Executor(session, target, "ibmi1", found.tz, Catalog(f"sqlite:///{tmp_path / 'c.db'}"), "run1")
        session.close()


def test_the_collection_works_without_message_tokens(executor):
    fleet, ex = executor
    caps = capabilities.read(ex.session)
    assert caps.has("QSYS2.JOURNAL_RECEIVER_INFO") and not caps.has_column("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS")
    snap = collect(ex.session, ex.target, host="ibmi1", run_id="run1", tz=ex.tz)
    on_host = fleet.host().partition.receivers_in("QMTEST")
    assert {r.name for r in snap.receivers} == {r.name for r in on_host}
    assert snap.amqjrninf and all(m.tokens is None for m in snap.messages)
    # The points cannot be read without replacement data: left unread, never guessed from the wording.
    assert snap.startup_recovery is None and snap.media_recovery is None


def test_without_save_file_objects_nothing_is_saved_or_deleted_and_the_ptf_group_is_named(executor):
    fleet, ex = executor
    before = {r.name for r in fleet.host().partition.receivers_in("QMTEST")}
    detached = [r.name for r in fleet.host().partition.receivers_in("QMTEST") if r.status.value != "ATTACHED"]
    assert detached
    with pytest.raises(capabilities.ServiceMissing) as refused:
        ex.save(detached, save_library="QGPL")
    assert "SAVE_FILE_OBJECTS" in str(refused.value) and "SF99704 Level 25" in str(refused.value)
    with pytest.raises(capabilities.ServiceMissing):
        ex.delete(detached, policy=Policy())
    assert {r.name for r in fleet.host().partition.receivers_in("QMTEST")} == before
    assert not fleet.host().partition.save_files
