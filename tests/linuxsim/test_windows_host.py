"""The simulated Windows host as a fleet host (LinuxHost.platform "windows"): its queue managers under Windows'
directories, saved and loaded as such; its shell is cmd.exe's (linuxsim/windows.py), its SFTP paths `/C:/...`; and
which of its lines read standard input."""

from __future__ import annotations

import json

import pytest

from mqjournal.linuxmq import windowsforms
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.linuxsim.model import WindowsQueueManager
from mqjournal.linuxsim.serving import reads_stdin

from .conftest import T0

ACTIVE = r"C:\ProgramData\IBM\MQ\log\QMWIN\active"


@pytest.fixture
def win(tmp_path) -> LinuxSimulatedHost:
    host = LinuxSimulatedHost.create("mq-win1", T0, tmp_path / "host.json", platform="windows")
    host.add_queue_manager("QMWIN", log_management=LogManagement.MANUAL, log_file_pages=16)
    with host.state() as state:
        state.mqm_members.append("mqjournal")
    return host


def test_a_windows_host_keeps_its_queue_managers_under_windows_directories_across_a_restart(win, tmp_path):
    assert isinstance(win.host.queue_managers["QMWIN"], WindowsQueueManager)
    loaded = LinuxSimulatedHost.load(tmp_path / "host.json")
    assert loaded is not None and loaded.host.platform == "windows"
    qm = loaded.host.queue_managers["QMWIN"]
    assert isinstance(qm, WindowsQueueManager) and qm.active_path == ACTIVE + "\\"


def test_its_shell_is_cmd_exe_and_its_sftp_paths_are_win32_openssh_s(win):
    answer = win.run(windowsforms.list_extents(ACTIVE).text, "mqjournal")
    assert answer.exit_status == 0 and windowsforms.listed_extents(answer.stdout)
    assert win.run(f"ls -l {ACTIVE}", "mqjournal").exit_status == 9009  # no POSIX word splitting, no ls
    found = win.extent_at("/C:/ProgramData/IBM/MQ/log/QMWIN/active/S0000000.LOG")
    assert found is not None and found[1] == "S0000000.LOG"
    assert win.active_at("/C:/ProgramData/IBM/MQ/log/QMWIN/active") is win.host.queue_managers["QMWIN"]
    assert b"".join(win.read_extent("/C:/ProgramData/IBM/MQ/log/QMWIN/active/S0000000.LOG"))
    assert win.extent_at("/var/mqm/log/QMWIN/active/S0000000.LOG") is None


def test_a_deletion_through_cmd_exe_is_saved(win, tmp_path):
    with win.state() as host:
        host.queue_managers["QMWIN"].current = 1  # S0000000.LOG is no longer the one being written
        host.queue_managers["QMWIN"].extents["S0000001.LOG"] = (
            host.queue_managers["QMWIN"].extents["S0000000.LOG"].model_copy(update={"number": 1})
        )
    answer = win.run(f'del "{ACTIVE}\\S0000000.LOG"', "mqjournal")
    assert answer.exit_status == 0 and not answer.stderr, answer
    saved = json.loads((tmp_path / "host.json").read_text())
    assert "S0000000.LOG" not in saved["queue_managers"]["QMWIN"]["extents"]


def test_runmqsc_reads_standard_input_on_windows_by_its_program_path() -> None:
    assert reads_stdin(r'"C:\Program Files\IBM\MQ\bin\runmqsc.exe" QM1', windows=True)
    assert reads_stdin(r'"C:\Program Files\IBM\MQ\bin\RUNMQSC" QM1', windows=True)
    assert not reads_stdin(r'"C:\Program Files\IBM\MQ\bin\dspmq.exe"', windows=True)
    assert reads_stdin("/opt/mqm/bin/runmqsc QM1") and not reads_stdin(r'"C:\x\runmqsc.exe" QM1')
