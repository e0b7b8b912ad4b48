"""The data folder may be an object store URL (opened as Airflow's ObjectStoragePath) as well as a folder: what is
written there is read back the same way, and what must stay on a filesystem stays in the local folder."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk import ObjectStoragePath

from mqjournal import rules
from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.notes import outcome_note
from mqjournal.airflow.xcom import MaintenanceTarget
from mqjournal.datafolder import DataPath, write_text_atomically
from mqjournal.fleetview.data import read_rows
from mqjournal.history import partitions_needed
from mqjournal.planrows import PlannedQueueManager
from mqjournal.policy import Policy
from mqjournal.settings import Settings
from mqjournal.snapshot import read_snapshots, snapshots_of, write_snapshots
from tests.plan.builders import chain, names, snapshot

RUNS = 3


@pytest.fixture
def memory_url() -> Iterator[str]:
    """A memory:// data folder of its own (the memory filesystem is one store per process), removed after."""
    url = f"memory://mqjournal-{uuid.uuid4().hex[:8]}/data"
    yield url
    folder = ObjectStoragePath(url)
    if folder.exists():
        folder.fs.rm(folder.path, recursive=True)


def settings_for(data_dir: str | Path, tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"AIRFLOW_HOME": str(tmp_path / "airflow"), "MQJOURNAL_DATA_DIR": str(data_dir), **env})


# --- what is local and what is not ------------------------------------------------------------------------------


def test_a_plain_path_stays_a_folder_that_holds_everything(tmp_path):
    settings = settings_for(tmp_path / "data", tmp_path)
    assert isinstance(settings.data_folder, Path) and settings.data_folder == tmp_path / "data"
    assert settings.local_folder == tmp_path / "data"
    assert settings.snapshots == tmp_path / "data" / "snapshots"
    assert settings.audit_log == tmp_path / "data" / "audit.jsonl"
    assert settings.catalog_url == f"sqlite:///{tmp_path / 'data' / 'catalog.db'}"
    assert settings.backup_store == str(tmp_path / "data" / "backups")


def test_a_memory_url_is_an_object_store_and_the_audit_logs_catalog_and_package_stay_local(tmp_path, memory_url):
    settings = settings_for(memory_url, tmp_path)
    local = tmp_path / "airflow" / "mqjournal"  # $AIRFLOW_HOME/mqjournal
    assert isinstance(settings.data_folder, ObjectStoragePath) and settings.data_folder.protocol == "memory"
    assert str(settings.plan_dir("manual__2026-11-22T05:00:00+00:00")) == (
        f"{memory_url}/plans/run_id=manual__2026-11-22T05_00_00_00_00"
    )
    assert str(settings.report_file("r1")) == f"{memory_url}/reports/r1.md"
    assert (settings.audit_log, settings.store_audit_log) == (local / "audit.jsonl", local / "store-audit.jsonl")
    assert settings.dist_dir == local / "dist"
    assert settings.catalog_url == f"sqlite:///{local / 'catalog.db'}"
    assert settings.backup_store == f"{memory_url}/backups"


def test_a_file_url_is_opened_as_a_url_and_the_local_folder_can_be_named(tmp_path):
    url = f"file://{tmp_path}/shared"
    settings = settings_for(url, tmp_path, MQJOURNAL_LOCAL_DIR=str(tmp_path / "local"))
    assert isinstance(settings.data_folder, ObjectStoragePath) and settings.data_folder.protocol == "file"
    assert settings.data_folder.path == f"{tmp_path}/shared"
    assert settings.audit_log == tmp_path / "local" / "audit.jsonl"
    assert settings.catalog_url == f"sqlite:///{tmp_path / 'local' / 'catalog.db'}"


def test_the_data_folders_connection_reaches_the_default_backup_store_not_one_set_apart(tmp_path, memory_url):
    assert settings_for(memory_url, tmp_path, MQJOURNAL_DATA_CONN_ID="aws_data").backup_store_conn_id == "aws_data"
    apart = settings_for(
        memory_url, tmp_path, MQJOURNAL_DATA_CONN_ID="aws_data", MQJOURNAL_BACKUP_STORE="s3://backups/mq"
    )
    assert apart.backup_store_conn_id is None


def test_a_url_data_folder_without_a_local_folder_is_refused(tmp_path):
    with pytest.raises(ValueError, match="local_dir must name a folder"):
        Settings(
            fleet_file=tmp_path / "fleet.yaml",
            data_dir="s3://bucket/mqjournal",
            catalog_url="sqlite://",
            spark_app=Path("unused"),
            spark_conn_id="spark_default",
            schedule=None,
        )


# --- snapshots ------------------------------------------------------------------------------------------------------


def test_snapshots_written_to_an_object_store_are_read_back_in_one_object(tmp_path, memory_url):
    settings = settings_for(memory_url, tmp_path)
    first = snapshot(chain(names(1, 3)), run_id="r1")
    second = snapshot(chain(names(1, 4)), run_id="r2")
    for s in (first, second):
        assert write_snapshots(settings.snapshot_dir(s.run_id) / "ibmi1__QMTEST.jsonl", [s]) == 1

    assert [p.name for p in settings.snapshot_dir("r2").iterdir()] == ["ibmi1__QMTEST.jsonl"]  # no .tmp object
    assert list(read_snapshots(settings.snapshot_dir("r1") / "ibmi1__QMTEST.jsonl")) == [first]
    assert snapshots_of(settings.snapshots, "ibmi1", "QMTEST") == [first, second]


def test_a_snapshot_file_rewritten_in_a_file_url_folder_is_renamed_into_place(tmp_path):
    settings = settings_for(f"file://{tmp_path}/shared", tmp_path)
    path = settings.snapshot_dir("r1") / "ibmi1__QMTEST.jsonl"
    for count in (3, 4):
        write_snapshots(path, [snapshot(chain(names(1, count)))])
    assert [p.name for p in (tmp_path / "shared" / "snapshots" / "run_id=r1").iterdir()] == ["ibmi1__QMTEST.jsonl"]
    assert len(next(read_snapshots(path)).receivers) == 4


# --- history ------------------------------------------------------------------------------------------------------


def collected(snapshots: DataPath, run: int, *files: str) -> DataPath:
    """Run `run`'s partition with the files named, each written `run` hours after an epoch."""
    partition = snapshots / f"run_id=scheduled__{run:04d}"
    for name in files:
        write_text_atomically(partition / name, "{}\n")
        at = run * 3600
        if isinstance(partition, Path):
            os.utime(partition / name, (at, at))
        else:  # memory:// keeps a file's time in its store: set it as os.utime sets a file's
            partition.fs.store[(partition / name).path].modified = datetime.fromtimestamp(at, UTC)
    if isinstance(partition, Path):  # a folder's partition is as new as the folder
        os.utime(partition, (run * 3600, run * 3600))
    return partition


def fleet_history(snapshots: DataPath) -> DataPath:
    """QMA collected in every run, QMB only up to run 5, another queue manager all along; returns run 40's."""
    for run in range(1, 40):
        qmb = ["ibmi2__QMB.jsonl"] if run <= 5 else []
        collected(snapshots, run, "ibmi1__QMA.jsonl", "ibmi9__QMOTHER.jsonl", *qmb)
    collected(snapshots, 7, "snapshots.jsonl")  # a CLI collection: its file says nothing of what it holds
    return collected(snapshots, 40, "ibmi1__QMA.jsonl", "ibmi2__QMB.jsonl")


def test_history_chooses_the_same_partitions_on_an_object_store_as_in_a_folder(tmp_path, memory_url):
    folder = tmp_path / "snapshots"
    store = settings_for(memory_url, tmp_path).snapshots
    chosen = {}
    for snapshots in (folder, store):
        current = fleet_history(snapshots)
        chosen[type(snapshots).__name__] = [p.name for p in partitions_needed(snapshots, current, RUNS)]
    expected = [f"run_id=scheduled__{run:04d}" for run in (39, 38, 37, 7, 5, 4, 3)]
    assert chosen == {"PosixPath": expected, "ObjectStoragePath": expected}


# --- the plan, the report and the note ------------------------------------------------------------------------------


def target(library: str = "QMTEST") -> MaintenanceTarget:
    return MaintenanceTarget(
        host="ibmi1",
        qmgr="TEST",
        library=library,
        journal="AMQAJRN",
        instance="A",
        journal_queue=[library, "AMQAJRNMSG"],
        utc_offset_minutes=60,
    )


def write_plan(plan_dir: DataPath) -> None:
    """The plan job's two Parquet datasets, from the reference planner, written with pyarrow through the path's
    filesystem (the Spark job writes the same datasets)."""
    fleet = [snapshot(chain(names(1, 6), saved=tuple(names(1, 3))), oldest=names(4, 1)[0])]
    qms, receivers = rules.as_rows(rules.plan_fleet(fleet, as_of=fleet[0].collected_at, policy=Policy()))
    for name, rows in (("queue_managers", qms), ("receivers", receivers)):
        table = pa.Table.from_pylist([{**r, "alerts": list(r["alerts"])} if "alerts" in r else r for r in rows])
        folder = plan_dir / name
        if isinstance(folder, Path):
            folder.mkdir(parents=True)
            pq.write_table(table, folder / "part-0.parquet")
        else:
            pq.write_table(table, (folder / "part-0.parquet").path, filesystem=folder.fs)


def test_the_plan_summary_is_read_from_parquet_in_an_object_store_as_from_a_folder(tmp_path, memory_url):
    summaries = []
    for settings in (settings_for(tmp_path / "data", tmp_path), settings_for(memory_url, tmp_path)):
        write_plan(settings.plan_dir("r1"))
        summaries.append(steps.summarize(settings.plan_dir("r1"), [target()]))
    folder, store = summaries
    assert store == folder
    assert store.to_delete == {"ibmi1/TEST/QMTEST": names(1, 3)} and store.anything_to_delete


def test_the_fleet_view_reads_a_plan_in_an_object_store(tmp_path, memory_url):
    settings = settings_for(memory_url, tmp_path)
    write_plan(settings.plan_dir("r1"))
    rows = read_rows(settings.plan_dir("r1") / "queue_managers", PlannedQueueManager)
    assert rows is not None and [(q.host, q.qmgr_library) for q in rows] == [("ibmi1", "QMTEST")]


def test_the_run_report_and_its_note_are_written_to_an_object_store_and_the_note_read_back(
    tmp_path, memory_url, monkeypatch
):
    settings = settings_for(memory_url, tmp_path)
    text = steps.report(
        settings, "r1", dry_run=True, summary=None, saves=None, deletes=None, approval=None, approve_state=None
    )
    assert settings.report_file("r1").read_text(encoding="utf-8") == text
    assert settings.report_file("r1").with_suffix(".html").exists()
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.setenv("MQJOURNAL_DATA_DIR", memory_url)  # the listener reads the settings of its process
    # The note ends with the link to the run's report page (mqjournal.reportlinks).
    assert outcome_note("mq_journal_maintenance", "r1") == (
        "failed before a plan was made: nothing was saved or deleted "
        "([run report](mqjournal/runs/mq_journal_maintenance/r1/report))"
    )
