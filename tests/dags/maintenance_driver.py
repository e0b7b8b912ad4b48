"""Run mq_journal_maintenance end to end on real Airflow (dag.test), the real Spark job and the simulator.

Run as a script in a fresh process (Airflow reads its configuration once, at import):
    python tests/dags/maintenance_driver.py WORKDIR
Scenarios, each on its own simulated partition: the gate approved; the gate rejected ("Delete nothing"); the gate
approved after a receiver became needed again; a partition not ready for mqjournal (IBM i 7.3), refused by the
preflight; two queue managers of which the approver chooses one; a dry run; a gate nobody answers, on a partition
whose save files cannot be copied into the backup store (every download of them drops); a queue manager that cannot
start (a needed receiver deleted outside mqjournal, then a power loss), whose recovery the run triggers (in the run of
the gate nobody answers: it needs no answer of its own). The scenarios one
answer can serve share a run (the approved one, one mapped task per partition), as an admin's fleet run would: each
run's plan job is a JVM start, most of this driver's time. Prints one JSON line with each scenario's run (task
states, labels, note); the simulator's state stays in WORKDIR/state for the test to inspect.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCENARIOS = ("approved", "rejected", "needed-again", "not-ready", "partial", "dry-run", "timeout", "cannot-start")
# Each run: the scenarios (partitions) it covers, and the gate's answer (None: nobody answers).
RUNS: dict[str, tuple[tuple[str, ...], list[str] | None]] = {
    # partial/OTHER, on the same partition as partial/TEST, is declined.
    # With the Linux host (#32) through the same gate: QM.ARCH is chosen, QM.MAN declined.
    "approved": (
        ("approved", "needed-again", "partial", "linux"),
        ["approved/TEST", "needed-again/TEST", "partial/TEST", "linux/QM.ARCH"],
    ),
    "rejected": (("rejected",), ["Delete nothing"]),
    "not-ready": (("not-ready",), ["not-ready/TEST"]),
    "dry-run": (("dry-run",), None),
    "timeout": (("timeout", "cannot-start"), None),
}
CONF: dict[str, dict] = {"dry-run": {"dry_run": True}, "timeout": {"approval_hours": 0.01}}


def main(workdir: Path) -> None:
    from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
    from mqjournal.ibmi.transfer import RECORD_BYTES
    from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
    from mqjournal.linuxmq.extents import LogManagement
    from mqjournal.sim import mq
    from mqjournal.sim.server import TransferFault
    from tests.dags.harness import fleet_in_airflow
    from tests.dags.hitl import Responder, TimeoutSweeper

    hosts = [
        HostConfig(
            name=name,
            port=0,
            utc_offset="+01:00",
            # cannot-start: a unit of work left open half an hour in holds AMQ7460 in an early receiver.
            queue_managers=[
                QueueManagerConfig(
                    name="TEST",
                    threshold_kb=500,
                    long_running_unit_of_work_at_hour=0.5 if name == "cannot-start" else None,
                )
            ]
            + ([QueueManagerConfig(name="OTHER", threshold_kb=500)] if name == "partial" else []),
            system=PartitionSystemConfig(release="7.3" if name == "not-ready" else "7.5"),
        )
        for name in SCENARIOS
    ]
    linux = LinuxHostConfig(
        name="linux",
        port=0,
        queue_managers=[
            # 256 KiB extents at 20 KB a minute: some twenty in the four hours' warm-up, most behind RECLOG.
            LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
            for name, mode in (("QM.ARCH", LogManagement.ARCHIVE), ("QM.MAN", LogManagement.MANUAL))
        ],
    )
    service, bag = fleet_in_airflow(workdir, hosts, linux_hosts=[linux])
    dag = bag.dags["mq_journal_maintenance"]
    # The timeout run's copies fail: its save task leaves them undone, and its gate still opens, warning of them.
    service.faults["timeout"].transfers.append(TransferFault("QGPL.LIB", "get", after_bytes=RECORD_BYTES, times=100))

    def make_needed_again() -> None:
        # The second oldest receiver becomes needed again (a state MQ cannot reach, injected): the next checkpoint
        # moves AMQJRNINF back to it.
        host = service.hosts["needed-again"]
        with host.state() as partition:
            qm = partition.queue_manager("TEST")
            chain = partition.journal_receivers(mq.journal_of(partition, qm))
            mq.impossible_old_unit_of_work(partition, qm, chain[1])
        host.run("system 'RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(TEST)'", "MQADMIN")

    def cannot_start() -> None:
        # The on-call drill: the receiver AMQ7460 needs deleted by another job (with the older ones), then the power.
        from mqjournal.sim.drills import Drill, apply

        host = service.hosts["cannot-start"]
        with host.lock:
            partition = host.partition
            qm = partition.queue_manager("TEST")
            needed = mq.receiver_holding(partition, mq.journal_of(partition, qm), mq.startup_point(qm).sequence)
        apply(host, Drill(kind="delete-receiver", host="cannot-start", qmgr="TEST", receiver=needed.name))
        apply(host, Drill(kind="power-off", host="cannot-start", qmgr="TEST"))

    cannot_start()

    from airflow.models.dagrun import DagRun
    from airflow.models.hitl import HITLDetail
    from airflow.utils.session import create_session

    sweeper = TimeoutSweeper()
    sweeper.start()
    results = {}
    for name, (scenarios, options) in RUNS.items():
        responder = Responder(
            dag.dag_id, "approve", options or [], before=make_needed_again if "needed-again" in scenarios else None
        )
        if options is not None:
            responder.start()
        # Every field the scenarios vary, given each time: dag.test() keeps a run's conf in the DAG's params.
        conf = {"hosts": list(scenarios), "change_receiver": True, "dry_run": False, "approval_hours": 12.0}
        run = dag.test(run_conf={**conf, **CONF.get(name, {})})
        responder.stop.set()
        gates = [ti.id for ti in run.get_task_instances() if ti.task_id == "approve"]
        with create_session() as session:
            note = session.query(DagRun).filter_by(dag_id=dag.dag_id, run_id=run.run_id).one().note
            asked = [session.query(HITLDetail).filter_by(ti_id=ti_id).one_or_none() for ti_id in gates]
        outcome = {
            "state": str(run.state),
            "answered": responder.answered is not None,
            "tasks": {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in run.get_task_instances()},
            "labels": {f"{ti.task_id}[{ti.map_index}]": ti.rendered_map_index for ti in run.get_task_instances()},
            "run_id": run.run_id,
            "note": note,
            "gate_body": next((d.body for d in asked if d is not None), None),
        }
        results |= dict.fromkeys(scenarios, outcome)
    with create_session() as session:
        results["recovery_runs"] = [
            {"run_id": r.run_id, "conf": r.conf, "state": str(r.state), "note": r.note}
            for r in session.query(DagRun).filter_by(dag_id="mq_journal_recovery")
        ]
    sweeper.stop.set()
    service.stop()
    print("RESULTS " + json.dumps(results))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
