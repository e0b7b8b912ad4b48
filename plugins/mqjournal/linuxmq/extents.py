"""Log extents of a linear-logging queue manager: their names, their order across the wrap, and which may go.

An extent is `S` + 7 digits + `.LOG` in `<LogPath>active/` (docs/linux-interfaces.md, section 2). The numbers wrap:
"the next number after 9 999 999 is zero", and IBM says to order extents by number only, never by the file system's
modification times (pre-allocation and formatting make those misleading). So "older" is measured backwards from the
extent being written (CURRLOG): the further behind it, the older, modulo 10,000,000.

What may happen to an extent (section 3; the issue's rules, kept strict where IBM allows more):
- the current extent (CURRLOG) is never copied, notified or removed: the queue manager is writing it;
- any other `S` extent may be copied into the backup store (IBM: any extent but the current one may be archived);
- an extent older than both RECLOG (the oldest needed for restart) and MEDIALOG (the oldest needed for media
  recovery) may be released, once a proven copy of it is in the store: by SET LOG ARCHIVED in Archive mode, by
  deleting the file in Manual mode; in Automatic mode MQ reuses or deletes it itself, so nothing is released;
- an `R` extent is one MQ keeps for reuse: never passed to SET LOG ARCHIVED, never touched;
- an extent more than half the number space behind the current one is taken to be ahead of it (formatted before
  use), and kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from mqjournal.errors import InvalidName

EXTENT_NUMBERS = 10_000_000
"""Extent numbers run 0000000-9999999, then wrap to zero."""

EXTENT_NAME_PATTERN = r"([SR])([0-9]{7})\.LOG"
_EXTENT = re.compile(EXTENT_NAME_PATTERN)


class LogManagement(StrEnum):
    """qm.ini's Log: LogManagement (MQ 9.0.2 and later); a queue manager without the line manages its log by hand."""

    MANUAL = "Manual"
    AUTOMATIC = "Automatic"
    ARCHIVE = "Archive"


@dataclass(frozen=True, order=True)
class Extent:
    """One log extent file: `S` (in use or waiting) or `R` (kept by MQ for reuse), and its number."""

    number: int
    reusable: bool = False

    @classmethod
    def parse(cls, name: str) -> Extent:
        """The extent a file name of `active/` names; InvalidName for anything else (amqhlctl.lfh, a stray file)."""
        match = _EXTENT.fullmatch(name) if isinstance(name, str) else None
        if match is None:
            raise InvalidName(
                repr(name),
                "not a log extent name (S or R, seven digits, .LOG)",
                "name extents as the queue manager does (S0000123.LOG); other files of the log path are not extents",
            )
        return cls(int(match.group(2)), reusable=match.group(1) == "R")

    @property
    def name(self) -> str:
        return f"{'R' if self.reusable else 'S'}{self.number:07d}.LOG"

    def behind(self, current: Extent) -> int:
        """How many extents this one is behind `current`, across the wrap (0 for the current one)."""
        return (current.number - self.number) % EXTENT_NUMBERS


def oldest_first(name: str, current: str | None) -> tuple[int, str]:
    """Sort key of extent names, the oldest first, counted back from CURRLOG (`current`) across the wrap; an extent
    more than half the numbers behind is ahead of CURRLOG (as `fate` takes it) and comes after it. Without a CURRLOG
    there is no age: by name. The name breaks ties (an R and an S extent of one number)."""
    if current is None:
        return (0, name)
    behind = Extent.parse(name).behind(Extent.parse(current))
    age = behind if behind < EXTENT_NUMBERS // 2 else behind - EXTENT_NUMBERS
    return (-age, name)


def extent_ranges(names: list[str]) -> list[str]:
    """Extent names in their order as runs of consecutive numbers (across the wrap), for people:
    `S0000000.LOG-S0000047.LOG (48)`, a lone one by its name. R and S extents never share a run."""
    runs: list[list[Extent]] = []
    for extent in map(Extent.parse, names):
        last = runs[-1][-1] if runs else None
        if last is not None and last.reusable == extent.reusable and extent.behind(last) == EXTENT_NUMBERS - 1:
            runs[-1].append(extent)
        else:
            runs.append([extent])
    return [run[0].name if len(run) == 1 else f"{run[0].name}-{run[-1].name} ({len(run)})" for run in runs]


class Fate(StrEnum):
    """What the planner may do with an extent."""

    WRITING = "writing"  # the current extent: untouched
    NEEDED = "needed"  # RECLOG or MEDIALOG or newer: copied, kept
    RELEASABLE = "releasable"  # older than both: copied, then released once the copy is proven
    MQ_REUSES = "mq_reuses"  # an R extent, or any extent in Automatic mode: MQ's to reuse or delete


# Why a status's log points cannot be ordered, as templates: LogPoints fills them in, and the Spark plan
# (mqjournal.sparkplan.linux) builds the same words from columns.
R_EXTENT_POINT = "{point} {extent}: an R extent (kept for reuse) is not a log point"
POINT_AHEAD = (
    "{point} {extent} is ahead of CURRLOG {current} or more than half the numbers behind it: not an answer the "
    "planner can order"
)


@dataclass(frozen=True)
class LogPoints:
    """The extents DISPLAY QMSTATUS names: being written, oldest for restart, oldest for media recovery."""

    current: Extent
    restart: Extent
    media: Extent

    def __post_init__(self) -> None:
        # RECLOG and MEDIALOG are at or behind CURRLOG by definition; an answer that says otherwise is not trusted.
        for what, point in (("CURRLOG", self.current), ("RECLOG", self.restart), ("MEDIALOG", self.media)):
            if point.reusable:
                raise ValueError(R_EXTENT_POINT.format(point=what, extent=point.name))
            if point.behind(self.current) >= EXTENT_NUMBERS // 2:
                raise ValueError(POINT_AHEAD.format(point=what, extent=point.name, current=self.current.name))

    @property
    def oldest_needed(self) -> Extent:
        """RECLOG or MEDIALOG, whichever is further behind the current extent."""
        return max(self.restart, self.media, key=lambda e: e.behind(self.current))


def fate(extent: Extent, points: LogPoints, management: LogManagement) -> Fate:
    """What may happen to `extent` given the log points and the queue manager's LogManagement."""
    if extent.reusable or management is LogManagement.AUTOMATIC:
        return Fate.MQ_REUSES if extent != points.current else Fate.WRITING
    if extent == points.current:
        return Fate.WRITING
    behind = extent.behind(points.current)
    if behind >= EXTENT_NUMBERS // 2:
        # Numbered after the current extent (one formatted ahead of use), not millions of extents old: when in doubt
        # an extent is kept.
        return Fate.NEEDED
    if behind > points.oldest_needed.behind(points.current):
        return Fate.RELEASABLE
    return Fate.NEEDED
