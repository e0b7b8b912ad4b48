"""The simulated AIX host (LinuxHost.platform "aix"): MQ where AIX installs it, AIX's ls and its refusal of GNU's
options, no sha256sum but openssl, ksh's wording; and a state saved before hosts had a platform still loads."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest

from mqjournal.linuxmq import platforms
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.readings import extent_sha256, group_names
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.linuxsim.model import STATE_VERSION

from .conftest import T0

ACTIVE = "/var/mqm/log/QM!PAY/active/"


@pytest.fixture
def aix(tmp_path) -> LinuxSimulatedHost:
    host = LinuxSimulatedHost.create("mq-aix1", T0, tmp_path / "host.json", platform="aix")
    host.add_queue_manager("QM.PAY", log_management=LogManagement.ARCHIVE, log_file_pages=16)
    return host


def test_aix_lists_as_captured_aix_listings_do_and_the_planners_reader_reads_it(aix):
    aix.advance(timedelta(days=200))  # S0000000.LOG is now older than six months
    with aix.state() as host:
        host.queue_managers["QM.PAY"].extents["S0000000.LOG"].modified = T0
    answer = aix.run(platforms.AIX.list_extents(ACTIVE).text, "mqm")
    assert answer.exit_status == 0
    assert answer.stdout == "total 64\n-rw-rw----    1 mqm      mqm           65536 Nov 02 2026  S0000000.LOG\n"
    (listed,) = platforms.AIX.read_listing(answer.stdout, aix.host.now)
    assert (listed.extent.name, listed.size_bytes, listed.modified_at.date()) == ("S0000000.LOG", 65536, T0.date())


def test_aix_ls_refuses_gnu_s_options_as_its_getopt_does(aix):
    answer = aix.run(platforms.LINUX.list_extents(ACTIVE).text, "mqm")
    assert answer.exit_status == 2 and answer.stderr.startswith("ls: Not a recognized flag: -\nUsage: ls [-")
    missing = aix.run("ls -l /var/mqm/log/NOQM/active/", "mqm")
    assert missing.stderr == "ls: 0653-341 The file /var/mqm/log/NOQM/active/ does not exist.\n"


def test_aix_has_no_sha256sum_but_openssl_digests_what_a_download_gets(aix):
    aix.workload(1, mb_per_hour=1)
    missing = aix.run("sha256sum /dev/null", "mqm")
    assert (missing.exit_status, missing.stderr) == (127, "ksh: sha256sum:  not found.\n")
    path = f"{ACTIVE}S0000001.LOG"
    tool = platforms.AIX.digest_tools[0]
    answer = aix.run(tool.command(path).text, "mqm")
    downloaded = hashlib.sha256(b"".join(aix.read_extent(path))).hexdigest()
    assert answer.exit_status == 0 and extent_sha256(answer.stdout, path) == downloaded
    empty = aix.run(tool.command("/dev/null").text, "mqm").stdout
    assert empty == f"{hashlib.sha256(b'').hexdigest()} */dev/null\n"
    outsider = aix.run(tool.command(path).text, "nobody")
    assert outsider.exit_status == 1 and "Permission denied" in outsider.stderr


def test_mq_is_in_usr_mqm_and_the_user_s_primary_group_is_staff(aix):
    listed = aix.run("/usr/mqm/bin/dspmq -o all", "mqm")
    assert listed.exit_status == 0 and "INSTPATH(/usr/mqm)" in listed.stdout
    elsewhere = aix.run("/opt/mqm/bin/dspmq", "mqm")
    assert (elsewhere.exit_status, elsewhere.stderr) == (127, "ksh: /opt/mqm/bin/dspmq:  not found.\n")
    assert group_names(aix.run("id -G -n", "mqm").stdout) == ["staff", "mqm"]


def test_a_state_saved_before_hosts_had_a_platform_loads_as_a_linux_host(tmp_path):
    saved = LinuxSimulatedHost.create("mq-linux1", T0, tmp_path / "old.json")
    saved.add_queue_manager("QM1")
    state = json.loads((tmp_path / "old.json").read_text())
    del state["platform"]
    (tmp_path / "old.json").write_text(json.dumps(state))
    loaded = LinuxSimulatedHost.load(tmp_path / "old.json")
    assert loaded is not None and loaded.host.platform == "linux" and loaded.host.state_version == STATE_VERSION
    assert loaded.run("sha256sum /dev/null", "mqm").exit_status == 0
