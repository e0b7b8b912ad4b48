"""Mapped per batch of hosts, never per queue manager: batches, sessions per host, and failures named one by one."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.hostwork import (
    BatchResult,
    QueueManagersFailed,
    WorkLeftUndone,
    finish,
    host_batches,
    run_per_queue_manager,
)
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import HostBatch, MaintenanceTarget, PartitionTimeZone
from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.ibmi.readings import partition_zone
from mqjournal.outcomes import SaveResult
from mqjournal.settings import SshSettings, TaskSettings
from mqjournal.snapshot import read_snapshots
from mqjournal.undone import save_left_undone
from tests.conftest import fleet_config, serve

HOSTS = ("ibmi1", "ibmi2", "ibmi3")
QMGRS = ("QM1", "QM2", "QM3", "QM4", "QM5")


def target(host: str, qmgr: str) -> MaintenanceTarget:
    return MaintenanceTarget(
        host=host,
        qmgr=qmgr,
        library=f"QM{qmgr}"[:10],
        journal="AMQAJRN",
        instance="A",
        journal_queue=["QSYS", "QSYSOPR"],
        utc_offset_minutes=0,
    )


def test_a_fleet_of_1000_hosts_maps_to_at_most_max_mapped_tasks_batches_of_whole_hosts():
    targets = [target(f"h{h:04d}", q) for h in range(1000) for q in QMGRS]
    batches = host_batches(targets, max_tasks=256)
    assert len(batches) == 256  # far below Airflow's max_map_length (1024), however many queue managers
    assert Counter(len(b.by_host()) for b in batches) == {4: 232, 3: 24}
    # Every queue manager exactly once, in the fleet's order, and a host never split across two batches.
    assert [t for b in batches for t in b.targets] == targets
    hosts = [h for b in batches for h in b.by_host()]
    assert len(hosts) == len(set(hosts)) == 1000


def test_a_small_fleet_maps_one_task_per_host_and_1100_queue_managers_need_110_tasks():
    assert [b.label for b in host_batches([target(h, q) for h in HOSTS for q in QMGRS], 256)] == list(HOSTS)
    assert len(host_batches([target(f"h{h}", f"Q{q}") for h in range(110) for q in range(10)], 256)) == 110
    assert host_batches([], 256) == []


def test_a_batch_is_named_by_its_hosts():
    batch = HostBatch(targets=[target(h, "QM1") for h in ("ibmi-a", "ibmi-b", "ibmi-c", "ibmi-d")])
    assert batch.label == "ibmi-a .. ibmi-d (4 hosts)"
    assert HostBatch(targets=[target("ibmi-a", q) for q in QMGRS]).label == "ibmi-a"


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch):
    """Three partitions with five queue managers each, served over SSH; the settings reach them as the DAG does."""
    config = fleet_config(
        tmp_path,
        [
            HostConfig(name=h, port=0, queue_managers=[QueueManagerConfig(name=q, threshold_kb=500) for q in QMGRS])
            for h in HOSTS
        ],
    )
    with serve(config) as sim:
        conns = fleet_connections(sim.config, sim.service.host_keys, sim.ports)
        for host in HOSTS:
            monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for(host).upper()}", json.dumps(conns[conn_id_for(host)]))
        fleet_file = tmp_path / "fleet.yaml"
        fleet_file.write_text(yaml.safe_dump({"hosts": [{"name": h, "port": sim.ports[h]} for h in HOSTS]}))
        data = tmp_path / "data"
        settings = Settings(
            fleet_file=fleet_file,
            data_dir=data,
            catalog_url=f"sqlite:///{data / 'catalog.db'}",
            spark_app=Path("unused"),
            spark_conn_id="spark_default",
            schedule=None,
            ssh=SshSettings(sessions_per_host=2, retry_attempts=1),
            tasks=TaskSettings(hosts_in_parallel=3),
        )
        yield sim, settings


def test_discovery_surveys_every_host_and_a_batch_collects_every_queue_manager(fleet):
    _, settings = fleet
    targets = steps.select_targets(settings, [], []).targets
    assert {(t.host, t.qmgr) for t in targets} == {(h, q) for h in HOSTS for q in QMGRS}
    (batch,) = host_batches(targets, max_tasks=1)
    result = steps.collect_batch(settings, batch, "run1", change_receiver=False, dry_run=True)
    assert not result.failures
    collected = [s for path in result.outcomes for s in read_snapshots(Path(path))]
    assert sorted((s.host, s.qmgr) for s in collected) == sorted((h, q) for h in HOSTS for q in QMGRS)


def test_a_host_gets_at_most_sessions_per_host_sessions_while_hosts_work_in_parallel(fleet):
    _, settings = fleet
    (batch,) = host_batches(steps.select_targets(settings, [], []).targets, max_tasks=1)
    lock = threading.Lock()
    active: Counter[str] = Counter()
    most: Counter[str] = Counter()
    sessions: dict[str, set[int]] = {h: set() for h in HOSTS}
    hosts_at_once: list[int] = []

    def step(session, t: MaintenanceTarget) -> str:
        with lock:
            active[t.host] += 1
            most[t.host] = max(most[t.host], active[t.host])
            sessions[t.host].add(id(session))
            hosts_at_once.append(sum(1 for n in active.values() if n))
        time.sleep(0.2)  # long enough for the others to overlap
        with lock:
            active[t.host] -= 1
        return t.key

    result = run_per_queue_manager(settings, batch, step, doing="test")
    assert result.outcomes == [t.key for t in batch.targets]
    assert most == dict.fromkeys(HOSTS, 2)  # sessions_per_host, never more
    assert all(len(ids) == 2 for ids in sessions.values())  # each session works through several queue managers
    assert max(hosts_at_once) == 3  # hosts_in_parallel


def test_a_failing_queue_manager_is_named_and_the_others_are_done(fleet):
    _, settings = fleet
    (batch,) = host_batches(steps.select_targets(settings, [], []).targets, max_tasks=1)

    def step(session, t: MaintenanceTarget) -> str:
        if t.label == "ibmi2/QM3":
            raise RuntimeError("CPF7003: entry not journaled")
        return t.key

    result = run_per_queue_manager(settings, batch, step, doing="test")
    assert list(result.failures) == ["ibmi2/QM3"]
    assert len(result.outcomes) == len(batch.targets) - 1
    pushed: list[list[str]] = []
    with pytest.raises(QueueManagersFailed) as caught:
        finish(result, batch, pushed.append, doing="save")
    assert "ibmi2/QM3: CPF7003: entry not journaled" in str(caught.value)
    assert "failed for 1 of 15 queue managers" in str(caught.value)
    assert pushed == [result.outcomes]  # the others' outcomes reach the report


def test_an_unreachable_host_fails_its_queue_managers_and_the_other_hosts_are_done(fleet, monkeypatch):
    _, settings = fleet
    (batch,) = host_batches(steps.select_targets(settings, [], []).targets, max_tasks=1)
    # ibmi3 goes away after discovery: its connection now leads to a port nothing listens on.
    name = f"AIRFLOW_CONN_{conn_id_for('ibmi3').upper()}"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setenv(name, json.dumps({**json.loads(os.environ[name]), "port": closed}))
    result = steps.collect_batch(settings, batch, "run1", change_receiver=False, dry_run=True)
    assert sorted(result.failures) == [f"ibmi3/{q}" for q in QMGRS]
    assert list(result.done) == [t.key for t in batch.targets if t.host != "ibmi3"]
    assert "ibmi3" in result.failures["ibmi3/QM1"]


def test_a_host_taken_out_of_the_fleet_file_since_the_run_selected_it_fails_by_name(fleet):
    _, settings = fleet
    (batch,) = host_batches(steps.select_targets(settings, [], []).targets, max_tasks=1)
    listed = yaml.safe_load(settings.fleet_file.read_text())
    settings.fleet_file.write_text(yaml.safe_dump({"hosts": [h for h in listed["hosts"] if h["name"] != "ibmi2"]}))
    result = run_per_queue_manager(settings, batch, lambda session, t: t.key, doing="test")
    assert sorted(result.failures) == [f"ibmi2/{q}" for q in QMGRS]
    assert (
        f"(host ibmi2): not in the fleet file {settings.fleet_file} any more; put it back"
        in result.failures["ibmi2/QM1"]
    )
    assert list(result.done) == [t.key for t in batch.targets if t.host != "ibmi2"]


def test_the_outcomes_of_a_batch_are_its_task_value():
    batch = HostBatch(targets=[target("ibmi1", "QM1")])
    assert finish(BatchResult(done={"k": "v"}), batch, pytest.fail, doing="collect") == ["v"]


def test_a_batch_that_left_work_undone_pushes_its_outcomes_and_fails_naming_what_and_why():
    t = target("ibmi1", "QM1")
    outage = SaveResult(target=t.ref, saved=["AMQA000001"], not_copied=[("QGPL/QMQM10001", "store unreachable")])
    pushed: list[list[dict]] = []

    with pytest.raises(WorkLeftUndone) as caught:
        finish(
            BatchResult(done={t.key: outage}),
            HostBatch(targets=[t]),
            pushed.append,
            doing="save",
            undone=save_left_undone,
        )

    assert pushed == [[outage.to_xcom()]]  # the gate and the report read what the save did
    assert str(caught.value) == (
        "ibmi1: save left work undone on 1 queue manager: ibmi1/QM1: save file QGPL/QMQM10001 not copied into the "
        "backup store: store unreachable"
    )


def test_a_batch_that_left_nothing_undone_is_its_task_value():
    t = target("ibmi1", "QM1")
    done = SaveResult(target=t.ref, saved=["AMQA000001"], copied=["k"])

    value = finish(
        BatchResult(done={t.key: done}), HostBatch(targets=[t]), pytest.fail, doing="save", undone=save_left_undone
    )

    assert value == [done.to_xcom()]


def test_a_targets_time_zone_travels_through_xcom_and_reads_times_from_before_the_end_of_dst():
    zone = partition_zone("QN0500EST3", "-0500", datetime(2026, 11, 23, 9, 0))
    target = MaintenanceTarget(
        host="ibmi1",
        qmgr="TEST",
        library="QMTEST",
        journal="AMQAJRN",
        instance="A",
        journal_queue=["QSYS", "QSYSOPR"],
        utc_offset_minutes=-300,
        time_zone=PartitionTimeZone.of(zone),
    )
    pulled = MaintenanceTarget.from_xcom(target.to_xcom())
    assert pulled.tz.aware(datetime(2026, 10, 20, 12, 0)) == datetime(2026, 10, 20, 16, 0, tzinfo=UTC)
    # A target pushed before the zone travelled keeps its fixed offset.
    earlier = {k: v for k, v in target.to_xcom().items() if k != "time_zone"}
    assert MaintenanceTarget.from_xcom(earlier).tz.offset_on(datetime(2026, 7, 1, tzinfo=UTC)) == timedelta(hours=-5)
