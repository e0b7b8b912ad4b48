"""Turn what an IBM i partition printed into typed values: CL messages, Db2 timestamps.

MQ's recovery points are read from the messages' replacement data (mqmessages.py), never from their texts, which come
in the job's language and date format."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import overload
from zoneinfo import ZoneInfo

from mqjournal.snapshot import CommandMessage

_MESSAGE_LINE = re.compile(r"^([A-Z]{3}[0-9A-F]{4}): (.*)$")
_DB2_TIMESTAMP = "%Y-%m-%d-%H.%M.%S.%f"
# The 26 characters IBM i prints for a TIMESTAMP(6), "2026-11-23-02.00.00.000000": the only shape read by position.
_PRINTED_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}\.[0-9]{2}\.[0-9]{2}\.[0-9]{6}")
_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
# IBM-supplied time zone descriptions without DST, named from their offset: Q, N or P (the sign), hhmm, UTCS; the zero
# offset is Q0000UTC (IBM i 7.4 "Initial time zone setting", rzatidefaulttimezone.htm). Q0000GMT has no DST either.
_FIXED_DESCRIPTION = re.compile(r"^Q([NP])(\d{2})(\d{2})UTCS$|^Q0000UTC$|^Q0000GMT$")
# IBM-supplied descriptions with DST, by the Olson entry IBM lists as each one's Alternate name (IBM i time zone table,
# rzatitimezone.htm, as JTOpen's AS400 time zone mapping copies it). Only the descriptions whose DST rules are today's
# rules of that Olson zone: QN0500EST (the pre-2007 US rules) and the like are left out, so they fail rather than
# read an hour wrong for weeks a year.
_DST_DESCRIPTIONS = {
    "Q0000GMT2": "Europe/London",
    "QN0500EST3": "America/New_York",
    "QN0600CST2": "America/Chicago",
    "QN0700MST3": "America/Denver",
    "QN0800PST2": "America/Los_Angeles",
    "QN0900AST2": "America/Anchorage",
    "QP0100CET2": "Europe/Zurich",
    "QP0100CET3": "Europe/Zurich",
    "QP0100CET4": "Europe/Zurich",
    "QP0200EET3": "Europe/Tallinn",
    "QP1000AES2": "Australia/Sydney",
    "QP0930ACS2": "Australia/Adelaide",
    "QP1200NZS3": "Pacific/Auckland",
}


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


class UnknownTimeZone(ValueError):
    """The partition's time zone description cannot be read as rules: a past local time's offset is not known."""


@dataclass(frozen=True)
class PartitionZone:
    """The partition's time zone description (system value QTIMZON): the offset in force at each past local time.

    Db2 for i timestamps are local time without an offset; QUTCOFFSET is only today's offset, so a time from before a
    DST change read with it is an hour off."""

    description: str
    fixed: timezone | None = None
    rules: ZoneInfo | None = None

    def offset_at(self, local: datetime) -> timedelta:
        if self.rules is None:
            assert self.fixed is not None, self.description
            return self.fixed.utcoffset(None)
        return min(self._candidate_offsets(local))

    def offsets_possible(self, local: datetime) -> set[timedelta]:
        """Both readings of a local time in the hour DST's end repeats; one elsewhere."""
        return {self.offset_at(local)} if self.rules is None else set(self._candidate_offsets(local))

    def _candidate_offsets(self, local: datetime) -> list[timedelta]:
        assert self.rules is not None
        naive = local.replace(tzinfo=None)
        found = [self.rules.utcoffset(naive.replace(fold=fold)) for fold in (0, 1)]
        return [offset for offset in found if offset is not None]

    def aware(self, local: datetime) -> datetime:
        # In the hour repeated when DST ends, the smaller offset reads the later UTC moment: the receiver looks
        # younger, so it is kept longer rather than deleted an hour early. Each time gets its own fixed offset, so
        # subtracting two times counts real elapsed time.
        return local.replace(tzinfo=timezone(self.offset_at(local)))


def partition_zone(description: str | None, qutcoffset: str | None, now_local: datetime) -> PartitionZone:
    """QTIMZON's description as rules, checked against QUTCOFFSET at the partition's `now_local`."""
    name = (description or "").strip().upper()
    zone = _zone_of(name)
    today = utc_offset(qutcoffset).utcoffset(None)
    if today not in zone.offsets_possible(now_local):
        raise UnknownTimeZone(
            f"QTIMZON {name} gives {_hhmm(zone.offset_at(now_local))} at {now_local:%Y-%m-%d %H:%M} but QUTCOFFSET "
            f"is {qutcoffset!r}: the description's rules are not the ones mqjournal knows for that name"
        )
    return zone


def _zone_of(name: str) -> PartitionZone:
    fixed = _FIXED_DESCRIPTION.match(name)
    if fixed:
        sign, hours, minutes = fixed.groups()
        delta = timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
        return PartitionZone(name, fixed=timezone(-delta if sign == "N" else delta))
    if name in _DST_DESCRIPTIONS:
        return PartitionZone(name, rules=ZoneInfo(_DST_DESCRIPTIONS[name]))
    raise UnknownTimeZone(
        f"system value QTIMZON names the time zone description {name or '(none: not readable)'}, whose daylight "
        "saving time rules mqjournal does not know, so the age of a receiver from before a DST change is not known"
    )


def _hhmm(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    return f"{'-' if minutes < 0 else '+'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


@overload
def db2_time(text: str, tz: timezone | PartitionZone) -> datetime: ...
@overload
def db2_time(text: None, tz: timezone | PartitionZone) -> None: ...
@overload
def db2_time(text: str | None, tz: timezone | PartitionZone) -> datetime | None: ...


def db2_time(text: str | None, tz: timezone | PartitionZone) -> datetime | None:
    """A Db2 timestamp (the partition's local time, no offset) as an aware datetime: with `tz`'s offset, or with the
    offset the partition's time zone description had in force at that time."""
    if text is None:
        return None
    local = db2_local_time(text)
    return tz.aware(local) if isinstance(tz, PartitionZone) else local.replace(tzinfo=tz)


def db2_local_time(text: str) -> datetime:
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
            )
    return datetime.strptime(text, _DB2_TIMESTAMP)
