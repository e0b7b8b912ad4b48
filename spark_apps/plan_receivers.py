"""The plan job: per journal receiver of every queue manager, keep, save or delete (docs/planning-rules.md).

Run by spark-submit (see `mqjournal.planjob`), with the `mqjournal` package shipped by --py-files:

    plan_receivers.py --snapshots PATH [--history PATH] --policy-json JSON --as-of ISO8601 --out DIR

The rules are implemented a second time, in pure Python, by `mqjournal.rules`; a property test holds the two equal,
so every rule here follows the text of the doc to the letter. All fleet-sized work is DataFrame operations on the
executors: the driver only ever collects aggregates, and at most a handful of example rows when the input is bad.
Every time is compared as integer microseconds since the epoch, exactly as Python compares aware datetimes.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import traceback
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote, urlparse

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.jrninf import RECORD_LENGTH
from mqjournal.policy import Policy

# The vocabulary (actions, block reasons in their order) is the reference planner's; the package is shipped to the
# driver with --py-files. The rules themselves are written again below in DataFrame form, held equal by a test.
from mqjournal.rules import BLOCK_ORDER, DELETE, KEEP, SAVE, SAVE_THEN_DELETE
from mqjournal.snapshot import (
    ADDED_KEYS,
    LIST_OF_OBJECTS,
    OBJECT,
    OPTIONAL_OBJECT,
    SCHEMA_ID,
    ContractKeys,
    ReceiverStatus,
    contract_keys,
    line_problem,
)

KEY = ["host", "qmgr", "qmgr_library"]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROS = timedelta(microseconds=1)


RECEIVERS_COLUMNS = [
    "host", "qmgr", "qmgr_library", "receiver", "library", "chain_position", "status", "size_bytes", "action", "reason",
]  # fmt: skip
QUEUE_MANAGERS_COLUMNS = [
    "host", "qmgr", "qmgr_library", "oldest_needed", "blocked", "block_reason", "alerts", "recovery_points",
    "receivers_to_save", "bytes_to_save", "receivers_to_delete", "bytes_to_delete", "bytes_freed", "chain_length",
    "oldest_needed_age_seconds", "collected_at", "run_id",
]  # fmt: skip


class PlanInputError(Exception):
    """The input cannot be planned from: the job stops rather than plan a queue manager from half its state."""


# --- input ----------------------------------------------------------------------------------------------------

# Timestamps are read as text: the offset of `collected_at` is itself data (AMQJRNINF is in that local time).
_TEXT, _TIME, _NAME = T.StringType(), T.StringType(), T.StringType()
# Journal sequence numbers can exceed a long (*MAXOPT3), so they are exact decimals.
_SEQUENCE = T.DecimalType(38, 0)


def _struct(*fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType([T.StructField(name, kind) for name, kind in fields])


_MESSAGE = _struct(("id", _TEXT), ("text", _TEXT))
_RECOVERY_POINT = _struct(("receiver", _NAME), ("at", _TIME))
_RECEIVER = _struct(
    ("name", _NAME),
    ("library", _NAME),
    ("status", _TEXT),
    ("attached_at", _TIME),
    ("detached_at", _TIME),
    ("saved_at", _TIME),
    ("size_bytes", T.LongType()),
    ("threshold_kb", T.LongType()),
    ("previous", _NAME),
    ("previous_library", _NAME),
    ("next", _NAME),
    ("next_library", _NAME),
    ("first_sequence", _SEQUENCE),
    ("last_sequence", _SEQUENCE),
    ("journal", _NAME),
    ("journal_library", _NAME),
)
SNAPSHOT_SCHEMA = _struct(
    ("schema", _TEXT),
    ("run_id", _TEXT),
    ("collected_at", _TIME),
    ("host", _TEXT),
    ("platform", _TEXT),
    ("qmgr", _TEXT),
    ("qmgr_library", _NAME),
    ("journal", _struct(("name", _NAME), ("library", _NAME))),
    (
        "checkpoint",
        _struct(
            ("forced", T.BooleanType()), ("ok", T.BooleanType()), ("at", _TIME), ("messages", T.ArrayType(_MESSAGE))
        ),
    ),
    ("amqjrninf", _TEXT),
    ("startup_recovery", _RECOVERY_POINT),
    ("media_recovery", _RECOVERY_POINT),
    ("receivers", T.ArrayType(_RECEIVER)),
    (
        "messages",
        T.ArrayType(_struct(("id", _TEXT), ("at", _TIME), ("text", _TEXT), ("queue", _TEXT), ("tokens", _TEXT))),
    ),
    ("asp_number", T.LongType()),
    ("asp_capacity_bytes", T.LongType()),
    ("asp_available_bytes", T.LongType()),
)

# What pydantic writes for an AwareDatetime: always an offset, at most microseconds. The ranges are those of a
# valid date and time (year 1 on, as Python's datetime; offsets up to 18:00, as java.time), all but the length of
# the month, which `_bad_instant` checks for days 29 to 31 only: a regex is far cheaper than parsing every time.
_ISO_INSTANT = (
    r"^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{1,6})?(Z|[+-]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))\z"
)
_OFFSET = r"(Z|[+-][0-9]{2}:[0-9]{2})\z"


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


def _is_folder(spark: SparkSession, location: str) -> bool:
    if any(c in location for c in "*?[{"):
        return False
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(location)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    return fs.exists(path) and fs.getFileStatus(path).isDirectory()


def _bad_instant(column: Column) -> Column:
    past_28th = F.substring(column, 9, 2) > F.lit("28")
    no_such_day = past_28th & F.substring(column, 1, 10).try_cast("date").isNull()
    return column.isNotNull() & (~column.rlike(_ISO_INSTANT) | no_such_day)


POINTS = ("startup_recovery", "media_recovery")  # AMQ7460, AMQ7462
_RECEIVER_PROBLEM = "a receiver lacks name, library, size_bytes or a known status, or has a bad time"


# --- every key of the contract (docs, Input) ---------------------------------------------------------------------

# A key of a JSON object as written. In valid JSON (the first read checked it) an unescaped quote followed by a colon
# closes a key, and the quote before it, with no quote or backslash in between, opens it: so this matches exactly
# the keys of a record whose keys have no quote or backslash, never text inside a string value. (A key with one is
# not the contract's: it shows as another key, and the record is refused.)
_JSON_KEY = r'"([^"\\]*+)"[ \t\r\n]*+:'
_KEY_PROBLEM = "a key of the contract is missing, or a key is not one of the contract's"
_NOT_JSON = f"the line is not a valid JSON {SCHEMA_ID} record"
_CORRUPT = "_corrupt_line"


def _count(array: Column) -> Column:
    return F.when(array.isNull(), F.lit(0)).otherwise(F.size(array))


def _flat_keys(keys: ContractKeys) -> str:
    assert all(shape not in (OBJECT, OPTIONAL_OBJECT, LIST_OF_OBJECTS) for _, shape, _ in keys)
    return "".join(f"{key}," for key, _, _ in keys)


def _keys_in_order(keys: ContractKeys, value: Column | None) -> Column:
    """The keys of a complete record in the order the model writes them, each followed by a comma."""
    parts = []
    for key, shape, nested in keys:
        column = F.col(key) if value is None else value[key]
        parts.append(F.lit(f"{key},"))
        if shape == OBJECT:
            parts.append(_keys_in_order(nested, column))
        elif shape == OPTIONAL_OBJECT:
            parts.append(F.when(column.isNull(), F.lit("")).otherwise(_keys_in_order(nested, column)))
        elif shape == LIST_OF_OBJECTS:
            parts.append(F.repeat(F.lit(_flat_keys(nested)), _count(column)))
    return F.concat(*parts)


def _key_counts(keys: ContractKeys, value: Column | None, times: Column, counts: dict[str, list[Column]]) -> None:
    """How often each key occurs in a complete record (a key name can occur in several objects)."""
    for key, shape, nested in keys:
        column = F.col(key) if value is None else value[key]
        counts.setdefault(key, []).append(times)
        if shape == OBJECT:
            _key_counts(nested, column, times, counts)
        elif shape == OPTIONAL_OBJECT:
            _key_counts(nested, column, times * F.when(column.isNull(), 0).otherwise(1), counts)
        elif shape == LIST_OF_OBJECTS:
            _key_counts(nested, None, times * _count(column), counts)


def key_problem() -> Column:
    """Whether the line's keys differ from those of a complete record of its shape (never null).

    The keys are compared as a sorted list, so that any key order is accepted; the order the model writes is tried
    first, because it needs no sort. Equal lists mean no key is missing and none is unknown. A key given twice in one
    object and missing from another object of the same kind is not detected. The keys added to v1 later
    (`ADDED_KEYS`) are left out on both sides: a record written before them is complete without them.
    """
    keys = contract_keys(with_added=False)
    written = F.filter(
        F.regexp_extract_all(F.col("value"), F.lit(_JSON_KEY), 1), lambda key: ~key.isin(*sorted(ADDED_KEYS))
    )
    counts: dict[str, list[Column]] = {}
    _key_counts(keys, None, F.lit(1), counts)
    expected_sorted = F.concat(
        *[F.repeat(F.lit(f"{key},"), sum(counts[key][1:], counts[key][0])) for key in sorted(counts)]
    )
    as_written = F.concat(F.array_join(written, ","), F.lit(","))
    sorted_written = F.concat(F.array_join(F.array_sort(written), ","), F.lit(","))
    return F.coalesce(
        F.when(as_written == _keys_in_order(keys, None), F.lit(False)).otherwise(sorted_written != expected_sorted),
        F.lit(True),
    )


def record_problem() -> Column:
    """Why a record is not a usable v1 snapshot, receivers aside, or null. A missing key reads as null here: the
    keys of the records planned from are checked by the second read (`incomplete_lines`)."""
    checks = [
        (~F.coalesce(F.col("schema") == SCHEMA_ID, F.lit(False)), f"schema is not {SCHEMA_ID}"),
        (F.coalesce(F.length("run_id"), F.lit(0)) == 0, "run_id is missing"),
        (F.coalesce(F.length("host"), F.lit(0)) == 0, "host is missing"),
        (F.col("qmgr").isNull() | F.col("qmgr_library").isNull(), "qmgr or qmgr_library is missing"),
        (F.col("journal.name").isNull() | F.col("journal.library").isNull(), "journal is missing"),
        (F.col("checkpoint.forced").isNull() | F.col("checkpoint.ok").isNull(), "checkpoint is missing"),
        (
            F.col("collected_at").isNull() | _bad_instant(F.col("collected_at")),
            "collected_at is not an ISO 8601 time with offset",
        ),
        (F.col("receivers").isNull(), "receivers is missing"),
        *[
            (
                F.col(point).isNotNull() & (F.col(f"{point}.at").isNull() | _bad_instant(F.col(f"{point}.at"))),
                f"{point}.at is not an ISO 8601 time with offset",
            )
            for point in POINTS
        ],
    ]
    return F.coalesce(*[F.when(failed, F.lit(problem)) for failed, problem in checks])


def receiver_problem(r: Column) -> Column:
    """Whether one receiver of a record is unusable (never null)."""
    statuses = [str(s) for s in ReceiverStatus]
    return (
        r.isNull()
        | r["name"].isNull()
        | r["library"].isNull()
        | r["size_bytes"].isNull()
        | ~F.coalesce(r["status"].isin(statuses), F.lit(False))
        | _bad_instant(r["attached_at"])
        | _bad_instant(r["detached_at"])
        | _bad_instant(r["saved_at"])
    )


IDENTITY = [*KEY, "run_id", "collected_us"]
# The second read of the input (newest_snapshots) is filtered on the run ids it needs, when there are at most this
# many: the JSON reader then stops reading every other line at its run_id, before its receivers.
MAX_PUSHED_RUN_IDS = 1000
# ... and on the files that hold them, when there are at most this many.
MAX_PUSHED_FILES = 10_000
# The identities a read of the input is joined with are broadcast up to this many.
MAX_BROADCAST_IDENTITIES = 1_000_000


def _collected_us() -> Column:
    return F.unix_micros(F.col("collected_at").try_cast("timestamp"))


def parsed_lines(lines: DataFrame) -> DataFrame:
    """The records of the lines that are not blank, parsed with the job's schema, with the line (`value`), its file
    and split. A line that does not parse (it parsed when first read: the file changed since) has `_corrupt_line`."""
    schema = T.StructType([*SNAPSHOT_SCHEMA.fields, T.StructField(_CORRUPT, T.StringType())])
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
    # Blank as Python's str.strip() sees it, as read_snapshots skips them.
    records = lines.where(~F.col("value").rlike(rf"^[{_PY_WHITESPACE}]*\z"))
    return records.select(
        F.from_json("value", schema, options).alias("record"), "value", "source_file", "block_start"
    ).select("record.*", "value", "source_file", "block_start")


def checked_records(raw: DataFrame) -> DataFrame:
    """Per record, one row with its identity, file and `problem` (or null), plus one row per bad receiver.

    `first_row` marks the one row of each record; the other rows only carry a problem. The receivers are exploded
    rather than tested with `exists`, whose lambda Spark interprets row by row (about 3x slower than the generated
    code of a filter on the exploded rows, with the same expressions). Everything about the record as a whole is
    computed after the filter: computed before the explode, the generated code would evaluate it once per receiver.
    """
    exploded = raw.select("*", F.posexplode_outer("receivers").alias("position", "r"))
    first_row = F.coalesce(F.col("position") == 0, F.lit(True))
    bad_receiver = F.coalesce(F.size("receivers") > 0, F.lit(False)) & receiver_problem(F.col("r"))
    kept = exploded.select("*", first_row.alias("first_row"), bad_receiver.alias("bad_receiver")).where(
        F.col("first_row") | F.col("bad_receiver")
    )
    return kept.select(
        *KEY,
        "run_id",
        _collected_us().alias("collected_us"),
        "source_file",
        "first_row",
        F.coalesce(record_problem(), F.when(F.col("bad_receiver"), F.lit(_RECEIVER_PROBLEM))).alias("problem"),
    )


def _content_hash() -> Column:
    """Two native hashes of the whole record's JSON: a 96-bit key, compared only among records of one identity."""
    text = F.to_json(F.struct(*[F.col(field.name) for field in SNAPSHOT_SCHEMA.fields]))
    return F.struct(F.xxhash64(text).alias("xxhash64"), F.hash(text).alias("murmur3"))


def records_of(raw: DataFrame, identities: DataFrame, located: DataFrame) -> tuple[DataFrame, int]:
    """The records of `raw` with one of these identities, and how many identities that is.

    An inner join, so the identities' other columns come along. `located` tells the files each identity was read
    from: only those files are read again, and when the identities have few run ids, only lines of those run ids,
    a filter the JSON reader applies as soon as it has read a line's run_id (it skips the rest of other lines).
    """
    per_run = identities.groupBy("run_id").count().limit(MAX_PUSHED_RUN_IDS + 1).collect()
    files = (
        located.join(identities, IDENTITY, "left_semi")
        .select("source_file")
        .distinct()
        .limit(MAX_PUSHED_FILES + 1)
        .collect()
    )
    records = raw
    if len(files) <= MAX_PUSHED_FILES:
        records = records.where(F.col("source_file").isin([row.source_file for row in files]))
    if len(per_run) <= MAX_PUSHED_RUN_IDS:
        records = records.where(F.col("run_id").isin([row.run_id for row in per_run]))
        count = sum(row["count"] for row in per_run)
    else:
        count = identities.count()
    if count <= MAX_BROADCAST_IDENTITIES:
        identities = F.broadcast(identities)
    return records.withColumn("collected_us", _collected_us()).join(identities, IDENTITY), count


def line_numbers(lines: DataFrame, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The line number (from 1) of each (file, line text), for the few examples of a failure only.

    Lines are numbered per split of a file (the rows of one split come in file order), then offset by the number of
    lines of the file's earlier splits. A line that occurs twice gets its first number.
    """
    files = sorted({file for file, _ in wanted})
    rows = lines.where(F.col("source_file").isin(files)).select(
        "source_file", "block_start", "value", F.monotonically_increasing_id().alias("order")
    )
    in_split = rows.withColumn(
        "in_split", F.row_number().over(Window.partitionBy("source_file", "block_start").orderBy("order"))
    )
    earlier = Window.partitionBy("source_file").orderBy("block_start").rowsBetween(Window.unboundedPreceding, -1)
    splits = (
        rows.groupBy("source_file", "block_start")
        .count()
        .select("source_file", "block_start", F.coalesce(F.sum("count").over(earlier), F.lit(0)).alias("before"))
    )
    found = (
        in_split.where(F.col("value").isin(sorted({text for _, text in wanted})))
        .join(splits, ["source_file", "block_start"])
        .groupBy("source_file", "value")
        .agg(F.min(F.col("before") + F.col("in_split")).alias("line"))
        .collect()
    )
    return {(row.source_file, row.value): row.line for row in found}


def _where(file: str, line: int | None) -> str:
    """A file as the user named it (a local path, not a file: URI), and the line."""
    parsed = urlparse(file)
    path = unquote(parsed.path) if parsed.scheme == "file" else file
    return f"{path}:{line}" if line is not None else path


def distinct_snapshots(raw: DataFrame) -> tuple[DataFrame, DataFrame, bool]:
    """One row per (key, run_id, collected_at) with its number of records, after stopping on bad records.

    Returns the identities; `located`, the files each identity was read from (persisted: the caller unpersists);
    and whether some identity has several records. The input is read once when it is good. The same run may be
    given twice, e.g. in PATH and in --history. Two different records under one identity would make the current
    state depend on read order, so they stop the job too: only identities given more than once are read again and
    compared, by a hash of their whole content.
    """
    checked = checked_records(raw)
    located = (
        # Partitioned by key once: the aggregate below and the window of by_recency need no other shuffle.
        checked.repartition(*KEY)
        .groupBy(*IDENTITY, "source_file")
        .agg(
            F.count(F.when(F.col("first_row"), 1)).alias("copies"),
            F.bool_or(F.col("problem").isNotNull()).alias("bad"),
        )
        .persist()
    )
    identities = located.groupBy(*IDENTITY).agg(F.sum("copies").alias("copies"), F.bool_or("bad").alias("bad"))
    counts = identities.agg(
        F.count(F.when(F.col("bad"), 1)).alias("bad"), F.count(F.when(F.col("copies") > 1, 1)).alias("repeated")
    ).first()
    if counts.bad:
        located.unpersist()
        # The examples are gathered only now that a count says there are some: the input is read once more.
        findings = (
            checked.where(F.col("problem").isNotNull())
            .groupBy(*IDENTITY)
            .agg(F.first("problem").alias("problem"), F.array_sort(F.collect_set("source_file")).alias("files"))
            .limit(5)
            .collect()
        )
        examples = "; ".join(f"{f.files} (run {f.run_id}, {f.host}/{f.qmgr}): {f.problem}" for f in findings)
        raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {examples}")
    if counts.repeated:
        repeated, _ = records_of(raw, identities.where(F.col("copies") > 1).select(*IDENTITY), located)
        findings = (
            repeated.groupBy(*IDENTITY)
            .agg(
                F.count_distinct(_content_hash()).alias("versions"),
                F.array_sort(F.collect_set("source_file")).alias("files"),
            )
            .where(F.col("versions") > 1)
            .limit(5)
            .collect()
        )
        if findings:
            located.unpersist()
            examples = "; ".join(f"{f.host}/{f.qmgr}/{f.qmgr_library} run {f.run_id} in {f.files}" for f in findings)
            raise PlanInputError(
                f"different snapshots with the same queue manager, run_id and collected_at: {examples}"
            )
    return identities, located, counts.repeated > 0


def by_recency(snapshots: DataFrame) -> DataFrame:
    """recency 1 is the current state of the key: the latest collected_at, ties broken by the greatest run_id."""
    newest_first = Window.partitionBy(*KEY).orderBy(F.col("collected_us").desc(), F.col("run_id").desc())
    return snapshots.withColumn("recency", F.row_number().over(newest_first))


def _is_attached(receiver: Column) -> Column:
    return receiver["status"] == "ATTACHED"


def newest_snapshots(
    lines: DataFrame,
    ranked: DataFrame,
    located: DataFrame,
    *,
    runs: int,
    repeated: bool,
    as_of_us: int,
    max_age_us: int,
) -> DataFrame:
    """The newest `runs` snapshots of each key (at least the current one), read again from the input; persisted.

    Only the current one (recency 1) keeps its receivers and the other columns the plan needs, with its state
    columns (`with_state_columns`); the older ones keep what the stuck alerts need. Partitioned by key, as
    everything derived from it. The state columns are stored rather than derived later: the receivers are
    exploded from these rows, and generated code would evaluate them again for every receiver.

    These are the records the plan is made from, so they are read from the lines as written: a record that lacks a
    key of the contract (the JSON reader would read it as null) stops the job, naming the file, line and field.
    """
    window = ranked.where(F.col("recency") <= max(1, runs)).select(*IDENTITY, "recency").persist()
    records, expected = records_of(parsed_lines(lines), window, located)
    current = F.col("recency") == 1
    incomplete = F.when(F.col(_CORRUPT).isNotNull() | key_problem(), F.col("value"))
    records = records.select(
        *IDENTITY,
        "recency",
        F.col("startup_recovery.receiver").alias("startup"),
        F.col("media_recovery.receiver").alias("media"),
        F.array_sort(F.transform(F.filter("receivers", _is_attached), lambda r: r["name"])).alias("attached_names"),
        *[
            F.when(current, F.col(name)).alias(name)
            for name in ("collected_at", "journal", "checkpoint", "amqjrninf", *POINTS, "receivers")
        ],
        "source_file",
        incomplete.alias("incomplete_line"),
    ).repartition(*KEY)
    if repeated:
        # Before identical copies become one: a copy that lacks a key stops the job whichever copy is kept.
        refuse_incomplete(records, lines)
    # Identical copies of one snapshot (checked above) are one.
    snapshots = records.dropDuplicates(IDENTITY) if repeated else records
    snapshots = with_state_columns(snapshots, as_of_us=as_of_us, max_age_us=max_age_us).persist()
    counts = snapshots.agg(F.count(F.lit(1)).alias("found"), F.count("incomplete_line").alias("incomplete")).first()
    window.unpersist()
    if counts.incomplete:
        snapshots.unpersist()
        refuse_incomplete(snapshots, lines)
    if counts.found != expected:
        snapshots.unpersist()
        raise PlanInputError(f"the input changed while it was read: {counts.found} of {expected} snapshots found again")
    return snapshots


def refuse_incomplete(records: DataFrame, lines: DataFrame) -> None:
    """Stop the job if a record lacks a key of the contract, naming the file, line, record and field."""
    findings = (
        records.where(F.col("incomplete_line").isNotNull())
        .select(*KEY, "run_id", "source_file", "incomplete_line")
        .orderBy("source_file", "run_id", *KEY)
        .limit(5)
        .collect()
    )
    if not findings:
        return
    numbers = line_numbers(lines, [(f.source_file, f.incomplete_line) for f in findings])
    examples = []
    for f in findings:
        # The reference's reading of the same line names the field (e.g. receivers[3].next_library).
        detail = line_problem(f.incomplete_line) or _NOT_JSON
        where = _where(f.source_file, numbers.get((f.source_file, f.incomplete_line)))
        examples.append(f"{where} (run {f.run_id}, {f.host}/{f.qmgr}): {detail}")
    raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {_KEY_PROBLEM}: {'; '.join(examples)}")


# --- 2. AMQJRNINF, natively -----------------------------------------------------------------------------------

# Exactly the characters str.rstrip() removes: a name field is valid when rstrip leaves an IBM i name.
_PY_WHITESPACE = "".join(f"\\x{{{code:x}}}" for code in range(0x110000) if chr(code).isspace())
_NAME_FIELD = rf"^[A-Z$#@][A-Z0-9$#@_.]{{0,9}}[{_PY_WHITESPACE}]*\z"
_TRAILING_WHITESPACE = rf"[{_PY_WHITESPACE}]+\z"
_BLANKS_OR_NULS = r"^[ \x00]*\z"  # \z, not $: Java's $ also matches before a final line terminator
_STARS = "*" * 10


def amqjrninf_columns(offset_us: Column) -> dict[str, Column]:
    """The columns of `parse_amqjrninf`, mirrored so that exactly the same values are malformed.

    Spark's datetime parsing accepts year 0, so the year is checked apart, and the parsed time must format back to
    the same digits, so no lenient roll-over (Feb 30, hour 25, second 60) can slip through.
    """
    raw = F.col("amqjrninf")
    name_field, library_field = F.substring(raw, 1, 10), F.substring(raw, 11, 10)
    stamp = F.substring(raw, 21, 17)
    seconds_part = F.substring(stamp, 1, 14)
    name_stars, library_stars = name_field == _STARS, library_field == _STARS
    wall_clock = F.try_to_timestamp(seconds_part, F.lit("yyyyMMddHHmmss"))
    well_formed = (
        ~raw.rlike(_BLANKS_OR_NULS)
        & (F.length(raw) >= RECORD_LENGTH)
        & F.substring(raw, RECORD_LENGTH + 1, 2**31 - 1).rlike(_BLANKS_OR_NULS)
        & (name_stars | name_field.rlike(_NAME_FIELD))
        & (library_stars | library_field.rlike(_NAME_FIELD))
        & ~(library_stars & ~name_stars)
        & stamp.rlike(r"^[0-9]{17}\z")
        & (F.substring(stamp, 1, 4) != "0000")
        & (F.date_format(wall_clock, "yyyyMMddHHmmss") == seconds_part)
    )
    usable = raw.isNotNull() & F.coalesce(well_formed, F.lit(False))
    local_us = F.unix_micros(wall_clock) + F.substring(stamp, 15, 3).try_cast("long") * 1000
    return {
        "amqjrninf_missing": raw.isNull(),
        "amqjrninf_malformed": raw.isNotNull() & ~usable,
        "amqjrninf_usable": usable,
        "amqjrninf_stars": usable & name_stars,
        "amqjrninf_receiver": F.when(usable & ~name_stars, F.regexp_replace(name_field, _TRAILING_WHITESPACE, "")),
        "amqjrninf_library": F.when(usable & ~name_stars, F.regexp_replace(library_field, _TRAILING_WHITESPACE, "")),
        # The record holds the partition's local time: the offset of collected_at makes it an instant.
        "needed_us": F.when(usable, local_us - offset_us),
    }


def collected_offset_us() -> Column:
    """The UTC offset of collected_at: its wall-clock reading minus the instant it denotes."""
    wall_clock = F.regexp_replace("collected_at", _OFFSET, "").try_cast("timestamp")
    return F.unix_micros(wall_clock) - F.col("collected_us")


def recovery_point_columns() -> dict[str, Column]:
    """Per AMQ7460 (`startup_*`) and AMQ7462 (`media_*`): present, the receiver it names (null: asterisks), its time."""
    columns = {}
    for point, prefix in zip(POINTS, ("startup", "media")):
        columns[f"{prefix}_present"] = F.col(point).isNotNull()
        columns[f"{prefix}_receiver"] = F.col(f"{point}.receiver")
        columns[f"{prefix}_us"] = _micros(F.col(f"{point}.at"))
    return columns


def with_state_columns(snapshots: DataFrame, *, as_of_us: int, max_age_us: int) -> DataFrame:
    """The AMQJRNINF and recovery point columns and `stale`, per snapshot (meaningful for the current ones)."""
    return snapshots.select(
        "*",
        *[column.alias(name) for name, column in amqjrninf_columns(collected_offset_us()).items()],
        *[column.alias(name) for name, column in recovery_point_columns().items()],
        ((F.lit(as_of_us) - F.col("collected_us")) > F.lit(max_age_us)).alias("stale"),
    )


# --- 1. the chain -------------------------------------------------------------------------------------------------


def _micros(column: Column) -> Column:
    return F.unix_micros(column.try_cast("timestamp"))


# What chain_facts needs of the recovery points, carried on each exploded receiver as AMQJRNINF's columns are.
_POINT_FACTS = ("startup_receiver", "startup_us", "media_receiver", "media_us")


def receivers_in_chain_order(current: DataFrame) -> DataFrame:
    """One row per receiver of each current snapshot, chain members numbered in attach order.

    Names wrap, so they only break ties; the receiver's place in the snapshot breaks the last ties, as a stable
    sort of the snapshot's list would.
    """
    exploded = current.select(
        *KEY,
        "amqjrninf_receiver",
        "amqjrninf_library",
        "needed_us",
        *_POINT_FACTS,
        F.col("journal.name").alias("journal_name"),
        F.col("journal.library").alias("journal_library_of_qmgr"),
        F.posexplode("receivers").alias("listed_at", "r"),
    )
    receivers = exploded.select(
        *KEY,
        "amqjrninf_receiver",
        "amqjrninf_library",
        "needed_us",
        *_POINT_FACTS,
        "listed_at",
        F.col("r.name").alias("receiver"),
        F.col("r.library").alias("library"),
        F.col("r.status").alias("status"),
        F.col("r.size_bytes").alias("size_bytes"),
        F.col("r.threshold_kb").alias("threshold_kb"),
        F.col("r.previous").alias("previous"),
        F.col("r.previous_library").alias("previous_library"),
        F.col("r.next").alias("next"),
        F.col("r.next_library").alias("next_library"),
        F.col("r.first_sequence").alias("first_sequence"),
        F.col("r.last_sequence").alias("last_sequence"),
        F.col("r.saved_at").isNotNull().alias("has_saved_at"),
        _micros(F.col("r.attached_at")).alias("attached_us"),
        _micros(F.col("r.detached_at")).alias("detached_us"),
        (
            (F.col("r.journal") == F.col("journal_name"))
            & (F.col("r.journal_library") == F.col("journal_library_of_qmgr"))
            & F.col("r.attached_at").isNotNull()
        ).alias("in_chain"),
    )
    in_chain = F.coalesce(F.col("in_chain"), F.lit(False))
    # Non-members are numbered in a partition of their own, then dropped to null.
    attach_order = Window.partitionBy(*KEY, "in_chain").orderBy(
        "attached_us", F.col("first_sequence").asc_nulls_last(), "receiver", "listed_at"
    )
    numbered = receivers.withColumn("in_chain", in_chain).withColumn(
        "chain_position", F.when(in_chain, F.row_number().over(attach_order) - 1)
    )
    before = {c: F.lag(c).over(attach_order) for c in ("receiver", "library", "next", "next_library", "last_sequence")}
    return numbered.withColumn("link_broken", F.col("in_chain") & F.coalesce(_link_broken(before), F.lit(False)))


def _link_broken(a: dict[str, Column]) -> Column:
    """Member b (this row) does not follow member a (the one before it); a null link is unknown, not broken."""
    b = F.col
    has_predecessor = a["receiver"].isNotNull()
    next_disagrees = a["next"].isNotNull() & ~(
        a["next"].eqNullSafe(b("receiver")) & a["next_library"].eqNullSafe(b("library"))
    )
    previous_disagrees = b("previous").isNotNull() & ~(
        b("previous").eqNullSafe(a["receiver"]) & b("previous_library").eqNullSafe(a["library"])
    )
    sequences_known = a["last_sequence"].isNotNull() & b("first_sequence").isNotNull()
    gap = sequences_known & (b("first_sequence") != a["last_sequence"] + 1)
    return has_predecessor & (next_disagrees | previous_disagrees | gap)


def _truncated(micros: Column, unit: int) -> Column:
    """A time in microseconds truncated to whole `unit`s, in exact integer arithmetic (also before 1970)."""
    return micros - F.pmod(micros, F.lit(unit))


def chain_facts(receivers: DataFrame) -> DataFrame:
    member = F.col("in_chain")
    attached_member = member & (F.col("status") == "ATTACHED")
    position = F.col("chain_position")
    # AMQJRNINF keeps milliseconds: compare attach times truncated to the millisecond (docs, section 2).
    attached_ms = _truncated(F.col("attached_us"), 1000)

    def by_time(moment: str) -> Column:
        return F.max(F.when(member & (attached_ms <= F.col(moment)), position))

    def named(receiver: str) -> Column:
        return F.min(F.when(member & (F.col("receiver") == F.col(receiver)), position))

    return receivers.groupBy(*KEY).agg(
        F.count(F.when(member, 1)).alias("chain_length"),
        F.bool_or("link_broken").alias("link_broken"),
        F.count(F.when(attached_member, 1)).alias("attached_members"),
        F.max(F.when(attached_member, position)).alias("attached_position"),
        F.min(F.when(member, F.col("attached_us"))).alias("first_attached_us"),
        by_time("needed_us").alias("by_time"),
        F.min(
            F.when(
                member
                & (F.col("receiver") == F.col("amqjrninf_receiver"))
                & (F.col("library") == F.col("amqjrninf_library")),
                position,
            )
        ).alias("named_position"),
        by_time("startup_us").alias("startup_by_time"),
        named("startup_receiver").alias("startup_named"),
        by_time("media_us").alias("media_by_time"),
        named("media_receiver").alias("media_named"),
    )


# --- 2. the oldest needed receiver, and blocks ----------------------------------------------------------------


def _point_state(prefix: str, latest_us: Column, first_second_us: Column) -> dict[str, Column]:
    """Section 2.2 for one recovery point: its position (null: none) and its block reasons."""
    present, receiver, at_us = F.col(f"{prefix}_present"), F.col(f"{prefix}_receiver"), F.col(f"{prefix}_us")
    named = F.col(f"{prefix}_named")
    return {
        "present": present,
        "position": F.when(present & receiver.isNull(), F.coalesce(F.col(f"{prefix}_by_time"), F.lit(0))).when(
            present, named
        ),
        "not_in_chain": present & receiver.isNotNull() & named.isNull(),
        # AMQ7460/AMQ7462 show whole seconds: the first attach is compared at that precision.
        "before_chain": present & named.isNotNull() & F.coalesce(at_us < first_second_us, F.lit(False)),
        "future": present & (at_us > latest_us),
    }


def _wall_clock_of_amqjrninf(raw: Column) -> Column:
    """YYYY-MM-DDTHH:MM:SS.mmm of AMQJRNINF's 17 digits, as written (the partition's local time)."""
    digit = lambda start, length: F.substring(raw, 20 + start, length)  # noqa: E731
    return F.concat(
        digit(1, 4), F.lit("-"), digit(5, 2), F.lit("-"), digit(7, 2), F.lit("T"), digit(9, 2), F.lit(":"),
        digit(11, 2), F.lit(":"), digit(13, 2), F.lit("."), digit(15, 3),
    )  # fmt: skip


def _wall_clock_of_instant(text: Column) -> Column:
    """YYYY-MM-DDTHH:MM:SS.mmm of an ISO 8601 time as written (in its own offset), microseconds truncated."""
    fraction = F.regexp_extract(text, r"^.{19}\.([0-9]{1,6})", 1)
    return F.concat(F.substring(text, 1, 19), F.lit("."), F.substring(F.rpad(fraction, 3, "0"), 1, 3))


def recovery_points_text() -> Column:
    """AMQJRNINF, AMQ7460 and AMQ7462 side by side (docs, section 2.3); on the current snapshot's columns."""
    jrninf = (
        F.when(F.col("amqjrninf_missing"), F.lit("AMQJRNINF -"))
        .when(F.col("amqjrninf_malformed"), F.lit("AMQJRNINF malformed"))
        .otherwise(
            F.concat(
                F.lit("AMQJRNINF "),
                F.when(F.col("amqjrninf_stars"), F.lit(_STARS)).otherwise(F.col("amqjrninf_receiver")),
                F.lit(" "),
                _wall_clock_of_amqjrninf(F.col("amqjrninf")),
            )
        )
    )
    parts = [jrninf]
    for point, label in zip(POINTS, ("AMQ7460", "AMQ7462")):
        shown = F.concat(
            F.lit(f"{label} "),
            F.coalesce(F.col(f"{point}.receiver"), F.lit(_STARS)),
            F.lit(" "),
            _wall_clock_of_instant(F.col(f"{point}.at")),
        )
        parts.append(F.when(F.col(point).isNull(), F.lit(f"{label} -")).otherwise(shown))
    return F.concat_ws(", ", *parts)


def queue_manager_states(current: DataFrame, facts: DataFrame, *, as_of_us: int, skew_us: int) -> DataFrame:
    """Per key: n (the oldest needed position), the block reasons, whether the queue manager is blocked, the
    recovery points and whether they disagree with AMQJRNINF (docs, section 2)."""
    joined = current.join(facts, KEY, "left")
    chain_length = F.coalesce(F.col("chain_length"), F.lit(0))
    attached_members = F.coalesce(F.col("attached_members"), F.lit(0))
    named, by_time = F.col("named_position"), F.col("by_time")
    usable, stars = F.col("amqjrninf_usable"), F.col("amqjrninf_stars")
    name_given = usable & ~stars
    not_in_chain = name_given & named.isNull()
    disagree = name_given & named.isNotNull() & ~named.eqNullSafe(by_time)
    broken = (
        F.coalesce(F.col("link_broken"), F.lit(False))
        | (attached_members != 1)
        | ~F.col("attached_position").eqNullSafe(chain_length - 1)
    )
    # No entry MQ needs can have been written after the collection that read it, nor after as_of.
    latest_us = F.col("collected_us") + F.lit(skew_us)  # the partition's clock, not the controller's
    jrninf_future = usable & (F.col("needed_us") > latest_us)
    j = F.when(usable & stars, F.coalesce(by_time, F.lit(0))).when(usable, named)
    first_second_us = _truncated(F.col("first_attached_us"), 1_000_000)
    startup, media = (_point_state(prefix, latest_us, first_second_us) for prefix in ("startup", "media"))
    p = F.least(startup["position"], media["position"])  # least skips nulls
    reasons = {
        "SNAPSHOT_STALE": F.col("stale"),
        "AMQJRNINF_MISSING": F.col("amqjrninf_missing"),
        "AMQJRNINF_MALFORMED": F.col("amqjrninf_malformed"),
        "AMQJRNINF_RECEIVER_NOT_IN_CHAIN": not_in_chain,
        "AMQJRNINF_NAME_TIME_DISAGREE": disagree,
        "AMQJRNINF_TIME_IN_FUTURE": jrninf_future,
        "RECOVERY_POINT_NOT_IN_CHAIN": startup["not_in_chain"] | media["not_in_chain"],
        "RECOVERY_POINT_BEFORE_CHAIN": startup["before_chain"] | media["before_chain"],
        "RECOVERY_POINT_IN_FUTURE": startup["future"] | media["future"],
        "CHAIN_BROKEN": broken,
    }
    # Every reason but the snapshot's age and the chain's shape makes everything needed.
    treat_all_as_needed = F.lit(False)
    for code, failed in reasons.items():
        if code not in ("SNAPSHOT_STALE", "CHAIN_BROKEN"):
            treat_all_as_needed = treat_all_as_needed | failed
    both_present = startup["present"] & media["present"]
    points_disagree = j.isNotNull() & p.isNotNull() & F.when(both_present, j != p).otherwise(j > p)
    block_reason = F.concat_ws(",", *[F.when(reasons[code], F.lit(code)) for code in BLOCK_ORDER])
    return joined.select(
        *KEY,
        "run_id",
        "collected_us",
        "checkpoint",
        "amqjrninf_usable",
        "amqjrninf_stars",
        "needed_us",
        chain_length.cast("long").alias("chain_length"),
        F.when(F.coalesce(treat_all_as_needed, F.lit(True)), 0).otherwise(F.least(j, p)).alias("n"),
        F.when(block_reason != "", block_reason).alias("block_reason"),
        (block_reason != "").alias("blocked"),
        points_disagree.alias("points_disagree"),
        recovery_points_text().alias("recovery_points"),
    )


# --- 3. action and reason -----------------------------------------------------------------------------------------


def planned_receivers(receivers: DataFrame, states: DataFrame, *, policy: Policy, as_of_us: int) -> DataFrame:
    rows = receivers.join(states.select(*KEY, "n", "blocked"), KEY)
    position, n = F.col("chain_position"), F.col("n")
    status = F.col("status")
    # A save taken while attached leaves the receiver ONLINE: it is not a save of the whole receiver.
    saved = F.col("has_saved_at") & status.isin("SAVED", "FREED")
    needed = position >= n
    retained = position >= n - F.lit(policy.keep_min_receivers)
    if policy.retention_days > 0:
        cutoff_us = as_of_us - policy.retention // MICROS
        retained = retained | F.col("detached_us").isNull() | (F.col("detached_us") > F.lit(cutoff_us))

    def pick(action: str, reason: str) -> Column:
        return F.struct(F.lit(action).alias("action"), F.lit(reason).alias("reason"))

    decision = (
        F.when(~F.col("in_chain"), pick(KEEP, "NOT_IN_CHAIN"))
        .when(status == "ATTACHED", pick(KEEP, "ATTACHED"))
        .when(needed & (status == "FREED"), pick(KEEP, "NEEDED_FREED"))
        .when(needed & saved, pick(KEEP, "NEEDED_SAVED"))
        .when(needed, pick(SAVE, "NEEDED_NOT_SAVED"))
        .when(F.col("blocked") & saved, pick(KEEP, "BLOCKED"))
        .when(F.col("blocked"), pick(SAVE, "BLOCKED_NOT_SAVED"))
        .when(retained & saved, pick(KEEP, "RETAINED"))
        .when(retained, pick(SAVE, "RETAINED_NOT_SAVED"))
        .when(saved, pick(DELETE, "NOT_NEEDED_SAVED"))
        .otherwise(pick(SAVE_THEN_DELETE, "NOT_NEEDED_NOT_SAVED"))
    )
    return rows.withColumn("decision", decision).select(
        "*", F.col("decision.action").alias("action"), F.col("decision.reason").alias("reason")
    )


def receivers_output(planned: DataFrame) -> DataFrame:
    return planned.select(*RECEIVERS_COLUMNS)


# --- 4. alerts -----------------------------------------------------------------------------------------------------


def _successor(name: Column) -> Column:
    """Rule 1: nnnnn + 1, wrapping 99999 to 00000, instance and r kept."""
    number = (F.substring(name, 6, 5).cast("int") + 1) % 100000
    return F.concat(F.substring(name, 1, 5), F.lpad(number.cast("string"), 5, "0"))


def next_name_taken(receivers: DataFrame) -> DataFrame:
    """Keys whose ATTACHED receiver's successor name is already a receiver of the same library."""
    attached = receivers.where(
        (F.col("status") == "ATTACHED") & F.col("receiver").rlike(r"^AMQ[A-Z][0-9][0-9]{5}\z")
    ).select(*KEY, _successor(F.col("receiver")).alias("receiver"), "library")
    existing = receivers.select(*KEY, "receiver", "library")
    return (
        attached.join(existing, [*KEY, "receiver", "library"], "left_semi")
        .select(*KEY)
        .distinct()
        .withColumn("next_receiver_name_taken", F.lit(True))
    )


def recovery_stuck(newest: DataFrame, runs: int) -> DataFrame:
    """Per key, over the newest `runs` snapshots: STARTUP/MEDIA recovery point unchanged while receivers changed.

    `newest` holds at least those snapshots, with their `startup`, `media` and sorted `attached_names`.
    """
    window = newest.where(F.col("recency") <= runs).select(*KEY, "recency", "startup", "media", "attached_names")
    facts = window.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("runs_seen"),
        # One point throughout: every run names one (count) and the least is the greatest (no distinct count, whose
        # plan expands every row once per distinct column).
        F.count("startup").alias("startup_named"),
        (F.min("startup") == F.max("startup")).alias("startup_one_point"),
        F.count("media").alias("media_named"),
        (F.min("media") == F.max("media")).alias("media_one_point"),
        F.first(F.when(F.col("recency") == 1, F.col("attached_names")), ignorenulls=True).alias("newest_attached"),
        F.first(F.when(F.col("recency") == runs, F.col("attached_names")), ignorenulls=True).alias("oldest_attached"),
    )
    moved = (F.col("runs_seen") == runs) & ~F.col("oldest_attached").eqNullSafe(F.col("newest_attached"))

    def stuck(point: str) -> Column:
        return moved & (F.col(f"{point}_named") == runs) & F.coalesce(F.col(f"{point}_one_point"), F.lit(False))

    return facts.select(*KEY, stuck("startup").alias("startup_stuck"), stuck("media").alias("media_stuck"))


def receiver_figures(planned: DataFrame) -> DataFrame:
    """Per key, over the planned receivers: the figures, and the alerts that come from receivers."""
    action, size = F.col("action"), F.col("size_bytes")
    saves, deletes = action.isin(SAVE, SAVE_THEN_DELETE), action.isin(DELETE, SAVE_THEN_DELETE)
    attached = F.col("status") == "ATTACHED"
    over_threshold = (
        attached
        & F.col("threshold_kb").isNotNull()
        & (size.cast(T.DecimalType(38, 0)) > F.col("threshold_kb").cast(T.DecimalType(38, 0)) * 1024)
    )
    return planned.groupBy(*KEY).agg(
        F.count(F.when(saves, 1)).alias("receivers_to_save"),
        F.sum(F.when(saves, size)).alias("bytes_to_save"),
        F.count(F.when(deletes, 1)).alias("receivers_to_delete"),
        F.sum(F.when(deletes, size)).alias("bytes_to_delete"),
        F.max(F.when(F.col("chain_position") == F.col("n"), F.col("receiver"))).alias("member_at_n"),
        F.bool_or(F.col("in_chain") & (F.col("chain_position") >= F.col("n")) & (F.col("status") == "FREED")).alias(
            "needed_freed"
        ),
        F.bool_or(over_threshold).alias("over_threshold"),
    )


def queue_managers_output(
    states: DataFrame, figures: DataFrame, taken: DataFrame, stuck: DataFrame, *, as_of_us: int
) -> DataFrame:
    qm = states.join(figures, KEY, "left").join(taken, KEY, "left").join(stuck, KEY, "left")

    def flag(name: str) -> Column:
        return F.coalesce(F.col(name), F.lit(False))

    alerts = {
        "CHECKPOINT_FAILED": F.col("checkpoint.forced") & ~F.col("checkpoint.ok"),
        "OLDEST_NEEDED_NOT_ON_SYSTEM": F.col("amqjrninf_stars"),
        "RECOVERY_POINTS_DISAGREE": F.col("points_disagree"),
        "NEEDED_RECEIVER_NOT_ONLINE": flag("needed_freed"),
        "RECEIVER_OVER_THRESHOLD": flag("over_threshold"),
        "NEXT_RECEIVER_NAME_TAKEN": flag("next_receiver_name_taken"),
        "STARTUP_RECOVERY_STUCK": flag("startup_stuck"),
        "MEDIA_RECOVERY_STUCK": flag("media_stuck"),
    }
    raised = F.array(*[F.when(condition, F.lit(code)) for code, condition in alerts.items()])
    bytes_to_delete = F.coalesce(F.col("bytes_to_delete"), F.lit(0)).cast("long")
    columns = {
        "oldest_needed": F.when(F.col("amqjrninf_usable"), F.col("member_at_n")),
        "alerts": F.array_sort(F.filter(raised, lambda code: code.isNotNull())),
        "receivers_to_save": F.coalesce(F.col("receivers_to_save"), F.lit(0)).cast("long"),
        "bytes_to_save": F.coalesce(F.col("bytes_to_save"), F.lit(0)).cast("long"),
        "receivers_to_delete": F.coalesce(F.col("receivers_to_delete"), F.lit(0)).cast("long"),
        "bytes_to_delete": bytes_to_delete,
        "bytes_freed": bytes_to_delete,
        "oldest_needed_age_seconds": _floor_seconds(F.lit(as_of_us) - F.col("needed_us")),
        "collected_at": F.timestamp_micros("collected_us"),
    }
    return qm.select(*[columns[c].alias(c) if c in columns else F.col(c) for c in QUEUE_MANAGERS_COLUMNS])


def _floor_seconds(micros: Column) -> Column:
    """Whole seconds, floored also when negative (a needed_at after as_of), in exact integer arithmetic."""
    remainder = F.pmod(micros, F.lit(1_000_000))
    whole = micros - remainder  # an exact multiple of a second
    # Decimal, not double: a double loses microseconds beyond about 285 years and could floor one second short.
    return (whole.cast(T.DecimalType(38, 0)) / F.lit(1_000_000)).cast("long")


# --- summary -------------------------------------------------------------------------------------------------------


def summary(receivers: DataFrame, queue_managers: DataFrame, *, as_of: datetime, policy: Policy) -> dict:
    """Small aggregates only: one job, whose few rows (totals, one per action, one per alert code) reach the driver."""
    sums = queue_managers.agg(
        F.count(F.lit(1)).alias("queue_managers"),
        F.count(F.when(F.col("blocked"), 1)).alias("blocked_queue_managers"),
        *[F.coalesce(F.sum(c), F.lit(0)).alias(c) for c in ("bytes_to_save", "bytes_to_delete", "bytes_freed")],
    )
    # One row per total, so that totals, actions and alerts come back in a single job.
    names, values = [F.lit(c) for c in sums.columns], [F.col(c).cast("long") for c in sums.columns]
    as_map = F.map_from_arrays(F.array(*names), F.array(*values))
    totals = sums.select(F.lit("total").alias("kind"), F.explode(as_map).alias("name", "count"))
    actions = (
        receivers.groupBy(F.col("action").alias("name")).count().select(F.lit("action").alias("kind"), "name", "count")
    )
    alerts = (
        queue_managers.select(F.explode("alerts").alias("name"))
        .groupBy("name")
        .count()
        .select(F.lit("alert").alias("kind"), "name", "count")
    )
    found: dict[str, dict[str, int]] = {"total": {}, "action": {}, "alert": {}}
    for row in totals.unionByName(actions).unionByName(alerts).collect():
        found[row.kind][row.name] = row["count"]
    return {
        "as_of": as_of.isoformat(),
        "policy": policy.model_dump(mode="json"),
        "queue_managers": found["total"]["queue_managers"],
        "blocked_queue_managers": found["total"]["blocked_queue_managers"],
        "receivers": sum(found["action"].values()),
        "actions": dict(sorted(found["action"].items())),
        "alerts": dict(sorted(found["alert"].items())),
        "bytes_to_save": found["total"]["bytes_to_save"],
        "bytes_to_delete": found["total"]["bytes_to_delete"],
        "bytes_freed": found["total"]["bytes_freed"],
    }


def _hadoop_file(spark: SparkSession, directory: str, name: str):
    """A file through Hadoop's FileSystem, so that DIR may be on any file system the Parquet goes to."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(jvm.org.apache.hadoop.fs.Path(directory), name)
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


def plan(spark: SparkSession, *, inputs: list[str], out: str, policy: Policy, as_of: datetime) -> dict:
    as_of_us = (as_of - EPOCH) // MICROS
    # summary.json is written last: a plan that fails half way must not leave an earlier run's summary behind.
    remove_file(spark, out, "summary.json")
    # The input check reads with the JSON reader; the second read (newest_snapshots) reads the same files as text,
    # so that it sees the keys each record has and can name a bad line. Both must list the same files.
    raw = read_inputs(spark, inputs)
    lines = read_lines(spark, inputs)
    listed, listed_again = set(raw.inputFiles()), set(lines.inputFiles())
    if listed != listed_again:
        changed = sorted(listed ^ listed_again)
        raise PlanInputError(f"the input changed while it was listed: {changed[:5]} appeared or disappeared")
    identities, located, repeated = distinct_snapshots(raw)
    newest = newest_snapshots(
        lines,
        by_recency(identities),
        located,
        runs=policy.stuck_after_runs,
        repeated=repeated,
        as_of_us=as_of_us,
        max_age_us=policy.max_snapshot_age // MICROS,
    )
    located.unpersist()
    current = newest.where(F.col("recency") == 1)
    receivers = receivers_in_chain_order(current).persist()
    states = queue_manager_states(
        current, chain_facts(receivers), as_of_us=as_of_us, skew_us=policy.clock_skew // MICROS
    ).persist()
    planned = planned_receivers(receivers, states, policy=policy, as_of_us=as_of_us).persist()

    receivers_out = receivers_output(planned)
    receivers_out.write.mode("overwrite").parquet(f"{out}/receivers")
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
    for frame in (planned, states, receivers, newest):
        frame.unpersist()
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
        print(json.dumps(result, sort_keys=False))
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
        print(f"mqjournal plan failed: {failure}", file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
