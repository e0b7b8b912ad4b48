"""The plan job in one Spark session: read the snapshots, check them, plan every receiver, write the plan.

`plan(spark, ...)` runs in whichever session it is given: the classic one spark-submit starts for
`spark_apps/plan_receivers.py` (the job's command line), or a Spark Connect session on a standing server
(`mqjournal.planjob.run_plan_connect`, the DAG's plan task when a Spark Connect connection is set). The rules run once
per queue manager as the reference planner's pure functions (`mqjournal.rules`), in an Arrow function over sorted
partitions (`mapInArrow`) (`mqjournal.sparkplan.grouped`): the executors import mqjournal from the --py-files zip, and a
Connect server's from the same zip, added to the session as an artifact (`mqjournal.planjob.plan_in_session`). The few
file operations outside DataFrames (is a location a folder, remove and write summary.json, move the staged plan into
place) go through the driver JVM's Hadoop FileSystem in a classic session; a Connect client has no JVM, and does them
through fsspec on the storage it shares with the server (`Files`).

The IBM i plan is three Spark jobs, and the driver collects nothing on the way: what the checks and the summary need
is observed (`Observation`) in the jobs that read and write the data. Spark reads, checks, groups and writes; the
planning itself is the reference planner's, so there is one implementation of the rules. Linux queue managers, when
given, add three: their input checks (which collect at most five examples of what is wrong), then their extents and
queue managers.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.linuxmq import planrows as linux_rows
from mqjournal.planrows import REF_COLUMNS, PlanTotals
from mqjournal.policy import Policy
from mqjournal.rules import plan_fleet
from mqjournal.snapshot import SCHEMA_ID
from mqjournal.sparkplan.checks import (
    FirstRead,
    PlanInputError,
    first_read_metrics,
    located_snapshots,
    malformed_line_file,
    ranked_snapshots,
    refuse_bad_records,
    refuse_changed,
    refuse_different_copies,
    refuse_problems,
    window_lines,
    window_records,
)
from mqjournal.sparkplan.grouped import LINE_COLUMNS, planner
from mqjournal.sparkplan.linux import LINUX_SNAPSHOT_SCHEMA, refuse_bad_input, write_linux_plan
from mqjournal.sparkplan.outputs import queue_manager_totals, receiver_totals, summary
from mqjournal.sparkplan.schema import (
    FIRST_READ_SCHEMA,
    KEY,
    QUEUE_MANAGERS_SCHEMA,
    RECEIVERS_SCHEMA,
    SNAPSHOT_SCHEMA,
)

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
    def remove_folder(self, directory: str, name: str) -> None: ...
    def rename(self, directory: str, name: str, new_name: str) -> None: ...
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

    def remove_folder(self, directory: str, name: str) -> None:
        path, fs = self._path(directory, name)
        fs.delete(path, True)

    def rename(self, directory: str, name: str, new_name: str) -> None:
        source, fs = self._path(directory, name)
        target, _ = self._path(directory, new_name)
        # Hadoop moves a folder into an existing target folder instead of replacing it: the caller removes it first.
        if not fs.rename(source, target):
            raise OSError(f"could not rename {source} to {target}")

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

    def remove_folder(self, directory: str, name: str) -> None:
        fs, path = self._fs(f"{directory.rstrip('/')}/{name}")
        if fs.exists(path):
            fs.rm(path, recursive=True)

    def rename(self, directory: str, name: str, new_name: str) -> None:
        fs, source = self._fs(f"{directory.rstrip('/')}/{name}")
        _, target = self._fs(f"{directory.rstrip('/')}/{new_name}")
        fs.mv(source, target, recursive=True)

    def write_text(self, directory: str, name: str, text: str) -> None:
        fs, path = self._fs(f"{directory.rstrip('/')}/{name}")
        fs.makedirs(fs._parent(path), exist_ok=True)
        with fs.open(path, "w", encoding="utf-8") as stream:
            stream.write(text)


def is_connect(spark: SparkSession) -> bool:
    """Whether the session is a Spark Connect client's (pyspark's classic and Connect sessions are two classes).

    A Connect session's class is in its module, imported by whoever made the session: when the module is not
    imported, the session is classic. Importing it to ask would cost a spark-submit job a second of its driver
    (gRPC and the Connect client, 2026-12-02)."""
    connect = sys.modules.get("pyspark.sql.connect.session")
    return connect is not None and isinstance(spark, connect.SparkSession)


def files_of(spark: SparkSession) -> Files:
    return ClientFiles() if is_connect(spark) else HadoopFiles(spark)


# --- input ----------------------------------------------------------------------------------------------------


def read_inputs(
    spark: SparkSession, locations: Sequence[str], files: Files | None = None, *, schema: T.StructType = SNAPSHOT_SCHEMA
) -> DataFrame:
    """Every snapshot line of every location (file, folder or glob) read with `schema` (IBM i's, or Linux's), with
    the file it came from; no rows without locations (a fleet without queue managers of that kind)."""
    files = files or files_of(spark)
    frames = [_read_location(spark, location, files, schema) for location in locations]
    return _union(spark, frames, T.StructType([*schema.fields, T.StructField("source_file", T.StringType())]))


def _union(spark: SparkSession, frames: list[DataFrame], schema: T.StructType) -> DataFrame:
    if not frames:
        return spark.createDataFrame([], schema)
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    return union


def _is_folder(files: Files, location: str) -> bool:
    return not any(c in location for c in "*?[{") and files.is_folder(location)


def _read_location(spark: SparkSession, location: str, files: Files, schema: T.StructType) -> DataFrame:
    reader = (
        spark.read.schema(schema)
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


def read_lines(spark: SparkSession, locations: Sequence[str], files: Files | None = None) -> DataFrame:
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
    return _union(spark, frames, _LINES)


_LINES = T.StructType(
    [
        T.StructField("value", T.StringType()),
        T.StructField("source_file", T.StringType()),
        T.StructField("block_start", T.LongType()),
    ]
)


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


def observation(spark: SparkSession, name: str) -> Any:
    """A `pyspark.sql.Observation` of the session's kind. pyspark chooses the class by a flag of the whole process,
    which the first Spark Connect session sets: a classic session in the same process needs the classic one."""
    if is_connect(spark):
        from pyspark.sql.connect.observation import Observation as ConnectObservation

        return ConnectObservation(f"{name}-{uuid.uuid4().hex}")
    from pyspark.sql.observation import Observation as ClassicObservation

    classic = object.__new__(ClassicObservation)
    ClassicObservation.__init__(classic, f"{name}-{uuid.uuid4().hex}")
    return classic


# The plan is written here first, and moved into place only once every check of the input has passed: the checks are
# observed while the plan is written, so a bad input is known only then. Readers skip folders named with "_".
STAGING = "_staging"
OUTPUTS = ("receivers", *linux_rows.OUTPUTS, "queue_managers")


def plan(
    spark: SparkSession,
    *,
    inputs: Sequence[str],
    out: str,
    policy: Policy,
    as_of: datetime,
    linux_inputs: Sequence[str] = (),
    linux_history: Sequence[str] = (),
) -> PlanTotals:
    """Plan IBM i's `inputs` (current and history, as one) and Linux's `linux_inputs` (the queue managers planned,
    the newest snapshot of each current) with `linux_history` (earlier snapshots, for the stuck alerts).

    Either kind may be absent. Without IBM i inputs the IBM i datasets are written all the same, empty with their
    columns, and the summary counts zeros; without Linux inputs no Linux dataset is written (and an earlier plan's
    in `out` is removed). Every location given must exist: whoever plans a run leaves out a run folder its collect
    never created (`mqjournal.airflow.maintenance`), so a misspelt location stops the plan instead of planning
    nothing."""
    if not inputs and not linux_inputs:
        raise PlanInputError("no snapshots to plan from: give the IBM i snapshots, the Linux snapshots, or both")
    files = files_of(spark)
    # summary.json is written last: a plan that fails half way must not leave an earlier run's summary behind.
    files.remove(out, "summary.json")
    files.remove_folder(out, STAGING)
    staging = f"{out.rstrip('/')}/{STAGING}"
    try:
        with caching() as keep:
            linux = _linux_inputs(spark, files, linux_inputs, linux_history) if linux_inputs else None
            result = _plan(spark, files, list(inputs), staging, policy, as_of, keep)
            if linux is not None:
                write_linux_plan(*linux, staging, keep)
        _publish(files, out, staged=OUTPUTS if linux is not None else ("receivers", "queue_managers"))
    finally:
        files.remove_folder(out, STAGING)
    files.write_text(out, "summary.json", result.model_dump_json(indent=2) + "\n")
    return result


def _linux_inputs(
    spark: SparkSession, files: Files, inputs: Sequence[str], history: Sequence[str]
) -> tuple[DataFrame, DataFrame]:
    """The Linux snapshots of `inputs` and of `history`, checked (PlanInputError names what is wrong) before any of
    the plan is written."""
    current = read_inputs(spark, inputs, files, schema=LINUX_SNAPSHOT_SCHEMA)
    earlier = read_inputs(spark, history, files, schema=LINUX_SNAPSHOT_SCHEMA)
    locations = [*inputs, *history]
    refuse_bad_input(current.unionByName(earlier), read_lines(spark, locations, files), locations)
    return current, earlier


def _publish(files: Files, out: str, *, staged: Sequence[str]) -> None:
    """Move the staged plan into place, and remove what an earlier plan left there that this one did not write.
    queue_managers goes first and comes back last: a reader that finds it (the fleet view lists plans by it) finds
    the other datasets of the same plan; the Linux queue managers likewise come back after their extents."""
    for name in reversed(OUTPUTS):
        files.remove_folder(out, name)
    for name in OUTPUTS:
        if name in staged:
            files.rename(out, f"{STAGING}/{name}", name)


# What the planner gives back per queue manager (`mqjournal.sparkplan.grouped.plan_lines`): its plan, or the lines
# of its window that are not complete v1 records. The queue manager's row is a list of one, as its receivers are
# a list: exploded, the rows keep the columns' nullability the models give them (a struct column that may be null
# would make every column of its rows nullable).
PLANNED_SCHEMA = T.StructType(
    [
        *[T.StructField(name, T.StringType()) for name in (*REF_COLUMNS, "run_id")],
        T.StructField("queue_manager", T.ArrayType(QUEUE_MANAGERS_SCHEMA, containsNull=False)),
        T.StructField("receivers", T.ArrayType(RECEIVERS_SCHEMA, containsNull=False)),
        T.StructField("found", T.LongType()),
        T.StructField("fingerprint", T.LongType()),
        *[T.StructField(name, T.StringType()) for name in ("problem", "problem_kind", "problem_line", "problem_file")],
    ]
)


def _plan(
    spark: SparkSession,
    files: Files,
    inputs: list[str],
    staging: str,
    policy: Policy,
    as_of: datetime,
    keep: Callable[[DataFrame], DataFrame],
) -> PlanTotals:
    """Three jobs: the first read (every record's identity and facts checked; where each queue manager's window of
    newest snapshots is, and how many, observed), then the second read of the window's files, planned per queue
    manager by the reference planner and cached (one row per queue manager), with its receivers written; then its
    queue managers. No join: the planner takes each window from the lines of its files, and the count and fingerprint
    of what it took must be the first read's. Each check is observed in the job that reads what it checks; a failed
    check stops the job before the plan is moved into place."""
    if not inputs:
        return _plan_nothing(spark, staging, policy, as_of)
    runs = policy.stuck_after_runs
    raw = read_inputs(spark, inputs, files, schema=FIRST_READ_SCHEMA)
    first = observation(spark, "first-read")
    ranked_snapshots(located_snapshots(raw)).observe(first, *first_read_metrics(runs)).write.format("noop").mode(
        "overwrite"
    ).save()
    checked = FirstRead.of(first.get)
    if checked.bad:
        refuse_bad_records(raw)
    if checked.repeated:
        # Whole records: a copy must be the same in every value, not only in what the first read reads.
        refuse_different_copies(read_inputs(spark, inputs, files), checked.repeated_folders, copies=checked.repeated)

    lines = read_lines(spark, inputs, files)
    records = window_records(window_lines(lines, checked))
    plan_group = planner(policy=policy, as_of=as_of, schema=_arrow_schema(PLANNED_SCHEMA))
    # Each queue manager's lines in one partition, one after another: the planner takes them queue manager by queue
    # manager as they come.
    by_queue_manager = records.select(*LINE_COLUMNS).repartition(*KEY).sortWithinPartitions(*KEY)
    planned = keep(by_queue_manager.mapInArrow(plan_group, PLANNED_SCHEMA))

    second_read, receiver_counts = observation(spark, "second-read"), observation(spark, "receivers")
    read_again = planned.observe(
        second_read,
        F.count("problem").alias("problems"),
        F.coalesce(F.sum("found"), F.lit(0)).cast("long").alias("found"),
        F.coalesce(F.sum("fingerprint"), F.lit(0)).cast("long").alias("fingerprint"),
    )
    receivers = read_again.where(F.col("problem").isNull()).select(F.explode("receivers").alias("r")).select("r.*")
    receivers.observe(receiver_counts, *receiver_totals()).write.mode("overwrite").parquet(f"{staging}/receivers")
    if second_read.get["problems"]:
        refuse_problems(planned.where(F.col("problem").isNotNull()).limit(100).collect(), lines)
    found = second_read.get
    refuse_changed(
        found["found"], checked.expected, fingerprint=found["fingerprint"], expected_fingerprint=checked.fingerprint
    )

    queue_manager_counts = observation(spark, "queue-managers")
    queue_managers = (
        planned.where(F.col("problem").isNull()).select(F.explode("queue_manager").alias("q")).select("q.*")
    )
    queue_managers.observe(queue_manager_counts, *queue_manager_totals()).write.mode("overwrite").parquet(
        f"{staging}/queue_managers"
    )
    return summary(receiver_counts.get, queue_manager_counts.get, as_of=as_of, policy=policy)


def _arrow_schema(schema: T.StructType) -> Any:
    """`schema` as the Arrow schema the planner must return (its times in UTC, as Spark's worker checks)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema, timezone="UTC")


def _plan_nothing(spark: SparkSession, staging: str, policy: Policy, as_of: datetime) -> PlanTotals:
    """No IBM i snapshots (a Linux-only fleet): the IBM i datasets are written empty, with the columns of the plan
    rows, and the summary is the reference planner's of no queue managers."""
    for name, schema in (("receivers", RECEIVERS_SCHEMA), ("queue_managers", QUEUE_MANAGERS_SCHEMA)):
        spark.createDataFrame([], schema).write.mode("overwrite").parquet(f"{staging}/{name}")
    return plan_fleet([], as_of=as_of, policy=policy).summary()


def failure_text(exc: BaseException, locations: list[str]) -> tuple[str, bool]:
    """What stopped a plan, in one line for the admin, and whether it is the input's fault (a bad record or line)
    rather than the job's or Spark's."""
    if isinstance(exc, PlanInputError):
        return str(exc), True
    file = malformed_line_file(exc)
    if file is not None:
        where = file or ", ".join(locations)
        return f"a line of {where} is not a valid JSON {SCHEMA_ID} record (read in FAILFAST mode)", True
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:500]}", False


__all__ = ["SESSION_CONF", "PlanInputError", "caching", "failure_text", "files_of", "plan", "read_inputs", "read_lines"]
