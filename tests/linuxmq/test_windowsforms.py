"""The Windows forms (linuxmq.windowsforms): built only from names and directories cmd.exe and PowerShell read nothing
in, and answers read whole or refused (docs/windows-interfaces.md)."""

from __future__ import annotations

import pytest

from mqjournal.errors import InvalidName
from mqjournal.linuxmq import windowsforms as w
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.readings import ReadingError, queue_manager_statuses

ACTIVE = r"C:\ProgramData\IBM\MQ\log\QM1\active"
EXTENT = rf"{ACTIVE}\S0000007.LOG"
DIGEST = "988a56d897915315eef9ca679b3bc8adfcecf5e227aea99aaa1817620520e97e"


@pytest.mark.parametrize(
    "path",
    [
        r'C:\MQ"&calc.exe&"',
        r"C:\MQ\%PATH%",
        r"C:\MQ\!x!",
        r"C:\MQ\a^b",
        r"C:\MQ\a&b",
        r"C:\MQ\a|b",
        r"C:\MQ\a<b",
        r"C:\MQ\a>b",
        r"C:\MQ\it's",
        r"C:\MQ\..\Windows",
        r"C:\MQ\PROGRA~1",
        r"C:\MQ\active.",
        r"C:\MQ\active ",
        r"C:\MQ\NUL",
        r"C:\MQ\com1.log",
        r"\\server\share\log",
        r"\\?\C:\log",
        "/var/mqm/log",
        r"MQ\log",
        "C:\\MQ\nlog",
    ],
)
def test_a_directory_cmd_or_powershell_would_read_something_in_is_refused(path: str) -> None:
    with pytest.raises(InvalidName):
        w.list_extents(path)


def test_a_directory_with_blanks_is_always_written_inside_quotes() -> None:
    command = w.extent_digest(r"D:\MQ Data\log\QM1\active", Extent(7))
    assert r'-hashfile "D:\MQ Data\log\QM1\active\S0000007.LOG" SHA256' in command.text


@pytest.mark.parametrize("name", ["QM%PATH%", "QM&x", 'QM"', "QM 1", "", "/m"])
def test_a_queue_manager_name_cmd_would_expand_or_split_is_refused(name: str) -> None:
    with pytest.raises(InvalidName):
        w.display_log_status(name)


def test_mqsc_goes_on_standard_input_and_the_program_by_its_full_quoted_path() -> None:
    command = w.set_log_archived("QM.A", Extent(7))
    assert command.text == r'"C:\Program Files\IBM\MQ\bin\runmqsc.exe" QM.A'
    assert command.stdin == "SET LOG ARCHIVED('S0000007.LOG')\n"


def test_the_star_of_rcdmqimg_is_quoted() -> None:
    assert w.record_media_images("QM1").text.endswith('-t all "*"')


def test_an_r_extent_is_neither_notified_nor_deleted() -> None:
    with pytest.raises(ValueError):
        w.set_log_archived("QM1", Extent(7, reusable=True))
    with pytest.raises(ValueError):
        w.remove_extent(ACTIVE, Extent(7, reusable=True))


def test_tools_in_another_place_are_checked_as_directories() -> None:
    with pytest.raises(InvalidName):
        w.WindowsTools(mq_bin=r"C:\MQ&x\bin")
    assert w.user_groups(w.WindowsTools(system32=r"D:\Windows\System32")).text.startswith(
        r'"D:\Windows\System32\whoami.exe"'
    )


def test_the_sftp_path_is_the_drive_after_a_slash_with_forward_slashes() -> None:
    assert w.extent_sftp_path(ACTIVE, Extent(7)) == "/C:/ProgramData/IBM/MQ/log/QM1/active/S0000007.LOG"


def test_the_data_path_is_prefix_qmgrs_directory_unless_dspmqinf_gives_a_data_path() -> None:
    stanza = "QueueManager:\r\n   Name=QM.A\r\n   Directory=QM!A\r\n   Prefix=C:\\ProgramData\\IBM\\MQ\r\n"
    with pytest.raises(ReadingError, match="not one mqjournal can name"):
        w.data_path(stanza)  # QM!A: cmd.exe with delayed expansion would drop the !
    plain = stanza.replace("QM!A", "QMA")
    assert w.data_path(plain) == r"C:\ProgramData\IBM\MQ\qmgrs\QMA"
    assert w.data_path(plain + "   DataPath=E:\\MQ\\QMA\r\n") == r"E:\MQ\QMA"
    with pytest.raises(ReadingError):
        w.data_path("QueueManager:\r\n   Name=QM1\r\n")


def test_the_listing_is_read_by_name_with_size_and_time() -> None:
    listed = w.listed_extents("16777216 1764633600 S0000002.LOG\r\n16777216 1764633000 R0000001.LOG\r\n\r\n")
    assert [(f.extent.name, f.size_bytes, int(f.modified_at.timestamp())) for f in listed] == [
        ("R0000001.LOG", 16777216, 1764633000),
        ("S0000002.LOG", 16777216, 1764633600),
    ]
    assert w.listed_extents("") == []


@pytest.mark.parametrize(
    "answer",
    [
        "16,777,216 1764633600 S0000002.LOG",
        "Get-ChildItem : Cannot find path 'C:\\x' because it does not exist.",
        "16777216 S0000002.LOG",
        "#< CLIXML",
    ],
)
def test_a_listing_line_of_another_form_is_refused(answer: str) -> None:
    with pytest.raises(ReadingError):
        w.listed_extents(f"16777216 1764633600 S0000001.LOG\r\n{answer}\r\n")


def test_certutil_is_read_in_todays_form_and_in_the_older_spaced_form() -> None:
    today = f"SHA256 hash of {EXTENT}:\r\n{DIGEST}\r\nCertUtil: -hashfile command completed successfully.\r\n"
    spaced = " ".join(DIGEST[i : i + 2] for i in range(0, 64, 2))
    older = f"SHA256 hash of file {EXTENT}:\r\n{spaced.upper()}\r\nCertUtil: -hashfile command completed successfully."
    assert w.read_digest(today, EXTENT) == DIGEST
    assert w.read_digest(older, EXTENT) == DIGEST


@pytest.mark.parametrize(
    "answer",
    [
        f"SHA256 hash of C:\\other\\S0000007.LOG:\r\n{DIGEST}\r\nCertUtil: -hashfile command completed successfully.",
        f"SHA256 hash of {EXTENT}:\r\n{DIGEST[:-2]}\r\nCertUtil: -hashfile command completed successfully.",
        f"SHA256 hash of {EXTENT}:\r\n{DIGEST}",
        "CertUtil: -hashfile command FAILED: 0x80070002 (WIN32: 2 ERROR_FILE_NOT_FOUND)\r\n"
        "CertUtil: The system cannot find the file specified.",
        f"SHA256 hash of {EXTENT}:\r\n{DIGEST}\r\n{DIGEST}\r\nCertUtil: -hashfile command completed successfully.",
    ],
)
def test_a_certutil_answer_not_of_that_file_or_not_whole_is_refused(answer: str) -> None:
    with pytest.raises(ReadingError):
        w.read_digest(answer, EXTENT)


def test_del_is_read_by_its_words_not_its_exit_status() -> None:
    assert w.read_removal("", "", EXTENT) is w.RemoveOutcome.REMOVED
    assert w.read_removal("", f"Could Not Find {EXTENT}\r\n", EXTENT) is w.RemoveOutcome.NOT_FOUND
    for words in (
        "Access is denied.",
        "The process cannot access the file because it is being used by another process.",
    ):
        with pytest.raises(ReadingError):
            w.read_removal("", f"{words}\r\n", EXTENT)
    with pytest.raises(ReadingError):
        w.read_removal("", "Could Not Find C:\\other\\S0000007.LOG", EXTENT)


def test_whoami_csv_is_read_and_the_local_mqm_group_found() -> None:
    answer = (
        '"Everyone","Well-known group","S-1-1-0","Mandatory group, Enabled by default, Enabled group"\r\n'
        '"MQWIN1\\mqm","Alias","S-1-5-21-1-2-3-1013","Mandatory group, Enabled by default, Enabled group"\r\n'
        '"Mandatory Label\\High Mandatory Level","Label","S-1-16-12288",""\r\n'
    )
    names = w.group_names(answer)
    assert names == ["Everyone", "MQWIN1\\mqm", "Mandatory Label\\High Mandatory Level"]
    assert w.in_mqm(names)
    assert not w.in_mqm(["Everyone", "MQWIN1\\mqmadmins"])


@pytest.mark.parametrize("answer", ["", "GROUP INFORMATION\r\n-----------------", '"Everyone","Well-known group"'])
def test_a_whoami_answer_of_another_shape_is_refused(answer: str) -> None:
    with pytest.raises(ReadingError):
        w.group_names(answer)


def test_the_volume_line_is_read_and_checked() -> None:
    usage = w.read_file_system_usage("214748364800 150323462144 150000000000\r\n", ACTIVE)
    assert (usage.size_bytes, usage.used_bytes, usage.available_bytes) == (214748364800, 64424902656, 150000000000)
    assert usage.mounted_on == "C:\\"
    for bad in ("214,748,364,800 1 1", "1 2 3", "1 1 1\r\n1 1 1"):
        with pytest.raises(ReadingError):
            w.read_file_system_usage(bad, ACTIVE)


def test_ver_shows_the_shell_is_cmd() -> None:
    assert w.read_windows_version("\r\nMicrosoft Windows [Version 10.0.17763.6414]\r\n") == "10.0.17763.6414"
    with pytest.raises(ReadingError, match="DefaultShell"):
        w.read_windows_version("ver : The term 'ver' is not recognized as the name of a cmdlet")


def test_an_mq_administrator_is_in_mqm_or_an_elevated_administrator() -> None:
    def groups(*rows: tuple[str, str]) -> list[w.Group]:
        return [w.Group(name, sid, "") for name, sid in rows]

    everyone = ("Everyone", "S-1-1-0")
    admins = ("BUILTIN\\Administratoren", "S-1-5-32-544")  # a German host: the name differs, the SID does not
    assert w.mq_administrator(groups(everyone, ("MQWIN1\\mqm", "S-1-5-21-1-2-3-1013")))
    assert w.mq_administrator(groups(everyone, admins, ("Mandatory Label\\High Mandatory Level", "S-1-16-12288")))
    assert not w.mq_administrator(groups(everyone, admins, ("Mandatory Label\\Medium Mandatory Level", "S-1-16-8192")))
    assert not w.mq_administrator(groups(everyone))


def test_only_the_two_command_processor_keys_are_queried() -> None:
    assert w.command_processor_settings(w.COMMAND_PROCESSOR_KEYS[0]).text == (
        r'"C:\Windows\System32\reg.exe" query "HKLM\Software\Microsoft\Command Processor"'
    )
    with pytest.raises(ValueError):
        w.command_processor_settings(r"HKLM\Software\Microsoft\Windows\CurrentVersion\Run")


def test_reg_query_is_read_and_autorun_or_delayed_expansion_make_cmd_unsafe() -> None:
    answer = (
        "\r\nHKEY_LOCAL_MACHINE\\Software\\Microsoft\\Command Processor\r\n"
        "    CompletionChar    REG_DWORD    0x40\r\n    EnableExtensions    REG_DWORD    0x1\r\n\r\n"
    )
    values = w.read_command_processor(answer, 0)
    assert values == {"CompletionChar": "0x40", "EnableExtensions": "0x1"}
    assert w.cmd_is_plain(values)
    assert w.read_command_processor("", 1) == {}
    assert not w.cmd_is_plain({"AutoRun": "@cd C:\\"})
    assert not w.cmd_is_plain({"DelayedExpansion": "0x1"})
    with pytest.raises(ReadingError):
        w.read_command_processor("hello from AutoRun\r\n" + answer, 0)


def test_dspmq_as_captured_on_windows_reads_with_the_linux_reader() -> None:
    captured = "QMNAME(QM.36266751.01)                  STATUS(Running)\r\n"  # a public README's expected answer
    assert queue_manager_statuses(captured) == {"QM.36266751.01": "Running"}
