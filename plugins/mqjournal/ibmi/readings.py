"""Turn what an IBM i partition printed into typed values: CL messages, Db2 timestamps.

MQ's recovery points are read from the messages' replacement data (mqmessages.py), never from their texts, which come
in the job's language and date format."""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import overload
from zoneinfo import ZoneInfo

from mqjournal.ibmi.db2out import Row, value
from mqjournal.snapshot import CommandMessage

log = logging.getLogger(__name__)

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
    DST change read with it is an hour off. The same holds for a time sent to the partition (a MESSAGE_TIMESTAMP
    window): it is written in the offset in force at that time."""

    description: str
    fixed: timezone | None = None
    rules: ZoneInfo | None = None
    # The rules are the Olson zone the fleet file names for the host (its `time_zone_rules`), not mqjournal's table.
    from_fleet: bool = False

    @property
    def olson(self) -> str | None:
        """The Olson zone whose rules this description follows; None for a fixed offset."""
        return self.rules.key if self.rules is not None else None

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

    def offset_on(self, moment: datetime) -> timedelta:
        """The offset in force at an instant (an aware datetime)."""
        if self.rules is None:
            assert self.fixed is not None, self.description
            return self.fixed.utcoffset(None)
        offset = moment.astimezone(self.rules).utcoffset()
        assert offset is not None, self.description
        return offset

    def at(self, moment: datetime) -> datetime:
        """An instant in the offset the partition had then, as a fixed offset (so arithmetic counts real time)."""
        return moment.astimezone(timezone(self.offset_on(moment)))

    def local(self, moment: datetime) -> datetime:
        """What the partition's clock showed at an instant: its local time without offset, as Db2 for i writes it."""
        return self.at(moment).replace(tzinfo=None)

    def earliest_local(self, since: datetime, until: datetime) -> datetime:
        """The earliest local time the partition's clock showed from `since` to `until`: where a window of local
        times (MESSAGE_TIMESTAMP >= it) starts so that it holds every moment from `since` on.

        That is `since` in the offset then in force, unless the offset fell in between (DST ended): the hour it
        repeats shows local times before `since`'s, so the window starts that much earlier and reads up to an hour
        more rather than lose what was written in the repeated hour."""
        lowest = self.offset_on(since)
        if self.rules is not None:
            moment = since
            while moment < until:  # offsets change months apart: hourly samples see every one
                moment = min(moment + timedelta(hours=1), until)
                lowest = min(lowest, self.offset_on(moment))
        return since.astimezone(timezone(lowest)).replace(tzinfo=None)

    def again(self, clock: Row, where: str) -> PartitionZone:
        """The zone of a later clock row of the same host (QTIMZON may have changed since this one was read).

        A zone read with QUTCOFFSET (rules unknown: the first read said so in the log) stays as it is while
        QTIMZON and QUTCOFFSET do, so a host's warning is not repeated for every read."""
        description = str(clock.get("TIME_ZONE") or "").strip().upper()
        if self.rules is None and self.description == description and self.fixed == utc_offset(clock.get("UTC_OFFSET")):
            return self
        return clock_zone(clock, where, rules=self.olson if self.from_fleet else None)


def partition_zone(
    description: str | None, qutcoffset: str | None, now_local: datetime, *, rules: str | None = None
) -> PartitionZone:
    """QTIMZON's description as rules, checked against QUTCOFFSET at the partition's `now_local`.

    `rules`: the Olson zone the fleet file names for the host; it is read instead of mqjournal's table, for a site
    whose description is its own."""
    name = (description or "").strip().upper()
    zone = PartitionZone(name, rules=ZoneInfo(rules), from_fleet=True) if rules else _zone_of(name)
    today = utc_offset(qutcoffset).utcoffset(None)
    if today not in zone.offsets_possible(now_local):
        named = f"the fleet file's time_zone_rules {rules}" if rules else f"QTIMZON {name}"
        raise UnknownTimeZone(
            f"{named} gives {_hhmm(zone.offset_at(now_local))} at {now_local:%Y-%m-%d %H:%M} but QUTCOFFSET "
            f"is {qutcoffset!r}: the description's rules are not the ones mqjournal knows for that name"
        )
    return zone


def clock_zone(clock: Row, where: str, *, rules: str | None = None) -> PartitionZone:
    """The zone of a host clock row (commands.host_clock: NOW, UTC_OFFSET, TIME_ZONE).

    A description whose rules mqjournal does not know (a site's own, or an IBM one outside its table such as
    QP0900JST) is read with today's QUTCOFFSET and said in the log: stopping would stop the fleet's maintenance
    while the journal fills its ASP, and no safety rule rests on an hour (a receiver is needed by the names in
    AMQJRNINF and AMQ7460/AMQ7462, saved by a save file's object list)."""
    offset, description = clock.get("UTC_OFFSET"), clock.get("TIME_ZONE")
    try:
        return partition_zone(description, offset, db2_local_time(value(clock, "NOW")), rules=rules)
    except UnknownTimeZone as e:
        log.warning(
            "%s: %s; its times are read with today's QUTCOFFSET %s, so a time from before a DST change may be an "
            "hour off. Check QTIMZON (WRKSYSVAL QTIMZON, WRKTIMZON), or name the Olson zone its description follows "
            "as the host's time_zone_rules in the fleet file; docs/ibmi-interfaces.md lists the descriptions read "
            "with their rules",
            where,
            e,
            offset,
        )
        return PartitionZone((description or "").strip().upper(), fixed=utc_offset(offset))


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
