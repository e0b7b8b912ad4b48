"""Restore and recovery on the IBM i simulator, over real SSH: library save and restore, lost libraries, the MQ
restore pitfall and its documented workaround, receiver association, media recovery, and cluster refresh."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pydantic
import pytest

from mqjournal.fleet import ClusterConfig, HostConfig, QueueManagerConfig
from mqjournal.names import ReceiverName
from mqjournal.sim import mq
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.service import SimulatorService
from tests.conftest import SimFleet, fleet_config, serve
from tests.sim.test_simulator_over_ssh import attached, checkpoint, messages, oldest_needed, receivers

LIBSAVE = "QGPL/LIBSAVE"
RCVSAVE = "QGPL/RCVSAVE"
JOURNAL = (
    "SELECT ATTACHED_JOURNAL_RECEIVER_NAME, NUMBER_JOURNAL_RECEIVERS FROM QSYS2.JOURNAL_INFO"
    " WHERE JOURNAL_LIBRARY = 'QMTEST' AND JOURNAL_NAME = 'AMQAJRN'"
)
ALL_RECEIVERS = (
    "SELECT JOURNAL_RECEIVER_NAME, STATUS, JOURNAL_NAME, FIRST_SEQUENCE_NUMBER, LAST_SEQUENCE_NUMBER,"
    " PREVIOUS_JOURNAL_RECEIVER, NEXT_JOURNAL_RECEIVER FROM QSYS2.JOURNAL_RECEIVER_INFO"
    " WHERE JOURNAL_RECEIVER_LIBRARY = 'QMTEST' ORDER BY JOURNAL_RECEIVER_NAME"
)


def ok(shell, command: str) -> str:
    status, out, err = shell.cl(command)
    assert status == 0, f"{command}: {err}"
    return out


def refused(shell, command: str) -> str:
    status, out, err = shell.cl(command)
    assert status != 0 and out == "", f"{command} was not refused: {out}"
    return err


def journal(shell) -> dict | None:
    rows = shell.sql(JOURNAL)
    return rows[0] if rows else None


def by_name(shell) -> dict[str, dict]:
    return {r["JOURNAL_RECEIVER_NAME"]: r for r in shell.sql(ALL_RECEIVERS)}


def associate(shell, receiver_name: str = "*ALL") -> tuple[int, str]:
    status, out, _ = shell.db2(
        "SELECT * FROM TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER(JOURNAL_LIBRARY => 'QMTEST',"
        f" JOURNAL_NAME => 'AMQAJRN', RECEIVER_LIBRARY => 'QMTEST', RECEIVER_NAME => '{receiver_name}')) X"
    )
    return status, out


def state(host) -> dict:
    """The partition as data, without the job counter that every SSH command advances."""
    with host.lock:
        return host.partition.model_dump(exclude={"job_counter"})


def save_library_while_ended(shell, save_file: str = LIBSAVE) -> str:
    """IBM's backup procedure: end the queue manager, SAVLIB, start it again. Returns the receiver attached."""
    ok(shell, "ENDMQM MQMNAME('TEST') OPTION(*CNTRLD) ENDCCTJOB(*YES)")
    ok(shell, f"CRTSAVF FILE({save_file})")
    out = ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({save_file}) UPDHST(*YES)")
    # The attached receiver's save diagnostic comes first (IBM i sends one; see test_cl_conformance.py).
    assert re.search(r"^CPC3722: \d+ objects saved from library QMTEST\.$", out, re.MULTILINE)
    at_save = attached(shell)
    # The queue manager's IFS directory beside the library, into a second save file (SAV; sim/qmgrdir.py).
    ok(shell, f"CRTSAVF FILE({save_file}D)")
    ok(shell, f"SAV DEV('{savf_path(save_file + 'D')}') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))")
    ok(shell, "STRMQM MQMNAME('TEST')")
    return at_save


def savf_path(save_file: str) -> str:
    library, name = save_file.split("/")
    return f"/QSYS.LIB/{library}.LIB/{name}.FILE"


def restore_directory(shell, save_file: str = LIBSAVE) -> None:
    """RST of the IFS directory saved beside the library by `save_library_while_ended`."""
    ok(shell, f"RST DEV('{savf_path(save_file + 'D')}') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))")


def detached_from(shell, first: str) -> list[str]:
    """The detached receivers from `first` on, oldest first."""
    chain = [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell) if r["STATUS"] != "ATTACHED"]
    return chain[chain.index(first) :]


# --- SAVLIB -----------------------------------------------------------------------------------------------------


def test_savlib_saves_every_object_of_the_library_and_updates_the_save_history(sim_fleet: SimFleet):
    host = sim_fleet.host()
    host.advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, "CRTSAVF FILE(QMTEST/INLIB)")  # a save file in the library is not saved
    chain = receivers(shell)
    out = ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    # journal + receivers + AMQJRNINF + QMQMMSG
    assert out.splitlines()[-1] == f"CPC3722: {len(chain) + 3} objects saved from library QMTEST."
    after = receivers(shell)
    assert [r["STATUS"] for r in after] == ["SAVED"] * (len(after) - 1) + ["ATTACHED"]
    assert all(r["SAVE_TIMESTAMP"] for r in after)
    save_file = host.partition.save_files["QGPL/LIBSAVE"]
    # The queue manager's IFS directory (its queues and their messages) is not in the library: SAV saves it.
    assert save_file.kind == "LIB" and save_file.directory_image is None
    assert [j.attached for j in save_file.library_image.journals] == [attached(shell)]
    assert "INLIB" not in {s.name for s in save_file.library_image.user_spaces}

    # A second SAVLIB into the same save file must not overwrite the backup unless told to.
    err = refused(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    assert "CPF3770" in err
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) CLEAR(*ALL)")


def test_savlib_with_updhst_no_leaves_the_receivers_unsaved(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) UPDHST(*NO) SAVACT(*LIB)")
    assert {r["STATUS"] for r in receivers(shell)} == {"ONLINE", "ATTACHED"}


def test_object_statistics_lists_the_save_files_of_a_library(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    rows = shell.sql(
        "SELECT OBJNAME, OBJTYPE, OBJATTRIBUTE FROM TABLE(QSYS2.OBJECT_STATISTICS('QGPL', '*FILE')) X ORDER BY OBJNAME"
    )
    assert rows == [
        {"OBJNAME": "LIBSAVE", "OBJTYPE": "*FILE", "OBJATTRIBUTE": "SAVF"},
        {"OBJNAME": "RCVSAVE", "OBJTYPE": "*FILE", "OBJATTRIBUTE": "SAVF"},
    ]
    named = shell.sql(
        "SELECT OBJNAME FROM TABLE(QSYS2.OBJECT_STATISTICS(OBJECT_SCHEMA => 'QGPL', OBJTYPELIST => '*FILE',"
        " OBJECT_NAME => 'RCV*')) X"
    )
    assert named == [{"OBJNAME": "RCVSAVE"}]
    journals = shell.sql("SELECT OBJNAME, OBJATTRIBUTE FROM TABLE(QSYS2.OBJECT_STATISTICS('QMTEST', '*JRN')) X")
    assert journals == [{"OBJNAME": "AMQAJRN", "OBJATTRIBUTE": None}]
    libraries = shell.sql("SELECT OBJNAME FROM TABLE(QSYS2.OBJECT_STATISTICS('QSYS', '*LIB', 'QMTEST')) X")
    assert libraries == [{"OBJNAME": "QMTEST"}]


# --- a lost library: DLTLIB, RSTLIB and the rule-1 pitfall ---------------------------------------------------------


def test_a_deleted_library_ends_the_queue_manager_which_then_cannot_start(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    out = ok(shell, "DLTLIB LIB(QMTEST)")
    assert out.startswith("CPC2194")
    assert receivers(shell) == [] and journal(shell) is None
    assert not host.partition.queue_manager("TEST").running
    status, _, err = shell.run("cat /QIBM/UserData/mqm/mqs.ini")
    assert status == 0 and "Library=QMTEST" in _  # the queue manager stays defined
    err = refused(shell, "STRMQM MQMNAME('TEST')")
    assert err.startswith("CPF9810: Library QMTEST not found.")
    # The library's objects went with it, its message queue and save files too.
    assert not any(k.startswith("QMTEST/") for k in host.partition.message_queues)


def test_savlib_dltlib_rstlib_round_trip_attaches_the_rule_1_receiver_and_a_later_save_of_it_clashes(
    sim_fleet: SimFleet,
):
    host = sim_fleet.host()
    host.advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    at_save = save_library_while_ended(shell)
    host.advance(timedelta(hours=1))
    successor = str(ReceiverName.parse(at_save).successor())
    assert successor in by_name(shell) and attached(shell) != successor
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    ok(shell, f"SAVOBJ OBJ({successor}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")

    ok(shell, "DLTLIB LIB(QMTEST)")
    out = ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    restore_directory(shell)
    assert out.startswith("CPC3703")

    # The system attached a new receiver to the restored journal, named by rule 1 after the one attached at save.
    assert journal(shell)["ATTACHED_JOURNAL_RECEIVER_NAME"] == successor
    rows = by_name(shell)
    assert rows[at_save]["STATUS"] == "PARTIAL"  # saved while attached
    assert rows[at_save]["NEXT_JOURNAL_RECEIVER"] == successor
    assert rows[successor]["PREVIOUS_JOURNAL_RECEIVER"] == at_save
    assert int(rows[successor]["FIRST_SEQUENCE_NUMBER"]) == int(rows[at_save]["LAST_SEQUENCE_NUMBER"]) + 1

    # The documented pitfall: the later save of that name cannot be restored any more.
    err = refused(shell, f"RSTOBJ OBJ({successor}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    assert "CPF2112" in err and "CPF3773" in err
    # The queue manager's data came back with the library: its recovery pass finds the restored receivers.
    assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")


def test_a_library_restored_without_its_receivers_fails_strmqm_until_they_rejoin_the_restored_journal(
    sim_fleet: SimFleet,
):
    host = sim_fleet.host()
    host.advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    at_save = save_library_while_ended(shell)
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ(QMTEST/AMQA* *JRNRCV)")
    restore_directory(shell)
    successor = str(ReceiverName.parse(at_save).successor())
    assert journal(shell) == {"ATTACHED_JOURNAL_RECEIVER_NAME": successor, "NUMBER_JOURNAL_RECEIVERS": "1"}
    err = refused(shell, "STRMQM MQMNAME('TEST')")
    assert err.startswith("AMQ7432")

    # The restored journal kept its identity: its receivers rejoin it as they are restored, in any order.
    names = [s.receiver.name for s in host.partition.save_files["QGPL/LIBSAVE"].objects]
    for name in names:
        ok(shell, f"RSTOBJ OBJ({name}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({LIBSAVE})")
    chain = receivers(shell)
    assert [r["JOURNAL_RECEIVER_NAME"] for r in chain] == [*names, successor]
    for older, newer in itertools.pairwise(chain):
        assert older["NEXT_JOURNAL_RECEIVER"] == newer["JOURNAL_RECEIVER_NAME"]
    assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == str(len(names) + 1)
    assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")


def test_rstobj_restores_the_journal_out_of_a_library_save(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ((QMTEST/AMQAJRN *JRN))")
    # Receivers restored before their journal stay out of any directory...
    assert journal(shell) is None
    out = ok(shell, f"RSTOBJ OBJ(AMQAJRN) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRN) SAVF({LIBSAVE})")
    assert out.startswith("CPC3703: 1 objects restored")
    # ...and rejoin it when the very journal they belong to comes back.
    assert journal(shell) == {"ATTACHED_JOURNAL_RECEIVER_NAME": "AMQA000001", "NUMBER_JOURNAL_RECEIVERS": "2"}


# --- the documented workaround ---------------------------------------------------------------------------------------


def test_the_documented_workaround_restores_every_receiver_and_starts_the_queue_manager(sim_fleet: SimFleet):
    host = sim_fleet.host()
    host.advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    at_save = save_library_while_ended(shell)
    host.advance(timedelta(hours=1))
    saved = detached_from(shell, at_save)
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    ok(shell, f"SAVOBJ OBJ({' '.join(saved)}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    ok(shell, "DLTLIB LIB(QMTEST)")  # the library is lost, with the receiver that was attached

    # 1. The library without its journal and receivers.
    out = ok(
        shell,
        f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ((QMTEST/AMQAJRN *JRN) (QMTEST/AMQA* *JRNRCV))",
    )
    restore_directory(shell)
    assert out.startswith("CPC3703: 2 objects restored")  # AMQJRNINF and QMQMMSG
    assert journal(shell) is None and by_name(shell) == {}
    assert refused(shell, "STRMQM MQMNAME('TEST')").startswith("CPF9801: Object AMQAJRN in library QMTEST not found.")

    # 2. A receiver with a free name, owned by QMQM, and the journal made on it.
    ok(shell, "CRTJRNRCV JRNRCV(QMTEST/AMQA100000) THRESHOLD(500) TEXT('MQM LOCAL JOURNAL RECEIVER')")
    ok(shell, "CHGOBJOWN OBJ(QMTEST/AMQA100000) OBJTYPE(*JRNRCV) NEWOWN(QMQM)")
    out = ok(shell, "CRTJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA100000) MNGRCV(*SYSTEM) DLTRCV(*NO)")
    assert out.startswith("CPC7002")
    assert journal(shell) == {"ATTACHED_JOURNAL_RECEIVER_NAME": "AMQA100000", "NUMBER_JOURNAL_RECEIVERS": "1"}

    # 3. The receivers, newest first: the journal is a new one, so they stay out of its directory.
    for name in reversed(saved):
        status, out, err = shell.cl(f"RSTOBJ OBJ({name}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
        assert status == 0 and out.startswith("CPC3703"), err
    rows = by_name(shell)
    assert all(rows[n]["JOURNAL_NAME"] == "AMQAJRN" and rows[n]["STATUS"] == "SAVED" for n in saved)
    assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == "1"
    err = refused(shell, "STRMQM MQMNAME('TEST')")
    assert "AMQ7432" in err

    # 4. Association (WRKJRN option 9 in SQL), then the queue manager starts.
    status, out = associate(shell)
    assert status == 0
    assert re.findall(r"AMQA\d{6}", out) == saved and out.count("ASSOCIATED") == len(saved)
    assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == str(len(saved) + 1)
    rows = by_name(shell)
    assert rows[saved[-1]]["NEXT_JOURNAL_RECEIVER"] == "AMQA100000"
    assert rows["AMQA100000"]["PREVIOUS_JOURNAL_RECEIVER"] == saved[-1]
    assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")

    # Numbering continues after the associated receivers, and switching goes on by rule 1.
    host.advance(timedelta(minutes=40))
    rows = by_name(shell)
    assert int(rows["AMQA100000"]["FIRST_SEQUENCE_NUMBER"]) == int(rows[saved[-1]]["LAST_SEQUENCE_NUMBER"]) + 1
    assert "AMQA100001" in rows
    # Associating again finds nothing left to associate.
    status, out = associate(shell)
    assert status == 0 and "0 RECORD(S) SELECTED." in out


def test_association_accepts_positional_arguments_and_generic_names(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ((QMTEST/AMQAJRN *JRN))")
    ok(shell, "CRTJRNRCV JRNRCV(QMTEST/AMQA100000) THRESHOLD(500)")
    ok(shell, "CRTJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA100000)")
    assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == "1"  # identity differs: not associated by the restore
    status, out, _ = shell.db2(
        "SELECT JOURNAL_RECEIVER_NAME FROM TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER('QMTEST', 'AMQAJRN',"
        " 'QMTEST', 'AMQA0*')) X"
    )
    assert status == 0 and "AMQA000000" in out
    assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == "2"


def test_association_of_an_unknown_journal_is_an_sql_error_and_call_is_not_the_way_to_use_it(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    before = state(host)
    status, out, _ = shell.db2(
        "SELECT * FROM TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER(JOURNAL_LIBRARY => 'QMTEST',"
        " JOURNAL_NAME => 'AMQBJRN', RECEIVER_LIBRARY => 'QMTEST', RECEIVER_NAME => '*ALL')) X"
    )
    assert status == 4 and "CLI ERROR" in out and "AMQBJRN in QMTEST type *JRN not found." in out
    # It is a table function: CALL finds no procedure of that name.
    status, out, _ = shell.db2(
        "CALL QSYS2.ASSOCIATE_JOURNAL_RECEIVER(JOURNAL_LIBRARY => 'QMTEST', JOURNAL_NAME => 'AMQAJRN',"
        " RECEIVER_LIBRARY => 'QMTEST', RECEIVER_NAME => '*ALL')"
    )
    assert status == 4 and "NATIVE ERROR CODE: -440" in out
    assert state(host) == before


# --- receivers deleted out of band; media recovery -------------------------------------------------------------------


def test_strmqm_fails_after_a_needed_receiver_was_deleted_and_starts_once_it_is_restored_from_a_library_save(
    sim_fleet: SimFleet,
):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    with host.state() as partition:
        mq.open_unit_of_work(partition, partition.queue_manager("TEST"))
    host.advance(timedelta(hours=1))
    checkpoint(shell)
    needed = oldest_needed(shell)
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    links = by_name(shell)[needed]
    ok(shell, f"DLTJRNRCV JRNRCV(QMTEST/{needed}) DLTOPT(*IGNINQMSG)")
    with host.state() as partition:
        mq.crash(partition, partition.queue_manager("TEST"))
    assert "AMQ7432" in refused(shell, "STRMQM MQMNAME('TEST')")
    assert messages(shell, "QMQMMSG", "AMQ7432")

    out = ok(shell, f"RSTOBJ OBJ({needed}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({LIBSAVE})")
    assert out.startswith("CPC3703: 1 objects restored")
    # Same journal, same identity: the receiver is back in the directory by itself, with its links.
    restored = by_name(shell)[needed]
    assert restored["NEXT_JOURNAL_RECEIVER"] == links["NEXT_JOURNAL_RECEIVER"]
    assert needed in [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell)]
    assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")


def test_rcrmqmobj_recreates_a_damaged_queue_once_the_receivers_from_the_amq7462_point_are_restored(
    sim_fleet: SimFleet,
):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    host.advance(timedelta(minutes=30))
    checkpoint(shell)
    with host.state() as partition:
        mq.damage(partition, partition.queue_manager("TEST"), "APP.REQUEST.QUEUE")
    host.advance(timedelta(hours=1))
    checkpoint(shell)
    latest = messages(shell, "QMQMMSG", "AMQ7462")[-1]["MESSAGE_TEXT"]
    media = re.search(r"journal receiver (AMQA\d{6})", latest).group(1)
    chain = [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell)]
    needed = chain[chain.index(media) : -1]
    assert needed and media != chain[0]
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    ok(shell, f"SAVOBJ OBJ(AMQA*) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    for name in chain[:-1]:
        ok(shell, f"DLTJRNRCV JRNRCV(QMTEST/{name})")
    assert "AMQ7432" in refused(shell, "RCRMQMOBJ OBJ('APP.REQUEST.QUEUE') OBJTYPE(*Q) MQMNAME('TEST')")

    for name in reversed(needed):
        ok(shell, f"RSTOBJ OBJ({name}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    out = ok(shell, "RCRMQMOBJ OBJ('APP.REQUEST.QUEUE') OBJTYPE(*Q) MQMNAME('TEST')")
    assert "AMQ7081" in out
    assert not host.partition.queue_manager("TEST").object("APP.REQUEST.QUEUE").damaged


# --- refused commands change nothing -------------------------------------------------------------------------------


def test_refused_library_journal_and_restore_commands_change_nothing(sim_fleet: SimFleet):
    host = sim_fleet.host()
    host.advance(timedelta(minutes=30))
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    ok(shell, f"SAVOBJ OBJ(AMQA000000) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, "CRTJRNRCV JRNRCV(QGPL/SPARE) THRESHOLD(500)")
    before = state(host)
    cases = {
        "DLTLIB LIB(QSYS)": "CPF2113",
        "DLTLIB LIB(QGPL)": "CPF2113",
        "DLTLIB LIB(NOSUCH)": "CPF2110",
        "CRTJRN JRN(QMTEST/AMQAJRN) JRNRCV(QGPL/SPARE)": "CPF7010",
        "CRTJRN JRN(QGPL/MYJRN) JRNRCV(QMTEST/AMQA000000)": "CPF7013",
        "CRTJRN JRN(QGPL/MYJRN) JRNRCV(QGPL/NORCV)": "CPF2105",
        "CRTJRN JRN(NOSUCH/MYJRN) JRNRCV(QGPL/SPARE)": "CPF9810",
        f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({RCVSAVE})": "CPF3780",  # an object save, not a library save
        f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})": "CPF3780",  # empty
        f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({RCVSAVE})": "CPF3770",  # not empty
        f"SAVLIB LIB(NOSUCH) DEV(*SAVF) SAVF({LIBSAVE})": "CPF3781",
        "SAVLIB LIB(QMTEST) DEV(TAP01)": "CPF9814",
        f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ((QMTEST/AMQAJRN *PGM))": "CPD0084",
        f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ(*ALL/*ALL *ALL)": "CPF3770",  # nothing left
        f"RSTOBJ OBJ(AMQA000000) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({LIBSAVE})": "CPF3780",
        "RFRMQMCL CLUSTER('NOSUCH') MQMNAME('TEST')": "AMQ9420",
        "CHGMQM MQMNAME('TEST') REPOS('BAD NAME')": "CPD0084",
    }
    for command, msg_id in cases.items():
        assert msg_id in refused(shell, command), command
    assert state(host) == before

    # RSTLIB over a running queue manager cannot allocate its objects.
    ok(shell, "CLRSAVF FILE(QGPL/LIBSAVE)")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    before = state(host)
    assert "CPF9803" in refused(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    assert state(host) == before


# --- clusters ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def cluster_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    """TEST is a full repository for INVENTORY and a partial repository in PAYMENTS."""
    config = fleet_config(
        tmp_path,
        [
            HostConfig(
                name="ibmi1",
                port=0,
                queue_managers=[
                    QueueManagerConfig(
                        name="TEST",
                        threshold_kb=500,
                        clusters=[
                            ClusterConfig(name="INVENTORY", full_repository=True),
                            ClusterConfig(name="PAYMENTS"),
                        ],
                    )
                ],
            )
        ],
    )
    with serve(config) as fleet:
        yield fleet


def memberships(host) -> dict[str, tuple[bool, int]]:
    with host.lock:
        return {c.name: (c.full_repository, c.refresh_count) for c in host.partition.queue_manager("TEST").clusters}


def test_refresh_cluster_repos_yes_is_refused_on_a_full_repository_until_it_is_demoted(cluster_fleet: SimFleet):
    host = cluster_fleet.host()
    shell = cluster_fleet.connect()
    assert memberships(host) == {"INVENTORY": (True, 0), "PAYMENTS": (False, 0)}

    out = ok(shell, "RFRMQMCL CLUSTER('PAYMENTS') MQMNAME('TEST') REPOS(*YES)")
    assert out.startswith("AMQ8559")
    ok(shell, "RFRMQMCL CLUSTER('INVENTORY') MQMNAME('TEST') REPOS(*NO)")
    before = state(host)
    err = refused(shell, "RFRMQMCL CLUSTER('INVENTORY') MQMNAME('TEST') REPOS(*YES)")
    assert err.startswith("AMQ9406")
    assert "AMQ9406" in refused(shell, "RFRMQMCL CLUSTER('*') MQMNAME('TEST') REPOS(*YES)")
    assert state(host) == before
    assert memberships(host) == {"INVENTORY": (True, 1), "PAYMENTS": (False, 1)}

    assert ok(shell, "CHGMQM MQMNAME('TEST') REPOS(' ')").startswith("AMQ8005")
    ok(shell, "RFRMQMCL CLUSTER('INVENTORY') MQMNAME('TEST') REPOS(*YES)")
    ok(shell, "RFRMQMCL CLUSTER('*') MQMNAME('TEST')")
    assert memberships(host) == {"INVENTORY": (False, 3), "PAYMENTS": (False, 2)}
    with host.lock:
        inventory = host.partition.queue_manager("TEST").cluster("INVENTORY")
        assert inventory.last_refresh_repos is False and inventory.last_refreshed_at is not None

    ok(shell, "CHGMQM MQMNAME('TEST') REPOS('INVENTORY')")
    assert memberships(host)["INVENTORY"][0] is True


def test_cluster_commands_need_a_running_queue_manager_and_a_cluster_it_belongs_to(cluster_fleet: SimFleet):
    host = cluster_fleet.host()
    shell = cluster_fleet.connect()
    assert "AMQ9420" in refused(shell, "RFRMQMCL CLUSTER(*ALL) MQMNAME('TEST')")
    assert "AMQ8118" in refused(shell, "RFRMQMCL CLUSTER('PAYMENTS') MQMNAME('NOQM')")
    ok(shell, "ENDMQM MQMNAME('TEST')")
    before = state(host)
    assert refused(shell, "RFRMQMCL CLUSTER('PAYMENTS') MQMNAME('TEST')").startswith("AMQ8146")
    assert refused(shell, "CHGMQM MQMNAME('TEST') REPOS(' ')").startswith("AMQ8146")
    assert state(host) == before


def test_a_library_restore_brings_back_the_cluster_memberships_as_saved(cluster_fleet: SimFleet):
    host = cluster_fleet.host()
    shell = cluster_fleet.connect()
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, "CRTSAVF FILE(QGPL/DIRSAVE)")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    # The memberships are the queue manager's data, in its IFS directory (qm.ini, the repository queue): SAV.
    ok(shell, "SAV DEV('/QSYS.LIB/QGPL.LIB/DIRSAVE.FILE') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))")
    ok(shell, "CHGMQM MQMNAME('TEST') REPOS(' ')")
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    ok(shell, "RST DEV('/QSYS.LIB/QGPL.LIB/DIRSAVE.FILE') OBJ(('/QIBM/UserData/mqm/qmgrs/TEST'))")
    ok(shell, "STRMQM MQMNAME('TEST')")
    assert memberships(host) == {"INVENTORY": (True, 0), "PAYMENTS": (False, 0)}
    ok(shell, "RFRMQMCL CLUSTER('*') MQMNAME('TEST') REPOS(*NO)")  # what a restored cluster member needs


def test_cluster_configuration_is_validated():
    with pytest.raises(pydantic.ValidationError):
        ClusterConfig(name="NOT A NAME")
    with pytest.raises(pydantic.ValidationError):
        ClusterConfig(name="X" * 49)
    with pytest.raises(pydantic.ValidationError):
        QueueManagerConfig(name="TEST", clusters=[ClusterConfig(name="A"), ClusterConfig(name="A")])
    assert QueueManagerConfig(name="TEST").clusters == []
    assert ClusterConfig(name="Inv.Cluster_1/%").full_repository is False


# --- persisted state ------------------------------------------------------------------------------------------------


def test_identity_association_and_library_saves_survive_a_restart(cluster_fleet: SimFleet):
    host = cluster_fleet.host()
    shell = cluster_fleet.connect()
    ok(shell, "RFRMQMCL CLUSTER('PAYMENTS') MQMNAME('TEST')")
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE}) OMITOBJ((QMTEST/AMQAJRN *JRN))")
    ok(shell, "CRTJRNRCV JRNRCV(QMTEST/AMQA100000) THRESHOLD(500)")
    ok(shell, "CRTJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA100000)")
    assert associate(shell)[0] == 0
    before = state(host)
    cluster_fleet.service.stop()
    again = SimulatorService(cluster_fleet.config)
    ports = again.start()
    try:
        restarted = SimFleet(again, ports, cluster_fleet.config)
        assert state(restarted.host()) == before
        shell = restarted.connect()
        assert journal(shell)["NUMBER_JOURNAL_RECEIVERS"] == "2"
        assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")
        assert memberships(restarted.host())["PAYMENTS"] == (False, 1)
    finally:
        again.stop()


def test_a_receiver_saved_after_its_storage_was_freed_comes_back_freed(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    ok(shell, f"CRTSAVF FILE({RCVSAVE})")
    ok(shell, f"SAVOBJ OBJ(AMQA000000) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE}) STG(*FREE)")
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    ok(shell, "DLTLIB LIB(QMTEST)")
    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    assert by_name(shell)["AMQA000000"]["STATUS"] == "FREED"
    # Its data is in the object save taken with STG(*FREE): restoring that over the freed receiver brings it back.
    ok(shell, f"RSTOBJ OBJ(AMQA000000) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({RCVSAVE})")
    assert by_name(shell)["AMQA000000"]["STATUS"] == "SAVED"
    assert receivers(shell)[0]["JOURNAL_RECEIVER_NAME"] == "AMQA000000"


def test_a_state_file_of_an_older_simulator_is_discarded(tmp_path: Path, sim_fleet: SimFleet):
    path = tmp_path / "old.json"
    host = sim_fleet.host()
    with host.lock:
        data = host.partition.model_copy(update={"state_version": 1}).model_dump_json()
    path.write_text(data, encoding="utf-8")
    assert SimulatedHost.load(path) is None
    path.write_text("{not json", encoding="utf-8")
    assert SimulatedHost.load(path) is None
