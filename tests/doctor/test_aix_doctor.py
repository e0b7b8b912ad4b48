"""`mqjournal doctor` on a simulated AIX MQ host (`platform: aix`), over SSH: AIX's own forms are sent and a ready host
passes; a host whose base system gives no SHA-256 fails that check, safe, naming what to install."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.extents import LogManagement
from tests.conftest import serve
from tests.doctor.test_linux_doctor import READ_ONLY_MQSC, USER, LinuxDoctor, _by_name, _check, _failed, _fleet

AIX = "mq-linux1"  # LinuxDoctor's host name; this one is an AIX host
DIGEST = "SHA-256 of an extent on the host"

# Everything the doctor may send to an AIX host: Linux's reads with MQ in /usr/mqm/bin, POSIX ls, openssl's digest.
READ_ONLY_AIX = re.compile(
    r"^(id -G -n|openssl dgst -sha256 -r /dev/null|/opt/freeware/bin/sha256sum /dev/null|/usr/mqm/bin/dspmq"
    r"|/usr/mqm/bin/dspmqinf -o stanza \S+|/usr/mqm/bin/runmqsc \S+|cat '?/var/mqm/qmgrs/[^/']+/qm\.ini'?"
    r"|LC_ALL=C ls -l '?/var/mqm/log/[^/']+/active/'?|df -P -k '?/var/mqm/log/[^/']+/active/'?)$"
)


@pytest.fixture
def doctor(tmp_path: Path) -> Iterator[LinuxDoctor]:
    queue_managers = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in (("QM.PAY", LogManagement.ARCHIVE), ("QMAIXMAN", LogManagement.MANUAL))
    ]
    host = LinuxHostConfig.model_validate(
        {"name": AIX, "platform": "aix", "port": 0, "media_images": "rcdmqimg", "queue_managers": queue_managers}
    )
    with serve(_fleet(tmp_path, host)) as fleet:
        yield LinuxDoctor(fleet, tmp_path)


def test_a_ready_aix_host_passes_every_check_with_aix_s_own_commands_and_only_reads(doctor: LinuxDoctor):
    before = doctor.live.host.model_copy(deep=True)
    report = doctor.run()
    assert report.ready and set(_by_name(report).values()) == {"pass"}, _failed(report)
    assert "MQ control commands (/usr/mqm/bin)" in _by_name(report)
    assert _check(report, DIGEST).detail == "openssl dgst -sha256 -r answers (OpenSSL (AIX fileset openssl.base))"
    live = doctor.live.host.queue_managers["QM.PAY"]
    assert f"{len(live.extents)} extents" in _check(report, "log path (QM.PAY)").detail
    sent = [r["command"] for r in doctor.sent()]
    assert sent and all(READ_ONLY_AIX.match(c) for c in sent), sent
    assert {r["input"] for r in doctor.sent() if "runmqsc" in r["command"]} <= READ_ONLY_MQSC
    assert "/opt/freeware/bin/sha256sum /dev/null" not in sent  # openssl answered first
    assert doctor.live.host == before


def test_an_aix_host_without_a_sha256_program_fails_safe_and_names_what_to_install(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.missing_programs.append("openssl")
    report = doctor.run()
    failed = _failed(report)
    assert set(failed) == {DIGEST}, failed
    said = failed[DIGEST]
    assert "openssl dgst -sha256 -r: ksh: openssl:  not found." in said
    assert "/opt/freeware/bin/sha256sum: ksh: /opt/freeware/bin/sha256sum:  not found." in said
    assert "none counts as archived" in said and "openssl.base" in said and "AIX Toolbox" in said
    sent = [r["command"] for r in doctor.sent()]
    assert "openssl dgst -sha256 -r /dev/null" in sent and "/opt/freeware/bin/sha256sum /dev/null" in sent


def test_a_user_outside_group_mqm_on_aix_is_told_aix_s_command_to_join_it(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.mqm_members.remove(USER)
    report = doctor.run()
    group = _check(report, "group mqm")
    assert group.status == "fail" and "its groups: staff" in group.detail
    assert group.fix.startswith(f"as root: chgrpmem -m + {USER} mqm")
