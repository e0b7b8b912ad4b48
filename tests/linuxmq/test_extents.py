"""Which log extents of a linear-logging queue manager may be released: by number, across the wrap, never the
current one nor one that restart or media recovery still needs (issue #32; docs/linux-interfaces.md)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, Fate, LogManagement, LogPoints, fate

S = Extent


def points(current: int, restart: int, media: int) -> LogPoints:
    return LogPoints(S(current % EXTENT_NUMBERS), S(restart % EXTENT_NUMBERS), S(media % EXTENT_NUMBERS))


def test_extent_names_parse_and_print_as_the_queue_manager_writes_them():
    assert Extent.parse("S0000123.LOG") == S(123) and S(123).name == "S0000123.LOG"
    assert Extent.parse("R0000009.LOG") == Extent(9, reusable=True)
    for other in ("amqhlctl.lfh", "S123.LOG", "S0000123.log", "S0000123.LOG\n", "../S0000123.LOG", "X0000001.LOG"):
        with pytest.raises(InvalidName):
            Extent.parse(other)


def test_only_extents_behind_both_restart_and_media_recovery_are_releasable():
    p = points(57, 56, 40)  # CURRLOG S0000057, RECLOG S0000056, MEDIALOG S0000040
    fates = {n: fate(S(n), p, LogManagement.ARCHIVE) for n in (39, 40, 41, 56, 57)}
    assert fates == {
        39: Fate.RELEASABLE,
        40: Fate.NEEDED,
        41: Fate.NEEDED,
        56: Fate.NEEDED,
        57: Fate.WRITING,
    }


def test_the_wrap_after_9999999_is_followed_by_number_not_by_size():
    p = points(3, 1, 9_999_998)  # media recovery needs extents from before the wrap
    assert fate(S(9_999_997), p, LogManagement.MANUAL) is Fate.RELEASABLE
    assert fate(S(9_999_999), p, LogManagement.MANUAL) is Fate.NEEDED
    assert fate(S(0), p, LogManagement.MANUAL) is Fate.NEEDED


def test_reusable_extents_and_automatic_mode_are_left_to_the_queue_manager():
    p = points(57, 56, 40)
    assert fate(Extent(9, reusable=True), p, LogManagement.ARCHIVE) is Fate.MQ_REUSES
    assert fate(S(1), p, LogManagement.AUTOMATIC) is Fate.MQ_REUSES
    assert fate(S(57), p, LogManagement.AUTOMATIC) is Fate.WRITING


def test_an_extent_numbered_after_the_current_one_is_kept():
    assert fate(S(58), points(57, 56, 40), LogManagement.MANUAL) is Fate.NEEDED


def test_log_points_ahead_of_the_current_extent_are_refused():
    with pytest.raises(ValueError, match=r"RECLOG S0000058\.LOG is ahead of CURRLOG"):
        points(57, 58, 40)


@given(
    current=st.integers(0, EXTENT_NUMBERS - 1),
    restart_behind=st.integers(0, 1000),
    media_behind=st.integers(0, 1000),
    behind=st.integers(0, EXTENT_NUMBERS - 1),
    management=st.sampled_from([LogManagement.MANUAL, LogManagement.ARCHIVE]),
)
def test_no_extent_restart_or_media_recovery_needs_is_ever_releasable(
    current, restart_behind, media_behind, behind, management
):
    p = points(current, current - restart_behind, current - media_behind)
    extent = S((current - behind) % EXTENT_NUMBERS)
    released = fate(extent, p, management) is Fate.RELEASABLE
    needed = behind <= max(restart_behind, media_behind) or behind >= EXTENT_NUMBERS // 2
    assert not (released and needed)
    assert released or needed


def test_extent_lists_read_as_runs_of_consecutive_numbers_across_the_wrap() -> None:
    from mqjournal.linuxmq.extents import extent_ranges

    names = ["S9999998.LOG", "S9999999.LOG", "S0000000.LOG", "S0000002.LOG", "R0000003.LOG", "S0000004.LOG"]
    assert extent_ranges(names) == [
        "S9999998.LOG-S0000000.LOG (3)",
        "S0000002.LOG",
        "R0000003.LOG",
        "S0000004.LOG",
    ]
    assert extent_ranges([]) == []
