"""AMQJRNINF and the recovery points (AMQ7460, AMQ7462) as columns of each snapshot, natively.

`amqjrninf_columns` mirrors `mqjournal.jrninf.parse_amqjrninf`: exactly the same values are malformed, and the
same fields come out. No Python runs per row: a UDF would cost a round trip to a Python worker for every snapshot.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mqjournal.jrninf import RECORD_LENGTH
from mqjournal.names import OBJECT_NAME_PATTERN
from mqjournal.sparkplan.schema import POINTS, PY_WHITESPACE, micros

# A name field is valid when str.rstrip() leaves an IBM i name: PY_WHITESPACE is exactly what rstrip removes.
_NAME_FIELD = rf"^{OBJECT_NAME_PATTERN}[{PY_WHITESPACE}]*\z"
_TRAILING_WHITESPACE = rf"[{PY_WHITESPACE}]+\z"
_BLANKS_OR_NULS = r"^[ \x00]*\z"  # \z, not $: Java's $ also matches before a final line terminator
_OFFSET = r"(Z|[+-][0-9]{2}:[0-9]{2})\z"
STARS = "*" * 10


def amqjrninf_columns(offset_us: Column) -> dict[str, Column]:
    """The columns of `parse_amqjrninf`, mirrored so that exactly the same values are malformed.

    Spark's datetime parsing accepts year 0, so the year is checked apart, and the parsed time must format back to
    the same digits, so no lenient roll-over (Feb 30, hour 25, second 60) can slip through.
    """
    raw = F.col("amqjrninf")
    name_field, library_field = F.substring(raw, 1, 10), F.substring(raw, 11, 10)
    stamp = F.substring(raw, 21, 17)
    seconds_part = F.substring(stamp, 1, 14)
    name_stars, library_stars = name_field == STARS, library_field == STARS
    wall_clock = F.try_to_timestamp(seconds_part, F.lit("yyyyMMddHHmmss"))
    is_blank = raw.rlike(_BLANKS_OR_NULS)
    has_record_length = F.length(raw) >= RECORD_LENGTH
    is_blank_after_record = F.substring(raw, RECORD_LENGTH + 1, 2**31 - 1).rlike(_BLANKS_OR_NULS)
    is_name = name_stars | name_field.rlike(_NAME_FIELD)
    is_library = library_stars | library_field.rlike(_NAME_FIELD)
    stars_only_in_library = library_stars & ~name_stars
    is_time = (
        stamp.rlike(r"^[0-9]{17}\z")
        & (F.substring(stamp, 1, 4) != "0000")
        & (F.date_format(wall_clock, "yyyyMMddHHmmss") == seconds_part)
    )
    well_formed = (
        ~is_blank & has_record_length & is_blank_after_record & is_name & is_library & ~stars_only_in_library & is_time
    )
    usable = raw.isNotNull() & F.coalesce(well_formed, F.lit(False))
    names_receiver = usable & ~name_stars
    local_us = F.unix_micros(wall_clock) + F.substring(stamp, 15, 3).try_cast("long") * 1000
    return {
        "amqjrninf_missing": raw.isNull(),
        "amqjrninf_malformed": raw.isNotNull() & ~usable,
        "amqjrninf_usable": usable,
        "amqjrninf_stars": usable & name_stars,
        "amqjrninf_receiver": F.when(names_receiver, F.regexp_replace(name_field, _TRAILING_WHITESPACE, "")),
        "amqjrninf_library": F.when(names_receiver, F.regexp_replace(library_field, _TRAILING_WHITESPACE, "")),
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
    for point, prefix in zip(POINTS, ("startup", "media"), strict=True):
        columns[f"{prefix}_present"] = F.col(point).isNotNull()
        columns[f"{prefix}_receiver"] = F.col(f"{point}.receiver")
        columns[f"{prefix}_us"] = micros(F.col(f"{point}.at"))
    return columns


def with_state_columns(snapshots: DataFrame) -> DataFrame:
    """The AMQJRNINF and recovery point columns, per snapshot (meaningful for the current ones).

    Stored with the snapshots rather than derived later: the receivers are exploded from these rows, and generated
    code would evaluate them again for every receiver.
    """
    return snapshots.select(
        "*",
        *[column.alias(name) for name, column in amqjrninf_columns(collected_offset_us()).items()],
        *[column.alias(name) for name, column in recovery_point_columns().items()],
    )
