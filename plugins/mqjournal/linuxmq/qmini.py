"""A queue manager's qm.ini, read for its Log: stanza: how its log is kept and where (docs/linux-interfaces.md, 1).

qm.ini is stanzas: a line `Name:` at the left margin, then `Key=Value` lines indented under it (MQ writes three
blanks). A key may appear in several stanzas of the same name (Channels:, ...); Log: appears once. Comments start
with `;` or `#`. Only the Log: stanza is read here, and checked: a log the planner would misread is refused, not
guessed at."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from mqjournal.linuxmq.extents import LogManagement

_STANZA = re.compile(r"^([A-Za-z][A-Za-z0-9]*):\s*$")
_KEY = re.compile(r"^\s+([A-Za-z][A-Za-z0-9]*)\s*=\s*(.*?)\s*$")
PAGE_BYTES = 4096
"""LogFilePages counts 4 KiB pages."""


class QmIniError(ValueError):
    """qm.ini has no Log: stanza the planner can read."""


class LogConfig(BaseModel):
    """qm.ini's Log: stanza, as the planner uses it."""

    model_config = ConfigDict(frozen=True)

    log_type: str = Field(description="CIRCULAR (IBM's default), LINEAR or REPLICATED (Native HA)")
    management: LogManagement = Field(
        description="LogManagement; a qm.ini without the line is taken as Manual (assumed: docs/linux-interfaces.md)"
    )
    log_path: str = Field(description="LogPath: the extents are in its active/ directory")
    file_pages: int = Field(gt=0, description="LogFilePages: an extent's size in 4 KiB pages")
    primary_files: int = Field(gt=0, description="LogPrimaryFiles")
    secondary_files: int = Field(ge=0, description="LogSecondaryFiles")

    @property
    def linear(self) -> bool:
        return self.log_type == "LINEAR"

    @property
    def extent_bytes(self) -> int:
        """An extent's nominal size, LogFilePages x 4 KiB."""
        return self.file_pages * PAGE_BYTES

    @property
    def active_directory(self) -> str:
        """The POSIX join of LogPath and `active`. Commands use the host platform's own join instead
        (platforms.HostPlatform.active_log_path: a Windows LogPath is joined with a backslash)."""
        return str(PurePosixPath(self.log_path) / "active")


def log_stanza(text: str) -> dict[str, str]:
    """The Log: stanza's keys and values, as written; QmIniError when there is none, or two."""
    found: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        if stanza := _STANZA.match(line):
            current = {} if stanza.group(1) == "Log" else None
            if current is not None:
                found.append(current)
        elif current is not None and (key := _KEY.match(line)):
            current[key.group(1)] = key.group(2)
    if len(found) != 1:
        raise QmIniError(f"qm.ini has {len(found)} Log: stanzas, not one")
    return found[0]


def log_config(text: str) -> LogConfig:
    """The Log: stanza of qm.ini `text`; QmIniError for a stanza without a LogPath, an unknown LogManagement or a
    number that is not one. IBM's defaults stand in for the keys MQ leaves out (CIRCULAR, 4096 pages, 3 + 2 files)."""
    log = log_stanza(text)
    if not log.get("LogPath"):
        raise QmIniError("the Log: stanza names no LogPath: where the extents are is not known")
    management = log.get("LogManagement", LogManagement.MANUAL.value)
    try:
        return LogConfig(
            log_type=log.get("LogType", "CIRCULAR").upper(),
            management=LogManagement(management),
            log_path=log["LogPath"],
            file_pages=int(log.get("LogFilePages", "4096")),
            primary_files=int(log.get("LogPrimaryFiles", "3")),
            secondary_files=int(log.get("LogSecondaryFiles", "2")),
        )
    except ValueError as exc:
        raise QmIniError(f"the Log: stanza does not read as a log configuration ({exc})") from None
