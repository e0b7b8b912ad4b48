"""Benchmark of the plan task's fixed cost on a one-host run: the plan job by spark-submit, the same plan on a
standing Spark Connect server, and the floor of a spark-submit that only reads the same input.

    .venv/bin/python bench/plan_launch_bench.py [--queue-managers 10] [--runs 3] [--repeat 3] [--out DIR]

The input is one host's `--queue-managers` queue managers over `--runs` collections (the newest is the current
state, the others the history the stuck alerts read), each with a receiver chain of a few dozen receivers: what the
maintenance DAG's plan task reads for one host. Each launch is timed `--repeat` times as a whole, from the caller's
side (the task's view): spark-submit's process, or `run_plan_connect` from session to summary. The Connect server is
started once before its runs, and its first plan (the JIT warming up) is reported apart from the warm ones.

It prints each launch's minimum, median and maximum, the ratios of the medians to the floor's, and one JSON line.
A benchmark, not a test: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mqjournal import planjob  # noqa: E402 - after the repository is on the path
from mqjournal.snapshot import write_snapshots  # noqa: E402
from mqjournal.sparkconnect import standing_server  # noqa: E402
from tests.plan.builders import chain, names, snapshot  # noqa: E402

AS_OF = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def write_input(folder: Path, queue_managers: int, runs: int) -> Path:
    """One host's collections in the collector's layout (run_id=<id>/snapshots.jsonl), newest last."""
    for run in range(runs):
        collected = AS_OF - timedelta(hours=24 * (runs - run))
        snapshots = []
        for i in range(queue_managers):
            library = f"QMBENCH{i:03d}"
            start = collected - timedelta(hours=40)
            # Detached receivers saved: the plan has receivers to delete, to save and to keep, as a real night has.
            receivers = chain(names(1 + run * 4, 40), library=library, start=start, saved=tuple(names(1, 30)))
            needed = receivers[-6]
            snapshots.append(
                snapshot(
                    receivers,
                    oldest=needed.name,
                    host="bench1",
                    qmgr=f"BENCH{i:03d}",
                    library=library,
                    run_id=f"R{run}",
                    collected_at=collected,
                )
            )
        write_snapshots(folder / f"run_id=R{run}" / "snapshots.jsonl", snapshots)
    return folder


def timed(action: Callable[[], object]) -> float:
    start = time.monotonic()
    action()
    return time.monotonic() - start


def floor_once(location: Path, py_files: Path) -> None:
    args = [str(planjob.spark_submit_executable()), "--master", "local[*]", "--py-files", str(py_files)]
    for key, value in planjob.default_conf("local[*]").items():
        args += ["--conf", f"{key}={value}"]
    args += [str(ROOT / "bench" / "read_input_job.py"), str(location)]
    subprocess.run(args, check=True, capture_output=True, env=planjob.submit_environment("local[*]"))


def figures(times: list[float]) -> dict[str, float]:
    return {"min": min(times), "median": statistics.median(times), "max": max(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue-managers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="collections of the host (the newest is current)")
    parser.add_argument("--repeat", type=int, default=3, help="timed launches of each kind")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mqjournal-launch-bench")
    args = parser.parse_args()
    work = args.out
    work.mkdir(parents=True, exist_ok=True)
    inputs = write_input(work / "snapshots", args.queue_managers, args.runs)
    py_files = planjob.build_py_files(work)

    def submitted(n: int) -> None:
        planjob.run_plan(inputs, work / f"submit{n}", history=None, policy_file=None, as_of=AS_OF)

    def on_connect(url: str, out: str) -> None:
        planjob.run_plan_connect(url, inputs, work / out, history=None, policy_file=None, as_of=AS_OF)

    floor = [timed(lambda: floor_once(inputs, py_files)) for _ in range(args.repeat)]
    submit = [timed(functools.partial(submitted, n)) for n in range(args.repeat)]
    with standing_server(work / "connect.log") as url:
        first = timed(lambda: on_connect(url, "connect-first"))
        connect = [timed(functools.partial(on_connect, url, f"connect{n}")) for n in range(args.repeat)]
    actions = json.loads((work / "submit0" / "summary.json").read_text())["actions"]
    same = json.loads((work / "connect0" / "summary.json").read_text())["actions"] == actions
    result = {
        "date": datetime.now(UTC).date().isoformat(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "queue_managers": args.queue_managers,
        "collections": args.runs,
        "floor": figures(floor),
        "spark_submit": figures(submit),
        "connect_first": first,
        "connect_warm": figures(connect),
        "submit_over_floor": statistics.median(submit) / statistics.median(floor),
        "connect_over_floor": statistics.median(connect) / statistics.median(floor),
        "same_plan": same,
    }
    print(f"one host, {args.queue_managers} queue managers x {args.runs} collections; {os.cpu_count()} cores")
    for name in ("floor", "spark_submit", "connect_warm"):
        f = result[name]
        print(f"  {name:<13} min {f['min']:6.1f} s  median {f['median']:6.1f} s  max {f['max']:6.1f} s")
    print(f"  connect, first plan on a new server: {first:.1f} s")
    print(
        f"  spark-submit / floor {result['submit_over_floor']:.2f}x, Connect warm / floor "
        f"{result['connect_over_floor']:.2f}x; the same plan: {result['same_plan']}"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
