"""One queue manager's plan in the Spark job (mqjournal.sparkplan.grouped): the reference planner over the lines of
its window, each read by the reference's reader; and the job's output columns derived from the plan rows' models."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from mqjournal.policy import Policy
from mqjournal.rules import plan_queue_manager
from mqjournal.sparkplan.grouped import CONTRACT, RECEIVER, RECEIVER_PROBLEM, fingerprint, plan_lines, window_of
from tests.plan.builders import chain, names, snapshot

POLICY = Policy(stuck_after_runs=3)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _line(record: object, run_id: str = "r1", file: str = "file:/in/a.jsonl") -> dict[str, object]:
    text = record if isinstance(record, str) else json.dumps(record)
    collected_at = datetime.fromisoformat(json.loads(text)["collected_at"])
    return {"host": "ibmi1", "qmgr": "TEST", "qmgr_library": "QMTEST", "run_id": run_id,
            "collected_us": (collected_at - EPOCH) // timedelta(microseconds=1), "value": text,
            "source_file": file}  # fmt: skip


def test_a_queue_manager_is_planned_by_the_reference_planner_from_its_window_once_per_snapshot():
    older = snapshot(chain(names(1, 4)), oldest=names(2, 1)[0], run_id="r1")
    current = snapshot(chain(names(1, 5)), oldest=names(3, 1)[0], run_id="r2")
    current = current.model_copy(update={"collected_at": older.collected_at + timedelta(hours=1)})
    as_of = current.collected_at + timedelta(hours=1)
    lines = [_line(current.model_dump_json(), "r2"), _line(older.model_dump_json()), _line(older.model_dump_json())]

    [row] = plan_lines(lines, policy=POLICY, as_of=as_of)

    qm, receivers = plan_queue_manager(current, [older, current], as_of=as_of, policy=POLICY)
    assert row["found"] == 2  # the identical copy of r1 is one snapshot
    assert [PlannedQueueManager.model_validate(q) for q in row["queue_manager"]] == [qm]
    assert [PlannedReceiver.model_validate(r) for r in row["receivers"]] == receivers
    assert "problem" not in row


def test_the_window_is_the_newest_snapshots_by_time_then_run_id_each_from_its_first_file():
    base = snapshot(chain(names(1, 3)), run_id="r0")

    def at(run_id: str, hours: int, file: str = "file:/in/a.jsonl") -> dict[str, object]:
        moved = base.model_copy(update={"run_id": run_id, "collected_at": base.collected_at + timedelta(hours=hours)})
        return _line(moved.model_dump_json(), run_id, file)

    copy_later_file, copy_first_file = at("r5", 5, "file:/in/b.jsonl"), at("r5", 5, "file:/in/a.jsonl")
    lines = [at("r1", 1), copy_later_file, at("r4", 4), at("r2", 2), at("r3", 4), copy_first_file]

    window = window_of(lines, 3)

    # r5 (newest), then the tie at 4 hours to the greater run_id (r4 before r3); r2 and r1 are older than the window.
    assert [line["run_id"] for line in window] == ["r5", "r4", "r3"]
    assert window[0] is copy_first_file
    assert window_of(lines, 0) == [copy_first_file]  # the current snapshot always
    assert fingerprint(window[0]) == fingerprint(copy_later_file) != fingerprint(window[1])
    [row] = plan_lines(lines, policy=POLICY, as_of=base.collected_at + timedelta(hours=6))
    assert row["found"] == 3 and row["fingerprint"] == sum(fingerprint(line) for line in window)


def _broken(change) -> dict[str, object]:
    record = json.loads(snapshot(chain(names(1, 3))).model_dump_json())
    change(record)
    return record


@pytest.mark.parametrize(
    ("change", "kind", "words"),
    [
        (lambda r: r["receivers"][1].pop("next_library"), CONTRACT, "receivers[1].next_library missing"),
        (lambda r: r["receivers"][0].update(colour="blue"), CONTRACT, "receivers[0].colour"),
        (lambda r: r.pop("media_recovery"), CONTRACT, "media_recovery missing"),
        (lambda r: r["receivers"][0].pop("size_bytes"), RECEIVER, RECEIVER_PROBLEM),
        (lambda r: r["receivers"][2].update(detached_at="2026-02-29T10:00:00Z"), RECEIVER, RECEIVER_PROBLEM),
        (lambda r: r.update(receivers=None), RECEIVER, "receivers is missing"),
    ],
)
def test_a_line_that_is_not_a_complete_record_is_refused_in_the_job_s_words_and_nothing_is_planned(change, kind, words):
    good = snapshot(chain(names(1, 3)), run_id="r0")
    lines = [_line(good.model_dump_json(), "r0"), _line(_broken(change), file="file:/in/b.jsonl")]

    rows = plan_lines(lines, policy=POLICY, as_of=good.collected_at)

    assert len(rows) == 1 and "queue_manager" not in rows[0]
    assert rows[0]["problem_kind"] == kind and words in rows[0]["problem"]
    assert (rows[0]["problem_file"], rows[0]["problem_line"]) == ("file:/in/b.jsonl", lines[1]["value"])


def test_the_output_columns_are_the_models_fields_with_the_types_readers_always_got():
    from pyspark.sql import types as T

    from mqjournal.sparkplan.schema import QUEUE_MANAGERS_SCHEMA, RECEIVERS_SCHEMA

    receivers = {f.name: f for f in RECEIVERS_SCHEMA.fields}
    queue_managers = {f.name: f for f in QUEUE_MANAGERS_SCHEMA.fields}
    assert list(receivers) == list(PlannedReceiver.model_fields)
    assert list(queue_managers) == list(PlannedQueueManager.model_fields)
    assert receivers["chain_position"].dataType == T.IntegerType() and receivers["chain_position"].nullable
    assert receivers["first_sequence"].dataType == receivers["last_sequence"].dataType == T.DecimalType(38, 0)
    assert receivers["size_bytes"].dataType == T.LongType() and not receivers["size_bytes"].nullable
    assert receivers["action"].dataType == T.StringType()
    assert receivers["saved_at"].dataType == T.TimestampType() and receivers["saved_at"].nullable
    assert queue_managers["alerts"].dataType == T.ArrayType(T.StringType())
    assert queue_managers["blocked"].dataType == T.BooleanType()
    assert queue_managers["holding_point"].dataType == T.StringType() and queue_managers["holding_point"].nullable


def test_a_window_found_again_with_other_snapshots_of_the_same_count_is_the_input_changing():
    from mqjournal.sparkplan.checks import PlanInputError, refuse_changed

    refuse_changed(4, 4, fingerprint=123, expected_fingerprint=123)
    with pytest.raises(
        PlanInputError,
        match="the input changed while it was read: the 4 newest snapshots read again are not those first read",
    ):
        refuse_changed(4, 4, fingerprint=124, expected_fingerprint=123)
    with pytest.raises(PlanInputError, match="3 of 4"):
        refuse_changed(3, 4, fingerprint=123, expected_fingerprint=123)
