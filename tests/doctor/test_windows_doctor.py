"""`mqjournal doctor` on a simulated Windows MQ host (`platform: windows`), over SSH: the line cmd.exe runs is the one
sent (no AutoRun, no delayed expansion), MQ authority is read by SID, certutil answers, and the rest is Linux's checks
in Windows' forms; a host that is not ready fails safe, naming what to do, and is sent nothing more than it must."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim.windows import WindowsLayout
from tests.conftest import serve
from tests.doctor.test_linux_doctor import READ_ONLY_MQSC, USER, LinuxDoctor, _by_name, _check, _failed, _fleet

WINDOWS = "mq-linux1"  # LinuxDoctor's host name; this one is a Windows host
DIGEST = "SHA-256 of an extent on the host"
SHELL, PLAIN, AUTHORITY = (
    "the shell is cmd.exe",
    "cmd.exe runs lines as sent",
    "MQ authority (mqm or an elevated administrator)",
)
MQ = r'"C:\\Program Files\\IBM\\MQ\\bin\\'
SYSTEM = r'"C:\\Windows\\System32\\'
ACTIVE = r"C:\\ProgramData\\IBM\\MQ\\log\\QMWIN[A-Z]+\\active"

# Everything the doctor may send to a Windows host: reads only.
READ_ONLY_WINDOWS = re.compile(
    rf"^(ver|{SYSTEM}reg\.exe"
    r'" query "HK(LM|CU)\\Software\\Microsoft\\Command Processor"'
    rf"|{SYSTEM}whoami\.exe\" /groups /fo csv /nh|{MQ}dspmq\.exe\"|{MQ}dspmqinf\.exe\" -o stanza QMWIN[A-Z]+"
    rf"|{MQ}runmqsc\.exe\" QMWIN[A-Z]+"
    rf'|{SYSTEM}certutil\.exe" -hashfile "C:\\ProgramData\\IBM\\MQ\\qmgrs\\QMWIN[A-Z]+\\qm\.ini" SHA256'
    r'|type "C:\\ProgramData\\IBM\\MQ\\qmgrs\\QMWIN[A-Z]+\\qm\.ini"'
    rf"|{SYSTEM}WindowsPowerShell\\v1\.0\\powershell\.exe\" -NoLogo -NoProfile -NonInteractive -Command \"(\$ProgressPreference"
    rf"='SilentlyContinue'; Get-ChildItem -LiteralPath '{ACTIVE}' .*|\$d = \[IO\.DriveInfo\]::new\('C'\); .*)\")$"
)


def _windows(**changes: object) -> LinuxHostConfig:
    queue_managers = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in (("QMWINARC", LogManagement.ARCHIVE), ("QMWINMAN", LogManagement.MANUAL))
    ]
    return LinuxHostConfig.model_validate(
        {"name": WINDOWS, "platform": "windows", "port": 0, "queue_managers": queue_managers, **changes}
    )


@pytest.fixture
def doctor(tmp_path: Path) -> Iterator[LinuxDoctor]:
    with serve(_fleet(tmp_path, _windows())) as fleet:
        yield LinuxDoctor(fleet, tmp_path)


def _sent(doctor: LinuxDoctor) -> list[str]:
    return [r["command"] for r in doctor.sent()]


def test_a_ready_windows_host_passes_every_check_with_windows_forms_and_only_reads(doctor: LinuxDoctor):
    before = doctor.live.host.model_copy(deep=True)
    report = doctor.run()
    assert report.ready and set(_by_name(report).values()) == {"pass"}, _failed(report)
    assert _check(report, SHELL).detail == "cmd.exe answers `ver`: Windows 10.0.17763.6414"
    assert "MQ control commands (C:\\Program Files\\IBM\\MQ\\bin)" in _by_name(report)
    assert _check(report, DIGEST).detail.startswith("certutil answers (SHA-256 of C:\\ProgramData\\IBM\\MQ\\qmgrs\\")
    assert "\\mqm" in _check(report, AUTHORITY).detail
    live = doctor.live.host.queue_managers["QMWINARC"]
    assert f"{len(live.extents)} extents" in _check(report, "log path (QMWINARC)").detail
    sent = _sent(doctor)
    assert sent[0] == "ver" and all(READ_ONLY_WINDOWS.match(c) for c in sent), [
        c for c in sent if not READ_ONLY_WINDOWS.match(c)
    ]
    assert {r["input"] for r in doctor.sent() if "runmqsc" in r["command"]} <= READ_ONLY_MQSC
    assert doctor.live.host == before


def test_an_autorun_command_fails_the_shell_check_and_nothing_more_is_sent(doctor: LinuxDoctor):
    doctor.live.layout = WindowsLayout(
        command_processor={"HKLM": {"AutoRun": ("REG_SZ", "echo hello")}}
    )  # cmd.exe runs it before every line sshd hands it
    report = doctor.run()
    assert set(_failed(report)) == {SHELL}, _failed(report)
    assert "AutoRun" in _failed(report)[SHELL] and not report.ready
    assert _sent(doctor) == ["ver"]


def test_delayed_expansion_in_the_user_s_key_fails_and_stops_before_any_mq_command(doctor: LinuxDoctor):
    doctor.live.layout = WindowsLayout(
        command_processor={
            "HKLM": {"DelayedExpansion": ("REG_DWORD", "0x0")},
            "HKCU": {"DelayedExpansion": ("REG_DWORD", "0x1")},  # the user's value wins
        }
    )
    report = doctor.run()
    failed = _failed(report)
    assert set(failed) == {PLAIN}, failed
    assert "DelayedExpansion=0x1" in failed[PLAIN] and "set DelayedExpansion to 0" in failed[PLAIN]
    assert not [c for c in _sent(doctor) if "IBM\\MQ" in c]


def test_a_user_neither_in_mqm_nor_elevated_is_told_the_command_that_adds_it(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.mqm_members.remove(USER)
    report = doctor.run()
    authority = _check(report, AUTHORITY)
    assert authority.status == "fail" and "Medium Mandatory Level" in authority.detail
    assert authority.fix.startswith(f"as an administrator: net localgroup mqm {USER} /add")


def test_a_host_whose_certutil_fails_fails_the_digest_check_safe(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.missing_programs.append("certutil")
    report = doctor.run()
    failed = _failed(report)
    assert set(failed) == {DIGEST}, failed
    assert "is not recognized" in failed[DIGEST] and "none counts as archived" in failed[DIGEST]
    assert "certutil.exe runs for the user" in failed[DIGEST]


def test_a_wrong_mq_bin_fails_the_control_commands_check_naming_the_default(tmp_path: Path):
    with serve(_fleet(tmp_path, _windows(mq_bin=r"C:\Program Files\IBM\MQ\bin64"))) as fleet:
        report = LinuxDoctor(fleet, tmp_path).run()
    title = "MQ control commands (C:\\Program Files\\IBM\\MQ\\bin64)"
    check = _check(report, title)
    assert check.status == "fail" and "The system cannot find the path specified." in check.detail
    assert "C:\\Program Files\\IBM\\MQ\\bin by default" in check.fix


def test_a_changed_host_key_is_refused_naming_where_win32_openssh_keeps_its_keys(doctor: LinuxDoctor, tmp_path: Path):
    other = paramiko.ECDSAKey.generate(bits=256)
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{doctor.fleet.ports[WINDOWS]} {other.get_name()} {other.get_base64()}\n")
    report = doctor.run(known_hosts=wrong)
    assert [(c.name, c.status) for c in report.checks] == [("SSH and host key", "fail")]
    assert "ssh-keygen -lf C:\\ProgramData\\ssh\\ssh_host_<type>_key.pub" in report.checks[0].fix
    assert len(doctor.fleet.service.received) == 0  # the key was refused before anything reached the host
