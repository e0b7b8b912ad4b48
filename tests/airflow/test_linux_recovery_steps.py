"""The recovery DAG's steps for a Linux host of the fleet file (#32), reached as the DAG reaches it (its Airflow
connection in the environment): the form checked before any SSH, the plan and its gate, a gap that stops the run,
and the report."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.airflow import recovery as steps
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import LinuxRecoveryPlanMade
from mqjournal.fleet import FleetConfig
from mqjournal.ibmi.audit import read_audit
from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.linuxsim import logger
from mqjournal.recovery.refusals import PlanHasGaps
from mqjournal.recovery.restore import RecoveryRefused
from tests.airflow.hostlane import host_settings
from tests.conftest import START, SimFleet, serve

LINUX, QMGR = "mq-linux1", "QMMANUAL"


@pytest.fixture
def linux_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    config = FleetConfig(
        state_dir=tmp_path / "state",
        start=START,
        warmup_hours=4,
        hosts=[],
        linux_hosts=[
            LinuxHostConfig(
                name=LINUX,
                port=0,
                queue_managers=[
                    LinuxQueueManagerConfig(
                        name=QMGR, log_management=LogManagement.MANUAL, log_file_pages=64, log_bytes_per_minute=20_000
                    )
                ],
            )
        ],
    ).resolved(tmp_path)
    with serve(config) as fleet:
        yield fleet


@pytest.fixture
def settings(linux_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return host_settings(linux_fleet, LINUX, "linux", [QMGR], tmp_path, monkeypatch)


def sent(settings: Settings) -> list[str]:
    path = settings.audit_log
    return [r["command"] for r in read_audit(path) if r["event"] == "intent"] if path.exists() else []


def test_an_ibm_i_kind_on_a_linux_host_is_refused_at_the_plan_step_before_any_ssh(settings):
    with pytest.raises(RecoveryRefused, match="a library recovery is IBM i's"):
        steps.make_plan(settings, {"host": LINUX, "qmgr": QMGR, "kind": "library"}, "manual__1")
    assert sent(settings) == []


def test_a_linux_plan_with_a_gap_fails_before_the_gate_naming_the_extent_and_nothing_changes(
    settings, linux_fleet: SimFleet
):
    live = linux_fleet.service.linux_hosts[LINUX]
    with live.state() as host:  # a long unit of work holds RECLOG back; the power goes; one extent it needs goes
        qm = host.queue_managers[QMGR]
        logger.open_unit_of_work(qm, "long")
        logger.write(qm, 3 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
        points = logger.points(qm)
        doomed = f"S{points.restart.number + 1:07d}.LOG"
    snapshot = LinuxSnapshot(
        run_id="maint_1", collected_at=live.host.now, host=LINUX, qmgr=QMGR, log_type="LINEAR",
        log_management=LogManagement.MANUAL, log_path=qm.active_path, extent_bytes=qm.extent_size,
        current_extent=points.current.name, restart_extent=points.restart.name, media_extent=points.media.name,
        archive_extent=None, media_images={"forced": False, "ok": False}, extents=[],
    )  # fmt: skip
    write_linux_snapshots(settings.linux_snapshot_dir("maint_1") / f"{LINUX}.jsonl", [snapshot])
    with live.state() as host:
        logger.crash(host.queue_managers[QMGR])
        logger.remove_extent(host.queue_managers[QMGR], doomed)

    made = steps.make_plan(settings, {"host": LINUX, "qmgr": "qmmanual", "kind": "startup"}, "manual__1")
    pulled = steps.plan_made(made.to_xcom())

    assert isinstance(pulled, LinuxRecoveryPlanMade) and pulled == made
    assert made.plan.request.qmgr == QMGR  # the fleet file's spelling
    assert "its last snapshot (run maint_1" in made.plan.state.points_from
    assert steps.next_after_plan(pulled) == ["blocked", "report"]
    with pytest.raises(steps.RecoveryBlocked, match=doomed):
        steps.refuse(pulled)
    with pytest.raises(PlanHasGaps):
        steps.execute(settings, pulled, "manual__1")
    assert not [c for c in sent(settings) if "strmqm" in c or c.startswith(("rm ", "SFTP PUT"))]
    report = Path(steps.write_report(settings, "manual__1", pulled, None)).read_text()
    assert "Outcome: blocked by gaps: nothing was changed" in report and f"GAP extent {doomed}" in report
