"""What a Linux queue manager host answers, read: dspmqinf's stanza, the listing of the log's active directory, and for
`mqjournal doctor` dspmq's list, the session's groups (`id -G -n`) and the log file system's use (`df -P -k`).

Each reader refuses what it cannot read whole (a ReadingError naming the command's answer) rather than guessing:
a listing half read would hide an extent, and a plan made without it could release one MQ still needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

from mqjournal.linuxmq.extents import Extent, InvalidName

__all__ = [
    "FileSystemUsage",
    "ListedFile",
    "ReadingError",
    "data_path",
    "file_system_usage",
    "group_names",
    "listed_extents",
    "queue_manager_names",
    "queue_manager_running",
    "queue_manager_statuses",
]

_KEY = re.compile(r"^\s+([A-Za-z]+)=(.*)$")
_LS_LINE = re.compile(
    r"^(?P<mode>[-dlbcps][-rwxsStT.+@]{9,10})\s+\d+\s+\S+\s+\S+\s+(?P<size>\d+)\s+(?P<epoch>\d+)\s(?P<name>.+)$"
)


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
        try:
            extent = Extent.parse(match.group("name"))
        except InvalidName:
            continue
        moment = datetime.fromtimestamp(int(match.group("epoch")), UTC)
        found.append(ListedFile(extent, int(match.group("size")), moment))
    return sorted(found, key=lambda f: f.extent.name)


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
