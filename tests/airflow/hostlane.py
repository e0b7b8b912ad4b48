"""A queue manager host of another platform than Linux (AIX, Windows) through the maintenance and recovery DAGs'
steps, reached as they reach it (its Airflow connection in the environment, over SSH to the simulated host): the
fleet, the settings, the lane as the DAG runs it, and the two scenes each platform's tests share (an extent restart
needs put back from its copy; a host whose digest program is missing letting nothing go). Each platform's test file
(test_aix_steps.py, test_windows_steps.py) asserts what is its own: the commands, the paths, the words."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow import linuxwork
from mqjournal.airflow import recovery as recovery_steps
from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.oncall import run_linux_snapshots
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import LinuxRecoveryPlanMade, LinuxTarget, RunPlan
from mqjournal.catalog import Catalog
from mqjournal.fleet import FleetConfig
from mqjournal.ibmi.audit import read_events
from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.plan import plan_queue_manager
from mqjournal.linuxmq.recover import LinuxRecoveryResult
from mqjournal.linuxsim import logger
from mqjournal.outcomes import LinuxArchiveResult, LinuxReleaseResult
from tests.conftest import START, SimFleet, serve


@dataclass(frozen=True)
class Lane:
    """One host of `platform` with two queue managers: `manual` (LogManagement Manual) and `archive` (Archive)."""

    host: str
    platform: str
    manual: str
    archive: str


@contextlib.contextmanager
def served(lane: Lane, tmp_path: Path) -> Iterator[SimFleet]:
    """The lane's host, simulated and served over SSH for the test."""
    queue_managers = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in ((lane.manual, LogManagement.MANUAL), (lane.archive, LogManagement.ARCHIVE))
    ]
    config = FleetConfig(
        state_dir=tmp_path / "state",
        start=START,
        warmup_hours=3,
        hosts=[],
        linux_hosts=[LinuxHostConfig(name=lane.host, platform=lane.platform, port=0, queue_managers=queue_managers)],
    ).resolved(tmp_path)
    with serve(config) as fleet:
        yield fleet


def lane_settings(lane: Lane, fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The DAGs' settings for the lane's host and its two queue managers."""
    return host_settings(fleet, lane.host, lane.platform, [lane.manual, lane.archive], tmp_path, monkeypatch)


def host_settings(
    fleet: SimFleet, name: str, platform: str, qmgrs: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Settings:
    """The DAGs' settings: a fleet file naming one simulated host and its queue managers, its connection in the
    environment, a data folder with its catalog."""
    conn = fleet_connections(fleet.config, fleet.service.host_keys, fleet.ports)[conn_id_for(name)]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for(name).upper()}", json.dumps(conn))
    fleet_file = tmp_path / "fleet.yaml"
    managers = [{"name": qmgr} for qmgr in qmgrs]
    host = {"name": name, "platform": platform, "port": fleet.ports[name], "queue_managers": managers}
    fleet_file.write_text(yaml.safe_dump({"hosts": [host]}))
    data = tmp_path / "data"
    data.mkdir()
    settings = Settings(
        fleet_file=fleet_file,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )
    Catalog(settings.catalog_url)
    return settings


def sent(settings: Settings) -> list[str]:
    """Every command (and SFTP transfer) the steps wrote an intent for, in order."""
    return [r["command"] for r in read_events(settings.audit_log) if r.get("event") == "intent"]


def maintain(
    settings: Settings, lane: Lane, run_id: str
) -> dict[str, tuple[LinuxArchiveResult, LinuxReleaseResult | None]]:
    """The maintenance DAG's lane: collect, plan (the reference planner: the plan job is held equal to it), archive
    before the gate, release what the gate approved (all of it); by queue manager."""
    targets = linuxwork.select(settings, [], [])
    assert targets == [LinuxTarget(host=lane.host, qmgr=lane.manual), LinuxTarget(host=lane.host, qmgr=lane.archive)]
    collected = linuxwork.collect(settings, targets, run_id)
    assert not collected.failures, collected.failures
    catalog = Catalog(settings.catalog_url)
    plans = [
        linuxwork._planned(
            plan_queue_manager(snap, {c.extent for c in catalog.extent_copies(lane.host, snap.qmgr)}), snap
        )
        for snap in run_linux_snapshots(settings, run_id)
    ]
    summary = linuxwork.with_linux(RunPlan(), plans)
    archived = linuxwork.archive(settings, summary, run_id)
    assert not archived.failures and not archived.undone, (archived.failures, archived.undone)
    released = linuxwork.release(settings, summary, {p.key for p in plans}, run_id)
    assert released is None or not released.failures, released.failures
    releases = {r.qmgr: r for r in (released.outcomes if released else []) if isinstance(r, LinuxReleaseResult)}
    return {a.qmgr: (a, releases.get(a.qmgr)) for a in archived.outcomes if isinstance(a, LinuxArchiveResult)}


Maintained = dict[str, tuple[LinuxArchiveResult, LinuxReleaseResult | None]]


def maintain_with_proven_copies(settings: Settings, fleet: SimFleet, lane: Lane) -> tuple[Maintained, list[str]]:
    """A checkpoint on each queue manager (RECLOG moves up: what is behind it and MEDIALOG may go), then a
    maintenance: every extent archived has a copy whose SHA-256 is the host's and which the store proves, every
    extent released has such a copy, and MQ has let it go. The run's results and the commands it sent."""
    live = fleet.service.linux_hosts[lane.host]
    with live.state() as host:
        for qm in host.queue_managers.values():
            logger.checkpoint(qm)
    done = maintain(settings, lane, "maint_1")
    catalog, store = Catalog(settings.catalog_url), ExtentStore(settings.backup_store)
    for qmgr, (archive, release) in done.items():
        assert archive.archived and not archive.not_archived
        copies = {c.extent: c for c in catalog.extent_copies(lane.host, qmgr)}
        assert set(archive.archived) <= set(copies)
        assert all(c.sha256 == c.host_sha256 and store.still_holds(c, reread=True) is None for c in copies.values())
        assert release is not None and release.released and not release.undone
        assert set(release.released) <= set(copies)
        assert not set(release.released) & set(live.host.queue_managers[qmgr].extents)  # MQ let them go
    return done, sent(settings)


@dataclass(frozen=True)
class PutBack:
    """A startup recovery of the lane's Manual queue manager after an extent restart reads was deleted by hand."""

    doomed: str
    made: LinuxRecoveryPlanMade
    result: LinuxRecoveryResult
    after: list[str]  # the commands and transfers the recovery sent


def put_back_a_deleted_restart_extent(settings: Settings, fleet: SimFleet, lane: Lane) -> PutBack:
    """A unit of work that never ends holds RECLOG back while the log moves on; a maintenance copies the closed
    extents restart needs (and releases none of them); the queue manager crashes and one of them is deleted; the
    recovery DAG's steps plan and run its startup recovery."""
    live = fleet.service.linux_hosts[lane.host]
    with live.state() as host:
        qm = host.queue_managers[lane.manual]
        logger.open_unit_of_work(qm, "long")
        logger.write(qm, 4 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
    archive, _ = maintain(settings, lane, "maint_1")[lane.manual]
    with live.state() as host:
        qm = host.queue_managers[lane.manual]
        doomed = Extent(logger.points(qm).restart.number + 1).name
        assert doomed in archive.archived
        logger.crash(qm)
        logger.remove_extent(qm, doomed)  # deleted by hand
    before = len(sent(settings))
    made = recovery_steps.make_plan(settings, {"host": lane.host, "qmgr": lane.manual, "kind": "startup"}, "manual__1")
    assert isinstance(made, LinuxRecoveryPlanMade) and made.executable
    assert [s.stored.extent for s in made.plan.steps if s.stored] == [doomed]
    result = recovery_steps.execute(settings, recovery_steps.plan_made(made.to_xcom()), "manual__1")
    assert [d.outcome for d in result.done] == ["done", "done"] and result.status_after.startswith("running")
    assert live.host.queue_managers[lane.manual].running and doomed in live.host.queue_managers[lane.manual].extents
    return PutBack(doomed, made, result, sent(settings)[before:])


def nothing_let_go_without_a_digest(settings: Settings, fleet: SimFleet, lane: Lane, missing: str, why: str) -> None:
    """With the host's digest program `missing`, the lane archives nothing (each extent not archived says `why`),
    records no copy, and releases nothing: every extent stays on the host."""
    live = fleet.service.linux_hosts[lane.host]
    with live.state() as host:
        host.missing_programs.append(missing)
        for qm in host.queue_managers.values():
            logger.checkpoint(qm)
    on_disk = {name: set(qm.extents) for name, qm in live.host.queue_managers.items()}
    assert not linuxwork.collect(settings, linuxwork.select(settings, [], []), "maint_1").failures
    plans = [linuxwork._planned(plan_queue_manager(s, set()), s) for s in run_linux_snapshots(settings, "maint_1")]
    summary = linuxwork.with_linux(RunPlan(), plans)
    assert all(p.to_release for p in plans)  # what the plan would let go once copied

    archived = linuxwork.archive(settings, summary, "maint_1")
    for outcome, planned in zip(archived.outcomes, plans, strict=True):
        assert isinstance(outcome, LinuxArchiveResult) and not outcome.archived
        assert {name for name, _ in outcome.not_archived} == set(planned.to_archive)
        assert all(why in reason for _, reason in outcome.not_archived)
        assert archived.undone[planned.key] and not Catalog(settings.catalog_url).extent_copies(lane.host, planned.qmgr)
    released = linuxwork.release(settings, summary, {p.key for p in plans}, "maint_2")
    assert released is not None and not [r for r in released.outcomes if r.released]
    assert all(set(live.host.queue_managers[name].extents) >= before for name, before in on_disk.items())
