"""The Spark job and the reference planner produce the same plan on random fleets (hypothesis).

The job runs on the tests' standing Spark Connect server: what is compared is the rules, not the launcher
(tests/plan/test_spark_job.py runs the job through spark-submit)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqjournal.planjob import run_plan_connect
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from mqjournal.rules import as_rows, plan_fleet
from mqjournal.snapshot import read_snapshots, write_snapshots
from tests.plan.strategies import fleets, policies, site_policies

pytestmark = pytest.mark.e2e

# Every column of the plan rows; collected_at is the Spark job's own tests' (test_spark_job), as it always was.
QM_COLUMNS = tuple(c for c in PlannedQueueManager.model_fields if c != "collected_at")
RECEIVER_COLUMNS = tuple(PlannedReceiver.model_fields)


def _comparable(value: object) -> object:
    """Lists as tuples, times as UTC instants (Parquet keeps no offset), exact decimals as ints."""
    if isinstance(value, list | tuple):
        return tuple(value)
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    if isinstance(value, Decimal):
        return int(value)
    return value


def normalise(rows: list[dict], columns: tuple[str, ...]) -> list[tuple]:
    return sorted((tuple(_comparable(r[c]) for c in columns) for r in rows), key=repr)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    parts=st.lists(fleets(max_queue_managers=4), min_size=15, max_size=25),
    policy=policies,
    hours_later=st.integers(0, 30),
)
def test_the_spark_job_and_the_reference_planner_agree(tmp_path_factory, spark_connect, parts, policy, hours_later):
    _agree(tmp_path_factory, spark_connect, parts, policy, hours_later)


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    parts=st.lists(fleets(max_queue_managers=4), min_size=15, max_size=25),
    policy=site_policies,
    hours_later=st.integers(0, 30),
)
def test_the_two_planners_agree_with_the_site_s_backup(tmp_path_factory, spark_connect, parts, policy, hours_later):
    # backup: site (section 3.1): the save ages around site_save_min_age_hours, saves while attached, none at all.
    _agree(tmp_path_factory, spark_connect, parts, policy, hours_later)


def _agree(tmp_path_factory, spark_connect, parts, policy, hours_later):
    # Each part is its own little fleet; distinct host names keep their queue managers apart in one input.
    snapshots = [s.model_copy(update={"host": f"{s.host}-{i}"}) for i, part in enumerate(parts) for s in part]
    work: Path = tmp_path_factory.mktemp("agree")
    write_snapshots(work / "in" / "snapshots.jsonl", snapshots)
    # Both read the same file, so both see the same (JSON round-tripped) values.
    snapshots = list(read_snapshots(work / "in" / "snapshots.jsonl"))
    as_of = max(s.collected_at for s in snapshots) + timedelta(hours=hours_later)

    policy_file = work / "policy.json"
    policy_file.write_text(policy.model_dump_json())
    summary = run_plan_connect(
        spark_connect, work / "in", work / "out", history=None, policy_file=policy_file, as_of=as_of
    )

    reference = plan_fleet(snapshots, as_of=as_of, policy=policy)
    qms, receivers = as_rows(reference)
    spark_qms = pq.read_table(work / "out" / "queue_managers").to_pylist()
    spark_receivers = pq.read_table(work / "out" / "receivers").to_pylist()
    assert normalise(spark_receivers, RECEIVER_COLUMNS) == normalise(receivers, RECEIVER_COLUMNS)
    assert normalise(spark_qms, QM_COLUMNS) == normalise(qms, QM_COLUMNS)
    expected = reference.summary()
    for key in ("queue_managers", "blocked_queue_managers", "receivers", "actions", "alerts", "bytes_freed"):
        assert getattr(summary, key) == getattr(expected, key), key
