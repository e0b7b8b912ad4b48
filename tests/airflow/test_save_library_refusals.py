"""A save library that would lose the saves (the queue manager's own, QTEMP, IBM's) is refused before any SSH."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqjournal.airflow import maintenance
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import MaintenanceTarget, RunPlan
from mqjournal.catalog import Catalog
from mqjournal.errors import InvalidName
from mqjournal.ibmi.collector import Target
from mqjournal.recovery.library_save import save_library

TARGET = MaintenanceTarget(
    host="ibmi1",
    qmgr="TEST",
    library="QMTEST",
    journal="AMQAJRN",
    instance="A",
    journal_queue=["QMTEST", "AMQAJRNMSG"],
    utc_offset_minutes=60,
)


class NoSession:
    """Fails the test if anything is sent to the host."""

    def run(self, command):
        raise AssertionError(f"sent to the host: {command}")


def settings(tmp_path: Path) -> Settings:
    return Settings(
        fleet_file=tmp_path / "fleet.yaml",
        data_dir=tmp_path,
        catalog_url=f"sqlite:///{tmp_path}/c.db",
        spark_app=tmp_path / "app.py",
        spark_conn_id="spark_default",
        schedule=None,
    )


@pytest.fixture
def no_ssh(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an SSH session was opened")

    monkeypatch.setattr(maintenance, "host_session", refuse)


@pytest.mark.parametrize(
    "library, why",
    [
        ("QMTEST", "queue manager's own library"),
        ("QTEMP", "temporary library"),
        ("QSYS", "IBM-supplied"),
        ("QRECOVERY", "IBM-supplied"),
    ],
)
def test_the_maintenance_save_refuses_an_unsafe_save_library_before_any_ssh(tmp_path, no_ssh, library, why):
    summary = RunPlan(to_save={TARGET.key: ["AMQA000001"]})
    with pytest.raises(InvalidName, match=why) as caught:
        maintenance.save_one(settings(tmp_path), TARGET, summary, "run1", library)
    assert library in str(caught.value) and "QGPL" in str(caught.value)


def test_the_maintenance_save_refuses_it_even_with_nothing_to_save(tmp_path, no_ssh):
    with pytest.raises(InvalidName, match="QTEMP"):
        maintenance.save_one(settings(tmp_path), TARGET, RunPlan(to_save={}), "run1", "QTEMP")


def test_a_library_save_refuses_to_go_into_the_library_it_saves(tmp_path):
    target = Target(
        qmgr="TEST", library="QMTEST", journal="AMQAJRN", instance="A", journal_queue=("QMTEST", "AMQAJRNMSG")
    )
    with pytest.raises(InvalidName, match="queue manager's own library"):
        save_library(
            NoSession(),
            target,
            host="ibmi1",
            tz=None,
            catalog=Catalog(f"sqlite:///{tmp_path}/c.db"),
            save_library="QMTEST",
            run_id="r1",
            routes=None,
        )
