"""The `mqjournal.linux-snapshot/v1` contract: one record per Linux queue manager per collection (#32).

The IBM i snapshot's sibling (mqjournal.snapshot): same rules, its own schema. The model is the one definition; the
JSON Schema in `schemas/` is generated from it (`mqjournal schema --contract linux-snapshot --write`) and a test
keeps the two equal. Every key is always written. Extents are named as MQ names them and planned by number only:
the modification times are recorded for people, never read by the plan (IBM, q018510: "Use only the log file
number"). Names are checked on read, so a record that would put an unchecked name into a command is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from mqjournal.datafolder import DataPath, modified, write_text_atomically
from mqjournal.linuxmq.extents import EXTENT_NAME_PATTERN, Extent, LogManagement, LogPoints
from mqjournal.names import MqObjectName, QueueManagerName
from mqjournal.snapshot import contract_schema, published_schema, schema_text

log = logging.getLogger(__name__)

SCHEMA_ID = "mqjournal.linux-snapshot/v1"
SCHEMA_FILE = "linux-snapshot-v1.schema.json"


def _extent_name(value: str) -> str:
    return Extent.parse(value).name


ExtentName = Annotated[str, Field(pattern=f"^{EXTENT_NAME_PATTERN}$"), AfterValidator(_extent_name)]


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, serialize_by_alias=True, json_schema_serialization_defaults_required=True
    )


class DamagedObject(_Model):
    """An object rcdmqimg could not image: AMQ7472 "Object <name>, type <type> damaged." (the message's text as
    IBM's and the IBM i side's catalogue give it, mqjournal.mqmessages)."""

    name: MqObjectName
    type: str = Field(pattern=r"^[A-Za-z]{1,16}$", description="the type as AMQ7472 writes it")


class MediaImages(_Model):
    """The media images this collection asked for (rcdmqimg -m QM -t all *), which move MEDIALOG forward."""

    forced: bool = Field(description="rcdmqimg was run by this collection")
    ok: bool = Field(description="it ended with status 0; false when it failed or was not run")
    at: AwareDatetime | None = None
    messages: list[str] = Field(default_factory=list, description="the AMQ message IDs it printed, in order")
    damaged: list[DamagedObject] = Field(
        default_factory=list,
        description="the objects it reported damaged (AMQ7472): each holds MEDIALOG until rcrmqobj re-creates it",
    )


PlatformName = Literal["linux", "aix", "windows"]
"""The platforms of the queue manager hosts that are not IBM i, as the fleet file names them (linuxmq/platforms.py)."""


class LogExtent(_Model):
    name: ExtentName
    size_bytes: NonNegativeInt
    modified_at: AwareDatetime | None = Field(None, description="for people only: never planned by")


class LinuxSnapshot(_Model):
    """The state of one queue manager's linear log on a Linux, AIX or Windows host at one collection."""

    schema_: Literal["mqjournal.linux-snapshot/v1"] = Field("mqjournal.linux-snapshot/v1", alias="schema")
    run_id: str = Field(min_length=1)
    collected_at: AwareDatetime
    host: str = Field(min_length=1, description="the host's name in the fleet")
    platform: PlatformName = Field(
        "linux",
        description="the host's platform, as its fleet file entry names it (a snapshot written before AIX and Windows "
        "hosts says linux); the log's rules and points are the same on each",
    )
    qmgr: QueueManagerName
    log_type: Literal["LINEAR", "CIRCULAR", "REPLICATED"] = Field(description="qm.ini's LogType")
    log_management: LogManagement = Field(description="qm.ini's LogManagement (Manual when the line is absent)")
    log_path: str = Field(min_length=1, description="the extents' directory (DISPLAY QMSTATUS LOGPATH)")
    extent_bytes: NonNegativeInt = Field(description="LogFilePages x 4 KiB: an extent's nominal size")
    current_extent: ExtentName | None = Field(description="CURRLOG: the extent being written")
    restart_extent: ExtentName | None = Field(description="RECLOG: the oldest extent restart recovery needs")
    media_extent: ExtentName | None = Field(description="MEDIALOG: the oldest extent media recovery needs")
    archive_extent: ExtentName | None = Field(
        description="ARCHLOG: the oldest extent waiting for archive notification (Archive mode), else null"
    )
    media_images: MediaImages
    extents: list[LogExtent] = Field(description="the extent files in the log path, by name")

    def points(self) -> LogPoints | None:
        """The three log points, or None for a log without them (circular, or status unreadable)."""
        if self.current_extent is None or self.restart_extent is None or self.media_extent is None:
            return None
        return LogPoints(
            current=Extent.parse(self.current_extent),
            restart=Extent.parse(self.restart_extent),
            media=Extent.parse(self.media_extent),
        )


def json_schema() -> dict:
    return contract_schema(LinuxSnapshot, SCHEMA_ID)


def json_schema_text() -> str:
    return schema_text(json_schema())


def published_schema_text() -> str:
    return published_schema(SCHEMA_FILE)


def write_linux_snapshots(path: DataPath, snapshots: Iterable[LinuxSnapshot]) -> int:
    """JSON Lines, written atomically (the whole collection or none of it), as the IBM i snapshots are."""
    lines = [snapshot.model_dump_json() + "\n" for snapshot in snapshots]
    write_text_atomically(path, "".join(lines))
    return len(lines)


def read_linux_snapshots(path: DataPath) -> Iterator[LinuxSnapshot]:
    """The records of a JSON Lines file; a line that is not a whole v1 record stops the read, naming the file, the
    line and the problem: nothing is planned from half a record."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield LinuxSnapshot.model_validate_json(line)
            except ValidationError as exc:
                raise ValueError(f"{path}:{number}: not a {SCHEMA_ID} record: {exc}") from exc


def linux_snapshots_of(root: DataPath, host: str, qmgr: str, *, newest_runs: int = 30) -> list[LinuxSnapshot]:
    """One queue manager's snapshots from the newest `newest_runs` collections under `root` (the data folder's
    linux-snapshots/: run_id=<id>/<host>.jsonl, one record per queue manager of the host). A file that cannot be read
    is left out, with a warning: an old record must not stop a recovery."""
    files = sorted(root.glob(f"run_id=*/{host}.jsonl"), key=modified)
    found: list[LinuxSnapshot] = []
    for path in files[-newest_runs:]:
        try:
            found += [s for s in read_linux_snapshots(path) if s.host == host and s.qmgr == qmgr]
        except (OSError, ValueError) as exc:
            log.warning("%s left out: %s", path, exc)
    return found
