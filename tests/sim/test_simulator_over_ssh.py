"""The IBM i simulator, driven over real SSH with paramiko as the planner would drive a partition."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import paramiko
import pytest

from mqjournal import mqmessages
from mqjournal.ibmi.commands import as_text
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.sim import mq
from mqjournal.sim.service import SimulatorService
from tests.conftest import DST_ENDS, SimFleet, new_york_config, serve

RECEIVERS = (
    "SELECT JOURNAL_RECEIVER_NAME, STATUS, SIZE, THRESHOLD, ATTACH_TIMESTAMP, DETACH_TIMESTAMP, SAVE_TIMESTAMP,"
    " PREVIOUS_JOURNAL_RECEIVER, NEXT_JOURNAL_RECEIVER FROM QSYS2.JOURNAL_RECEIVER_INFO"
    " WHERE JOURNAL_RECEIVER_LIBRARY = 'QMTEST' ORDER BY ATTACH_TIMESTAMP"
)
AMQJRNINF = (
    "SELECT CAST(DATA AS VARCHAR(37)) AS V FROM"
    " TABLE(QSYS2.USER_SPACE(USER_SPACE => 'AMQJRNINF', USER_SPACE_LIBRARY => 'QMTEST')) X"
)
CHECKPOINT = "RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME(TEST) DSPJRNDTA(*YES)"


def receivers(shell) -> list[dict]:
    return shell.sql(RECEIVERS)


def attached(shell) -> str:
    return next(r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell) if r["STATUS"] == "ATTACHED")


def oldest_needed(shell) -> str | None:
    return parse_amqjrninf(shell.sql(AMQJRNINF)[0]["V"], qmgr="TEST").receiver


def messages(shell, queue: str, msg_id: str) -> list[dict]:
    return shell.sql(
        f"SELECT MESSAGE_ID, {as_text('MESSAGE_TEXT')} FROM QSYS2.MESSAGE_QUEUE_INFO"
        f" WHERE MESSAGE_QUEUE_NAME = '{queue}' AND MESSAGE_ID = '{msg_id}'"
    )


def checkpoint(shell) -> None:
    status, _out, err = shell.cl(CHECKPOINT)
    assert status == 0, err


# --- receiver switching and naming ----------------------------------------------------------------------


def test_receivers_switch_at_the_threshold_with_the_next_name_by_rule_1(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=2))
    shell = sim_fleet.connect()
    chain = receivers(shell)
    names = [r["JOURNAL_RECEIVER_NAME"] for r in chain]
    assert names == [f"AMQA{n:06d}" for n in range(len(names))]
    assert len(names) >= 5
    assert [r["STATUS"] for r in chain] == ["ONLINE"] * (len(chain) - 1) + ["ATTACHED"]
    for older, newer in itertools.pairwise(chain):
        assert older["NEXT_JOURNAL_RECEIVER"] == newer["JOURNAL_RECEIVER_NAME"]
        assert newer["PREVIOUS_JOURNAL_RECEIVER"] == older["JOURNAL_RECEIVER_NAME"]
        # SIZE is in KB, like THRESHOLD: a detached receiver stopped at its threshold.
        assert int(older["SIZE"]) >= int(older["THRESHOLD"])
    assert len(messages(shell, "QSYSOPR", "CPF7020")) == len(chain) - 1


def test_a_receiver_change_logs_amq7460_and_amq7462_and_rewrites_amqjrninf(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    before = len(messages(shell, "QMQMMSG", "AMQ7460"))
    sim_fleet.host().advance(timedelta(minutes=40))
    assert len(messages(shell, "QMQMMSG", "AMQ7460")) > before
    assert len(messages(shell, "QMQMMSG", "AMQ7462")) == len(messages(shell, "QMQMMSG", "AMQ7460"))
    assert oldest_needed(shell) is not None


def test_names_wrap_from_99999_to_00000_keeping_r(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    # Clear AMQA000000 out of the way, so that the wrap lands on a free name.
    assert shell.cl("CRTSAVF FILE(QGPL/WRAP)")[0] == 0
    assert shell.cl("CRTJRNRCV JRNRCV(QMTEST/AMQA099998) THRESHOLD(500)")[0] == 0
    assert shell.cl("CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA099998)")[0] == 0
    assert shell.cl("SAVOBJ OBJ(AMQA000000) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/WRAP)")[0] == 0
    assert shell.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000)")[0] == 0
    sim_fleet.host().advance(timedelta(hours=1))
    names = [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell)]
    assert names[:3] == ["AMQA099998", "AMQA099999", "AMQA000000"]


def test_a_taken_next_name_stops_switching_with_cpi70e3(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    assert attached(shell) == "AMQA000000"
    # An admin created the name rule 1 would give next (seed rule 2).
    assert shell.cl("CRTJRNRCV JRNRCV(QMTEST/AMQA000001) THRESHOLD(500)")[0] == 0
    sim_fleet.host().advance(timedelta(hours=2))

    assert attached(shell) == "AMQA000000"
    current = next(r for r in receivers(shell) if r["STATUS"] == "ATTACHED")
    assert int(current["SIZE"]) > 3 * int(current["THRESHOLD"])  # it keeps growing past its threshold
    (message,) = shell.sql(
        f"SELECT {as_text('MESSAGE_TEXT')}, HEX(MESSAGE_TOKENS) AS TOKENS FROM QSYS2.MESSAGE_QUEUE_INFO"
        " WHERE MESSAGE_QUEUE_NAME = 'QSYSOPR' AND MESSAGE_ID = 'CPI70E3'"
    )
    # IBM's text names no journal; the replacement data does (mqmessages.py).
    assert "AMQAJRN" not in message["MESSAGE_TEXT"]
    assert mqmessages.journal_of(message["TOKENS"]) == ("AMQAJRN", "QMTEST")


def test_attaching_a_receiver_by_hand_resumes_switching_by_rule_1(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    shell.cl("CRTJRNRCV JRNRCV(QMTEST/AMQA000001) THRESHOLD(500)")
    sim_fleet.host().advance(timedelta(hours=1))
    assert shell.cl("CRTJRNRCV JRNRCV(QMTEST/AMQA900001) THRESHOLD(800)")[0] == 0
    assert shell.cl("CHGOBJOWN OBJ(QMTEST/AMQA900001) OBJTYPE(*JRNRCV) NEWOWN(QMQM)")[0] == 0
    status, out, _ = shell.cl("CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/AMQA900001)")
    assert status == 0 and "CPC7011" in out
    sim_fleet.host().advance(timedelta(hours=1))
    names = [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell)]
    assert names[names.index("AMQA900001") :][:3] == ["AMQA900001", "AMQA900002", "AMQA900003"]


# --- checkpoints and the recovery points ------------------------------------------------------------------


def test_rcdmqmimg_moves_amqjrninf_to_the_attached_receiver_when_nothing_holds_it_back(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=2))
    shell = sim_fleet.connect()
    status, out, _ = shell.cl(CHECKPOINT)
    assert status == 0
    assert "AMQ7460" in out and "AMQ7462" in out  # DSPJRNDTA(*YES) shows them to the caller
    assert oldest_needed(shell) == attached(shell)


def test_an_open_unit_of_work_holds_the_startup_recovery_point_back(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    with host.state() as partition:
        uow = mq.open_unit_of_work(partition, partition.queue_manager("TEST"))
    started_in = attached(shell)
    host.advance(timedelta(hours=2))
    checkpoint(shell)
    assert oldest_needed(shell) == started_in != attached(shell)
    (latest, *_) = reversed(messages(shell, "QMQMMSG", "AMQ7460"))
    assert started_in in latest["MESSAGE_TEXT"]

    with host.state() as partition:
        mq.end_unit_of_work(partition, partition.queue_manager("TEST"), uow.id)
    checkpoint(shell)
    assert oldest_needed(shell) == attached(shell)


def test_a_damaged_object_holds_the_media_recovery_point_back_until_recreated(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    checkpoint(shell)
    imaged_in = attached(shell)
    with host.state() as partition:
        mq.damage(partition, partition.queue_manager("TEST"), "APP.REQUEST.QUEUE")
    host.advance(timedelta(hours=2))
    status, out, _ = shell.cl(CHECKPOINT)
    assert status == 0 and "AMQ7472" in out
    assert oldest_needed(shell) == imaged_in != attached(shell)

    status, out, err = shell.cl("RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*Q) MQMNAME(TEST)")
    assert status == 0, err
    assert "AMQ7081" in out
    checkpoint(shell)
    assert oldest_needed(shell) == attached(shell)


def test_rcdmqmimg_on_an_ended_queue_manager_fails_with_amq8146(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    assert shell.cl("ENDMQM MQMNAME(TEST)")[0] == 0
    status, out, err = shell.cl(CHECKPOINT)
    assert status != 0 and out == ""
    assert err.startswith("AMQ8146:")


# --- DLTJRNRCV refuses what IBM i refuses -----------------------------------------------------------------


@pytest.fixture
def chain(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(hours=1))
    shell = sim_fleet.connect()
    assert shell.cl("CRTSAVF FILE(QGPL/BKP1)")[0] == 0
    return shell


def test_dltjrnrcv_refuses_the_attached_receiver_with_a_diagnostic_then_no_objects_deleted(chain):
    # As IBM i's DLT commands end a refusal: the diagnostic naming the reason, then the escape that sums up.
    name = attached(chain)
    status, out, err = chain.cl(f"DLTJRNRCV JRNRCV(QMTEST/{name})")
    assert (status, out) == (255, "")
    assert err.splitlines() == [
        f"CPF7022: Receiver {name} in QMTEST attached to journal AMQAJRN in QMTEST; receiver not deleted.",
        "CPF2125: No objects deleted.",
    ]


def test_dltjrnrcv_refuses_a_receiver_that_is_not_the_oldest_with_a_diagnostic_then_no_objects_deleted(chain):
    status, _, err = chain.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000001) DLTOPT(*IGNINQMSG)")
    assert status != 0
    assert [line.split(":")[0] for line in err.splitlines()] == ["CPF7024", "CPF2125"]
    assert "AMQA000001 in QMTEST not deleted" in err.splitlines()[0]
    assert "AMQA000001" in [r["JOURNAL_RECEIVER_NAME"] for r in receivers(chain)]


def test_dltjrnrcv_of_an_unknown_receiver_is_cpf2105(chain):
    status, _, err = chain.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA077777)")
    assert status != 0 and err.startswith("CPF2105: Object AMQA077777 in QMTEST type *JRNRCV not found.")


def test_dltjrnrcv_of_a_saved_oldest_receiver_deletes_it(chain):
    status, out, _ = chain.cl("SAVOBJ OBJ(AMQA000000) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/BKP1)")
    assert status == 0 and out.startswith("CPC3722: 1 objects saved from library QMTEST.")
    assert receivers(chain)[0]["STATUS"] == "SAVED" and receivers(chain)[0]["SAVE_TIMESTAMP"]
    assert chain.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000)")[0] == 0
    assert receivers(chain)[0]["JOURNAL_RECEIVER_NAME"] == "AMQA000001"


def test_dltjrnrcv_of_a_never_saved_receiver_waits_on_cpa7025_until_the_operator_replies(sim_fleet: SimFleet, chain):
    host = sim_fleet.host()
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.update(r=chain.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000)")))
    worker.start()
    deadline = time.monotonic() + 10
    while not host.waiting_inquiries() and time.monotonic() < deadline:
        time.sleep(0.05)
    (key,) = host.waiting_inquiries()
    # The job is in MSGW and holds the receiver: another delete cannot get it.
    other = sim_fleet.connect()
    status, _, err = other.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000) DLTOPT(*IGNINQMSG)")
    assert status != 0 and "CPF9803" in err
    assert messages(other, "QSYSOPR", "CPA7025")

    host.reply(key, "C")
    worker.join(10)
    status, _, err = outcome["r"]
    assert status != 0 and err.splitlines() == [
        "CPF7021: Receiver AMQA000000 in QMTEST not deleted.",
        "CPF2125: No objects deleted.",
    ]
    assert receivers(other)[0]["JOURNAL_RECEIVER_NAME"] == "AMQA000000"


def test_dltjrnrcv_with_ignore_inquiry_deletes_a_never_saved_receiver(chain):
    # IBM i lets this through: the planner must never send it without proof of a save.
    assert chain.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000) DLTOPT(*IGNINQMSG)")[0] == 0
    assert receivers(chain)[0]["JOURNAL_RECEIVER_NAME"] == "AMQA000001"


def test_a_receiver_saved_while_attached_stays_never_fully_saved(sim_fleet: SimFleet, chain):
    current = attached(chain)
    assert chain.cl(f"SAVOBJ OBJ({current}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/BKP1)")[0] == 0
    sim_fleet.host().advance(timedelta(hours=1))
    row = next(r for r in receivers(chain) if r["JOURNAL_RECEIVER_NAME"] == current)
    assert row["STATUS"] == "ONLINE" and row["SAVE_TIMESTAMP"]


# --- recovery passes ----------------------------------------------------------------------------------------


def test_strmqm_fails_with_amq7432_after_a_needed_receiver_was_deleted_and_succeeds_once_restored(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    with host.state() as partition:
        mq.open_unit_of_work(partition, partition.queue_manager("TEST"))
    host.advance(timedelta(hours=1))
    checkpoint(shell)
    needed = oldest_needed(shell)
    chain = [r["JOURNAL_RECEIVER_NAME"] for r in receivers(shell)]
    through_needed = chain[: chain.index(needed) + 1]
    assert shell.cl("CRTSAVF FILE(QGPL/BKP2)")[0] == 0
    objs = " ".join(through_needed)
    assert shell.cl(f"SAVOBJ OBJ({objs}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/BKP2)")[0] == 0
    # An operator mistake: the receivers are deleted, the one MQ still needs among them.
    for name in through_needed:
        assert shell.cl(f"DLTJRNRCV JRNRCV(QMTEST/{name})")[0] == 0
    with host.state() as partition:
        mq.crash(partition, partition.queue_manager("TEST"))

    status, _, err = shell.cl("STRMQM MQMNAME(TEST)")
    assert status != 0 and "AMQ7432" in err
    assert messages(shell, "QMQMMSG", "AMQ7432")

    status, out, err = shell.cl(f"RSTOBJ OBJ({needed}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/BKP2)")
    assert status == 0 and "CPC3703" in out, err
    status, out, err = shell.cl("STRMQM MQMNAME(TEST)")
    assert status == 0 and "AMQ8003" in out, err


def test_rcrmqmobj_fails_with_amq7432_when_the_media_image_receiver_is_gone(sim_fleet: SimFleet):
    host = sim_fleet.host()
    shell = sim_fleet.connect()
    with host.state() as partition:
        mq.damage(partition, partition.queue_manager("TEST"), "APP.REQUEST.QUEUE")
    host.advance(timedelta(hours=1))
    assert shell.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA000000) DLTOPT(*IGNINQMSG)")[0] == 0
    status, _, err = shell.cl("RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*Q) MQMNAME(TEST)")
    assert status != 0 and "AMQ7432" in err


# --- the simulator as a partition ---------------------------------------------------------------------------


def test_state_and_host_keys_survive_a_restart(tmp_path, sim_fleet: SimFleet):
    host = sim_fleet.host()
    host.advance(timedelta(hours=1))
    before = receivers(sim_fleet.connect())
    sim_fleet.service.stop()

    again = SimulatorService(sim_fleet.config)
    ports = again.start()
    try:
        restarted = SimFleet(again, ports, sim_fleet.config)
        assert receivers(restarted.connect()) == before
    finally:
        again.stop()


def test_a_host_key_the_client_does_not_know_is_refused(tmp_path, sim_fleet: SimFleet):
    other = tmp_path / "other_known_hosts"
    other.write_text(
        f"[127.0.0.1]:{sim_fleet.ports['ibmi1']} {paramiko.ECDSAKey.generate().get_name()} "
        f"{paramiko.ECDSAKey.generate().get_base64()}\n"
    )
    with pytest.raises(paramiko.BadHostKeyException):
        sim_fleet.connect(known_hosts=other)


def test_an_injected_command_fault_fails_that_command_with_its_message(sim_fleet: SimFleet):
    from mqjournal.sim.model import CommandFault

    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(CommandFault(pattern="^RCDMQMIMG", msg_id="AMQ8146"))
    shell = sim_fleet.connect()
    status, _, err = shell.cl(CHECKPOINT)
    assert status != 0 and err.startswith("AMQ8146")
    assert shell.cl(CHECKPOINT)[0] == 0  # the fault was for one run


def test_a_full_asp_refuses_new_save_files(sim_fleet: SimFleet):
    with sim_fleet.host().state() as partition:
        partition.faults.asp_full = True
    status, _, err = sim_fleet.connect().cl("CRTSAVF FILE(QGPL/FULL)")
    assert status != 0 and "CPF9898" in err


def test_sql_that_changes_data_is_refused_and_changes_nothing(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    before = receivers(shell)
    status, out, _ = shell.db2("DELETE FROM QSYS2.JOURNAL_RECEIVER_INFO")
    assert status != 0 and "CLI ERROR" in out
    assert receivers(shell) == before


def test_an_unknown_cl_command_and_an_unknown_program_answer_as_ibm_i_and_bash_do(sim_fleet: SimFleet):
    shell = sim_fleet.connect()
    status, _, err = shell.cl("CLRLIB LIB(QMTEST)")
    assert status != 0 and "CPD0030" in err and "CPF0006" in err
    assert shell.run("nosuchprogram -rf /")[0] == 127  # rm is a PASE program now (streamfiles)
    assert shell.run("uname")[1] == "OS400\n"


def test_days_of_receiver_churn_run_without_a_real_wait(sim_fleet: SimFleet):
    sim_fleet.host().advance(timedelta(days=3))
    shell = sim_fleet.connect()
    assert len(receivers(shell)) > 200


def test_advancing_to_a_utc_moment_keeps_the_partitions_own_utc_offset(sim_fleet: SimFleet):
    host = sim_fleet.host()
    offset = host.partition.now.utcoffset()
    host.advance_to((host.partition.now + timedelta(minutes=90)).astimezone(UTC))
    assert host.partition.now.utcoffset() == offset
    chain = receivers(sim_fleet.connect())
    stamps = [r["ATTACH_TIMESTAMP"] for r in chain]
    assert stamps == sorted(stamps)


def test_cl_displays_and_message_times_show_the_partitions_clock_after_the_end_of_dst(tmp_path):
    # The simulator's clock started in EDT (-04:00); after 06:00 UTC on 1 November its displays show EST, as IBM i's
    # do (QTIMZON QN0500EST3), not the offset it started with.
    config = new_york_config(tmp_path, start=datetime(2026, 11, 1, 3, 0, tzinfo=UTC))
    new_york = ZoneInfo("America/New_York")
    with serve(config, advance=timedelta(hours=6)) as fleet:
        partition = fleet.host().partition
        attached = next(r for r in partition.receivers_in("QMTEST") if r.status == "ATTACHED")
        assert attached.attached_at > DST_ENDS
        shell = fleet.connect()
        status, out, _ = shell.cl(f"DSPJRNRCVA JRNRCV(QMTEST/{attached.name}) OUTPUT(*PRINT)")
        assert status == 0
        assert f"{attached.attached_at.astimezone(new_york):%m/%d/%y %H:%M:%S}" in out
        assert partition.job_format().time(partition.now) == f"{partition.now.astimezone(new_york):%H:%M:%S}"
