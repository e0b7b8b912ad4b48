"""The plan job with Linux queue managers (#32): a Linux-only fleet planned by `mqjournal plan --linux-snapshots`, a
mixed fleet whose IBM i plan is the IBM i-only plan's, and Linux input the job refuses, naming the file.

On the tests' standing Spark Connect server; the rules themselves are held against the reference planner by
test_linux_spark_agrees_with_reference.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mqjournal.cli import main
from mqjournal.linuxmq.plan import Alert, ExtentAction, plan_queue_manager
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.planjob import PlanJobFailed, run_plan_connect
from mqjournal.planrows import PlanTotals
from mqjournal.snapshot import write_snapshots
from tests.linuxmq.test_snapshot import record
from tests.plan.builders import chain, names, snapshot

pytestmark = pytest.mark.e2e

AS_OF = datetime(2026, 12, 1, 13, 0, tzinfo=UTC)


def linux(**changes: object) -> LinuxSnapshot:
    """QM.ORDERS on mq-linux1, Archive mode: CURRLOG 12, RECLOG 11, MEDIALOG 3, ARCHLOG 1, extents 0 to 12."""
    return LinuxSnapshot.model_validate(record(**changes))


def stuck_history() -> list[LinuxSnapshot]:
    """Four collections of QM.STUCK: CURRLOG moves on, RECLOG stays on S0000011."""
    return [
        linux(
            qmgr="QM.STUCK",
            run_id=f"r{n}",
            collected_at=(datetime(2026, 12, 1, 9 + n, tzinfo=UTC)).isoformat(),
            current_extent=f"S{12 + n:07d}.LOG",
            media_extent=f"S{9 + n:07d}.LOG",
        )
        for n in range(4)
    ]


def ibmi_fleet() -> list:
    start = AS_OF - timedelta(hours=9)
    return [
        snapshot(chain(names(1, 5), start=start), oldest=names(1, 5)[2], run_id="r3"),
        snapshot(chain(names(99_998, 4), start=start, library="QMPAY"), qmgr="PAY", library="QMPAY", run_id="r3"),
    ]


# --- a Linux-only fleet ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def linux_only(tmp_path_factory, spark_connect) -> tuple[Path, int, str]:
    """`mqjournal plan --linux-snapshots` of a folder of runs: QM.ORDERS once, QM.STUCK four times."""
    root = tmp_path_factory.mktemp("linux-only")
    history = stuck_history()
    newest = history[-1].model_copy(update={"platform": "windows"})  # a host's platform does not change its plan
    write_linux_snapshots(root / "linux" / "run_id=r3" / "mq-linux1.jsonl", [linux(run_id="r3"), newest])
    for earlier in history[:-1]:
        write_linux_snapshots(root / "linux" / f"run_id={earlier.run_id}" / "mq-linux1.jsonl", [earlier])
    out = root / "out"
    argv = ["plan", "--linux-snapshots", str(root / "linux"), "--out", str(out), "--as-of", AS_OF.isoformat()]
    code = main([*argv, "--spark-connect", spark_connect])
    return out, code, ""


def test_mqjournal_plan_plans_a_linux_only_fleet(linux_only, capsys):
    out, code, _ = linux_only
    assert code == 0
    plans = read_linux_plan(out)
    assert [(p.host, p.qmgr) for p in plans] == [("mq-linux1", "QM.ORDERS"), ("mq-linux1", "QM.STUCK")]
    orders = plans[0]
    assert orders == plan_queue_manager(linux(run_id="r3"), proven=())
    assert orders.with_action(ExtentAction.ARCHIVE_THEN_RELEASE) == ["S0000001.LOG", "S0000002.LOG"]
    assert orders.with_action(ExtentAction.RELEASE) == []  # the job has no catalog: no copy is proven to it


def test_the_newest_snapshot_is_planned_and_the_earlier_ones_raise_the_stuck_alert(linux_only):
    out, _, _ = linux_only
    (stuck,) = read_linux_plan(out, {("mq-linux1", "QM.STUCK")})
    history = stuck_history()
    assert (stuck.run_id, stuck.current_extent) == ("r3", "S0000015.LOG")
    assert [kind for kind, _ in stuck.alerts] == [Alert.RESTART_STUCK]
    assert stuck == plan_queue_manager(history[-1], proven=(), history=history[:-1])


def test_a_linux_only_plan_writes_the_ibm_i_datasets_empty_with_their_columns_and_a_summary_of_zeros(linux_only, mixed):
    out, _, _ = linux_only
    for dataset in ("receivers", "queue_managers"):
        table = pq.read_table(out / dataset)
        assert table.num_rows == 0
        assert table.schema == pq.read_table(mixed / dataset).schema, dataset
    summary = PlanTotals.model_validate_json((out / "summary.json").read_text())
    assert (summary.queue_managers, summary.receivers, summary.actions, summary.alerts) == (0, 0, {}, {})


# --- a mixed fleet ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, spark_connect) -> Path:
    root = tmp_path_factory.mktemp("mixed")
    write_snapshots(root / "ibmi" / "snapshots.jsonl", ibmi_fleet())
    write_linux_snapshots(root / "linux" / "mq-linux1.jsonl", [linux()])
    # QM.GONE was collected once, long ago: history, not this run's.
    write_linux_snapshots(root / "linux-history" / "mq-linux1.jsonl", [EARLIER, linux(qmgr="QM.GONE", run_id="r0")])
    run_plan_connect(
        spark_connect,
        root / "ibmi",
        root / "out",
        history=None,
        policy_file=None,
        as_of=AS_OF,
        linux_snapshots=root / "linux",
        linux_history=[root / "linux-history"],
    )
    return root / "out"


EARLIER = linux(
    run_id="r0", collected_at=datetime(2026, 12, 1, 6, tzinfo=UTC).isoformat(), current_extent="S0000011.LOG"
)


@pytest.fixture(scope="module")
def ibmi_only(tmp_path_factory, spark_connect) -> Path:
    root = tmp_path_factory.mktemp("ibmi-only")
    write_snapshots(root / "ibmi" / "snapshots.jsonl", ibmi_fleet())
    # An earlier plan in the same folder had Linux queue managers: a plan without them must not leave theirs.
    (root / "out" / "linux_queue_managers").mkdir(parents=True)
    run_plan_connect(spark_connect, root / "ibmi", root / "out", history=None, policy_file=None, as_of=AS_OF)
    return root / "out"


def _sorted_rows(dataset: Path) -> list[dict]:
    return sorted(pq.read_table(dataset).to_pylist(), key=repr)


def test_a_mixed_plan_leaves_the_ibm_i_plan_as_an_ibm_i_only_plan_makes_it(mixed, ibmi_only):
    for dataset in ("receivers", "queue_managers"):
        assert pq.read_table(mixed / dataset).schema == pq.read_table(ibmi_only / dataset).schema
        assert _sorted_rows(mixed / dataset) == _sorted_rows(ibmi_only / dataset), dataset
    assert (mixed / "summary.json").read_text() == (ibmi_only / "summary.json").read_text()
    assert read_linux_plan(ibmi_only) == []
    assert not (ibmi_only / "linux_queue_managers").exists()


def test_a_linux_queue_manager_found_only_in_the_history_is_not_planned(mixed):
    assert read_linux_plan(mixed) == [plan_queue_manager(linux(), proven=(), history=[EARLIER])]


# --- input the job refuses -------------------------------------------------------------------------------------

GOOD = linux().model_dump_json()


def _with(**changes: object) -> str:
    return json.dumps(record(**changes))


def _without(key: str) -> str:
    line = record()
    del line[key]
    return json.dumps(line)


BAD_INPUTS = {
    # An IBM i record among the Linux ones: the other contract.
    "wrong_schema": ([GOOD, _with(schema="mqjournal.snapshot/v1", qmgr="QM.OTHER")], "schema is not"),
    "truncated": ([GOOD, GOOD[: len(GOOD) // 2]], "is not a valid JSON mqjournal.linux-snapshot/v1 record"),
    "extent_name": (
        [_with(extents=[{"name": "S12.LOG", "size_bytes": 1, "modified_at": None}])],
        "extent S12.LOG is not an extent name",
    ),
    "point_name": ([_with(restart_extent="S0000011.log")], "restart_extent S0000011.log is not an extent name"),
    # CURRLOG left out is not CURRLOG blank: the reader would plan it as a log without points.
    "missing_key": (["", _without("current_extent")], "keys missing: current_extent"),
    "two_versions": ([GOOD, _with(log_management="Manual")], "different records of one host, queue manager and run_id"),
    "platform": ([GOOD, _with(platform="hpux", qmgr="QM.OTHER")], "platform is not one of linux, aix, windows"),
}


@pytest.fixture(scope="module")
def refusals(tmp_path_factory, spark_connect) -> dict[str, tuple[PlanJobFailed, Path]]:
    root = tmp_path_factory.mktemp("refused")
    found = {}
    for case, (lines, _) in BAD_INPUTS.items():
        folder = root / case
        (folder / "linux").mkdir(parents=True)
        (folder / "linux" / "mq-linux1.jsonl").write_text("".join(line + "\n" for line in lines))
        with pytest.raises(PlanJobFailed) as failed:
            run_plan_connect(
                spark_connect,
                None,
                folder / "out",
                history=None,
                policy_file=None,
                as_of=AS_OF,
                linux_snapshots=folder / "linux",
            )
        found[case] = (failed.value, folder / "linux" / "mq-linux1.jsonl")
    return found


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_linux_input_the_plan_cannot_use_stops_it_naming_the_file_and_the_problem(refusals, case):
    failure, file = refusals[case]
    assert failure.returncode == 2, failure.stderr_tail
    assert str(file) in failure.stderr_tail
    assert BAD_INPUTS[case][1] in failure.stderr_tail
    assert not (file.parent.parent / "out" / "summary.json").exists()
    assert not (file.parent.parent / "out" / "linux_queue_managers").exists()


def test_a_refused_line_s_keys_are_named_with_its_line_number(refusals):
    failure, file = refusals["missing_key"]
    assert f"{file}:2 (run collect_1, mq-linux1/QM.ORDERS): keys missing: current_extent" in failure.stderr_tail
