"""Recovery on a simulated partition over SSH: gather, plan, execute, and the cases that must change nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mqjournal import rules
from mqjournal.airflow.recovery import request_from
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.fleet import ClusterConfig, HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi import commands as ibmi_commands
from mqjournal.ibmi.audit import AuditLog, read_audit
from mqjournal.ibmi.collector import Target, collect
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.policy import Policy
from mqjournal.recovery.execute import PlanHasGaps, PlanWentStale, RecoveryExecutor, StepFailed
from mqjournal.recovery.gather import gather, locate, probe
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.library_save import save_library
from mqjournal.recovery.plan import Action, RecoveryPlan, Request
from mqjournal.recovery.planner import plan_recovery
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.sim import mq, qmgrdir
from mqjournal.sim.model import CommandFault
from mqjournal.sim.service import SimulatorService
from tests.conftest import SimFleet, fleet_config, new_york_config, serve

QUEUE = "APP.REQUEST.QUEUE"


@dataclass
class Rig:
    """One queue manager on a simulated host, reached as the recovery DAG reaches it, plus the admin's shell."""

    fleet: SimFleet
    session: IbmiSession
    target: Target
    tz: object
    catalog: Catalog
    audit: Path
    clusters: tuple = ()
    store: BackupStore | None = None

    @property
    def partition(self):
        return self.fleet.host().partition

    def cl(self, command: str) -> tuple[int, str, str]:
        return self.fleet.connect().cl(command)

    def maintain(self, run_id: str) -> tuple[list[str], list[str]]:
        """The maintenance DAG: checkpoint, plan, save everything it may, delete what MQ no longer needs."""
        executor = Executor(self.session, self.target, "ibmi1", self.tz, self.catalog, run_id, self.store)
        snap = collect(self.session, self.target, host="ibmi1", run_id=run_id, tz=self.tz)
        _, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=Policy())
        to_save = [r.receiver for r in rows if r.action in rules.SAVES]
        to_delete = [r.receiver for r in sorted(rows, key=lambda r: r.chain_position or 0) if r.action in rules.DELETES]
        executor.save(to_save, save_library="QGPL")
        deleted = executor.delete(to_delete, policy=Policy()).deleted
        return to_save, deleted

    def chain(self) -> list[str]:
        """Receiver names of the journal on the host, oldest first."""
        return [
            r.name
            for r in sorted(self.partition.receivers_in("QMTEST"), key=lambda r: (r.attached_at is None, r.attached_at))
        ]

    def host_state(self) -> tuple:
        """What a refused recovery must leave exactly as it was."""
        p = self.partition
        receivers = sorted((r.name, r.status.value, r.attached_at, r.associated) for r in p.receivers_in("QMTEST"))
        journal = p.journals.get("QMTEST/AMQAJRN")
        qm = p.queue_manager("TEST")
        return receivers, journal and journal.attached, sorted(p.save_files), qm.running

    def delete_out_of_band(self, *names: str) -> None:
        for name in names:
            status, _, err = self.cl(f"DLTJRNRCV JRNRCV(QMTEST/{name}) DLTOPT(*IGNINQMSG)")
            assert status == 0, err

    def crash(self) -> None:
        with self.fleet.host().state() as partition:
            mq.crash(partition, partition.queue_manager("TEST"))

    def request(self, kind: RecoveryKind, **fields) -> Request:
        return Request(host="ibmi1", qmgr="TEST", kind=kind, **fields)

    def plan(self, kind: RecoveryKind, **fields) -> RecoveryPlan:
        inputs = gather(
            self.session,
            self.target,
            host="ibmi1",
            tz=self.tz,
            catalog=self.catalog,
            request=self.request(kind, **fields),
            clusters=self.clusters,
        )
        return plan_recovery(inputs)

    def executor(self, run_id: str = "recovery1") -> RecoveryExecutor:
        return RecoveryExecutor(
            self.session, self.target, "ibmi1", self.tz, self.catalog, run_id, clusters=self.clusters
        )

    def changing_commands(self, since: int = 0) -> list[str]:
        """Audited commands that can change the host: every CL command, and the one SQL service that changes."""
        return [
            r["command"]
            for r in read_audit(self.audit)[since:]
            if r["command"].startswith("system ")
            or any(
                "TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER" in s for s in ibmi_commands.sql_statements(r["command"]) or []
            )
        ]

    def audited(self) -> int:
        return len(read_audit(self.audit))


def make_rig(fleet: SimFleet, tmp_path: Path, clusters: tuple = ()) -> Rig:
    connect = ssh_connector(
        address="127.0.0.1",
        port=fleet.ports["ibmi1"],
        user=fleet.config.user,
        key=fleet.service.client_key,
        known_hosts=fleet.config.known_hosts,
    )
    audit = tmp_path / "audit.jsonl"
    session = IbmiSession("ibmi1", fleet.config.user, connect, audit=AuditLog(audit))
    found = survey(session, "ibmi1", [])
    (target,) = found.targets
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    return Rig(fleet, session, target, found.tz, catalog, audit, clusters, BackupStore(tmp_path / "backups"))


@pytest.fixture
def rig(sim_fleet: SimFleet, tmp_path: Path):
    made = make_rig(sim_fleet, tmp_path)
    yield made
    made.session.close()


def hold_startup_point(rig: Rig) -> None:
    """An application's unit of work stays open: the startup recovery pass will need the receivers from its start."""
    with rig.fleet.host().state() as partition:
        mq.open_unit_of_work(partition, partition.queue_manager("TEST"))


def broken_startup(rig: Rig, deleted: int = 2) -> list[str]:
    """Maintenance saves and deletes, then someone deletes `deleted` needed (saved) receivers and the partition
    crashes: STRMQM fails with AMQ7432. Returns the receivers deleted out of band, oldest first."""
    rig.fleet.host().advance(timedelta(hours=1))
    hold_startup_point(rig)
    rig.fleet.host().advance(timedelta(hours=2))
    _saved, _ = rig.maintain("maint1")
    victims = rig.chain()[:deleted]
    assert all(rig.catalog.saves_of("ibmi1", "QMTEST", v) for v in victims)
    rig.delete_out_of_band(*victims)
    rig.crash()
    status, _, err = rig.cl("STRMQM MQMNAME(TEST)")
    assert status != 0 and "AMQ7432" in err
    return victims


# --- startup --------------------------------------------------------------------------------------------------


def test_startup_recovery_restores_exactly_the_needed_receivers_newest_first_and_strmqm_succeeds(rig: Rig):
    victims = broken_startup(rig)
    plan = rig.plan(RecoveryKind.STARTUP)
    assert plan.gaps == []
    assert plan.restored_receivers == victims[::-1]
    for s in plan.steps:
        if s.action is Action.RESTORE_RECEIVER:
            (save,) = rig.catalog.saves_of("ibmi1", "QMTEST", s.receiver)
            assert (s.args["save_library"], s.args["save_file"]) == (save.save_file_library, save.save_file)

    result = rig.executor().execute(plan)
    assert [d.command for d in result.done] == [s.text for s in plan.steps]
    assert set(victims) <= set(rig.chain())
    assert rig.partition.queue_manager("TEST").running
    sent = rig.changing_commands()
    restores = [c for c in sent if "RSTOBJ" in c]
    assert [c.split("OBJ(")[1].split(")")[0] for c in restores] == victims[::-1]


def test_a_rerun_after_success_changes_nothing(rig: Rig):
    broken_startup(rig)
    plan = rig.plan(RecoveryKind.STARTUP)
    rig.executor().execute(plan)
    again = rig.executor("recovery2").execute(plan)
    assert [d.outcome for d in again.done] == ["already done"]  # STRMQM: the queue manager runs
    assert len(again.skipped) == len(plan.steps) - 1


# --- gaps: refused, and nothing changes ------------------------------------------------------------------------


def test_a_needed_receiver_deleted_without_a_save_is_a_gap_and_changes_nothing(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=1))
    hold_startup_point(rig)
    rig.fleet.host().advance(timedelta(hours=2))
    snap = collect(rig.session, rig.target, host="ibmi1", run_id="c", tz=rig.tz)  # the checkpoint, no save
    needed = snap.startup_recovery.receiver
    chain = rig.chain()
    rig.delete_out_of_band(*chain[: chain.index(needed) + 1])
    rig.crash()
    assert "AMQ7432" in rig.cl("STRMQM MQMNAME(TEST)")[2]
    before, audited = rig.host_state(), rig.audited()

    plan = rig.plan(RecoveryKind.STARTUP)
    assert plan.gaps and not plan.executable
    assert "older than every receiver" in plan.gaps[0].problem or "no verified save" in plan.gaps[0].problem
    with pytest.raises(PlanHasGaps) as refused:
        rig.executor().execute(plan)
    assert "nothing was run" in str(refused.value)
    assert rig.host_state() == before
    assert rig.changing_commands(audited) == []


def test_a_deleted_save_file_is_a_gap_and_an_approved_plan_needing_it_is_refused(rig: Rig):
    broken_startup(rig)
    approved = rig.plan(RecoveryKind.STARTUP)
    assert approved.executable
    save_file = f"{approved.steps[0].args['save_library']}/{approved.steps[0].args['save_file']}"
    assert rig.cl(f"DLTF FILE({save_file})")[0] == 0
    before, audited = rig.host_state(), rig.audited()

    again = rig.plan(RecoveryKind.STARTUP)
    assert any(f"{save_file} no longer exist" in g.problem for g in again.gaps)
    with pytest.raises(PlanHasGaps) as refused:
        rig.executor().execute(approved)
    assert save_file in str(refused.value)
    assert rig.host_state() == before
    assert rig.changing_commands(audited) == []


def test_a_plan_gone_stale_is_refused_and_changes_nothing(rig: Rig):
    broken_startup(rig)
    approved = rig.plan(RecoveryKind.STARTUP)
    # While the plan waits for approval, the next needed receiver goes too (it is saved: more to restore now).
    rig.delete_out_of_band(rig.chain()[0])
    before, audited = rig.host_state(), rig.audited()
    with pytest.raises(PlanWentStale) as refused:
        rig.executor().execute(approved)
    assert "plan and approve again" in str(refused.value)
    assert rig.host_state() == before
    assert rig.changing_commands(audited) == []


# --- a failure half way, and the rerun --------------------------------------------------------------------------


def test_a_failed_restore_stops_the_run_and_a_rerun_completes_it(rig: Rig):
    victims = broken_startup(rig)
    plan = rig.plan(RecoveryKind.STARTUP)
    oldest = victims[0]  # restored second (newest first)
    with rig.fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(pattern=f"RSTOBJ OBJ\\({oldest}\\)", msg_id="CPF9803", tokens=["", oldest, "QMTEST"])
        )
    with pytest.raises(StepFailed) as failed:
        rig.executor().execute(plan)
    error = failed.value
    assert error.obj == f"QMTEST/{oldest}" and error.msg_id == "CPF9803"
    assert [d.command for d in error.done] == [plan.steps[0].text]
    assert "Done before it: `RSTOBJ OBJ(" + victims[1] in str(error)
    assert not rig.partition.queue_manager("TEST").running

    rerun = rig.executor("recovery2").execute(plan)
    assert rerun.skipped == [plan.steps[0].text]
    assert [d.command for d in rerun.done] == [s.text for s in plan.steps[1:]]
    assert rig.partition.queue_manager("TEST").running


def test_strmqm_that_still_finds_an_entry_missing_names_the_entry_time(rig: Rig):
    broken_startup(rig)
    plan = rig.plan(RecoveryKind.STARTUP)
    with rig.fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(pattern="STRMQM", msg_id="AMQ7432", tokens=["", "", "2026-11-02 09:15:00", "TEST"])
        )
    with pytest.raises(StepFailed) as failed:
        rig.executor().execute(plan)
    error = failed.value
    assert error.msg_id == "AMQ7432" and error.obj == "queue manager TEST"
    # The time comes from the replacement data of the AMQ7432 on QMQMMSG (the injected fault's text is only printed
    # by `system`, in the job's language): never from the wording.
    assert "still needs the journal entry of 2026-" in error.problem and "no AMQ7432" not in error.problem
    # Shown as the partition's local time with its offset (issue #16), as QMQMMSG shows it.
    entry = re.search(r"journal entry of (\S+ \S+ \S+) \(host time\)", error.problem)
    assert entry and re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{2}:\d{2}", entry[1]), error.problem
    assert "plan the TEST startup recovery again" in error.action
    assert len(error.done) == len(plan.steps) - 1


def test_a_session_dropped_after_rstobj_ran_is_confirmed_on_the_host(rig: Rig):
    from mqjournal.sim.protocol import DropRule

    victims = broken_startup(rig)
    plan = rig.plan(RecoveryKind.STARTUP)
    rig.fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="RSTOBJ", after_run=True))
    result = rig.executor().execute(plan)
    assert result.done[0].outcome.startswith("done (confirmed on the host")
    assert set(victims) <= set(rig.chain()) and rig.partition.queue_manager("TEST").running


# --- media recovery ---------------------------------------------------------------------------------------------


def test_a_damaged_queue_is_recreated_from_restored_receivers(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=1))
    with rig.fleet.host().state() as partition:
        mq.damage(partition, partition.queue_manager("TEST"), QUEUE)
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint1")  # AMQ7462 holds every receiver back: all saved, none deleted
    victims = rig.chain()[:2]
    rig.delete_out_of_band(*victims)

    plan = rig.plan(RecoveryKind.MEDIA)
    assert plan.gaps == [] and plan.request.object == QUEUE and plan.request.object_type == "*LCLQ"
    assert plan.restored_receivers == victims[::-1]
    assert plan.steps[-1].action is Action.RECREATE_OBJECT
    result = rig.executor().execute(plan)
    assert result.done[-1].messages == [f"AMQ7081: Object {QUEUE}, type LCLQ recreated."]
    assert not rig.partition.queue_manager("TEST").object(QUEUE).damaged


# --- library saves and a lost library -------------------------------------------------------------------------


@pytest.fixture
def clustered(tmp_path: Path):
    """Like `sim_fleet`, with TEST a partial repository of cluster CLUS1."""
    qm = QueueManagerConfig(
        name="TEST",
        threshold_kb=500,
        entries_per_minute=40,
        clusters=[ClusterConfig(name="CLUS1", full_repository=False)],
    )
    config = fleet_config(tmp_path, [HostConfig(name="ibmi1", port=0, utc_offset="+01:00", queue_managers=[qm])])
    service = SimulatorService(config)
    ports = service.start()
    made = make_rig(SimFleet(service, ports, config), tmp_path, clusters=tuple(qm.clusters))
    try:
        yield made
    finally:
        made.session.close()
        service.stop()


def take_library_save(rig: Rig, run_id: str = "lib1"):
    return save_library(
        rig.session,
        rig.target,
        host="ibmi1",
        tz=rig.tz,
        catalog=rig.catalog,
        save_library="QGPL",
        run_id=run_id,
        routes=None,
    )


def test_a_library_save_ends_saves_verifies_restarts_and_records(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=2))
    attached_before = next(r for r in rig.partition.receivers_in("QMTEST") if r.status.value == "ATTACHED")
    result = take_library_save(rig)
    record = result.record
    assert rig.partition.queue_manager("TEST").running
    # Named for the queue manager library and the day, described for a person: WRKOBJ tells whose save it is.
    assert re.fullmatch(r"TEST\d{3}[A-Z0-9]", record.save_file)
    assert rig.partition.save_files[f"QGPL/{record.save_file}"].text.startswith("mqjournal TEST library QMTEST 20")
    assert (record.attached_receiver, record.attached_at) == (attached_before.name, attached_before.attached_at)
    assert record.oldest_needed_receiver in rig.chain() and record.threshold_kb == 500
    assert rig.catalog.library_saves("ibmi1", "QMTEST") == [record]
    detached = [
        n
        for n in rig.chain()
        if n != attached_before.name and rig.chain().index(n) < rig.chain().index(attached_before.name)
    ]
    assert result.receivers == detached
    for name in detached:
        (save,) = rig.catalog.saves_of("ibmi1", "QMTEST", name)
        assert save.save_file == record.save_file
    assert rig.catalog.saves_of("ibmi1", "QMTEST", attached_before.name) == []  # saved while attached: not full
    commands = [c.split("'")[1].split(" ")[0] for c in rig.changing_commands()]
    assert commands == ["RCDMQMIMG", "ENDMQM", "CRTSAVF", "SAVLIB", "CRTSAVF", "SAV", "STRMQM"]
    # The IFS part: MQ's object definitions and their messages, saved beside the library into a save file of its own.
    assert record.directory == "/QIBM/UserData/mqm/qmgrs/TEST"
    assert record.directory_save_file not in (None, record.save_file)
    assert rig.partition.save_files[f"QGPL/{record.directory_save_file}"].kind == "DIR"


def test_a_failed_library_save_still_restarts_the_queue_manager(rig: Rig):
    from mqjournal.recovery.library_save import LibrarySaveFailed

    with rig.fleet.host().state() as partition:
        partition.faults.commands.append(CommandFault(pattern="SAVLIB", msg_id="CPF9898", tokens=["ASP full"]))
    with pytest.raises(LibrarySaveFailed) as failed:
        take_library_save(rig)
    assert "SAVLIB failed (CPF9898: ASP full.)" in failed.value.problem
    assert "the queue manager runs again" in failed.value.action
    assert rig.partition.queue_manager("TEST").running
    assert rig.catalog.library_saves("ibmi1", "QMTEST") == []


def test_a_lost_library_comes_back_from_its_save_and_the_later_receivers_and_rejoins_its_cluster(clustered: Rig):
    rig = clustered
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint1")
    take_library_save(rig)
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint2")  # the receivers written since the library save are saved too
    last_saved = max((r for r in rig.catalog.receivers("ibmi1", "QMTEST")), key=lambda r: r.attached_at)
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0

    plan = rig.plan(RecoveryKind.LIBRARY)
    assert plan.gaps == []
    assert [s.action for s in plan.steps[:5]] == [
        Action.RESTORE_LIBRARY,
        Action.RESTORE_QMGR_DIRECTORY,
        Action.CREATE_RECEIVER,
        Action.GIVE_RECEIVER_TO_QMQM,
        Action.CREATE_JOURNAL,
    ]
    fresh = plan.steps[2].args["receiver"]
    assert fresh.startswith("AMQA1")  # a new restore generation: no clash with a receiver still to restore
    assert plan.restored_receivers[0] == last_saved.name
    assert plan.steps[-1].text == "RFRMQMCL CLUSTER('CLUS1') MQMNAME('TEST') REPOS(*NO)"

    result = rig.executor().execute(plan)
    assert [d.command for d in result.done] == [s.text for s in plan.steps]
    qm = rig.partition.queue_manager("TEST")
    assert qm.running
    assert qm.cluster("CLUS1").refresh_count == 1 and qm.cluster("CLUS1").last_refresh_repos is False
    journal = rig.partition.journals["QMTEST/AMQAJRN"]
    assert journal.attached == fresh
    assert set(plan.restored_receivers) <= set(rig.chain())

    # The restored queue manager journals on; the system names its receivers by rule 1 from the new one.
    rig.fleet.host().advance(timedelta(hours=1))
    newer = [n for n in rig.chain() if n.startswith("AMQA1")]
    assert newer[:3] == [fresh, fresh[:5] + f"{int(fresh[5:]) + 1:05d}", fresh[:5] + f"{int(fresh[5:]) + 2:05d}"]


# --- naming repair --------------------------------------------------------------------------------------------


def stop_switching(rig: Rig) -> str:
    """An admin creates the receiver named next by rule 1: at the threshold, CPI70E3 and switching stops."""
    rig.fleet.host().advance(timedelta(hours=1))
    attached = rig.partition.journals["QMTEST/AMQAJRN"].attached
    following = attached[:5] + f"{int(attached[5:]) + 1:05d}"
    assert rig.cl(f"CRTJRNRCV JRNRCV(QMTEST/{following}) THRESHOLD(500)")[0] == 0
    rig.fleet.host().advance(timedelta(hours=1))
    assert rig.partition.journals["QMTEST/AMQAJRN"].attached == attached  # stuck, growing past its threshold
    assert any(m.id == "CPI70E3" for m in rig.partition.message_queues["QSYS/QSYSOPR"].messages)
    return attached


def test_a_naming_repair_attaches_the_next_free_name_and_switching_follows_rule_1_again(rig: Rig):
    stuck = stop_switching(rig)
    plan = rig.plan(RecoveryKind.NAMING)
    new = plan.steps[0].args["receiver"]
    assert new == stuck[:5] + f"{int(stuck[5:]) + 2:05d}"
    assert [s.action for s in plan.steps] == [
        Action.CREATE_RECEIVER,
        Action.GIVE_RECEIVER_TO_QMQM,
        Action.ATTACH_RECEIVER,
    ]
    rig.executor().execute(plan)
    assert rig.partition.journals["QMTEST/AMQAJRN"].attached == new
    assert rig.partition.receivers[f"QMTEST/{new}"].owner == "QMQM"
    rig.fleet.host().advance(timedelta(hours=1))
    after = rig.chain()[rig.chain().index(new) :]
    assert after[:3] == [new, new[:5] + f"{int(new[5:]) + 1:05d}", new[:5] + f"{int(new[5:]) + 2:05d}"]


def test_a_naming_repair_that_failed_at_chgjrn_resumes_with_the_receiver_it_created(rig: Rig):
    stop_switching(rig)
    plan = rig.plan(RecoveryKind.NAMING)
    new = plan.steps[0].args["receiver"]
    with rig.fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(pattern="CHGJRN", msg_id="CPF9803", tokens=["", "AMQAJRN", "QMTEST"])
        )
    with pytest.raises(StepFailed) as failed:
        rig.executor().execute(plan)
    assert failed.value.msg_id == "CPF9803" and len(failed.value.done) == 2
    rerun = rig.executor("recovery2").execute(plan)
    assert rerun.skipped == [plan.steps[0].text]
    assert rig.partition.journals["QMTEST/AMQAJRN"].attached == new


# --- backup expiry --------------------------------------------------------------------------------------------


def test_backup_expiry_deletes_the_save_files_no_restore_needs_and_records_them_discarded(rig: Rig):
    for n in (1, 2, 3):
        rig.fleet.host().advance(timedelta(hours=2))
        rig.maintain(f"maint{n}")
        take_library_save(rig, f"lib{n}")
    plan = rig.plan(RecoveryKind.EXPIRY)
    assert plan.gaps == [] and plan.steps
    doomed = [f"{s.args['library']}/{s.args['name']}" for s in plan.steps]
    oldest_library_save = min(rig.catalog.library_saves("ibmi1", "QMTEST"), key=lambda s: s.saved_at)
    assert oldest_library_save.save_file_path in doomed

    result = rig.executor().execute(plan)
    assert [d.outcome for d in result.done] == ["done"] * len(doomed)
    assert not set(doomed) & set(rig.partition.save_files)
    assert rig.catalog.discarded_save_files("ibmi1") == set(doomed)
    assert len(rig.catalog.library_saves("ibmi1", "QMTEST")) == 2
    assert rig.plan(RecoveryKind.EXPIRY).steps == []


def lost_library(rig: Rig) -> RecoveryPlan:
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint1")
    take_library_save(rig)
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint2")
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0
    plan = rig.plan(RecoveryKind.LIBRARY)
    assert plan.executable
    return plan


def test_a_library_recovery_that_failed_half_way_resumes_where_it_stopped(rig: Rig):
    plan = lost_library(rig)
    second = plan.restored_receivers[1]
    with rig.fleet.host().state() as partition:
        partition.faults.commands.append(
            CommandFault(pattern=f"RSTOBJ OBJ\\({second}\\)", msg_id="CPF9803", tokens=["", second, "QMTEST"])
        )
    with pytest.raises(StepFailed) as failed:
        rig.executor().execute(plan)
    assert failed.value.obj == f"QMTEST/{second}" and len(failed.value.done) == 6

    rerun = rig.executor("recovery2").execute(plan)
    # RSTLIB, CRTJRNRCV, CHGOBJOWN, CRTJRN, first RSTOBJ; the host cannot show whether RST of the IFS directory ran,
    # so it runs again: before STRMQM that restores the same directory over itself.
    assert rerun.skipped == [s.text for i, s in enumerate(plan.steps[:6]) if i != 1]
    assert [d.command for d in rerun.done] == [plan.steps[1].text] + [s.text for s in plan.steps[6:]]
    assert rig.partition.queue_manager("TEST").running
    assert set(plan.restored_receivers) <= set(rig.chain())


def test_a_lost_partition_comes_back_with_its_queues_messages_from_the_library_save_and_its_ifs_part(rig: Rig):
    with rig.fleet.host().state() as partition:
        mq.put_messages(partition, partition.queue_manager("TEST"), "SYSTEM.DEFAULT.LOCAL.QUEUE", 9)
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint1")
    record = take_library_save(rig).record
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint2")
    # The library and the IFS directory are both lost.
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0
    with rig.fleet.host().state() as partition:
        qmgrdir.lose_directory(partition, partition.queue_manager("TEST"))

    plan = rig.plan(RecoveryKind.LIBRARY)
    assert plan.gaps == [] and plan.executable
    (rst,) = [s for s in plan.steps if s.action is Action.RESTORE_QMGR_DIRECTORY]
    assert rst.text == (
        f"RST DEV('/QSYS.LIB/QGPL.LIB/{record.directory_save_file}.FILE') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))"
    )
    rig.executor().execute(plan)
    qm = rig.partition.queue_manager("TEST")
    assert qm.running and qm.directory_present
    assert qm.object("SYSTEM.DEFAULT.LOCAL.QUEUE").messages == 9


def test_a_library_save_without_its_ifs_part_is_a_gap_not_a_complete_recovery(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=2))
    record = take_library_save(rig).record
    # A library save catalogued before the IFS part was taken (revision 0007 left its columns empty).
    older = record.model_copy(update={"directory": None, "directory_save_file": None, "save_file": "TEST999Z"})
    assert rig.cl("CRTSAVF FILE(QGPL/TEST999Z)")[0] == 0
    rig.catalog.record_library_save(older.model_copy(update={"saved_at": record.saved_at + timedelta(seconds=1)}))
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0

    plan = rig.plan(RecoveryKind.LIBRARY)
    assert not plan.executable
    (gap,) = [g for g in plan.gaps if "IFS directory" in g.obj]
    assert "/QIBM/UserData/mqm/qmgrs/TEST" in gap.obj
    assert "without its IFS part" in gap.problem and "mqjournal save-library" in gap.action
    assert not any(s.action is Action.RESTORE_QMGR_DIRECTORY for s in plan.steps)
    before, audited = rig.host_state(), rig.audited()
    with pytest.raises(PlanHasGaps):
        rig.executor().execute(plan)
    assert rig.host_state() == before and rig.changing_commands(audited) == []


def test_a_library_plan_is_refused_once_someone_else_brought_the_queue_manager_back(rig: Rig):
    plan = lost_library(rig)
    save_file = plan.steps[0].args["save_file"]
    # An admin restores the library by hand, journal included: IBM i attaches a receiver of its own choosing.
    assert rig.cl(f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF(QGPL/{save_file}) OMITOBJ((QMTEST/AMQA* *JRNRCV))")[0] == 0
    before, audited = rig.host_state(), rig.audited()
    with pytest.raises(PlanWentStale) as refused:
        rig.executor().execute(plan)
    assert "someone else restored the queue manager" in str(refused.value)
    assert rig.host_state() == before and rig.changing_commands(audited) == []


def test_a_library_lost_right_after_its_save_comes_back_from_the_save_alone(rig: Rig):
    """No maintenance since the save: the receiver attached during it exists only as the save's own copy, which
    holds every entry up to the save because the queue manager was ended for it."""
    rig.fleet.host().advance(timedelta(hours=2))
    record = take_library_save(rig).record
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0

    plan = rig.plan(RecoveryKind.LIBRARY)
    assert plan.gaps == [], plan.markdown()
    restores = [s for s in plan.steps if s.action is Action.RESTORE_RECEIVER]
    assert restores[0].receiver == record.attached_receiver
    assert restores[0].args["save_file"] == record.save_file
    assert plan.restore_point == record.saved_at
    rig.executor().execute(plan)
    assert rig.partition.queue_manager("TEST").running
    assert record.attached_receiver in rig.chain()


# --- a partition in another language and date format (#13) -----------------------------------------------------


@pytest.fixture
def german(tmp_path: Path):
    """ibmi1 as a German job with day.month.year dates on IBM i 7.4: texts differ, replacement data does not."""
    system = PartitionSystemConfig(language="DEU", date_format="*DMY", date_separator=".", release="7.4")
    qm = QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)
    config = fleet_config(
        tmp_path, [HostConfig(name="ibmi1", port=0, utc_offset="+01:00", system=system, queue_managers=[qm])]
    )
    with serve(config) as fleet:
        made = make_rig(fleet, tmp_path)
        yield made
        made.session.close()


def test_startup_recovery_on_a_german_dmy_partition_restores_what_amq7432_needs(german: Rig):
    victims = broken_startup(german)
    _, _, err = german.cl("STRMQM MQMNAME(TEST)")
    assert "AMQ7432: IBM MQ-Journaleintrag nicht verfügbar" in err  # German; its time is day.month.year
    plan = german.plan(RecoveryKind.STARTUP)
    assert plan.gaps == [] and plan.restored_receivers == victims[::-1]
    german.executor().execute(plan)
    assert set(victims) <= set(german.chain()) and german.partition.queue_manager("TEST").running


def test_media_recovery_on_a_german_partition_finds_the_damaged_object_from_amq7472(german: Rig):
    media_recovery_of_a_damaged_queue_from_amq7472(german)


def media_recovery_of_a_damaged_queue_from_amq7472(rig: Rig) -> None:
    """QUEUE damaged, maintenance run, the two oldest receivers deleted by someone else: the media plan finds the
    object from AMQ7472, restores them, and RCRMQMOBJ re-creates it."""
    rig.fleet.host().advance(timedelta(hours=1))
    with rig.fleet.host().state() as partition:
        mq.damage(partition, partition.queue_manager("TEST"), QUEUE)
    rig.fleet.host().advance(timedelta(hours=2))
    rig.maintain("maint1")
    victims = rig.chain()[:2]
    rig.delete_out_of_band(*victims)
    plan = rig.plan(RecoveryKind.MEDIA)
    assert plan.gaps == [] and plan.request.object == QUEUE and plan.request.object_type == "*LCLQ"
    assert plan.restored_receivers == victims[::-1]
    result = rig.executor().execute(plan)
    assert [m.split(":")[0] for m in result.done[-1].messages] == ["AMQ7081"]
    assert not rig.partition.queue_manager("TEST").object(QUEUE).damaged


def test_recovery_reads_and_writes_the_partitions_times_with_the_offset_then_in_force(tmp_path: Path):
    # New York's partition, located and probed in EST: a time from before the end of DST (AMQ7432's, typed by the
    # admin without an offset, as the partition shows it) is an EDT time, not today's -05:00.
    config = new_york_config(tmp_path, start=datetime(2026, 11, 1, 3, 0, tzinfo=UTC))
    with serve(config, advance=timedelta(hours=6)) as fleet:
        rig = make_rig(fleet, tmp_path)
        try:
            located, tz = locate(rig.session, "ibmi1", QueueManagerConfig(name="TEST"))
            found = probe(rig.session, located, tz)
        finally:
            rig.session.close()
    assert found.now.utcoffset() == timedelta(hours=-5)
    for zone in (rig.tz, tz, found.tz):
        assert zone.aware(datetime(2026, 10, 31, 22, 0)) == datetime(2026, 11, 1, 2, 0, tzinfo=UTC)
        assert zone.local(datetime(2026, 11, 1, 2, 0, tzinfo=UTC)) == datetime(2026, 10, 31, 22, 0)
    needed = request_from({"host": "ibmi1", "qmgr": "TEST", "kind": "startup", "timestamp": "2026-10-31 22:00"}, tz)
    assert needed.needed_at == datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


# --- a partition whose message descriptions declare another layout (#29) ------------------------------------------

# MQ's numeric inserts as 2 bytes and the names with a 2-byte length: every offset after them moves, so the fixed
# layout of mqmessages.LAYOUTS reads another time and another object from the same bytes.
DECLARED = {
    "AMQ7460": "(*BIN 4) (*BIN 4) (*DTS 8) (*CHAR 10 *VARY 2) (*CHAR 10 *VARY 2) (*CHAR 48)",
    "AMQ7462": "(*BIN 4) (*BIN 4) (*DTS 8) (*CHAR 10 *VARY 2) (*CHAR 10 *VARY 2) (*CHAR 48)",
    "AMQ7432": "(*BIN 2) (*BIN 2) (*DTS 8) (*CHAR 48 *VARY 2)",
    "AMQ7472": "(*BIN 2) (*BIN 2) (*CHAR 48 *VARY 2) (*CHAR 10 *VARY 2)",
}


def _declaring(tmp_path: Path, formats: dict[str, str]):
    system = PartitionSystemConfig(message_formats=formats)
    qm = QueueManagerConfig(name="TEST", threshold_kb=500, entries_per_minute=40)
    config = fleet_config(
        tmp_path, [HostConfig(name="ibmi1", port=0, utc_offset="+01:00", system=system, queue_managers=[qm])]
    )
    with serve(config) as fleet:
        made = make_rig(fleet, tmp_path)
        yield made
        made.session.close()


@pytest.fixture
def declaring(tmp_path: Path):
    """ibmi1 whose AMQMSG declares other layouts for AMQ7460/7462/7432/7472 (fleet `system.message_formats`)."""
    yield from _declaring(tmp_path, DECLARED)


@pytest.fixture
def time_as_text(tmp_path: Path):
    """ibmi1 whose AMQ7432 description declares the entry's time as text, which mqjournal does not read as a time."""
    yield from _declaring(tmp_path, {"AMQ7432": "(*BIN 4) (*BIN 4) (*CHAR 26) (*CHAR 48)"})


def test_startup_recovery_reads_amq7432_by_the_declared_layout(declaring: Rig):
    victims = broken_startup(declaring)
    plan = declaring.plan(RecoveryKind.STARTUP)
    assert plan.gaps == [] and plan.restored_receivers == victims[::-1]
    declaring.executor().execute(plan)
    assert set(victims) <= set(declaring.chain()) and declaring.partition.queue_manager("TEST").running


def test_media_recovery_reads_amq7472_by_the_declared_layout(declaring: Rig):
    media_recovery_of_a_damaged_queue_from_amq7472(declaring)


def test_an_amq7432_that_does_not_decode_makes_the_startup_plan_ask_for_the_time_naming_dspmsgd(time_as_text: Rig):
    broken_startup(time_as_text)
    before, audited = time_as_text.host_state(), time_as_text.audited()
    with pytest.raises(RecoveryRefused) as refused:
        time_as_text.plan(RecoveryKind.STARTUP)
    error = refused.value
    assert "the newest AMQ7432 in QMQMMSG" in error.problem and "&3 (at) is declared *CHAR 26" in error.problem
    assert "DSPMSGD RANGE(AMQ7432) MSGF(QMQM/AMQMSG)" in error.problem
    assert "give the date and time AMQ7432 reports" in error.action
    assert time_as_text.host_state() == before and time_as_text.changing_commands(audited) == []
