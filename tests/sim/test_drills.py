"""On-call drills on the simulator (sim/drills.py): each leaves the partition as IBM i and MQ would, so the STRMQM,
RCDMQMIMG and recovery that follow answer as on a real partition; and a drill reaches a running simulator."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal.cli import main
from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.sim import mq
from mqjournal.sim.drills import Drill, DrillRefused, apply, serving, stage
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.service import SimulatorService
from tests.conftest import START, SimFleet, fleet_config

USER = "MQADMIN"


@pytest.fixture
def host() -> SimulatedHost:
    """ibmi1 with TEST after two hours of traffic (several receivers), not saved anywhere."""
    config = HostConfig(
        name="ibmi1", utc_offset="+01:00", queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=200)]
    )
    host = SimulatedHost.create(config, START, None)
    host.advance(timedelta(hours=2))
    return host


def drill(kind: str, **fields: str) -> Drill:
    return Drill(kind=kind, host="ibmi1", qmgr="TEST", **fields)  # type: ignore[arg-type]


def strmqm(host: SimulatedHost) -> tuple[int, str]:
    done = host.run("system 'STRMQM MQMNAME(TEST)'", USER)
    return done.exit_status, done.stdout + done.stderr


def startup_receiver(host: SimulatedHost) -> str:
    """The receiver holding the AMQ7460 point now."""
    partition = host.partition
    qm = partition.queue_manager("TEST")
    assert qm is not None
    holder = mq.receiver_holding(partition, mq.journal_of(partition, qm), mq.startup_point(qm).sequence)
    assert holder is not None
    return holder.name


def names(host: SimulatedHost) -> list[str]:
    partition = host.partition
    qm = partition.queue_manager("TEST")
    assert qm is not None
    return [r.name for r in partition.journal_receivers(mq.journal_of(partition, qm))]


def test_after_a_power_off_strmqm_replays_the_journal_and_starts(host):
    apply(host, drill("power-off"))
    assert not host.partition.queue_managers[0].running
    status, out = strmqm(host)
    assert status == 0 and "AMQ8003" in out


def test_a_needed_receiver_deleted_outside_mqjournal_makes_strmqm_after_a_power_off_fail_with_amq7432(host):
    # A unit of work left open holds AMQ7460 in its receiver while the journal moves on to newer ones.
    apply(host, drill("open-unit-of-work"))
    uow = host.partition.queue_managers[0].open_units_of_work[0]
    host.advance(timedelta(hours=2))
    held = startup_receiver(host)
    partition, qm = host.partition, host.partition.queue_managers[0]
    began_in = mq.receiver_holding(partition, mq.journal_of(partition, qm), uow.started_sequence)
    assert began_in is not None and held == began_in.name and names(host)[-1] != held

    said = apply(host, drill("delete-receiver", receiver=held))
    apply(host, drill("power-off"))

    assert held not in names(host) and held in said
    status, out = strmqm(host)
    assert status != 0 and "AMQ7432" in out
    qmqmmsg = host.partition.message_queues["QMTEST/QMQMMSG"].messages
    assert qmqmmsg[-1].id == "AMQ7432"


def test_deleting_a_receiver_deletes_the_older_ones_with_it_as_dltjrnrcv_takes_them_oldest_first(host):
    before = names(host)
    apply(host, drill("delete-receiver", receiver=before[2].lower()))
    assert names(host) == before[3:]


def test_the_attached_receiver_cannot_be_deleted_and_nothing_changes(host):
    before = names(host)
    with pytest.raises(DrillRefused, match="attached"):
        apply(host, drill("delete-receiver", receiver=before[-1]))
    assert names(host) == before


def test_a_damaged_object_holds_amq7462_back_through_later_checkpoints(host):
    apply(host, drill("damage-object", object="APP.REQUEST.QUEUE"))
    qm = host.partition.queue_managers[0]
    damaged = qm.object("APP.REQUEST.QUEUE")
    assert damaged is not None and damaged.damaged
    for _ in range(2):
        host.advance(timedelta(hours=1))
        rcdmqmimg = host.run("system 'RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(TEST) DSPJRNDTA(*YES)'", USER)
        assert rcdmqmimg.exit_status == 0 and "AMQ7472" in rcdmqmimg.stdout
        # Every other object is imaged anew: the media point is the damaged one's last image, from before the damage.
        assert mq.media_point(qm).sequence == damaged.image_sequence < mq.startup_point(qm).sequence
    assert any(m.id == "AMQ7472" for m in host.partition.message_queues["QMTEST/QMQMMSG"].messages)


def test_a_drill_on_an_unknown_object_or_queue_manager_is_refused_naming_what_there_is(host):
    with pytest.raises(DrillRefused, match=r"APP\.REQUEST\.QUEUE"):
        apply(host, drill("damage-object", object="NO.SUCH.QUEUE"))
    with pytest.raises(DrillRefused, match="its queue managers: TEST"):
        apply(host, Drill(kind="power-off", host="ibmi1", qmgr="PAYROLL"))


def test_a_drill_reaches_the_running_simulator_through_its_inbox_and_takes_any_case(sim_fleet: SimFleet):
    state = sim_fleet.config.state_dir
    assert serving(state)
    ok, text = stage(state, Drill(kind="power-off", host="ibmi1", qmgr="test"))
    assert ok, text
    assert not sim_fleet.host().partition.queue_managers[0].running
    # The running partition saved it: a restarted simulator has the queue manager down too.
    reloaded = SimulatedHost.load(state / "ibmi1.json")
    assert reloaded is not None and not reloaded.partition.queue_managers[0].running


def test_with_no_simulator_serving_a_drill_changes_the_saved_partition(tmp_path: Path, capsys):
    config = fleet_config(tmp_path)
    SimulatorService(config).stop()  # creates and saves ibmi1, serves nothing
    fleet = tmp_path / "fleet.json"
    fleet.write_text(config.model_dump_json(), encoding="utf-8")
    assert not serving(config.state_dir)

    assert main(["sim", "open-unit-of-work", "ibmi1", "TEST", "--fleet", str(fleet)]) == 0
    assert "UOW000001 began on TEST" in capsys.readouterr().out
    reloaded = SimulatedHost.load(config.state_dir / "ibmi1.json")
    assert reloaded is not None and len(reloaded.partition.queue_managers[0].open_units_of_work) == 1

    assert main(["sim", "damage-object", "ibmi1", "TEST", "NO.SUCH.QUEUE", "--fleet", str(fleet)]) == 2
    assert "has no object 'NO.SUCH.QUEUE'" in capsys.readouterr().err
