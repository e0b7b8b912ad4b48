"""The trigger form's hosts and queue managers: a name that matches nothing is an error, never an empty run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.connections import conn_id_for, fleet_connections
from mqjournal.airflow.settings import Settings
from tests.conftest import SimFleet


@pytest.fixture
def settings(sim_fleet: SimFleet, tmp_path: Path, monkeypatch) -> Settings:
    conn = fleet_connections(sim_fleet.config, sim_fleet.service.host_keys, sim_fleet.ports)[conn_id_for("ibmi1")]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for('ibmi1').upper()}", json.dumps(conn))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(yaml.safe_dump({"hosts": [{"name": "ibmi1", "port": sim_fleet.ports["ibmi1"]}]}))
    data = tmp_path / "data"
    return Settings(
        fleet_file=fleet,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )


def test_a_queue_manager_named_in_the_form_is_selected(settings):
    (target,) = steps.select_targets(settings, ["ibmi1"], ["TEST"])
    assert (target.host, target.qmgr, target.library) == ("ibmi1", "TEST", "QMTEST")


@pytest.mark.parametrize("typo", ["TSET", "test"])
def test_a_queue_manager_found_on_no_selected_host_is_an_error_listing_the_known_ones(settings, typo):
    with pytest.raises(ValueError) as caught:
        steps.select_targets(settings, [], ["TEST", typo])
    message = str(caught.value)
    assert typo in message and "ibmi1: TEST" in message


def test_an_unknown_host_is_an_error_listing_the_fleets_hosts(settings):
    with pytest.raises(ValueError, match=r"ibmi2.*ibmi1"):
        steps.select_targets(settings, ["ibmi2"], [])


def test_a_host_and_queue_manager_pair_selects_that_queue_manager(settings):
    (target,) = steps.select_targets(settings, [], ["ibmi1/TEST"])
    assert (target.host, target.qmgr) == ("ibmi1", "TEST")


@pytest.mark.parametrize("pair", ["ibmi2/TEST", "ibmi1/TSET"])
def test_a_pair_the_fleet_does_not_have_is_an_error_listing_the_known_ones(settings, pair):
    with pytest.raises(ValueError) as caught:
        steps.select_targets(settings, [], [pair])
    assert pair in str(caught.value) and "ibmi1: TEST" in str(caught.value)


def test_the_forms_offer_the_fleets_hosts_and_pairs(settings):
    from mqjournal.airflow.forms import fleet_choices

    settings.fleet_file.write_text(
        yaml.safe_dump(
            {
                "hosts": [
                    {"name": "ibmi-prod1", "queue_managers": [{"name": "PAYROLL"}, {"name": "ORDERS"}]},
                    {"name": "ibmi-prod2", "queue_managers": [{"name": "ORDERS"}]},
                ]
            }
        )
    )
    choices = fleet_choices(settings)
    assert choices.hosts == ["ibmi-prod1", "ibmi-prod2"]
    assert choices.pairs == ["ibmi-prod1/PAYROLL", "ibmi-prod1/ORDERS", "ibmi-prod2/ORDERS"]
    settings.fleet_file.write_text(": not yaml")
    assert fleet_choices(settings).hosts == []  # the DAG still parses; the run names the problem
