"""A CL command that only reads the partition is not saved after (a save writes the whole partition and starts a new
generation of the SQL tables): the read-only ones must leave the partition exactly as it was."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.model import CommandFault

START = datetime(2026, 11, 2, tzinfo=UTC)
READ_ONLY = [
    "CHKOBJ OBJ(QMTEST/AMQAJRN) OBJTYPE(*JRN) AUT(*USE)",
    "CHKOBJ OBJ(QSYS/NOSUCH) OBJTYPE(*MSGQ)",  # an escape message is the job's, not the partition's
    "WRKJRNA JRN(QMTEST/AMQAJRN) OUTPUT(*PRINT)",
    "DSPJRNRCVA JRNRCV(QMTEST/AMQA000001) OUTPUT(*PRINT)",
    "DSPJRN JRN(QMTEST/AMQAJRN) OUTPUT(*PRINT)",
]


@pytest.fixture
def host(tmp_path) -> SimulatedHost:
    config = HostConfig(name="ibmi1", port=0, queue_managers=[QueueManagerConfig(name="TEST")])
    made = SimulatedHost.create(config, START, tmp_path / "ibmi1.json")
    made.warm_up(config, START, 2.0)
    return made


@pytest.mark.parametrize("command", READ_ONLY)
def test_a_read_only_command_leaves_the_partition_as_it_was_and_is_not_saved(host: SimulatedHost, command: str):
    # The job number each command line runs under is counted apart (as db2's statements are): not saved either.
    before, generation = host.partition.model_dump_json(exclude={"job_counter"}), host.generation
    host.run(f"system '{command}'", "MQADMIN")
    assert host.partition.model_dump_json(exclude={"job_counter"}) == before
    assert host.generation == generation


def test_a_command_that_changes_the_partition_is_saved(host: SimulatedHost):
    generation = host.generation
    result = host.run("system 'CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(*GEN)'", "MQADMIN")
    assert result.exit_status == 0, result.stderr
    assert host.generation == generation + 1
    assert SimulatedHost.load(host.state_path).partition.model_dump_json() == host.partition.model_dump_json()


def test_a_read_only_command_that_meets_an_injected_fault_is_saved_with_the_fault_counted_down(host: SimulatedHost):
    with host.state() as partition:
        partition.faults.commands.append(CommandFault(pattern="CHKOBJ", msg_id="CPF9801", tokens=["X", "Y", "Z"]))
    generation = host.generation
    result = host.run("system 'CHKOBJ OBJ(QMTEST/AMQAJRN) OBJTYPE(*JRN)'", "MQADMIN")
    assert result.exit_status != 0
    assert host.generation == generation + 1
    assert SimulatedHost.load(host.state_path).partition.faults.commands == []
