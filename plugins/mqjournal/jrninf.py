"""The AMQJRNINF user space: MQ's record of the oldest journal receiver it still needs.

MQ writes it whenever it logs AMQ7460/AMQ7462 (at start, at each receiver change, on RCDMQMIMG) as 37 characters,
``JJJJJJJJJJLLLLLLLLLLYYYYMMDDHHMMSSmmm``: receiver (10), library (10), and the local time of the oldest journal
entry still needed. Once that receiver has been deleted, the name field holds asterisks; the time still counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from mqjournal.errors import InvalidName, MalformedAmqjrninf
from mqjournal.names import object_name

# AMQJRNINF's time is local, written in the offset in force then; a snapshot carries today's offset only. The most a
# daylight saving change moves a local time: one hour, in every zone IBM i's time zone descriptions map to. With
# asterisks (only the time says which receiver holds the entry), the planners look the receiver up this much earlier,
# so that it is never one too new.
DST_MARGIN = timedelta(hours=1)

RECORD_LENGTH = 37
_STARS = "*" * 10
_TIMESTAMP = re.compile(r"[0-9]{17}")


@dataclass(frozen=True)
class OldestNeeded:
    """What AMQJRNINF says. `receiver` is None when the name field is asterisks (the receiver is gone)."""

    receiver: str | None
    library: str | None
    needed_at: datetime  # naive: the partition's local time, as MQ wrote it
    raw: str

    @property
    def on_system(self) -> bool:
        return self.receiver is not None


def format_amqjrninf(receiver: str | None, library: str | None, needed_at: datetime) -> str:
    """The 37 characters MQ writes; None for receiver/library writes the asterisks of a deleted receiver."""
    name = _STARS if receiver is None else object_name(receiver, what="receiver").ljust(10)
    lib = _STARS if library is None else object_name(library, what="library").ljust(10)
    t = needed_at
    stamp = f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}{t.minute:02d}{t.second:02d}{t.microsecond // 1000:03d}"
    return name + lib + stamp


def parse_amqjrninf(raw: str | None, *, qmgr: str) -> OldestNeeded:
    """Parse the AMQJRNINF value read for queue manager `qmgr`.

    The user space may be longer than the record: anything after 37 characters must be blanks or NULs (its
    initial value). Every other deviation raises MalformedAmqjrninf naming the queue manager and the raw value,
    because a planner that guessed here could delete a receiver MQ needs.
    """

    def malformed(problem: str) -> MalformedAmqjrninf:
        return MalformedAmqjrninf(
            f"AMQJRNINF of {qmgr}",
            f"{problem}; raw value {raw!r}",
            "run RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) DSPJRNDTA(*YES) to rewrite it and collect again; "
            "delete nothing for this queue manager until it parses",
        )

    if raw is None or raw.strip(" \x00") == "":
        raise malformed("the user space is empty or missing")
    if len(raw) < RECORD_LENGTH:
        raise malformed(f"it is {len(raw)} characters long, not {RECORD_LENGTH}")
    if raw[RECORD_LENGTH:].strip(" \x00"):
        raise malformed(f"unexpected data after the first {RECORD_LENGTH} characters")

    name_field, library_field, stamp = raw[:10], raw[10:20], raw[20:RECORD_LENGTH]
    receiver = _name_or_stars(name_field, "receiver", malformed)
    library = _name_or_stars(library_field, "library", malformed)
    if library is None and receiver is not None:
        raise malformed("the library is asterisks but the receiver is named")

    if not _TIMESTAMP.fullmatch(stamp):
        raise malformed(f"the timestamp {stamp!r} is not 17 digits (YYYYMMDDHHMMSSmmm)")
    try:
        needed_at = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(microsecond=int(stamp[14:]) * 1000)
    except ValueError:
        raise malformed(f"the timestamp {stamp!r} is not a real date and time") from None
    return OldestNeeded(receiver=receiver, library=library, needed_at=needed_at, raw=raw[:RECORD_LENGTH])


def _name_or_stars(field: str, what: str, malformed) -> str | None:
    if field == _STARS:
        return None
    if "*" in field:
        raise malformed(f"the {what} field {field!r} is partly asterisks")
    if not field.strip() or field[0] == " ":
        raise malformed(f"the {what} field {field!r} is not a left-aligned name")
    try:
        name = object_name(field.rstrip(), what=what)
    except InvalidName:
        raise malformed(f"the {what} field {field!r} is not a valid IBM i name") from None
    if name != field.rstrip():
        raise malformed(f"the {what} field {field!r} is not upper case")
    return name
