"""Run mq_journal_recovery end to end on real Airflow (dag.test) for a Linux host of the simulator, over SSH
(acceptance of issue #32: "A restore from the store after a deleted needed extent brings the queue manager back, on
the simulator, from the recovery DAG").

Run as a script in a fresh process (Airflow reads its configuration once, at import):
    python tests/dags/linux_recovery_driver.py WORKDIR
One Linux host, two queue managers, each maintained first as the Linux maintenance does (collect, plan, archive
with the host's proof, release; the collection's snapshot written where the maintenance DAG writes it):
- startup (QMSTART, LogManagement Manual): a long unit of work holds RECLOG back; the closed extents restart reads
  are archived too (IBM: any S extent but the current one may be archived); the power goes, an operator deletes one
  of those extents by hand, strmqm fails (AMQ6767); the recovery DAG (startup) puts it back and starts it;
- media (QMMEDIA, LogManagement Archive): a queue imaged then damaged holds MEDIALOG; maintenance archived the
  extents its media recovery reads and kept them; one is deleted by hand, rcrmqobj fails; the recovery DAG (media)
  puts it back and re-creates the queue.
Prints one JSON line with each run's task states and what the test checks; the audit log stays in WORKDIR.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

LINUX, BIN, QUEUE = "mq-linux1", "/opt/mqm/bin", "APP.REQUEST"


def main(workdir: Path) -> None:
    from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
    from mqjournal.linuxmq.extents import LogManagement
    from tests.dags.harness import fleet_in_airflow

    # Extents of 256 KiB, filled at 20 KB a minute: some twenty after the warm-up.
    qms = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in (("QMSTART", LogManagement.MANUAL), ("QMMEDIA", LogManagement.ARCHIVE))
    ]
    service, bag = fleet_in_airflow(workdir, [], linux_hosts=[LinuxHostConfig(name=LINUX, port=0, queue_managers=qms)])

    from mqjournal.airflow.connections import conn_id_for
    from mqjournal.airflow.hook import IbmiHook
    from mqjournal.airflow.settings import settings
    from mqjournal.catalog import Catalog
    from mqjournal.linuxmq import collector
    from mqjournal.linuxmq.archive import archive_extent
    from mqjournal.linuxmq.extents import Extent
    from mqjournal.linuxmq.extentstore import ExtentStore
    from mqjournal.linuxmq.plan import ExtentAction, plan_queue_manager
    from mqjournal.linuxmq.release import release_extents
    from mqjournal.linuxmq.snapshot import write_linux_snapshots
    from mqjournal.linuxsim import logger
    from mqjournal.linuxsim.model import RecoverableObject
    from tests.dags.hitl import Responder

    s = settings()
    live = service.linux_hosts[LINUX]
    catalog = Catalog(s.catalog_url)
    store = ExtentStore(s.backup_store, conn_id=s.backup_store_conn_id)

    def shell(line: str):
        return live.run(line, "mqm")

    with live.state() as host:
        start = host.queue_managers["QMSTART"]
        logger.open_unit_of_work(start, "long")  # RECLOG stays where it began
        logger.write(start, 4 * start.extent_size, at=host.now)
        logger.checkpoint(start)
        media = host.queue_managers["QMMEDIA"]
        media.objects.append(RecoverableObject(name=QUEUE, type="queue", image_extent=media.current))
        logger.record_media_images(media, at=host.now)
        logger.damage(media, QUEUE)  # it can no longer be imaged: it holds MEDIALOG while the log moves on
        logger.write(media, 5 * media.extent_size, at=host.now)
        logger.checkpoint(media)

    # The maintenance, as the Linux maintenance does it: collect, plan, archive with proof, release.
    run = "scheduled__linux_1"
    snapshots, archived, released, restart_copies = [], {}, {}, []
    with IbmiHook(ssh_conn_id=conn_id_for(LINUX), audit_path=s.audit_log).session(LINUX, linux=True) as session:
        for qmgr in ("QMSTART", "QMMEDIA"):
            snap = collector.collect(session, qmgr, host=LINUX, run_id=run, bin_dir=BIN)
            plan = plan_queue_manager(snap, {c.extent for c in catalog.extent_copies(LINUX, qmgr)})
            wanted = plan.with_action(ExtentAction.ARCHIVE_THEN_RELEASE) + plan.with_action(ExtentAction.ARCHIVE)
            for name in wanted:
                archive_extent(session, qmgr=qmgr, active=snap.log_path, extent=Extent.parse(name), run_id=run,
                               store=store, catalog=catalog)  # fmt: skip
            archived[qmgr] = wanted
            released[qmgr] = release_extents(
                session, qmgr, bin_dir=BIN, run_id=run, store=store, catalog=catalog
            ).released
            snapshots.append(snap)
        points = snapshots[0].points()
        assert points is not None
        for n in range(points.restart.behind(points.current)):  # QMSTART: the closed extents restart reads
            extent = Extent(points.restart.number + n)
            archive_extent(session, qmgr="QMSTART", active=snapshots[0].log_path, extent=extent, run_id=run,
                           store=store, catalog=catalog)  # fmt: skip
            restart_copies.append(extent.name)
    write_linux_snapshots(s.linux_snapshot_dir(run) / f"{LINUX}.jsonl", snapshots)

    # The trouble, by hand on the host.
    staged: dict = {}
    with live.state() as host:
        logger.crash(host.queue_managers["QMSTART"])  # the power goes: RECLOG stays at its last checkpoint
        start_path = host.queue_managers["QMSTART"].active_path
        media_path = host.queue_managers["QMMEDIA"].active_path
        image = next(o.image_extent for o in host.queue_managers["QMMEDIA"].objects if o.name == QUEUE)
    doomed = restart_copies[1]
    staged["startup"] = {
        "deleted": doomed,
        "rm": shell(f"rm -f {start_path}{doomed}").exit_status,
        "released": released["QMSTART"],
    }
    strmqm = shell(f"{BIN}/strmqm QMSTART")
    staged["startup"] |= {"strmqm_before": strmqm.exit_status, "strmqm_before_out": strmqm.stdout + strmqm.stderr}
    media_doomed = Extent(image + 1).name
    staged["media"] = {
        "deleted": media_doomed,
        "archived": archived["QMMEDIA"],
        "released": released["QMMEDIA"],
        "rm": shell(f"rm -f {media_path}{media_doomed}").exit_status,
    }
    rcr = shell(f"{BIN}/rcrmqobj -m QMMEDIA -t queue {QUEUE}")
    staged["media"] |= {"rcrmqobj_before": rcr.exit_status, "rcrmqobj_before_out": rcr.stdout + rcr.stderr}

    results: dict = {"staged": staged, "recovery_started_at": datetime.now(UTC).isoformat()}
    recovery = bag.dags["mq_journal_recovery"]
    runs = {
        "startup": {"host": LINUX, "qmgr": "QMSTART", "kind": "startup"},
        "media": {"host": LINUX, "qmgr": "QMMEDIA", "kind": "media", "object": QUEUE, "object_type": "queue"},
    }
    for name, conf in runs.items():
        responder = Responder("mq_journal_recovery", "approve", "Approve")
        responder.start()
        done = recovery.test(run_conf=conf)
        responder.stop.set()
        results[name] = {
            "state": str(done.state),
            "answered": responder.answered is not None,
            "tasks": {ti.task_id: str(ti.state) for ti in done.get_task_instances()},
            "run_id": done.run_id,
            "report": Path(s.recovery_report_file(done.run_id)).read_text(encoding="utf-8"),
        }
    results["startup"]["dspmq"] = shell("dspmq -m QMSTART").stdout
    results["media"]["qstatus"] = live.run("runmqsc QMMEDIA", "mqm", f"DISPLAY QSTATUS('{QUEUE}') MEDIALOG\n").stdout
    # The restart after: the queue manager comes down and up again on the log as it is now.
    results["startup"]["again"] = [shell("endmqm -i QMSTART").exit_status, shell(f"{BIN}/strmqm QMSTART").exit_status]
    service.stop()
    print("RESULTS " + json.dumps(results, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
