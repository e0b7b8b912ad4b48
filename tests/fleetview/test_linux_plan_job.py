"""The fleet view shows the Linux plan the plan job itself writes (#32). conftest's `mixed` writes the plan's Linux
rows with pyarrow, in the layout linuxmq.planrows reads; here the Spark plan job plans run 2's Linux snapshots of the
same data folder (QM.AUDIT's three earlier collections as its history) on the tests' standing Spark Connect server,
its Linux datasets replace conftest's, and the fleet view's Linux rows, pages and series are the same."""

from __future__ import annotations

import shutil
from datetime import timedelta

import pytest

from mqjournal.fleetview import fleetrows, linuxdata, metrics
from mqjournal.linuxmq.planrows import OUTPUTS
from mqjournal.planjob import run_plan_connect
from tests.fleetview.conftest import AUDIT_HISTORY_RUNS, COLLECTED2, RUN2

pytestmark = pytest.mark.e2e

NOW = COLLECTED2 + timedelta(hours=1)


def linux_view(mixed) -> tuple[list, list, bytes]:
    rows = [r for r in fleetrows.fleet(mixed.settings, mixed.catalog, now=NOW) if r.platform == "linux"]
    pages = [linuxdata.linux_queue_manager(mixed.settings, mixed.catalog, r.host, r.qmgr, now=NOW) for r in rows]
    figures = [f for f in metrics.read_figures(mixed.settings, mixed.catalog, now=NOW) if f.row.platform == "linux"]
    return rows, pages, metrics.exposition(figures)


def test_the_fleet_view_reads_the_plan_jobs_linux_rows_as_it_reads_the_fixtures(mixed, spark_connect, tmp_path):
    settings = mixed.settings
    written = linux_view(mixed)
    assert [(r.qmgr, r.alerts) for r in written[0]] == [
        ("QM.EDGE", ["not_planned"]),
        ("QM.AUDIT", ["restart_stuck"]),
        ("QM.ORDERS", []),
    ]

    out = tmp_path / "plan"
    run_plan_connect(
        spark_connect,
        None,
        out,
        history=None,
        policy_file=None,
        as_of=COLLECTED2 + timedelta(minutes=2),
        linux_snapshots=settings.linux_snapshot_dir(RUN2),
        linux_history=[settings.linux_snapshot_dir(run_id) for run_id in AUDIT_HISTORY_RUNS],
    )
    for dataset in OUTPUTS:
        shutil.rmtree(settings.plan_dir(RUN2) / dataset)
        shutil.copytree(out / dataset, settings.plan_dir(RUN2) / dataset)

    assert linux_view(mixed) == written
