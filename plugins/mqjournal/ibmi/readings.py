"""Turn what an IBM i partition printed into typed values: CL messages, Db2 timestamps.

MQ's recovery points are read from the messages' replacement data (mqmessages.py), never from their texts, which come
in the job's language and date format."""

from __future__ import annotations

import contextlib
import re
from datetime import datetime, timedelta, timezone
from typing import overload

from mqjournal.snapshot import CommandMessage

_MESSAGE_LINE = re.compile(r"^([A-Z]{3}[0-9A-F]{4}): (.*)$")
_DB2_TIMESTAMP = "%Y-%m-%d-%H.%M.%S.%f"
# The 26 characters IBM i prints for a TIMESTAMP(6), "2026-11-23-02.00.00.000000": the only shape read by position.
_PRINTED_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{6}")
_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


def cl_messages(stdout: str, stderr: str) -> list[CommandMessage]:
    messages = []
    for line in (stdout + "\n" + stderr).splitlines():
        match = _MESSAGE_LINE.match(line.strip())
        if match:
            messages.append(CommandMessage(id=match.group(1), text=match.group(2).strip()))
    return messages


def utc_offset(text: str | None) -> timezone:
    """QUTCOFFSET ('+0100') as a timezone; UTC when the partition did not say."""
    match = _OFFSET.match((text or "+0000").strip())
    if not match:
        raise ValueError(f"QUTCOFFSET {text!r} is not +HHMM")
    sign, hours, minutes = match.groups()
    delta = timedelta(hours=int(hours), minutes=int(minutes))
    return timezone(-delta if sign == "-" else delta)


@overload
def db2_time(text: str, tz: timezone) -> datetime: ...
@overload
def db2_time(text: None, tz: timezone) -> None: ...
@overload
def db2_time(text: str | None, tz: timezone) -> datetime | None: ...


def db2_time(text: str | None, tz: timezone) -> datetime | None:
    """A Db2 timestamp (the partition's local time, no offset) as an aware datetime."""
    if text is None:
        return None
    if _PRINTED_TIMESTAMP.fullmatch(text):
        # Read by position: strptime, which builds a regular expression's match and reads the locale each call, was
        # half of read_state's CPU (a receivers table has four timestamps a row). Out-of-range fields fall through to
        # strptime, so what is refused, and how, stays its.
        with contextlib.suppress(ValueError):
            return datetime(
                int(text[0:4]),
                int(text[5:7]),
                int(text[8:10]),
                int(text[11:13]),
                int(text[14:16]),
                int(text[17:19]),
                int(text[20:26]),
                tzinfo=tz,
            )
    return datetime.strptime(text, _DB2_TIMESTAMP).replace(tzinfo=tz)
