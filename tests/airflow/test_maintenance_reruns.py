"""Every maintenance step can be cleared and rerun, or the run re-triggered: nothing is done twice or lost."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mqjournal import rules
from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import MaintenanceTarget, RunPlan
from mqjournal.catalog import Catalog
from mqjournal.policy import Policy
from mqjournal.sim.model import CommandFault
from mqjournal.snapshot import read_snapshots
from tests.airflow.conftest import ibmi1_settings
from tests.conftest import SimFleet


@pytest.fixture
def settings(sim_fleet: SimFleet, tmp_path: Path, monkeypatch) -> Settings:
    sim_fleet.host().advance(timedelta(hours=3))
    return ibmi1_settings(sim_fleet, tmp_path, monkeypatch)


def plan(settings: Settings, run_id: str) -> None:
    """The plan step's output, from the reference planner (the Spark job writes the same datasets)."""
    snapshots = [s for p in settings.snapshot_dir(run_id).glob("*.jsonl") for s in read_snapshots(p)]
    result = rules.plan_fleet(snapshots, as_of=max(s.collected_at for s in snapshots), policy=Policy())
    qms, receivers = rules.as_rows(result)
    for name, rows in (("queue_managers", qms), ("receivers", receivers)):
        folder = settings.plan_dir(run_id) / name
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.Table.from_pylist([{**r, "alerts": list(r.get("alerts", []))} if "alerts" in r else r for r in rows]),
            folder / "part-0.parquet",
        )


def run_until_summary(settings: Settings, run_id: str) -> tuple[MaintenanceTarget, RunPlan]:
    (target,) = steps.select_targets(settings, [], []).targets
    steps.collect_one(settings, target, run_id, change_receiver=True)
    plan(settings, run_id)
    return target, steps.summarize(settings.plan_dir(run_id), [target])


def on_host(sim_fleet: SimFleet) -> set[str]:
    return {r.name for r in sim_fleet.host().partition.receivers_in("QMTEST")}


def test_collecting_twice_in_one_run_leaves_one_snapshot(settings):
    (target,) = steps.select_targets(settings, [], []).targets
    first = steps.collect_one(settings, target, "run1", change_receiver=False)
    second = steps.collect_one(settings, target, "run1", change_receiver=False)
    assert first == second
    assert len(list(read_snapshots(Path(second)))) == 1


def test_a_rerun_save_repeats_no_save_and_creates_no_save_file(sim_fleet, settings):
    target, summary = run_until_summary(settings, "run1")
    first = steps.save_one(settings, target, summary, "run1", "QGPL")
    files = set(sim_fleet.host().partition.save_files)
    again = steps.save_one(settings, target, summary, "run1", "QGPL")
    assert first.saved and again.saved == [] and sorted(again.already_saved) == sorted(first.saved)
    assert set(sim_fleet.host().partition.save_files) == files


def test_a_rerun_delete_skips_what_is_gone_and_deletes_nothing_more(sim_fleet, settings):
    target, summary = run_until_summary(settings, "run1")
    steps.save_one(settings, target, summary, "run1", "QGPL")
    first = steps.delete_one(settings, target, summary, "run1", Policy())
    remaining = on_host(sim_fleet)
    again = steps.delete_one(settings, target, summary, "run1", Policy())
    assert first.deleted and again.deleted == [] and sorted(again.already_gone) == sorted(first.deleted)
    assert on_host(sim_fleet) == remaining
    assert len(Catalog(settings.catalog_url).deletions_for("ibmi1", "QMTEST")) == len(first.deleted)


def test_a_delete_that_failed_midway_finishes_on_rerun(sim_fleet, settings):
    target, summary = run_until_summary(settings, "run1")
    steps.save_one(settings, target, summary, "run1", "QGPL")
    approved = summary.to_delete[target.key]
    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(
                pattern=f"DLTJRNRCV JRNRCV\\(QMTEST/{approved[1]}\\)",
                msg_id="CPF9803",
                tokens=["", approved[1], "QMTEST"],
            )
        )
    first = steps.delete_one(settings, target, summary, "run1", Policy())
    assert first.deleted == approved[:1] and first.failed[0] == approved[1]
    again = steps.delete_one(settings, target, summary, "run1", Policy())
    assert again.already_gone == approved[:1] and again.deleted == approved[1:]
    assert not set(approved) & on_host(sim_fleet)


def test_a_retriggered_run_saves_only_new_receivers_and_keeps_every_earlier_save(sim_fleet, settings):
    target, summary = run_until_summary(settings, "run1")
    first = steps.save_one(settings, target, summary, "run1", "QGPL")
    steps.delete_one(settings, target, summary, "run1", Policy())
    sim_fleet.host().advance(timedelta(hours=1))
    target, summary = run_until_summary(settings, "run2")
    second = steps.save_one(settings, target, summary, "run2", "QGPL")
    assert not set(first.saved) & set(second.saved)
    catalog = Catalog(settings.catalog_url)
    for name in first.saved:
        (save,) = catalog.saves_of("ibmi1", "QMTEST", name)
        assert f"{save.save_file_library}/{save.save_file}" in sim_fleet.host().partition.save_files
