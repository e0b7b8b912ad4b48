"""MQ's startup recovery point (AMQ7460) and the oldest receiver it needs (AMQJRNINF) never move backwards between
checkpoints: a unit of work begins at the current end of the journal, so it can hold the point back, never pull it
back (seeds: "If the journal receiver named in AMQ7460 is not advanced, this indicates that there is an incomplete
unit of work"). A stateful property over random workloads, units of work, damage, checkpoints, ENDMQM/STRMQM and
power losses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.sim import mq
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.joblog import JobLog
from mqjournal.sim.model import Partition, Workload

START = datetime(2026, 11, 1, 8, 0, tzinfo=timezone(timedelta(hours=1)))


def new_partition() -> tuple[Partition, str]:
    partition = Partition(name="PROPTEST", now=START)
    mq.create_queue_manager(
        partition, "TEST", "QMTEST", threshold_kb=200, workload=Workload(entries_per_minute=60, entry_bytes=700)
    )
    return partition, "TEST"


class RecoveryPointMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.partition, self.name = new_partition()
        self.points: list[int] = []
        self.needed: list[int] = []

    @property
    def qm(self):
        return self.partition.queue_manager(self.name)

    @rule(minutes=st.integers(min_value=1, max_value=90))
    def time_passes(self, minutes: int) -> None:
        mq.advance(self.partition, self.partition.now + timedelta(minutes=minutes))

    @precondition(lambda self: self.qm.running)
    @rule()
    def a_unit_of_work_begins(self) -> None:
        mq.open_unit_of_work(self.partition, self.qm)

    @precondition(lambda self: self.qm.running and self.qm.open_units_of_work)
    @rule(which=st.integers(min_value=0, max_value=5))
    def a_unit_of_work_ends(self, which: int) -> None:
        uow = self.qm.open_units_of_work[which % len(self.qm.open_units_of_work)]
        mq.end_unit_of_work(self.partition, self.qm, uow.id)

    @precondition(lambda self: self.qm.running)
    @rule(which=st.integers(min_value=0, max_value=3))
    def an_object_is_damaged(self, which: int) -> None:
        mq.damage(self.partition, self.qm, self.qm.objects[which % len(self.qm.objects)].name)

    @precondition(lambda self: self.qm.running)
    @rule()
    def rcdmqmimg_forces_a_checkpoint(self) -> None:
        mq.record_images(self.partition, self.qm, "*ALL", "*ALL", JobLog())

    @precondition(lambda self: self.qm.running)
    @rule(images=st.booleans())
    def endmqm(self, images: bool) -> None:
        mq.end(self.partition, self.qm, JobLog(), record_images=images)

    @precondition(lambda self: self.qm.running)
    @rule()
    def power_loss(self) -> None:
        mq.crash(self.partition, self.qm)

    @precondition(lambda self: not self.qm.running)
    @rule()
    def strmqm(self) -> None:
        mq.start(self.partition, self.qm, JobLog())

    @invariant()
    def the_startup_point_never_moves_backwards(self) -> None:
        self.points.append(self.qm.startup_point.sequence)
        assert self.points == sorted(self.points)

    @invariant()
    def the_oldest_needed_entry_never_moves_backwards(self) -> None:
        self.needed.append(mq.oldest_needed(self.qm).sequence)
        assert self.needed == sorted(self.needed)

    @invariant()
    def no_open_unit_of_work_begins_before_the_point(self) -> None:
        assert all(u.started_sequence >= self.qm.startup_point.sequence for u in self.qm.open_units_of_work)


TestRecoveryPointNeverMovesBackwards = RecoveryPointMachine.TestCase
TestRecoveryPointNeverMovesBackwards.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


def test_a_long_unit_of_work_holds_the_point_and_it_moves_on_once_it_ends():
    partition, name = new_partition()
    qm = partition.queue_manager(name)
    uow = mq.open_unit_of_work(partition, qm)
    mq.advance(partition, partition.now + timedelta(hours=3))
    mq.record_images(partition, qm, "*ALL", "*ALL", JobLog())
    assert qm.startup_point.sequence == uow.started_sequence
    mq.end_unit_of_work(partition, qm, uow.id)
    mq.record_images(partition, qm, "*ALL", "*ALL", JobLog())
    assert qm.startup_point.sequence > uow.started_sequence


@pytest.mark.parametrize("threshold_kb", [1, 20, 40])
def test_a_queue_manager_with_a_tiny_threshold_can_be_created_and_run(threshold_kb):
    # CRTMQM's first media images switch receivers when the threshold is tiny: the checkpoint that switch takes
    # counts only the objects imaged so far (it used to fail on an object without an image).
    config = HostConfig(name="x", queue_managers=[QueueManagerConfig(name="T", threshold_kb=threshold_kb)])
    host = SimulatedHost.create(config, datetime(2026, 1, 1, tzinfo=UTC), None)
    host.advance(timedelta(minutes=30))
    qm = host.partition.queue_manager("T")
    assert len(host.partition.receivers_in(qm.library)) > 1 and all(o.image_at for o in qm.objects)


def test_a_unit_of_work_whose_first_record_switches_receivers_is_held_by_the_checkpoint_of_that_switch():
    partition, name = new_partition()
    qm = partition.queue_manager(name)
    mq.advance(partition, partition.now + timedelta(minutes=1))
    mq.advance(partition, partition.now + timedelta(minutes=40))
    receivers = len(partition.receivers_in(qm.library))
    uow = mq.open_unit_of_work(partition, qm)
    assert len(partition.receivers_in(qm.library)) == receivers + 1, "its first record should cross the threshold"
    assert qm.startup_point.sequence <= uow.started_sequence
