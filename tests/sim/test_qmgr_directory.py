"""A queue manager's IFS directory on the simulator, over real SSH: SAVLIB leaves it out, SAV saves it into a save
file, RST brings it back, and without it STRMQM cannot start the queue manager nor show its queues' messages."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.names import qmgr_directory
from mqjournal.sim import mq, qmgrdir
from tests.conftest import SimFleet
from tests.sim.test_recovery_sim import ok, refused

QUEUE = "SYSTEM.DEFAULT.LOCAL.QUEUE"
LIBSAVE = "QGPL/LIBSAVE"
DIRSAVE = "'/QSYS.LIB/QGPL.LIB/DIRSAVE.FILE'"
PATH = "/QIBM/UserData/mqm/qmgrs/TEST"


def put(fleet: SimFleet, count: int) -> None:
    with fleet.host().state() as partition:
        mq.put_messages(partition, partition.queue_manager("TEST"), QUEUE, count)


def depth(fleet: SimFleet) -> int | None:
    obj = fleet.host().partition.queue_manager("TEST").object(QUEUE)
    return None if obj is None else obj.messages


def lose_everything(fleet: SimFleet, shell) -> None:
    """The partition's disks are lost: the library and the IFS directory."""
    ok(shell, "DLTLIB LIB(QMTEST)")
    with fleet.host().state() as partition:
        qmgrdir.lose_directory(partition, partition.queue_manager("TEST"))


def save_both(shell) -> None:
    """IBM's backup: ENDMQM, SAVLIB of the library, SAV of the IFS directory, STRMQM."""
    ok(shell, "ENDMQM MQMNAME('TEST') OPTION(*CNTRLD) ENDCCTJOB(*YES)")
    ok(shell, f"CRTSAVF FILE({LIBSAVE})")
    ok(shell, "CRTSAVF FILE(QGPL/DIRSAVE)")
    ok(shell, f"SAVLIB LIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    out = ok(shell, f"SAV DEV({DIRSAVE}) OBJ(('{PATH}'))")
    assert out.startswith("CPC370C")
    ok(shell, "STRMQM MQMNAME('TEST')")


def test_the_directory_name_follows_mqs_name_transformation():
    assert qmgr_directory("TEST") == PATH
    assert qmgr_directory("queue.manager/ONE") == "/QIBM/UserData/mqm/qmgrs/queue!manager&ONE"


def test_savlib_leaves_the_queues_messages_out_and_sav_saves_them(sim_fleet: SimFleet):
    put(sim_fleet, 7)
    shell = sim_fleet.connect()
    save_both(shell)
    partition = sim_fleet.host().partition
    library_save, directory_save = partition.save_files[LIBSAVE], partition.save_files["QGPL/DIRSAVE"]
    assert library_save.kind == "LIB" and library_save.directory_image is None
    assert directory_save.kind == "DIR" and directory_save.directory_image.path == PATH
    assert directory_save.directory_image.queue_manager.object(QUEUE).messages == 7


def test_a_library_restored_without_its_directory_cannot_start_and_rst_brings_the_messages_back(
    sim_fleet: SimFleet,
):
    sim_fleet.host().advance(timedelta(hours=1))
    put(sim_fleet, 5)
    shell = sim_fleet.connect()
    save_both(shell)
    lose_everything(sim_fleet, shell)

    ok(shell, f"RSTLIB SAVLIB(QMTEST) DEV(*SAVF) SAVF({LIBSAVE})")
    # The library alone: MQ's object definitions and their messages are missing.
    assert refused(shell, "STRMQM MQMNAME('TEST')").startswith(f"AMQ6235: Directory '{PATH}' missing.")
    assert depth(sim_fleet) is None

    assert ok(shell, f"RST DEV({DIRSAVE}) OBJ(('{PATH}'))").startswith("CPC370D")
    assert "AMQ8003" in ok(shell, "STRMQM MQMNAME('TEST')")
    assert depth(sim_fleet) == 5


def test_sav_and_rst_refusals_change_nothing(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    ok(shell, "CRTSAVF FILE(QGPL/DIRSAVE)")
    assert refused(shell, f"SAV DEV({DIRSAVE}) OBJ(('/QIBM/UserData/mqm/qmgrs/OTHER'))").startswith("CPFA0A9")
    assert refused(shell, f"RST DEV({DIRSAVE}) OBJ(('{PATH}'))").startswith("CPFA0A9")  # nothing saved in it
    assert refused(shell, f"SAV DEV('/QSYS.LIB/QGPL.LIB/NOSUCH.FILE') OBJ(('{PATH}'))").startswith("CPF9812")
    ok(shell, f"SAV DEV({DIRSAVE}) OBJ(('{PATH}'))")
    # RST over a running queue manager: MQ holds its queue files.
    assert refused(shell, f"RST DEV({DIRSAVE}) OBJ(('{PATH}'))").startswith("CPFA09E")
    assert refused(shell, f"SAV DEV({DIRSAVE}) OBJ(('{PATH}'))").startswith("CPF9898")  # not empty
    assert sim_fleet.host().partition.queue_manager("TEST").running
