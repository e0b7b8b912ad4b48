"""The simulated Windows host (linuxsim.windows): every form of linuxmq.windowsforms sent to it reads back with the
readers of windowsforms, and it refuses what cmd.exe, certutil, del and PowerShell would."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mqjournal.errors import InvalidName
from mqjournal.ibmi.commands import Command
from mqjournal.linuxmq import qmstatus
from mqjournal.linuxmq import windowsforms as w
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.qmini import log_config
from mqjournal.linuxmq.readings import queue_manager_running
from mqjournal.linuxsim import commands, logger
from mqjournal.linuxsim.model import LinuxHost, new_queue_manager
from mqjournal.linuxsim.windows import WindowsLayout, answer, extent_at, new_windows_queue_manager, split_arguments
from mqjournal.sim.protocol import ExecResult

NOW = datetime(2026, 12, 1, tzinfo=UTC)
PAGES = 16


@pytest.fixture
def host() -> LinuxHost:
    qm = new_windows_queue_manager(
        new_queue_manager("QM1", NOW, log_management=LogManagement.ARCHIVE, log_file_pages=PAGES)
    )
    made = LinuxHost(name="mqwin1", now=NOW, queue_managers={"QM1": qm}, mqm_members=["mqadmin"])
    for _ in range(4):
        logger.write(made.queue_managers["QM1"], PAGES * 4096, at=NOW)
    return made


def send(host: LinuxHost, command: Command, user: str = "mqadmin", layout: WindowsLayout | None = None) -> ExecResult:
    return answer(host, user, command.text, command.stdin, layout)


def active(host: LinuxHost) -> str:
    info = send(host, w.queue_manager_info("QM1"))
    qm_ini = send(host, w.read_qm_ini(w.data_path(info.stdout)))
    return w.active_directory(log_config(qm_ini.stdout).log_path)


def test_dspmqinf_then_type_then_the_listing_find_the_extents(host: LinuxHost) -> None:
    listed = w.listed_extents(send(host, w.list_extents(active(host))).stdout)
    assert [f.extent.name for f in listed] == sorted(host.queue_managers["QM1"].extents)
    assert {f.size_bytes for f in listed} == {PAGES * 4096}


@pytest.mark.parametrize("legacy", [False, True])
def test_certutil_reads_back_as_the_extents_own_digest(host: LinuxHost, legacy: bool) -> None:
    directory = active(host)
    result = send(host, w.extent_digest(directory, Extent(1)), layout=WindowsLayout(legacy_certutil=legacy))
    digest = w.read_digest(result.stdout, rf"{directory}\S0000001.LOG")
    assert digest == commands.file_digest(host.queue_managers["QM1"], "S0000001.LOG")


def test_the_digest_probe_answers_for_qm_ini(host: LinuxHost) -> None:
    data = w.data_path(send(host, w.queue_manager_info("QM1")).stdout)
    assert len(w.read_digest(send(host, w.digest_probe(data)).stdout, rf"{data}\qm.ini")) == 64


def test_del_removes_an_extent_once_and_says_could_not_find_after(host: LinuxHost) -> None:
    directory = active(host)
    path = rf"{directory}\S0000000.LOG"
    first = send(host, w.remove_extent(directory, Extent(0)))
    again = send(host, w.remove_extent(directory, Extent(0)))
    assert w.read_removal(first.stdout, first.stderr, path) is w.RemoveOutcome.REMOVED
    assert w.read_removal(again.stdout, again.stderr, path) is w.RemoveOutcome.NOT_FOUND
    assert (first.exit_status, again.exit_status) == (0, 0)
    assert "S0000000.LOG" not in host.queue_managers["QM1"].extents


def test_del_of_the_current_extent_keeps_it_and_still_exits_0(host: LinuxHost) -> None:
    directory = active(host)
    current = Extent(host.queue_managers["QM1"].current)
    result = send(host, w.remove_extent(directory, current))
    assert result.exit_status == 0
    with pytest.raises(w.ReadingError, match="used by another process"):
        w.read_removal(result.stdout, result.stderr, rf"{directory}\{current.name}")
    assert current.name in host.queue_managers["QM1"].extents


def test_runmqsc_answers_with_the_windows_log_path_and_set_log_archived_is_taken(host: LinuxHost) -> None:
    status = send(host, w.display_log_status("QM1"))
    assert "\r\n" in status.stdout
    found = qmstatus.attributes(status.stdout)  # the Linux collector's reader takes the Windows answer
    assert found["LOGPATH"] == "C:\\ProgramData\\IBM\\MQ\\log\\QM1\\active\\"
    assert w.directory(found["LOGPATH"]) == active(host)
    archived = send(host, w.set_log_archived("QM1", Extent(0)))
    assert archived.exit_status == 0
    assert host.queue_managers["QM1"].extents["S0000000.LOG"].archived


def test_dspmq_and_strmqm_by_their_full_path(host: LinuxHost) -> None:
    assert queue_manager_running(send(host, w.queue_manager_status("QM1")).stdout, "QM1")
    assert send(host, w.start_queue_manager("QM1")).exit_status == commands.RC_RUNNING
    assert send(host, w.queue_manager_status("QM2")).exit_status == commands.RC_NOT_KNOWN_DSPMQ


def test_whoami_shows_mqm_for_its_members_only(host: LinuxHost) -> None:
    assert w.in_mqm(w.group_names(send(host, w.user_groups()).stdout))
    assert not w.in_mqm(w.group_names(send(host, w.user_groups(), user="guest").stdout))


def test_the_drive_usage_counts_the_extents(host: LinuxHost) -> None:
    layout = WindowsLayout(drive_bytes=10 * 1024**3, other_bytes=1024**3)
    usage = w.read_file_system_usage(send(host, w.file_system_usage(active(host)), layout=layout).stdout, "C:\\")
    assert usage.used_bytes == 1024**3 + len(host.queue_managers["QM1"].extents) * PAGES * 4096


def test_ver_reads_as_the_windows_build(host: LinuxHost) -> None:
    assert w.read_windows_version(send(host, w.shell_probe()).stdout) == "10.0.17763.6414"


def test_the_sftp_path_names_the_same_extent(host: LinuxHost) -> None:
    found = extent_at(host, w.extent_sftp_path(active(host), Extent(2)))
    assert found is not None and found[1] == "S0000002.LOG"


# --- refusals --------------------------------------------------------------------------------------------------------


def test_a_user_outside_mqm_gets_access_denied_and_readers_refuse_it(host: LinuxHost) -> None:
    directory = active(host)
    listing = send(host, w.list_extents(directory), user="guest")
    assert listing.exit_status == 1 and "is denied" in listing.stderr
    digest = send(host, w.extent_digest(directory, Extent(1)), user="guest")
    assert digest.exit_status == 0x80070005
    with pytest.raises(w.ReadingError):
        w.read_digest(digest.stdout, rf"{directory}\S0000001.LOG")
    removal = send(host, w.remove_extent(directory, Extent(1)), user="guest")
    with pytest.raises(w.ReadingError, match="Access is denied"):
        w.read_removal(removal.stdout, removal.stderr, rf"{directory}\S0000001.LOG")


def test_a_missing_file_is_certutils_file_not_found(host: LinuxHost) -> None:
    result = send(host, w.extent_digest(active(host), Extent(99)))
    assert result.exit_status == 0x80070002
    assert "ERROR_FILE_NOT_FOUND" in result.stdout


def test_a_directory_that_is_not_there_is_powershells_error(host: LinuxHost) -> None:
    result = send(host, w.list_extents(r"C:\ProgramData\IBM\MQ\log\QM9\active"))
    assert result.exit_status == 1
    assert "Cannot find path" in result.stderr


@pytest.mark.parametrize(
    "line",
    [
        r'"C:\Program Files\IBM\MQ\bin\dspmq.exe" & del C:\x',
        r'"C:\Program Files\IBM\MQ\bin\dspmq.exe" | more',
        r'"C:\Program Files\IBM\MQ\bin\dspmq.exe" > C:\out.txt',
        "ver ^& whoami",
        "ver\r\nwhoami",
    ],
)
def test_a_second_command_or_a_redirection_is_refused(host: LinuxHost, line: str) -> None:
    assert answer(host, "mqadmin", line).exit_status == 255


def test_a_bare_program_name_is_not_recognized_and_a_missing_directory_not_found(host: LinuxHost) -> None:
    bare = answer(host, "mqadmin", "dspmq")
    assert bare.exit_status == 9009 and "is not recognized" in bare.stderr
    assert answer(host, "mqadmin", r'"C:\MQ\bin\dspmq.exe"').exit_status == 3


def test_percent_variables_are_expanded_inside_quotes_as_cmd_does(host: LinuxHost) -> None:
    expanded = answer(host, "mqadmin", r'"%ProgramFiles%\IBM\MQ\bin\dspmq.exe" -m QM1')
    assert queue_manager_running(expanded.stdout, "QM1")
    assert answer(host, "mqadmin", r'"%NOTSET%\dspmq.exe"').exit_status == 3


def test_a_script_powershell_is_not_known_to_run_is_refused(host: LinuxHost) -> None:
    line = r'"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe" -NoLogo -NoProfile -NonInteractive -Command "Remove-Item C:\x"'
    assert answer(host, "mqadmin", line).exit_status == 1


def test_arguments_split_as_the_c_runtime_does() -> None:
    assert split_arguments(r' -m "QM 1"  a\\"b c" d\"e ""') == ["-m", "QM 1", "a\\b c", 'd"e', ""]


def test_the_command_processor_keys_read_back_plain_by_default(host: LinuxHost) -> None:
    for key in w.COMMAND_PROCESSOR_KEYS:
        result = send(host, w.command_processor_settings(key))
        assert w.cmd_is_plain(w.read_command_processor(result.stdout, result.exit_status))


def test_an_autorun_command_spoils_every_answer_and_the_readers_refuse_them(host: LinuxHost) -> None:
    layout = WindowsLayout(command_processor={"HKCU": {"AutoRun": ("REG_SZ", "hello")}})
    result = send(host, w.command_processor_settings(w.COMMAND_PROCESSOR_KEYS[1]), layout=layout)
    with pytest.raises(w.ReadingError):
        w.read_command_processor(result.stdout, result.exit_status)
    with pytest.raises(w.ReadingError):
        w.listed_extents(send(host, w.list_extents(active(host)), layout=layout).stdout)


def test_why_a_bang_is_refused_delayed_expansion_sends_a_path_to_another_queue_manager(host: LinuxHost) -> None:
    other = new_windows_queue_manager(new_queue_manager("QMA", NOW, log_file_pages=PAGES))
    logger.write(other, 2 * PAGES * 4096, at=NOW)  # S0000000.LOG is no longer the one being written
    host.queue_managers["QMA"] = other
    layout = WindowsLayout(command_processor={"HKLM": {"DelayedExpansion": ("REG_DWORD", "0x1")}})
    line = r'del "C:\ProgramData\IBM\MQ\log\QM!A\active\S0000000.LOG"'  # QM.A's directory, as MQ names it
    answer(host, "mqadmin", line, "", layout)
    assert "S0000000.LOG" not in other.extents  # QMA lost an extent it never was asked about
    with pytest.raises(InvalidName):
        w.remove_extent(r"C:\ProgramData\IBM\MQ\log\QM!A\active", Extent(0))
