"""What a Linux queue manager host answers, read: dspmqinf's stanza and the listing of the log's active directory.

Each reader refuses what it cannot read whole (a ReadingError naming the command's answer) rather than guessing:
a listing half read would hide an extent, and a plan made without it could release one MQ still needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath

from mqjournal.linuxmq.extents import Extent, InvalidName

__all__ = ["ListedFile", "ReadingError", "data_path", "listed_extents", "queue_manager_names", "queue_manager_running"]

_KEY = re.compile(r"^\s+([A-Za-z]+)=(.*)$")
_DSPMQ = re.compile(r"^QMNAME\((?P<name>[^)]*)\)\s+STATUS\((?P<status>[^)]*)\)")
_LS_LINE = re.compile(
    r"^(?P<mode>[-dlbcps][-rwxsStT.+@]{9,10})\s+\d+\s+\S+\s+\S+\s+(?P<size>\d+)\s+(?P<epoch>\d+)\s(?P<name>.+)$"
)


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


def queue_manager_names(answer: str) -> list[str]:
    """The queue managers dspmq lists, in its order."""
    return [match.group("name") for line in answer.splitlines() if (match := _DSPMQ.match(line))]


def queue_manager_running(answer: str, qmgr: str) -> bool:
    """Whether `dspmq -m QM` shows the queue manager `Running` (it shows `Ended normally`, `Ended immediately`,
    `Ended unexpectedly`, `Starting`, ... otherwise: docs/linux-interfaces.md section 4). ReadingError when the answer
    has no line of that queue manager."""
    for line in answer.splitlines():
        match = _DSPMQ.match(line)
        if match is not None and match.group("name") == qmgr:
            return match.group("status") == "Running"
    raise ReadingError(f"dspmq gave no status of {qmgr}: {answer[:200]!r}")
