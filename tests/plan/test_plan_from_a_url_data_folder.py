"""The Spark plan job reads a data folder given as a URL: the maintenance DAG's plan submission, for a `file://` data
folder opened as an ObjectStoragePath, run by spark-submit as SparkSubmitOperator runs it, and its plan read back
through the same path; the run's Linux queue managers planned in the same job (#32)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mqjournal import planjob, rules
from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.xcom import MaintenanceTarget
from mqjournal.linuxmq.plan import plan_queue_manager
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.planrows import read_receivers
from mqjournal.policy import Policy
from mqjournal.settings import Settings
from mqjournal.snapshot import Snapshot, write_snapshots
from tests.linuxmq.test_snapshot import record
from tests.plan.builders import chain, names, snapshot

pytestmark = pytest.mark.e2e

MASTER = "local[1]"
POLICY = Policy(stuck_after_runs=2)
TARGET = MaintenanceTarget(
    host="ibmi1",
    qmgr="TEST",
    library="QMTEST",
    journal="AMQAJRN",
    instance="A",
    journal_queue=["QMTEST", "AMQAJRNMSG"],
    utc_offset_minutes=0,
)


def collections(now: datetime) -> list[Snapshot]:
    """Two runs whose startup and media recovery points stay on AMQA000001 while the attached receiver moves on:
    with stuck_after_runs=2 the plan raises the STUCK alerts only if it read the earlier run too."""
    start = now - timedelta(hours=7)
    return [
        snapshot(chain(names(1, count), start=start), oldest=names(1, 1)[0], run_id=run_id)
        for run_id, count in (("r1", 4), ("r2", 6))
    ]


def spark_submit(submission) -> subprocess.CompletedProcess[str]:
    """What SparkSubmitOperator runs with the submission's application, --py-files, conf and environment."""
    conf = [arg for key, value in submission.conf.items() for arg in ("--conf", f"{key}={value}")]
    command = [
        str(planjob.spark_submit_executable()),
        *("--master", MASTER, "--name", planjob.APP_NAME, "--py-files", submission.py_files),
        *conf,
        str(planjob.application_path()),
        *submission.args,
    ]
    env = planjob.submit_environment(MASTER) | submission.env
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)


def test_the_plan_job_reads_its_snapshots_and_history_from_a_file_url_and_writes_the_plan_there(tmp_path: Path):
    settings = Settings.from_env(
        {"AIRFLOW_HOME": str(tmp_path / "airflow"), "MQJOURNAL_DATA_DIR": f"file://{tmp_path}/shared"}
    )
    written = collections(datetime.now(UTC))
    for s in written:
        write_snapshots(settings.snapshot_dir(s.run_id) / f"{s.host}__{s.qmgr_library}.jsonl", [s])
    linux = [
        LinuxSnapshot.model_validate(record(run_id=run_id, collected_at=s.collected_at.isoformat(), current_extent=c))
        for run_id, s, c in (("r1", written[0], "S0000012.LOG"), ("r2", written[1], "S0000013.LOG"))
    ]
    for s in linux:
        write_linux_snapshots(settings.linux_snapshot_dir(s.run_id) / f"{s.host}.jsonl", [s])

    submission = steps.plan_submission(settings, "r2", POLICY, MASTER)
    args = submission.args
    assert args[args.index("--snapshots") + 1] == f"file://{tmp_path}/shared/snapshots/run_id=r2"
    assert args[args.index("--history") + 1] == f"file://{tmp_path}/shared/snapshots/run_id=r1"
    assert args[args.index("--out") + 1] == f"file://{tmp_path}/shared/plans/run_id=r2"
    assert args[args.index("--linux-snapshots") + 1] == f"file://{tmp_path}/shared/linux-snapshots/run_id=r2"
    assert args[args.index("--linux-history") + 1] == f"file://{tmp_path}/shared/linux-snapshots/run_id=r1"
    # The package spark-submit ships stays local: $AIRFLOW_HOME/mqjournal, the data folder being a URL.
    assert Path(submission.py_files).parent == tmp_path / "airflow" / "mqjournal" / "dist"

    completed = spark_submit(submission)
    assert completed.returncode == 0, planjob.output_tail(completed.stdout + completed.stderr)

    summary = steps.summarize(settings.plan_dir("r2"), [TARGET])
    as_of = datetime.fromisoformat(args[args.index("--as-of") + 1])
    reference = rules.plan_fleet(written, as_of=as_of, policy=POLICY)
    (qm,) = summary.queue_managers
    assert {"STARTUP_RECOVERY_STUCK", "MEDIA_RECOVERY_STUCK"} <= set(qm.alerts)
    assert sorted(qm.alerts) == sorted(reference.queue_managers[0].alerts)
    planned = read_receivers(settings.plan_dir("r2"), {TARGET.ref})
    assert sorted((r.receiver, r.action, r.reason) for r in planned) == sorted(
        (r.receiver, r.action, r.reason) for r in reference.receivers
    )
    assert (tmp_path / "shared" / "plans" / "run_id=r2" / "summary.json").is_file()
    assert read_linux_plan(settings.plan_dir("r2")) == [plan_queue_manager(linux[1], proven=(), history=linux[:1])]
