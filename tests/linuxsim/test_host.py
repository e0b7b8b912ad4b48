"""The simulated Linux host's shell (linuxsim/host.py, commands.py): answers the planner's parsers read, files that
hash as downloaded, paths outside the log refused, and a warmed-up host that persists exactly."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.qmini import log_config
from mqjournal.linuxmq.qmstatus import attributes, log_points
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.host import LinuxSimulatedHost

from .conftest import T0

PAGES = 64  # 256 KiB extents: 8 MB an hour is 32 of them


@pytest.fixture
def sim(tmp_path) -> LinuxSimulatedHost:
    host = LinuxSimulatedHost.create("mqhost1", T0, tmp_path / "host.json")
    host.add_queue_manager(
        "QM1",
        log_management=LogManagement.AUTOMATIC,
        log_file_pages=PAGES,
        objects=(("APP.QUEUE", "queue"),),
        img_sched="AUTO",
    )
    host.add_queue_manager("QM.LEDGER/2", log_file_pages=PAGES, objects=(("LEDGER.IN", "queue"),))
    return host


def test_a_warmed_up_host_has_tens_of_extents_and_round_trips_through_json_exactly(sim, tmp_path):
    sim.workload(4, mb_per_hour=8, checkpoint_every_mb=1)
    manual = sim.host.queue_managers["QM.LEDGER/2"]
    automatic = sim.host.queue_managers["QM1"]
    assert len(manual.extents) > 30 and automatic.reused > 0 and automatic.media != 0
    loaded = LinuxSimulatedHost.load(tmp_path / "host.json")
    assert loaded is not None and loaded.host == sim.host
    assert loaded.host.model_dump_json() == sim.host.model_dump_json()


def test_qm_ini_parses_with_the_planners_reader_and_agrees_with_the_model(sim):
    for name, directory in (("QM1", "QM1"), ("QM.LEDGER/2", "QM!LEDGER&2")):
        qm = sim.host.queue_managers[name]
        stanza = sim.run("dspmqinf -o stanza " + name, "mqm").stdout
        assert f"   Directory={directory}\n" in stanza
        # Quoted: MQ writes "/" as "&", which is a shell operator unquoted.
        answer = sim.run(f"cat '/var/mqm/qmgrs/{directory}/qm.ini'", "mqm")
        config = log_config(answer.stdout)
        assert config.linear and config.management is qm.log_management
        assert config.log_path == qm.log_path == f"/var/mqm/log/{directory}/"
        assert (config.file_pages, config.primary_files, config.secondary_files) == (PAGES, 3, 2)
        assert config.extent_bytes == qm.extent_size


def test_runmqsc_over_the_shell_gives_the_points_of_the_model(sim):
    sim.workload(1, mb_per_hour=8, checkpoint_every_mb=1)
    with sim.state() as host:
        logger.open_unit_of_work(host.queue_managers["QM1"], "long")
    sim.workload(1, mb_per_hour=8, checkpoint_every_mb=1)
    answer = sim.run("runmqsc QM1", "mqm", stdin="DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n")
    qm = sim.host.queue_managers["QM1"]
    p = log_points(attributes(answer.stdout))
    assert (p.current, p.restart, p.media) == (Extent(qm.current), Extent(qm.restart), Extent(qm.media))
    assert p.restart.behind(p.current) > 20  # the open unit of work holds RECLOG


def test_sha256sum_of_an_extent_is_the_digest_of_its_downloaded_bytes(sim):
    sim.workload(1, mb_per_hour=8)
    qm = sim.host.queue_managers["QM.LEDGER/2"]
    path = "/var/mqm/log/QM!LEDGER&2/active/S0000003.LOG"
    answer = sim.run(f"sha256sum '{path}'", "mqm")
    downloaded = hashlib.sha256()
    size = 0
    for chunk in sim.read_extent(path):
        downloaded.update(chunk)
        size += len(chunk)
    assert answer.stdout == f"{downloaded.hexdigest()}  {path}\n" and size == PAGES * 4096
    direct = hashlib.sha256(b"".join(logger.extent_bytes(qm, 3)))
    assert direct.hexdigest() == downloaded.hexdigest()


def test_ls_lists_the_extents_with_size_and_mtime(sim):
    sim.advance(timedelta(minutes=1))
    answer = sim.run("ls -l --time-style=+%s /var/mqm/log/QM1/active/", "mqm")
    stamp = int(T0.timestamp())
    assert answer.stdout == f"total 256\n-rw-rw---- 1 mqm mqm 262144 {stamp} S0000000.LOG\n"


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        ("rm -f /var/mqm/qmgrs/QM1/qm.ini", "rm: cannot remove '/var/mqm/qmgrs/QM1/qm.ini': Permission denied\n"),
        ("rm -f /etc/passwd", "rm: cannot remove '/etc/passwd': Permission denied\n"),
        (
            "rm /var/mqm/log/QM1/active/../../QM1/amqhlctl.lfh",
            "rm: cannot remove '/var/mqm/log/QM1/active/../../QM1/amqhlctl.lfh': Permission denied\n",
        ),
        ("sha256sum /etc/shadow", "sha256sum: /etc/shadow: No such file or directory\n"),
        ("cat /etc/shadow", "cat: /etc/shadow: No such file or directory\n"),
        ("ls -l /var/mqm/log/QM1/", "ls: cannot access '/var/mqm/log/QM1/': No such file or directory\n"),
        (
            "rm /var/mqm/log/QM1/active/S0000000.LOG",
            "rm: cannot remove '/var/mqm/log/QM1/active/S0000000.LOG': Operation not permitted\n",
        ),
        ("reboot", "bash: reboot: command not found\n"),
    ],
)
def test_paths_outside_a_log_directory_and_unknown_commands_are_refused(sim, line, refusal):
    before = sim.host.model_copy(deep=True)
    answer = sim.run(line, "mqm")
    assert answer.stderr == refusal and answer.exit_status != 0
    assert sim.host == before


def test_shell_operators_are_not_run(sim):
    answer = sim.run("rm -f /var/mqm/log/QM1/active/S0000000.LOG; reboot", "mqm")
    assert answer.exit_status == 2


def test_a_user_outside_group_mqm_is_refused(sim):
    assert sim.run("runmqsc QM1", "guest", stdin="DISPLAY QMSTATUS CURRLOG\n").stderr.startswith("AMQ7077E")
    assert sim.run("sha256sum /var/mqm/log/QM1/active/S0000000.LOG", "guest").stderr.endswith("Permission denied\n")
    assert sim.run("dspmq -m QM1", "guest").exit_status == 0


def test_dspmq_answers_as_captured_and_72_for_an_unknown_name(sim):
    answer = sim.run("dspmq -x -o all -m QM1", "mqm")
    first, second = answer.stdout.splitlines()
    assert first.index("STATUS(Running) DEFAULT(no) STANDBY(Not permitted)") == 58
    assert second == "    INSTANCE(mqhost1) MODE(Active)"
    assert sim.run("dspmq -m NOPE", "mqm").exit_status == 72


def test_rm_of_a_restart_extent_stops_strmqm_until_it_is_written_back(sim):
    sim.workload(1, mb_per_hour=2, checkpoint_every_mb=100)  # no checkpoint: RECLOG stays at S0000000
    with sim.state() as host:
        logger.crash(host.queue_managers["QM.LEDGER/2"])
    path = "/var/mqm/log/QM!LEDGER&2/active/S0000002.LOG"
    saved = b"".join(sim.read_extent(path))
    assert sim.run(f"rm -f '{path}'", "mqm").exit_status == 0
    failed = sim.run("strmqm QM.LEDGER/2", "mqm")
    assert failed.exit_status == 23 and "AMQ6767E" in failed.stderr and "S0000002.LOG" in failed.stderr
    sim.write_extent(path, [saved[:1000], saved[1000:]])
    started = sim.run("strmqm QM.LEDGER/2", "mqm")
    assert started.exit_status == 0 and "started using V9.4.2.0" in started.stdout
    assert sim.run("dspmq -m QM.LEDGER/2", "mqm").stdout.endswith("STATUS(Running)\n")


def test_rcdmqimg_l_names_the_oldest_extents_for_restart_and_media_recovery(sim):
    sim.workload(1, mb_per_hour=2, checkpoint_every_mb=1)
    answer = sim.run("rcdmqimg -m QM.LEDGER/2 -l -t all '*'", "mqm")
    qm = sim.host.queue_managers["QM.LEDGER/2"]
    assert answer.exit_status == 0 and qm.media == qm.current
    assert answer.stdout == (
        f"AMQ7467I: The oldest log file required to start queue manager QM.LEDGER/2 is {Extent(qm.restart).name}.\n"
        "AMQ7468I: The oldest log file required to perform media recovery of queue manager QM.LEDGER/2 is "
        f"{Extent(qm.current).name}.\n"
    )


def test_rcrmqobj_fails_with_amq6767_without_the_extents_from_the_image_on(sim):
    sim.workload(1, mb_per_hour=2, checkpoint_every_mb=1)
    with sim.state() as host:
        logger.damage(host.queue_managers["QM.LEDGER/2"], "LEDGER.IN")
    assert sim.run("rm '/var/mqm/log/QM!LEDGER&2/active/S0000001.LOG'", "mqm").exit_status == 0
    failed = sim.run("rcrmqobj -m QM.LEDGER/2 -t queue LEDGER.IN", "mqm")
    assert failed.exit_status == 1 and failed.stderr.startswith("AMQ6767E: Log file S0000001.LOG")


def test_any_slice_of_an_extent_is_the_same_bytes_as_its_stream() -> None:
    from mqjournal.linuxsim import logger

    whole = b"".join(logger.content("QM1", 7, 200_000))
    for offset, length in [(0, 10), (63, 2), (64, 64), (65_530, 70_000), (199_990, 100), (200_000, 5)]:
        assert logger.content_at("QM1", 7, 200_000, offset, length) == whole[offset : offset + length]


# --- what `mqjournal doctor` reads of a Linux host ------------------------------------------------------------------


def test_id_names_the_groups_of_the_signed_on_user_mqm_among_them_for_a_member(sim):
    with sim.state() as host:
        host.mqm_members.append("mqjournal")
    assert sim.run("id -G -n", "mqjournal").stdout == "mqjournal mqm\n"
    assert sim.run("id -Gn", "guest").stdout == "guest\n"


def test_sha256sum_of_dev_null_is_the_empty_files_digest_until_the_program_is_missing(sim):
    assert sim.run("sha256sum /dev/null", "guest").stdout == f"{hashlib.sha256(b'').hexdigest()}  /dev/null\n"
    with sim.state() as host:
        host.missing_programs.append("sha256sum")
    missing = sim.run("sha256sum /dev/null", "mqm")
    assert missing.exit_status == 127 and missing.stderr == "bash: sha256sum: command not found\n"


def test_df_of_a_log_path_reports_the_log_file_system_in_posix_format_and_grows_with_the_extents(sim):
    def usage() -> list[str]:
        answer = sim.run("df -P -k /var/mqm/log/QM1/active/", "mqm")
        header, line = answer.stdout.splitlines()
        assert header.split() == ["Filesystem", "1024-blocks", "Used", "Available", "Capacity", "Mounted", "on"]
        return line.split()

    before = usage()
    sim.workload(1, mb_per_hour=8)
    after = usage()
    assert before[0] == after[0] == "/dev/mapper/vg_mq-log" and before[-1] == "/var/mqm/log"
    grown = sum(len(qm.extents) * qm.extent_size for qm in sim.host.queue_managers.values()) // 1024
    assert int(after[2]) - int(before[2]) == grown - 2 * PAGES * 4  # each queue manager had its first extent
    assert int(after[1]) == int(after[2]) + int(after[3]) and after[4].endswith("%")
    assert sim.run("df -P -k /var/mqm/log/NOPE/active/", "mqm").stderr.endswith("No such file or directory\n")


def test_a_circular_queue_manager_says_so_in_qm_ini_and_shows_no_linear_log_points(sim):
    with sim.state() as host:
        host.queue_managers["QM1"].log_type = "CIRCULAR"
    assert log_config(sim.run("cat /var/mqm/qmgrs/QM1/qm.ini", "mqm").stdout).log_type == "CIRCULAR"
    answer = sim.run("runmqsc QM1", "mqm", stdin="DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG LOGTYPE\n")
    found = attributes(answer.stdout)
    assert found["LOGTYPE"] == "CIRCULAR" and found["CURRLOG"] == found["RECLOG"] == found["MEDIALOG"] == ""


def test_dspmq_of_one_queue_manager_reads_as_running_or_not_with_the_planners_reader(sim):
    from mqjournal.linuxmq.readings import ReadingError, queue_manager_running

    name = next(iter(sim.host.queue_managers))
    assert queue_manager_running(sim.run(f"dspmq -m {name}", "mqm").stdout, name) is True
    sim.run(f"endmqm -i {name}", "mqm")
    assert queue_manager_running(sim.run(f"dspmq -m {name}", "mqm").stdout, name) is False
    with pytest.raises(ReadingError):
        queue_manager_running(sim.run("dspmq -m NOSUCH", "mqm").stdout, "NOSUCH")
