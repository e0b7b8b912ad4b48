"""The plan job's input checks: every record a usable v1 snapshot, one version of each, and the newest of each key.

A bad record stops the job (PlanInputError) rather than plan a queue manager from half its state. The checks run on
the executors, inside the jobs that read the input: the driver learns their counts as observed metrics of those jobs
(`first_read_metrics`), and only when the input is bad does it read again, to collect a handful of examples.

What is checked of which record:

- Every line of the input is valid JSON (the first read is in FAILFAST mode), and every record has what chooses
  the window of snapshots the plan reads (schema, run_id, host, qmgr, qmgr_library, collected_at) and the record's
  own facts (journal, checkpoint, the recovery points' times): `record_problem`, on FIRST_READ_SCHEMA.
- The records of the window (the newest `stuck_after_runs` snapshots of each queue manager: those the plan is made
  from) are read again whole by the reference's own reader (`mqjournal.snapshot.parse_line`, in
  `mqjournal.sparkplan.grouped`): every key of the contract, every receiver, every value's type.
- A record outside the window is not read whole: a bad receiver or value in it, which nothing planned reads, does
  not stop the plan.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple
from urllib.parse import unquote, urlparse

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.snapshot import SCHEMA_ID
from mqjournal.sparkplan.grouped import IDENTITY_SEPARATOR, RECEIVER
from mqjournal.sparkplan.schema import IDENTITY, IDENTITY_SCHEMA, KEY, POINTS, SNAPSHOT_SCHEMA, collected_us, micros


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


_KEY_PROBLEM = "a key of the contract is missing, or a key is not one of the contract's"
_NOT_JSON = f"the line is not a valid JSON {SCHEMA_ID} record"


def record_problem() -> Column:
    """Why a record (read with FIRST_READ_SCHEMA) is not a usable v1 snapshot, or null. A missing key reads as null
    here; the records planned from are read again whole, every key and receiver checked
    (`mqjournal.sparkplan.grouped`)."""
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
        *[
            (
                F.col(point).isNotNull() & (F.col(f"{point}.at").isNull() | bad_instant(F.col(f"{point}.at"))),
                f"{point}.at is not an ISO 8601 time with offset",
            )
            for point in POINTS
        ],
    ]
    return F.coalesce(*[F.when(failed, F.lit(problem)) for failed, problem in checks])


# A read of the input is joined with the identities it must find, broadcast up to this many.
MAX_BROADCAST_IDENTITIES = 1_000_000


def folder_of(file: Column) -> Column:
    """The folder a file is in, as Spark names it: a filter on it lets the reader skip the other folders' files."""
    return F.regexp_extract(file, r"^(.*)/[^/]*$", 1)


def checked_records(raw: DataFrame) -> DataFrame:
    """Per record (read with FIRST_READ_SCHEMA), its identity, file and `problem` (or null)."""
    return raw.select(
        *KEY, "run_id", collected_us().alias("collected_us"), "source_file", record_problem().alias("problem")
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
            F.count(F.lit(1)).alias("copies"),
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
    identity = F.crc32(F.concat_ws(IDENTITY_SEPARATOR, *KEY, "run_id", F.col("collected_us").cast("string")))
    return [
        F.count(F.when(F.col("bad"), 1)).alias("bad"),
        F.count(F.when(F.col("repeated"), 1)).alias("repeated"),
        F.count(F.when(in_window & F.col("first_file"), 1)).alias("expected"),
        F.coalesce(F.sum(F.when(in_window & F.col("first_file"), identity)), F.lit(0)).alias("fingerprint"),
        F.array_sort(F.collect_set(F.when(in_window, folder))).alias("window_folders"),
        F.array_sort(F.collect_set(F.when(in_window, F.col("source_file")))).alias("window_files"),
        F.array_sort(F.collect_set(F.when(F.col("repeated"), folder))).alias("repeated_folders"),
    ]


class FirstRead(NamedTuple):
    """What the first read of the input observed (`first_read_metrics`)."""

    bad: int  # rows of identities with a bad record
    repeated: int  # rows of identities with more than one record
    expected: int  # snapshots in the window: the second read must find each
    fingerprint: int  # of the window's identities (`identity_fingerprint`): the second read must find these
    window_folders: list[str]
    window_files: list[str]
    repeated_folders: list[str]

    @classmethod
    def of(cls, metrics: dict[str, Any]) -> FirstRead:
        return cls(**{name: metrics[name] for name in cls._fields})


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


# Files of the window listed by name up to this many; past it, by their folders (a filter of as many literals costs
# more than reading the folders' other files).
MAX_LISTED_FILES = 10_000


def window_lines(lines: DataFrame, first: FirstRead) -> DataFrame:
    """The lines of the files that hold a snapshot of the window (`first_read_metrics`): a filter on the file, which
    lets the reader list and open only those files (or their folders, when there are very many)."""
    if len(first.window_files) <= MAX_LISTED_FILES:
        return lines.where(F.col("source_file").isin(first.window_files))
    return lines.where(folder_of(F.col("source_file")).isin(first.window_folders))


def window_records(lines: DataFrame) -> DataFrame:
    """The lines of `window_lines` (`value`) with their file and identity: key, run_id and collected_us, named by
    IDENTITY_SCHEMA alone. They hold every snapshot of each key's window, and may hold older ones: the planner takes
    the newest of each key (`mqjournal.sparkplan.grouped.window_of`) and reads them whole."""
    named = lines.select("value", "source_file", F.from_json("value", IDENTITY_SCHEMA).alias("id"))
    return named.select(
        "value",
        "source_file",
        *[F.col(f"id.{name}").alias(name) for name in (*KEY, "run_id")],
        micros(F.col("id.collected_at")).alias("collected_us"),
    )


def refuse_problems(problems: list[Any], lines: DataFrame) -> None:
    """Stop the job on the lines of the window the planner refused (`mqjournal.sparkplan.grouped`), up to five
    examples, in the words the job has always used: a receiver that cannot be planned from as the first read's
    `refuse_bad_records` says it, any other record that is not the contract's naming its file, line and field."""
    ordered = sorted(problems, key=lambda p: (p.problem_file, p.run_id, p.host, p.qmgr, p.qmgr_library))
    receivers = [p for p in ordered if p.problem_kind == RECEIVER]
    if receivers:
        files: dict[tuple[str, str, str, str, str], set[str]] = {}
        for p in receivers:
            files.setdefault((p.host, p.qmgr, p.qmgr_library, p.run_id, p.problem), set()).add(p.problem_file)
        records = "; ".join(
            f"{sorted(where)} (run {run_id}, {host}/{qmgr}): {problem}"
            for (host, qmgr, _, run_id, problem), where in list(files.items())[:5]
        )
        raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {records}")
    findings = ordered[:5]
    numbers = line_numbers(lines, [(f.problem_file, f.problem_line) for f in findings])
    examples = []
    for f in findings:
        place = file_and_line(f.problem_file, numbers.get((f.problem_file, f.problem_line)))
        examples.append(f"{place} (run {f.run_id}, {f.host}/{f.qmgr}): {f.problem or _NOT_JSON}")
    raise PlanInputError(f"snapshot records that are not valid {SCHEMA_ID}: {_KEY_PROBLEM}: {'; '.join(examples)}")


def refuse_changed(found: int, expected: int, *, fingerprint: int, expected_fingerprint: int) -> None:
    """Stop the job if the second read did not find every snapshot of the window, and only those (their count and
    their identities' fingerprint): the input changed between reads."""
    if found != expected:
        raise PlanInputError(f"the input changed while it was read: {found} of {expected} snapshots found again")
    if fingerprint != expected_fingerprint:
        raise PlanInputError(
            f"the input changed while it was read: the {found} newest snapshots read again are not those first read"
        )
