"""`mqjournal doctor` on a simulated Linux MQ host, over SSH: a ready host passes, each broken prerequisite is named with
what to do, and the doctor only reads."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import paramiko
import pytest

from mqjournal.doctor import HostReport, render, run_doctor
from mqjournal.fleet import FleetConfig
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import ssh_connector
from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq.doctor import check_linux_host
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.host import LinuxSimulatedHost
from tests.conftest import START, SimFleet, serve

LINUX = "mq-linux1"
USER = "mqjournal"

# Everything the Linux doctor may send: the groups, the digest of nothing, dspmq, dspmqinf, qm.ini, the listing of a
# log directory, df of it, and runmqsc (whose MQSC, on its standard input, is checked apart).
READ_ONLY = re.compile(
    r"^(id -G -n|sha256sum /dev/null|/opt/mqm/bin/dspmq|/opt/mqm/bin/dspmqinf -o stanza \S+|/opt/mqm/bin/runmqsc \S+"
    r"|cat '?/var/mqm/qmgrs/[^/']+/qm\.ini'?|ls -l --time-style=\+%s '?/var/mqm/log/[^/']+/active/'?"
    r"|df -P -k '?/var/mqm/log/[^/']+/active/'?)$"
)
READ_ONLY_MQSC = {"DISPLAY QMSTATUS CURRLOG RECLOG MEDIALOG ARCHLOG LOGPATH\n", "DISPLAY QMGR IMGSCHED\n"}


def _linux(media_images: str = "rcdmqimg", **changes: object) -> LinuxHostConfig:
    # Extents of 256 KiB, a few tens of them after the warm-up: quick to list, and to fill a small file system.
    queue_managers = [
        LinuxQueueManagerConfig(name=name, log_management=mode, log_file_pages=64, log_bytes_per_minute=20_000)
        for name, mode in (("QM.ORDERS", LogManagement.ARCHIVE), ("QMMANUAL", LogManagement.MANUAL))
    ]
    return LinuxHostConfig.model_validate(
        {"name": LINUX, "port": 0, "media_images": media_images, "queue_managers": queue_managers, **changes}
    )


class LinuxDoctor:
    """A fleet of one Linux host, served over SSH, and the doctor run against it as `mqjournal doctor` runs it."""

    def __init__(self, fleet: SimFleet, tmp_path: Path) -> None:
        self.fleet = fleet
        self.audit_path = tmp_path / "audit.jsonl"

    @property
    def live(self) -> LinuxSimulatedHost:
        return self.fleet.service.linux_hosts[LINUX]

    def run(self, *, known_hosts: Path | None = None) -> HostReport:
        connect = ssh_connector(
            address="127.0.0.1",
            port=self.fleet.ports[LINUX],
            user=USER,
            key=self.fleet.service.client_key,
            known_hosts=known_hosts or self.fleet.config.known_hosts,
        )
        (host,) = self.fleet.config.linux_hosts
        (report,) = run_doctor(self.fleet.config, {LINUX: connect}, audit=AuditLog(self.audit_path))
        assert report is not None and report.host == host.name
        print(render([report]))
        return report

    def sent(self) -> list[dict]:
        if not self.audit_path.exists():
            return []
        records = [json.loads(line) for line in self.audit_path.read_text().splitlines()]
        return [r for r in records if r["event"] == "intent"]


def _fleet(tmp_path: Path, host: LinuxHostConfig) -> FleetConfig:
    return FleetConfig(
        state_dir=tmp_path / "state", start=START, warmup_hours=3, hosts=[], linux_hosts=[host]
    ).resolved(tmp_path)


@pytest.fixture
def doctor(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LinuxDoctor]:
    host = getattr(request, "param", None) or _linux()
    with serve(_fleet(tmp_path, host)) as fleet:
        yield LinuxDoctor(fleet, tmp_path)


def _by_name(report: HostReport) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}


def _failed(report: HostReport) -> dict[str, str]:
    return {c.name: f"{c.detail} | fix: {c.fix}" for c in report.checks if c.status == "fail"}


def _check(report: HostReport, name: str):
    (check,) = [c for c in report.checks if c.name == name]
    return check


def test_a_ready_linux_host_passes_every_check(doctor: LinuxDoctor):
    report = doctor.run()
    assert report.ready, _failed(report)
    statuses = _by_name(report)
    expected = {
        "SSH and host key",
        "group mqm",
        "SHA-256 of an extent on the host",
        "MQ control commands (/opt/mqm/bin)",
    }
    for qm in ("QM.ORDERS", "QMMANUAL"):
        expected |= {
            f"queue manager {qm}",
            f"log type ({qm})",
            f"log management ({qm})",
            f"DISPLAY QMSTATUS ({qm})",
            f"log path ({qm})",
            f"media images ({qm})",
            f"log file system ({qm})",
        }
    assert set(statuses) == expected and set(statuses.values()) == {"pass"}, statuses
    live = doctor.live.host.queue_managers["QM.ORDERS"]
    status = _check(report, "DISPLAY QMSTATUS (QM.ORDERS)").detail
    assert f"CURRLOG S{live.current:07d}.LOG" in status and f"MEDIALOG S{live.media:07d}.LOG" in status
    assert f"{len(live.extents)} extents" in _check(report, "log path (QM.ORDERS)").detail
    assert "/var/mqm/log (/dev/mapper/vg_mq-log)" in _check(report, "log file system (QM.ORDERS)").detail


def test_the_linux_doctor_only_reads_and_every_command_is_audited(doctor: LinuxDoctor):
    before = doctor.live.host.model_copy(deep=True)
    doctor.run()
    sent = doctor.sent()
    assert sent and all(READ_ONLY.match(r["command"]) for r in sent), [r["command"] for r in sent]
    assert {r["input"] for r in sent if "runmqsc" in r["command"]} <= READ_ONLY_MQSC
    received = [e.command for e in doctor.fleet.service.received.entries()]
    assert received == [r["command"] for r in sent]  # nothing reached the host but what the audit log names
    assert doctor.live.host == before  # no extent, point, image or file changed


def test_a_user_outside_group_mqm_is_told_to_join_it_and_what_it_cannot_read(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.mqm_members.remove(USER)
    report = doctor.run()
    failed = {c.name: c for c in report.checks if c.status == "fail"}
    assert set(failed) == {"group mqm", "qm.ini (QM.ORDERS)", "qm.ini (QMMANUAL)"}, _failed(report)
    group = failed["group mqm"]
    assert "not in group mqm" in group.detail and "rcdmqimg" in group.detail
    assert group.fix.startswith(f"as root: usermod -a -G mqm {USER}") and "signs on again" in group.fix
    assert "Permission denied" in failed["qm.ini (QMMANUAL)"].detail
    assert "group mqm" in failed["qm.ini (QMMANUAL)"].fix


def test_a_host_without_sha256sum_is_not_ready_since_no_extent_copy_could_be_proven(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.missing_programs.append("sha256sum")
    report = doctor.run()
    failed = _failed(report)
    assert set(failed) == {"SHA-256 of an extent on the host"}, failed
    said = failed["SHA-256 of an extent on the host"]
    assert "command not found" in said and "none counts as archived" in said and "coreutils" in said


def test_a_circular_log_is_a_warning_that_nothing_is_planned_and_the_host_stays_ready(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        host.queue_managers["QMMANUAL"].log_type = "CIRCULAR"
    report = doctor.run()
    check = _check(report, "log type (QMMANUAL)")
    assert report.ready and check.status == "warn", _failed(report)
    assert "CIRCULAR" in check.detail and "nothing to plan" in check.detail and "migmqlog" in check.fix
    # Nothing more of it is read: its log is not mqjournal's to archive.
    assert not any(c.name.endswith("(QMMANUAL)") and c.name != "log type (QMMANUAL)" for c in report.checks)
    assert not [r for r in doctor.sent() if r["command"].endswith("runmqsc QMMANUAL")]


def test_a_queue_manager_that_is_not_running_fails_with_strmqm_and_its_files_are_still_checked(doctor: LinuxDoctor):
    with doctor.live.state() as host:
        logger.end(host.queue_managers["QM.ORDERS"], immediate=False)
    report = doctor.run()
    failed = {c.name: c for c in report.checks if c.status == "fail"}
    assert set(failed) == {"queue manager QM.ORDERS"}, _failed(report)
    assert "STATUS(Ended normally)" in failed["queue manager QM.ORDERS"].detail
    assert "strmqm QM.ORDERS" in failed["queue manager QM.ORDERS"].fix
    statuses = _by_name(report)
    assert statuses["log path (QM.ORDERS)"] == statuses["log file system (QM.ORDERS)"] == "pass"
    assert "DISPLAY QMSTATUS (QM.ORDERS)" not in statuses


def test_a_changed_host_key_is_refused_and_nothing_is_sent(doctor: LinuxDoctor, tmp_path: Path):
    other = paramiko.ECDSAKey.generate(bits=256)
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{doctor.fleet.ports[LINUX]} {other.get_name()} {other.get_base64()}\n")
    report = doctor.run(known_hosts=wrong)
    assert [(c.name, c.status) for c in report.checks] == [("SSH and host key", "fail")]
    assert "/etc/ssh/ssh_host_" in report.checks[0].fix and "host_key" in report.checks[0].fix
    assert len(doctor.fleet.service.received) == 0


def test_automatic_log_management_warns_that_mqjournal_only_watches(doctor: LinuxDoctor):
    qm = doctor.live.host.queue_managers["QMMANUAL"]
    with doctor.live.state():
        qm.log_management = LogManagement.AUTOMATIC
    report = doctor.run()
    check = _check(report, "log management (QMMANUAL)")
    assert report.ready and check.status == "warn"
    assert "only watches" in check.detail and "LogManagement=Archive" in check.fix


@pytest.mark.parametrize("doctor", [_linux(media_images="imgsched")], indirect=True)
def test_images_left_to_the_queue_manager_warn_that_medialog_will_not_move_without_imgsched_auto(
    doctor: LinuxDoctor,
):
    with doctor.live.state() as host:
        host.queue_managers["QM.ORDERS"].img_sched = "AUTO"
    report = doctor.run()
    assert _check(report, "media images (QM.ORDERS)").status == "pass"
    manual = _check(report, "media images (QMMANUAL)")
    assert report.ready and manual.status == "warn"
    assert "IMGSCHED(MANUAL)" in manual.detail and "MEDIALOG will not move" in manual.detail
    assert "ALTER QMGR IMGSCHED(AUTO)" in manual.fix and "rcdmqimg" in manual.fix
    mqsc = [r["input"] for r in doctor.sent() if "runmqsc" in r["command"]]
    assert mqsc.count("DISPLAY QMGR IMGSCHED\n") == 2


def test_a_log_file_system_short_of_room_warns_and_says_what_fills_it(doctor: LinuxDoctor):
    from mqjournal.linuxsim.commands import log_file_system_used

    with doctor.live.state() as host:
        # Room for two more extents of 256 KiB: fewer than the log's 3 + 2, and over 90 % used.
        host.log_file_system.size_bytes = log_file_system_used(host) + 2 * 64 * 4096
    report = doctor.run()
    check = _check(report, "log file system (QM.ORDERS)")
    assert report.ready and check.status == "warn", _failed(report)
    assert "512.0 KB free" in check.detail and "90% used or more" in check.detail and "3 + 2 extents" in check.detail
    live = doctor.live.host.queue_managers["QM.ORDERS"]
    assert check.fix.startswith(f"what fills it: the log's extents (its {len(live.extents)} in /var/mqm/log/QM!ORDERS")
    assert f"RECLOG S{live.restart:07d}.LOG" in check.fix and "until MQ is told they are archived" in check.fix
    assert "in Manual mode MQ removes none" in _check(report, "log file system (QMMANUAL)").fix


@pytest.mark.parametrize("doctor", [_linux(mq_bin="/opt/mqm94/bin")], indirect=True)
def test_an_mq_bin_without_the_control_commands_fails_naming_the_fleet_files_mq_bin(doctor: LinuxDoctor):
    report = doctor.run()
    failed = _failed(report)
    assert set(failed) == {"MQ control commands (/opt/mqm94/bin)"}, failed
    assert "No such file or directory" in failed["MQ control commands (/opt/mqm94/bin)"]
    assert "mq_bin in the fleet file" in failed["MQ control commands (/opt/mqm94/bin)"]


def test_a_queue_manager_the_host_does_not_have_is_named(tmp_path: Path):
    host = _linux()
    with serve(_fleet(tmp_path, host)) as fleet:
        doctor = LinuxDoctor(fleet, tmp_path)
        (linux,) = fleet.config.linux_hosts
        typo = linux.model_copy(update={"queue_managers": [LinuxQueueManagerConfig(name="qm.orders")]})
        connect = ssh_connector(
            address="127.0.0.1",
            port=fleet.ports[LINUX],
            user=USER,
            key=fleet.service.client_key,
            known_hosts=fleet.config.known_hosts,
        )
        report = check_linux_host(fleet.config, typo, connect=connect, audit=AuditLog(doctor.audit_path))
    failed = _failed(report)
    assert set(failed) == {"queue manager qm.orders"}, failed
    assert (
        "QM.ORDERS, QMMANUAL" in failed["queue manager qm.orders"]
        and "case-sensitive" in failed["queue manager qm.orders"]
    )


# --- `mqjournal doctor` on a mixed fleet, and the maintenance run's preflight ---------------------------------------


def _mixed(tmp_path: Path) -> FleetConfig:
    from datetime import UTC, datetime, timedelta

    from tests.doctor.test_doctor import _host

    # The partition's clock at the controller's time after its warm-up: the IBM i doctor checks the skew.
    start = datetime.now(UTC) - timedelta(hours=3)
    return FleetConfig(
        state_dir=tmp_path / "state", start=start, warmup_hours=3, hosts=[_host()], linux_hosts=[_linux()]
    ).resolved(tmp_path)


def test_mqjournal_doctor_checks_the_linux_hosts_of_a_mixed_fleet_and_exits_3_when_one_is_not_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    from mqjournal.cli import main

    monkeypatch.setenv("MQJOURNAL_DATA_DIR", str(tmp_path / "data"))
    with serve(_mixed(tmp_path)) as fleet:
        data = fleet.config.model_dump(mode="json")
        for host in data["hosts"] + data["linux_hosts"]:
            host["port"] = fleet.ports[host["name"]]
        fleet_file = tmp_path / "fleet.json"
        fleet_file.write_text(json.dumps(data))
        args = ["doctor", "--fleet", str(fleet_file), "--audit", str(tmp_path / "audit.jsonl")]
        ready = main([*args, "--host", LINUX])
        ready_out = capsys.readouterr().out
        with fleet.service.linux_hosts[LINUX].state() as host:
            host.mqm_members.remove(USER)
        both = main(args)
        both_out = capsys.readouterr().out
    assert ready == 0, ready_out
    assert f"== {LINUX}: READY" in ready_out and "== ibmi1" not in ready_out
    assert both == 3, both_out
    assert "== ibmi1: READY" in both_out and f"== {LINUX}: NOT READY" in both_out
    assert f"usermod -a -G mqm {USER}" in both_out and "Traceback" not in both_out


def _airflow_settings(fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mqjournal.airflow.connections import conn_id_for, fleet_connections
    from mqjournal.airflow.settings import Settings

    connection = fleet_connections(fleet.config, fleet.service.host_keys, fleet.ports)[conn_id_for(LINUX)]
    assert connection["description"] == f"Linux MQ host {LINUX}" and connection["login"] == USER
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id_for(LINUX).upper()}", json.dumps(connection))
    (host,) = fleet.config.linux_hosts
    entry = host.model_dump(mode="json", exclude={"faults"}) | {"platform": "linux", "port": fleet.ports[LINUX]}
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps({"hosts": [entry]}))
    data = tmp_path / "data"
    return Settings(
        fleet_file=fleet_file,
        data_dir=data,
        catalog_url=f"sqlite:///{data / 'catalog.db'}",
        spark_app=Path("unused"),
        spark_conn_id="spark_default",
        schedule=None,
    )


def test_the_maintenance_preflight_checks_a_linux_host_never_collected(doctor: LinuxDoctor, tmp_path, monkeypatch):
    from mqjournal.airflow import maintenance as steps

    settings = _airflow_settings(doctor.fleet, tmp_path, monkeypatch)
    result = steps.preflight(settings, [], "QGPL")
    assert result.to_xcom() == {"checked": [LINUX], "ready": True}
    assert "id -G -n" in [e.command for e in doctor.fleet.service.received.entries()]


def test_a_linux_host_that_is_not_ready_fails_the_maintenance_run_naming_it(
    doctor: LinuxDoctor, tmp_path, monkeypatch, caplog, capfd
):
    from mqjournal.airflow import maintenance as steps

    with doctor.live.state() as host:
        host.missing_programs.append("sha256sum")
    settings = _airflow_settings(doctor.fleet, tmp_path, monkeypatch)
    caplog.set_level(logging.INFO, logger="mqjournal")  # the doctor's table is logged at INFO, whatever ran before
    with pytest.raises(RuntimeError, match=f"hosts not ready for mqjournal: {LINUX}"):
        steps.preflight(settings, [], "QGPL")
    # Where the log goes depends on whether Airflow's logging was set up in this process (it writes to the standard
    # output then): the table is in one or the other.
    assert "none counts as archived" in caplog.text + capfd.readouterr().out


def test_a_linux_host_collected_before_is_not_checked_again(doctor: LinuxDoctor, tmp_path, monkeypatch):
    from mqjournal.airflow import maintenance as steps
    from mqjournal.linuxmq.snapshot import write_linux_snapshots
    from tests.linuxmq.test_plan import snap

    settings = _airflow_settings(doctor.fleet, tmp_path, monkeypatch)
    write_linux_snapshots(settings.linux_snapshot_dir("earlier") / f"{LINUX}.jsonl", [snap(host=LINUX)])
    result = steps.preflight(settings, [], "QGPL")
    assert result.to_xcom() == {"checked": [], "ready": True} and len(doctor.fleet.service.received) == 0
