"""The AMQJRNINF user space: MQ's record of the oldest journal receiver it still needs.

The seed "Journal management" gives its 37-character format, JJJJJJJJJJLLLLLLLLLLYYYYMMDDHHMMSSmmm: receiver name,
receiver library, then the time of the oldest journal entry MQ needs. When that receiver has been deleted the name
holds asterisks. Anything else is malformed, and the planner must stop rather than guess.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import RECORD_LENGTH, format_amqjrninf, parse_amqjrninf

#            JJJJJJJJJJLLLLLLLLLLYYYYMMDDHHMMSSmmm
VALID = "AMQA000012QMTEST    20240527140535123"
STARS = "**********QMTEST    20240527140535123"
QMGR = "PAYMENTS.PROD"


def test_record_is_37_characters():
    assert RECORD_LENGTH == len(VALID) == 37


def test_valid_record_names_the_oldest_receiver_and_its_library():
    oldest = parse_amqjrninf(VALID, qmgr=QMGR)
    assert oldest.receiver == "AMQA000012"
    assert oldest.library == "QMTEST"
    assert oldest.on_system


def test_valid_record_gives_the_time_of_the_oldest_entry_needed():
    oldest = parse_amqjrninf(VALID, qmgr=QMGR)
    assert oldest.needed_at == datetime(2024, 5, 27, 14, 5, 35, 123_000)


def test_time_of_the_oldest_entry_is_local_time_without_offset():
    # MQ writes the partition's local time; the caller attaches the host's UTC offset.
    assert parse_amqjrninf(VALID, qmgr=QMGR).needed_at.tzinfo is None


def test_valid_record_keeps_the_raw_value():
    assert parse_amqjrninf(VALID, qmgr=QMGR).raw == VALID


def test_asterisks_mean_the_oldest_receiver_is_no_longer_on_the_system():
    oldest = parse_amqjrninf(STARS, qmgr=QMGR)
    assert oldest.receiver is None
    assert not oldest.on_system


def test_asterisks_name_still_gives_the_time_of_the_oldest_entry_needed():
    oldest = parse_amqjrninf(STARS, qmgr=QMGR)
    assert oldest.needed_at == datetime(2024, 5, 27, 14, 5, 35, 123_000)
    assert oldest.library == "QMTEST"


def test_asterisks_in_both_name_and_library_are_accepted():
    oldest = parse_amqjrninf("*" * 20 + "20240527140535123", qmgr=QMGR)
    assert oldest.receiver is None
    assert oldest.library is None


@pytest.mark.parametrize(
    ("millis", "microsecond"),
    [
        pytest.param("000", 0, id="000"),
        pytest.param("001", 1_000, id="001"),
        pytest.param("999", 999_000, id="999"),
    ],
)
def test_milliseconds_become_microseconds(millis, microsecond):
    raw = "AMQA000012QMTEST    20240527140535" + millis
    assert parse_amqjrninf(raw, qmgr=QMGR).needed_at.microsecond == microsecond


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(" " * 63, id="blanks"),
        pytest.param("\x00" * 63, id="NULs"),
        pytest.param(" \x00" * 10, id="blanks-and-NULs"),
    ],
)
def test_blanks_and_nuls_after_37_characters_are_the_user_space_initial_value(tail):
    oldest = parse_amqjrninf(VALID + tail, qmgr=QMGR)
    assert oldest.receiver == "AMQA000012"
    assert oldest.raw == VALID


def test_format_writes_the_37_characters_mq_writes():
    assert format_amqjrninf("AMQA000012", "QMTEST", datetime(2024, 5, 27, 14, 5, 35, 123_000)) == VALID


def test_format_writes_asterisks_for_a_deleted_receiver():
    assert format_amqjrninf(None, "QMTEST", datetime(2024, 5, 27, 14, 5, 35, 123_000)) == STARS


def test_format_keeps_milliseconds_and_drops_the_rest_of_the_microseconds():
    assert format_amqjrninf("AMQA000012", "QMTEST", datetime(2024, 5, 27, 14, 5, 35, 123_999)) == VALID


@pytest.mark.parametrize(
    ("receiver", "library", "needed_at"),
    [
        pytest.param("AMQA000012", "QMTEST", datetime(2024, 5, 27, 14, 5, 35, 123_000), id="named"),
        pytest.param("AMQB912345", "QMABCDEFGH", datetime(1999, 12, 31, 23, 59, 59, 999_000), id="ten-char-library"),
        pytest.param("AMQA000000", "Q", datetime(2024, 2, 29, 0, 0, 0), id="leap-day-midnight"),
        pytest.param(None, "QMTEST", datetime(2024, 5, 27, 14, 5, 35, 1_000), id="receiver-asterisks"),
        pytest.param(None, None, datetime(2024, 5, 27, 14, 5, 35), id="receiver-and-library-asterisks"),
    ],
)
def test_format_then_parse_round_trips(receiver, library, needed_at):
    raw = format_amqjrninf(receiver, library, needed_at)
    assert len(raw) == RECORD_LENGTH
    oldest = parse_amqjrninf(raw, qmgr=QMGR)
    assert (oldest.receiver, oldest.library, oldest.needed_at) == (receiver, library, needed_at)


# (raw value, what the error says is wrong)
MALFORMED = [
    pytest.param(None, "empty or missing", id="missing-None"),
    pytest.param("", "empty or missing", id="empty"),
    pytest.param(" " * 37, "empty or missing", id="all-blanks"),
    pytest.param("\x00" * 64, "empty or missing", id="all-NULs"),
    pytest.param(VALID[:36], "36 characters long, not 37", id="short-36-characters"),
    pytest.param("amqa000012QMTEST    20240527140535123", "not upper case", id="name-lower-case"),
    pytest.param("AMQA000012qmtest    20240527140535123", "not upper case", id="library-lower-case"),
    pytest.param("AMQA00001!QMTEST    20240527140535123", "not a valid IBM i name", id="name-punctuation"),
    pytest.param("AMQA;00012QMTEST    20240527140535123", "not a valid IBM i name", id="name-semicolon"),
    pytest.param("AMQ A0000 QMTEST    20240527140535123", "not a valid IBM i name", id="name-blank-inside"),
    pytest.param("*****     QMTEST    20240527140535123", "partly asterisks", id="name-partly-asterisks"),
    pytest.param("AMQA00001*QMTEST    20240527140535123", "partly asterisks", id="name-one-asterisk"),
    pytest.param("AMQA000012*****     20240527140535123", "partly asterisks", id="library-partly-asterisks"),
    pytest.param("AMQA000012QMTEST    2024052714053512X", "not 17 digits", id="timestamp-letter"),
    pytest.param("AMQA000012QMTEST    2024-05-27T14:05:", "not 17 digits", id="timestamp-iso-punctuation"),
    pytest.param("AMQA000012QMTEST                     ", "not 17 digits", id="timestamp-blank"),
    pytest.param("AMQA000012QMTEST    20240230140535123", "not a real date and time", id="date-february-30"),
    pytest.param("AMQA000012QMTEST    20241327140535123", "not a real date and time", id="date-month-13"),
    pytest.param("AMQA000012QMTEST    00000527140535123", "not a real date and time", id="date-year-0"),
    pytest.param("AMQA000012QMTEST    20240527250535123", "not a real date and time", id="time-hour-25"),
    pytest.param("AMQA000012QMTEST    20240527146035123", "not a real date and time", id="time-minute-60"),
    pytest.param("AMQA000012QMTEST    20240527140560123", "not a real date and time", id="time-second-60"),
    pytest.param(VALID + "X", "unexpected data after the first 37 characters", id="trailing-garbage"),
    pytest.param(VALID + "   AMQA000013", "unexpected data after the first 37 characters", id="trailing-second-record"),
    pytest.param(" AMQA00001QMTEST    20240527140535123", "not a left-aligned name", id="name-not-left-aligned"),
    pytest.param("          QMTEST    20240527140535123", "not a left-aligned name", id="name-blank"),
    pytest.param("AMQA000012  QMTEST  20240527140535123", "not a left-aligned name", id="library-not-left-aligned"),
    pytest.param(
        "AMQA000012**********20240527140535123",
        "library is asterisks but the receiver is named",
        id="library-asterisks-with-named-receiver",
    ),
]


@pytest.mark.parametrize(("raw", "problem"), MALFORMED)
def test_malformed_amqjrninf_is_rejected_saying_what_is_wrong(raw, problem):
    with pytest.raises(MalformedAmqjrninf) as caught:
        parse_amqjrninf(raw, qmgr=QMGR)
    assert problem in caught.value.problem


@pytest.mark.parametrize(("raw", "problem"), MALFORMED)
def test_malformed_amqjrninf_message_names_the_queue_manager_and_shows_the_raw_value(raw, problem):
    with pytest.raises(MalformedAmqjrninf) as caught:
        parse_amqjrninf(raw, qmgr=QMGR)
    message = str(caught.value)
    assert f"AMQJRNINF of {QMGR}" in message
    assert repr(raw) in message


def test_malformed_amqjrninf_message_says_to_delete_nothing_until_it_parses():
    with pytest.raises(MalformedAmqjrninf) as caught:
        parse_amqjrninf(VALID[:36], qmgr=QMGR)
    assert "delete nothing" in str(caught.value)
    assert "RCDMQMIMG" in str(caught.value)
