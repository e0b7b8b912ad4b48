"""Turn what an IBM i partition printed into typed values: CL messages, Db2 timestamps, MQ recovery-point texts."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from mqjournal.snapshot import CommandMessage

_MESSAGE_LINE = re.compile(r"^([A-Z]{3}[0-9A-F]{4}): (.*)$")
_DB2_TIMESTAMP = "%Y-%m-%d-%H.%M.%S.%f"
_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
# MQ's AMQ7460/AMQ7462 wording is not published for IBM i; read defensively: a receiver name or asterisks, and a time.
_POINT_RECEIVER = re.compile(r"\b(AMQ[A-Z][0-9]{6}|\*{10})")
_POINT_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[ -](\d{2})[:.](\d{2})[:.](\d{2})")


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


def db2_time(text: str | None, tz: timezone) -> datetime | None:
    """A Db2 timestamp (the partition's local time, no offset) as an aware datetime."""
    if text is None:
        return None
    return datetime.strptime(text, _DB2_TIMESTAMP).replace(tzinfo=tz)


def recovery_point(text: str, tz: timezone) -> tuple[str | None, datetime] | None:
    """(receiver or None for asterisks, time) from an AMQ7460/AMQ7462 text; None when it cannot be read."""
    receiver = _POINT_RECEIVER.search(text)
    moment = _POINT_TIME.search(text)
    if not receiver or not moment:
        return None
    day, hour, minute, second = moment.groups()
    at = datetime.strptime(f"{day} {hour}:{minute}:{second}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=tz)
    name = receiver.group(1)
    return (None if name.startswith("*") else name), at
