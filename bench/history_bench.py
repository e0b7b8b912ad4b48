"""Benchmark: the plan job's time with 30 against 365 collections of history in the snapshots folder.

    .venv/bin/python bench/history_bench.py [--queue-managers 2000] [--repeats 3] [--out DIR]

What the maintenance DAG plans from: the current run's partition and the earlier ones the history rules need
(mqjournal.history.partitions_needed: each queue manager's newest `stuck_after_runs` earlier collections), never the
whole folder. So a plan of a tool in use for a year (365 daily collections) should cost what one of a month costs.

1. Generates `stuck_after_runs` + 1 distinct collections of the fleet with plan_bench's generator (Spark) and lays
   each out as the DAG's collect step writes it: `run_id=<id>/<host>__<library>.jsonl`, a file per queue manager.
2. Builds two snapshot folders, one with 30 collections and one with 365: the distinct ones are the newest; the
   older ones are hard links to the oldest distinct collection's files (no disk space; were they read, the plan
   would read them all and take 100 times as long), each partition's folder time one collection interval older.
3. In one SparkSession, after an untimed warm-up, times alternately (30, 365, 30, ...) what the DAG does: choose the
   partitions (partitions_needed) and run the plan job (plan_receivers.plan) on them. Prints each time, the median
   per history length, their ratio (target: within 1.2x) and a JSON line.

A benchmark, not a test: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import plan_bench  # the bench folder is not a package: plan_bench's generator and session

from mqjournal.history import partitions_needed
from mqjournal.policy import Policy

HISTORIES = (30, 365)
DAY = 86_400


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queue-managers", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="timed plans per history length")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "mqjournal-history-bench")
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--driver-memory", default="4g")
    args = parser.parse_args()
    args.shuffle_partitions = None
    return args


def dag_layout(generated: Path, into: Path) -> list[Path]:
    """plan_bench's collections (several queue managers a file) as the DAG writes them: a file per queue manager,
    named <host>__<library>.jsonl. Returns the partitions, newest first."""
    partitions = []
    for run in sorted(generated.glob("run_id=*"), reverse=True):
        lines: dict[str, list[str]] = defaultdict(list)
        for part in run.glob("*.jsonl"):
            for line in part.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                lines[f"{record['host']}__{record['qmgr_library']}.jsonl"].append(line)
        target = into / run.name
        target.mkdir(parents=True)
        for name, records in lines.items():
            (target / name).write_text("\n".join(records) + "\n", encoding="utf-8")
        partitions.append(target)
    return partitions


def snapshots_folder(distinct: list[Path], root: Path, collections: int) -> Path:
    """`collections` partitions under `root`: the distinct ones (newest first), then hard links to the oldest one's
    files, each partition's folder time a day older than the one before it."""
    root.mkdir(parents=True)
    now = time.time()
    oldest = distinct[-1]
    for age in range(collections):
        source = distinct[age] if age < len(distinct) else oldest
        target = root / (source.name if age < len(distinct) else f"run_id=older-{age:04d}")
        target.mkdir()
        for f in source.iterdir():
            os.link(f, target / f.name)
        os.utime(target, (now - age * DAY, now - age * DAY))
    return root


def plan_once(spark, job, snapshots: Path, current: Path, out: Path, policy: Policy) -> tuple[float, int]:
    """What the DAG does for one run: choose the history partitions, then plan. (seconds, partitions read)."""
    started = time.perf_counter()
    history = partitions_needed(snapshots, current, policy.stuck_after_runs)
    shutil.rmtree(out, ignore_errors=True)
    job.plan(spark, inputs=[str(current), *map(str, history)], out=str(out), policy=policy, as_of=plan_bench.AS_OF)
    return time.perf_counter() - started, 1 + len(history)


def main() -> int:
    args = arguments()
    policy = Policy()
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    spark, _ = plan_bench.build_session(args, None)
    try:
        job = plan_bench.load_job()
        distinct_runs = policy.stuck_after_runs + 1
        receivers = round(args.queue_managers * distinct_runs * plan_bench.RECEIVERS_PER_SNAPSHOT)
        generated = args.out / "generated"
        plan_bench.generate(spark, generated, qms=args.queue_managers, receivers=receivers, runs=distinct_runs)
        distinct = dag_layout(generated, args.out / "distinct")
        roots = {n: snapshots_folder(distinct, args.out / f"history-{n}", n) for n in HISTORIES}
        plan_bench.log(f"{args.queue_managers:,} queue managers; snapshot folders of {HISTORIES} collections built")

        current = distinct[0].name
        plan_once(spark, job, roots[30], roots[30] / current, args.out / "plan", policy)  # warm-up
        times: dict[int, list[float]] = {n: [] for n in HISTORIES}
        read: dict[int, int] = {}
        for repeat in range(args.repeats):
            for n in HISTORIES:
                seconds, read[n] = plan_once(
                    spark, job, roots[n], roots[n] / distinct[0].name, args.out / "plan", policy
                )
                times[n].append(seconds)
                plan_bench.log(f"#{repeat + 1}: {n} collections: {seconds:.1f} s ({read[n]} partitions read)")
    finally:
        spark.stop()
    median = {n: statistics.median(t) for n, t in times.items()}
    ratio = median[365] / median[30]
    plan_bench.log(
        f"median plan time: 30 collections {median[30]:.1f} s, 365 collections {median[365]:.1f} s: "
        f"ratio {ratio:.2f} (target <= 1.2)"
    )
    result = {
        "bench": "mqjournal.plan_history",
        "queue_managers": args.queue_managers,
        "stuck_after_runs": policy.stuck_after_runs,
        "partitions_read": read,
        "seconds": {n: [round(s, 2) for s in t] for n, t in times.items()},
        "median_seconds": {n: round(s, 2) for n, s in median.items()},
        "ratio_365_to_30": round(ratio, 3),
    }
    print(json.dumps(result), flush=True)
    shutil.rmtree(args.out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
