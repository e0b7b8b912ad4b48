"""The maintenance run's on-call step (mqjournal.airflow.oncall): a queue manager that cannot start gets its recovery
triggered with the alert's values, once per incident, and never beside a recovery of it that still waits."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal.airflow import oncall
from mqjournal.airflow.settings import Settings
from mqjournal.snapshot import write_snapshots
from tests.plan.builders import T0, chain, names, snapshot

ALL = names(24, 7)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    data = tmp_path / "data"
    return Settings(
        fleet_file=tmp_path / "fleet.yaml",
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )


def collected(settings: Settings, run_id: str, *, needed_minutes: int = 1) -> None:
    """The run's snapshots: TEST on ibmi1 lost AMQA000024-26, which AMQ7460 needs; OTHER on ibmi2 is fine."""
    broken = snapshot(
        chain(ALL)[3:], oldest="AMQA000024", needed_at=T0 + timedelta(minutes=needed_minutes), run_id=run_id
    )
    fine = snapshot(chain(ALL, library="QMOTHER"), host="ibmi2", qmgr="OTHER", library="QMOTHER", run_id=run_id)
    folder = settings.snapshot_dir(run_id)
    write_snapshots(folder / "ibmi1__QMTEST.jsonl", [broken])
    write_snapshots(folder / "ibmi2__QMOTHER.jsonl", [fine])


def no_runs(run_id: str) -> str | None:
    return None


def test_a_queue_manager_that_cannot_start_gets_its_recovery_triggered_with_the_alerts_values(settings):
    collected(settings, "scheduled__1")
    texts, triggers = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False)
    assert len(texts) == 1 and texts[0].startswith("QMGR_CANNOT_START: STRMQM will fail with AMQ7432")
    (trigger,) = triggers
    assert trigger.conf == {
        "host": "ibmi1",
        "qmgr": "TEST",
        "kind": "startup",
        "timestamp": "2026-11-20T08:01:00+01:00",
    }
    assert trigger.trigger_run_id == "oncall__ibmi1__TEST__startup__20261120T080100_0100"
    assert trigger.note == f"triggered by scheduled__1: {texts[0]}"
    assert trigger.to_kwargs()["conf"] == trigger.conf


def test_the_same_incident_seen_again_asks_for_the_same_recovery_run_which_airflow_then_skips(settings):
    collected(settings, "scheduled__1")
    collected(settings, "scheduled__2")
    _, first = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False)
    _, again = oncall.on_call(settings, "scheduled__2", lambda run: "running", dry_run=False)
    assert [t.trigger_run_id for t in again] == [t.trigger_run_id for t in first]


def test_no_second_recovery_is_triggered_while_one_of_the_queue_manager_waits(settings):
    collected(settings, "scheduled__1")
    _, first = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False)
    # Another incident of the same queue manager (MQ now needs an entry of another time) while the first waits.
    collected(settings, "scheduled__2", needed_minutes=2)
    waiting = {first[0].trigger_run_id: "running"}
    _, second = oncall.on_call(settings, "scheduled__2", waiting.get, dry_run=False)
    assert second == []
    # Once that run is over (rejected, failed or done), the new incident gets its own.
    _, third = oncall.on_call(settings, "scheduled__2", {first[0].trigger_run_id: "failed"}.get, dry_run=False)
    assert [t.conf["timestamp"] for t in third] == ["2026-11-20T08:02:00+01:00"]


def test_a_dry_run_says_the_alert_and_triggers_nothing(settings):
    collected(settings, "manual__1")
    texts, triggers = oncall.on_call(settings, "manual__1", no_runs, dry_run=True)
    assert len(texts) == 1 and triggers == []
    assert not (settings.data_folder / "oncall").exists()
