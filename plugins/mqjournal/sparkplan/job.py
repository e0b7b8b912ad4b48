"""The plan job in one Spark session: read the snapshots, check them, plan every receiver, write the plan.

`plan(spark, ...)` runs in whichever session it is given: the classic one spark-submit starts for
`spark_apps/plan_receivers.py` (the job's command line), or a Spark Connect session on a standing server
(`mqjournal.planjob.run_plan_connect`, the DAG's plan task when a Spark Connect connection is set). The plan is
DataFrame operations only, no Python UDF, so a Connect server needs no mqjournal code of its own. The few file
operations outside DataFrames (is a location a folder, remove and write summary.json) go through the driver JVM's
Hadoop FileSystem in a classic session; a Connect client has no JVM, and does them through fsspec on the storage it
shares with the server (`Files`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from mqjournal.planrows import PlanTotals
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
from mqjournal.sparkplan.schema import EPOCH, MICROS, SNAPSHOT_SCHEMA

# The session's settings the plan relies on: times in UTC, and Parquet readers (pyarrow, pandas) see UTC timestamps,
# not the legacy INT96. Runtime settings, so a Connect session takes them too.
SESSION_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}


# --- files outside DataFrames ---------------------------------------------------------------------------------


class Files(Protocol):
    def is_folder(self, location: str) -> bool: ...
    def remove(self, directory: str, name: str) -> None: ...
    def write_text(self, directory: str, name: str, text: str) -> None: ...


class HadoopFiles:
    """Through the driver JVM's Hadoop FileSystem: any file system the session reads and writes Parquet on."""

    def __init__(self, spark: SparkSession) -> None:
        jvm = spark.sparkContext._jvm
        assert jvm is not None, "a classic session's driver always has its JVM"
        self._hadoop: Any = jvm.org.apache.hadoop.fs  # Java packages as py4j attributes
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _path(self, directory: str, name: str | None = None) -> tuple[Any, Any]:
        path = self._hadoop.Path(directory) if name is None else self._hadoop.Path(self._hadoop.Path(directory), name)
        return path, path.getFileSystem(self._conf)

    def is_folder(self, location: str) -> bool:
        path, fs = self._path(location)
        return bool(fs.exists(path) and fs.getFileStatus(path).isDirectory())

    def remove(self, directory: str, name: str) -> None:
        path, fs = self._path(directory, name)
        fs.delete(path, False)

    def write_text(self, directory: str, name: str, text: str) -> None:
        path, fs = self._path(directory, name)
        stream = fs.create(path, True)
        try:
            stream.write(bytearray(text.encode("utf-8")))
        finally:
            stream.close()


# Hadoop's names of object stores that fsspec knows by another.
_FSSPEC_SCHEMES = {"s3a": "s3", "s3n": "s3"}


class ClientFiles:
    """Through fsspec, from the Connect client: the storage must be the one the server sees (a shared disk or an
    object store), as it is for the Parquet the client reads back."""

    @staticmethod
    def _fs(location: str) -> tuple[Any, str]:
        from fsspec.core import url_to_fs  # type: ignore[import-untyped]  # fsspec ships no type information

        scheme, sep, rest = location.partition("://")
        return url_to_fs(f"{_FSSPEC_SCHEMES.get(scheme, scheme)}{sep}{rest}" if sep else location)

    def is_folder(self, location: str) -> bool:
        fs, path = self._fs(location)
        return bool(fs.isdir(path))

    def remove(self, directory: str, name: str) -> None:
        fs, path = self._fs(f"{directory.rstrip('/')}/{name}")
        if fs.exists(path):
            fs.rm_file(path)

    def write_text(self, directory: str, name: str, text: str) -> None:
        fs, path = self._fs(f"{directory.rstrip('/')}/{name}")
        fs.makedirs(fs._parent(path), exist_ok=True)
        with fs.open(path, "w", encoding="utf-8") as stream:
            stream.write(text)


def is_connect(spark: SparkSession) -> bool:
    """Whether the session is a Spark Connect client's (pyspark's classic and Connect sessions are two classes)."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    return isinstance(spark, ConnectSession)


def files_of(spark: SparkSession) -> Files:
    return ClientFiles() if is_connect(spark) else HadoopFiles(spark)


# --- input ----------------------------------------------------------------------------------------------------


def read_inputs(spark: SparkSession, locations: list[str], files: Files | None = None) -> DataFrame:
    """Every snapshot line of every location (file, folder or glob), with the file it came from."""
    files = files or files_of(spark)
    frames = [_read_location(spark, location, files) for location in locations]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _is_folder(files: Files, location: str) -> bool:
    return not any(c in location for c in "*?[{") and files.is_folder(location)


def _read_location(spark: SparkSession, location: str, files: Files) -> DataFrame:
    reader = (
        spark.read.schema(SNAPSHOT_SCHEMA)
        # A truncated or garbled line must stop the job, never drop a queue manager from the plan.
        .option("mode", "FAILFAST")
        # The collector writes OUT/run_id=<id>/: without this Spark would add run_id as a partition column,
        # overriding the run_id inside the records.
        .option("recursiveFileLookup", "true")
    )
    if _is_folder(files, location):
        # The collector's write is atomic through a .tmp file that a reader must never see.
        reader = reader.option("pathGlobFilter", "*.jsonl")
    return reader.json(location).select("*", F.col("_metadata.file_path").alias("source_file"))


def read_lines(spark: SparkSession, locations: list[str], files: Files | None = None) -> DataFrame:
    """Every line of every location as text (`value`), with its file and the split it was read in: the files and
    options of `read_inputs`. The input check parses these lines itself, so that it sees each record's keys as
    written (the JSON reader reads a missing key as null) and can say which line is bad."""
    files = files or files_of(spark)
    frames = []
    for location in locations:
        reader = spark.read.option("recursiveFileLookup", "true")
        if _is_folder(files, location):
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


def plan(spark: SparkSession, *, inputs: list[str], out: str, policy: Policy, as_of: datetime) -> PlanTotals:
    files = files_of(spark)
    as_of_us = (as_of - EPOCH) // MICROS
    # summary.json is written last: a plan that fails half way must not leave an earlier run's summary behind.
    files.remove(out, "summary.json")
    # The input check reads with the JSON reader; the second read (newest_records) reads the same files as text,
    # so that it sees the keys each record has and can name a bad line. Both must list the same files.
    raw = read_inputs(spark, inputs, files)
    lines = read_lines(spark, inputs, files)
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
    files.write_text(out, "summary.json", result.model_dump_json(indent=2) + "\n")
    return result


def failure_text(exc: BaseException, locations: list[str]) -> tuple[str, bool]:
    """What stopped a plan, in one line for the admin, and whether it is the input's fault (a bad record or line)
    rather than the job's or Spark's."""
    if isinstance(exc, PlanInputError):
        return str(exc), True
    text = str(exc)
    if "MALFORMED_RECORD_IN_PARSING" in text or "JsonParseException" in text or "JsonEOFException" in text:
        file = re.search(r"while reading file (\S+?)\.?\s", text)
        where = file.group(1) if file else ", ".join(locations)
        return f"a line of {where} is not a valid JSON {SCHEMA_ID} record (read in FAILFAST mode)", True
    return f"{type(exc).__name__}: {(text.strip().splitlines() or [''])[0][:500]}", False


__all__ = ["SESSION_CONF", "PlanInputError", "caching", "failure_text", "files_of", "plan", "read_inputs", "read_lines"]
