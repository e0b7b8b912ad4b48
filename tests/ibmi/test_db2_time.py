"""A Db2 timestamp as IBM i prints it is read by position; every text reads, or is refused, as strptime reads it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from mqjournal.ibmi.readings import UnknownTimeZone, db2_time, partition_zone

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


# --- the offset in force at each time: QTIMZON's time zone description, not today's QUTCOFFSET ----------------------

NEW_YORK_NOW = datetime(2026, 11, 23, 9, 0)  # EST, -05:00: QUTCOFFSET reads -0500 today


def test_a_time_from_before_the_dst_change_reads_with_the_offset_then_in_force():
    zone = partition_zone("QN0500EST3", "-0500", NEW_YORK_NOW)
    detached = db2_time("2026-10-20-12.00.00.000000", zone)  # EDT then
    assert detached == datetime(2026, 10, 20, 16, 0, tzinfo=UTC)
    collected = db2_time("2026-11-23-09.00.00.000000", zone)
    # Today's fixed offset would make it an hour older than it is.
    assert collected - detached == timedelta(days=33, hours=22)


def test_a_time_in_the_repeated_hour_reads_as_the_later_moment_so_the_receiver_looks_younger():
    zone = partition_zone("QN0500EST3", "-0500", NEW_YORK_NOW)
    # 01:30 on 1 November 2026 happened twice: 05:30 UTC (EDT) and 06:30 UTC (EST).
    assert db2_time("2026-11-01-01.30.00.000000", zone) == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)


def test_a_description_without_dst_reads_with_its_fixed_offset():
    zone = partition_zone("QP0100UTCS", "+0100", datetime(2026, 7, 1, 12, 0))
    assert db2_time("2026-01-10-12.00.00.000000", zone) == datetime(2026, 1, 10, 11, 0, tzinfo=UTC)
    assert partition_zone("Q0000UTC", "+0000", NEW_YORK_NOW).offset_at(NEW_YORK_NOW) == timedelta(0)


@pytest.mark.parametrize("description", ["MYZONE", "QN0500EST", "", None])
def test_a_description_whose_rules_are_not_known_is_refused_naming_qtimzon(description):
    with pytest.raises(UnknownTimeZone, match="QTIMZON"):
        partition_zone(description, "-0500", NEW_YORK_NOW)


def test_a_description_that_disagrees_with_qutcoffset_is_refused():
    with pytest.raises(UnknownTimeZone, match="QUTCOFFSET"):
        partition_zone("QN0500EST3", "-0400", NEW_YORK_NOW)


# --- times sent to the partition: a MESSAGE_TIMESTAMP window --------------------------------------------------------


def test_a_window_from_before_the_start_of_dst_starts_at_the_local_time_then():
    zone = partition_zone("QN0500EST3", "-0500", NEW_YORK_NOW)
    since = datetime(2026, 3, 8, 6, 30, tzinfo=UTC)  # 01:30 EST; clocks go to 03:00 EDT at 07:00 UTC
    assert zone.earliest_local(since, datetime(2026, 3, 8, 9, 0, tzinfo=UTC)) == datetime(2026, 3, 8, 1, 30)


def test_a_window_across_the_end_of_dst_holds_the_repeated_hour_whole():
    # 01:30 EDT is 05:30 UTC; at 06:00 UTC the clocks go back to 01:00 EST, so the messages of 06:00-06:30 UTC show
    # 01:00-01:30: a window from 01:30 would lose them; it starts an hour earlier and reads up to an hour more.
    zone = partition_zone("QN0500EST3", "-0500", NEW_YORK_NOW)
    since = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)
    assert zone.earliest_local(since, datetime(2026, 11, 1, 8, 0, tzinfo=UTC)) == datetime(2026, 11, 1, 0, 30)
    # Without a change in between, the window is `since`'s local time.
    assert zone.earliest_local(since, since + timedelta(minutes=20)) == datetime(2026, 11, 1, 1, 30)


def test_the_fleet_files_rules_read_a_sites_own_description():
    zone = partition_zone("NEWYORK", "-0500", NEW_YORK_NOW, rules="America/New_York")
    assert zone.from_fleet and zone.olson == "America/New_York"
    assert db2_time("2026-10-20-12.00.00.000000", zone) == datetime(2026, 10, 20, 16, 0, tzinfo=UTC)


def test_fleet_rules_that_disagree_with_qutcoffset_are_refused_naming_the_fleet_field():
    with pytest.raises(UnknownTimeZone, match="time_zone_rules Europe/Zurich"):
        partition_zone("NEWYORK", "-0500", NEW_YORK_NOW, rules="Europe/Zurich")
