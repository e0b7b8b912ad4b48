"""The snapshot records as the plan job reads them, and the columns it writes.

The columns written are the plan rows' fields (mqjournal.planrows), their Spark types derived from the models
(`spark_schema`): never listed again. Every time is compared as integer microseconds since the epoch, exactly as
Python compares aware datetimes.
"""

from __future__ import annotations

import types
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.planrows import REF_COLUMNS, PlannedQueueManager, PlannedReceiver

KEY = list(REF_COLUMNS)
IDENTITY = [*KEY, "run_id", "collected_us"]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROS = timedelta(microseconds=1)
POINTS = ("startup_recovery", "media_recovery")  # AMQ7460, AMQ7462

# The plan's columns are its rows' fields (mqjournal.planrows), in their order: never listed again.
RECEIVERS_COLUMNS = list(PlannedReceiver.model_fields)
QUEUE_MANAGERS_COLUMNS = list(PlannedQueueManager.model_fields)

# Exactly the characters str.isspace() accepts, as a regex class body: what Python's strip() and rstrip() remove.
PY_WHITESPACE = "".join(f"\\x{{{code:x}}}" for code in range(0x110000) if chr(code).isspace())

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
    ("damaged_objects", T.ArrayType(_struct(("object", _TEXT), ("object_type", _TEXT), ("reported_at", _TIME)))),
    (
        "undecodable_messages",
        T.ArrayType(_struct(("message_id", _TEXT), ("sent_at", _TIME), ("problem", _TEXT), ("dspmsgd", _TEXT))),
    ),
)


# What the first read of every record reads (`mqjournal.sparkplan.checks.record_problem`): who and when the record is,
# and what of it is checked on every record. Not the receivers: building their values is most of a full read's cost;
# the records the plan reads are checked whole by the reference's reader (`mqjournal.sparkplan.grouped`).
FIRST_READ_SCHEMA = _struct(
    ("schema", _TEXT),
    ("run_id", _TEXT),
    ("collected_at", _TIME),
    ("host", _TEXT),
    ("qmgr", _TEXT),
    ("qmgr_library", _NAME),
    ("journal", _struct(("name", _NAME), ("library", _NAME))),
    ("checkpoint", _struct(("forced", T.BooleanType()), ("ok", T.BooleanType()))),
    ("startup_recovery", _struct(("at", _TIME))),
    ("media_recovery", _struct(("at", _TIME))),
)
# What names a line's snapshot (its IDENTITY, with collected_us from collected_at), as the second read finds it.
IDENTITY_SCHEMA = _struct(*[(name, _TEXT) for name in (*KEY, "run_id", "collected_at")])


# --- the plan's columns, from the plan rows' models -----------------------------------------------------------------

# The Parquet types readers have always got where a model's int is not a long: a chain position is an int, and
# sequence numbers are exact decimals (they can exceed a long).
_COLUMN_TYPES: dict[str, T.DataType] = {
    "chain_position": T.IntegerType(),
    "first_sequence": _SEQUENCE,
    "last_sequence": _SEQUENCE,
}
_SCALARS: tuple[tuple[type, T.DataType], ...] = (
    (Enum, T.StringType()),
    (str, T.StringType()),
    (bool, T.BooleanType()),  # before int: a bool is an int
    (int, T.LongType()),
    (datetime, T.TimestampType()),
)


def _spark_type(annotation: Any) -> tuple[T.DataType, bool]:
    """A field's Spark type, and whether it may be null (an Optional)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _spark_type(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        kinds = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kinds) != 1:
            raise TypeError(f"no Spark type for {annotation}")
        return _spark_type(kinds[0])[0], True
    if origin is tuple:
        element, *rest = get_args(annotation)
        if rest != [Ellipsis]:
            raise TypeError(f"no Spark type for {annotation}")
        # Elements that may be null, as the Parquet lists readers have always got (Arrow's list type says so).
        return T.ArrayType(_spark_type(element)[0], containsNull=True), False
    for kind, spark in _SCALARS:
        if isinstance(annotation, type) and issubclass(annotation, kind):
            return spark, False
    raise TypeError(f"no Spark type for {annotation}")


def spark_schema(model: type[BaseModel]) -> T.StructType:
    """The Spark columns of a plan row's model: its fields in their order, str and enums as string, int as long
    (but `_COLUMN_TYPES`), bool, times as timestamp, a tuple as an array, an Optional nullable."""
    fields = []
    for name, field in model.model_fields.items():
        kind, nullable = _spark_type(field.annotation)
        fields.append(T.StructField(name, _COLUMN_TYPES.get(name, kind), nullable))
    return T.StructType(fields)


RECEIVERS_SCHEMA = spark_schema(PlannedReceiver)
QUEUE_MANAGERS_SCHEMA = spark_schema(PlannedQueueManager)


def micros(column: Column) -> Column:
    """An ISO 8601 time with offset (as text) as microseconds since the epoch; null when it is not one."""
    return F.unix_micros(column.try_cast("timestamp"))


def collected_us() -> Column:
    return micros(F.col("collected_at"))
