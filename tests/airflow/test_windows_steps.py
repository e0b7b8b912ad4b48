"""A Windows host of the fleet file (`platform: windows`) through the maintenance and recovery DAGs' steps, reached as
they reach it (its Airflow connection in the environment), over SSH to the simulated host answering as cmd.exe:
collected, archived with the host's own SHA-256 (certutil), released with proven copies only (`del`, whose words are
read, in Manual mode; SET LOG ARCHIVED in Archive mode); then an extent restart needs, deleted by hand, is put back
over SFTP (`/C:/...`), proven by certutil, and strmqm starts the queue manager."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.airflow import linuxwork
from mqjournal.airflow import recovery as recovery_steps
from mqjournal.airflow.oncall import run_linux_snapshots
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import LinuxRecoveryPlanMade, LinuxTarget, RunPlan
from mqjournal.catalog import Catalog
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.plan import plan_queue_manager
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.windows import WindowsLayout
from mqjournal.outcomes import LinuxReleaseResult
from tests.airflow.hostlane import (
    Lane,
    lane_settings,
    maintain,
    maintain_with_proven_copies,
    nothing_let_go_without_a_digest,
    put_back_a_deleted_restart_extent,
    sent,
    served,
)
from tests.conftest import SimFleet

WINDOWS, QMGR, ARCHIVED = "mq-win1", "QMWINMAN", "QMWINARC"
LANE = Lane(host=WINDOWS, platform="windows", manual=QMGR, archive=ARCHIVED)
BIN = r'"C:\Program Files\IBM\MQ\bin'
CERTUTIL = r'"C:\Windows\System32\certutil.exe" -hashfile '


def active(qmgr: str) -> str:
    return rf"C:\ProgramData\IBM\MQ\log\{qmgr}\active"


@pytest.fixture
def windows_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    with served(LANE, tmp_path) as fleet:
        yield fleet


@pytest.fixture
def settings(windows_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return lane_settings(LANE, windows_fleet, tmp_path, monkeypatch)


def test_the_collection_writes_windows_snapshots_with_the_windows_log_path(settings, windows_fleet):
    assert not linuxwork.collect(settings, linuxwork.select(settings, [], []), "maint_1").failures
    snapshots = {s.qmgr: s for s in run_linux_snapshots(settings, "maint_1")}
    live = windows_fleet.service.linux_hosts[WINDOWS].host.queue_managers
    assert {q: s.platform for q, s in snapshots.items()} == {QMGR: "windows", ARCHIVED: "windows"}
    assert snapshots[QMGR].log_path == active(QMGR) + "\\"
    assert {q: len(s.extents) for q, s in snapshots.items()} == {name: len(qm.extents) for name, qm in live.items()}
    commands = sent(settings)
    assert f'{BIN}\\rcdmqimg.exe" -l -m {QMGR} -t all "*"' in commands
    assert f'type "C:\\ProgramData\\IBM\\MQ\\qmgrs\\{QMGR}\\qm.ini"' in commands
    assert not [c for c in commands if c.startswith(("ls ", "cat ", "/opt/mqm"))]


def test_archive_proves_each_copy_by_certutil_and_release_deletes_or_notifies_only_proven_extents(
    settings, windows_fleet
):
    done, commands = maintain_with_proven_copies(settings, windows_fleet, LANE)

    for qmgr, (archive, _) in done.items():
        for name in archive.archived:
            assert f'{CERTUTIL}"{active(qmgr)}\\{name}" SHA256' in commands
            assert f"SFTP GET /C:/ProgramData/IBM/MQ/log/{qmgr}/active/{name}" in commands
    manual = done[QMGR][1]
    assert manual is not None
    deleted = [c for c in commands if c.startswith("del ")]
    assert deleted == [f'del "{active(QMGR)}\\{name}"' for name in manual.released]  # Archive mode: SET LOG only
    assert [c for c in commands if c == f'{BIN}\\runmqsc.exe" {ARCHIVED}']


def test_a_deleted_restart_extent_is_put_back_over_sftp_proven_by_certutil_and_strmqm_starts_it(
    settings, windows_fleet
):
    back = put_back_a_deleted_restart_extent(settings, windows_fleet, LANE)

    assert back.made.plan.steps[-1].text == f'{BIN}\\strmqm.exe" {QMGR}'
    assert f"recovery of {QMGR} on {WINDOWS} (Windows, log {active(QMGR)}\\)" in back.made.plan.markdown()
    put = back.after.index(f"SFTP PUT /C:/ProgramData/IBM/MQ/log/{QMGR}/active/{back.doomed}")
    proof = f'{CERTUTIL}"{active(QMGR)}\\{back.doomed}" SHA256'
    assert proof in back.after[put:] and back.after.index(proof) < back.after.index(f'{BIN}\\strmqm.exe" {QMGR}')


def test_a_windows_host_whose_certutil_fails_has_nothing_archived_and_nothing_released(settings, windows_fleet):
    nothing_let_go_without_a_digest(settings, windows_fleet, LANE, missing="certutil", why="is not recognized")
    assert not [c for c in sent(settings) if c.startswith("del ")]


def test_mqjournal_collect_collects_a_windows_host(windows_fleet, tmp_path: Path, capsys) -> None:
    from mqjournal.cli import main
    from mqjournal.linuxmq.snapshot import read_linux_snapshots

    fleet_file = tmp_path / "fleet.json"
    data = windows_fleet.config.model_dump(mode="json")
    for host in data["linux_hosts"]:
        host["port"] = windows_fleet.ports[host["name"]]
    fleet_file.write_text(json.dumps(data))

    code = main(["collect", "--fleet", str(fleet_file), "--out", str(tmp_path / "out"), "--run-id", "r1"])

    assert code == 0, capsys.readouterr().out
    linux = list(read_linux_snapshots(tmp_path / "out" / "linux-snapshots" / "run_id=r1" / "snapshots.jsonl"))
    live = windows_fleet.service.linux_hosts[WINDOWS].host.queue_managers
    assert {s.qmgr: (s.platform, len(s.extents)) for s in linux} == {
        name: ("windows", len(qm.extents)) for name, qm in live.items()
    }


def test_an_extent_del_leaves_in_place_is_kept_and_undone_although_del_exits_0(settings, windows_fleet):
    live = windows_fleet.service.linux_hosts[WINDOWS]
    with live.state() as host:
        logger.checkpoint(host.queue_managers[QMGR])
    targets = [LinuxTarget(host=WINDOWS, qmgr=QMGR)]
    assert not linuxwork.collect(settings, targets, "maint_1").failures
    (snap,) = run_linux_snapshots(settings, "maint_1")
    plan = linuxwork._planned(plan_queue_manager(snap, set()), snap)
    summary = linuxwork.with_linux(RunPlan(), [plan])
    assert not linuxwork.archive(settings, summary, "maint_1").failures
    held, *others = plan.to_release
    live.layout = WindowsLayout(locked=frozenset({held}))  # another process has it open

    released = linuxwork.release(settings, summary, {plan.key}, "maint_1")

    assert released is not None
    (result,) = released.outcomes
    assert isinstance(result, LinuxReleaseResult) and result.undone == [held]
    assert "being used by another process" in dict(result.kept)[held]
    assert sorted(result.released) == sorted(others) and others
    assert held in live.host.queue_managers[QMGR].extents
    assert f'del "{active(QMGR)}\\{held}"' in sent(settings)


@pytest.mark.parametrize("locked", [False, True], ids=["removed", "held-open"])
def test_an_uploaded_file_certutil_does_not_vouch_for_is_deleted_again_or_named_when_del_leaves_it(
    settings, windows_fleet, monkeypatch: pytest.MonkeyPatch, locked: bool
):
    import io

    from mqjournal.airflow.sessions import linux_host_session
    from mqjournal.linuxfleet import LinuxHostConfig as Host
    from mqjournal.linuxmq.platforms import WINDOWS as WINDOWS_PLATFORM
    from mqjournal.linuxmq.restore import RestoreError, restore_extent

    live = windows_fleet.service.linux_hosts[WINDOWS]
    with live.state() as host:  # a unit of work holds RECLOG: the closed extents are archived, none released
        qm = host.queue_managers[QMGR]
        logger.open_unit_of_work(qm, "long")
        logger.write(qm, 2 * qm.extent_size, at=host.now)
    archive, _ = maintain(settings, LANE, "maint_1")[QMGR]
    doomed = archive.archived[-1]
    (stored,) = [c for c in Catalog(settings.catalog_url).extent_copies(WINDOWS, QMGR) if c.extent == doomed]
    with live.state() as host:
        logger.crash(host.queue_managers[QMGR])
        logger.remove_extent(host.queue_managers[QMGR], doomed)
    store = ExtentStore(settings.backup_store)
    # Bytes that are not the copy's arrive whole (the store verified, then a bad read): certutil says another digest.
    monkeypatch.setattr(store, "open_copy", lambda copy: io.BytesIO(b"\1" * stored.size_bytes))
    if locked:
        live.layout = WindowsLayout(locked=frozenset({doomed}))
    entry = Host.model_validate({"name": WINDOWS, "platform": "windows", "port": windows_fleet.ports[WINDOWS]})

    with linux_host_session(settings, entry) as session, pytest.raises(RestoreError) as refused:
        restore_extent(session, active=active(QMGR), copy=stored, store=store, platform=WINDOWS_PLATFORM)

    if locked:
        assert "could not be removed again" in refused.value.problem
        assert "being used by another process" in refused.value.problem
        assert refused.value.action.startswith("remove that file on the host first")
        assert doomed in live.host.queue_managers[QMGR].extents  # left there, and said so: never taken as restored
    else:
        assert refused.value.problem.endswith("it was removed again")
        assert doomed not in live.host.queue_managers[QMGR].extents


def test_media_recovery_of_a_damaged_queue_puts_back_its_log_proven_then_rcrmqobj_recreates_it(settings, windows_fleet):
    from mqjournal.linuxsim.model import RecoverableObject

    queue = "PAYMENTS"
    live = windows_fleet.service.linux_hosts[WINDOWS]
    with live.state() as host:  # a queue imaged, then damaged: it holds MEDIALOG while the log moves on
        qm = host.queue_managers[QMGR]
        qm.objects.append(RecoverableObject(name=queue, type="queue", image_extent=qm.current))
        logger.record_media_images(qm, at=host.now)
        logger.damage(qm, queue)
        logger.write(qm, 3 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
    maintain(settings, LANE, "maint_1")  # archives what media recovery needs, keeps it
    with live.state() as host:
        qm = host.queue_managers[QMGR]
        doomed = Extent(next(o.image_extent for o in qm.objects if o.name == queue) + 1).name
        logger.remove_extent(qm, doomed)
    params = {"host": WINDOWS, "qmgr": QMGR, "kind": "media", "object": queue, "object_type": "queue"}

    made = recovery_steps.make_plan(settings, params, "manual__2")
    assert isinstance(made, LinuxRecoveryPlanMade) and made.executable
    assert [s.stored.extent for s in made.plan.steps if s.stored] == [doomed]
    result = recovery_steps.execute(settings, recovery_steps.plan_made(made.to_xcom()), "manual__2")

    rcrmqobj = f'{BIN}\\rcrmqobj.exe" -m {QMGR} -t queue {queue}'
    assert result.done[-1].command == rcrmqobj and result.done[-1].outcome == "done"
    assert not next(o for o in live.host.queue_managers[QMGR].objects if o.name == queue).damaged
    after = sent(settings)
    assert after.index(
        f'{CERTUTIL}"{active(QMGR)}\\{doomed}" SHA256',
        after.index(f"SFTP PUT /C:/ProgramData/IBM/MQ/log/{QMGR}/active/{doomed}"),
    ) < after.index(rcrmqobj)
