"""An AIX host of the fleet file (`platform: aix`) through the maintenance and recovery DAGs' steps, reached as they
reach it (its Airflow connection in the environment): collected, archived with the host's own SHA-256 (openssl, as
AIX has no sha256sum), released with proven copies only; then an extent restart needs, deleted, is put back from its
copy, proven by the host, and the queue manager starts."""

from __future__ import annotations

import json
from collections.abc import Iterator
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
from mqjournal.linuxsim import logger
from mqjournal.outcomes import LinuxArchiveResult, LinuxReleaseResult
from tests.conftest import START, SimFleet, serve

AIX, QMGR, ARCHIVED = "mq-aix1", "QMAIXMAN", "QM.PAY"


@pytest.fixture
def aix_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    queue_managers = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in ((QMGR, LogManagement.MANUAL), (ARCHIVED, LogManagement.ARCHIVE))
    ]
    config = FleetConfig(
        state_dir=tmp_path / "state",
        start=START,
        warmup_hours=3,
        hosts=[],
        linux_hosts=[LinuxHostConfig(name=AIX, platform="aix", port=0, queue_managers=queue_managers)],
    ).resolved(tmp_path)
    with serve(config) as fleet:
        yield fleet


@pytest.fixture
def settings(aix_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    conn = fleet_connections(aix_fleet.config, aix_fleet.service.host_keys, aix_fleet.ports)[conn_id_for(AIX)]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for(AIX).upper()}", json.dumps(conn))
    fleet = tmp_path / "fleet.yaml"
    managers = [{"name": QMGR}, {"name": ARCHIVED}]
    host = {"name": AIX, "platform": "aix", "port": aix_fleet.ports[AIX], "queue_managers": managers}
    fleet.write_text(yaml.safe_dump({"hosts": [host]}))
    data = tmp_path / "data"
    data.mkdir()
    settings = Settings(
        fleet_file=fleet,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )
    Catalog(settings.catalog_url)
    return settings


def sent(settings: Settings) -> list[str]:
    return [r["command"] for r in read_events(settings.audit_log) if r.get("event") == "intent"]


def maintain(settings: Settings, run_id: str) -> dict[str, tuple[LinuxArchiveResult, LinuxReleaseResult | None]]:
    """The maintenance DAG's Linux lane: collect, plan (the reference planner: the plan job is held equal to it),
    archive before the gate, release what the gate approved (all of it); by queue manager."""
    targets = linuxwork.select(settings, [], [])
    assert targets == [LinuxTarget(host=AIX, qmgr=QMGR), LinuxTarget(host=AIX, qmgr=ARCHIVED)]
    assert not linuxwork.collect(settings, targets, run_id).failures
    catalog = Catalog(settings.catalog_url)
    plans = [
        linuxwork._planned(plan_queue_manager(snap, {c.extent for c in catalog.extent_copies(AIX, snap.qmgr)}), snap)
        for snap in run_linux_snapshots(settings, run_id)
    ]
    summary = linuxwork.with_linux(RunPlan(), plans)
    archived = linuxwork.archive(settings, summary, run_id)
    assert not archived.failures and not archived.undone, (archived.failures, archived.undone)
    released = linuxwork.release(settings, summary, {p.key for p in plans}, run_id)
    assert released is None or not released.failures, released.failures
    releases = {r.qmgr: r for r in (released.outcomes if released else []) if isinstance(r, LinuxReleaseResult)}
    return {a.qmgr: (a, releases.get(a.qmgr)) for a in archived.outcomes if isinstance(a, LinuxArchiveResult)}


def test_the_maintenance_lane_archives_with_openssl_s_digest_and_releases_only_proven_extents(settings, aix_fleet):
    live = aix_fleet.service.linux_hosts[AIX]
    with live.state() as host:
        for qm in host.queue_managers.values():
            logger.checkpoint(qm)  # RECLOG moves up: what is behind it and MEDIALOG may go
    done = maintain(settings, "maint_1")

    catalog, store = Catalog(settings.catalog_url), ExtentStore(settings.backup_store)
    commands = sent(settings)
    for qmgr, (archive, release) in done.items():
        assert archive.archived and not archive.not_archived
        copies = {c.extent: c for c in catalog.extent_copies(AIX, qmgr)}
        assert set(archive.archived) <= set(copies)
        assert all(c.sha256 == c.host_sha256 and store.still_holds(c, reread=True) is None for c in copies.values())
        assert release is not None and release.released and not release.undone
        assert set(release.released) <= set(copies)
        assert not set(release.released) & set(live.host.queue_managers[qmgr].extents)  # MQ let them go
        assert [c for c in commands if c.startswith(f"/usr/mqm/bin/rcdmqimg -l -m {qmgr}")]
    digests = [c for c in commands if c.startswith("openssl dgst -sha256 -r ")]
    assert len(digests) >= sum(len(a.archived) for a, _ in done.values()) and "sha256sum" not in " ".join(commands)
    assert [c for c in commands if c.startswith("LC_ALL=C ls -l ")] and "--time" not in " ".join(commands)
    manual = done[QMGR][1]
    assert manual is not None
    removed = [c for c in commands if c.startswith("rm ")]
    assert removed == [f"rm -f /var/mqm/log/{QMGR}/active/{name}" for name in manual.released]  # Archive: SET LOG


def test_mqjournal_collect_collects_an_aix_host_in_aix_s_forms(aix_fleet, tmp_path: Path, capsys) -> None:
    from mqjournal.cli import main
    from mqjournal.linuxmq.snapshot import read_linux_snapshots

    fleet_file = tmp_path / "fleet.json"
    data = aix_fleet.config.model_dump(mode="json")
    for host in data["linux_hosts"]:
        host["port"] = aix_fleet.ports[host["name"]]
    fleet_file.write_text(json.dumps(data))

    code = main(["collect", "--fleet", str(fleet_file), "--out", str(tmp_path / "out"), "--run-id", "r1"])

    assert code == 0, capsys.readouterr().out  # GNU's listing would be refused by AIX's ls: no snapshot
    linux = list(read_linux_snapshots(tmp_path / "out" / "linux-snapshots" / "run_id=r1" / "snapshots.jsonl"))
    live = aix_fleet.service.linux_hosts[AIX].host.queue_managers
    assert {s.qmgr: len(s.extents) for s in linux} == {name: len(qm.extents) for name, qm in live.items()}


def test_the_recovery_lane_puts_a_deleted_restart_extent_back_proven_by_the_host_and_starts_it(settings, aix_fleet):
    live = aix_fleet.service.linux_hosts[AIX]
    with live.state() as host:  # a unit of work that never ends holds RECLOG back while the log moves on
        qm = host.queue_managers[QMGR]
        logger.open_unit_of_work(qm, "long")
        logger.write(qm, 4 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
    archive, _ = maintain(settings, "maint_1")[QMGR]  # copies the closed extents restart needs, releases none of them
    with live.state() as host:
        qm = host.queue_managers[QMGR]
        doomed = Extent(logger.points(qm).restart.number + 1).name
        assert doomed in archive.archived
        logger.crash(qm)
        logger.remove_extent(qm, doomed)
    before = len(sent(settings))

    made = recovery_steps.make_plan(settings, {"host": AIX, "qmgr": QMGR, "kind": "startup"}, "manual__1")
    assert isinstance(made, LinuxRecoveryPlanMade) and made.executable
    assert [s.stored.extent for s in made.plan.steps if s.stored] == [doomed]
    result = recovery_steps.execute(settings, recovery_steps.plan_made(made.to_xcom()), "manual__1")

    assert [d.outcome for d in result.done] == ["done", "done"] and result.status_after.startswith("running")
    assert live.host.queue_managers[QMGR].running and doomed in live.host.queue_managers[QMGR].extents
    after = sent(settings)[before:]
    put = after.index(f"SFTP PUT /var/mqm/log/{QMGR}/active/{doomed}")
    proof = f"openssl dgst -sha256 -r /var/mqm/log/{QMGR}/active/{doomed}"
    assert proof in after[put:] and after.index(proof) < after.index(f"/usr/mqm/bin/strmqm {QMGR}")


def test_an_aix_host_without_a_sha256_program_has_nothing_archived_and_nothing_released(settings, aix_fleet):
    live = aix_fleet.service.linux_hosts[AIX]
    with live.state() as host:
        host.missing_programs.append("openssl")
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
        assert all("openssl.base" in why for _, why in outcome.not_archived)
        assert archived.undone[planned.key] and not Catalog(settings.catalog_url).extent_copies(AIX, planned.qmgr)
    released = linuxwork.release(settings, summary, {p.key for p in plans}, "maint_2")
    assert released is not None and not [r for r in released.outcomes if r.released]
    assert all(set(live.host.queue_managers[name].extents) >= before for name, before in on_disk.items())
    assert not [c for c in sent(settings) if c.startswith("rm ") or "SET LOG" in c]
