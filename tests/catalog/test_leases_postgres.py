"""SSH session leases on PostgreSQL between separate worker processes, as Airflow's workers take them: never more
holders at once than a host has slots, and every worker gets through."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.airflow.skewed_workers import holding_slot, try_slot
from tests.catalog.databases import new_postgres_database

# Under xdist (make test-fast) these run in one worker, which starts the one PostgreSQL server they share.
pytestmark = pytest.mark.xdist_group("postgresql")

# One worker: waits for the start signal so that all start together, then takes a lease `rounds` times, writing when
# it held it (CLOCK_MONOTONIC, the same clock for every process on this machine). The times are taken inside the
# lease, so the intervals written lie within the real holds: overlapping ones mean overlapping holds.
_WORKER = """
import pathlib, sys, time
from mqjournal.airflow.leases import host_session_slot

url, slots, rounds, go, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), pathlib.Path(sys.argv[4]), sys.argv[5]
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
held = []
for _ in range(rounds):
    with host_session_slot(url, "ibmi1", slots=slots, wait=30, poll=0.005) as slot:
        entered = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        time.sleep(0.02)  # the SSH session's work
        left = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    held.append(f"{slot} {entered} {left}")
    time.sleep(0.005)  # what a task does between two sessions
pathlib.Path(out).write_text("\\n".join(held))
"""


def _hold_leases(
    url: str, tmp_path: Path, *, workers: int, slots: int, rounds: int
) -> list[list[tuple[int, int, int]]]:
    """Each worker's holds (slot, entered, left), after all of them ran at the same time."""
    go = tmp_path / "go"
    outs = [tmp_path / f"worker{i}.txt" for i in range(workers)]
    running = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, url, str(slots), str(rounds), str(go), str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for out in outs
    ]
    try:
        for worker in running:
            assert worker.stdout is not None and worker.stdout.readline().strip() == "ready", worker.stderr
        go.touch()
        deadline = time.monotonic() + 60
        errors = [worker.communicate(timeout=max(1.0, deadline - time.monotonic()))[1] for worker in running]
    finally:
        for worker in running:
            worker.kill()
    assert [w.returncode for w in running] == [0] * workers, errors
    return [[tuple(map(int, line.split())) for line in out.read_text().splitlines()] for out in outs]


def _most_at_once(holds: list[tuple[int, int, int]]) -> int:
    # A hold that ends at the instant another begins does not overlap it: ends sort first.
    events = sorted([(left, -1) for _, _, left in holds] + [(entered, 1) for _, entered, _ in holds])
    at_once = most = 0
    for _, step in events:
        at_once += step
        most = max(most, at_once)
    return most


def _overlap(a: list[tuple[int, int, int]], b: list[tuple[int, int, int]]) -> bool:
    """Whether the two workers were running at the same time (so one waited for the other)."""
    return min(h[1] for h in a) < max(h[2] for h in b) and min(h[1] for h in b) < max(h[2] for h in a)


def test_two_workers_never_hold_a_hosts_one_slot_at_once(postgres_url, tmp_path):
    first, second = _hold_leases(new_postgres_database(postgres_url), tmp_path, workers=2, slots=1, rounds=25)

    assert len(first) == len(second) == 25  # both got through
    assert _overlap(first, second)  # they contended for the slot
    assert _most_at_once(first + second) == 1


def test_three_workers_hold_a_hosts_two_slots_at_most_two_at_once(postgres_url, tmp_path):
    workers = _hold_leases(new_postgres_database(postgres_url), tmp_path, workers=3, slots=2, rounds=20)

    assert [len(w) for w in workers] == [20, 20, 20]
    every = [hold for worker in workers for hold in worker]
    assert _most_at_once(every) == 2  # two at once happened, three never
    for slot in (0, 1):
        assert _most_at_once([h for h in every if h[0] == slot]) == 1  # a slot has one holder at a time


@pytest.mark.parametrize("skew", [600.0, -600.0], ids=["ahead", "behind"])
def test_a_worker_whose_clock_is_ten_minutes_wrong_opens_no_third_session_on_a_host_capped_at_two(postgres_url, skew):
    url = new_postgres_database(postgres_url)
    with holding_slot(url, "ibmi1", skew=0, slots=2), holding_slot(url, "ibmi1", skew=skew, slots=2):
        assert try_slot(url, "ibmi1", skew=skew, slots=2) == "busy"
        assert try_slot(url, "ibmi1", skew=0, slots=2) == "busy"
    assert try_slot(url, "ibmi1", skew=skew, slots=2) == "slot 0"
