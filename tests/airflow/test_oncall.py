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


# --- Linux queue managers (#32) -------------------------------------------------------------------------------------


def linux_collected(settings: Settings, run_id: str, *, deleted: tuple[int, ...] = (7,), restart: int = 5) -> None:
    """The run's Linux snapshots of mq-linux1: QM.ORDERS restarts from RECLOG S0000005 (to CURRLOG S0000012), with
    `deleted` gone from its directory; QM.OTHER has every extent."""
    from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
    from tests.linuxmq.test_snapshot import record

    orders = record(run_id=run_id, restart_extent=f"S{restart:07d}.LOG")
    orders["extents"] = [e for e in orders["extents"] if int(e["name"][1:8]) not in deleted]
    other = record(run_id=run_id, qmgr="QM.OTHER")
    snapshots = [LinuxSnapshot.model_validate(orders), LinuxSnapshot.model_validate(other)]
    write_linux_snapshots(settings.linux_snapshot_dir(run_id) / "mq-linux1.jsonl", snapshots)


def test_a_linux_queue_manager_missing_an_extent_its_restart_reads_gets_its_startup_recovery_triggered(settings):
    linux_collected(settings, "scheduled__1")

    texts, triggers = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False)

    (text,) = texts
    assert text.startswith("QMGR_CANNOT_START: strmqm will fail with AMQ6767: needed extent S0000007.LOG is missing")
    assert "RECLOG S0000005.LOG through CURRLOG S0000012.LOG" in text
    (trigger,) = triggers
    assert trigger.conf == {"host": "mq-linux1", "qmgr": "QM.ORDERS", "kind": "startup"}
    assert trigger.trigger_run_id == "oncall__mq-linux1__QM.ORDERS__startup__S0000007.LOG"
    assert trigger.note == f"triggered by scheduled__1: {text}"


def test_an_extent_gone_that_restart_no_longer_reads_raises_nothing(settings):
    linux_collected(settings, "scheduled__1", deleted=(1, 2, 3, 4))  # behind RECLOG: released, as planned

    assert oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False) == ([], [])


def test_the_same_linux_incident_seen_again_asks_for_the_same_run_and_none_beside_one_that_waits(settings):
    linux_collected(settings, "scheduled__1")
    linux_collected(settings, "scheduled__2")
    _, first = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=False)
    _, again = oncall.on_call(settings, "scheduled__2", no_runs, dry_run=False)
    assert [t.trigger_run_id for t in again] == [t.trigger_run_id for t in first]
    # Another extent gone (another incident) while the first recovery still waits at its gate: none triggered.
    linux_collected(settings, "scheduled__3", deleted=(6, 7))
    waiting = {first[0].trigger_run_id: "running"}
    assert oncall.on_call(settings, "scheduled__3", waiting.get, dry_run=False)[1] == []
    _, later = oncall.on_call(settings, "scheduled__3", {first[0].trigger_run_id: "success"}.get, dry_run=False)
    assert [t.trigger_run_id for t in later] == ["oncall__mq-linux1__QM.ORDERS__startup__S0000006.LOG"]


def test_partitions_and_linux_hosts_are_alerted_in_one_on_call_step(settings):
    collected(settings, "scheduled__1")
    linux_collected(settings, "scheduled__1")

    texts, triggers = oncall.on_call(settings, "scheduled__1", no_runs, dry_run=True)

    assert len(texts) == 2 and triggers == []
    assert {t.split(":")[1].strip() for t in texts} == {
        "STRMQM will fail with AMQ7432",
        "strmqm will fail with AMQ6767",
    }
