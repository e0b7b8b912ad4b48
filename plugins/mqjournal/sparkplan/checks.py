"""The plan job's input checks: every record a usable v1 snapshot, one version of each, and the newest of each key.

A bad record stops the job (PlanInputError) rather than plan a queue manager from half its state. The checks run on
the executors, inside the jobs that read the input: the driver learns their counts as observed metrics of those jobs
(`first_read_metrics`), and only when the input is bad does it read again, to collect a handful of examples.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.snapshot import (
    ADDED_KEYS,
    LIST_OF_OBJECTS,
    OBJECT,
    OPTIONAL_OBJECT,
    SCHEMA_ID,
    ContractKeys,
    contract_keys,
    line_problem,
)
from mqjournal.sparkplan.schema import (
    IDENTITY,
    KEY,
    POINTS,
    PY_WHITESPACE,
    SNAPSHOT_SCHEMA,
    collected_us,
)
from mqjournal.vocabulary import ReceiverStatus


class PlanInputError(Exception):
    """The input cannot be planned from: the job stops rather than plan a queue manager from half its state."""


# What pydantic writes for an AwareDatetime: always an offset, at most microseconds. The ranges are those of a
# valid date and time (year 1 on, as Python's datetime; offsets up to 18:00, as java.time), all but the length of
# the month, which `bad_instant` checks for days 29 to 31 only: a regex is far cheaper than parsing every time.
_ISO_INSTANT = (
    r"^(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(\.[0-9]{1,6})?(Z|[+-]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))\z"
)


def bad_instant(column: Column) -> Column:
    past_28th = F.substring(column, 9, 2) > F.lit("28")
    no_such_day = past_28th & F.substring(column, 1, 10).try_cast("date").isNull()
    return column.isNotNull() & (~column.rlike(_ISO_INSTANT) | no_such_day)


_RECEIVER_PROBLEM = "a receiver lacks name, library, size_bytes or a known status, or has a bad time"


# --- every key of the contract (docs, Input) ---------------------------------------------------------------------

# A key of a JSON object as written. In valid JSON (the first read checked it) an unescaped quote followed by a colon
# closes a key, and the quote before it, with no quote or backslash in between, opens it: so this matches exactly
# the keys of a record whose keys have no quote or backslash, never text inside a string value. (A key with one is
# not the contract's: it shows as another key, and the record is refused.)
_JSON_KEY = r'"([^"\\]*+)"[ \t\r\n]*+:'
# What follows each key in a list of keys as text: a quote, which no key matched by _JSON_KEY can hold.
_END = '"'
_KEY_PROBLEM = "a key of the contract is missing, or a key is not one of the contract's"
_NOT_JSON = f"the line is not a valid JSON {SCHEMA_ID} record"
_CORRUPT = "_corrupt_line"


def _count(array: Column) -> Column:
    return F.when(array.isNull(), F.lit(0)).otherwise(F.size(array))


def _flat_keys(keys: ContractKeys) -> str:
    assert all(shape not in (OBJECT, OPTIONAL_OBJECT, LIST_OF_OBJECTS) for _, shape, _ in keys)
    return "".join(f"{key}{_END}" for key, _, _ in keys)


def _keys_in_order(keys: ContractKeys, value: Column | None) -> Column:
    """The keys of a complete record in the order the model writes them, each followed by `_END`."""
    parts = []
    for key, shape, nested in keys:
        column = F.col(key) if value is None else value[key]
        parts.append(F.lit(f"{key}{_END}"))
        if nested is None:  # a value, not an object
            continue
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
        if nested is None:  # a value, not an object
            continue
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
    (`ADDED_KEYS`) are left out on both sides: a record written before them is complete without them. In the model's
    order they are cut out of the keys as text, by one regex: the sorted comparison filters them out of the list with
    a lambda, which Spark interprets key by key (some 300 keys a record).
    """
    keys = contract_keys(with_added=False)
    every_key = F.regexp_extract_all(F.col("value"), F.lit(_JSON_KEY), 1)
    added = "|".join(sorted(ADDED_KEYS))
    as_written = F.regexp_replace(
        F.concat(F.array_join(every_key, _END), F.lit(_END)), rf"(?<=^|{_END})(?:{added}){_END}", ""
    )
    written = F.filter(every_key, lambda key: ~key.isin(*sorted(ADDED_KEYS)))
    counts: dict[str, list[Column]] = {}
    _key_counts(keys, None, F.lit(1), counts)
    expected_sorted = F.concat(
        *[F.repeat(F.lit(f"{key}{_END}"), sum(counts[key][1:], counts[key][0])) for key in sorted(counts)]
    )
    sorted_written = F.concat(F.array_join(F.array_sort(written), _END), F.lit(_END))
    return F.coalesce(
        F.when(as_written == _keys_in_order(keys, None), F.lit(False)).otherwise(sorted_written != expected_sorted),
        F.lit(True),
    )


def record_problem(receivers_missing: Column) -> Column:
    """Why a record is not a usable v1 snapshot, receivers aside, or null. A missing key reads as null here: the
    keys of the records planned from are checked by the second read (`newest_records`)."""
    checks = [
        (~F.coalesce(F.col("schema") == SCHEMA_ID, F.lit(False)), f"schema is not {SCHEMA_ID}"),
        (F.coalesce(F.length("run_id"), F.lit(0)) == 0, "run_id is missing"),
        (F.coalesce(F.length("host"), F.lit(0)) == 0, "host is missing"),
        (F.col("qmgr").isNull() | F.col("qmgr_library").isNull(), "qmgr or qmgr_library is missing"),
        (F.col("journal.name").isNull() | F.col("journal.library").isNull(), "journal is missing"),
        (F.col("checkpoint.forced").isNull() | F.col("checkpoint.ok").isNull(), "checkpoint is missing"),
        (
            F.col("collected_at").isNull() | bad_instant(F.col("collected_at")),
            "collected_at is not an ISO 8601 time with offset",
        ),
        (receivers_missing, "receivers is missing"),
        *[
            (
                F.col(point).isNotNull() & (F.col(f"{point}.at").isNull() | bad_instant(F.col(f"{point}.at"))),
                f"{point}.at is not an ISO 8601 time with offset",
            )
            for point in POINTS
        ],
    ]
    return F.coalesce(*[F.when(failed, F.lit(problem)) for failed, problem in checks])


def receiver_problem(r: Column) -> Column:
    """Whether one receiver of a record is unusable (never null)."""
    statuses = list(ReceiverStatus)
    return (
        r.isNull()
        | r["name"].isNull()
        | r["library"].isNull()
        | r["size_bytes"].isNull()
        | ~F.coalesce(r["status"].isin(statuses), F.lit(False))
        | bad_instant(r["attached_at"])
        | bad_instant(r["detached_at"])
        | bad_instant(r["saved_at"])
    )


# A read of the input is joined with the identities it must find, broadcast up to this many.
MAX_BROADCAST_IDENTITIES = 1_000_000


def parsed_lines(lines: DataFrame) -> DataFrame:
    """The records of the lines that are not blank, parsed with the job's schema, with the line (`value`), its file
    and split. A line that does not parse (it parsed when first read: the file changed since) has `_corrupt_line`."""
    schema = T.StructType([*SNAPSHOT_SCHEMA.fields, T.StructField(_CORRUPT, T.StringType())])
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
    # Blank as Python's str.strip() sees it, as read_snapshots skips them.
    records = lines.where(~F.col("value").rlike(rf"^[{PY_WHITESPACE}]*\z"))
    return records.select(
        F.from_json("value", schema, options).alias("record"), "value", "source_file", "block_start"
    ).select("record.*", "value", "source_file", "block_start")


def folder_of(file: Column) -> Column:
    """The folder a file is in, as Spark names it: a filter on it lets the reader skip the other folders' files."""
    return F.regexp_extract(file, r"^(.*)/[^/]*$", 1)


def checked_records(raw: DataFrame) -> DataFrame:
    """Per record, one row with its identity, file and `problem` (or null), plus one row per bad receiver.

    `first_row` marks the one row of each record; the other rows only carry a problem. The receivers are exploded
    rather than tested with `exists`, whose lambda Spark interprets row by row (about 3x slower than the generated
    code of a filter on the exploded rows, with the same expressions). Everything about the record as a whole is
    computed after the filter: computed before the explode, the generated code would evaluate it once per receiver.
    Nothing after the explode reads the receivers as a list, so that no exploded row carries a copy of it.
    """
    exploded = raw.select(
        "*",
        F.col("receivers").isNull().alias("receivers_missing"),
        F.posexplode_outer("receivers").alias("position", "r"),
    )
    first_row = F.coalesce(F.col("position") == 0, F.lit(True))
    # posexplode_outer leaves the position null when the list is null or empty: only a listed receiver can be bad.
    bad_receiver = F.col("position").isNotNull() & receiver_problem(F.col("r"))
    kept = exploded.select("*", first_row.alias("first_row"), bad_receiver.alias("bad_receiver")).where(
        F.col("first_row") | F.col("bad_receiver")
    )
    problem = F.coalesce(
        record_problem(F.col("receivers_missing")), F.when(F.col("bad_receiver"), F.lit(_RECEIVER_PROBLEM))
    )
    return kept.select(
        *KEY, "run_id", collected_us().alias("collected_us"), "source_file", "first_row", problem.alias("problem")
    )


def content_hash(schema: T.StructType = SNAPSHOT_SCHEMA) -> Column:
    """Two native hashes of the whole record's JSON (the fields of `schema`): a 96-bit key, compared only among
    records of one identity."""
    text = F.to_json(F.struct(*[F.col(field.name) for field in schema.fields]))
    return F.struct(F.xxhash64(text).alias("xxhash64"), F.hash(text).alias("murmur3"))


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


def malformed_line_file(exc: BaseException) -> str | None:
    """When `exc` is the JSON reader stopping (FAILFAST) on a line that is not JSON of the schema: the file Spark
    names ("" when it names none). None for any other failure."""
    text = str(exc)
    if "MALFORMED_RECORD_IN_PARSING" in text or "JsonParseException" in text or "JsonEOFException" in text:
        file = re.search(r"while reading file (\S+?)\.?\s", text)
        return file.group(1) if file else ""
    return None


def file_and_line(file: str, line: int | None) -> str:
    """A file as the user named it (a local path, not a file: URI), and the line."""
    parsed = urlparse(file)
    path = unquote(parsed.path) if parsed.scheme == "file" else file
    return f"{path}:{line}" if line is not None else path


# --- the first read: every record checked, the newest snapshots of each key chosen ----------------------------------


def located_snapshots(raw: DataFrame) -> DataFrame:
    """Per identity (key, run_id, collected_at) and file it was read from: its number of records, and whether one
    is bad."""
    return (
        # Partitioned by key once: the aggregate here and the windows of ranked_snapshots need no other shuffle.
        checked_records(raw)
        .repartition(*KEY)
        .groupBy(*IDENTITY, "source_file")
        .agg(
            F.count(F.when(F.col("first_row"), 1)).alias("copies"),
            F.bool_or(F.col("problem").isNotNull()).alias("bad"),
        )
    )


def ranked_snapshots(located: DataFrame) -> DataFrame:
    """`located_snapshots` with, on each row, the recency of its identity, whether the identity has more than one
    record (`repeated`), and whether the row is the identity's first file (`first_file`: one row per identity).

    recency 1 is the current state of the key: the latest collected_at, ties broken by the greatest run_id. It is a
    dense rank, so that the files of one identity share it and the next identity has the next rank.
    """
    newest_first = Window.partitionBy(*KEY).orderBy(F.col("collected_us").desc(), F.col("run_id").desc())
    identity = Window.partitionBy(*IDENTITY)
    return located.select(
        "*",
        F.dense_rank().over(newest_first).alias("recency"),
        (F.sum("copies").over(identity) > 1).alias("repeated"),
        (F.row_number().over(identity.orderBy("source_file")) == 1).alias("first_file"),
    )


def first_read_metrics(runs: int) -> list[Column]:
    """Observed on `ranked_snapshots` as the first read runs: what the checks need to know, and where the window of
    the newest `runs` snapshots of each key is, with no job of their own."""
    in_window = F.col("recency") <= max(1, runs)
    folder = folder_of(F.col("source_file"))
    return [
        F.count(F.when(F.col("bad"), 1)).alias("bad"),
        F.count(F.when(F.col("repeated"), 1)).alias("repeated"),
        F.count(F.when(in_window & F.col("first_file"), 1)).alias("expected"),
        F.array_sort(F.collect_set(F.when(in_window, folder))).alias("window_folders"),
        F.array_sort(F.collect_set(F.when(F.col("repeated"), folder))).alias("repeated_folders"),
    ]


class FirstRead(NamedTuple):
    """What the first read of the input observed (`first_read_metrics`)."""

    bad: int  # rows of identities with a bad record
    repeated: int  # rows of identities with more than one record
    expected: int  # snapshots in the window: the second read must find each
    window_folders: list[str]
    repeated_folders: list[str]

    @classmethod
    def of(cls, metrics: dict[str, Any]) -> FirstRead:
        return cls(**{name: metrics[name] for name in cls._fields})


def newest_window(ranked: DataFrame, *, runs: int) -> DataFrame:
    """The rows of `ranked_snapshots` of the newest `runs` snapshots of each key (at least the current one): their
    identity, recency, file and whether it is the identity's first file."""
    return ranked.where(F.col("recency") <= max(1, runs)).select(*IDENTITY, "recency", "source_file", "first_file")


def refuse_bad_records(raw: DataFrame) -> None:
    """Stop the job on the records that are not usable snapshots, with up to five examples: only once the first
    read counted some, so the input is read once more only when it is bad."""
    findings = (
        checked_records(raw)
        .where(F.col("problem").isNotNull())
        .groupBy(*IDENTITY)
        .agg(F.first("problem").alias("problem"), F.array_sort(F.collect_set("source_file")).alias("files"))
        .limit(5)
        .collect()
    )
    examples = "; ".join(f"{f.files} (run {f.run_id}, {f.host}/{f.qmgr}): {f.problem}" for f in findings)
    raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {examples}")


def refuse_different_copies(raw: DataFrame, folders: list[str], *, copies: int) -> None:
    """Stop the job if two different records have one identity, compared by a hash of their whole content.

    The same run may be given twice, e.g. in PATH and in --history. Two different records under one identity would
    make the current state depend on read order. Only when the first read counted identities with more than one
    record (`copies` rows), and only the folders holding them are read again.
    """
    records = raw.where(folder_of(F.col("source_file")).isin(folders)).withColumn("collected_us", collected_us())
    repeated = records.groupBy(*IDENTITY).count().where(F.col("count") > 1).select(*IDENTITY)
    if copies <= MAX_BROADCAST_IDENTITIES:
        repeated = F.broadcast(repeated)
    findings = (
        records.join(repeated, IDENTITY)
        .groupBy(*IDENTITY)
        .agg(
            F.count_distinct(content_hash()).alias("versions"),
            F.array_sort(F.collect_set("source_file")).alias("files"),
        )
        .where(F.col("versions") > 1)
        .limit(5)
        .collect()
    )
    if findings:
        examples = "; ".join(f"{f.host}/{f.qmgr}/{f.qmgr_library} run {f.run_id} in {f.files}" for f in findings)
        raise PlanInputError(f"different snapshots with the same queue manager, run_id and collected_at: {examples}")


# --- the second read: the window's snapshots, as written -------------------------------------------------------------


def _is_attached(receiver: Column) -> Column:
    return receiver["status"] == ReceiverStatus.ATTACHED


# What the plan carries for the people reading it (docs, section 5), of the current snapshot only.
_SHOWN = ("damaged_objects", "undecodable_messages", "asp_number", "asp_capacity_bytes", "asp_available_bytes")


def window_lines(lines: DataFrame, window: DataFrame, first: FirstRead) -> DataFrame:
    """The lines of the files that hold a snapshot of the window (`newest_window`). The folder filter lets the
    reader list and open only the window's folders; the join leaves the other files of those folders unparsed."""
    files = window.select("source_file").distinct()
    if first.expected <= MAX_BROADCAST_IDENTITIES:
        files = F.broadcast(files)
    in_folders = lines.where(folder_of(F.col("source_file")).isin(first.window_folders))
    return in_folders.join(files, "source_file", "left_semi")


def newest_records(lines: DataFrame, window: DataFrame, *, expected: int) -> DataFrame:
    """The snapshots of `window` (`newest_window`), read again from `lines`, every copy of each.

    Only the current one (recency 1) keeps its receivers and the other columns the plan needs; the older ones keep
    what the stuck alerts need. Partitioned by key, as everything derived from it.

    These are the records the plan is made from, so they are read from the lines as written: `incomplete_line` is
    the line of a record that lacks a key of the contract (the JSON reader would read it as null), which stops the
    job (`refuse_incomplete`).
    """
    identities = window.where(F.col("first_file")).select(*IDENTITY, "recency")
    if expected <= MAX_BROADCAST_IDENTITIES:
        identities = F.broadcast(identities)
    records = parsed_lines(lines).withColumn("collected_us", collected_us()).join(identities, IDENTITY)
    is_current = F.col("recency") == 1
    incomplete = F.when(F.col(_CORRUPT).isNotNull() | key_problem(), F.col("value"))
    return records.select(
        *IDENTITY,
        "recency",
        F.col("startup_recovery.receiver").alias("startup"),
        F.col("media_recovery.receiver").alias("media"),
        F.array_sort(F.transform(F.filter("receivers", _is_attached), lambda r: r["name"])).alias("attached_names"),
        *[
            F.when(is_current, F.col(name)).alias(name)
            for name in ("collected_at", "journal", "checkpoint", "amqjrninf", *POINTS, "receivers", *_SHOWN)
        ],
        "source_file",
        incomplete.alias("incomplete_line"),
    ).repartition(*KEY)


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
        place = file_and_line(f.source_file, numbers.get((f.source_file, f.incomplete_line)))
        examples.append(f"{place} (run {f.run_id}, {f.host}/{f.qmgr}): {detail}")
    raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {_KEY_PROBLEM}: {'; '.join(examples)}")


def refuse_changed(found: int, expected: int) -> None:
    """Stop the job if the second read did not find every snapshot of the window: the input changed between reads."""
    if found != expected:
        raise PlanInputError(f"the input changed while it was read: {found} of {expected} snapshots found again")
