"""How the Linux plan reaches the plan job, without running Spark: the schema the job reads Linux snapshots with,
the job's arguments, the command lines, and which run folders the maintenance DAG's plan reads (#32)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import types as T

from mqjournal import planjob
from mqjournal.airflow import maintenance as steps
from mqjournal.cli import main
from mqjournal.history import host_of, partitions_needed
from mqjournal.linuxmq import snapshot as linux_contract
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.planrows import PlanTotals
from mqjournal.policy import Policy
from mqjournal.settings import Settings
from mqjournal.sparkplan.linux import LINUX_SNAPSHOT_SCHEMA
from spark_apps import plan_receivers

AS_OF = datetime(2026, 12, 1, 13, 0, tzinfo=UTC)


# --- the schema the job reads Linux snapshots with ------------------------------------------------------------


def _json_shape(node: dict, defs: dict) -> object:
    """A JSON Schema node as the Spark type the job reads it with: nested keys, arrays, and the leaf type."""
    if "$ref" in node:
        return _json_shape(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in node:
        (value,) = [n for n in node["anyOf"] if n.get("type") != "null"]
        return _json_shape(value, defs)
    if node.get("type") == "object":
        return {key: _json_shape(value, defs) for key, value in node["properties"].items()}
    if node.get("type") == "array":
        return ["array", _json_shape(node["items"], defs)]
    # Times and names are read as text; whole numbers as longs (sizes beyond 2 GiB).
    return {"string": "string", "integer": "bigint", "boolean": "boolean"}[node["type"]]


def _spark_shape(kind: T.DataType) -> object:
    if isinstance(kind, T.StructType):
        return {field.name: _spark_shape(field.dataType) for field in kind.fields}
    if isinstance(kind, T.ArrayType):
        return ["array", _spark_shape(kind.elementType)]
    return kind.simpleString()


def test_the_job_reads_linux_snapshots_with_every_field_of_the_published_contract_and_no_other():
    contract = linux_contract.json_schema()
    assert _spark_shape(LINUX_SNAPSHOT_SCHEMA) == _json_shape(contract, contract["$defs"])
    # In the model's order, as `mqjournal collect` writes them.
    model = linux_contract.LinuxSnapshot.model_fields
    assert [f.name for f in LINUX_SNAPSHOT_SCHEMA.fields] == [field.alias or name for name, field in model.items()]


# --- the job's arguments and command lines --------------------------------------------------------------------


def test_the_job_s_arguments_carry_the_linux_snapshots_and_their_history_and_may_leave_out_ibm_i():
    args = planjob.application_args(
        None,
        Path("/data/plans/r3"),
        linux_snapshots=Path("/data/linux/run_id=r3"),
        linux_history=[Path("/data/linux/run_id=r2"), "file:///data/linux/run_id=r1"],
        as_of=AS_OF,
    )
    assert "--snapshots" not in args and "--history" not in args
    pairs = list(zip(args[::2], args[1::2], strict=True))
    assert [p for p in pairs if p[0].startswith("--linux")] == [
        ("--linux-snapshots", "/data/linux/run_id=r3"),
        ("--linux-history", "/data/linux/run_id=r2"),
        ("--linux-history", "file:///data/linux/run_id=r1"),
    ]
    parsed = plan_receivers.parse_args(args)
    assert (parsed.snapshots, parsed.linux_snapshots) == ([], ["/data/linux/run_id=r3"])
    assert parsed.linux_history == ["/data/linux/run_id=r2", "file:///data/linux/run_id=r1"]


def test_the_job_s_command_line_wants_ibm_i_or_linux_snapshots(capsys):
    with pytest.raises(SystemExit):
        plan_receivers.parse_args(["--out", "/tmp/plan"])
    assert "give --snapshots (IBM i), --linux-snapshots, or both" in capsys.readouterr().err


def test_mqjournal_plan_wants_ibm_i_or_linux_snapshots_and_refuses_a_linux_folder_that_is_not_there(tmp_path, capsys):
    assert main(["plan", "--out", str(tmp_path / "plan")]) == 2
    assert "nothing to plan: give --snapshots (IBM i), --linux-snapshots, or both" in capsys.readouterr().err
    missing = tmp_path / "linux-snapshots"
    assert main(["plan", "--linux-snapshots", str(missing), "--out", str(tmp_path / "plan")]) == 2
    assert f"the Linux snapshots {missing} does not exist" in capsys.readouterr().err


def test_mqjournal_plan_passes_the_linux_snapshots_to_the_job(tmp_path, monkeypatch):
    seen = {}

    def run_plan(snapshots, out, **options):
        seen.update(options, snapshots=snapshots)
        return PlanTotals.model_validate_json(_EMPTY_SUMMARY)

    monkeypatch.setattr(planjob, "run_plan", run_plan)
    monkeypatch.delenv("MQJOURNAL_SPARK_CONNECT", raising=False)
    (tmp_path / "linux").mkdir()
    assert main(["plan", "--linux-snapshots", str(tmp_path / "linux"), "--out", str(tmp_path / "plan")]) == 0
    assert seen["snapshots"] is None and seen["linux_snapshots"] == tmp_path / "linux"


_EMPTY_SUMMARY = (
    '{"as_of": "2026-12-01T13:00:00Z", "policy": {}, "queue_managers": 0, "blocked_queue_managers": 0, '
    '"receivers": 0, "actions": {}, "alerts": {}, "bytes_to_save": 0, "bytes_to_delete": 0, "bytes_freed": 0}'
)


def test_a_plan_without_linux_queue_managers_reads_as_no_linux_plan(tmp_path):
    (tmp_path / "receivers").mkdir()
    (tmp_path / "queue_managers").mkdir()
    assert read_linux_plan(tmp_path) == []


# --- which run folders the maintenance DAG's plan reads -------------------------------------------------------


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings.from_env({"AIRFLOW_HOME": str(tmp_path / "airflow"), "MQJOURNAL_DATA_DIR": str(tmp_path / "data")})


def collected(folder: Path, run: int, *files: str) -> Path:
    """A run's folder with the files named, written `run` hours after an epoch (partitions are as new as that)."""
    partition = folder / f"run_id=r{run}"
    partition.mkdir(parents=True)
    for name in files:
        (partition / name).write_text("{}\n")
    os.utime(partition, (run * 3600, run * 3600))
    return partition


def test_an_ibm_i_only_run_plans_no_linux_snapshots(settings):
    for run in (1, 2):
        collected(settings.snapshots, run, "ibmi1__QMTEST.jsonl")

    inputs = steps._plan_history(settings, "r2", Policy())

    assert (inputs.snapshots, inputs.linux_snapshots, inputs.linux_history) == (settings.snapshot_dir("r2"), None, [])


def test_a_linux_only_run_plans_its_linux_folder_with_enough_earlier_runs_for_the_stuck_alerts(settings):
    for run in range(1, 7):
        collected(settings.linux_snapshots, run, "mq-linux1.jsonl")

    inputs = steps._plan_history(settings, "r6", Policy())

    assert inputs.snapshots is None and inputs.history == []
    assert inputs.linux_snapshots == settings.linux_snapshot_dir("r6")
    # linuxmq.plan.STUCK_AFTER_RUNS (3) earlier collections, the newest.
    assert [p.name for p in inputs.linux_history] == ["run_id=r5", "run_id=r4", "run_id=r3"]
    submission = planjob.application_args(
        inputs.snapshots, settings.plan_dir("r6"), linux_snapshots=inputs.linux_snapshots, as_of=AS_OF
    )
    assert "--snapshots" not in submission


def test_a_run_that_collected_nothing_fails_its_plan_naming_the_ibm_i_folder_as_it_always_did(settings):
    with pytest.raises(FileNotFoundError, match="run_id=r1"):
        steps._plan_history(settings, "r1", Policy())


def test_linux_history_is_walked_per_host_from_the_file_names():
    assert host_of("mq-linux1.jsonl") == "mq-linux1" and host_of("mq-linux1.jsonl.tmp") is None


def test_a_host_collected_only_long_ago_takes_the_walk_that_far(tmp_path):
    linux = tmp_path / "linux"
    collected(linux, 1, "a.jsonl", "b.jsonl")
    for run in range(2, 6):
        collected(linux, run, "a.jsonl")
    current = collected(linux, 6, "a.jsonl", "b.jsonl")

    needed = partitions_needed(linux, current, 3, key_of=host_of)

    assert [p.name for p in needed] == ["run_id=r5", "run_id=r4", "run_id=r3", "run_id=r1"]
