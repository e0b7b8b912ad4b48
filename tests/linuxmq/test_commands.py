"""The commands sent to a Linux queue manager host: only validated values, MQSC on standard input."""

from __future__ import annotations

import shlex

import pytest

from mqjournal.linuxmq import commands
from mqjournal.linuxmq.extents import Extent

BIN = "/opt/mqm/bin"


def test_mqsc_goes_on_standard_input_and_the_command_line_names_only_the_queue_manager() -> None:
    command = commands.display_log_status(BIN, "QM.ORDERS/1")

    assert shlex.split(command.text) == ["/opt/mqm/bin/runmqsc", "QM.ORDERS/1"]
    assert command.stdin == "DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n"
    assert commands.set_log_archived(BIN, "QM1", Extent.parse("S0000123.LOG")).stdin == (
        "SET LOG ARCHIVED('S0000123.LOG')\n"
    )


def test_rcdmqimg_gets_a_literal_star_not_the_shells_file_names() -> None:
    assert shlex.split(commands.record_media_images(BIN, "QM1").text) == [
        "/opt/mqm/bin/rcdmqimg", "-l", "-m", "QM1", "-t", "all", "*"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "qmgr", ["QM1; rm -rf /", "QM1\nDISPLAY QMGR", "QM1 -t", "", "Q" * 49, "$(id)", "QM'1", "QM1+"]
)
def test_a_queue_manager_name_that_is_not_one_builds_no_command(qmgr: str) -> None:
    for build in (commands.display_log_status, commands.record_media_images, commands.queue_manager_info):
        with pytest.raises(ValueError):
            build(BIN, qmgr)


def test_only_s_extents_are_notified_and_paths_are_plain() -> None:
    with pytest.raises(ValueError, match="reuse"):
        commands.set_log_archived(BIN, "QM1", Extent.parse("R0000001.LOG"))
    for path in ("/var/mqm/log/QM1/../../etc/", "relative/active", "/var/mqm/log/$(id)/active/", "/var/mqm/log/a b/"):
        with pytest.raises(ValueError):
            commands.list_extents(path)
    digest = commands.extent_digest("/var/mqm/log/QM!ORDERS/active/", Extent.parse("S0000007.LOG"))
    assert shlex.split(digest.text) == ["sha256sum", "/var/mqm/log/QM!ORDERS/active/S0000007.LOG"]


def test_the_doctors_reads_change_nothing_and_name_only_checked_values() -> None:
    assert commands.user_groups().text == "id -G -n" and commands.digest_probe().text == "sha256sum /dev/null"
    assert shlex.split(commands.list_queue_managers(BIN).text) == ["/opt/mqm/bin/dspmq"]
    schedule = commands.display_image_schedule(BIN, "QM.ORDERS")
    assert shlex.split(schedule.text) == ["/opt/mqm/bin/runmqsc", "QM.ORDERS"]
    assert schedule.stdin == "DISPLAY QMGR IMGSCHED\n"
    df = commands.file_system_usage("/var/mqm/log/QM!ORDERS/active/")
    assert shlex.split(df.text) == ["df", "-P", "-k", "/var/mqm/log/QM!ORDERS/active/"]
    built = [commands.user_groups(), commands.digest_probe(), commands.list_queue_managers(BIN), schedule, df]
    assert all(c.idempotent for c in built)
    with pytest.raises(ValueError):
        commands.display_image_schedule(BIN, "QM1; rm -rf /")
    for path in ("/var/mqm/log/$(id)/", "relative", "/var/mqm/../etc"):
        with pytest.raises(ValueError):
            commands.file_system_usage(path)


def test_rcrmqobj_names_one_object_of_a_type_rcrmqobj_takes_and_a_bare_star_is_never_left_to_the_shell() -> None:
    command = commands.recreate_object(BIN, "QM.ORDERS", "Queue", "APP.Request/1")

    assert shlex.split(command.text) == ["/opt/mqm/bin/rcrmqobj", "-m", "QM.ORDERS", "-t", "queue", "APP.Request/1"]
    assert not command.idempotent
    assert shlex.split(commands.recreate_object(BIN, "QM1", "*", "TO.PARTNER").text)[4] == "all"
    for kind, name in (("qlocal; id", "Q1"), ("nosuchtype", "Q1"), ("queue", "APP.*"), ("queue", "A B")):
        with pytest.raises(ValueError):
            commands.recreate_object(BIN, "QM1", kind, name)


def test_a_queues_status_is_asked_with_its_name_quoted_so_mqsc_keeps_its_case() -> None:
    command = commands.display_queue_media_log(BIN, "QM1", "app.request")

    assert shlex.split(command.text) == ["/opt/mqm/bin/runmqsc", "QM1"]
    assert command.stdin == "DISPLAY QSTATUS('app.request') TYPE(QUEUE) MEDIALOG\n"
    assert shlex.split(commands.start_queue_manager(BIN, "QM1").text) == ["/opt/mqm/bin/strmqm", "QM1"]
    assert shlex.split(commands.queue_manager_status(BIN, "QM1").text) == ["/opt/mqm/bin/dspmq", "-m", "QM1"]
    with pytest.raises(ValueError):
        commands.display_queue_media_log(BIN, "QM1", "Q1') DISPLAY QMGR ('")
