"""Run mq_journal_backup_expiry end to end on real Airflow (dag.test) and the simulator over SSH (issue 15,
"Lifecycle").

Run as a script in a fresh process (Airflow reads its configuration once, at import):
    python tests/dags/expiry_driver.py WORKDIR
Each queue manager first gets three rounds of maintenance (saves copied into the backup store, deletes) and library
saves, so the first round's save files are what the recovery rules no longer need:
- approved/TEST: a plain queue manager;
- approved/PAYROLL: a second queue manager on the same partition (an open unit of work from its first half hour:
  the expiry plan keeps whatever its AMQ7460 still needs);
- offpartition/TEST: the cleanup step (keep_on_host_days 0) removed every copied save file from the partition, so
  its save files live only in the store;
- rejected/TEST: the gate is answered Reject.
The DAG runs once for approved and offpartition (answered Approve) and once for rejected. Before and after, this
records per queue manager what the expiry planner proposes, the save files on the partition, the copies in the
store, the catalog's discarded save files, and the gaps of every restore the recovery rules promise. Then
mq_journal_restore_drill runs on the same fleet, answered Reject and then Approve (its Sunday place, after the expiry;
one Airflow and one fleet for both DAGs). Prints one RESULTS JSON line.
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

HOSTS = {"approved": ("TEST", "PAYROLL"), "offpartition": ("TEST",), "rejected": ("TEST",)}


def main(workdir: Path) -> None:
    from mqjournal.fleet import HostConfig, QueueManagerConfig
    from tests.dags.harness import fleet_in_airflow

    def qm_config(host: str, qmgr: str) -> QueueManagerConfig:
        extra = {"long_running_unit_of_work_at_hour": 0.5} if qmgr == "PAYROLL" else {}
        return QueueManagerConfig(name=qmgr, threshold_kb=500, **extra)

    hosts = [
        HostConfig(name=h, port=0, utc_offset="+01:00", queue_managers=[qm_config(h, q) for q in qmgrs])
        for h, qmgrs in HOSTS.items()
    ]
    service, bag = fleet_in_airflow(workdir, hosts)

    from mqjournal.airflow.connections import conn_id_for
    from mqjournal.airflow.hook import IbmiHook
    from mqjournal.airflow.settings import settings
    from mqjournal.backupstore import BackupStore
    from mqjournal.catalog import Catalog
    from mqjournal.ibmi.cleanup import HostCleanup
    from mqjournal.ibmi.discovery import survey
    from mqjournal.policy import Policy
    from mqjournal.recovery.gather import gather
    from mqjournal.recovery.kinds import RecoveryKind
    from mqjournal.recovery.plan import Request
    from mqjournal.recovery.planner import plan_recovery
    from tests.dags.hitl import Responder
    from tests.recovery import expiry_scene

    s = settings()
    catalog, store = Catalog(s.catalog_url), BackupStore.from_settings(s)

    def session(host: str):
        return IbmiHook(ssh_conn_id=conn_id_for(host), audit_path=s.audit_log).session(host)

    def state(host: str, target, tz) -> dict:
        """What expiry may touch for one queue manager, and whether every promised restore still has no gap."""
        with session(host) as ses:
            request = Request(host=host, qmgr=target.qmgr, kind=RecoveryKind.EXPIRY)
            inputs = gather(ses, target, host=host, tz=tz, catalog=catalog, request=request, store=store)
            plan = plan_recovery(inputs, policy=Policy())
            plans = expiry_scene.restore_plans(
                ses, target, host=host, tz=tz, catalog=catalog, store=store, policy=Policy()
            )
        copies = {c.key: c.save_file_path for c in catalog.stored_objects(host, target.qmgr)}
        with service.hosts[host].state() as p:
            on_host = sorted(p.save_files)
        return {
            "proposed": sorted(f"{x.args['library']}/{x.args['name']}" for x in plan.steps),
            "gaps_in_expiry_plan": [str(g) for g in plan.gaps],
            "save_files_on_host": on_host,
            "copies": copies,
            "copies_in_store": sorted(k for k in copies if store.get(k) is not None),
            "discarded": sorted(catalog.discarded_save_files(host)),
            "restores": sorted(plans),
            "restore_gaps": expiry_scene.gaps(plans),
        }

    targets = {}
    for host in hosts:
        with session(host.name) as ses:
            found = survey(ses, host.name, host.queue_managers)
            for t in found.targets:
                expiry_scene.build_history(
                    ses,
                    t,
                    host=host.name,
                    tz=found.tz,
                    catalog=catalog,
                    store=store,
                    advance=lambda name=host.name: service.hosts[name].advance(timedelta(hours=2)),
                )
                targets[f"{host.name}/{t.qmgr}"] = (host.name, t, found.tz)
            if host.name == "offpartition":
                for t in found.targets:
                    HostCleanup(ses, t, host.name, found.tz, catalog, "cleanup-1", store).clean_up(
                        Policy(keep_on_host_days=0)
                    )

    results: dict = {"before": {key: state(h, t, tz) for key, (h, t, tz) in targets.items()}}
    dag = bag.dags["mq_journal_backup_expiry"]
    for name, hosts_of_run, answer in (
        ("approved", ["approved", "offpartition"], "Approve"),
        ("rejected", ["rejected"], "Reject"),
    ):
        responder = Responder("mq_journal_backup_expiry", "approve", answer)
        responder.start()
        run = dag.test(run_conf={"hosts": hosts_of_run})
        responder.stop.set()
        results[name] = {
            "state": str(run.state),
            "run_id": run.run_id,
            "answered": responder.answered is not None,
            "tasks": {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in run.get_task_instances()},
            "labels": {f"{ti.task_id}[{ti.map_index}]": ti.rendered_map_index for ti in run.get_task_instances()},
        }
    results["after"] = {key: state(h, t, tz) for key, (h, t, tz) in targets.items()}

    # The restore drill on the same fleet once expiry is done (its Sunday order): rejected, then approved.
    drill_dag = bag.dags["mq_journal_restore_drill"]
    for name, answer in (("drill_rejected", "Reject"), ("drill_approved", "Approve")):
        responder = Responder("mq_journal_restore_drill", "approve", answer)
        responder.start()
        run = drill_dag.test()
        responder.stop.set()
        note = s.drill_note_file(run.run_id)
        scratch = []
        for host in HOSTS:
            with service.hosts[host].state() as p:
                scratch += [f"{host}:{k}" for k in p.save_files if k.split("/")[1].startswith("DRL")]
        results[name] = {
            "state": str(run.state),
            "run_id": run.run_id,
            "answered": responder.answered is not None,
            "tasks": {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in run.get_task_instances()},
            "drills": [
                {"key": d.key, "outcome": d.outcome, "scratch": d.scratch, "host": d.host}
                for d in catalog.drills()
                if d.run_id == run.run_id
            ],
            "scratch_left_on_hosts": scratch,
            "note": note.read_text(encoding="utf-8") if note.is_file() else None,
        }
    results["stored_copies"] = {
        c.stored.key: {"proves": c.proves, "proof": c.proof}
        for c in catalog.stored_copies(store.url)
        if c.stored.save_file_path not in catalog.discarded_save_files(c.stored.host)
    }
    service.stop()
    print("RESULTS " + json.dumps(results, default=str))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
