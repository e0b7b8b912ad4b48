"""What `mqjournal doctor` reads of a Linux host's answers: dspmq's list, the session's groups, df's one line."""

from __future__ import annotations

import pytest

from mqjournal.linuxmq.qmstatus import QMGR_DETAILS, QmStatusError, attributes
from mqjournal.linuxmq.readings import ReadingError, file_system_usage, group_names, queue_manager_statuses

# dspmq -x -o all of MQ 9.4.2 (instana's capture), then plain dspmq lines as admins paste them.
DSPMQ = (
    "QMNAME(QM1)                                               STATUS(Running) DEFAULT(no) STANDBY(Not permitted) "
    "INSTNAME(Installation1) INSTPATH(/opt/mqm) INSTVER(9.4.2.0) ROLE(Not configured) INSTANCE() INSYNC() QUORUM() "
    "GRPLSN() GRPNAME() GRPROLE(Not configured)\n"
    "    INSTANCE(ibmmq1.fyre.ibm.com) MODE(Active)\n"
    "QMNAME(remote.qm)                                         STATUS(Ended unexpectedly)\n"
    "QMNAME(QM.STANDBY)                                        STATUS(Running as standby)\n"
)


def test_dspmq_gives_each_queue_manager_its_status_and_passes_over_its_instances() -> None:
    assert queue_manager_statuses(DSPMQ) == {
        "QM1": "Running",
        "remote.qm": "Ended unexpectedly",
        "QM.STANDBY": "Running as standby",
    }
    assert queue_manager_statuses("") == {}
    with pytest.raises(ReadingError):
        queue_manager_statuses("AMQ7048E: The queue manager name is either not valid or not known.\n")


def test_the_groups_are_id_s_one_line() -> None:
    assert group_names("mqjournal wheel mqm\n") == ["mqjournal", "wheel", "mqm"]
    with pytest.raises(ReadingError):
        group_names("mqjournal\nmqm\n")


def test_df_p_k_reads_in_bytes_and_its_capacity_is_used_of_used_and_available() -> None:
    answer = (
        "Filesystem            1024-blocks     Used Available Capacity Mounted on\n"
        "/dev/mapper/vg_mq-log    20511312 17430016   2016336      90% /var/mqm/log\n"
    )
    usage = file_system_usage(answer)
    assert (usage.device, usage.mounted_on) == ("/dev/mapper/vg_mq-log", "/var/mqm/log")
    assert usage.size_bytes == 20511312 * 1024 and usage.available_bytes == 2016336 * 1024
    assert round(usage.used_fraction, 3) == round(17430016 / (17430016 + 2016336), 3)  # not of the size: root's room


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "Filesystem 512-blocks Used Available Capacity Mounted on\n/dev/sda1 100 50 50 50% /\n",
        "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/sda1 100 50% /\n",
        "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/a 1 1 0 100% /\n/dev/b 1 1 0 100% /x\n",
    ],
    ids=["nothing", "512-byte blocks", "a short line", "two file systems"],
)
def test_an_answer_not_of_df_p_k_for_one_path_is_refused(answer: str) -> None:
    with pytest.raises(ReadingError):
        file_system_usage(answer)


def test_display_qmgr_reads_as_display_qmstatus_does_after_its_own_details_line() -> None:
    answer = (
        "     1 : DISPLAY QMGR IMGSCHED\n"
        "AMQ8408I: Display Queue Manager details.\n"
        "   QMNAME(QM1)                             IMGSCHED(AUTO)\n"
        "One MQSC command read.\n"
    )
    assert attributes(answer, QMGR_DETAILS) == {"QMNAME": "QM1", "IMGSCHED": "AUTO"}
    with pytest.raises(QmStatusError, match="no queue manager details"):
        attributes("AMQ8146E: IBM MQ queue manager not available.\n", QMGR_DETAILS)
