"""The recovery DAG's first step refuses a host or queue manager it does not know, naming it and the known ones, as
`mqjournal recover` does, before anything is planned: a typo never turns into a plan for a lost library."""

from __future__ import annotations

from pathlib import Path

import pytest

from mqjournal.airflow import recovery as steps
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.catalog import Catalog
from mqjournal.errors import InvalidName
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import read_audit
from mqjournal.recovery.connect import UnknownQueueManager
from tests.airflow.conftest import ibmi1_settings
from tests.conftest import SimFleet


def _settings(sim_fleet: SimFleet, tmp_path: Path, monkeypatch, queue_managers: list[dict]) -> Settings:
    settings = ibmi1_settings(sim_fleet, tmp_path, monkeypatch, queue_managers=queue_managers)
    Path(settings.data_dir).mkdir()
    Catalog(settings.catalog_url)  # the maintenance runs' catalog, which a recovery reads
    return settings


@pytest.fixture
def settings(sim_fleet: SimFleet, tmp_path: Path, monkeypatch) -> Settings:
    return _settings(sim_fleet, tmp_path, monkeypatch, [{"name": "TEST"}])


def form(host: str, qmgr: str) -> dict:
    return {"host": host, "qmgr": qmgr, "kind": "naming", "threshold_kb": 2000}


def sent(settings: Settings) -> list[str]:
    path = settings.audit_log
    return [r["command"] for r in read_audit(path)] if path.exists() else []


def test_an_unknown_host_is_refused_listing_the_fleets_hosts_before_any_ssh(settings, monkeypatch):
    def no_session(*_args, **_kwargs):
        raise AssertionError("a session was opened for a host the fleet file does not have")

    monkeypatch.setattr(steps, "host_session", no_session)
    with pytest.raises(ValueError) as caught:
        steps.make_plan(settings, form("ibmi2", "TEST"), "manual__1")
    assert "'ibmi2' is not in the fleet file" in str(caught.value)
    assert "its hosts are ibmi1" in str(caught.value)
    assert sent(settings) == []


def test_an_unknown_queue_manager_is_refused_naming_it_and_the_known_ones_before_anything_is_planned(settings):
    with pytest.raises(UnknownQueueManager) as caught:
        steps.make_plan(settings, form("ibmi1", "TSET"), "manual__1")
    message = str(caught.value)
    assert "TSET on ibmi1" in message and "the queue managers known for ibmi1 are TEST" in message
    # Only the host's own list of queue managers was read: no journal, no checkpoint, no plan.
    assert sent(settings) == [commands.read_mqs_ini().text]
    assert not settings.recovery_plan_file("manual__1").exists()


def test_a_name_whose_library_cannot_be_derived_is_refused_listing_the_fleets_names_before_any_ssh(settings):
    with pytest.raises(InvalidName) as caught:
        steps.make_plan(settings, form("ibmi1", "tset"), "manual__1")
    message = str(caught.value)
    assert "tset on ibmi1" in message and "the fleet file's queue managers for ibmi1: TEST" in message
    assert "name the queue manager's library in the fleet file" in message
    assert sent(settings) == []


def test_a_queue_manager_the_fleet_file_lists_is_confirmed_without_ssh(settings):
    setup = steps.setup_from_form(settings, "ibmi1", "TEST")
    with host_session(settings, "ibmi1") as session:
        qm = steps.confirm_queue_manager(settings, setup, session)
    assert (qm.name, qm.qmgr_library) == ("TEST", "QMTEST")
    assert sent(settings) == []


def test_a_name_the_fleet_file_lists_in_another_case_is_that_queue_manager_as_the_cli_takes_it(settings):
    setup = steps.setup_from_form(settings, "ibmi1", "test")
    with host_session(settings, "ibmi1") as session:
        qm = steps.confirm_queue_manager(settings, setup, session)
    assert (qm.name, qm.qmgr_library) == ("TEST", "QMTEST")
    assert sent(settings) == []
    # The plan is made for TEST, as the host spells it.
    made = steps.make_plan(settings, form("ibmi1", "test"), "manual__1")
    assert made.plan.request.qmgr == "TEST" and made.target.library == "QMTEST"


def test_a_host_left_to_discovery_offers_the_queue_managers_it_has(sim_fleet, tmp_path, monkeypatch):
    """The form says "the fleet file's, or any the host has": the host's mqs.ini names the library."""
    settings = _settings(sim_fleet, tmp_path, monkeypatch, [])
    setup = steps.setup_from_form(settings, "ibmi1", "TEST")
    with host_session(settings, "ibmi1") as session:
        qm = steps.confirm_queue_manager(settings, setup, session)
    assert (qm.name, qm.qmgr_library) == ("TEST", "QMTEST")
    with pytest.raises(UnknownQueueManager, match="the queue managers known for ibmi1 are TEST"):
        steps.make_plan(settings, form("ibmi1", "NOPE"), "manual__2")
