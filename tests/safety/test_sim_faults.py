"""The simulator's command rules (one occurrence of a command dropped, held or answered) and its log of received
commands, which the safety proof relies on."""

from __future__ import annotations

import threading
import time

import paramiko
import pytest

from mqjournal.sim.protocol import DropRule, ExecResult
from mqjournal.sim.server import CommandRule
from tests.conftest import SimFleet


def faults(fleet: SimFleet):
    return fleet.service.faults["ibmi1"]


def log(fleet: SimFleet, since: int = 0):
    return fleet.service.received.entries("ibmi1", since)


def test_every_command_is_logged_with_what_became_of_it(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    assert shell.run("echo one")[0] == 0
    assert shell.cl("DLTF FILE(QGPL/NOSUCH)")[0] != 0
    faults(sim_fleet).drops.append(DropRule(pattern="echo two"))
    assert shell.run("echo two")[0] == -1
    entries = log(sim_fleet)
    assert [(e.command, e.state, e.exit_status, e.answered) for e in entries] == [
        ("echo one", "ran", 0, True),
        ('system "DLTF FILE(QGPL/NOSUCH)"', "ran", 255, True),
        ("echo two", "dropped", None, False),
    ]
    assert [e.seq for e in entries] == [0, 1, 2]


def test_a_rule_skips_earlier_matches_and_hits_one_occurrence(sim_fleet: SimFleet):
    faults(sim_fleet).rules.append(CommandRule("^echo same$", "drop_before", skip=1))
    assert sim_fleet.connect().run("echo same")[0] == 0
    assert sim_fleet.connect().run("echo same")[0] == -1
    assert sim_fleet.connect().run("echo same")[0] == 0
    assert [e.state for e in log(sim_fleet)] == ["ran", "dropped", "ran"]
    assert faults(sim_fleet).rules == []


def test_drop_after_runs_the_command_and_loses_its_answer(sim_fleet: SimFleet):
    faults(sim_fleet).rules.append(CommandRule("CRTSAVF", "drop_after"))
    assert sim_fleet.connect().cl("CRTSAVF FILE(QGPL/AFTER)")[0] == -1
    assert "QGPL/AFTER" in sim_fleet.host().partition.save_files
    (entry,) = log(sim_fleet)
    assert (entry.state, entry.exit_status, entry.answered) == ("ran", 0, False)


def test_an_answer_rule_replies_without_running_the_command(sim_fleet: SimFleet):
    reply = ExecResult(255, "", "CPF7302: File X not created in library QGPL.\n")
    faults(sim_fleet).rules.append(CommandRule("CRTSAVF", "answer", reply=reply))
    assert sim_fleet.connect().cl("CRTSAVF FILE(QGPL/X)") == (255, "", reply.stderr)
    assert "QGPL/X" not in sim_fleet.host().partition.save_files
    assert log(sim_fleet)[0].state == "answered_by_fault"
    with pytest.raises(ValueError):
        CommandRule("X", "answer")
    with pytest.raises(ValueError):
        CommandRule("X", "explode")


def test_hold_before_runs_the_command_only_once_released_after_the_client_gave_up(sim_fleet: SimFleet):
    release = threading.Event()
    faults(sim_fleet).rules.append(CommandRule("CRTSAVF", "hold_before", release=release))
    shell = sim_fleet.connect()
    with pytest.raises(TimeoutError):
        shell.run('system "CRTSAVF FILE(QGPL/LATE)"', timeout=0.3)
    # On a loaded machine the command may reach the simulator after the client's 0.3 s.
    assert sim_fleet.service.received.wait_for(lambda entries: bool(entries) and entries[0].state == "arrived", 10)
    shell.client.close()
    assert log(sim_fleet)[0].state == "arrived"
    assert "QGPL/LATE" not in sim_fleet.host().partition.save_files
    release.set()
    assert sim_fleet.service.received.wait_for(lambda entries: entries[0].state == "ran", 5)
    assert "QGPL/LATE" in sim_fleet.host().partition.save_files


def test_hold_after_holds_the_answer_until_the_client_goes(sim_fleet: SimFleet):
    seen = []
    sim_fleet.service.received.listeners.append(lambda entry, event: seen.append((entry.command, event)))
    faults(sim_fleet).rules.append(CommandRule("CRTSAVF", "hold_after", seconds=30))
    shell = sim_fleet.connect()
    with pytest.raises(TimeoutError):
        shell.run('system "CRTSAVF FILE(QGPL/HELD)"', timeout=0.3)
    # It runs, and only the answer is held: on a loaded machine the run itself may come after the client's 0.3 s.
    assert sim_fleet.service.received.wait_for(lambda entries: bool(entries) and entries[0].state == "ran", 10)
    assert "QGPL/HELD" in sim_fleet.host().partition.save_files
    assert not log(sim_fleet)[0].answered  # the hold is 30 s
    assert seen == [('system "CRTSAVF FILE(QGPL/HELD)"', "arrived"), ('system "CRTSAVF FILE(QGPL/HELD)"', "ran")]
    shell.client.close()
    # The held worker notices the client is gone and ends, long before its 30 s (waited for up to 20 s: a loaded
    # machine is slow, and the hold would still be on).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(t.name == "sim-ssh-exec-ibmi1" for t in threading.enumerate()):
        time.sleep(0.02)
    assert not any(t.name == "sim-ssh-exec-ibmi1" for t in threading.enumerate())
    assert not log(sim_fleet)[0].answered


def test_rules_leave_other_commands_alone(sim_fleet: SimFleet):
    faults(sim_fleet).rules.append(CommandRule("^never$", "drop_before"))
    client: paramiko.SSHClient = sim_fleet.connect().client
    assert sim_fleet.connect().run("echo fine") == (0, "fine\n", "")
    client.close()
    assert len(faults(sim_fleet).rules) == 1
