"""The Linux paths (#32): host events, mqjournal's steps and faults interleaved by hypothesis, the invariants checked
after every step (tests/safety/linux_invariants.py). The Linux counterpart of test_stateful.py.

Each example is one queue manager of one LogManagement (Manual, Archive, or Automatic, where mqjournal only watches),
its log starting at extent zero or a few extents before the 9,999,999 wrap.

Host events (the queue manager's own work and its administrator's, on the host itself): log records that fill and
switch extents, each batch ending with a checkpoint; units of work opened and committed (an open one holds RECLOG
back); objects damaged (which holds MEDIALOG back) and re-created with rcrmqobj; media images recorded by someone else
(rcdmqimg); a restart (endmqm, strmqm) or a power loss (strmqm replays from RECLOG); RESET QMGR TYPE(ADVANCELOG); in
Manual mode an extent deleted by hand where IBM says one may be (behind both RECLOG and MEDIALOG), in Archive mode one
archived by hand (SET LOG ARCHIVED of any extent but the current one, which MQ accepts).

mqjournal's steps, over SSH to the simulator: collect (media images first) and plan (linuxmq/plan.py), archive what
the last plan archives, release (which plans again live); each possibly under one fault (`LinuxFault`): the
connection dropped before or after one of its commands, the command failing as the host would fail it, the host
answering "done" and doing nothing, a download cut or arriving with one byte changed.

After every step, faulted or not (the Linux faults leave no worker killed and no catalog locked, so every invariant
must hold at every moment): the queue manager restarts after a power loss, media recovery re-creates every object,
every extent mqjournal let go has a copy whose SHA-256 the host vouched for and whose bytes are that SHA-256, and
every command the host received is in the audit log, intent before, outcome after. A fault-free step must also end
without an error: an archive may only find an extent gone that its (older) plan named. A release that returns, with a
fault or without, tells the truth: what it says released is gone (Manual) or notified (Archive), what it says kept is
still there and waiting. Each example ends with a fault-free collect, plan, archive and release, all invariants, and a
live plan after it with nothing left to archive or release (liveness: what can go, went).

Profiles: `MQJ_STATEFUL=ci` (the default: 40 examples of up to 20 steps) runs in well under a minute;
`MQJ_STATEFUL=long` (`make safety-long`: 300 of up to 40, some 7 minutes) explores far more; `fast` is a smoke run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from mqjournal.errors import MqJournalError
from mqjournal.linuxmq import collector
from mqjournal.linuxmq.archive import ArchiveError
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, LogManagement
from mqjournal.linuxmq.plan import ExtentAction, QueueManagerLogPlan, plan_queue_manager
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from mqjournal.linuxsim import logger
from tests.linuxcollect.fleet import BIN, LINUX, archive, collect_and_plan, maintain, release, to_archive
from tests.safety.linux_invariants import let_go_by
from tests.safety.linux_scenario import (
    COMMAND_KINDS,
    EXTENT_BYTES,
    QMGR,
    TRANSFER_KINDS,
    LinuxFault,
    LinuxScenario,
)
from tests.safety.scenario import scratch_root

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "mqj-linux-ci", max_examples=40, stateful_step_count=20, deadline=None, report_multiple_bugs=False,
    suppress_health_check=_HEALTH,
)  # fmt: skip
settings.register_profile(
    "mqj-linux-fast", max_examples=3, stateful_step_count=8, deadline=None, report_multiple_bugs=False,
    suppress_health_check=_HEALTH,
)  # fmt: skip
settings.register_profile(
    "mqj-linux-long", max_examples=300, stateful_step_count=40, deadline=None, suppress_health_check=_HEALTH
)
PROFILE = f"mqj-linux-{os.environ.get('MQJ_STATEFUL', 'ci')}"

# The programs each step sends, and the last of their command lines a fault may be aimed at (from 0), so that a fault
# is aimed at a command the step does send: collect sends each program once; archive a sha256sum per extent; release
# a DISPLAY QMSTATUS then a SET LOG ARCHIVED per extent then one more DISPLAY (Archive), or an rm per extent then one
# more listing (Manual).
COLLECT = {"rcdmqimg": 0, "dspmqinf": 0, "cat": 0, "runmqsc": 0, "ls": 0}
ARCHIVE = {"sha256sum": 3}
RELEASE = {"dspmqinf": 0, "cat": 0, "runmqsc": 3, "ls": 1, "rm": 3}
EVENTS = (
    "uow_open",
    "uow_commit",
    "damage",
    "recreate",
    "image",
    "restart",
    "power_loss",
    "advance",
    "delete_by_hand",
    "archive_by_hand",
)


def faults(programs: dict[str, int], *, downloads: bool = False):
    command = st.sampled_from(sorted(programs.items())).flatmap(
        lambda sent: st.builds(
            LinuxFault,
            kind=st.sampled_from(COMMAND_KINDS),
            program=st.just(sent[0]),
            occurrence=st.integers(0, sent[1]),
        )
    )
    kinds = [command]
    if downloads:
        # Anywhere in the extent: in its first SFTP read or a later one.
        at = st.integers(0, EXTENT_BYTES - 1)
        kinds.append(st.builds(LinuxFault, kind=st.sampled_from(TRANSFER_KINDS), at_byte=at))
    # About half the steps run without a fault: they are the reruns that must finish what the others left.
    return st.one_of(st.none(), *kinds)


class LinuxLogMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = scratch_root("mqj-linux-stateful-")
        self.s: LinuxScenario | None = None
        self.snap: LinuxSnapshot | None = None
        self.plan: QueueManagerLogPlan | None = None
        self.run = "run0"
        self.runs = 0
        self.units = 0
        self.broken = True  # until a step ends normally: a failed example skips the final run in teardown

    # --- helpers ------------------------------------------------------------------------------------------------

    @property
    def scenario(self) -> LinuxScenario:
        assert self.s is not None, "the queue manager is created first"
        return self.s

    def check(self, when: str) -> None:
        report = self.scenario.checker().check()
        assert report.ok, f"after {when}:\n{report}"

    def step(self, name: str, fault: LinuxFault | None, work) -> None:
        self.broken = True
        with self.scenario.under(fault):
            if fault is None:
                work()
            else:
                with contextlib.suppress(MqJournalError):  # the fault's own failure, named; what it left is checked
                    work()
        self.check(f"a fault-free {name}" if fault is None else f"{name} under {fault}")
        self.broken = False

    # --- the start ----------------------------------------------------------------------------------------------

    @initialize(management=st.sampled_from(list(LogManagement)), near_wrap=st.booleans(), extents=st.integers(1, 6))
    def queue_manager_runs(self, management: LogManagement, near_wrap: bool, extents: int) -> None:
        self.s = LinuxScenario(
            self.root / "case", management=management, first_extent=EXTENT_NUMBERS - 2 if near_wrap else 0
        )
        self.scenario.log_work(extents * self.scenario.qm().extent_size)
        self.collect_and_plan(fault=None)

    # --- host events: the log moving on (a rule of its own: what every other step acts upon), and the rest (one
    # rule, so that mqjournal's steps get their share of the steps) -------------------------------------------------

    @rule(halves=st.integers(1, 6))
    def log_records(self, halves: int) -> None:
        """Applications' work: half an extent of log records per `halves`, then a checkpoint."""
        self.broken = True
        self.scenario.log_work(halves * self.scenario.qm().extent_size // 2)
        self.check("log records written")
        self.broken = False

    @rule(event=st.sampled_from(EVENTS), which=st.integers(0, 7))
    def host_event(self, event: str, which: int) -> None:
        self.broken = True
        getattr(self, f"_{event}")(which=which)
        self.check(f"host event {event}")
        self.broken = False

    def _uow_open(self, which: int) -> None:
        with self.scenario.live.state() as host:
            qm = host.queue_managers[QMGR]
            if len(qm.units_of_work) < 2:
                self.units += 1
                logger.open_unit_of_work(qm, f"uow{self.units}")

    def _uow_commit(self, which: int) -> None:
        with self.scenario.live.state() as host:
            qm = host.queue_managers[QMGR]
            if qm.units_of_work:
                logger.end_unit_of_work(qm, qm.units_of_work[which % len(qm.units_of_work)].id)

    def _damage(self, which: int) -> None:
        with self.scenario.live.state() as host:
            qm = host.queue_managers[QMGR]
            logger.damage(qm, qm.objects[which % len(qm.objects)].name)

    def _recreate(self, which: int) -> None:
        damaged = [o for o in self.scenario.qm().objects if o.damaged]
        if damaged:
            obj = damaged[which % len(damaged)]
            out = self.scenario.admin(f"{BIN}/rcrmqobj -m {QMGR} -t {obj.type} {obj.name}")
            assert out.exit_status == 0, f"rcrmqobj of {obj.name} failed: {out.stderr}"

    def _image(self, which: int) -> None:
        out = self.scenario.admin(f"{BIN}/rcdmqimg -m {QMGR} -t all '*'")
        damaged = any(o.damaged for o in self.scenario.qm().objects)
        assert out.exit_status == (1 if damaged else 0), out  # a damaged object is not imaged: AMQ7472

    def _restart(self, which: int) -> None:
        ended = self.scenario.admin(f"{BIN}/endmqm -i {QMGR}")
        assert ended.exit_status == 0, ended
        started = self.scenario.admin(f"{BIN}/strmqm {QMGR}")
        assert started.exit_status == 0, f"strmqm failed: {started.stderr}"

    def _power_loss(self, which: int) -> None:
        """The host loses power: no shutdown checkpoint, and strmqm replays the log from RECLOG."""
        with self.scenario.live.state() as host:
            logger.crash(host.queue_managers[QMGR])
        started = self.scenario.admin(f"{BIN}/strmqm {QMGR}")
        assert started.exit_status == 0, f"strmqm after a power loss failed: {started.stderr}"

    def _advance(self, which: int) -> None:
        out = self.scenario.admin(f"{BIN}/runmqsc {QMGR}", "RESET QMGR TYPE(ADVANCELOG)\n")
        assert out.exit_status == 0, out

    def _delete_by_hand(self, which: int) -> None:
        """Manual mode: an extent neither restart nor media recovery needs (IBM, q018510), by extent number."""
        qm = self.scenario.qm()
        if qm.log_management is not LogManagement.MANUAL:
            return
        unneeded = sorted(
            e.name for e in qm.extents.values() if e.number != qm.current and logger.unneeded(qm, e.number)
        )
        if unneeded:
            out = self.scenario.admin(f"rm -f {qm.active_path}{unneeded[which % len(unneeded)]}")
            assert out.exit_status == 0, out

    def _archive_by_hand(self, which: int) -> None:
        """Archive mode: the administrator copied an extent somewhere and tells MQ (any S extent but the current)."""
        qm = self.scenario.qm()
        if qm.log_management is not LogManagement.ARCHIVE:
            return
        waiting = sorted(e.name for e in logger.archive_waiting(qm))
        if waiting:
            name = waiting[which % len(waiting)]
            out = self.scenario.admin(f"{BIN}/runmqsc {QMGR}", f"SET LOG ARCHIVED('{name}')\n")
            assert out.exit_status == 0, out

    # --- mqjournal ----------------------------------------------------------------------------------------------

    @rule(fault=faults(COLLECT))
    def collect_and_plan(self, fault: LinuxFault | None) -> None:
        self.runs += 1
        run = f"run{self.runs}"

        def work() -> None:
            self.snap, self.plan = collect_and_plan(self.scenario.session, QMGR, self.scenario.catalog, run)
            self.run = run

        self.step("collect and plan", fault, work)

    @rule(fault=faults(ARCHIVE, downloads=True))
    def archive(self, fault: LinuxFault | None) -> None:
        s, snap, plan = self.scenario, self.snap, self.plan
        assert snap is not None and plan is not None

        def work() -> None:
            for name in to_archive(plan):
                try:
                    archive(s.session, snap, name, self.run, s.store, s.catalog)
                except ArchiveError:
                    if fault is not None or name in s.qm().extents:
                        raise
                    # The plan is older than the log: MQ (Archive mode, once notified) or an administrator (Manual)
                    # has let the extent go since. Only an extent still there must be copied.

        self.step("archive", fault, work)

    @rule(fault=faults(RELEASE))
    def release(self, fault: LinuxFault | None) -> None:
        s = self.scenario

        def work() -> None:
            said = release(s.session, QMGR, self.run, s.store, s.catalog)
            qm = s.qm()
            still = {e.name for e in logger.archive_waiting(qm)} if qm.log_management is LogManagement.ARCHIVE else None
            for name in said.released:  # gone (Manual), or no longer waiting for notification (Archive)
                assert name not in (qm.extents if still is None else still), f"{name} is said released: {said}"
            for name, why in said.kept.items():  # still there, as MQ's own
                assert name in qm.extents and (still is None or name in still), f"{name} is said kept ({why}): {said}"

        self.step("release", fault, work)

    # --- the end --------------------------------------------------------------------------------------------------

    def teardown(self) -> None:
        try:
            if not self.broken and self.s is not None:
                self.runs += 1
                maintain(self.s.session, QMGR, self.s.store, self.s.catalog, f"run{self.runs}")
                self.check("the final maintenance")
                left = self.left_to_do()
                assert not left, f"after the final maintenance a live plan still has {left}"
        finally:
            if self.s is not None:
                self.s.close()
            shutil.rmtree(self.root, ignore_errors=True)

    def left_to_do(self) -> dict[str, str]:
        """What a plan of the log as it is now (no new media images) would still copy off or release."""
        s = self.scenario
        now = collector.collect(s.session, QMGR, host=LINUX, run_id="check", bin_dir=BIN, media_images="imgsched")
        plan = plan_queue_manager(now, {c.extent for c in s.catalog.extent_copies(LINUX, QMGR)})
        return {
            d.extent: f"{d.action.value}: {d.reason}"
            for d in plan.decisions
            if d.action in (ExtentAction.ARCHIVE_THEN_RELEASE, ExtentAction.RELEASE)
        }


@pytest.mark.long  # a minute: make test starts it with the end-to-end units
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_linux_log_maintenance_under_host_events_and_faults_keeps_every_extent_mq_needs_and_records_every_command():
    run_state_machine_as_test(LinuxLogMachine, settings=settings.get_profile(PROFILE))


# --- sequences the machine is held to, run through it ---------------------------------------------------------------


def run_sequence(
    management: LogManagement,
    *steps: tuple[str, dict],
    near_wrap: bool = False,
    extents: int = 4,
    then: Callable[[LinuxLogMachine], None] = lambda machine: None,
) -> None:
    """Drive the machine through `steps` (rule name, arguments), call `then` with it, then its end: a whole run and
    every invariant."""
    machine = LinuxLogMachine()
    try:
        machine.queue_manager_runs(management=management, near_wrap=near_wrap, extents=extents)
        for name, arguments in steps:
            getattr(machine, name)(**arguments)
        then(machine)
    except BaseException:
        machine.broken = True
        raise
    finally:
        machine.teardown()


def let_go(machine: LinuxLogMachine) -> set[str]:
    """The extents mqjournal's commands let go so far."""
    return {name for entry in machine.scenario.received() for name in let_go_by(entry)}


def test_extents_across_the_wrap_are_archived_and_released_in_manual_mode_and_the_queue_manager_restarts():
    def across_the_wrap(machine: LinuxLogMachine) -> None:
        assert {Extent(EXTENT_NUMBERS - 1).name, Extent(0).name} <= let_go(machine), let_go(machine)

    run_sequence(
        LogManagement.MANUAL,
        ("log_records", {"halves": 6}),
        ("collect_and_plan", {"fault": None}),
        ("archive", {"fault": LinuxFault("cut", at_byte=40_000)}),
        ("archive", {"fault": None}),
        ("release", {"fault": LinuxFault("drop_after", "rm", occurrence=1)}),
        near_wrap=True,
        then=across_the_wrap,
    )


@pytest.mark.parametrize("management", [LogManagement.MANUAL, LogManagement.ARCHIVE])
def test_an_object_damaged_before_the_wrap_holds_medialog_there_and_the_extents_after_it_are_kept(management):
    """MEDIALOG S9999999.LOG is behind S0000002.LOG across the wrap: the extents numbered after the wrap are newer,
    media recovery needs them, and they are copied but kept (in Archive mode MQ would keep them even if told they
    were archived; in Manual mode nothing but the plan keeps them); then the damaged queue is re-created."""

    def medialog_before_the_wrap(machine: LinuxLogMachine) -> None:
        assert machine.snap is not None and machine.snap.media_extent == Extent(EXTENT_NUMBERS - 1).name
        assert Extent(EXTENT_NUMBERS - 2).name in let_go(machine), let_go(machine)
        assert not {Extent(n).name for n in range(3)} & let_go(machine), let_go(machine)

    run_sequence(
        management,
        ("host_event", {"event": "damage", "which": 1}),
        ("log_records", {"halves": 6}),
        ("collect_and_plan", {"fault": None}),
        ("archive", {"fault": None}),
        ("release", {"fault": None}),
        ("host_event", {"event": "recreate", "which": 0}),
        near_wrap=True,
        extents=1,
        then=medialog_before_the_wrap,
    )


def test_a_set_log_archived_the_host_says_it_did_and_did_not_leaves_the_extent_for_the_next_run_in_archive_mode():
    def still_waiting(machine: LinuxLogMachine) -> None:
        assert machine.plan is not None
        first = machine.plan.with_action(ExtentAction.ARCHIVE_THEN_RELEASE)[0]
        waiting = {e.name for e in logger.archive_waiting(machine.scenario.qm())}
        assert first in waiting, f"{first} is no longer waiting for notification: {sorted(waiting)}"

    run_sequence(
        LogManagement.ARCHIVE,
        ("log_records", {"halves": 6}),
        ("collect_and_plan", {"fault": None}),
        ("archive", {"fault": None}),
        ("release", {"fault": LinuxFault("lies", "runmqsc", occurrence=1)}),  # the first SET LOG ARCHIVED
        then=still_waiting,  # and the final run notifies it: nothing is left to release
    )
