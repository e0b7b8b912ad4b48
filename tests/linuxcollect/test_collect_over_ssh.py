"""A Linux queue manager host served by the simulator over SSH, beside an IBM i partition, collected the way the
planner collects it (linuxmq/collector.py): media images, qm.ini, DISPLAY QMSTATUS on runmqsc's stdin, extents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqjournal.ibmi.audit import AuditLog
from mqjournal.linuxmq import collector
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.conftest import SimFleet
from tests.linuxcollect.fleet import LINUX, session


def test_a_linux_queue_manager_is_collected_over_ssh_with_its_log_points_and_extents(
    mixed: SimFleet, tmp_path: Path
) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl")
    with session(mixed, audit) as linux:
        snap = collector.collect(linux, "QM.ORDERS", host=LINUX, run_id="run1", bin_dir="/opt/mqm/bin")

    assert LinuxSnapshot.model_validate_json(snap.model_dump_json()) == snap
    live = mixed.service.linux_hosts[LINUX].host.queue_managers["QM.ORDERS"]
    assert (snap.current_extent, snap.restart_extent, snap.media_extent) == tuple(
        Extent(n).name for n in (live.current, live.restart, live.media)
    )
    assert snap.media_images.forced and snap.media_images.ok
    assert snap.log_type == "LINEAR" and snap.log_management == LogManagement.ARCHIVE
    assert snap.extent_bytes == 64 * 4096
    assert {e.name for e in snap.extents} == set(live.extents) and len(snap.extents) > 3  # the warm-up's
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    runmqsc = [r for r in records if r["event"] == "intent" and "runmqsc" in r["command"]]
    assert [r["input"] for r in runmqsc] == ["DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n"]
    assert all(r["command"].split()[-1] == "QM.ORDERS" for r in runmqsc)  # the MQSC never on the command line


def test_the_host_logs_the_mqsc_runmqsc_read_on_its_standard_input_and_nothing_for_other_commands(
    mixed: SimFleet, tmp_path: Path
) -> None:
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        collector.collect(linux, "QMMANUAL", host=LINUX, run_id="run1", bin_dir="/opt/mqm/bin")

    received = mixed.service.received.entries(LINUX)
    assert [e.stdin for e in received if "runmqsc" in e.command] == [
        "DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n"
    ]
    assert [e.stdin for e in received if "runmqsc" not in e.command] == [None] * (len(received) - 1)


def test_a_user_outside_group_mqm_is_told_what_to_do_and_nothing_is_recorded_as_collected(
    mixed: SimFleet, tmp_path: Path
) -> None:
    with mixed.service.linux_hosts[LINUX].state() as host:
        host.mqm_members.remove("mqjournal")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux, pytest.raises(collector.LinuxCollectError) as err:
        collector.collect(linux, "QMMANUAL", host=LINUX, run_id="run1", bin_dir="/opt/mqm/bin")

    assert "mq-linux1 QMMANUAL" in str(err.value) and "group mqm" in str(err.value)


def test_an_unknown_queue_manager_is_named_with_what_to_check(mixed: SimFleet, tmp_path: Path) -> None:
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux, pytest.raises(collector.LinuxCollectError) as err:
        collector.collect(linux, "QM.NONE", host=LINUX, run_id="run1", bin_dir="/opt/mqm/bin", media_images="imgsched")

    assert "QM.NONE" in str(err.value) and "dspmq" in str(err.value)


def test_mqjournal_collect_collects_the_linux_hosts_of_a_mixed_fleet_beside_the_partitions(
    mixed: SimFleet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mqjournal.cli import main
    from mqjournal.linuxmq.snapshot import read_linux_snapshots

    fleet_file = tmp_path / "fleet.json"
    data = mixed.config.model_dump(mode="json")
    for host in data["hosts"] + data["linux_hosts"]:
        host["port"] = mixed.ports[host["name"]]
    fleet_file.write_text(json.dumps(data))

    code = main(["collect", "--fleet", str(fleet_file), "--out", str(tmp_path / "out"), "--run-id", "r1"])

    out = capsys.readouterr().out
    assert code == 0, out
    linux = list(read_linux_snapshots(tmp_path / "out" / "linux-snapshots" / "run_id=r1" / "snapshots.jsonl"))
    assert sorted(s.qmgr for s in linux) == ["QM.ORDERS", "QMMANUAL"]
    assert "mq-linux1    QM.ORDERS  Archive" in out and "ibmi1" in out


def test_an_extent_downloaded_over_sftp_hashes_as_the_hosts_sha256sum_and_a_restore_brings_restart_back(
    mixed: SimFleet, tmp_path: Path
) -> None:
    import hashlib

    from mqjournal.ibmi.commands import Command
    from mqjournal.linuxmq import commands
    from mqjournal.linuxsim import logger

    live = mixed.service.linux_hosts[LINUX]
    with live.state() as host:
        qm = host.queue_managers["QM.ORDERS"]
        logger.crash(qm)  # no checkpoint at the end: strmqm must replay from RECLOG
        restart, active = Extent(qm.restart), qm.active_path
    path = f"{active.rstrip('/')}/{restart.name}"
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux, linux.sftp() as sftp:
        said = linux.run(commands.extent_digest(active, restart)).stdout.split()[0]
        with sftp.open(path, "rb") as remote:
            copied = remote.read()
        assert hashlib.sha256(copied).hexdigest() == said and len(copied) == 64 * 4096
        assert linux.run(Command(text=f"rm -f {path}", idempotent=True)).exit_status == 0
        refused = linux.run(Command(text="/opt/mqm/bin/strmqm QM.ORDERS", idempotent=False))
        assert refused.exit_status != 0 and restart.name in refused.stdout + refused.stderr
        with sftp.open(path, "wb") as restored:
            restored.write(copied[:1000])  # a restore cut short is not the queue manager's file
        assert linux.run(Command(text="/opt/mqm/bin/strmqm QM.ORDERS", idempotent=False)).exit_status != 0
        with sftp.open(path, "wb") as restored:
            restored.write(copied)
        started = linux.run(Command(text="/opt/mqm/bin/strmqm QM.ORDERS", idempotent=False))
        assert started.exit_status == 0, started


def test_an_extent_behind_reclog_is_archived_with_the_hosts_proof_and_recorded_and_junk_is_never_kept(
    mixed: SimFleet, tmp_path: Path
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq.archive import ArchiveError, archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore

    live = mixed.service.linux_hosts[LINUX].host.queue_managers["QM.ORDERS"]
    oldest = Extent(min(e.number for e in live.extents.values() if not e.reusable))
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        stored = archive_extent(
            linux, qmgr="QM.ORDERS", active=live.active_path, extent=oldest, run_id="r1", store=store, catalog=catalog
        )
        assert stored.sha256 == stored.host_sha256 and stored.size_bytes == 64 * 4096
        assert catalog.extent_copies(LINUX, "QM.ORDERS") == [stored]
        # A rerun whose first attempt's catalog record was lost (another catalog here): the copy is found, recorded.
        lost = Catalog(f"sqlite:///{tmp_path / 'lost.db'}")
        again = archive_extent(
            linux, qmgr="QM.ORDERS", active=live.active_path, extent=oldest, run_id="r1", store=store, catalog=lost
        )
        assert again == stored and lost.extent_copies(LINUX, "QM.ORDERS") == [stored]
        assert store.still_holds(stored, reread=True) is None
        (tmp_path / "backups" / stored.key).write_bytes(b"\0" * stored.size_bytes)  # the copy overwritten in place
        assert "changed" in (store.still_holds(stored, reread=True) or "")
        with pytest.raises(ArchiveError, match="no SHA-256"):  # an extent the host no longer has
            archive_extent(
                linux, qmgr="QM.ORDERS", active=live.active_path, extent=Extent(9_000_000), run_id="r1",
                store=store, catalog=catalog,
            )  # fmt: skip
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    gets = [(r["event"], r.get("outcome")) for r in records if r.get("transfer") == "get"]
    # The copy, then the missing extent's attempt (its download asked beside the digest, and refused too).
    assert gets == [("intent", None), ("outcome", "ok"), ("intent", None), ("outcome", "failed")]
    assert len(catalog.extent_copies(LINUX, "QM.ORDERS")) == 1


def test_bytes_that_are_not_the_ones_the_host_digested_are_never_kept_nor_recorded(
    mixed: SimFleet, tmp_path: Path
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq.archive import ExtentNotVouched, archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore

    with mixed.service.linux_hosts[LINUX].state() as host:
        live = host.queue_managers["QM.ORDERS"]
        oldest = min((e for e in live.extents.values() if not e.reusable), key=lambda e: e.number)
        oldest.intact = False  # the file's bytes on disk are not what the link delivers (the host digests the file)
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux, pytest.raises(ExtentNotVouched):
        archive_extent(
            linux, qmgr="QM.ORDERS", active=live.active_path, extent=Extent(oldest.number), run_id="r1",
            store=store, catalog=catalog,
        )  # fmt: skip

    assert not [p for p in (tmp_path / "backups").rglob("*") if p.is_file()]
    assert catalog.extent_copies(LINUX, "QM.ORDERS") == []


@pytest.mark.parametrize("qmgr", ["QM.ORDERS", "QMMANUAL"])
def test_what_is_released_had_a_proven_copy_and_a_restart_and_media_recovery_still_find_every_extent(
    mixed: SimFleet, tmp_path: Path, qmgr: str
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq.archive import archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore
    from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
    from mqjournal.linuxmq.release import release_extents
    from mqjournal.linuxsim import logger

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        snap = collector.collect(linux, qmgr, host=LINUX, run_id="r1", bin_dir="/opt/mqm/bin")
        to_copy = plan_queue_manager(snap, proven=set()).with_action(ExtentAction.ARCHIVE_THEN_RELEASE)
        assert len(to_copy) >= 3, "the warm-up left too few extents to release"
        copies = [
            archive_extent(linux, qmgr=qmgr, active=snap.log_path, extent=Extent.parse(n), run_id="r1",
                           store=store, catalog=catalog)
            for n in to_copy
        ]  # fmt: skip
        (tmp_path / "backups" / copies[0].key).write_bytes(b"\0" * copies[0].size_bytes)  # this copy no longer proves

        result = release_extents(linux, qmgr, bin_dir="/opt/mqm/bin", run_id="r2", store=store, catalog=catalog)
        # A gate approved the extent being written (a plan gone stale): the live plan keeps it, and says why.
        stale = release_extents(
            linux, qmgr, bin_dir="/opt/mqm/bin", run_id="r3", store=store, catalog=catalog,
            approved={snap.current_extent or ""},
        )  # fmt: skip
        assert stale.released == [] and "keep" in stale.kept[snap.current_extent or ""]

    assert result.released == to_copy[1:]
    assert to_copy[0] in result.kept and "does not prove" in result.kept[to_copy[0]]
    with mixed.service.linux_hosts[LINUX].state() as host:
        qm = host.queue_managers[qmgr]
        if qm.log_management is LogManagement.ARCHIVE:
            # MQ was told; it renamed them for reuse (R) or keeps them notified: none is an S extent waiting any more
            waiting = {e.name for e in logger.archive_waiting(qm)}
            assert not waiting & set(result.released)
        else:
            assert not set(qm.extents) & set(result.released)  # removed
        assert to_copy[0] in qm.extents  # kept: its copy did not prove
        logger.crash(qm)
        logger.start(qm, at=host.now)  # a restart replays from RECLOG: every extent it needs is there
        for obj in qm.objects:
            assert logger.first_missing(qm, obj.image_extent) is None, f"media recovery of {obj.name} would fail"


def test_a_queue_manager_whose_restart_extents_were_deleted_starts_again_from_the_proven_copies(
    mixed: SimFleet, tmp_path: Path
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.ibmi.commands import Command
    from mqjournal.linuxmq import commands
    from mqjournal.linuxmq.archive import archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore
    from mqjournal.linuxmq.readings import listed_extents
    from mqjournal.linuxmq.restore import RestoreError, plan_restore, restore_extent
    from mqjournal.linuxsim import logger

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    live = mixed.service.linux_hosts[LINUX]
    strmqm = Command(text="/opt/mqm/bin/strmqm QMMANUAL", idempotent=False)
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        with live.state() as host:  # a long unit of work holds RECLOG back, then the log moves on
            qm = host.queue_managers["QMMANUAL"]
            logger.open_unit_of_work(qm, "long")
            logger.write(qm, 5 * qm.extent_size, at=host.now)
        snap = collector.collect(linux, "QMMANUAL", host=LINUX, run_id="r1", bin_dir="/opt/mqm/bin")
        points = snap.points()
        assert points is not None and points.restart.behind(points.current) >= 3
        needed = [n for n in sorted(e.name for e in snap.extents) if Extent.parse(n).behind(points.current) > 0]
        needed = [n for n in needed if Extent.parse(n).behind(points.current) <= points.restart.behind(points.current)]
        for name in needed:
            archive_extent(linux, qmgr="QMMANUAL", active=snap.log_path, extent=Extent.parse(name), run_id="r1",
                           store=store, catalog=catalog)  # fmt: skip
        with live.state() as host:  # power lost, then another job deletes the extents restart needs
            qm = host.queue_managers["QMMANUAL"]
            logger.crash(qm)
            for name in needed:
                logger.remove_extent(qm, name)
        assert linux.run(strmqm).exit_status != 0

        on_disk = [f.extent.name for f in listed_extents(linux.run(commands.list_extents(snap.log_path)).stdout)]
        plan = plan_restore(snap, on_disk, catalog.extent_copies(LINUX, "QMMANUAL"), media=False)
        assert list(plan.missing) == needed and plan.complete
        for name in plan.missing:
            restore_extent(linux, active=snap.log_path, copy=plan.copies[name], store=store)
        with pytest.raises(RestoreError, match="never written over"):  # it is there now: the queue manager's
            restore_extent(linux, active=snap.log_path, copy=plan.copies[needed[0]], store=store)

        started = linux.run(strmqm)
    assert started.exit_status == 0, started
    puts = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    puts = [r for r in puts if r.get("transfer") == "put"]
    assert [r["event"] for r in puts] == ["intent", "outcome"] * len(needed)  # each upload recorded before it began
    assert all(r["outcome"] == "ok" for r in puts if r["event"] == "outcome")


def test_an_rm_that_answers_success_but_leaves_the_extent_is_not_counted_as_released(
    mixed: SimFleet, tmp_path: Path
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq.archive import archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore
    from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
    from mqjournal.linuxmq.release import release_extents
    from mqjournal.sim.protocol import ExecResult
    from mqjournal.sim.server import CommandRule

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        snap = collector.collect(linux, "QMMANUAL", host=LINUX, run_id="r1", bin_dir="/opt/mqm/bin")
        first = plan_queue_manager(snap, proven=set()).with_action(ExtentAction.ARCHIVE_THEN_RELEASE)[0]
        archive_extent(linux, qmgr="QMMANUAL", active=snap.log_path, extent=Extent.parse(first), run_id="r1",
                       store=store, catalog=catalog)  # fmt: skip
        # The host says yes and does nothing (a wrapper script, a read-only mount): the listing after tells.
        mixed.service.faults[LINUX].rules.append(CommandRule(f"^rm -f .*{first}$", "answer", reply=ExecResult(0)))

        result = release_extents(linux, "QMMANUAL", bin_dir="/opt/mqm/bin", run_id="r2", store=store, catalog=catalog)

    assert result.released == [] and "still in the log directory" in result.kept[first]


def test_a_set_log_archived_sent_again_after_its_answer_was_lost_and_refused_is_counted_released_not_kept(
    mixed: SimFleet, tmp_path: Path
) -> None:
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq.archive import archive_extent
    from mqjournal.linuxmq.extentstore import ExtentStore
    from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
    from mqjournal.linuxmq.release import release_extents
    from mqjournal.sim.server import CommandRule

    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    store = ExtentStore(tmp_path / "backups")
    with session(mixed, AuditLog(tmp_path / "audit.jsonl")) as linux:
        snap = collector.collect(linux, "QM.ORDERS", host=LINUX, run_id="r1", bin_dir="/opt/mqm/bin")
        first = plan_queue_manager(snap, proven=set()).with_action(ExtentAction.ARCHIVE_THEN_RELEASE)[0]
        archive_extent(linux, qmgr="QM.ORDERS", active=snap.log_path, extent=Extent.parse(first), run_id="r1",
                       store=store, catalog=catalog)  # fmt: skip
        # MQ takes the notification and reuses the extent at once (R); the answer is lost on the way back, and the
        # SET LOG ARCHIVED sent again names an extent MQ no longer has: it is refused.
        mixed.service.faults[LINUX].rules.append(CommandRule("runmqsc", "drop_after", skip=1))

        result = release_extents(linux, "QM.ORDERS", bin_dir="/opt/mqm/bin", run_id="r2", store=store, catalog=catalog)

    refused = [e for e in mixed.service.received.entries(LINUX) if e.stdin == f"SET LOG ARCHIVED('{first}')\n"]
    assert [e.exit_status for e in refused] == [0, 10], "the notification ran, then the repeat was refused"
    assert first not in mixed.service.linux_hosts[LINUX].host.queue_managers["QM.ORDERS"].extents
    assert result.released == [first] and first not in result.kept, result
