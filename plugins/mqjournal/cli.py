"""`mqjournal ...`: the command line. Each subcommand is a thin adapter over the package's functions."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from importlib import resources
from pathlib import Path

from mqjournal import __version__


def _schema(args: argparse.Namespace) -> int:
    from mqjournal import snapshot

    text = snapshot.json_schema_text()
    if args.write:
        target = Path(str(resources.files("mqjournal").joinpath("schemas", snapshot.SCHEMA_FILE)))
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    else:
        sys.stdout.write(text)
    return 0


def _sim(args: argparse.Namespace) -> int:
    from mqjournal.fleet import load_fleet
    from mqjournal.sim.service import SimulatorService

    config = load_fleet(args.fleet)
    if args.state:
        config = config.model_copy(update={"state_dir": args.state.resolve()})
    service = SimulatorService(config)
    ports = service.start(follow_wall_clock=not args.frozen_clock)
    for name, port in ports.items():
        host = service.hosts[name].partition
        qms = ", ".join(q.name for q in host.queue_managers) or "no queue managers"
        print(f"{name}: ssh {config.user}@127.0.0.1 -p {port}  ({qms}; receivers: {len(host.receivers)})", flush=True)
    print(f"known_hosts: {config.known_hosts}\nclient key: {config.client_key}\nstate: {config.state_dir}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    service.stop()
    return 0


def _collect(args: argparse.Namespace) -> int:
    from mqjournal.collection import collect_fleet
    from mqjournal.fleet import load_fleet

    config = load_fleet(args.fleet)
    run_dir, results = collect_fleet(
        config, args.out, run_id=args.run_id, hosts=args.hosts, change_receiver=args.change_receiver
    )
    _print_collection(results)
    print(f"snapshots: {run_dir / 'snapshots.jsonl'}")
    return 0 if all(not r.failures for r in results) else 3


def _print_collection(results) -> None:
    from mqjournal.jrninf import parse_amqjrninf
    from mqjournal.errors import MalformedAmqjrninf

    for result in results:
        for s in result.snapshots:
            attached = next((r.name for r in s.receivers if r.status == "ATTACHED"), "-")
            try:
                oldest = parse_amqjrninf(s.amqjrninf, qmgr=s.qmgr).receiver or "********** (not on the system)"
            except MalformedAmqjrninf:
                oldest = "unreadable AMQJRNINF"
            state = "checkpoint ok" if s.checkpoint.ok else "CHECKPOINT FAILED"
            print(
                f"{s.host:<12} {s.qmgr:<10} {s.qmgr_library:<10} receivers {len(s.receivers):>4}  attached {attached}"
                f"  oldest needed {oldest}  {state}"
            )
        for f in result.failures:
            print(f"{f.host:<12} {f.qmgr or '(host)':<10} NOT COLLECTED: {f.error}")


def _plan(args: argparse.Namespace) -> int:
    import json

    from mqjournal.planjob import run_plan

    summary = run_plan(args.snapshots, args.out, history=args.history, policy_file=args.policy, as_of=args.as_of)
    print(json.dumps(summary, indent=2))
    print(f"plan: {args.out / 'receivers'}, {args.out / 'queue_managers'}, {args.out / 'summary.json'}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The main job end to end: the simulated fleet, a local Airflow, the maintenance DAG run and its approval."""
    from mqjournal.demo import REPO, run_demo

    return run_demo(
        args.fleet or REPO / "docker" / "fleet.example.yaml",
        home=args.home or REPO / ".airflow",
        port=args.port,
        answer="Approve" if args.approve else "Reject" if args.reject else None,
        keep_running=args.keep_running,
        timeout_minutes=args.timeout,
    )


def _aware(text: str):
    from datetime import datetime, timezone

    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mqjournal",
        description="Backup and recovery planning for the journal receivers of IBM MQ queue managers on IBM i.",
    )
    parser.add_argument("--version", action="version", version=f"mqjournal {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = commands.add_parser(
        "sim",
        help="serve a simulated fleet of IBM i partitions over SSH",
        description="Serve the simulated IBM i partitions of a fleet file over SSH on 127.0.0.1 until interrupted. "
        "State persists in the fleet's state folder, so a restarted simulator is the same fleet.",
    )
    sim.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
    sim.add_argument("--state", type=Path, help="state folder (default: the fleet file's state_dir)")
    sim.add_argument(
        "--frozen-clock", action="store_true", help="do not let simulated time follow the wall clock while serving"
    )
    sim.set_defaults(run=_sim)

    collect = commands.add_parser(
        "collect",
        help="force checkpoints and collect journal state from IBM i over SSH",
        description="For every queue manager of the fleet: RCDMQMIMG, then AMQJRNINF, the receiver chain and the "
        "recovery messages, written as mqjournal.snapshot/v1 records under OUT/run_id=<id>/.",
    )
    collect.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
    collect.add_argument("--out", type=Path, required=True, help="output folder")
    collect.add_argument("--hosts", nargs="+", metavar="HOST", help="only these hosts of the fleet")
    collect.add_argument("--run-id", help="default: collect_<UTC time>")
    collect.add_argument(
        "--change-receiver", action="store_true", help="attach a new receiver first (CHGJRN JRNRCV(*GEN))"
    )
    collect.set_defaults(run=_collect)

    plan = commands.add_parser(
        "plan",
        help="decide per receiver: keep, save or delete, and flag trouble (a Spark job)",
        description="Run the plan job on snapshots with spark-submit (master from MQJOURNAL_SPARK_MASTER, "
        "default local[*]). Writes Parquet datasets OUT/receivers and OUT/queue_managers and OUT/summary.json. "
        "The rules are in docs/planning-rules.md.",
    )
    plan.add_argument("--snapshots", type=Path, required=True, help="snapshot file or folder (JSON Lines)")
    plan.add_argument("--history", type=Path, help="earlier snapshots (file or folder), for the stuck alerts")
    plan.add_argument("--policy", type=Path, help="policy file (YAML or JSON); default: the documented defaults")
    plan.add_argument("--as-of", type=_aware, help="planning time, ISO 8601 (default: now)")
    plan.add_argument("--out", type=Path, required=True, help="output folder")
    plan.set_defaults(run=_plan)

    demo = commands.add_parser(
        "demo",
        help="run the main job end to end on a simulated fleet, in a local Airflow",
        description="Set up a local Airflow (SQLite, Spark local[*]) in HOME, serve the simulated fleet over SSH, "
        "import its Airflow connections, start `airflow standalone`, trigger mq_journal_maintenance and follow it "
        "to the end. It shows where to approve the deletes in the UI, or answers the gate itself with --approve / "
        "--reject. Airflow and the simulator stop at the end (or on Ctrl-C) unless --keep-running.",
    )
    demo.add_argument(
        "--fleet", type=Path, help="fleet file (default: docker/fleet.example.yaml of the repository)"
    )
    answer = demo.add_mutually_exclusive_group()
    answer.add_argument("--approve", action="store_true", help="approve the deletes through the REST API (unattended)")
    answer.add_argument("--reject", action="store_true", help="reject the deletes through the REST API (unattended)")
    demo.add_argument(
        "--keep-running", action="store_true", help="after the run, keep Airflow and the simulator up until Ctrl-C"
    )
    demo.add_argument("--port", type=int, default=8080, help="Airflow API server and UI port (default 8080)")
    demo.add_argument("--home", type=Path, help="AIRFLOW_HOME for the demo (default: .airflow of the repository)")
    demo.add_argument(
        "--timeout", type=float, default=60, metavar="MINUTES", help="give up on the run after this long (default 60)"
    )
    demo.set_defaults(run=_demo)

    schema = commands.add_parser("schema", help="print the JSON Schema of mqjournal.snapshot/v1")
    schema.add_argument("--write", action="store_true", help="rewrite the schema file published in the package")
    schema.set_defaults(run=_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if not args.verbose:
        # paramiko narrates every connection at INFO; only its warnings matter to an operator.
        for noisy in ("paramiko", "mqjournal.sim.server"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
