"""The maintenance DAG end to end on a simulated fleet of many partitions: where the time goes, and how close the
run comes to the time the SSH round trips alone need.

    .venv/bin/python bench/fleet_bench.py                       # 500 hosts x 10 queue managers
    .venv/bin/python bench/fleet_bench.py --hosts 20 --queue-managers 5

It serves the fleet from the IBM i simulator over SSH on loopback (`--sim-processes` processes of `mqjournal sim`,
by default one per five hosts beside the bench's: the partitions' own work is not the planner's, and a partition
does not wait for another's), each command answered
`--delay` seconds late (a partition across a network: the round trip and the command's own time), and runs the
maintenance DAG with `dag.test()` (Airflow's real task runner, one task instance at a time, the real Spark job in
local mode), its gate answered with every queue manager it offers. First one host alone, then the whole fleet, in
the same process: one host's time is the baseline. Prints the wall time per phase (discover, collect, plan, save,
delete), SSH commands per queue manager (from the audit log) and how many come after the checkpoint, the bytes the
save phase copied off the partitions (in all, per second, per worker process and per second of transfer), the task
instances Airflow ran, where each SSH phase's time goes (its hosts' commands, the batch's slowest host, the rest of
its task instances), and the ratio of each SSH phase's wall time to its SSH-bound ideal: hosts / hosts worked on
at once x one host's time for that phase. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PHASES = {
    "discover": ("select_targets",),
    "collect": ("checkpoint_and_collect",),
    "plan": ("plan_submission", "plan", "summarize"),
    "save": ("save",),
    "delete": ("delete",),
}
SSH_PHASES = ("collect", "save", "delete")
CHECKPOINT = re.compile(r"RCDMQMIMG ")
LIBRARY = re.compile(r"\bQMQM\d{2}\b")  # the bench's queue managers QM00.. live in libraries QMQM00..


# A real partition has CPUs of its own: hosts that share a simulator process wait for each other's work behind its
# interpreter lock, which inflated every command of a busy batch (the same code, 25 hosts a process: a save file's
# digest +47 ms, its download +93 ms against one host alone; 5 a process: +28 and +59 ms; bench/README.md).
HOSTS_PER_SIM_PROCESS = 5
MAX_SIM_PROCESSES = 16


def sim_processes(requested: int | None, hosts: int) -> int:
    if requested is not None:
        return requested
    return max(2, min(MAX_SIM_PROCESSES, -(-hosts // HOSTS_PER_SIM_PROCESS)))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=500)
    parser.add_argument("--queue-managers", type=int, default=10, help="per host")
    parser.add_argument("--delay", type=float, default=0.25, help="seconds each command answers late")
    # 500 hosts in 25 batches of 20, 10 at once: two rounds per batch; more at once and this 2-core machine, which
    # also runs the simulated partitions, is out of CPU (bench/README.md).
    parser.add_argument("--max-mapped-tasks", type=int, default=25, help="MQJOURNAL_TASK_MAX_MAPPED_TASKS")
    parser.add_argument("--hosts-in-parallel", type=int, default=10, help="MQJOURNAL_TASK_HOSTS_IN_PARALLEL")
    parser.add_argument("--sessions-per-host", type=int, default=2, help="MQJOURNAL_SSH_SESSIONS_PER_HOST")
    parser.add_argument("--warmup-hours", type=float, default=1.0, help="simulated churn before the run")
    parser.add_argument(
        "--save-file-size-factor",
        type=float,
        default=1.0,
        help="the simulated save files' size against what they save (fleet file system.save_file_size_factor); "
        "1.0: sized like their receivers, less DTACPR, so the save and copy phases move the real bytes",
    )
    parser.add_argument(
        "--sim-processes",
        type=int,
        default=None,
        help="processes serving the simulated fleet (`mqjournal sim`, each a share of the hosts); by default one per "
        f"{HOSTS_PER_SIM_PROCESS} hosts, 2 to {MAX_SIM_PROCESSES}; 0: in the bench's own process, where the "
        "partitions' work competes with the planner's for one interpreter lock",
    )
    parser.add_argument(
        "--sim-nice",
        type=int,
        default=0,
        help="the simulator processes' nice value (every thread of theirs): above 0, the planner's threads go first "
        "when the machine's cores are all busy, as on a worker whose partitions are other machines",
    )
    parser.add_argument(
        "--catalog",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="the backup catalog's database: SQLite in the data folder (the default catalog, WAL), or a PostgreSQL "
        "server the bench starts on loopback (durable: fsync and synchronous commits on) and stops",
    )
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mqjournal-fleet-bench")
    return parser.parse_args()


def environment(args: argparse.Namespace) -> None:
    """Airflow reads its configuration once, at import: everything is set before the first import of it."""
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    os.environ.update(
        {
            "AIRFLOW_HOME": str(args.out / "airflow"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__LOGGING__LOGGING_LEVEL": "WARNING",
            "MQJOURNAL_TASK_MAX_MAPPED_TASKS": str(args.max_mapped_tasks),
            "MQJOURNAL_TASK_HOSTS_IN_PARALLEL": str(args.hosts_in_parallel),
            "MQJOURNAL_SSH_SESSIONS_PER_HOST": str(args.sessions_per_host),
            # Each host task's sessions wait for their lease in the catalog (SQLite here): poll often.
            "MQJOURNAL_LEASE_POLL_SECONDS": "0.1",
        }
    )
    sys.path.insert(0, str(REPO))


def fleet(args: argparse.Namespace) -> list:
    from mqjournal.fleet import FaultsConfig, HostConfig, PartitionSystemConfig, QueueManagerConfig

    qms = args.queue_managers
    return [
        HostConfig(
            name=f"ibmi{h:04d}",
            port=0,
            utc_offset="+01:00",
            system=PartitionSystemConfig(save_file_size_factor=args.save_file_size_factor),
            queue_managers=[QueueManagerConfig(name=f"QM{q:02d}", threshold_kb=500) for q in range(qms)],
            faults=FaultsConfig(delay_seconds=args.delay),
        )
        for h in range(args.hosts)
    ]


class SimulatorProcesses:
    """The fleet served by `mqjournal sim` processes, each a share of the hosts (as partitions are other machines:
    their work is not the planner's). Their host keys and the client key are made here first, so they share them."""

    def __init__(self, out: Path, config, processes: int, nice: int = 0) -> None:
        from mqjournal.sim.server import load_or_create_host_key
        from mqjournal.sim.service import load_or_create_client_key

        config.state_dir.mkdir(parents=True, exist_ok=True)
        load_or_create_client_key(config.client_key)
        self.host_keys = {h.name: load_or_create_host_key(config.state_dir / f"{h.name}.hostkey") for h in config.hosts}
        self.ports: dict[str, int] = {}
        self.procs: list[subprocess.Popen] = []
        shares = [config.hosts[i::processes] for i in range(processes)]
        for i, hosts in enumerate(s for s in shares if s):
            fleet_file = out / f"sim-{i}.yaml"
            share = config.model_copy(update={"hosts": hosts, "known_hosts": config.state_dir / f"known_hosts-{i}"})
            fleet_file.write_text(json.dumps(share.model_dump(mode="json", exclude_none=True)))
            self.procs.append(
                subprocess.Popen(
                    # nice(1) before the process starts any thread: on Linux each thread has its own nice value.
                    (["nice", "-n", str(nice)] if nice else [])
                    + [sys.executable, "-m", "mqjournal.cli", "sim", "--fleet", str(fleet_file), "--frozen-clock"],
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in self.procs:  # each prints "<host>: ssh <user>@<address> -p <port> (...)" once it serves
            for line in proc.stdout:  # type: ignore[union-attr]
                if m := re.match(r"(\S+): ssh \S+ -p (\d+) ", line):
                    self.ports[m.group(1)] = int(m.group(2))
                elif line.startswith("known_hosts:"):
                    break
            else:
                self.stop()
                raise RuntimeError(f"a simulator process ended before serving (exit {proc.wait()})")

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=60)


class CpuSampler(threading.Thread):
    """The CPU seconds spent so far by this process (the planner: every task runs in it under dag.test()), by the
    simulator processes (the partitions' side, which a real fleet runs on other machines) and by the whole machine,
    sampled every `every` seconds, so that each phase's CPU can be told apart afterwards."""

    def __init__(self, sim_pids: list[int], every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.sim_pids, self.every = sim_pids, every
        self.samples: list[tuple[datetime, float, float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((datetime.now(UTC), _process_cpu("self"), _sims_cpu(self.sim_pids), _machine_busy()))
            self.stop.wait(self.every)

    def between(self, start: datetime, end: datetime) -> dict[str, float]:
        """CPU seconds of the planner, the simulator and the machine from `start` to `end` (nearest samples)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return {}
        first, last = inside[0], inside[-1]
        wall = (last[0] - first[0]).total_seconds()
        used = {
            "planner": last[1] - first[1],
            "simulator": last[2] - first[2],
            "machine": last[3] - first[3],
        }
        return {k: round(v, 1) for k, v in used.items()} | {
            "machine_busy": round(used["machine"] / (wall * (os.cpu_count() or 1)), 2) if wall else 0.0
        }


def _process_cpu(pid: int | str) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _sims_cpu(pids: list[int]) -> float:
    return sum(_process_cpu(pid) for pid in pids)


def _machine_busy() -> float:
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:8]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def run(dag, hosts: list[str]) -> dict:
    """One maintenance run over `hosts`, its gate answered with every queue manager offered."""
    from tests.dags.hitl import EVERY_QUEUE_MANAGER, Responder

    responder = Responder(dag.dag_id, "approve", EVERY_QUEUE_MANAGER, timeout=7200)
    responder.start()
    began = datetime.now(UTC)
    dag_run = dag.test(run_conf={"hosts": hosts, "change_receiver": True, "dry_run": False, "approval_hours": 12.0})
    ended = datetime.now(UTC)
    responder.stop.set()
    tis = dag_run.get_task_instances()
    phases, windows = {}, {}
    for phase, task_ids in PHASES.items():
        mine = [ti for ti in tis if ti.task_id in task_ids and ti.start_date and ti.end_date]
        if mine:
            windows[phase] = (min(ti.start_date for ti in mine), max(ti.end_date for ti in mine))
            phases[phase] = (windows[phase][1] - windows[phase][0]).total_seconds()
    slices = {
        phase: sorted((ti.start_date, ti.end_date) for ti in tis if ti.task_id in PHASES[phase] and ti.end_date)
        for phase in SSH_PHASES
    }
    return {
        "state": str(dag_run.state),
        "run_id": dag_run.run_id,
        "slices": slices,
        "began": began,
        "ended": ended,
        "wall": (ended - began).total_seconds(),
        "phases": phases,
        "windows": windows,
        "task_instances": len(tis),
        "by_task": dict(Counter(ti.task_id for ti in tis)),
        "states": dict(Counter(str(ti.state) for ti in tis)),
    }


def commands(audit: Path) -> list[dict]:
    """The commands sent (intent records of the audit log, written before each is sent), with their time."""
    sent = []
    with audit.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            if event.get("event") == "intent" and not event.get("transfer"):
                sent.append({**event, "at": datetime.fromisoformat(event["at"])})
    return sent


def bytes_moved(audit: Path, window: tuple[datetime, datetime] | None) -> dict:
    """The save files copied off the partitions in `window` (the save phase, whose step copies each new save file
    into the backup store): bytes in all, per second of the phase, and per worker process (the audit's `worker`),
    each worker's bytes per second of the phase and per second of transfer (one SFTP stream's speed), to size a
    maintenance window from."""
    if window is None:
        return {}
    start, end = window
    workers: dict[str, str] = {}  # intent id -> worker
    moved: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])  # worker -> bytes, transfer seconds, copies
    with audit.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            if event.get("transfer") != "get":
                continue
            if event["event"] == "intent":
                workers[event["id"]] = event.get("worker", "?")
            elif (
                event["event"] == "outcome"
                and event["outcome"] == "ok"
                and event.get("size_bytes") is not None
                and start <= datetime.fromisoformat(event["at"]) <= end
            ):
                found = moved[workers.get(event["id"], "?")]
                found[0] += event["size_bytes"]
                found[1] += event["duration_ms"] / 1000
                found[2] += 1
    wall = (end - start).total_seconds()
    total = sum(int(m[0]) for m in moved.values())
    return {
        "bytes": total,
        "bytes_per_s": round(total / wall) if wall else None,
        "per_worker": {
            worker: {
                "copies": int(copies),
                "bytes": int(size),
                "bytes_per_s": round(size / wall) if wall else None,
                "bytes_per_transfer_s": round(size / seconds) if seconds else None,
            }
            for worker, (size, seconds, copies) in sorted(moved.items())
        },
    }


def breakdown(sent: list[dict], slices: dict[str, list[tuple[datetime, datetime]]]) -> dict[str, dict[str, float]]:
    """Where an SSH phase's wall time goes, from its task instances (each works on a batch of hosts at once) and
    the commands sent in each: `host` the mean time from a host's first command to its last in a task instance,
    `slowest` how much longer the batch's slowest host took than that mean (the batch ends with it), and `rest` the
    task instance's time outside its hosts' commands (Airflow's runner, opening the catalog, the last answer).
    Summed over the phase's task instances, in seconds."""
    out: dict[str, dict[str, float]] = {}
    for phase, windows in slices.items():
        host = slowest = rest = 0.0
        for start, end in windows:
            spans: dict[str, list[datetime]] = {}
            for event in (e for e in sent if start <= e["at"] <= end):
                spans.setdefault(event["host"], [event["at"], event["at"]])[1] = event["at"]
            lengths = [(last - first).total_seconds() for first, last in spans.values()]
            if not lengths:
                continue
            mean = sum(lengths) / len(lengths)
            host += mean
            slowest += max(lengths) - mean
            rest += (end - start).total_seconds() - max(lengths)
        out[phase] = {"host": round(host, 2), "slowest": round(slowest, 2), "rest": round(rest, 2)}
    return out


def per_queue_manager(sent: list[dict], windows: dict[str, tuple[datetime, datetime]], qms: int) -> dict[str, float]:
    """Commands per queue manager in each SSH phase, and in the collect phase those after its checkpoint
    (RCDMQMIMG): the reads of AMQJRNINF, the receivers and the messages."""
    counts: dict[str, float] = {}
    for phase in SSH_PHASES:
        if phase in windows:
            start, end = windows[phase]
            counts[phase] = sum(1 for e in sent if start <= e["at"] <= end) / qms
    after: dict[tuple[str, str], int] = defaultdict(int)
    checkpointed: set[tuple[str, str]] = set()
    start, end = windows.get("collect", (datetime.max.replace(tzinfo=UTC),) * 2)
    for event in (e for e in sent if start <= e["at"] <= end):
        named = LIBRARY.search(event["command"])
        key = (event["host"], named.group(0) if named else "")
        if CHECKPOINT.search(event["command"]):
            checkpointed.add(key)
        elif key in checkpointed:
            after[key] += 1
    counts["collect_after_checkpoint"] = sum(after.values()) / max(1, len(checkpointed))
    return counts


def main() -> None:
    args = arguments()
    environment(args)
    with contextlib.ExitStack() as stack:
        if args.catalog == "postgresql":
            from tests.catalog.pgserver import postgres_server

            os.environ["MQJOURNAL_CATALOG_URL"] = stack.enter_context(postgres_server())
        bench(args)


def bench(args: argparse.Namespace) -> None:
    from tests.dags.harness import airflow_for, fleet_in_airflow, fleet_of
    from tests.dags.hitl import TimeoutSweeper

    began = time.monotonic()
    args.sim_processes = sim_processes(args.sim_processes, args.hosts)
    if args.sim_processes:
        config = fleet_of(args.out, fleet(args), hours=args.warmup_hours)
        service = SimulatorProcesses(args.out, config, args.sim_processes, args.sim_nice)
        bag = airflow_for(args.out, config, service.host_keys, service.ports)
        names = sorted(service.ports)
    else:
        service, bag = fleet_in_airflow(args.out, fleet(args), hours=args.warmup_hours)
        names = sorted(service.hosts)
    ready = time.monotonic() - began
    dag = bag.dags["mq_journal_maintenance"]
    audit = args.out / "data" / "audit.jsonl"
    sweeper = TimeoutSweeper()
    sweeper.start()
    cpu = CpuSampler([proc.pid for proc in getattr(service, "procs", [])])
    cpu.start()
    try:
        one = run(dag, names[:1])  # the baseline: one host alone, the same DAG, the same process
        whole = run(dag, [])
    finally:
        sweeper.stop.set()
        cpu.stop.set()
        service.stop()
    cpu_per_phase = {
        which: {p: cpu.between(*result["windows"][p]) for p in SSH_PHASES if p in result["windows"]}
        for which, result in (("one_host", one), ("fleet", whole))
    }
    qms = args.hosts * args.queue_managers
    every = commands(audit)
    sent = per_queue_manager(every, whole["windows"], qms)
    copied = bytes_moved(audit, whole["windows"].get("save"))
    spent = {which: breakdown(every, result["slices"]) for which, result in (("one_host", one), ("fleet", whole))}
    at_once = min(args.hosts_in_parallel, -(-args.hosts // min(args.max_mapped_tasks, args.hosts)))
    ideal = {p: args.hosts / at_once * one["phases"].get(p, 0.0) for p in SSH_PHASES}
    ratios = {p: whole["phases"].get(p, 0.0) / ideal[p] for p in SSH_PHASES if ideal[p]}
    floors = {
        p: cpu_floors(cpu_per_phase["one_host"][p], one["phases"][p], at_once, os.cpu_count() or 1)
        for p in SSH_PHASES
        if cpu_per_phase["one_host"].get(p) and one["phases"].get(p)
    }
    ssh_wall = sum(whole["phases"].get(p, 0.0) for p in SSH_PHASES)
    result = {
        "hosts": args.hosts,
        "queue_managers": qms,
        "delay_s": args.delay,
        "max_mapped_tasks": args.max_mapped_tasks,
        "hosts_in_parallel": args.hosts_in_parallel,
        "sessions_per_host": args.sessions_per_host,
        "hosts_at_once": at_once,
        "sim_processes": args.sim_processes,
        "sim_nice": args.sim_nice,
        "catalog": args.catalog,
        "fleet_ready_s": round(ready, 1),
        "one_host": {k: one[k] for k in ("state", "wall", "phases")},
        "fleet": {k: whole[k] for k in ("state", "wall", "phases", "task_instances", "by_task", "states")},
        "commands_per_qm": {k: round(v, 2) for k, v in sent.items()},
        "save_phase_copies": copied,
        "cpu_s_per_phase": cpu_per_phase,
        "phase_breakdown_s": spent,
        "ratio_per_phase": {p: round(r, 2) for p, r in ratios.items()},
        "ratio_ssh_phases": round(ssh_wall / sum(ideal.values()), 2) if sum(ideal.values()) else None,
        "cpu_floor_per_phase": floors,
        "cores": os.cpu_count(),
    }
    print(f"fleet: {args.hosts} hosts x {args.queue_managers} queue managers, {args.delay} s per command")
    print(f"one host: {one['state']}, {one['wall']:.1f} s; phases {fmt(one['phases'])}")
    print(f"fleet:    {whole['state']}, {whole['wall']:.1f} s; phases {fmt(whole['phases'])}")
    print(f"task instances: {whole['task_instances']} ({whole['by_task']})")
    print("SSH commands per queue manager: " + ", ".join(f"{k} {v:.2f}" for k, v in sent.items()))
    if copied:
        print(
            f"save phase: {copied['bytes'] / 2**20:,.1f} MiB copied off the partitions, "
            f"{copied['bytes_per_s'] / 2**20:,.2f} MiB/s; per worker: "
            + "; ".join(
                f"{w} {c['copies']} copies, {c['bytes'] / 2**20:,.1f} MiB, {c['bytes_per_s'] / 2**20:,.2f} MiB/s "
                f"({c['bytes_per_transfer_s'] / 2**20:,.2f} MiB per second of transfer)"
                for w, c in copied["per_worker"].items()
            )
        )
    for which, phases in cpu_per_phase.items():
        print(
            f"CPU-s, {which}: "
            + "; ".join(
                f"{p} planner {c.get('planner')}, simulator {c.get('simulator')}, machine {c.get('machine')} "
                f"({c.get('machine_busy')} of its cores)"
                for p, c in phases.items()
            )
        )
    for which, phases in spent.items():
        print(
            f"where the time goes, {which} (s: hosts' commands, slowest host beyond them, the rest): "
            + "; ".join(f"{p} {b['host']} + {b['slowest']} + {b['rest']}" for p, b in phases.items())
        )
    print(
        "the least ratio this machine's CPU allows (hosts at once x one host's CPU per second of the phase, over the "
        "machine's cores and over the planner's one core): "
        + "; ".join(f"{p} machine {f['machine']}, planner {f['planner']}" for p, f in floors.items())
    )
    print(f"hosts at once: {at_once}; ratio to the SSH-bound ideal: {result['ratio_ssh_phases']} ({ratios})")
    print("RESULT " + json.dumps(result, default=str))


def cpu_floors(one_host_cpu: dict[str, float], one_host_wall: float, at_once: int, cores: int) -> dict[str, float]:
    """The least ratio to the SSH-bound ideal a phase can reach on this machine for lack of CPU alone. The ideal has
    `at_once` hosts done in one host's time, so it needs `at_once` times the CPU seconds per second one host used:
    the machine's (the planner, the simulator, ssh, the catalog) on `cores`, and the planner's in its one process,
    whose interpreter lock lets it use about one core. Over 1.0, the machine cannot run the fleet at the ideal
    whatever the code does (a slow period of a VM shows here: the same work takes more CPU seconds)."""
    return {
        "machine": round(at_once * one_host_cpu.get("machine", 0.0) / (one_host_wall * cores), 2),
        "planner": round(at_once * one_host_cpu.get("planner", 0.0) / one_host_wall, 2),
    }


def fmt(phases: dict[str, float]) -> str:
    return ", ".join(f"{p} {s:.1f} s" for p, s in phases.items())


if __name__ == "__main__":
    main()
