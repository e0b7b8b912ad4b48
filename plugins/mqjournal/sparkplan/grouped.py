"""One queue manager's plan inside the Spark job: its window's lines in, its plan rows out, by the reference planner.

The Spark job partitions the lines of the snapshots it plans from by queue manager, sorted
(`mqjournal.sparkplan.job`), and `planner(...)`'s function (`mapInArrow`) plans each queue manager's lines as they
come: the rules run once, as `mqjournal.rules`, never in a second form. Each line is read by the reference's own
reader (`snapshot.parse_line`: the model, and every key of the contract present), so a record the plan reads is
checked whole, receivers and all.

No pyspark here: the executors' Python workers import this module for every task, and what they import is cheap.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mqjournal.planrows import REF_COLUMNS
from mqjournal.policy import Policy
from mqjournal.rules import plan_queue_manager
from mqjournal.snapshot import Snapshot, parse_line

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]  # pyarrow ships no type information

# The columns of the lines, as the job selects them.
LINE_COLUMNS = (*REF_COLUMNS, "run_id", "collected_us", "value", "source_file")

# Between the parts of an identity in its fingerprint: a character no name, run id or number holds.
IDENTITY_SEPARATOR = "\x1f"

# Why a line is refused, in the job's two ways of saying it (mqjournal.sparkplan.checks): a receiver that cannot be
# planned from (the first read's words for it, `refuse_bad_records`), or a record that is not the contract's
# (`refuse_incomplete`, naming the line and the field).
RECEIVER = "receiver"
CONTRACT = "contract"

# The receiver fields the job has always checked as unusable when absent or wrong (checks.receiver_problem).
_RECEIVER_CHECKED = frozenset({"name", "library", "size_bytes", "status", "attached_at", "detached_at", "saved_at"})
RECEIVER_PROBLEM = "a receiver lacks name, library, size_bytes or a known status, or has a bad time"
RECEIVERS_MISSING = "receivers is missing"


def problem_kind(line: str) -> tuple[str, str | None]:
    """Which of the two ways a refused line is named, and the first read's words when it is a receiver's."""
    try:
        Snapshot.model_validate_json(line)
    except ValidationError as exc:
        for error in exc.errors():
            loc = error["loc"]
            if not loc or loc[0] != "receivers" or error["type"] == "extra_forbidden":
                continue
            if len(loc) == 1:
                return RECEIVER, RECEIVERS_MISSING
            if len(loc) == 2 or loc[2] in _RECEIVER_CHECKED:
                return RECEIVER, RECEIVER_PROBLEM
    return CONTRACT, None


def window_of(lines: Iterable[dict[str, Any]], runs: int) -> list[dict[str, Any]]:
    """The lines of one queue manager's window: its newest `runs` snapshots (at least the current one), by
    collected_at, ties to the greatest run_id, as the first read ranks them; of copies of one snapshot, the one in
    the first file (by name). `lines` may hold older snapshots too (the window's files hold other runs)."""
    first_copy: dict[tuple[int, str], dict[str, Any]] = {}
    for line in lines:
        if line["collected_us"] is None:
            continue  # not a time (the first read refused such a record: the file changed since; the count says so)
        identity = (line["collected_us"], line["run_id"])
        seen = first_copy.get(identity)
        if seen is None or line["source_file"] < seen["source_file"]:
            first_copy[identity] = line
    return [first_copy[identity] for identity in sorted(first_copy, reverse=True)[: max(1, runs)]]


def fingerprint(line: dict[str, Any]) -> int:
    """The CRC-32 of a line's identity, as the first read computes it (Spark's crc32 of concat_ws)."""
    parts = [*(line[name] for name in REF_COLUMNS), line["run_id"], str(line["collected_us"])]
    return zlib.crc32(IDENTITY_SEPARATOR.join(parts).encode("utf-8"))


def plan_lines(lines: Iterable[dict[str, Any]], *, policy: Policy, as_of: datetime) -> list[dict[str, Any]]:
    """The rows of one queue manager: its plan (`queue_manager`, a list of its one row; `receivers`; `found`, the
    snapshots of its window read, and their `fingerprint`), or one row per line of its window that is not a complete
    v1 record (`problem`...), and then no plan."""
    window = window_of(lines, policy.stuck_after_runs)
    newest_first: list[Snapshot] = []
    problems = []
    for line in window:
        snapshot, problem = parse_line(line["value"])
        if snapshot is None:
            kind, words = problem_kind(line["value"])
            problems.append(
                {
                    **{name: line[name] for name in (*REF_COLUMNS, "run_id")},
                    "problem": words or problem,
                    "problem_kind": kind,
                    "problem_line": line["value"],
                    "problem_file": line["source_file"],
                }
            )
            continue
        newest_first.append(snapshot)
    if problems:
        return problems
    if not newest_first:
        return []
    history = newest_first[::-1]  # window_of's order, oldest first: one line per snapshot, copies left out there
    queue_manager, receivers = plan_queue_manager(history[-1], history, as_of=as_of, policy=policy)
    return [
        {
            **{name: getattr(queue_manager, name) for name in REF_COLUMNS},
            "run_id": queue_manager.run_id,
            "queue_manager": [queue_manager.model_dump()],
            "receivers": [receiver.model_dump() for receiver in receivers],
            "found": len(window),
            "fingerprint": sum(fingerprint(line) for line in window),
        }
    ]


# Rows handed back to Spark at a time: a batch of some hundred queue managers' plans, not one batch per queue manager.
_ROWS_PER_BATCH = 500


def planner(
    *, policy: Policy, as_of: datetime, schema: pa.Schema
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The Arrow function over one partition of the window's lines (`LINE_COLUMNS`), sorted by queue manager: each
    queue manager's lines, which follow one another, planned by `plan_lines`, the rows given back as `schema` (the
    job's output schema in Arrow). The policy and the planning time travel in its closure.

    One function call per partition, not per queue manager (a grouped UDF's): Spark's per-group exchange with the
    Python worker cost more than planning the group (2,000 queue managers: 10.6 task-s in the stage for 3.2 s of
    planning, bench/README.md)."""

    def plan(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        lines = (line for batch in batches for line in batch.select(list(LINE_COLUMNS)).to_pylist())
        planned: list[dict[str, Any]] = []
        for _, group in itertools.groupby(lines, key=_key):
            planned.extend(plan_lines(group, policy=policy, as_of=as_of))
            if len(planned) >= _ROWS_PER_BATCH:
                yield pa.RecordBatch.from_pylist(planned, schema=schema)
                planned = []
        if planned:
            yield pa.RecordBatch.from_pylist(planned, schema=schema)

    return plan


def _key(line: dict[str, Any]) -> tuple[str, ...]:
    return tuple(line[name] for name in REF_COLUMNS)
