"""The `mqjournal.snapshot/v1` contract: one record per queue manager per collection, JSON Lines on disk.

The pydantic model is the single definition of the contract; the JSON Schema in `mqjournal/schemas/` is generated
from it for readers that are not Python. The v1 field names are fixed: new fields may be added, none renamed.
"""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from pydantic import ValidationError

from mqjournal import snapshot
from mqjournal.snapshot import ReceiverStatus, Snapshot, read_snapshots, write_snapshots

# One queue manager, TEST, on host ibmi1 after a forced checkpoint: AMQA000012 is saved, AMQA000013 attached.
SNAPSHOT = {
    "schema": "mqjournal.snapshot/v1",
    "run_id": "scheduled__2024-05-27T12:00:00+00:00",
    "collected_at": "2024-05-27T12:05:40+00:00",
    "host": "ibmi1",
    "platform": "ibmi",
    "qmgr": "TEST",
    "qmgr_library": "QMTEST",
    "journal": {"name": "AMQAJRN", "library": "QMTEST"},
    "checkpoint": {
        "forced": True,
        "ok": True,
        "at": "2024-05-27T14:05:35+02:00",
        "messages": [
            {"id": "AMQ7460", "text": "Startup recovery point."},
            {"id": "AMQ7462", "text": "Oldest media recovery entry."},
            {"id": None, "text": "IBM MQ object images recorded."},
        ],
    },
    "amqjrninf": "AMQA000012QMTEST    20240527140535123",
    "startup_recovery": {"receiver": "AMQA000013", "at": "2024-05-27T14:05:35.123+02:00"},
    "media_recovery": {"receiver": None, "at": "2024-05-20T09:00:00+02:00"},
    "receivers": [
        {
            "name": "AMQA000012",
            "library": "QMTEST",
            "status": "SAVED",
            "attached_at": "2024-05-26T08:00:00+02:00",
            "detached_at": "2024-05-27T10:00:00+02:00",
            "saved_at": "2024-05-27T11:00:00+02:00",
            "size_bytes": 102_400_000,
            "threshold_kb": 100_000,
            "previous": "AMQA000011",
            "previous_library": "QMTEST",
            "next": "AMQA000013",
            "next_library": "QMTEST",
            "first_sequence": 1_000,
            "last_sequence": 145_000,
            "journal": "AMQAJRN",
            "journal_library": "QMTEST",
        },
        {
            "name": "AMQA000013",
            "library": "QMTEST",
            "status": "ATTACHED",
            "attached_at": "2024-05-27T10:00:00+02:00",
            "size_bytes": 4_096_000,
            "threshold_kb": 100_000,
            "previous": "AMQA000012",
            "previous_library": "QMTEST",
            "first_sequence": 145_001,
            "last_sequence": 150_000,
            "journal": "AMQAJRN",
            "journal_library": "QMTEST",
        },
    ],
    "messages": [
        {
            "id": "AMQ7460",
            "at": "2024-05-27T14:05:35+02:00",
            "text": "Startup recovery point. ... journal receiver AMQA000013 ...",
            "queue": "QMTEST/QMQMMSG",
        },
        {
            "id": "CPI70E3",
            "at": "2024-05-27T14:06:00+02:00",
            "text": "Automatic receiver switching stopped.",
            "queue": "QSYS/QSYSOPR",
        },
    ],
}

# The field names the v1 contract fixes, per object: never renamed, never removed.
V1_FIELDS = {
    "": [
        "schema",
        "run_id",
        "collected_at",
        "host",
        "platform",
        "qmgr",
        "qmgr_library",
        "journal",
        "checkpoint",
        "amqjrninf",
        "startup_recovery",
        "media_recovery",
        "receivers",
        "messages",
    ],
    "journal": ["name", "library"],
    "checkpoint": ["forced", "ok", "at", "messages"],
    "startup_recovery": ["receiver", "at"],
    "media_recovery": ["receiver", "at"],
    "receivers": [
        "name",
        "library",
        "status",
        "attached_at",
        "detached_at",
        "saved_at",
        "size_bytes",
        "threshold_kb",
        "previous",
        "next",
        "first_sequence",
        "last_sequence",
    ],
    "messages": ["id", "at", "text", "queue"],
}


def snapshot_data(**changes) -> dict:
    """A deep copy of SNAPSHOT; `changes` replace top-level fields."""
    data = copy.deepcopy(SNAPSHOT)
    data.update(changes)
    return data


@pytest.fixture
def valid() -> Snapshot:
    return Snapshot.model_validate(SNAPSHOT)


@pytest.fixture(scope="module")
def published_schema() -> dict:
    return json.loads(snapshot.published_schema_text())


# --------------------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------------------


def test_full_snapshot_validates(valid):
    assert valid.schema_ == "mqjournal.snapshot/v1"
    assert valid.qmgr == "TEST"
    assert [r.status for r in valid.receivers] == [ReceiverStatus.SAVED, ReceiverStatus.ATTACHED]
    assert valid.media_recovery.receiver is None


def test_snapshot_round_trips_through_json(valid):
    assert Snapshot.model_validate_json(valid.model_dump_json()) == valid


def test_snapshot_json_uses_the_key_schema_not_schema_(valid):
    dumped = json.loads(valid.model_dump_json())
    assert dumped["schema"] == "mqjournal.snapshot/v1"
    assert "schema_" not in dumped


def test_snapshot_of_another_schema_version_is_rejected():
    with pytest.raises(ValidationError):
        Snapshot.model_validate(snapshot_data(schema="mqjournal.snapshot/v2"))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(("collected_at",), id="collected_at"),
        pytest.param(("checkpoint", "at"), id="checkpoint.at"),
        pytest.param(("startup_recovery", "at"), id="startup_recovery.at"),
        pytest.param(("receivers", 0, "attached_at"), id="receivers.attached_at"),
        pytest.param(("receivers", 0, "saved_at"), id="receivers.saved_at"),
        pytest.param(("messages", 0, "at"), id="messages.at"),
    ],
)
def test_naive_timestamp_is_rejected_it_must_carry_an_offset(path):
    data = snapshot_data()
    *parents, key = path
    target = data
    for step in parents:
        target = target[step]
    target[key] = "2024-05-27T14:05:35"
    with pytest.raises(ValidationError, match="timezone"):
        Snapshot.model_validate(data)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("name", "AMQA00001;", id="name-semicolon"),
        pytest.param("name", "AMQA000012) DLTLIB(QGPL", id="name-cl-injection"),
        pytest.param("name", "", id="name-empty"),
        pytest.param("library", "*LIBL", id="library-special-value"),
        pytest.param("previous", "AMQA 00011", id="previous-blank-inside"),
        pytest.param("status", "DELETED", id="status-unknown"),
        pytest.param("status", "saved", id="status-lower-case"),
        pytest.param("size_bytes", -1, id="size-negative"),
    ],
)
def test_invalid_receiver_field_is_rejected(field, value):
    data = snapshot_data()
    data["receivers"][0][field] = value
    with pytest.raises(ValidationError):
        Snapshot.model_validate(data)


def test_invalid_queue_manager_name_is_rejected():
    with pytest.raises(ValidationError):
        Snapshot.model_validate(snapshot_data(qmgr="TEST'); DLTLIB QGPL"))


@pytest.mark.parametrize(
    "where",
    [
        pytest.param("snapshot", id="top-level"),
        pytest.param("journal", id="journal"),
        pytest.param("receiver", id="receiver"),
        pytest.param("message", id="message"),
    ],
)
def test_unknown_field_is_rejected(where):
    data = snapshot_data()
    target = {
        "snapshot": data,
        "journal": data["journal"],
        "receiver": data["receivers"][0],
        "message": data["messages"][0],
    }[where]
    target["colour"] = "blue"
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Snapshot.model_validate(data)


# --------------------------------------------------------------------------------------------------------------
# The published JSON Schema
# --------------------------------------------------------------------------------------------------------------


def _object_schema(schema: dict, node: dict) -> dict:
    """Follow a property's $ref (directly, in anyOf for an optional object, or in items for a list)."""
    for candidate in [node, node.get("items", {}), *node.get("anyOf", [])]:
        ref = candidate.get("$ref") or candidate.get("items", {}).get("$ref")
        if ref:
            return schema["$defs"][ref.removeprefix("#/$defs/")]
    raise AssertionError(f"no object schema in {node}")


@pytest.mark.parametrize("obj", list(V1_FIELDS), ids=[name or "snapshot" for name in V1_FIELDS])
def test_v1_field_names_are_in_the_json_schema(obj):
    schema = snapshot.json_schema()
    node = schema if obj == "" else _object_schema(schema, schema["properties"][obj])
    missing = [field for field in V1_FIELDS[obj] if field not in node["properties"]]
    assert not missing, f"v1 fields renamed or removed from {obj or 'the snapshot'}: {missing}"


def test_json_schema_names_the_contract():
    assert snapshot.json_schema()["$id"] == "mqjournal.snapshot/v1"


def test_published_schema_file_is_current():
    assert snapshot.published_schema_text() == snapshot.json_schema_text(), (
        f"mqjournal/schemas/{snapshot.SCHEMA_FILE} is out of date with the Snapshot model: "
        "run `mqjournal schema --write` and commit the file"
    )


def test_published_schema_is_a_valid_draft_2020_12_schema(published_schema):
    jsonschema.Draft202012Validator.check_schema(published_schema)


def test_dumped_snapshot_is_valid_against_the_published_schema(valid, published_schema):
    jsonschema.Draft202012Validator(published_schema).validate(json.loads(valid.model_dump_json()))


def test_published_schema_rejects_an_unknown_field(valid, published_schema):
    record = json.loads(valid.model_dump_json())
    record["receivers"][0]["colour"] = "blue"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(published_schema).validate(record)


# --------------------------------------------------------------------------------------------------------------
# JSON Lines files
# --------------------------------------------------------------------------------------------------------------


def test_write_then_read_snapshots_round_trips(tmp_path, valid):
    other = Snapshot.model_validate(snapshot_data(qmgr="PROD", qmgr_library="QMPROD"))
    path = tmp_path / "runs" / "snapshots.jsonl"
    assert write_snapshots(path, [valid, other]) == 2
    assert list(read_snapshots(path)) == [valid, other]


def test_write_snapshots_writes_one_json_line_per_snapshot(tmp_path, valid):
    path = tmp_path / "snapshots.jsonl"
    write_snapshots(path, [valid, valid, valid])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert all(json.loads(line)["schema"] == "mqjournal.snapshot/v1" for line in lines)


def test_write_snapshots_leaves_no_temporary_file(tmp_path, valid):
    write_snapshots(tmp_path / "snapshots.jsonl", [valid])
    assert [p.name for p in tmp_path.iterdir()] == ["snapshots.jsonl"]


def test_read_snapshots_skips_blank_lines(tmp_path, valid):
    path = tmp_path / "snapshots.jsonl"
    path.write_text("\n" + valid.model_dump_json() + "\n\n", encoding="utf-8")
    assert list(read_snapshots(path)) == [valid]


@pytest.mark.parametrize(
    "bad_line",
    [
        pytest.param("{not json", id="not-json"),
        pytest.param(json.dumps(snapshot_data(collected_at="2024-05-27T12:05:40")), id="naive-timestamp"),
        pytest.param(json.dumps({"schema": "mqjournal.snapshot/v1"}), id="fields-missing"),
    ],
)
def test_read_snapshots_bad_line_names_the_file_and_line_number(tmp_path, valid, bad_line):
    path = tmp_path / "snapshots.jsonl"
    path.write_text(valid.model_dump_json() + "\n" + bad_line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a mqjournal\.snapshot/v1 record") as caught:
        list(read_snapshots(path))
    assert str(caught.value).startswith(f"{path}:2: ")


# --------------------------------------------------------------------------------------------------------------
# Every key of the contract in every record (issue #12): a record missing one is refused, not read with defaults
# --------------------------------------------------------------------------------------------------------------


def _field(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _without(record: dict, path: tuple) -> dict:
    record = copy.deepcopy(record)
    *parents, key = path
    target = record
    for step in parents:
        target = target[step]
    del target[key]
    return record


@pytest.mark.parametrize(
    "path",
    [
        ("receivers", 1, "next_library"),
        ("receivers", 0, "journal"),
        ("receivers", 1, "threshold_kb"),
        ("amqjrninf",),
        ("checkpoint", "at"),
        ("checkpoint", "messages"),
        ("checkpoint", "messages", 0, "id"),
        ("startup_recovery", "receiver"),
        ("messages", 1, "id"),
        ("platform",),
        ("media_recovery",),
    ],
    ids=_field,
)
def test_read_snapshots_refuses_a_record_missing_a_key_naming_the_file_line_and_field(tmp_path, valid, path):
    record = _without(json.loads(valid.model_dump_json()), path)
    file = tmp_path / "snapshots.jsonl"
    file.write_text(valid.model_dump_json() + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a mqjournal\.snapshot/v1 record") as caught:
        list(read_snapshots(file))
    assert str(caught.value).startswith(f"{file}:2: ")
    assert _field(path) in str(caught.value) and "missing" in str(caught.value)


def test_missing_keys_names_every_missing_key_by_its_path(valid):
    record = _without(_without(json.loads(valid.model_dump_json()), ("receivers", 1, "next")), ("journal", "library"))
    assert snapshot.missing_keys(record) == ["journal.library", "receivers[1].next"]


def test_a_null_recovery_point_needs_no_keys_inside(tmp_path, valid):
    file = tmp_path / "snapshots.jsonl"
    write_snapshots(file, [valid.model_copy(update={"startup_recovery": None})])
    assert next(iter(read_snapshots(file))).startup_recovery is None


def test_a_record_with_every_key_null_where_allowed_is_read(tmp_path, valid):
    # The second receiver of SNAPSHOT has no detached_at, saved_at, next, next_library: written, they are null keys.
    file = tmp_path / "snapshots.jsonl"
    write_snapshots(file, [valid])
    line = file.read_text(encoding="utf-8")
    assert '"next_library":null' in line and list(read_snapshots(file)) == [valid]


def test_building_a_snapshot_in_code_still_fills_defaults():
    # SNAPSHOT's second receiver lacks keys that have defaults: the model fills them; only reading a file refuses.
    built = Snapshot.model_validate(SNAPSHOT)
    assert built.receivers[1].next_library is None and built.receivers[1].detached_at is None


def test_line_problem_is_none_for_a_complete_record_and_names_the_field_otherwise(valid):
    line = valid.model_dump_json()
    assert snapshot.line_problem(line) is None
    record = _without(json.loads(line), ("receivers", 0, "previous_library"))
    assert snapshot.line_problem(json.dumps(record)).startswith("receivers[0].previous_library missing")


def test_the_contract_keys_are_those_the_published_schema_requires(published_schema):
    keys = snapshot.contract_keys()
    assert [key for key, _, _ in keys] == published_schema["required"]
    receivers = {key: nested for key, _, nested in keys}["receivers"]
    assert [key for key, _, _ in receivers] == published_schema["$defs"]["Receiver"]["required"]


def _without_added(value):
    if isinstance(value, dict):
        return {k: _without_added(v) for k, v in value.items() if k not in snapshot.ADDED_KEYS}
    if isinstance(value, list):
        return [_without_added(v) for v in value]
    return value


def test_a_record_written_before_the_added_keys_is_read_with_them_null(tmp_path, valid):
    # History written by an earlier mqjournal stays readable: only the keys added to v1 later may be absent.
    file = tmp_path / "snapshots.jsonl"
    record = _without_added(json.loads(valid.model_dump_json()))
    file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (read,) = read_snapshots(file)
    assert read.asp_number is None and all(m.tokens is None for m in read.messages)


def test_the_added_keys_are_in_the_schema_and_nowhere_else_in_the_contract():
    # The Spark job skips them by name: a name used elsewhere would let that other key go missing unnoticed.
    def names(keys):
        for key, _, nested in keys:
            yield key
            if nested:
                yield from names(nested)

    everything = list(names(snapshot.contract_keys()))
    assert all(everything.count(key) == 1 for key in snapshot.ADDED_KEYS)
    assert not set(names(snapshot.contract_keys(with_added=False))) & snapshot.ADDED_KEYS
