"""The four ways the safety promise broke (issue #12), each reproduced on a simulated partition, each now held.

1. a save "verified" by a timestamp another save set; 2. AMQJRNINF trusted alone; 3. a backup that no longer
exists; 4. a command and a catalog record that could go missing when a step is interrupted.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mqjournal.catalog import Catalog, CatalogUnavailable, Operation
from mqjournal.ibmi.audit import read_audit, read_events
from mqjournal.policy import Policy
from mqjournal.sim import mq
from mqjournal.sim.model import CommandFault, UserSpace, qualified
from tests.ibmi.executing import planned, receivers_on_host


def _dead_worker() -> str:
    """host:pid of a worker of this machine that has ended, as a SIGKILLed task's has."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return f"{socket.gethostname()}:{ended.pid}"


DEAD_WORKER = _dead_worker()


class OutsideSaveLands:
    """The session, but the site's nightly SAVLIB of the queue manager library lands just before our SAVOBJ."""

    def __init__(self, session, shell) -> None:
        self._session, self._shell = session, shell
        self.audit = session.audit
        self.host, self.sql_runner = session.host, session.sql_runner

    def run(self, command):
        if "SAVOBJ" in command.text:
            assert self._shell.cl("CRTSAVF FILE(QGPL/NIGHTLY)")[0] == 0
            assert self._shell.cl("SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF(QGPL/NIGHTLY)")[0] == 0
        return self._session.run(command)

    def __getattr__(self, name):  # the rest (sftp, openssh, ...) is the session's own
        return getattr(self._session, name)


def test_a_failed_savobj_is_not_taken_as_saved_when_another_save_of_the_library_lands_meanwhile(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(CommandFault(pattern="SAVOBJ OBJ", msg_id="CPF3770", tokens=["QMTEST"]))
    racing = replace(executor, session=OutsideSaveLands(executor.session, sim_fleet.connect()))

    result = racing.save(to_save, save_library="QGPL")

    assert result.saved == [] and {name for name, _ in result.not_saved} == set(to_save)
    assert "does not hold it after SAVOBJ (CPF3770" in result.not_saved[0][1]
    assert all(executor.catalog.saves_of("ibmi1", "QMTEST", name) == [] for name in to_save)
    deleted = executor.delete(to_delete, policy=Policy())
    assert deleted.deleted == [] and set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_hostile_amqjrninf_does_not_release_the_receiver_the_startup_recovery_point_names(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    # An open unit of work holds AMQ7460 back at the second receiver; then AMQJRNINF is overwritten with asterisks
    # and a time decades ahead, and checkpoints fail, so nothing rewrites it.
    held = sim_fleet.host().partition.receivers[f"QMTEST/{to_delete[1]}"]
    with sim_fleet.host().state() as partition:
        mq.impossible_old_unit_of_work(partition, partition.queue_manager("TEST"), held)
    assert sim_fleet.connect().cl("RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(TEST)")[0] == 0
    with sim_fleet.host().state() as partition:
        partition.user_spaces[qualified("QMTEST", "AMQJRNINF")] = UserSpace(
            name="AMQJRNINF", library="QMTEST", data="********************20991231235959999"
        )
        partition.faults.commands.append(
            CommandFault(pattern="RCDMQMIMG", msg_id="CPF9898", tokens=["damaged"], times=0)
        )

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert result.kept[0][1].startswith("blocked on the live host:")
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_receivers_whose_save_file_was_deleted_on_the_host_and_from_the_store_are_kept(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (save_file,), (key,) = saved.save_files, saved.copied
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0
    executor.store.delete(key)

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert result.kept[0] == (
        to_delete[0],
        f"no proven backup: {save_file} no longer exists and has no verified copy in the backup store",
    )
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_receivers_whose_save_file_the_catalog_discarded_are_kept(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    (save_file,) = executor.save(to_save, save_library="QGPL").save_files
    executor.catalog.record_discarded("ibmi1", *save_file.split("/"), run_id="expiry1")

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == [] and "is discarded in the catalog" in result.kept[0][1]


def test_a_save_whose_file_and_stored_copy_are_gone_is_saved_again_into_a_new_file(sim_fleet, executor):
    to_save, _ = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (first,), (key,) = saved.save_files, saved.copied
    assert sim_fleet.connect().cl(f"DLTF FILE({first})")[0] == 0
    executor.store.delete(key)

    again = executor.save(to_save, save_library="QGPL")

    assert sorted(again.saved) == sorted(to_save) and again.save_files != [first]


def test_a_catalog_that_cannot_be_written_stops_the_delete_before_any_dltjrnrcv(sim_fleet, executor, tmp_path):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    locked = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}", lock_timeout=0.2)
    holder = sqlite3.connect(tmp_path / "catalog.db")
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        with pytest.raises(CatalogUnavailable, match=r"catalog\.db.*rerun the task"):
            replace(executor, catalog=locked).delete(to_delete, policy=Policy())
    finally:
        holder.rollback()
        holder.close()
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))
    assert not [r for r in read_audit(executor.session.audit.path) if "DLTJRNRCV" in r["command"]]


def test_a_delete_interrupted_after_the_host_ran_it_is_recorded_by_the_next_run(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    first = sim_fleet.host().partition.receivers[f"QMTEST/{to_delete[0]}"]
    # What a worker SIGKILLed during DLTJRNRCV leaves: both intents written, the receiver gone, nothing else.
    executor.catalog.begin(
        Operation(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            kind="delete",
            library="QMTEST",
            receivers=first.name,
            attached_at=first.attached_at,
            delete_option="*NONE",
            run_id="run0",
            worker=DEAD_WORKER,
        )
    )
    command = f"system 'DLTJRNRCV JRNRCV(QMTEST/{first.name}) DLTOPT(*NONE)'"
    executor.session.audit.intent(host="ibmi1", user="MQADMIN", command=command, attempt=1)
    _rewrite_worker(executor.session.audit.path, DEAD_WORKER)
    assert sim_fleet.connect().cl(f"DLTJRNRCV JRNRCV(QMTEST/{first.name})")[0] == 0

    result = executor.delete(to_delete, policy=Policy())

    assert result.already_gone == [first.name] and result.deleted == to_delete[1:]
    assert any("the interrupted DLTJRNRCV deleted it" in line for line in result.reconciled)
    assert [d.receiver for d in executor.catalog.deletions_for("ibmi1", "QMTEST")] == to_delete
    reconciled = [e for e in read_events(executor.session.audit.path) if e["event"] == "reconciled"]
    assert [e["finding"] for e in reconciled] == [f"{first.name} is gone from the host"]


def test_an_interrupted_save_is_recorded_from_the_save_file_content(sim_fleet, executor):
    to_save, _ = planned(executor)
    shell = sim_fleet.connect()
    assert shell.cl("CRTSAVF FILE(QGPL/MQJHALF0)")[0] == 0
    executor.catalog.begin(
        Operation(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            kind="save",
            library="QMTEST",
            receivers=" ".join(to_save),
            save_file_library="QGPL",
            save_file="MQJHALF0",
            run_id="run0",
            worker=DEAD_WORKER,
        )
    )
    assert (
        shell.cl(f"SAVOBJ OBJ({' '.join(to_save)}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/MQJHALF0)")[0] == 0
    )

    result = executor.save(to_save, save_library="QGPL")

    assert sorted(result.already_saved) == sorted(to_save) and result.saved == [] and result.save_files == []
    assert all(executor.catalog.saves_of("ibmi1", "QMTEST", n)[0].save_file == "MQJHALF0" for n in to_save)
    assert [op.state for op in executor.catalog.operations("ibmi1")] == ["reconciled"]


def test_the_intent_of_a_live_worker_is_left_alone(sim_fleet, executor):
    to_save, _ = planned(executor)
    executor.catalog.begin(
        Operation(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            kind="save",
            library="QMTEST",
            receivers=to_save[0],
            save_file_library="QGPL",
            save_file="MQJLIVE0",
            run_id="run0",
        )
    )  # this very process: its command may still be on its way
    executor.save(to_save, save_library="QGPL")
    assert next(op.state for op in executor.catalog.operations("ibmi1")) == "intent"


def _rewrite_worker(path, worker: str, **identity) -> None:
    """The last record of the audit log as written by `worker` (and its process identity fields, when given)."""
    lines = path.read_text().splitlines()
    import json

    last = json.loads(lines[-1])
    last["worker"] = worker
    for field in ("worker_started", "worker_boot"):
        last.pop(field, None)
    last |= identity
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n")


def _start_ticks(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[19])


def test_a_delete_interrupted_by_a_worker_whose_pid_another_process_has_now_is_recorded(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    first = sim_fleet.host().partition.receivers[f"QMTEST/{to_delete[0]}"]
    # After a restart, the killed worker's PID belongs to another live process (here: `sleep`); the worker started
    # at another time than that process did, since this boot.
    reused = subprocess.Popen(["sleep", "60"])
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        killed_worker_started = _start_ticks(reused.pid) - 100
        worker = f"{socket.gethostname()}:{reused.pid}"
        executor.catalog.begin(
            Operation(
                host="ibmi1",
                qmgr="TEST",
                qmgr_library="QMTEST",
                kind="delete",
                library="QMTEST",
                receivers=first.name,
                attached_at=first.attached_at,
                delete_option="*NONE",
                run_id="run0",
                worker=f"{worker} started={killed_worker_started} boot={boot}",
            )
        )
        command = f"system 'DLTJRNRCV JRNRCV(QMTEST/{first.name}) DLTOPT(*NONE)'"
        executor.session.audit.intent(host="ibmi1", user="MQADMIN", command=command, attempt=1)
        _rewrite_worker(executor.session.audit.path, worker, worker_started=killed_worker_started, worker_boot=boot)
        assert sim_fleet.connect().cl(f"DLTJRNRCV JRNRCV(QMTEST/{first.name})")[0] == 0

        result = executor.delete(to_delete, policy=Policy())
    finally:
        reused.kill()
        reused.wait()

    assert any("the interrupted DLTJRNRCV deleted it" in line for line in result.reconciled)
    assert [d.receiver for d in executor.catalog.deletions_for("ibmi1", "QMTEST")] == to_delete
    reconciled = [e for e in read_events(executor.session.audit.path) if e["event"] == "reconciled"]
    assert [e["finding"] for e in reconciled] == [f"{first.name} is gone from the host"]


def test_the_intents_of_a_live_worker_with_its_identity_are_left_alone(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    first = sim_fleet.host().partition.receivers[f"QMTEST/{to_delete[0]}"]
    live = executor.catalog.begin(
        Operation(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            kind="delete",
            library="QMTEST",
            receivers=first.name,
            attached_at=first.attached_at,
            delete_option="*NONE",
            run_id="run0",
        )
    )  # this very process, named with its start time and boot id: its DLTJRNRCV may still be on its way
    assert live.worker.endswith(
        f" started={_start_ticks(os.getpid())} boot={Path('/proc/sys/kernel/random/boot_id').read_text().strip()}"
    )
    command = f"system 'DLTJRNRCV JRNRCV(QMTEST/{first.name}) DLTOPT(*NONE)'"
    executor.session.audit.intent(host="ibmi1", user="MQADMIN", command=command, attempt=1)

    executor.delete(to_delete[1:], policy=Policy())

    assert next(op.state for op in executor.catalog.operations("ibmi1") if op.id == live.id) == "intent"
    assert not [e for e in read_events(executor.session.audit.path) if e["event"] == "reconciled"]


def test_an_interrupted_dltf_of_an_expired_save_file_is_recorded_discarded_by_the_next_step(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    (save_file,) = executor.save(to_save, save_library="QGPL").save_files
    library, name = save_file.split("/")
    executor.catalog.begin(
        Operation(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            kind="discard",
            library="QMTEST",
            receivers="",
            save_file_library=library,
            save_file=name,
            run_id="expiry1",
            worker=DEAD_WORKER,
        )
    )
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0  # the killed worker's DLTF ran

    result = executor.delete(to_delete, policy=Policy())

    assert save_file in executor.catalog.discarded_save_files("ibmi1")
    assert any("the interrupted DLTF deleted it" in line for line in result.reconciled)
    assert result.deleted == []
