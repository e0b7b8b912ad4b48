"""The Spark plan of Linux queue managers and the reference planner (linuxmq/plan.py) agree on random fleets
(hypothesis): every decision, reason, alert and log fact of every queue manager, read back by `read_linux_plan`.

The job has no catalog, so the reference is asked with no proven copies. Each example batches many queue managers
(distinct hosts and names) into one plan on the tests' standing Spark Connect server, so that a few examples cover
the rules: Manual, Automatic and Archive; R extents; ARCHLOG blank or set; the 9,999,999 wrap; circular and
replicated logs; missing and unorderable log points; RECLOG and MEDIALOG that stay or move over up to five runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqjournal.linuxmq.extents import EXTENT_NUMBERS, LogManagement
from mqjournal.linuxmq.plan import STUCK_AFTER_RUNS, plan_queue_manager
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.linuxmq.snapshot import (
    LinuxSnapshot,
    LogExtent,
    MediaImages,
    read_linux_snapshots,
    write_linux_snapshots,
)
from mqjournal.planjob import run_plan_connect

pytestmark = pytest.mark.e2e

N = EXTENT_NUMBERS
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
ZONES = (UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30)))
MIB = 2**20

# Made once (a strategy made inside a draw is validated at every draw).
LOG_TYPES = st.sampled_from(["LINEAR"] * 8 + ["CIRCULAR", "REPLICATED"])
MANAGEMENTS = st.sampled_from(list(LogManagement))
STARTS = st.sampled_from([0, 3, 40, 5_000_000, N - 1, N - 4, N - 12])  # some logs wrap past 9,999,999
RUNS = st.sampled_from([1, 2, STUCK_AFTER_RUNS + 1, STUCK_AFTER_RUNS + 2])  # the stuck alerts need 4
WRITTEN = st.sampled_from([0, 0, 1, 2, 3])  # extents CURRLOG moves on between runs (0: nothing written)
FOLLOWS = st.sampled_from([False, False, True])  # whether RECLOG or MEDIALOG moves up with the log
BEHIND = st.integers(0, 6)
SIZES = st.sampled_from([0, 4096, 16 * MIB, 3 * 2**31])  # the last beyond a 32-bit int
# What the status said of the log points: mostly as the queue manager keeps them, now and then no answer or one
# the planner cannot order.
ODDITIES = st.sampled_from(["none"] * 20 + ["missing", "restart_ahead", "media_r", "current_r", "media_far"])
ARCHLOG = st.sampled_from([None, None, 0, 3, 9, 16])  # extents behind CURRLOG, or blank
SPAN = st.integers(0, 14)
AHEAD = st.integers(0, 2)
R_EXTENTS = st.lists(st.integers(-3, 10), max_size=3)
HOURS = st.sampled_from([0, 1, 1, 6])  # 0: collected the same moment, ordered by run_id
ZONE = st.sampled_from(ZONES)
KEEP_LISTED = st.lists(st.booleans(), min_size=40, max_size=40)


def name(number: int, kind: str = "S") -> str:
    return f"{kind}{number % N:07d}.LOG"


@st.composite
def queue_manager_runs(draw, host: str, qmgr: str) -> list[LinuxSnapshot]:
    """One queue manager's collections, oldest first: CURRLOG moves on (or not), RECLOG and MEDIALOG stay or follow,
    and each collection lists the extents around them."""
    log_type, management = draw(LOG_TYPES), draw(MANAGEMENTS)
    current = draw(STARTS)
    restart = current - draw(BEHIND)
    media = restart - draw(BEHIND)
    at = T0 + timedelta(minutes=draw(st.integers(0, 59)))
    runs = []
    for run in range(draw(RUNS)):
        if run:
            current += draw(WRITTEN)
            at += timedelta(hours=draw(HOURS))
            if draw(FOLLOWS):
                restart = current - draw(BEHIND)
            if draw(FOLLOWS):
                media = min(restart, current - draw(BEHIND))
        points = {"current_extent": name(current), "restart_extent": name(restart), "media_extent": name(media)}
        oddity = draw(ODDITIES)
        if oddity == "missing":
            points[draw(st.sampled_from(sorted(points)))] = None
        elif oddity == "restart_ahead":
            points["restart_extent"] = name(current + 1 + draw(BEHIND))
        elif oddity == "media_r":
            points["media_extent"] = name(media, "R")
        elif oddity == "current_r":
            points["current_extent"] = name(current, "R")
        elif oddity == "media_far":
            points["media_extent"] = name(current - N // 2)
        archlog = draw(ARCHLOG)
        span, ahead = draw(SPAN), draw(AHEAD)
        listed = [
            n for n, keep in zip(range(current - span, current + ahead + 1), draw(KEEP_LISTED), strict=False) if keep
        ]
        extents = [LogExtent(name=name(n), size_bytes=draw(SIZES)) for n in listed]
        extents += [LogExtent(name=name(current + d, "R"), size_bytes=draw(SIZES)) for d in draw(R_EXTENTS)]
        runs.append(
            LinuxSnapshot(
                run_id=f"r{run}",
                collected_at=at.astimezone(draw(ZONE)),
                host=host,
                qmgr=qmgr,
                log_type=log_type,
                log_management=management,
                log_path=f"/var/mqm/log/{qmgr}/active/",
                extent_bytes=16 * MIB,
                archive_extent=None if archlog is None else name(current - archlog),
                media_images=MediaImages(forced=True, ok=True),
                # The collector lists extents by name, as `ls` does: the plan orders them by number, not so.
                extents=sorted(extents, key=lambda e: e.name),
                **points,
            )
        )
    return runs


@st.composite
def linux_fleets(draw) -> list[list[LinuxSnapshot]]:
    """Queue managers' runs, a few queue managers a host."""
    count = draw(st.integers(12, 24))
    return [draw(queue_manager_runs(f"mq-linux{i // 3}", f"QM.{i}")) for i in range(count)]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fleet=linux_fleets(), copies=st.lists(st.booleans(), min_size=24, max_size=24))
def test_the_spark_plan_of_linux_queue_managers_is_the_reference_planner_s(
    tmp_path_factory, spark_connect, fleet, copies
):
    work: Path = tmp_path_factory.mktemp("linux-agree")
    current = work / "linux" / "run_id=now"
    history = work / "linux-history"
    history.mkdir()  # also when no queue manager has an earlier run
    for runs, copied in zip(fleet, copies, strict=False):
        newest, earlier = runs[-1], runs[:-1]
        host = newest.host
        write_linux_snapshots(current / f"{host}.{newest.qmgr}.jsonl", [newest])
        for snapshot in earlier:
            write_linux_snapshots(history / f"run_id={snapshot.run_id}" / f"{host}.{snapshot.qmgr}.jsonl", [snapshot])
        if copied and earlier:  # the same run given twice (in the run's folder and in the history): one snapshot
            write_linux_snapshots(current / f"{host}.{newest.qmgr}.again.jsonl", [earlier[-1]])

    run_plan_connect(
        spark_connect,
        None,
        work / "out",
        history=None,
        policy_file=None,
        as_of=T0,
        linux_snapshots=current,
        linux_history=[history],
    )

    expected = []
    for runs in fleet:
        # As the job reads them: JSON round-tripped, the history oldest first by collection time, then run_id.
        read = [_round_trip(work, s) for s in runs]
        read.sort(key=lambda s: (s.collected_at, s.run_id))
        expected.append(plan_queue_manager(read[-1], proven=(), history=read[:-1]))
    expected.sort(key=lambda p: (p.host, p.qmgr))
    found = read_linux_plan(work / "out")
    assert [(p.host, p.qmgr) for p in found] == [(p.host, p.qmgr) for p in expected]
    for spark, reference in zip(found, expected, strict=True):
        assert spark == reference, f"{reference.host}/{reference.qmgr}"


def _round_trip(work: Path, snapshot: LinuxSnapshot) -> LinuxSnapshot:
    path = work / "round-trip.jsonl"
    write_linux_snapshots(path, [snapshot])
    (read,) = read_linux_snapshots(path)
    return read
