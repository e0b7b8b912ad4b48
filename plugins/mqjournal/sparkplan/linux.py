"""The Linux queue managers' plan in DataFrame form: `mqjournal.linuxmq.plan`, rule by rule (#32).

Read the two side by side: `current_snapshots` is the reference's choice of the current snapshot and its history
(`_stuck`), `not_planned` its `_log_points`, `extent_decision` its `_decide`, and every reason and alert is built
from the reference's own templates (`Why`, and the LogPoints texts of `linuxmq.extents`), so the two say the same
words; tests/plan/test_linux_spark_agrees_with_reference.py holds them equal. DataFrame operations only, no Python
UDF: the job also runs on a Spark Connect server that has no mqjournal code.

The job has no catalog, so it plans as `plan_queue_manager(snapshot, proven=(), history)` does: RELEASE never comes
out of here. The archive step finds the copies proven earlier itself, and the release step plans again, live, with
the catalog's proven copies before it releases anything.

The records come from `mqjournal.sparkplan.job` (read with `LINUX_SNAPSHOT_SCHEMA`, in FAILFAST mode); the job calls
`refuse_bad_input` before it writes anything, then `write_linux_plan`.
"""

from __future__ import annotations

import operator
import string
from collections.abc import Callable
from functools import reduce
from typing import get_args

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.linuxmq.extents import EXTENT_NAME_PATTERN, EXTENT_NUMBERS, POINT_AHEAD, R_EXTENT_POINT, LogManagement
from mqjournal.linuxmq.plan import STUCK_AFTER_RUNS, Alert, ExtentAction, Why
from mqjournal.linuxmq.planrows import EXTENT_COLUMNS, EXTENTS, KEY_COLUMNS, QUEUE_MANAGER_COLUMNS, QUEUE_MANAGERS
from mqjournal.linuxmq.snapshot import SCHEMA_ID, LinuxSnapshot
from mqjournal.names import QMGR_NAME_PATTERN
from mqjournal.sparkplan.checks import (
    PlanInputError,
    bad_instant,
    content_hash,
    file_and_line,
    line_numbers,
    malformed_line_file,
)
from mqjournal.sparkplan.schema import PY_WHITESPACE, micros

KEY = list(KEY_COLUMNS)
IDENTITY = [*KEY, "run_id"]
"""One snapshot: two different records of one identity are refused (which one is current would depend on order)."""

_TEXT = T.StringType()


def _struct(*fields: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType([T.StructField(name, kind) for name, kind in fields])


# The mqjournal.linux-snapshot/v1 record as the job reads it; a test holds it equal to the model's published schema.
# Times are read as text: their offsets are data, and the checks refuse a time that is not one.
LINUX_SNAPSHOT_SCHEMA = _struct(
    ("schema", _TEXT),
    ("run_id", _TEXT),
    ("collected_at", _TEXT),
    ("host", _TEXT),
    ("platform", _TEXT),
    ("qmgr", _TEXT),
    ("log_type", _TEXT),
    ("log_management", _TEXT),
    ("log_path", _TEXT),
    ("extent_bytes", T.LongType()),
    ("current_extent", _TEXT),
    ("restart_extent", _TEXT),
    ("media_extent", _TEXT),
    ("archive_extent", _TEXT),
    (
        "media_images",
        _struct(
            ("forced", T.BooleanType()),
            ("ok", T.BooleanType()),
            ("at", _TEXT),
            ("messages", T.ArrayType(_TEXT)),
            ("damaged", T.ArrayType(_struct(("name", _TEXT), ("type", _TEXT)))),  # read, not planned: on-call's
        ),
    ),
    ("extents", T.ArrayType(_struct(("name", _TEXT), ("size_bytes", T.LongType()), ("modified_at", _TEXT)))),
)

# The keys a record must have (pydantic's required fields) and may have: the JSON reader reads a missing key as
# null, which for CURRLOG or ARCHLOG would be a different answer, not a missing one.
_FIELDS = LinuxSnapshot.model_fields
_ALL_KEYS = sorted(field.alias or name for name, field in _FIELDS.items())
_REQUIRED_KEYS = sorted(field.alias or name for name, field in _FIELDS.items() if field.is_required())
_LOG_TYPES = list(get_args(_FIELDS["log_type"].annotation))
_PLATFORMS: tuple[str, ...] = get_args(_FIELDS["platform"].annotation)
"""The hosts' platforms a snapshot may name (the contract's own list: Linux, AIX, Windows)."""
_POINTS = {"CURRLOG": "current_extent", "RECLOG": "restart_extent", "MEDIALOG": "media_extent"}

# Java's `$` also matches before a final line break, as Python's does: `\z` is the end of the text.
_EXTENT_NAME = rf"^{EXTENT_NAME_PATTERN}\z"
_QMGR_NAME = rf"^{QMGR_NAME_PATTERN}\z"
_NOT_AN_EXTENT = "is not an extent name (S or R, seven digits, .LOG)"
_WHAT_TO_DO = (
    "fix or remove the records named (each line one whole record as `mqjournal collect` writes it, one record per "
    "host, queue manager and run_id) and plan again"
)


def words(template: str, **values: Column) -> Column:
    """The reference's text `template` (str.format fields) with each field a column: the same words, per row."""
    parts: list[Column] = []
    for literal, field, _, _ in string.Formatter().parse(template):
        if literal:
            parts.append(F.lit(literal))
        if field is not None:
            parts.append(values[field])
    return F.concat(*parts)


# --- the input checks --------------------------------------------------------------------------------------------


def _not_extent_name(name: Column) -> Column:
    return name.isNotNull() & ~name.rlike(_EXTENT_NAME)


def _missing(text: Column) -> Column:
    return F.coalesce(F.length(text), F.lit(0)) == 0


def _bad_extent(e: Column) -> Column:
    return (
        e.isNull()
        | e["name"].isNull()
        | _not_extent_name(e["name"])
        | F.coalesce(e["size_bytes"] < 0, F.lit(True))
        | bad_instant(e["modified_at"])
    )


def record_problem() -> Column:
    """Why a record is not a usable v1 record (what pydantic would refuse, as far as the plan reads it), or null."""
    images = F.col("media_images")
    bad_extents = F.filter("extents", _bad_extent)
    checks: list[tuple[Column, Column | str]] = [
        (~F.coalesce(F.col("schema") == SCHEMA_ID, F.lit(False)), f"schema is not {SCHEMA_ID}"),
        (_missing(F.col("run_id")), "run_id is missing"),
        (_missing(F.col("host")), "host is missing"),
        (
            ~F.coalesce(F.col("platform").isin(list(_PLATFORMS)), F.lit(False)),
            f"platform is not one of {', '.join(_PLATFORMS)}",
        ),
        (~F.coalesce(F.col("qmgr").rlike(_QMGR_NAME), F.lit(False)), "qmgr is not a queue manager name"),
        (
            F.col("collected_at").isNull() | bad_instant(F.col("collected_at")),
            "collected_at is not an ISO 8601 time with offset",
        ),
        (~F.coalesce(F.col("log_type").isin(_LOG_TYPES), F.lit(False)), f"log_type is not one of {_LOG_TYPES}"),
        (
            ~F.coalesce(F.col("log_management").isin(list(LogManagement)), F.lit(False)),
            f"log_management is not one of {[m.value for m in LogManagement]}",
        ),
        (_missing(F.col("log_path")), "log_path is missing"),
        (F.coalesce(F.col("extent_bytes") < 0, F.lit(True)), "extent_bytes is not a number of bytes"),
        *[
            (_not_extent_name(F.col(c)), F.concat(F.lit(f"{c} "), F.col(c), F.lit(f" {_NOT_AN_EXTENT}")))
            for c in (*_POINTS.values(), "archive_extent")
        ],
        (
            images.isNull() | images["forced"].isNull() | images["ok"].isNull() | bad_instant(images["at"]),
            "media_images is missing, or lacks forced or ok, or has a bad time",
        ),
        (F.col("extents").isNull(), "extents is missing"),
        (
            F.size(bad_extents) > 0,
            F.concat(
                F.lit("extent "),
                F.coalesce(F.try_element_at(bad_extents, F.lit(1))["name"], F.lit("(no name)")),
                F.lit(f" {_NOT_AN_EXTENT}, or lacks its size_bytes, or has a bad modified_at"),
            ),
        ),
    ]
    return F.coalesce(*[F.when(failed, F.lit(p) if isinstance(p, str) else p) for failed, p in checks])


def key_problem() -> Column:
    """Why a line's keys are not a record's (one missing, or one not in the contract), or null."""
    keys = F.json_object_keys("value")
    missing = F.array_except(F.array(*[F.lit(k) for k in _REQUIRED_KEYS]), keys)
    unknown = F.array_except(keys, F.array(*[F.lit(k) for k in _ALL_KEYS]))
    return (
        F.when(keys.isNull(), F.lit("the line is not one JSON object"))
        .when(F.size(missing) > 0, F.concat(F.lit("keys missing: "), F.array_join(missing, ", ")))
        .when(F.size(unknown) > 0, F.concat(F.lit("keys not in the contract: "), F.array_join(unknown, ", ")))
    )


def _problems(records: DataFrame, lines: DataFrame) -> DataFrame:
    """Every problem of the input, one row each: the files (one, but for different records of one identity), the
    record it is about, the problem, and the line (when the problem is the line's)."""
    no_line = F.lit(None).cast(_TEXT).alias("line")
    files = F.array("source_file").alias("files")
    bad_records = records.select(files, *IDENTITY, record_problem().alias("problem"), no_line)
    written = lines.where(~F.col("value").rlike(rf"^[{PY_WHITESPACE}]*\z"))
    bad_lines = written.select(
        files,
        *[F.get_json_object("value", f"$.{key}").alias(key) for key in IDENTITY],
        key_problem().alias("problem"),
        F.col("value").alias("line"),
    )
    different = (
        records.groupBy(*IDENTITY)
        .agg(
            F.count_distinct(content_hash(LINUX_SNAPSHOT_SCHEMA)).alias("versions"),
            F.array_sort(F.collect_set("source_file")).alias("files"),
        )
        .where(F.col("versions") > 1)
        .select(
            "files",
            *IDENTITY,
            F.lit("different records of one host, queue manager and run_id").alias("problem"),
            no_line,
        )
    )
    return bad_records.unionByName(bad_lines).unionByName(different).where(F.col("problem").isNotNull())


def refuse_bad_input(records: DataFrame, lines: DataFrame, locations: list[str]) -> None:
    """Stop the plan on an input it cannot plan from, naming up to five files (and lines) and what is wrong.

    `records`: the JSON reader's, in FAILFAST mode (a line that does not parse stops this job, and is named here);
    `lines`: the same files as text, for the keys as written. One job, which collects nothing when the input is good.
    """
    try:
        found = _problems(records, lines).orderBy("files", "run_id", *KEY).limit(5).collect()
    except Exception as exc:
        file = malformed_line_file(exc)
        if file is None:
            raise
        where = file_and_line(file, None) if file else ", ".join(locations)
        raise PlanInputError(f"a line of {where} is not a valid JSON {SCHEMA_ID} record: {_WHAT_TO_DO}") from exc
    if not found:
        return
    numbers = line_numbers(lines, [(f.files[0], f.line) for f in found if f.line is not None])
    examples = []
    for f in found:
        line = numbers.get((f.files[0], f.line)) if f.line is not None else None
        place = ", ".join(file_and_line(file, line) for file in f.files)
        examples.append(f"{place} (run {f.run_id}, {f.host}/{f.qmgr}): {f.problem}")
    raise PlanInputError(f"Linux snapshot records that are not valid {SCHEMA_ID}: {'; '.join(examples)}; {_WHAT_TO_DO}")


# --- the current snapshot and its history (plan_queue_manager's `snapshot` and `history`) ------------------------


def _number(name: Column) -> Column:
    return F.substring(name, 2, 7).cast("int")


def _reusable(name: Column) -> Column:
    return F.substring(name, 1, 1) == "R"


def _behind(name: Column) -> Column:
    """Extent.behind: how many extents `name` is behind CURRLOG, across the wrap."""
    return F.pmod(_number(F.col("current_extent")) - _number(name), F.lit(EXTENT_NUMBERS))


def _has_points() -> Column:
    """The status named all three log points (LinuxSnapshot.points is not None)."""
    return reduce(operator.and_, [F.col(column).isNotNull() for column in _POINTS.values()])


def points_problem() -> Column:
    """Why the three log points cannot be ordered (LogPoints' ValueError, word for word), or null: also when a point
    is missing."""
    checks = []
    for what, column in _POINTS.items():
        point = F.col(column)
        named = {"point": F.lit(what), "extent": point}
        checks.append(F.when(_reusable(point), words(R_EXTENT_POINT, **named)))
        ahead = _behind(point) >= EXTENT_NUMBERS // 2
        checks.append(F.when(ahead, words(POINT_AHEAD, **named, current=F.col("current_extent"))))
    return F.when(_has_points(), F.coalesce(*checks))


def current_snapshots(inputs: DataFrame, history: DataFrame) -> DataFrame:
    """Per queue manager collected in `inputs`, its newest snapshot (of `inputs` and `history`), with the columns
    the stuck alerts need of it and of the ones before it (`_stuck`: the newest STUCK_AFTER_RUNS earlier ones).

    A queue manager found only in `history` is not planned: it was not collected this time, and an old snapshot is
    no plan. Identical copies of one snapshot (the same run given twice) are one.
    """
    records = inputs.withColumn("from_input", F.lit(True)).unionByName(history.withColumn("from_input", F.lit(False)))
    identity = Window.partitionBy(*IDENTITY)
    one = records.select(
        "*",
        F.row_number().over(identity.orderBy("source_file")).alias("copy"),
        F.max("from_input").over(identity).alias("collected_now"),
        micros(F.col("collected_at")).alias("collected_us"),
    ).where(F.col("copy") == 1)
    # The reference's history is oldest first by collection time; ties are broken by run_id, as the IBM i plan does.
    newest_first = Window.partitionBy(*KEY).orderBy(F.col("collected_us").desc(), F.col("run_id").desc())
    key = Window.partitionBy(*KEY)
    runs = one.select(
        "*",
        F.row_number().over(newest_first).alias("recency"),
        F.max("collected_now").over(key).alias("planned"),
        points_problem().alias("points_problem"),
    ).where(F.col("planned") & (F.col("recency") <= STUCK_AFTER_RUNS + 1))
    orderable = _has_points() & F.col("points_problem").isNull()

    def distinct(column: str) -> Column:
        return F.size(F.collect_set(column).over(key))

    # `_stuck`: every one of the runs has orderable points, CURRLOG moved, and a point did not.
    stuck = (F.count(F.lit(1)).over(key) > STUCK_AFTER_RUNS) & F.min(orderable).over(key)
    stuck = stuck & (distinct("current_extent") > 1)
    return (
        runs.select(
            "*",
            (stuck & (distinct("restart_extent") == 1)).alias("restart_stuck"),
            (stuck & (distinct("media_extent") == 1)).alias("media_stuck"),
        )
        .where(F.col("recency") == 1)
        .drop("copy", "collected_now", "from_input", "recency", "planned")
    )


# --- the plan (plan_queue_manager) -------------------------------------------------------------------------------


def not_planned() -> tuple[Column, Column]:
    """`_log_points`: why nothing of the queue manager is planned (each extent's reason, and the alert's text), or
    nulls when it is planned."""
    not_linear = F.col("log_type") != "LINEAR"
    has_points = _has_points()
    why = F.lower("log_type")
    reason = (
        F.when(not_linear, words(Why.NOT_LINEAR, log_type=why))
        .when(F.col("points_problem").isNotNull(), F.lit(Why.UNORDERABLE))
        .when(~has_points, F.lit(Why.NO_POINTS))
    )
    alert = F.when(not_linear | ~has_points, words(Why.MQ_MANAGES, why=reason)).when(
        F.col("points_problem").isNotNull(), words(Why.UNORDERABLE_ALERT, problem=F.col("points_problem"))
    )
    return reason, alert


def _alert(kind: Alert, text: Column) -> Column:
    return F.struct(F.lit(kind.value).alias("kind"), text.alias("text"))


def alerts() -> Column:
    """The queue manager's alerts, in the reference's order: the stuck ones, then NOT_PLANNED."""
    runs = F.lit(str(STUCK_AFTER_RUNS + 1))  # `_stuck` alerts only with that many runs
    _, not_planned_text = not_planned()
    restart = words(Why.RESTART_STUCK, restart=F.col("restart_extent"), runs=runs)
    media = words(Why.MEDIA_STUCK, media=F.col("media_extent"), runs=runs)
    found = F.array(
        F.when(F.col("restart_stuck"), _alert(Alert.RESTART_STUCK, restart)),
        F.when(F.col("media_stuck"), _alert(Alert.MEDIA_STUCK, media)),
        F.when(not_planned_text.isNotNull(), _alert(Alert.NOT_PLANNED, not_planned_text)),
    )
    return F.filter(found, lambda alert: alert.isNotNull())


def _decision(action: ExtentAction, reason: Column | str) -> Column:
    return F.struct(
        F.lit(action.value).alias("action"), (F.lit(reason) if isinstance(reason, str) else reason).alias("reason")
    )


def extent_decision() -> Column:
    """`_decide` (and `fate`) for the extent `name` of a row of its queue manager's current snapshot."""
    name = F.col("extent")
    management = F.col("log_management")
    behind = _behind(name)
    # fate: more than half the numbers behind is ahead of CURRLOG (kept); behind both points is releasable.
    oldest_needed = F.greatest(_behind(F.col("restart_extent")), _behind(F.col("media_extent")))
    releasable = (behind < EXTENT_NUMBERS // 2) & (behind > oldest_needed)
    archive_mode = management == LogManagement.ARCHIVE.value
    reason_not_planned, _ = not_planned()
    return (
        F.when(reason_not_planned.isNotNull(), _decision(ExtentAction.KEEP, reason_not_planned))
        .when(name == F.col("current_extent"), _decision(ExtentAction.KEEP, Why.WRITING))
        .when(_reusable(name), _decision(ExtentAction.MQ, Why.KEPT_FOR_REUSE))
        .when(
            management == LogManagement.AUTOMATIC.value,
            _decision(ExtentAction.MQ, words(Why.MQ_REUSES, management=management)),
        )
        .when(
            behind >= EXTENT_NUMBERS // 2,
            _decision(ExtentAction.KEEP, words(Why.AHEAD, current=F.col("current_extent"))),
        )
        .when(archive_mode & F.col("archive_extent").isNull(), _decision(ExtentAction.MQ, Why.ARCHLOG_BLANK))
        .when(
            archive_mode & (behind > _behind(F.col("archive_extent"))),
            _decision(ExtentAction.MQ, words(Why.NOTIFIED, archive=F.col("archive_extent"))),
        )
        .when(releasable, _decision(ExtentAction.ARCHIVE_THEN_RELEASE, Why.NOT_PROVEN))
        .when(
            behind > _behind(F.col("restart_extent")),
            _decision(ExtentAction.ARCHIVE, words(Why.MEDIA_NEEDS, media=F.col("media_extent"))),
        )
        .otherwise(_decision(ExtentAction.ARCHIVE, words(Why.RESTART_NEEDS, restart=F.col("restart_extent"))))
    )


def extents_output(current: DataFrame) -> DataFrame:
    """`linux_extents/`: one row per listed extent of each current snapshot."""
    listed = current.select("*", F.explode("extents").alias("e")).select(
        "*", F.col("e.name").alias("extent"), F.col("e.size_bytes").alias("size_bytes")
    )
    decided = listed.select("*", extent_decision().alias("decision"))
    columns = {"action": F.col("decision.action"), "reason": F.col("decision.reason")}
    return decided.select(*[columns.get(c, F.col(c)).alias(c) for c in EXTENT_COLUMNS])


def queue_managers_output(current: DataFrame) -> DataFrame:
    """`linux_queue_managers/`: one row per queue manager, with the log state it was planned from, and its alerts."""
    columns = {"collected_at": F.timestamp_micros("collected_us"), "alerts": alerts()}
    return current.select(*[columns.get(c, F.col(c)).alias(c) for c in QUEUE_MANAGER_COLUMNS])


def write_linux_plan(
    inputs: DataFrame, history: DataFrame, staging: str, keep: Callable[[DataFrame], DataFrame]
) -> None:
    """Write the Linux plan's datasets under `staging` (the job moves them into place): two jobs, over the current
    snapshots, cached by `keep` between them."""
    current = keep(current_snapshots(inputs, history))
    extents_output(current).write.mode("overwrite").parquet(f"{staging}/{EXTENTS}")
    queue_managers_output(current).write.mode("overwrite").parquet(f"{staging}/{QUEUE_MANAGERS}")


__all__ = ["LINUX_SNAPSHOT_SCHEMA", "current_snapshots", "refuse_bad_input", "write_linux_plan"]
