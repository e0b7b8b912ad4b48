"""The `mqjournal.snapshot/v1` contract: one record per queue manager per collection, JSON Lines on disk.

This model is the single definition of the contract. The JSON Schema in `schemas/` is generated from it
(`mqjournal schema --write`) and a test keeps the two equal. Field names listed in the v1 contract are fixed: add
fields freely, never rename or remove these.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, NonNegativeInt

from mqjournal.names import ObjectName, QueueManagerName

SCHEMA_ID = "mqjournal.snapshot/v1"
SCHEMA_FILE = "snapshot-v1.schema.json"


class _Model(BaseModel):
    # Every key is always written, so the published schema requires every key (readers of the file rely on it).
    model_config = ConfigDict(
        extra="forbid", frozen=True, serialize_by_alias=True, json_schema_serialization_defaults_required=True
    )


class ReceiverStatus(StrEnum):
    """STATUS of QSYS2.JOURNAL_RECEIVER_INFO."""

    ATTACHED = "ATTACHED"
    ONLINE = "ONLINE"  # detached, not saved
    SAVED = "SAVED"  # detached and saved
    FREED = "FREED"  # saved, storage freed: its entries are not readable until it is restored
    PARTIAL = "PARTIAL"  # restored from a save taken while attached, or a damaged dual
    EMPTY = "EMPTY"  # never attached


class JournalRef(_Model):
    name: ObjectName
    library: ObjectName


class CommandMessage(_Model):
    """A message a command sent back, e.g. `AMQ7460` from RCDMQMIMG ... DSPJRNDTA(*YES)."""

    id: str | None
    text: str


class Checkpoint(_Model):
    forced: bool = Field(description="RCDMQMIMG was run by this collection")
    ok: bool = Field(description="the forced checkpoint completed; false when it failed or was not forced")
    at: AwareDatetime | None = None
    messages: list[CommandMessage] = Field(default_factory=list)


class RecoveryPoint(_Model):
    """AMQ7460 (startup) or AMQ7462 (media): the oldest entry needed, and its receiver if still online."""

    receiver: ObjectName | None = Field(description="null when the message shows asterisks: the receiver is gone")
    at: AwareDatetime


class Receiver(_Model):
    name: ObjectName
    library: ObjectName
    status: ReceiverStatus
    attached_at: AwareDatetime | None = None
    detached_at: AwareDatetime | None = None
    saved_at: AwareDatetime | None = None
    size_bytes: NonNegativeInt
    threshold_kb: NonNegativeInt | None = None
    previous: ObjectName | None = None
    previous_library: ObjectName | None = None
    next: ObjectName | None = None
    next_library: ObjectName | None = None
    first_sequence: NonNegativeInt | None = None
    last_sequence: NonNegativeInt | None = None
    journal: ObjectName | None = Field(None, description="null for a receiver never attached to a journal")
    journal_library: ObjectName | None = None


class QueueMessage(_Model):
    id: str | None
    at: AwareDatetime
    text: str
    queue: str = Field(description="LIBRARY/QUEUE, e.g. QMTEST/QMQMMSG or QSYS/QSYSOPR")


class Snapshot(_Model):
    """The state of one queue manager's journal at one collection."""

    schema_: Literal["mqjournal.snapshot/v1"] = Field(SCHEMA_ID, alias="schema")
    run_id: str = Field(min_length=1)
    collected_at: AwareDatetime
    host: str = Field(min_length=1, description="the host's name in the fleet")
    platform: Literal["ibmi"] = "ibmi"
    qmgr: QueueManagerName
    qmgr_library: ObjectName
    journal: JournalRef
    checkpoint: Checkpoint
    amqjrninf: str | None = Field(description="the raw 37 characters of QMxxx/AMQJRNINF, null if unreadable")
    startup_recovery: RecoveryPoint | None
    media_recovery: RecoveryPoint | None
    receivers: list[Receiver]
    messages: list[QueueMessage]


def json_schema() -> dict:
    """The published JSON Schema of the contract, generated from the model (never written by hand)."""
    schema = Snapshot.model_json_schema(by_alias=True, mode="serialization")
    schema["$id"] = SCHEMA_ID
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def json_schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


def published_schema_text() -> str:
    return resources.files("mqjournal").joinpath("schemas", SCHEMA_FILE).read_text()


def write_snapshots(path: Path, snapshots: Iterable[Snapshot]) -> int:
    """Write JSON Lines atomically: a reader sees the whole collection or none of it, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    count = 0
    with tmp.open("w", encoding="utf-8") as out:
        for snapshot in snapshots:
            out.write(snapshot.model_dump_json() + "\n")
            count += 1
    tmp.replace(path)
    return count


def read_snapshots(path: Path) -> Iterator[Snapshot]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield Snapshot.model_validate_json(line)
                except ValueError as exc:
                    raise ValueError(f"{path}:{number}: not a {SCHEMA_ID} record: {exc}") from exc
