"""The one way mqjournal writes a time for people: the partition's local time with its UTC offset.

An admin compares what mqjournal says with DSPJRN, WRKJRNRCV and the QMQMMSG messages, which all show the
partition's local time; the offset makes the text unambiguous when it is read elsewhere (a controller in UTC, a
fleet across time zones). Every report, gate body, log line and page uses these functions, never isoformat() or
strftime of its own.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

UTC_OFFSET_UNKNOWN = "the partition's offset is not known"


def zone(offset_minutes: int) -> timezone:
    return timezone(timedelta(minutes=offset_minutes))


def offset_text(offset: timedelta) -> str:
    """+01:00, -05:00, +05:30."""
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{rest:02d}"


def local_time(moment: datetime | None, offset_minutes: int | None = None) -> str:
    """`2026-11-22 10:00:05 +01:00`: `moment` in the partition's zone (`offset_minutes` east of UTC; None: the zone
    `moment` carries, which is the partition's for times read from it). A naive `moment` is taken as UTC, as
    Parquet gives them back. None reads "-"."""
    if moment is None:
        return "-"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if offset_minutes is not None:
        moment = moment.astimezone(zone(offset_minutes))
    offset = moment.utcoffset() or timedelta(0)
    return f"{moment:%Y-%m-%d %H:%M:%S} {offset_text(offset)}"


def local_day(moment: datetime, offset_minutes: int | None = None) -> datetime:
    """`moment` as the partition's wall clock (for grouping by day)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone(offset_minutes)) if offset_minutes is not None else moment


def day_span(first: datetime, last: datetime, offset_minutes: int | None = None) -> str:
    """`20-22 Nov`, `30 Nov-2 Dec`, `22 Nov` (2025 and later years written out when they differ)."""
    a, b = local_day(first, offset_minutes), local_day(last, offset_minutes)
    if a.date() > b.date():
        a, b = b, a
    if a.date() == b.date():
        return f"{a.day} {a:%b}"
    if a.year != b.year:
        return f"{a.day} {a:%b} {a.year}-{b.day} {b:%b} {b.year}"
    if a.month == b.month:
        return f"{a.day}-{b.day} {b:%b}"
    return f"{a.day} {a:%b}-{b.day} {b:%b}"


def age(span: timedelta | float | int | None) -> str:
    """`42 h`, `3 d 4 h`, `25 min`, `40 s` (seconds when given a number); None reads "-"."""
    if span is None:
        return "-"
    seconds = span.total_seconds() if isinstance(span, timedelta) else float(span)
    if seconds < 0:
        return f"in {age(-seconds)}"
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    hours = int(seconds // 3600)
    if hours < 72:
        return f"{hours} h"
    days, rest = divmod(hours, 24)
    return f"{days} d {rest} h" if rest else f"{days} d"
