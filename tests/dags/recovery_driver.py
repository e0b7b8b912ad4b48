"""Run mq_journal_maintenance, then mq_journal_recovery, end to end on real Airflow (dag.test), the real Spark job
and the simulator over SSH (acceptance of issue 6).

Run as a script in a fresh process (Airflow reads its configuration once, at import):
    python tests/dags/recovery_driver.py WORKDIR
Each scenario has its own simulated partition. One maintenance run (approved) saves and deletes receivers on all of
them; then each partition gets its trouble and the recovery DAG is triggered for it:
- startup: a needed (saved) receiver is deleted out of band, the partition crashes, STRMQM fails with AMQ7432;
- media: a queue is damaged, the receivers from its media recovery point are deleted out of band;
- library: a library save was taken before maintenance; the library is deleted; the queue manager is a full
  repository of a cluster;
- naming: a receiver with the next name is created by hand, so switching stops (CPI70E3);
- gap: as startup, but the save file of the deleted receiver is deleted too, on the host and in the backup store
  (where maintenance copied it): the plan has a gap;
- store (issue 15): a library save copied into the backup store before maintenance; after maintenance the queue
  manager is quiet (ended) for two hours of the partition's clock, so a second maintenance run of this host alone
  (keep_on_host_days 0.05, about 72 minutes) saves nothing new and its cleanup removes every save file from the host;
  then the library is lost and the recovery restores it from the store alone.
Prints one JSON line with each run's task states and what the test needs to check; the simulator's state and the
audit log stay in WORKDIR.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

QMGR, LIBRARY = "TEST", "QMTEST"
SCENARIOS = ("startup", "media", "library", "naming", "gap", "store")
KEEP_ON_HOST_DAYS = 0.05  # 72 minutes: the store scenario moves its partition's clock two hours


def main(workdir: Path) -> None:
    from mqjournal.fleet import ClusterConfig, HostConfig, QueueManagerConfig
    from tests.dags.harness import fleet_in_airflow

    def qm_config(scenario: str) -> QueueManagerConfig:
        extra: dict = {}
        if scenario in ("startup", "gap"):
            extra["long_running_unit_of_work_at_hour"] = 0.5  # holds the startup recovery point back
        if scenario == "media":
            extra.update(damaged_object="APP.REQUEST.QUEUE", damaged_at_hour=0.5)  # holds AMQ7462 back
        if scenario == "library":
            extra["clusters"] = [ClusterConfig(name="INVENTORY", full_repository=True)]
        return QueueManagerConfig(name=QMGR, threshold_kb=500, **extra)

    hosts = [HostConfig(name=s, port=0, utc_offset="+01:00", queue_managers=[qm_config(s)]) for s in SCENARIOS]
    service, bag = fleet_in_airflow(workdir, hosts)

    from mqjournal.airflow.connections import conn_id_for
    from mqjournal.airflow.hook import IbmiHook
    from mqjournal.airflow.settings import settings
    from mqjournal.backupstore import BackupStore
    from mqjournal.catalog import Catalog
    from mqjournal.ibmi.downloadroutes import DownloadRoutes
    from mqjournal.recovery.gather import locate
    from mqjournal.recovery.library_save import save_library
    from tests.dags.hitl import EVERY_QUEUE_MANAGER, Responder

    s = settings()

    def plan_of(run_id: str) -> dict:
        """The plan the recovery run's plan task made (its XCom)."""
        from airflow.models.xcom import XComModel
        from airflow.utils.session import create_session

        with create_session() as db:
            query = XComModel.get_many(
                run_id=run_id, key="return_value", dag_ids="mq_journal_recovery", task_ids="plan"
            )
            row = db.scalars(query).first()
            return XComModel.deserialize_value(row)["plan"]

    def cl(host: str, command: str):
        return service.hosts[host].run(f"system '{command}'", "MQADMIN")

    def chain(host: str) -> list:
        from mqjournal.sim import mq

        with service.hosts[host].state() as p:
            qm = p.queue_manager(QMGR)
            return [(r.name, r.status.value) for r in p.journal_receivers(mq.journal_of(p, qm))]

    # A library save of the library scenario before maintenance (kept on the host only), and one of the store
    # scenario copied into the backup store; then more churn after them.
    library_saves = {}
    for name, store in (("library", None), ("store", BackupStore.from_settings(s))):
        with IbmiHook(ssh_conn_id=conn_id_for(name), audit_path=s.audit_log).session(name) as session:
            target, tz = locate(session, name, hosts[SCENARIOS.index(name)].queue_managers[0])
            library_saves[name] = save_library(
                session,
                target,
                host=name,
                tz=tz,
                catalog=Catalog(s.catalog_url),
                save_library="QGPL",
                run_id=f"{name}-save-1",
                store=store,
                routes=DownloadRoutes(s.data_folder),
            )
    library_save = library_saves["library"]
    for name in SCENARIOS:
        service.hosts[name].advance(timedelta(hours=2))

    responder = Responder("mq_journal_maintenance", "approve", EVERY_QUEUE_MANAGER)
    responder.start()
    maintenance = bag.dags["mq_journal_maintenance"].test(run_conf={"change_receiver": True})
    responder.stop.set()
    results: dict = {
        "maintenance": {
            "state": str(maintenance.state),
            "answered": responder.answered is not None,
            "tasks": {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in maintenance.get_task_instances()},
        },
        "library_save": library_save.record.save_file_path,
        "store_library_save": {
            "save_file": library_saves["store"].record.save_file_path,
            "oldest_needed": library_saves["store"].record.oldest_needed_receiver,
            "stored_key": library_saves["store"].stored.key if library_saves["store"].stored else None,
            "not_copied": library_saves["store"].not_copied,
        },
    }

    staged: dict[str, dict] = {}
    catalog = Catalog(s.catalog_url)
    # startup and gap: delete the oldest receiver on the host (needed by the open unit of work, and saved) out of
    # band, as an operator's mistake would, then the partition loses power.
    for name in ("startup", "gap"):
        oldest = chain(name)[0][0]
        deleted = cl(name, f"DLTJRNRCV JRNRCV({LIBRARY}/{oldest}) DLTOPT(*IGNINQMSG)")
        files = sorted({f"{x.save_file_library}/{x.save_file}" for x in catalog.saves_of(name, LIBRARY, oldest)})
        if name == "gap":
            store = BackupStore.from_settings(s)
            for f in files:
                cl(name, f"DLTF FILE({f})")
            for stored in catalog.stored_objects(name):
                if stored.save_file_path in files:
                    store.delete(stored.key)  # else the recovery brings the save file back from the store
        with service.hosts[name].state() as p:
            from mqjournal.sim import mq

            mq.crash(p, p.queue_manager(QMGR))
        strmqm = cl(name, f"STRMQM MQMNAME({QMGR})")
        staged[name] = {
            "deleted": [oldest],
            "chain_before": chain(name),
            "delete_status": deleted.exit_status,
            "save_files": files,
            "strmqm_before": strmqm.exit_status,
            "strmqm_before_out": strmqm.stdout + strmqm.stderr,
        }
    # media: the receivers from the damaged queue's media recovery point on, as far as maintenance kept them
    # (they are needed, so it saved them), deleted out of band; RCRMQMOBJ then fails with AMQ7432.
    on_host = chain("media")
    doomed = [n for n, status in on_host[:2] if status != "ATTACHED"]
    for n in doomed:
        cl("media", f"DLTJRNRCV JRNRCV({LIBRARY}/{n}) DLTOPT(*IGNINQMSG)")
    rcr = cl("media", f"RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*LCLQ) MQMNAME({QMGR})")
    staged["media"] = {"deleted": doomed, "rcrmqmobj_before": rcr.exit_status, "out": rcr.stdout + rcr.stderr}
    # library: the whole queue manager library is lost.
    staged["library"] = {"chain_before": chain("library")}
    lost = cl("library", f"DLTLIB LIB({LIBRARY})")
    staged["library"]["dltlib"] = lost.exit_status
    # naming: the name rule 1 gives next is taken by a receiver made by hand; switching stops at the threshold.
    attached = chain("naming")[-1][0]
    from mqjournal.names import ReceiverName

    taken = str(ReceiverName.parse(attached).successor())
    cl("naming", f"CRTJRNRCV JRNRCV({LIBRARY}/{taken}) THRESHOLD(500)")
    service.hosts["naming"].advance(timedelta(minutes=30))
    staged["naming"] = {"attached": attached, "taken": taken, "chain_before": chain("naming")}
    # store: a quiet spell (the queue manager ended: no receiver switches, so nothing new to save) longer than
    # keep_on_host_days, then maintenance of this host alone, whose cleanup removes the save files from the host.
    quiet = [cl("store", f"ENDMQM MQMNAME({QMGR})").exit_status]
    service.hosts["store"].advance(timedelta(hours=2))
    quiet.append(cl("store", f"STRMQM MQMNAME({QMGR})").exit_status)
    responder = Responder("mq_journal_maintenance", "approve", EVERY_QUEUE_MANAGER)
    responder.start()
    cleanup_started_at = datetime.now(UTC).isoformat()
    cleanup = bag.dags["mq_journal_maintenance"].test(
        run_conf={"hosts": ["store"], "change_receiver": False, "keep_on_host_days": KEEP_ON_HOST_DAYS}
    )
    responder.stop.set()
    with service.hosts["store"].state() as p:
        on_host = sorted(p.save_files)
    results["store-cleanup"] = {
        "state": str(cleanup.state),
        "run_id": cleanup.run_id,
        "tasks": {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in cleanup.get_task_instances()},
        "quiet": quiet,
        "started_at": cleanup_started_at,
        "ended_at": datetime.now(UTC).isoformat(),
    }
    staged["store"] = {"chain_before": chain("store"), "save_files_on_host": on_host}
    staged["store"]["dltlib"] = cl("store", f"DLTLIB LIB({LIBRARY})").exit_status
    with service.hosts["store"].state() as p:
        staged["store"]["save_files_on_host_after_dltlib"] = sorted(p.save_files)
    results["staged"] = staged

    results["recovery_started_at"] = datetime.now(UTC).isoformat()
    recovery = bag.dags["mq_journal_recovery"]
    kinds = {
        "startup": "startup",
        "media": "media",
        "library": "library",
        "naming": "naming",
        "gap": "startup",
        "store": "library",
    }
    for name, kind in kinds.items():
        responder = Responder("mq_journal_recovery", "approve", "Approve")
        responder.start()
        conf = {"host": name, "qmgr": QMGR, "kind": kind}
        if kind == "media":
            conf.update(object="APP.REQUEST.QUEUE", object_type="*LCLQ")
        run = recovery.test(run_conf=conf)
        responder.stop.set()
        after = {"chain_after": chain(name)} if staged.get(name, {}).get("dltlib", 0) == 0 else {}
        if name == "naming":
            service.hosts[name].advance(timedelta(hours=1))
            after["chain_later"] = chain(name)
        results[name] = {
            "state": str(run.state),
            "answered": responder.answered is not None,
            "tasks": {f"{ti.task_id}": str(ti.state) for ti in run.get_task_instances()},
            "run_id": run.run_id,
            **after,
        }
        if name == "store":
            results[name]["plan"] = plan_of(run.run_id)
    # The same naming repair again: switching works now, so the plan has nothing to do and needs no approval.
    again = recovery.test(run_conf={"host": "naming", "qmgr": QMGR, "kind": "naming"})
    results["naming-again"] = {
        "state": str(again.state),
        "tasks": {ti.task_id: str(ti.state) for ti in again.get_task_instances()},
    }
    with service.hosts["library"].state() as p:
        qm = p.queue_manager(QMGR)
        results["library"]["running"] = qm.running
        results["library"]["clusters"] = [c.model_dump(mode="json") for c in getattr(qm, "clusters", [])]
    with service.hosts["store"].state() as p:
        results["store"]["running"] = p.queue_manager(QMGR).running
        results["store"]["save_files_on_host"] = sorted(p.save_files)
    for name in ("startup", "media", "gap"):
        with service.hosts[name].state() as p:
            qm = p.queue_manager(QMGR)
            results[name]["running"] = qm.running
            results[name]["damaged"] = [o.name for o in qm.objects if o.damaged]
    service.stop()
    print("RESULTS " + json.dumps(results, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
