"""The `mqjournal.snapshot/v1` contract: one record per queue manager per collection, JSON Lines on disk.

This model is the single definition of the contract. The JSON Schema in `schemas/` is generated from it
(`mqjournal schema --write`) and a test keeps the two equal. Field names listed in the v1 contract are fixed: add
fields freely, never rename or remove these.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable, Iterator
from importlib import resources
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from mqjournal.datafolder import DataPath, modified, write_text_atomically
from mqjournal.names import ObjectName, QueueManagerName

# The receiver statuses are planning words too: defined once, in the vocabulary (re-exported from here).
from mqjournal.vocabulary import ReceiverStatus

SCHEMA_ID = "mqjournal.snapshot/v1"
SCHEMA_FILE = "snapshot-v1.schema.json"

log = logging.getLogger(__name__)


class _Model(BaseModel):
    # Every key is always written, so the published schema requires every key (readers of the file rely on it).
    model_config = ConfigDict(
        extra="forbid", frozen=True, serialize_by_alias=True, json_schema_serialization_defaults_required=True
    )


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
    text: str = Field(
        description="the first-level text in the job's language and date format: for people, never parsed"
    )
    queue: str = Field(description="LIBRARY/QUEUE, e.g. QMTEST/QMQMMSG or QSYS/QSYSOPR")
    tokens: str | None = Field(
        None,
        description="the message's replacement data (MESSAGE_TOKENS) in hex, as IBM i stores it: the same in every "
        "language, so receivers, times and objects are read from it; null when the partition does not show it",
    )


class DamagedObject(_Model):
    """An MQ object AMQ7472 reported damaged: RCRMQMOBJ re-creates it from the journal, and until then its media
    recovery point (AMQ7462) cannot move."""

    object: str = Field(description="the object's name as AMQ7472 gives it, e.g. APP.REQUEST.QUEUE")
    object_type: str = Field(description="its type as MQ prints it in AMQ7472, e.g. QLOCAL")
    reported_at: AwareDatetime = Field(description="the newest AMQ7472 about it in the collection window")


class UndecodableMessage(_Model):
    """A message of the collection whose replacement data does not decode by the layout its message description
    declares on the partition (msgformats.py): it is kept in `messages` as it came, and moves no recovery point."""

    message_id: str = Field(description="the message ID, e.g. AMQ7460")
    sent_at: AwareDatetime = Field(description="when the partition sent it (MESSAGE_TIMESTAMP)")
    problem: str = Field(description="why its data does not decode, e.g. which field reads what")
    dspmsgd: str = Field(
        description="the CL command that shows its description's field formats, e.g. "
        "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)"
    )


class Snapshot(_Model):
    """The state of one queue manager's journal at one collection."""

    schema_: Literal["mqjournal.snapshot/v1"] = Field("mqjournal.snapshot/v1", alias="schema")
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
    asp_number: int | None = Field(None, description="the ASP that holds the journal's receivers (1: the system ASP)")
    asp_capacity_bytes: NonNegativeInt | None = Field(None, description="that ASP's capacity (QSYS2.ASP_INFO)")
    asp_available_bytes: NonNegativeInt | None = Field(None, description="the capacity still free in that ASP")
    damaged_objects: list[DamagedObject] = Field(
        default_factory=list,
        description="the objects AMQ7472 reported damaged in QMQMMSG within the collection window (newest report "
        "per object); read from the messages' replacement data, so empty when the partition does not show it",
    )
    entry_needed_at: AwareDatetime | None = Field(
        None,
        description="the journal entry the newest AMQ7432 in QMQMMSG within the collection window says the startup "
        "recovery pass could not read, in the partition's time zone; null when there is no AMQ7432, it has no "
        "replacement data, or its data does not decode (then it is in undecodable_messages)",
    )
    undecodable_messages: list[UndecodableMessage] = Field(
        default_factory=list,
        description="the messages of the collection whose replacement data does not decode by the layout the "
        "partition declares, oldest first: kept as they came, they move no recovery point",
    )


def receivers_by_name(snapshot: Snapshot | list[Receiver] | None, library: str) -> dict[str, Receiver]:
    """The receivers in `library` (the queue manager's) of a snapshot or of a list read apart, by name; none without
    either."""
    receivers = snapshot.receivers if isinstance(snapshot, Snapshot) else snapshot or []
    return {r.name: r for r in receivers if r.library == library}


def contract_schema(model: type[BaseModel], schema_id: str) -> dict:
    """The published JSON Schema of a contract, generated from its model (never written by hand); the Linux
    snapshot's (linuxmq/snapshot.py) is made the same way."""
    schema = model.model_json_schema(by_alias=True, mode="serialization")
    schema["$id"] = schema_id
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def schema_text(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def published_schema(file: str) -> str:
    """A schema file as the package publishes it (mqjournal/schemas/)."""
    return resources.files("mqjournal").joinpath("schemas", file).read_text()


def json_schema() -> dict:
    return contract_schema(Snapshot, SCHEMA_ID)


def json_schema_text() -> str:
    return schema_text(json_schema())


def published_schema_text() -> str:
    return published_schema(SCHEMA_FILE)


# --- every key of the contract, in every record ------------------------------------------------------------------

# Keys added to v1 after its first release. A record written before them lacks them and is read with null; every
# other key must be there. Their names occur nowhere else in the contract, so a reader can skip them by name alone.
ADDED_KEYS = frozenset(
    {
        "tokens",
        "asp_number",
        "asp_capacity_bytes",
        "asp_available_bytes",
        "damaged_objects",
        "object",
        "object_type",
        "reported_at",
        "entry_needed_at",
        "undecodable_messages",
        "message_id",
        "sent_at",
        "problem",
        "dspmsgd",
    }
)

# How a key's value is shaped, as far as keys go: a plain value, an object, an object or null, a list of objects.
VALUE, OBJECT, OPTIONAL_OBJECT, LIST_OF_OBJECTS = "value", "object", "optional_object", "list_of_objects"
ContractKeys = tuple[tuple[str, str, "ContractKeys | None"], ...]


@functools.cache
def contract_keys(*, with_added: bool = True) -> ContractKeys:
    """The keys the published schema requires, in the order they are written, with the objects nested in them;
    without `with_added`, the keys every v1 record has (`ADDED_KEYS` left out).

    The schema requires every key (also of a field with a default, `json_schema_serialization_defaults_required`):
    a record is complete only when it has them all. Derived from the published schema, never written by hand.
    """
    schema = json_schema()

    def resolve(node: dict) -> dict:
        ref = node.get("$ref")
        return schema["$defs"][ref.removeprefix("#/$defs/")] if ref else node

    def keys_of(node: dict) -> ContractKeys:
        node = resolve(node)
        required = node.get("required", [])
        assert set(required) == set(node["properties"]), "the published schema must require every key"
        found: list[tuple[str, str, ContractKeys | None]] = []
        for key in required:
            if not with_added and key in ADDED_KEYS:
                continue
            value = node["properties"][key]
            options = [resolve(o) for o in value.get("anyOf", [value])]
            objects = [o for o in options if "properties" in o]
            lists = [o for o in options if o.get("type") == "array" and "properties" in resolve(o.get("items", {}))]
            if objects:
                nullable = any(o.get("type") == "null" for o in options)
                found.append((key, OPTIONAL_OBJECT if nullable else OBJECT, keys_of(objects[0])))
            elif lists:
                found.append((key, LIST_OF_OBJECTS, keys_of(lists[0]["items"])))
            else:
                found.append((key, VALUE, None))
        return tuple(found)

    return keys_of(schema)


def missing_keys(record: object) -> list[str]:
    """The path of every key of the contract that a parsed JSON record lacks, e.g. `receivers[3].next_library`.

    Only objects are looked into: a value of the wrong type is the model's to refuse.
    """
    missing: list[str] = []

    def walk(value: object, keys: ContractKeys | None, path: str) -> None:
        if not isinstance(value, dict) or keys is None:
            return
        names, inner = _levels(keys)
        # Every key there (the usual case, hundreds of times a record): only the objects inside are looked into.
        if not names <= value.keys():
            missing.extend(f"{path}.{key}" if path else key for key, _, _ in keys if key not in value)
        for key, shape, nested in inner:
            if key not in value:
                continue
            where = f"{path}.{key}" if path else key
            if shape in (OBJECT, OPTIONAL_OBJECT):
                walk(value[key], nested, where)
            elif isinstance(value[key], list):
                for i, item in enumerate(value[key]):
                    walk(item, nested, f"{where}[{i}]")

    walk(record, contract_keys(with_added=False), "")
    return missing


_LEVELS: dict[int, tuple[frozenset[str], ContractKeys]] = {}


def _levels(keys: ContractKeys) -> tuple[frozenset[str], ContractKeys]:
    """A level of the contract's keys: their names, and those that hold objects (the contract's keys are made once)."""
    level = _LEVELS.get(id(keys))
    if level is None:
        level = _LEVELS[id(keys)] = (
            frozenset(key for key, _, _ in keys),
            tuple(k for k in keys if k[1] in (OBJECT, OPTIONAL_OBJECT, LIST_OF_OBJECTS)),
        )
    return level


def line_problem(line: str) -> str | None:
    """Why one JSON line is not a complete v1 record, naming the field (None when it is one)."""
    return parse_line(line)[1]


def parse_line(line: str) -> tuple[Snapshot | None, str | None]:
    """One JSON line as a snapshot, or None and why it is not a complete v1 record (naming the field): the model's
    checks, and every key of the contract present."""
    try:
        snapshot = Snapshot.model_validate_json(line)
    except ValidationError as exc:
        errors = exc.errors()
        problems = [
            f"{_path(e['loc'])} missing" if e["type"] == "missing" else f"{_path(e['loc']) or 'the line'}: {e['msg']}"
            for e in errors[:5]
        ]
        more = f" and {len(errors) - 5} more problems" if len(errors) > 5 else ""
        return None, "; ".join(problems) + more
    missing = missing_keys(json.loads(line))
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        return None, (
            f"{', '.join(missing[:5])}{more} missing (every key of the published schema is required; write null for "
            "no value)"
        )
    return snapshot, None


def _path(loc: tuple) -> str:
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def write_snapshots(path: DataPath, snapshots: Iterable[Snapshot]) -> int:
    """Write JSON Lines atomically: a reader sees the whole collection or none of it, never half (a temporary file
    renamed into place; on an object store, one put)."""
    lines = [snapshot.model_dump_json() + "\n" for snapshot in snapshots]
    write_text_atomically(path, "".join(lines))
    return len(lines)


def snapshots_of(root: DataPath, host: str, qmgr_library: str, *, newest_runs: int = 30) -> list[Snapshot]:
    """One queue manager's snapshots from the newest `newest_runs` collections under `root` (the data folder's
    snapshots/, one run_id=... folder per run). A file that cannot be read is left out, with a warning: an old
    record must not stop a recovery."""
    files = sorted(root.glob(f"run_id=*/{host}__{qmgr_library}.jsonl"), key=modified)
    found = []
    for path in files[-newest_runs:]:
        try:
            found += [s for s in read_snapshots(path) if s.host == host and s.qmgr_library == qmgr_library]
        except (OSError, ValueError) as exc:
            log.warning("%s left out: %s", path, exc)
    return found


def read_snapshots(path: DataPath) -> Iterator[Snapshot]:
    """The records of a JSON Lines file. A line that is not a complete v1 record stops the read, naming the file, the
    line and the field: a record that lacks a key of the contract (even one whose value may be null) is refused,
    never read with a default, so that nothing is planned from half a record."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                snapshot, problem = parse_line(line)
                if snapshot is None:
                    raise ValueError(f"{path}:{number}: not a {SCHEMA_ID} record: {problem}")
                yield snapshot
