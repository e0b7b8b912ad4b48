from datetime import UTC, datetime, timedelta, timezone

from mqjournal.timefmt import age, day_span, local_time


def test_a_time_is_written_in_the_partitions_zone_with_its_offset():
    moment = datetime(2026, 11, 22, 9, 0, 5, tzinfo=UTC)
    assert local_time(moment, 60) == "2026-11-22 10:00:05 +01:00"
    assert local_time(moment, -300) == "2026-11-22 04:00:05 -05:00"
    assert local_time(moment.astimezone(timezone(timedelta(hours=1)))) == "2026-11-22 10:00:05 +01:00"
    assert local_time(datetime(2026, 11, 22, 9, 0, 5), 330) == "2026-11-22 14:30:05 +05:30"  # naive: UTC
    assert local_time(None) == "-"


def test_day_spans_read_as_an_admin_writes_them():
    d = datetime(2026, 11, 20, 12, tzinfo=UTC)
    assert day_span(d, d + timedelta(days=2)) == "20-22 Nov"
    assert day_span(d, d) == "20 Nov"
    assert day_span(datetime(2026, 11, 30, tzinfo=UTC), datetime(2026, 12, 2, tzinfo=UTC)) == "30 Nov-2 Dec"
    # 23:30 UTC on the 20th is the 21st at +01:00
    assert day_span(datetime(2026, 11, 20, 23, 30, tzinfo=UTC), datetime(2026, 11, 21, 1, tzinfo=UTC), 60) == "21 Nov"


def test_ages_are_rounded_down_to_the_unit_that_reads_well():
    assert age(timedelta(hours=42, minutes=59)) == "42 h"
    assert age(timedelta(days=3, hours=4)) == "3 d 4 h"
    assert age(1500) == "25 min"
    assert age(40) == "40 s"
    assert age(None) == "-"
