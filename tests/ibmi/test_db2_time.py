"""A Db2 timestamp as IBM i prints it is read by position; every text reads, or is refused, as strptime reads it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mqjournal.ibmi.readings import db2_time

CET = timezone(timedelta(hours=1))
FORMAT = "%Y-%m-%d-%H.%M.%S.%f"

TEXTS = [
    "2026-11-23-02.00.00.000000",  # as IBM i prints a TIMESTAMP(6)
    "2026-11-23-23.59.59.999999",
    "2028-02-29-12.30.45.123456",  # a leap day
    "2027-02-29-12.30.45.123456",  # no such day
    "2026-13-01-00.00.00.000000",  # no such month
    "2026-00-01-00.00.00.000000",
    "2026-11-31-00.00.00.000000",
    "2026-11-23-24.00.00.000000",  # no such hour
    "2026-11-23-23.60.00.000000",
    "2026-11-23-23.59.60.000000",  # a leap second: strptime's pattern takes it, datetime does not
    "0000-01-01-00.00.00.000000",  # year 0
    "2026-11-23-02.00.00.00000",  # five digits of fraction
    "2026-11-23-02.00.00",  # no fraction
    "2026-1-23-02.00.00.000000",  # one-digit month
    "2026-11-23-02.00.00.000000 ",  # a trailing blank
    " 2026-11-23-02.00.00.000000",
    "2026-11-23 02:00:00.000000",  # ISO, not Db2
    "2026-11-23-02.00.00.0000001",
    "\u0662\u0660\u0662\u0666-11-23-02.00.00.000000",  # Arabic-Indic digits: strptime's \d takes them
    "",
]


def _strptime(text: str) -> datetime | str:
    try:
        return datetime.strptime(text, FORMAT).replace(tzinfo=CET)
    except ValueError as exc:
        return f"ValueError: {exc}"


@pytest.mark.parametrize("text", TEXTS)
def test_a_db2_timestamp_reads_as_strptime_reads_it(text):
    try:
        found: datetime | str = db2_time(text, CET)
    except ValueError as exc:
        found = f"ValueError: {exc}"
    assert found == _strptime(text)
    if isinstance(found, datetime):
        assert found.tzinfo is CET


def test_a_null_timestamp_is_none():
    assert db2_time(None, CET) is None
