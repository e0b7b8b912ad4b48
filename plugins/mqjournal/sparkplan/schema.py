"""The snapshot records as the plan job reads them, and the columns it writes.

Every time is compared as integer microseconds since the epoch, exactly as Python compares aware datetimes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

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


def micros(column: Column) -> Column:
    """An ISO 8601 time with offset (as text) as microseconds since the epoch; null when it is not one."""
    return F.unix_micros(column.try_cast("timestamp"))


def collected_us() -> Column:
    return micros(F.col("collected_at"))
