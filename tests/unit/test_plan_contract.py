"""The plan's contract (mqjournal.planrows): one model per row, the Spark job's columns are its fields, every field
says what it means, and a queue manager is named one way."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mqjournal import rules
from mqjournal.planrows import (
    REF_COLUMNS,
    PlannedQueueManager,
    PlannedReceiver,
    QueueManagerRef,
    read_queue_managers,
    read_receivers,
)
from mqjournal.policy import Policy
from tests.plan.builders import chain, names, snapshot


def test_the_spark_jobs_columns_are_the_rows_fields_in_their_order():
    schema = pytest.importorskip("mqjournal.sparkplan.schema")
    assert list(PlannedReceiver.model_fields) == schema.RECEIVERS_COLUMNS
    assert list(PlannedQueueManager.model_fields) == schema.QUEUE_MANAGERS_COLUMNS
    assert schema.KEY == list(REF_COLUMNS) == ["host", "qmgr", "qmgr_library"]


@pytest.mark.parametrize("model", [PlannedReceiver, PlannedQueueManager, QueueManagerRef])
def test_every_field_says_what_it_means_to_an_admin(model):
    assert [name for name, field in model.model_fields.items() if not field.description] == []


def test_a_queue_manager_has_one_key_and_one_label():
    ref = QueueManagerRef(host="ibmi-prod1", qmgr="PAYROLL", library="QMPAYROLL")
    assert (ref.key, ref.label) == ("ibmi-prod1/PAYROLL/QMPAYROLL", "ibmi-prod1/PAYROLL")
    assert QueueManagerRef.parse(ref.key) == ref
    assert ref.model_dump() == ref.key  # in XCom and JSON it is its key, as the steps' values always named it


def test_the_plan_reads_back_as_the_reference_planner_made_it(tmp_path: Path):
    fleet = [
        snapshot(chain(names(1, 6), saved=tuple(names(1, 3))), oldest=names(4, 1)[0]),
        snapshot(chain(names(1, 4), library="QMOTHER"), oldest=names(2, 1)[0], host="ibmi2", library="QMOTHER"),
    ]
    plan = rules.plan_fleet(fleet, as_of=fleet[0].collected_at, policy=Policy())
    for name, rows in zip(("queue_managers", "receivers"), rules.as_rows(plan), strict=True):
        (tmp_path / name).mkdir()
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / name / "part-0.parquet")

    assert read_queue_managers(tmp_path) == plan.queue_managers
    assert read_receivers(tmp_path) == plan.receivers
    other = plan.queue_managers[0].ref
    assert [q.ref for q in read_queue_managers(tmp_path, {other})] == [other]
    assert {r.ref for r in read_receivers(tmp_path, {other})} == {other}


def test_a_plan_written_before_the_newer_columns_still_reads():
    older = {
        "host": "ibmi1", "qmgr": "TEST", "qmgr_library": "QMTEST", "oldest_needed": None, "blocked": False,
        "block_reason": None, "alerts": [], "receivers_to_save": 0, "bytes_to_save": 0, "receivers_to_delete": 0,
        "bytes_to_delete": 0, "bytes_freed": 0, "chain_length": 1, "oldest_needed_age_seconds": None,
        "collected_at": "2026-11-20T07:00:00", "run_id": "r1",
    }  # fmt: skip
    q = PlannedQueueManager.model_validate(older)
    assert q.holding_point is None and q.utc_offset_minutes is None and q.recovery_points == ""
    assert q.collected_at.utcoffset() is not None  # Parquet's naive times are UTC
