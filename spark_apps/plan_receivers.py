"""The plan job: per journal receiver of every queue manager, keep, save or delete (docs/planning-rules.md).

Run by spark-submit (see `mqjournal.planjob`), with the `mqjournal` package shipped by --py-files:

    plan_receivers.py --snapshots PATH [--history PATH] --policy-json JSON --as-of ISO8601 --out DIR

This file is the job's I/O and command line; its parts are in `mqjournal.sparkplan`: the input schema, the input
checks, the AMQJRNINF columns and the rules. The rules are implemented a second time, in pure Python, by
`mqjournal.rules`; a property test holds the two equal, so every rule follows the text of the doc to the letter. All
fleet-sized work is DataFrame operations on the executors: the driver only ever collects aggregates, and at most a
handful of example rows when the input is bad.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqjournal.policy import Policy
from mqjournal.snapshot import SCHEMA_ID
from mqjournal.sparkplan.amqjrninf import with_state_columns
from mqjournal.sparkplan.checks import (
    PlanInputError,
    by_recency,
    distinct_snapshots,
    located_snapshots,
    newest_records,
    newest_window,
    refuse_changed_or_incomplete,
)
from mqjournal.sparkplan.rules import (
    chain_facts,
    chain_of,
    next_name_taken,
    planned_receivers,
    queue_manager_states,
    queue_managers_output,
    receiver_figures,
    receivers_output,
    recovery_stuck,
    summary,
)
from mqjournal.sparkplan.schema import EPOCH, KEY, MICROS, SNAPSHOT_SCHEMA

__all__ = ["KEY", "PlanInputError", "main", "plan", "read_inputs", "read_lines"]


# --- input ----------------------------------------------------------------------------------------------------


def read_inputs(spark: SparkSession, locations: list[str]) -> DataFrame:
    """Every snapshot line of every location (file, folder or glob), with the file it came from."""
    frames = [_read_location(spark, location) for location in locations]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _read_location(spark: SparkSession, location: str) -> DataFrame:
    reader = (
        spark.read.schema(SNAPSHOT_SCHEMA)
        # A truncated or garbled line must stop the job, never drop a queue manager from the plan.
        .option("mode", "FAILFAST")
        # The collector writes OUT/run_id=<id>/: without this Spark would add run_id as a partition column,
        # overriding the run_id inside the records.
        .option("recursiveFileLookup", "true")
    )
    if _is_folder(spark, location):
        # The collector's write is atomic through a .tmp file that a reader must never see.
        reader = reader.option("pathGlobFilter", "*.jsonl")
    return reader.json(location).select("*", F.col("_metadata.file_path").alias("source_file"))


def read_lines(spark: SparkSession, locations: list[str]) -> DataFrame:
    """Every line of every location as text (`value`), with its file and the split it was read in: the files and
    options of `read_inputs`. The input check parses these lines itself, so that it sees each record's keys as
    written (the JSON reader reads a missing key as null) and can say which line is bad."""
    frames = []
    for location in locations:
        reader = spark.read.option("recursiveFileLookup", "true")
        if _is_folder(spark, location):
            reader = reader.option("pathGlobFilter", "*.jsonl")
        frames.append(
            reader.text(location).select(
                "value",
                F.col("_metadata.file_path").alias("source_file"),
                F.col("_metadata.file_block_start").alias("block_start"),
            )
        )
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _jvm(spark: SparkSession) -> Any:
    """The driver JVM as py4j shows it: Java packages and classes as attributes, so typed Any."""
    jvm = spark.sparkContext._jvm
    assert jvm is not None, "a driver always has its JVM"
    return jvm


def _is_folder(spark: SparkSession, location: str) -> bool:
    if any(c in location for c in "*?[{"):
        return False
    path = _jvm(spark).org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs.exists(path) and fs.getFileStatus(path).isDirectory()


# --- output ---------------------------------------------------------------------------------------------------


def _hadoop_file(spark: SparkSession, directory: str, name: str) -> tuple[Any, Any]:
    """A file and its file system through Hadoop's FileSystem, so that DIR may be on any file system the Parquet
    goes to."""
    hadoop = _jvm(spark).org.apache.hadoop.fs
    path = hadoop.Path(hadoop.Path(directory), name)
    return path, path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def write_text(spark: SparkSession, directory: str, name: str, text: str) -> None:
    path, fs = _hadoop_file(spark, directory, name)
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def remove_file(spark: SparkSession, directory: str, name: str) -> None:
    path, fs = _hadoop_file(spark, directory, name)
    fs.delete(path, False)


# --- the job ---------------------------------------------------------------------------------------------------------


@contextmanager
def caching() -> Iterator[Callable[[DataFrame], DataFrame]]:
    """`keep(frame)` caches a frame until the `with` block ends; every frame kept is released then, also when the
    block fails."""
    kept: list[DataFrame] = []

    def keep(frame: DataFrame) -> DataFrame:
        kept.append(frame.persist())
        return kept[-1]

    try:
        yield keep
    finally:
        for frame in reversed(kept):
            frame.unpersist()


def plan(spark: SparkSession, *, inputs: list[str], out: str, policy: Policy, as_of: datetime) -> dict:
    as_of_us = (as_of - EPOCH) // MICROS
    # summary.json is written last: a plan that fails half way must not leave an earlier run's summary behind.
    remove_file(spark, out, "summary.json")
    # The input check reads with the JSON reader; the second read (newest_records) reads the same files as text,
    # so that it sees the keys each record has and can name a bad line. Both must list the same files.
    raw = read_inputs(spark, inputs)
    lines = read_lines(spark, inputs)
    listed, listed_again = set(raw.inputFiles()), set(lines.inputFiles())
    if listed != listed_again:
        changed = sorted(listed ^ listed_again)
        raise PlanInputError(f"the input changed while it was listed: {changed[:5]} appeared or disappeared")
    with caching() as keep:
        # What only the selection of the newest snapshots reads is released once they are cached and checked.
        with caching() as keep_while_selecting:
            located = keep_while_selecting(located_snapshots(raw))
            identities, repeated = distinct_snapshots(raw, located)
            window = keep_while_selecting(newest_window(by_recency(identities), runs=policy.stuck_after_runs))
            records, expected = newest_records(lines, window, located, repeated=repeated)
            newest = keep(with_state_columns(records))
            refuse_changed_or_incomplete(newest, lines, expected=expected)
        current = newest.where(F.col("recency") == 1)
        receivers = keep(chain_of(current))
        states = keep(
            queue_manager_states(
                current,
                chain_facts(receivers),
                as_of_us=as_of_us,
                skew_us=policy.clock_skew // MICROS,
                max_age_us=policy.max_snapshot_age // MICROS,
                alert_age_us=policy.recovery_point_alert_age // MICROS,
            )
        )
        planned = keep(planned_receivers(receivers, states, policy=policy, as_of_us=as_of_us))

        receivers_output(planned).write.mode("overwrite").parquet(f"{out}/receivers")
        queue_managers = queue_managers_output(
            states,
            receiver_figures(planned),
            next_name_taken(receivers),
            recovery_stuck(newest, policy.stuck_after_runs),
            as_of_us=as_of_us,
        )
        queue_managers.write.mode("overwrite").parquet(f"{out}/queue_managers")

    # Totals come from what was written, so the summary cannot disagree with the Parquet.
    result = summary(
        spark.read.parquet(f"{out}/receivers"), spark.read.parquet(f"{out}/queue_managers"), as_of=as_of, policy=policy
    )
    write_text(spark, out, "summary.json", json.dumps(result, indent=2, sort_keys=False) + "\n")
    return result


def parse_as_of(text: str | None) -> datetime:
    if not text:
        return datetime.now(UTC)
    value = datetime.fromisoformat(text)
    # A time without offset is taken as UTC, the planner's default zone.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Plan keep/save/delete for every MQ journal receiver.")
    parser.add_argument("--snapshots", action="append", required=True, help="file, folder or glob of JSON Lines")
    parser.add_argument("--history", action="append", default=[], help="more snapshots (file, folder or glob)")
    parser.add_argument("--policy-json", default="{}", help="the Policy as JSON")
    parser.add_argument("--as-of", default=None, help="ISO 8601 planning time; default now (UTC)")
    parser.add_argument("--out", required=True, help="output folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    policy = Policy.model_validate_json(args.policy_json)
    as_of = parse_as_of(args.as_of)
    spark = (
        SparkSession.builder.appName("mqjournal-plan")
        .config("spark.sql.session.timeZone", "UTC")
        # Parquet readers (pyarrow, pandas) see UTC timestamps, not the legacy INT96.
        .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        .getOrCreate()
    )
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    spark.sparkContext.setLogLevel("WARN")
    failure, status = None, 0
    try:
        result = plan(spark, inputs=[*args.snapshots, *args.history], out=args.out, policy=policy, as_of=as_of)
        print(json.dumps(result, sort_keys=False))  # noqa: T201 - the job's answer, on spark-submit's stdout
    except PlanInputError as exc:
        failure, status = str(exc), 2
    except Exception as exc:
        text = str(exc)
        if "MALFORMED_RECORD_IN_PARSING" in text or "JsonParseException" in text or "JsonEOFException" in text:
            file = re.search(r"while reading file (\S+?)\.?\s", text)
            where = file.group(1) if file else ", ".join([*args.snapshots, *args.history])
            failure, status = f"a line of {where} is not a valid JSON {SCHEMA_ID} record (read in FAILFAST mode)", 2
        else:
            traceback.print_exc()
            failure, status = f"{type(exc).__name__}: {(text.strip().splitlines() or [''])[0][:500]}", 1
    finally:
        spark.stop()
    if failure:
        # Printed after Spark stopped, so it is the last thing on stderr for whoever shows the tail.
        print(f"mqjournal plan failed: {failure}", file=sys.stderr, flush=True)  # noqa: T201 - for the caller's tail
    return status


if __name__ == "__main__":
    sys.exit(main())
