"""What a Linux or AIX queue manager host answers, read: dspmqinf's stanza, the listing of the log's active directory
(GNU's with epoch seconds, or POSIX's), a digest program's SHA-256 of an extent, and for `mqjournal doctor` dspmq's
list, the session's groups (`id -G -n`) and the log file system's use (`df -P -k`).

Each reader refuses what it cannot read whole (a ReadingError naming the command's answer) rather than guessing:
a listing half read would hide an extent, and a plan made without it could release one MQ still needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath

from mqjournal.linuxmq.extents import Extent, InvalidName

__all__ = [
    "FileSystemUsage",
    "ListedFile",
    "ReadingError",
    "data_path",
    "extent_named",
    "extent_sha256",
    "file_system_usage",
    "group_names",
    "listed_extents",
    "listed_extents_posix",
    "queue_manager_names",
    "queue_manager_running",
    "queue_manager_statuses",
]

_KEY = re.compile(r"^\s+([A-Za-z]+)=(.*)$")
_LS_LINE = re.compile(
    r"^(?P<mode>[-dlbcps][-rwxsStT.+@]{9,10})\s+\d+\s+\S+\s+\S+\s+(?P<size>\d+)\s+(?P<epoch>\d+)\s(?P<name>.+)$"
)

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# POSIX's `ls -l` line in the POSIX locale: "%s %u %s %s %u %s %s" (mode with its optional alternate access method
# flag, links, owner, group, size, date and time, name), the date `%b %e %H:%M` within the last six months, else
# `%b %e  %Y` (docs section 12, verified: POSIX ls STDOUT). AIX's, as captured, pads the day with a zero and writes the
# blanks after the year (`Jun 10 2020  NAME`): any run of blanks is a separator, so a name never starts with one.
_POSIX_LS_LINE = re.compile(
    r"^(?P<mode>[-dlbcpsL][-rwxsStT]{9}\S?)\s+\d+\s+\S+\s+\S+\s+(?P<size>\d+)\s+"
    rf"(?P<month>{'|'.join(_MONTHS)})\s+(?P<day>\d{{1,2}})\s+(?:(?P<hour>\d{{2}}):(?P<minute>\d{{2}})|(?P<year>\d{{4}}))"
    r"\s+(?P<name>\S.*)$"
)
_CLOCK_SLACK = timedelta(days=1)
"""How far ahead of the reader's clock a dated line may be and still be this year's: the host's clock and time zone
are not the reader's (its times are local, read here as UTC)."""
_DIGEST_LINE = re.compile(r"^\\?([0-9a-f]{64}) [ *](.+)$")
"""`<hex>  <path>` (sha256sum) or `<hex> *<path>` (openssl dgst -r, sha256sum in binary mode): coreutils' format."""

_DSPMQ_LINE = re.compile(r"^QMNAME\((?P<name>[^)]*)\)\s+STATUS\((?P<status>[^)]*)\)")
_DF_LINE = re.compile(
    r"^(?P<device>.+?)\s+(?P<blocks>\d+)\s+(?P<used>\d+)\s+(?P<available>\d+)\s+(?:\d+|-)%\s+(?P<mounted_on>/.*)$"
)
_DF_HEADER = ["Filesystem", "1024-blocks", "Used", "Available", "Capacity", "Mounted", "on"]


class ReadingError(ValueError):
    """A host's answer that does not read as the command's answer."""


def data_path(stanza: str) -> str:
    """The queue manager's data directory from `dspmqinf -o stanza QM`: DataPath when given, else
    Prefix/qmgrs/Directory (IBM's layout, docs/linux-interfaces.md section 1)."""
    keys: dict[str, str] = {}
    for line in stanza.splitlines():
        if match := _KEY.match(line):
            keys[match.group(1)] = match.group(2).strip()
    if keys.get("DataPath"):
        return keys["DataPath"]
    if keys.get("Prefix") and keys.get("Directory"):
        return str(PurePosixPath(keys["Prefix"]) / "qmgrs" / keys["Directory"])
    raise ReadingError(f"dspmqinf gave neither DataPath nor Prefix and Directory: {stanza[:200]!r}")


@dataclass(frozen=True)
class ListedFile:
    extent: Extent
    size_bytes: int
    modified_at: datetime


def listed_extents(listing: str) -> list[ListedFile]:
    """The extents of `ls -l --time-style=+%s <active>`, by name; other files (none are expected there) are left
    out, since only an `S`/`R` name is an extent. A line that is not a file's line is refused."""
    found: list[ListedFile] = []
    for line in listing.splitlines():
        if not line.strip() or line.startswith("total "):
            continue
        match = _LS_LINE.match(line)
        if match is None:
            raise ReadingError(f"not a line of ls -l --time-style=+%s: {line!r}")
        if match.group("mode")[0] != "-":
            continue  # a directory or link is no extent
        if (extent := extent_named(match.group("name"))) is None:
            continue
        moment = datetime.fromtimestamp(int(match.group("epoch")), UTC)
        found.append(ListedFile(extent, int(match.group("size")), moment))
    return sorted(found, key=lambda f: f.extent.name)


def extent_named(name: str) -> Extent | None:
    """The extent a listed file is, by its name; None for a file that is no extent (only an S or R name is), which
    every listing's reader leaves out."""
    try:
        return Extent.parse(name)
    except InvalidName:
        return None


def listed_extents_posix(listing: str, now: datetime) -> list[ListedFile]:
    """The extents of POSIX's `ls -l <active>` (AIX's ls, which has no option printing seconds), by name; other files
    are left out as in `listed_extents`, a line that is not a file's line is refused. A date of the last six months has
    no year and a minute's precision: its year is the one that puts it at most a day after `now`; an older one has a
    year and no time. The host's local times are read as UTC: shown to people only, never planned by (q018510:
    "Use only the log file number")."""
    found: list[ListedFile] = []
    for line in listing.splitlines():
        if not line.strip() or line.startswith("total "):
            continue
        match = _POSIX_LS_LINE.match(line)
        if match is None:
            raise ReadingError(f"not a line of POSIX ls -l: {line!r}")
        if match.group("mode")[0] != "-":
            continue
        if (extent := extent_named(match.group("name"))) is None:
            continue
        try:
            moment = _listed_moment(match, now)
        except ValueError as exc:
            raise ReadingError(f"not a date of POSIX ls -l ({exc}): {line!r}") from None
        found.append(ListedFile(extent, int(match.group("size")), moment))
    return sorted(found, key=lambda f: f.extent.name)


def _listed_moment(match: re.Match[str], now: datetime) -> datetime:
    month, day = _MONTHS.index(match.group("month")) + 1, int(match.group("day"))
    if match.group("year"):
        return datetime(int(match.group("year")), month, day, tzinfo=UTC)
    hour, minute = int(match.group("hour")), int(match.group("minute"))
    year = now.year
    if datetime(year, month, day, tzinfo=UTC) > now + _CLOCK_SLACK:
        year -= 1  # "Dec 30 23:59" read on the 2nd of January
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def extent_sha256(answer: str, path: str) -> str | None:
    """The SHA-256 a digest program printed for `path` (its one line, naming that path), or None for any other answer:
    a digest of another file, or of nothing, proves nothing of this one."""
    lines = [line for line in answer.splitlines() if line.strip()]
    match = _DIGEST_LINE.match(lines[0].strip()) if len(lines) == 1 else None
    return match.group(1) if match is not None and match.group(2) == path else None


def queue_manager_statuses(answer: str) -> dict[str, str]:
    """{queue manager: its STATUS} from dspmq's lines (`QMNAME(QM1)` then `STATUS(Running)`, captured: section 4);
    the indented lines under one (-x's instances) are passed over, anything else is refused."""
    found: dict[str, str] = {}
    for line in answer.splitlines():
        if not line.strip() or line.startswith(" "):
            continue
        match = _DSPMQ_LINE.match(line)
        if match is None:
            raise ReadingError(f"not a line of dspmq: {line!r}")
        found[match.group("name")] = match.group("status").strip()
    return found


def group_names(answer: str) -> list[str]:
    """The group names `id -G -n` prints on its one line; ReadingError for an answer of another shape."""
    lines = [line for line in answer.splitlines() if line.strip()]
    if len(lines) != 1:
        raise ReadingError(f"id -G -n gave {len(lines)} lines, not one: {answer[:200]!r}")
    return lines[0].split()


@dataclass(frozen=True)
class FileSystemUsage:
    """One file system as `df -P -k` reports it, in bytes."""

    device: str
    mounted_on: str
    size_bytes: int
    used_bytes: int
    available_bytes: int

    @property
    def used_fraction(self) -> float:
        """Used of what a user may fill (used + available: df's Capacity), as df counts it: the root-reserved blocks
        are room MQ, which never runs as root, cannot use."""
        room = self.used_bytes + self.available_bytes
        return self.used_bytes / room if room else 1.0


def file_system_usage(answer: str) -> FileSystemUsage:
    """`df -P -k PATH`'s answer: POSIX's header, then one line `device blocks used available capacity% mount`
    (section 11); ReadingError for anything else."""
    lines = [line for line in answer.splitlines() if line.strip()]
    if len(lines) != 2 or lines[0].split() != _DF_HEADER:
        raise ReadingError(f"not the answer of df -P -k for one path: {answer[:300]!r}")
    match = _DF_LINE.match(lines[1].strip())
    if match is None:
        raise ReadingError(f"not a line of df -P -k: {lines[1]!r}")
    blocks, used, available = (int(match.group(key)) * 1024 for key in ("blocks", "used", "available"))
    return FileSystemUsage(match.group("device"), match.group("mounted_on"), blocks, used, available)


def queue_manager_names(answer: str) -> list[str]:
    """The queue managers dspmq lists, in its order."""
    return list(queue_manager_statuses(answer))


def queue_manager_running(answer: str, qmgr: str) -> bool:
    """Whether `dspmq -m QM` shows the queue manager `Running` (it shows `Ended normally`, `Ended immediately`,
    `Ended unexpectedly`, `Starting`, ... otherwise: docs/linux-interfaces.md section 4). ReadingError when the answer
    has no line of that queue manager."""
    statuses = queue_manager_statuses(answer)
    if qmgr not in statuses:
        raise ReadingError(f"dspmq gave no status of {qmgr}: {answer[:200]!r}")
    return statuses[qmgr] == "Running"
