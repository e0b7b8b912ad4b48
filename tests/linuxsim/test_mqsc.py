"""runmqsc answers (linuxsim/mqsc.py) read by the planner's own parsers (linuxmq.qmstatus), and MQSC as MQ reads it."""

from __future__ import annotations

import pytest

from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.qmstatus import QmStatusError, attributes, log_points, queue_media_log
from mqjournal.linuxsim import logger, mqsc
from mqjournal.linuxsim.model import LinuxHost

from .conftest import EXTENT, T0, make_qm


def host_with(qm) -> LinuxHost:
    host = LinuxHost(name="mqhost1", now=T0)
    host.queue_managers[qm.name] = qm
    return host


def run(host, text):
    return mqsc.runmqsc(host, ["QM1"], text)


@pytest.fixture
def busy_archive():
    """Archive mode, CURRLOG S0000006, RECLOG S0000004 (a unit of work), MEDIALOG S0000002 (a damaged queue)."""
    qm = make_qm(LogManagement.ARCHIVE)
    logger.write(qm, 2 * EXTENT, at=T0)
    logger.record_media_images(qm, at=T0)
    logger.damage(qm, "APP.QUEUE")
    logger.write(qm, 2 * EXTENT, at=T0)
    logger.open_unit_of_work(qm, "uow")
    logger.write(qm, 2 * EXTENT, at=T0)
    logger.checkpoint(qm)
    logger.record_media_images(qm, at=T0)
    return qm


@pytest.mark.parametrize(
    "command",
    ["DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH", "DISPLAY QMSTATUS ALL", "dis qmstatus log"],
)
def test_display_qmstatus_parses_into_the_models_log_points(busy_archive, command):
    answer = run(host_with(busy_archive), command + "\n")
    assert answer.exit_status == 0
    found = attributes(answer.stdout)
    p = log_points(found)
    assert (p.current, p.restart, p.media) == (Extent(6), Extent(4), Extent(2))
    assert found["ARCHLOG"] == "S0000000.LOG" and found["LOGPATH"] == "/var/mqm/log/QM1/active/"
    assert found["QMNAME"] == "QM1" and found["STATUS"] == "RUNNING"


def test_the_answer_is_laid_out_as_captured():
    qm = make_qm(LogManagement.MANUAL)
    out = run(host_with(qm), "DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n").stdout
    assert out == (
        "5724-H72 (C) Copyright IBM Corp. 1994, 2025.\n"
        "Starting MQSC for queue manager QM1.\n\n\n"
        "     1 : DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n"
        "AMQ8705I: Display Queue Manager Status Details.\n"
        "   QMNAME(QM1)                             TYPE(QMGR)\n"
        "   STATUS(RUNNING)                         ARCHLOG( )\n"
        "   CURRLOG(S0000000.LOG)                   LOGPATH(/var/mqm/log/QM1/active/)\n"
        "   MEDIALOG(S0000000.LOG)                  RECLOG(S0000000.LOG)\n"
        "One MQSC command read.\n"
        "No commands have a syntax error.\n"
        "All valid MQSC commands were processed.\n"
    )


def test_a_pair_too_long_for_the_left_column_takes_its_own_line():
    lines = mqsc.pairs_lines([("A", "x"), ("LOGPATH", "/var/mqm/log/" + "Q" * 30 + "/active/"), ("B", "")])
    assert lines == ["   A(x)", "   LOGPATH(/var/mqm/log/" + "Q" * 30 + "/active/)", "   B( )"]


def test_display_qmgr_gives_the_imaging_attributes_and_has_no_logtype():
    answer = run(host_with(make_qm()), "DISPLAY QMGR IMGSCHED IMGINTVL IMGLOGLN IMGRCOVO IMGRCOVQ LOGGEREV\n")
    assert "AMQ8408I: Display Queue Manager details.\n" in answer.stdout
    assert "   IMGLOGLN(OFF)                           IMGRCOVO(YES)\n" in answer.stdout
    refused = run(host_with(make_qm()), "DISPLAY QMGR LOGTYPE\n")
    assert refused.exit_status == 10
    assert "AMQ8405I: Syntax error detected at or near end of command segment below:-\nDISPLAY QMGR LOGTYPE\n" in (
        refused.stdout
    )
    assert "One command has a syntax error.\n" in refused.stdout


def test_set_log_archived_answers_and_refusals(busy_archive):
    host = host_with(busy_archive)
    answer = run(
        host,
        "SET LOG ARCHIVED('S0000000.LOG')\nSET LOG ARCHIVED('S0000006.LOG')\nSET LOG ARCHIVED('S0000099.LOG')\n"
        "SET LOG ARCHIVED('S0000003.LOG')\nSET LOG ARCHIVED('S0000003.LOG')\n",
    )
    assert answer.exit_status == 10
    lines = answer.stdout.splitlines()
    assert "AMQ8996I: Log extent S0000000.LOG notified as archived." in lines
    assert "AMQ8999E: Log extent S0000006.LOG is the current log extent." in lines
    assert "AMQ8995E: Log extent S0000099.LOG not found or is not valid." in lines
    assert lines.count("AMQ8996I: Log extent S0000003.LOG notified as archived.") == 2  # a repeat succeeds
    assert lines[-3:] == [
        "5 MQSC commands read.",
        "No commands have a syntax error.",
        "2 valid MQSC commands could not be processed.",
    ]
    # S0000000 is needed by neither recovery: MQ's to reuse; S0000003 is still needed by media recovery: kept.
    assert "R0000000.LOG" in busy_archive.extents and busy_archive.extent(3).archived
    refused = run(host, "SET LOG ARCHIVED('R0000000.LOG')\n")
    assert "AMQ8995E: Log extent R0000000.LOG not found or is not valid." in refused.stdout


def test_set_log_archived_fails_unless_log_management_is_archive():
    answer = run(host_with(make_qm(LogManagement.AUTOMATIC)), "SET LOG ARCHIVED('S0000000.LOG')\n")
    assert "AMQ8998E: The log management type is not ARCHIVE." in answer.stdout and answer.exit_status == 10


def test_reset_qmgr_advances_the_log_and_notifies_up_to_an_extent(busy_archive):
    host = host_with(busy_archive)
    answer = run(host, "RESET QMGR TYPE(ADVANCELOG)\nRESET QMGR TYPE(ARCHLOG) ARCHIVED('S0000001.LOG')\n")
    assert answer.exit_status == 0 and busy_archive.current == 7
    assert {"R0000000.LOG", "R0000001.LOG"} <= set(busy_archive.extents)


@pytest.mark.parametrize(
    "value",
    [
        "S0000000.LOG;RESET QMGR TYPE(ADVANCELOG)",  # a `;` inside the quotes is part of the value
        "S0000000.LOG\nRESET QMGR TYPE(ADVANCELOG)",  # a newline: two lines, each a broken command
        "S0000000.LOG+\nRESET QMGR TYPE(ADVANCELOG)",  # a trailing `+` joins the next line into the value
        "S0000000.LOG+",
    ],
)
def test_a_value_with_a_semicolon_newline_or_trailing_plus_is_refused_and_nothing_else_runs(busy_archive, value):
    before = busy_archive.model_copy(deep=True)
    answer = run(host_with(busy_archive), f"SET LOG ARCHIVED('{value}')\n")
    assert answer.exit_status == 10
    assert "AMQ8997I" not in answer.stdout and "AMQ8996I" not in answer.stdout
    assert busy_archive == before


def test_a_value_that_closes_its_quote_runs_a_second_command_as_mqsc_would(busy_archive):
    # Why the client validates every value before it writes MQSC: the reader is as literal as MQ's.
    answer = run(host_with(busy_archive), "SET LOG ARCHIVED('S0000000.LOG');RESET QMGR TYPE(ADVANCELOG)\n")
    assert "AMQ8997I: IBM MQ queue manager reset." in answer.stdout and busy_archive.current == 7


def test_continuation_and_semicolons_are_read_as_mqsc_reads_them():
    assert mqsc.read_commands("DISPLAY QMSTATUS +\n    CURRLOG\n* a comment\nDIS QMGR -\n IMGSCHED; DIS QMGR\n") == [
        "DISPLAY QMSTATUS CURRLOG",
        "DIS QMGR  IMGSCHED",
        "DIS QMGR",
    ]


def test_a_queue_manager_that_is_not_running_answers_amq8146e_and_nothing_runs():
    qm = make_qm()
    logger.end(qm)
    answer = run(host_with(qm), "DISPLAY QMSTATUS CURRLOG\n")
    assert answer.exit_status == 20 and "AMQ8146E: IBM MQ queue manager not available." in answer.stdout


def test_display_qstatus_shows_a_queues_own_medialog_as_captured_and_the_reader_takes_it(busy_archive):
    logger.record_media_images(busy_archive, "APP.*", "queue", at=T0)  # damaged: its image stays at S0000002
    logger.recreate_objects(busy_archive, "queue", "APP.QUEUE")
    logger.record_media_images(busy_archive, "APP.QUEUE", "queue", at=T0)

    out = run(host_with(busy_archive), "DISPLAY QSTATUS('APP.QUEUE') TYPE(QUEUE) MEDIALOG\n").stdout

    assert "AMQ8450I: Display queue status details.\n" in out
    assert "   QUEUE(APP.QUEUE)                        TYPE(QUEUE)\n   MEDIALOG(S0000006.LOG)\n" in out
    assert queue_media_log(out) == Extent(6)


def test_a_damaged_queue_named_alone_answers_amq8149s_and_a_generic_name_passes_it_over(busy_archive):
    host = host_with(busy_archive)  # APP.QUEUE is damaged

    alone = run(host, "DISPLAY QSTATUS('APP.QUEUE') TYPE(QUEUE) MEDIALOG\n")
    generic = run(host, "DIS QS(APP.*)\n")

    assert "AMQ8149S: IBM MQ object damaged.\n" in alone.stdout and alone.exit_status == mqsc.RC_SOME_FAILED
    with pytest.raises(QmStatusError, match="AMQ8149S"):
        queue_media_log(alone.stdout)
    assert "AMQ8450I" not in generic.stdout and generic.exit_status == 0
    unknown = run(host, "DISPLAY QSTATUS('NO.SUCH.QUEUE') TYPE(QUEUE) MEDIALOG\n").stdout
    assert "AMQ8147E: IBM MQ object NO.SUCH.QUEUE not found." in unknown
