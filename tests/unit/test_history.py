"""The plan reads only the earlier collections a rule looks at: found from folder listings, newest first."""

from __future__ import annotations

import os
from pathlib import Path

from mqjournal.history import partitions_needed, queue_manager_of

RUNS = 3


def collected(snapshots: Path, run: int, *files: str) -> Path:
    """Run `run`'s partition with the files named, it and each file written `run` hours after an epoch (a folder's
    partition is as new as the folder's time, an object store's as its newest file)."""
    partition = snapshots / f"run_id=scheduled__{run:04d}"
    partition.mkdir(parents=True)
    for name in files:
        (partition / name).write_text("{}\n")
        os.utime(partition / name, (run * 3600, run * 3600))
    os.utime(partition, (run * 3600, run * 3600))
    return partition


def runs_of(partitions: list[Path]) -> list[int]:
    return [int(p.name.rsplit("__", 1)[1]) for p in partitions]


def test_a_file_names_its_queue_manager():
    assert queue_manager_of("ibmi-prod1__QMPAYROLL.jsonl") == ("ibmi-prod1", "QMPAYROLL")
    assert queue_manager_of("snapshots.jsonl") is None
    assert queue_manager_of("ibmi1__QMTEST.jsonl.tmp") is None


def test_a_year_of_weekly_runs_reads_only_the_newest_collections_of_each_queue_manager(tmp_path):
    snapshots = tmp_path / "snapshots"
    for run in range(1, 366):
        collected(snapshots, run, "ibmi1__QMA.jsonl", *(["ibmi2__QMB.jsonl"] if run <= 5 else []))
    current = collected(snapshots, 366, "ibmi1__QMA.jsonl", "ibmi2__QMB.jsonl")
    # QMA's three newest, and QMB's: collected last in runs 3 to 5, so the walk goes that far and no further.
    assert runs_of(partitions_needed(snapshots, current, RUNS)) == [365, 364, 363, 5, 4, 3]


def test_a_queue_manager_of_another_run_does_not_make_the_walk_longer(tmp_path):
    snapshots = tmp_path / "snapshots"
    for run in range(1, 30):
        collected(snapshots, run, "ibmi1__QMA.jsonl", "ibmi9__QMOTHER.jsonl")
    current = collected(snapshots, 30, "ibmi1__QMA.jsonl")
    assert runs_of(partitions_needed(snapshots, current, RUNS)) == [29, 28, 27]


def test_a_partition_that_does_not_say_what_it_holds_is_read(tmp_path):
    snapshots = tmp_path / "snapshots"
    collected(snapshots, 1, "ibmi1__QMA.jsonl")
    collected(snapshots, 2, "snapshots.jsonl")  # `mqjournal collect`: the whole fleet in one file
    collected(snapshots, 3, "ibmi9__QMOTHER.jsonl")
    current = collected(snapshots, 4, "ibmi1__QMA.jsonl")
    assert runs_of(partitions_needed(snapshots, current, RUNS)) == [2, 1]


def test_a_current_run_without_named_files_reads_every_earlier_run(tmp_path):
    snapshots = tmp_path / "snapshots"
    for run in range(1, 4):
        collected(snapshots, run, "ibmi1__QMA.jsonl")
    current = collected(snapshots, 4, "snapshots.jsonl")
    assert runs_of(partitions_needed(snapshots, current, RUNS)) == [1, 2, 3]
