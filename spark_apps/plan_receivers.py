"""The plan job: per journal receiver of every IBM i queue manager, keep, save or delete (docs/planning-rules.md),
and per log extent of every Linux queue manager, keep, archive or leave to MQ (mqjournal.linuxmq.plan).

Run by spark-submit (see `mqjournal.planjob`), with the `mqjournal` package shipped by --py-files:

    plan_receivers.py [--snapshots PATH] [--history PATH] [--linux-snapshots PATH] [--linux-history PATH]
                      --policy-json JSON --as-of ISO8601 --out DIR

Each PATH option may be given again; the IBM i snapshots, the Linux ones, or both.

This file is the job's command line; the job itself is `mqjournal.sparkplan.job.plan`, which a Spark Connect session
runs as well, and its parts are in `mqjournal.sparkplan`: the input schema, the input checks, and the per-queue-manager
planner. Spark reads, checks, groups and writes; the rules run once per queue manager as the pure functions of
`mqjournal.rules` (the reference planner), in an Arrow function over sorted partitions (`mapInArrow`), so there is one
implementation of them. The driver collects nothing fleet-sized: it learns aggregates, observed as the jobs run, and at
most a handful of example rows when the input is bad.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from datetime import UTC, datetime

from pyspark.sql import SparkSession

from mqjournal.policy import Policy
from mqjournal.sparkplan.job import SESSION_CONF, PlanInputError, failure_text, plan, read_inputs, read_lines
from mqjournal.sparkplan.schema import KEY

__all__ = ["KEY", "PlanInputError", "main", "plan", "read_inputs", "read_lines"]


def parse_as_of(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    value = datetime.fromisoformat(text)
    # A time without offset is taken as UTC, the planner's default zone.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Plan keep/save/delete for every MQ journal receiver.")
    parser.add_argument(
        "--snapshots", action="append", default=[], help="IBM i snapshots: file, folder or glob of JSON Lines"
    )
    parser.add_argument("--history", action="append", default=[], help="more IBM i snapshots (file, folder or glob)")
    parser.add_argument(
        "--linux-snapshots",
        action="append",
        default=[],
        help="Linux queue managers' snapshots (mqjournal.linux-snapshot/v1): file, folder or glob of JSON Lines",
    )
    parser.add_argument(
        "--linux-history",
        action="append",
        default=[],
        help="earlier Linux snapshots, for the stuck alerts (file, folder or glob)",
    )
    parser.add_argument("--policy-json", default="{}", help="the Policy as JSON")
    parser.add_argument("--as-of", default=None, help="ISO 8601 planning time; default now (UTC)")
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args(argv)
    if not args.snapshots and not args.linux_snapshots:
        parser.error("give --snapshots (IBM i), --linux-snapshots, or both")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    policy = Policy.model_validate_json(args.policy_json)
    as_of = parse_as_of(args.as_of)
    builder = SparkSession.builder.appName("mqjournal-plan")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("WARN")
    inputs = [*args.snapshots, *args.history]
    failure, status = None, 0
    try:
        result = plan(
            spark,
            inputs=inputs,
            out=args.out,
            policy=policy,
            as_of=as_of,
            linux_inputs=args.linux_snapshots,
            linux_history=args.linux_history,
        )
        print(result.model_dump_json())  # noqa: T201 - the job's answer, on spark-submit's stdout
    except Exception as exc:
        failure, of_input = failure_text(exc, [*inputs, *args.linux_snapshots, *args.linux_history])
        status = 2 if of_input else 1
        if not of_input:
            traceback.print_exc()
    finally:
        spark.stop()
    if failure:
        # Printed after Spark stopped, so it is the last thing on stderr for whoever shows the tail.
        print(f"mqjournal plan failed: {failure}", file=sys.stderr, flush=True)  # noqa: T201 - for the caller's tail
    return status


if __name__ == "__main__":
    sys.exit(main())
