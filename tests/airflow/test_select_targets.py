"""The trigger form's hosts and queue managers: a name that matches nothing is an error, never an empty run."""

from __future__ import annotations

import pytest
import yaml

from mqjournal.airflow import maintenance as steps
from mqjournal.airflow.hostwork import QueueManagersFailed, finish, host_batches
from mqjournal.airflow.settings import Settings


def test_a_queue_manager_named_in_the_form_is_selected(settings):
    (target,) = steps.select_targets(settings, ["ibmi1"], ["TEST"]).targets
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
    (target,) = steps.select_targets(settings, [], ["ibmi1/TEST"]).targets
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


def _configure(settings: Settings, queue_managers: list[dict]) -> None:
    """The fleet file's ibmi1 with these queue managers named (discovery looks only for them)."""
    (host,) = yaml.safe_load(settings.fleet_file.read_text())["hosts"]
    settings.fleet_file.write_text(yaml.safe_dump({"hosts": [host | {"queue_managers": queue_managers}]}))


GONE = ("ibmi1/GONE", "journal QMGONE/AMQAJRN not found on ibmi1")


def test_a_configured_queue_manager_whose_journal_is_not_found_is_named_not_left_out(settings):
    _configure(settings, [{"name": "TEST"}, {"name": "GONE"}])

    selection = steps.select_targets(settings, [], [])

    assert [t.label for t in selection.targets] == ["ibmi1/TEST"]
    assert [(n.label, n.why) for n in selection.not_found] == [GONE]


def test_collect_fails_naming_the_queue_manager_whose_journal_is_not_found_and_collects_the_others(settings):
    _configure(settings, [{"name": "TEST"}, {"name": "GONE"}])
    selection = steps.select_targets(settings, [], [])
    (batch,) = host_batches(selection.targets, 256, selection.not_found)

    result = steps.collect_batch(settings, batch, "run1", change_receiver=False, dry_run=True)

    assert list(result.done) == ["ibmi1/TEST/QMTEST"]  # the run's other queue managers go on
    pushed: list[list[str]] = []
    with pytest.raises(QueueManagersFailed) as caught:
        finish(result, batch, pushed.append, doing="checkpoint and collect")
    assert f"{GONE[0]}: {GONE[1]}" in str(caught.value) and "1 of 2 queue managers" in str(caught.value)
    assert pushed == [result.outcomes]


def test_a_host_whose_only_queue_manager_is_not_found_still_gets_its_batch_and_fails_it(settings):
    _configure(settings, [{"name": "GONE"}])
    selection = steps.select_targets(settings, [], [])
    (batch,) = host_batches(selection.targets, 256, selection.not_found)

    result = steps.collect_batch(settings, batch, "run1", change_receiver=False, dry_run=True)

    assert batch.label == "ibmi1" and result.done == {}
    assert result.failures["ibmi1/GONE"].startswith(GONE[1])


def test_a_queue_manager_named_in_the_form_whose_journal_is_not_found_is_not_taken_for_a_typo(settings):
    _configure(settings, [{"name": "TEST"}, {"name": "GONE"}])

    selection = steps.select_targets(settings, [], ["ibmi1/GONE"])

    assert selection.targets == [] and [n.label for n in selection.not_found] == ["ibmi1/GONE"]


def test_the_report_names_the_queue_managers_whose_journal_was_not_found(settings):
    _configure(settings, [{"name": "TEST"}, {"name": "GONE"}])
    selection = steps.select_targets(settings, [], [])
    batches = [b.to_xcom() for b in host_batches(selection.targets, 256, selection.not_found)]

    text = steps.report(
        settings,
        "run1",
        dry_run=True,
        summary=None,
        saves=None,
        deletes=None,
        approval=None,
        approve_state=None,
        batches=batches,
    )

    assert "ibmi1/GONE" in text and GONE[1] in text
