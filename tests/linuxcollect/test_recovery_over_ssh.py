"""Recovery of a Linux queue manager's log over SSH (linuxmq/recover.py) on the simulator: what is read before a
plan, what is put back and proven, then strmqm or rcrmqobj, and what is refused before anything changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.linuxmq import collector, commands
from mqjournal.linuxmq.cannotstart import cannot_start
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.recover import LinuxRecovery, LinuxStepFailed
from mqjournal.linuxmq.recovery import LinuxAction, LinuxRecoveryRequest
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.model import RecoverableObject
from mqjournal.recovery.connect import UnknownQueueManager
from mqjournal.recovery.refusals import PlanHasGaps
from tests.conftest import SimFleet
from tests.linuxcollect.fleet import BIN, LINUX, maintain, session

QMGR = "QMMANUAL"
QUEUE = "APP.REQUEST"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def changes(path: Path, since: int = 0) -> list[str]:
    """What was sent that changes the host: uploads, strmqm, rcrmqobj, rm."""
    found = []
    for r in records(path)[since:]:
        if r["event"] != "intent":
            continue
        text = r.get("command", "")
        if r.get("transfer") == "put" or any(w in text for w in ("strmqm", "rcrmqobj", "rm -f")):
            found.append(text)
    return found


@pytest.fixture
def tools(tmp_path: Path) -> tuple[AuditLog, ExtentStore, Catalog, Path]:
    path = tmp_path / "audit.jsonl"
    return AuditLog(path), ExtentStore(tmp_path / "backups"), Catalog(f"sqlite:///{tmp_path / 'catalog.db'}"), path


def crashed_with_restart_extent_deleted(fleet: SimFleet, tools, *, archive_it: bool = True):
    """QMMANUAL with a long unit of work holding RECLOG back; maintenance archives what it may (the closed extents
    restart needs too: IBM, any S extent but the current one may be archived) and releases what it may; then the
    power goes, and someone deletes one extent restart needs: one the maintenance copied, or (`archive_it` false)
    one written after it, of which no copy exists. Returns (its snapshot, the extent deleted)."""
    audit, store, catalog, _ = tools
    live = fleet.service.linux_hosts[LINUX]
    with live.state() as host:
        qm = host.queue_managers[QMGR]
        logger.open_unit_of_work(qm, "long")
        logger.write(qm, 4 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
    with session(fleet, audit) as linux:
        maintain(linux, QMGR, store, catalog, "maint_1")
    if not archive_it:
        with live.state() as host:
            qm = host.queue_managers[QMGR]
            logger.write(qm, 3 * qm.extent_size, at=host.now)
            logger.checkpoint(qm)
    with session(fleet, audit) as linux:
        snap = collector.collect(linux, QMGR, host=LINUX, run_id="maint_2", bin_dir=BIN, media_images="imgsched")
        points = snap.points()
        assert points is not None and points.restart.behind(points.current) >= 3
        closed = [Extent(points.restart.number + n) for n in range(points.restart.behind(points.current))]
    copied = {c.extent for c in catalog.extent_copies(LINUX, QMGR)}
    candidates = [e.name for e in closed if (e.name in copied) == archive_it]
    assert len(candidates) >= 2, (candidates, copied)
    doomed = candidates[1]
    with live.state() as host:
        qm = host.queue_managers[QMGR]
        logger.crash(qm)
        logger.remove_extent(qm, doomed)
    return snap, doomed


def test_startup_recovery_puts_the_deleted_extent_back_proven_then_strmqm_starts_the_queue_manager(
    mixed: SimFleet,
    tools,
) -> None:
    audit, store, catalog, audit_path = tools
    snap, doomed = crashed_with_restart_extent_deleted(mixed, tools)
    with session(mixed, audit) as linux:
        assert linux.run(commands.start_queue_manager(BIN, QMGR)).exit_status != 0  # AMQ6767
        recovery = LinuxRecovery(linux, BIN, catalog, store, last=snap)
        request = LinuxRecoveryRequest.checked(host=LINUX, qmgr=QMGR, kind="startup")
        plan = recovery.plan(request)
        assert [s.stored.extent for s in plan.steps if s.stored] == [doomed]
        assert plan.steps[-1].action is LinuxAction.START_QMGR and plan.executable
        assert "its last snapshot (run maint_2" in plan.state.points_from

        result = recovery.execute(plan)

    assert [d.outcome for d in result.done] == ["done", "done"]
    assert result.status_after.startswith("running: CURRLOG")
    assert mixed.service.linux_hosts[LINUX].host.queue_managers[QMGR].running
    puts = [r for r in records(audit_path) if r.get("transfer") == "put"]
    assert [r["event"] for r in puts] == ["intent", "outcome"] and puts[1]["outcome"] == "ok"
    digests = [r for r in records(audit_path) if r["event"] == "intent" and r["command"].startswith("sha256sum")]
    assert digests[-1]["command"].endswith(doomed)  # proven on the host after its upload


def test_a_restart_extent_without_a_copy_is_a_gap_and_nothing_that_changes_the_host_is_sent(
    mixed: SimFleet,
    tools,
) -> None:
    audit, store, catalog, audit_path = tools
    snap, doomed = crashed_with_restart_extent_deleted(mixed, tools, archive_it=False)
    before = len(records(audit_path))
    with session(mixed, audit) as linux:
        recovery = LinuxRecovery(linux, BIN, catalog, store, last=snap)
        plan = recovery.plan(LinuxRecoveryRequest.checked(host=LINUX, qmgr=QMGR, kind="startup"))
        assert [g.obj for g in plan.gaps] == [f"extent {doomed} of {QMGR} on {LINUX}"]
        with pytest.raises(PlanHasGaps):
            recovery.execute(plan)
    assert changes(audit_path, before) == []


def test_media_recovery_of_a_damaged_queue_puts_back_what_rcrmqobj_reads_then_recreates_it(
    mixed: SimFleet,
    tools,
) -> None:
    audit, store, catalog, _ = tools
    live = mixed.service.linux_hosts[LINUX]
    with live.state() as host:  # a queue imaged, then damaged: it holds MEDIALOG while the log moves on
        qm = host.queue_managers[QMGR]
        qm.objects.append(RecoverableObject(name=QUEUE, type="queue", image_extent=qm.current))
        logger.record_media_images(qm, at=host.now)
        logger.damage(qm, QUEUE)
        logger.write(qm, 5 * qm.extent_size, at=host.now)
        logger.checkpoint(qm)
    with session(mixed, audit) as linux:
        maintain(linux, QMGR, store, catalog, "maint_1")  # archives what media recovery needs, keeps it
    with live.state() as host:
        qm = host.queue_managers[QMGR]
        image = next(o.image_extent for o in qm.objects if o.name == QUEUE)
        doomed = Extent(image + 1).name
        logger.remove_extent(qm, doomed)
    with session(mixed, audit) as linux:
        refused = linux.run(commands.recreate_object(BIN, QMGR, "queue", QUEUE))
        assert refused.exit_status != 0 and "AMQ6767" in refused.stderr
        # The next collection's rcdmqimg names the damaged queue (AMQ7472), and the on-call alert asks for its media
        # recovery with the values the recovery takes.
        collected = collector.collect(linux, QMGR, host=LINUX, run_id="maint_2", bin_dir=BIN)
        assert [(d.name, d.type) for d in collected.media_images.damaged] == [(QUEUE, "queue")]
        alert = cannot_start(collected)
        assert alert is not None and alert.kind.value == "media" and alert.missing == (doomed,)
        assert alert.recovery_conf() == {
            "host": LINUX,
            "qmgr": QMGR,
            "kind": "media",
            "object": QUEUE,
            "object_type": "queue",
        }
        recovery = LinuxRecovery(linux, BIN, catalog, store)
        plan = recovery.plan(LinuxRecoveryRequest.checked(**alert.recovery_conf()))
        # A damaged queue shows no status of its own (AMQ8149S): the queue manager's MEDIALOG, its image, bounds it.
        assert plan.first_needed == Extent(image).name and "AMQ8149S" in plan.state.object_media_from
        assert [s.stored.extent for s in plan.steps if s.stored] == [doomed]

        result = recovery.execute(plan)

    assert result.done[-1].command == f"{BIN}/rcrmqobj -m {QMGR} -t queue {QUEUE}" and result.done[-1].outcome == "done"
    assert not next(o for o in live.host.queue_managers[QMGR].objects if o.name == QUEUE).damaged


def test_an_unknown_queue_manager_is_refused_listing_the_hosts_and_an_rcrmqobj_that_fails_says_why(
    mixed: SimFleet,
    tools,
) -> None:
    audit, store, catalog, _ = tools
    with session(mixed, audit) as linux:
        recovery = LinuxRecovery(linux, BIN, catalog, store)
        with pytest.raises(UnknownQueueManager) as unknown:
            recovery.plan(LinuxRecoveryRequest.checked(host=LINUX, qmgr="QMMANUEL", kind="startup"))
        assert "QM.ORDERS, QMMANUAL" in str(unknown.value)
        # rcrmqobj of an object the queue manager does not have: the step fails, naming the host's answer.
        plan = recovery.plan(
            LinuxRecoveryRequest.checked(host=LINUX, qmgr=QMGR, kind="media", object="NO.SUCH.Q", object_type="queue")
        )
        with pytest.raises(LinuxStepFailed, match="AMQ8147E"):
            recovery.execute(plan)


def test_an_upload_that_fails_midway_is_taken_back_and_a_file_already_there_is_never_touched(
    mixed: SimFleet,
    tools,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from mqjournal.linuxmq.restore import RestoreError, restore_extent

    audit, store, catalog, audit_path = tools
    snap, doomed = crashed_with_restart_extent_deleted(mixed, tools)
    (stored,) = [c for c in catalog.extent_copies(LINUX, QMGR) if c.extent == doomed]
    qm = mixed.service.linux_hosts[LINUX].host.queue_managers[QMGR]

    class Broken(io.RawIOBase):
        """The store's copy, its read failing after the first chunk (a disk error, a store gone away)."""

        def __init__(self) -> None:
            self.reads = 0

        def readable(self) -> bool:
            return True

        def read(self, size: int = -1) -> bytes:
            self.reads += 1
            if self.reads > 1:
                raise OSError("the store's disk failed")
            return b"\0" * 1000

    monkeypatch.setattr(store, "open_copy", lambda copy: Broken())
    with session(mixed, audit) as linux:
        with pytest.raises(RestoreError, match="the store's disk failed"):
            restore_extent(linux, active=snap.log_path, copy=stored, store=store)
        assert doomed not in qm.extents  # what the upload left was removed again
        present = next(n for n in qm.extents if n != doomed and not n.startswith("R"))
        with pytest.raises(RestoreError, match="never written over"):
            restore_extent(linux, active=snap.log_path, copy=stored.model_copy(update={"extent": present}), store=store)
    assert present in qm.extents
    puts = [r for r in records(audit_path) if r.get("transfer") == "put"]
    assert [(r["event"], r.get("outcome")) for r in puts] == [("intent", None), ("outcome", "failed")]
    assert changes(audit_path)[-1] == f"rm -f {snap.log_path}{doomed}"
