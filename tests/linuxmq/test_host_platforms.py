"""The platform seam (linuxmq/platforms.py): Linux and AIX send exactly linuxmq.commands' forms, Windows the forms of
linuxmq.windowsforms from the host's own directories; `del` is judged by its words, a digest only of the file sent;
and the fleet file takes `platform: windows` with Windows' defaults and rules, refusing what cmd.exe could misread."""

from __future__ import annotations

import pytest

from mqjournal.fleet import FleetConfig
from mqjournal.ibmi.transport import CommandOutput
from mqjournal.linuxmq import commands, platforms, windowsforms
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.platforms import AIX, LINUX, WINDOWS

QMGR, EXTENT = "QM.ORDERS", Extent.parse("S0000007.LOG")
ACTIVE = "/var/mqm/log/QM!ORDERS/active/"
WIN_BIN = r"D:\IBM\MQ\bin64"
WIN_ACTIVE = r"C:\ProgramData\IBM\MQ\log\QMWIN\active" + "\\"


def out(exit_status: int = 0, stdout: str = "", stderr: str = "") -> CommandOutput:
    return CommandOutput(exit_status=exit_status, stdout=stdout, stderr=stderr, duration_ms=1.0)


@pytest.mark.parametrize("platform", [LINUX, AIX], ids=["linux", "aix"])
def test_unix_platforms_send_exactly_the_commands_they_sent_before_the_seam(platform: platforms.UnixPlatform) -> None:
    b = platform.mq_bin
    pairs = [
        (platform.record_media_images(b, QMGR), commands.record_media_images(b, QMGR)),
        (platform.queue_manager_info(b, QMGR), commands.queue_manager_info(b, QMGR)),
        (platform.read_qm_ini("/var/mqm/qmgrs/QM!ORDERS"), commands.read_qm_ini("/var/mqm/qmgrs/QM!ORDERS")),
        (platform.display_log_status(b, QMGR), commands.display_log_status(b, QMGR)),
        (platform.set_log_archived(b, QMGR, EXTENT), commands.set_log_archived(b, QMGR, EXTENT)),
        (platform.display_image_schedule(b, QMGR), commands.display_image_schedule(b, QMGR)),
        (platform.display_queue_media_log(b, QMGR, "Q1"), commands.display_queue_media_log(b, QMGR, "Q1")),
        (platform.list_queue_managers(b), commands.list_queue_managers(b)),
        (platform.queue_manager_status(b, QMGR), commands.queue_manager_status(b, QMGR)),
        (platform.start_queue_manager(b, QMGR), commands.start_queue_manager(b, QMGR)),
        (platform.recreate_object(b, QMGR, "queue", "Q1"), commands.recreate_object(b, QMGR, "queue", "Q1")),
        (platform.remove_extent(ACTIVE, EXTENT), commands.remove_extent(ACTIVE, EXTENT)),
        (platform.file_system_usage(ACTIVE), commands.file_system_usage(ACTIVE)),
        (platform.user_groups(), commands.user_groups()),
    ]
    pairs += [
        (platform.extent_digest(ACTIVE, EXTENT, t), commands.extent_digest(ACTIVE, EXTENT, t))
        for t in platform.digest_tools
    ]
    for ours, before in pairs:
        assert ours == before
    assert platform.active_log_path("/var/mqm/log/QM!ORDERS/") == ACTIVE
    assert platform.sftp_path(ACTIVE, EXTENT.name) == ACTIVE + EXTENT.name
    assert (
        platform.data_path("QueueManager:\n   Prefix=/var/mqm\n   Directory=QM!ORDERS\n") == "/var/mqm/qmgrs/QM!ORDERS"
    )


def test_windows_sends_windowsforms_forms_from_the_host_s_mq_bin() -> None:
    tools = windowsforms.WindowsTools(mq_bin=WIN_BIN)
    assert WINDOWS.display_log_status(WIN_BIN, "QMWIN") == windowsforms.display_log_status("QMWIN", tools)
    assert WINDOWS.start_queue_manager(WIN_BIN, "QMWIN").text == r'"D:\IBM\MQ\bin64\strmqm.exe" QMWIN'
    assert WINDOWS.set_log_archived(WIN_BIN, "QMWIN", EXTENT).stdin == "SET LOG ARCHIVED('S0000007.LOG')\n"
    assert WINDOWS.remove_extent(WIN_ACTIVE, EXTENT).text == rf'del "{WIN_ACTIVE}S0000007.LOG"'
    assert WINDOWS.extent_digest(WIN_ACTIVE, EXTENT, platforms.CERTUTIL).text == (
        rf'"C:\Windows\System32\certutil.exe" -hashfile "{WIN_ACTIVE}S0000007.LOG" SHA256'
    )
    assert WINDOWS.active_log_path("C:\\ProgramData\\IBM\\MQ\\log\\QMWIN\\") == WIN_ACTIVE
    assert WINDOWS.sftp_path(WIN_ACTIVE, EXTENT.name) == "/C:/ProgramData/IBM/MQ/log/QMWIN/active/S0000007.LOG"
    assert WINDOWS.file_path(WIN_ACTIVE, EXTENT.name) == WIN_ACTIVE + EXTENT.name


def test_del_is_judged_by_its_words_never_its_exit_status() -> None:
    path = WIN_ACTIVE + EXTENT.name
    assert WINDOWS.removal_refused(out(0), path) is None
    assert WINDOWS.removal_refused(out(0, stderr=f"Could Not Find {path}\r\n"), path) is None
    for words in (
        "Access is denied.",
        "The process cannot access the file because it is being used by another process.",
    ):
        refused = WINDOWS.removal_refused(out(0, stderr=f"{words}\r\n"), path)
        assert refused is not None and words in refused
    assert WINDOWS.removal_refused(out(0, stderr=f"Impossible de trouver {path}\r\n"), path) is not None  # translated
    assert LINUX.removal_refused(out(0), ACTIVE + EXTENT.name) is None
    assert "status 1" in (LINUX.removal_refused(out(1, stderr="rm: Permission denied\n"), ACTIVE) or "")


def test_a_certutil_digest_counts_only_for_the_file_sent() -> None:
    path = WIN_ACTIVE + EXTENT.name
    digest = "ab" * 32
    answer = f"SHA256 hash of {path}:\r\n{digest}\r\nCertUtil: -hashfile command completed successfully.\r\n"
    assert WINDOWS.read_digest(answer, path) == digest
    assert WINDOWS.read_digest(answer, WIN_ACTIVE + "S0000008.LOG") is None
    assert WINDOWS.read_digest("CertUtil: -hashfile command FAILED: 0x80070002\r\nCertUtil: x\r\n", path) is None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("QM.PAY", "'.' or '/'"),
        ("QM/1", "'.' or '/'"),
        ("QM%PATH%", "cannot be sent through cmd.exe"),
        ("/QM", "read as a flag"),
    ],
)
def test_the_fleet_file_refuses_a_windows_queue_manager_cmd_exe_could_misread(name: str, why: str) -> None:
    with pytest.raises(ValueError, match=rf"host w1 \(Windows\): queue manager {name}: .*{why}") as refused:
        FleetConfig.model_validate(
            {"hosts": [{"name": "w1", "platform": "windows", "queue_managers": [{"name": name}]}]}
        )
    assert "leave this queue manager off" in str(refused.value) or "rename" in str(refused.value)


def test_a_windows_host_in_the_fleet_file_has_windows_defaults_and_windows_directory_rules() -> None:
    fleet = FleetConfig.model_validate(
        {
            "hosts": [
                {"name": "ibmi1", "queue_managers": [{"name": "TEST"}]},
                {"name": "mq-win1", "platform": "windows", "queue_managers": [{"name": "QMWIN"}]},
                {"name": "mq-win2", "platform": "windows", "mq_bin": WIN_BIN},
                {"name": "mq-linux1", "platform": "linux"},
            ]
        }
    )
    assert [h.name for h in fleet.hosts] == ["ibmi1"]
    assert [(h.name, h.mq_bin, h.data_root, h.host_platform) for h in fleet.linux_hosts] == [
        ("mq-win1", r"C:\Program Files\IBM\MQ\bin", r"C:\ProgramData\IBM\MQ", WINDOWS),
        ("mq-win2", WIN_BIN, r"C:\ProgramData\IBM\MQ", WINDOWS),
        ("mq-linux1", "/opt/mqm/bin", "/var/mqm", LINUX),
    ]
    assert FleetConfig.model_validate(fleet.model_dump(mode="json")) == fleet
    for platform, bad in (
        ("windows", {"mq_bin": "/opt/mqm/bin"}),  # a POSIX path names nothing on Windows
        ("windows", {"mq_bin": r"C:\IBM\MQ\bin & calc"}),
        ("windows", {"data_root": r"C:\Program Data\%USERNAME%"}),
        ("windows", {"mq_bin": r"\\server\share\bin"}),
        ("linux", {"mq_bin": r"C:\Program Files\IBM\MQ\bin"}),  # nor a Windows one on Linux
    ):
        with pytest.raises(ValueError, match=r"mq_bin|data_root"):
            FleetConfig.model_validate({"hosts": [{"name": "h1", "platform": platform, **bad}]})
