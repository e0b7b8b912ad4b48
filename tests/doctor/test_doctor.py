"""`mqjournal doctor` on simulated partitions: ready ones pass, and each broken prerequisite is named, read only."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import paramiko
import pytest

from mqjournal.doctor import HostReport, render, run_doctor
from mqjournal.fleet import FleetConfig, HostConfig, QueueManagerConfig
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import ssh_connector
from mqjournal.sim.service import SimulatorService

# What the doctor may send: the login probe, SQL (through qsh or a bare db2), mqs.ini, and CHKOBJ.
READ_ONLY = re.compile(
    r"^(true|cat /QIBM/UserData/mqm/mqs\.ini|(/QOpenSys/usr/bin/qsh -c )?'?db2 .*|system 'CHKOBJ [^']*'"
    r"|/QOpenSys/(usr|pkgs)/bin/(openssl dgst -sha256 -r|sha256sum) /dev/null)$",
    re.S,
)


def _host(name: str = "ibmi1", **system) -> HostConfig:
    return HostConfig(
        name=name,
        port=0,
        utc_offset="+01:00",
        system=system,
        queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500)],
    )


class Doctor:
    def __init__(self, tmp_path: Path, hosts: list[HostConfig]) -> None:
        self.config = FleetConfig(state_dir=tmp_path / "state", start=datetime.now(UTC), hosts=hosts).resolved(tmp_path)
        self.service = SimulatorService(self.config)
        self.ports = self.service.start()
        self.audit = AuditLog(tmp_path / "audit.jsonl")

    def connector(self, name: str, known_hosts: Path | None = None):
        return ssh_connector(
            address="127.0.0.1",
            port=self.ports[name],
            user=self.config.user,
            key=self.service.client_key,
            known_hosts=known_hosts or self.config.known_hosts,
        )

    def run(self, *, save_library: str = "QGPL", known_hosts: Path | None = None) -> dict[str, HostReport]:
        connectors = {h.name: self.connector(h.name, known_hosts) for h in self.config.hosts}
        reports = run_doctor(self.config, connectors, audit=self.audit, save_library=save_library)
        print(render(reports))
        return {r.host: r for r in reports}

    def stop(self) -> None:
        self.service.stop()


@pytest.fixture
def doctor(tmp_path: Path, request) -> Iterator[Doctor]:
    hosts = getattr(request, "param", None) or [_host()]
    d = Doctor(tmp_path, hosts)
    try:
        yield d
    finally:
        d.stop()


def _failed(report: HostReport) -> dict[str, str]:
    return {c.name: f"{c.detail} | fix: {c.fix}" for c in report.checks if c.status == "fail"}


def test_a_ready_partition_passes_every_check(doctor: Doctor):
    report = doctor.run()["ibmi1"]
    assert report.ready, _failed(report)
    names = {c.name for c in report.checks}
    assert {
        "SSH and host key",
        "SQL runner (qsh)",
        "clock",
        "IBM i release and SQL services",
        "user profile",
        "authority: RCDMQMIMG, ENDMQM, STRMQM",
        "save library QGPL",
        "MQ installed",
        "queue manager TEST (QMTEST)",
        "ASP usage (TEST)",
    } <= names


def test_the_doctor_only_reads(doctor: Doctor):
    doctor.run()
    sent = [e.command for e in doctor.service.received.entries()]
    assert sent and all(READ_ONLY.match(c) for c in sent), [c for c in sent if not READ_ONLY.match(c)]
    assert not any(
        re.search(r"\b(CRT|DLT|CHG|SAV|RST|GRT|RVK|RCD|STR|END)[A-Z]*\b", c.split("CHKOBJ")[0])
        for c in sent
        if c.startswith("system")
    )


def _withhold(library: str, objtype: str, *authorities: str, name: str = "*ALL") -> dict:
    return {"library": library, "name": name, "objtype": objtype, "authorities": list(authorities)}


# Each prerequisite broken in turn: (fleet system: settings, the check that must fail, a word its fix must carry).
BROKEN = {
    "old release": ({"release": "7.3"}, "IBM i release and SQL services", "SF99950"),
    "not an MQ administrator": ({"group_profile": None}, "authority: RCDMQMIMG, ENDMQM, STRMQM", "GRPPRF(QMQMADM)"),
    "no *OBJEXIST to receivers": (
        {"withheld_authorities": [_withhold("QMTEST", "*JRNRCV", "*OBJEXIST", name="AMQA*")]},
        "authority: DLTJRNRCV (TEST)",
        "GRTOBJAUT OBJ(QMTEST/AMQA*)",
    ),
    "no *SAVSYS nor *OBJEXIST": (
        {"special_authorities": ["*JOBCTL"], "withheld_authorities": [_withhold("QMTEST", "*JRNRCV", "*OBJEXIST")]},
        "authority: SAVOBJ, RSTOBJ (TEST)",
        "*SAVSYS",
        {"authority: DLTJRNRCV (TEST)"},
    ),
    "no *USE to SAVOBJ": (
        {"withheld_authorities": [_withhold("QSYS", "*CMD", "*USE", name="SAVOBJ")]},
        "authority: commands",
        "GRTOBJAUT OBJ(QSYS/SAVOBJ) OBJTYPE(*CMD)",
    ),
    "no *ADD to the save library": (
        {"withheld_authorities": [_withhold("QGPL", "*LIB", "*ADD")]},
        "save library QGPL",
        "GRTOBJAUT OBJ(QGPL) OBJTYPE(*LIB)",
    ),
    "no *EXECUTE to the save library (SAVE_FILE_OBJECTS needs *USE)": (
        {"withheld_authorities": [_withhold("QGPL", "*LIB", "*EXECUTE")]},
        "save library QGPL",
        "OBJTYPE(*LIB) USER(MQADMIN) AUT(*OBJOPR *READ *EXECUTE *ADD)",
    ),
    "no AMQJRNINF": (
        {"withheld_authorities": [_withhold("QMTEST", "*USRSPC", "*USE")]},
        "authority: AMQJRNINF (TEST)",
        "AMQJRNINF",
    ),
}


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_each_broken_prerequisite_is_named_with_its_fix(tmp_path: Path, case: str):
    system, check, fix_word, *also = BROKEN[case]
    doctor = Doctor(tmp_path, [_host(**system)])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    failed = {c.name: c for c in report.checks if c.status == "fail"}
    assert not report.ready and check in failed, _failed(report)
    assert fix_word in failed[check].fix
    assert set(failed) == {check, *(also[0] if also else ())}, _failed(report)  # nothing else is blamed


def test_a_host_without_a_digest_program_is_not_ready_and_names_what_to_install(tmp_path: Path):
    doctor = Doctor(tmp_path, [_host(digest_programs=[])])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    failed = _failed(report)
    assert set(failed) == {"SHA-256 of a save file on the host"}, failed
    assert "no receiver is deleted" in failed["SHA-256 of a save file on the host"]
    assert "fix: install 5733-SC1" in failed["SHA-256 of a save file on the host"]


def test_a_host_with_only_the_rpm_sha256sum_passes_the_digest_check(tmp_path: Path):
    doctor = Doctor(tmp_path, [_host(digest_programs=["/QOpenSys/pkgs/bin/sha256sum"])])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    (check,) = [c for c in report.checks if c.name == "SHA-256 of a save file on the host"]
    assert report.ready and check.status == "pass" and "/QOpenSys/pkgs/bin/sha256sum" in check.detail


def test_a_clock_two_hours_ahead_is_a_warning_naming_ntp_and_the_host_stays_ready(tmp_path: Path):
    # Needed times are judged on the partition's own clock (planning rules 2.4): a skew shifts retention ages only.
    doctor = Doctor(tmp_path, [_host(clock_offset_seconds=7200)])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    clock = next(c for c in report.checks if c.name == "clock")
    assert report.ready and clock.status == "warn"
    assert "ahead" in clock.detail and "NTP" in clock.fix


def test_a_missing_save_library_is_named_with_crtlib(doctor: Doctor):
    report = doctor.run(save_library="MQSAVE")["ibmi1"]
    failed = _failed(report)
    assert set(failed) == {"save library MQSAVE"} and "CRTLIB LIB(MQSAVE)" in failed["save library MQSAVE"]


def test_a_save_library_an_admin_created_passes(tmp_path: Path):
    doctor = Doctor(tmp_path, [_host(libraries=["MQSAVE"])])
    try:
        assert doctor.run(save_library="MQSAVE")["ibmi1"].ready
    finally:
        doctor.stop()


def test_a_bare_db2_without_the_link_fails_the_sql_runner(tmp_path: Path):
    host = _host().model_copy(update={"sql_runner": "db2"})
    doctor = Doctor(tmp_path, [host])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    failed = {c.name: c for c in report.checks if c.status == "fail"}
    assert set(failed) == {"SQL runner (db2)"} and "qsh" in failed["SQL runner (db2)"].fix


def test_a_changed_host_key_is_refused_and_nothing_else_is_sent(doctor: Doctor, tmp_path: Path):
    other = paramiko.ECDSAKey.generate(bits=256)
    wrong = tmp_path / "wrong_known_hosts"
    wrong.write_text(f"[127.0.0.1]:{doctor.ports['ibmi1']} {other.get_name()} {other.get_base64()}\n")
    report = doctor.run(known_hosts=wrong)["ibmi1"]
    assert [(c.name, c.status) for c in report.checks] == [("SSH and host key", "fail")]
    assert "impostor" in report.checks[0].detail and "host_key" in report.checks[0].fix
    assert len(doctor.service.received) == 0


def test_the_report_is_a_table_per_host_without_tracebacks(tmp_path: Path):
    doctor = Doctor(tmp_path, [_host("ibmi1"), _host("ibmi2", release="7.3")])
    try:
        reports = doctor.run()
    finally:
        doctor.stop()
    text = render(list(reports.values()))
    assert "== ibmi1: READY" in text and "== ibmi2: NOT READY" in text and "Traceback" not in text
    assert "fix: install the named release or Db2 PTF group" in text


@pytest.mark.parametrize(
    "withheld",
    [
        _withhold("QMTEST", "*JRNRCV", "*OBJMGT", name="AMQA*"),
        _withhold("QMTEST", "*JRN", "*OBJMGT", name="AMQAJRN"),
    ],
    ids=["receivers", "journal"],
)
def test_no_objmgt_for_a_recovery_of_restored_receivers_warns_with_the_grant_and_blocks_nothing(tmp_path, withheld):
    """ASSOCIATE_JOURNAL_RECEIVER needs *OBJMGT to the receivers and *OBJOPR *OBJMGT to the journal; only a recovery
    needs it, so the host stays ready for maintenance."""
    doctor = Doctor(tmp_path, [_host(withheld_authorities=[withheld])])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    (check,) = [c for c in report.checks if c.name == "authority: restored receivers (TEST)"]
    assert report.ready and check.status == "warn", _failed(report)
    assert "ASSOCIATE_JOURNAL_RECEIVER" in check.detail
    target = "QMTEST/AMQA*) OBJTYPE(*JRNRCV)" if withheld["objtype"] == "*JRNRCV" else "QMTEST/AMQAJRN) OBJTYPE(*JRN)"
    assert f"GRTOBJAUT OBJ({target}" in check.fix and "*OBJMGT" in check.fix


MESSAGE_FORMATS = "message formats (AMQ7460, AMQ7462, AMQ7432, AMQ7472, CPI70E3)"


def test_the_doctor_shows_the_declared_message_formats_and_that_they_decode(tmp_path):
    doctor = Doctor(tmp_path, [_host()])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    (check,) = [c for c in report.checks if c.name == MESSAGE_FORMATS]
    assert check.status == "pass", check
    assert "every one decodes by its declared layout" in check.detail and "AMQ7460 (" in check.detail


def test_a_declared_message_format_mqjournal_cannot_read_warns_with_the_dspmsgd_to_run(tmp_path):
    """AMQ7460's time declared as characters: its messages will not decode, so they move no recovery point. The
    admin learns it before the first run, with the command that shows the format; the host stays ready."""
    unreadable = {"AMQ7460": "(*BIN 4) (*BIN 4) (*CHAR 26) (*CHAR 10) (*CHAR 10) (*CHAR 48)"}
    doctor = Doctor(tmp_path, [_host(message_formats=unreadable)])
    try:
        report = doctor.run()["ibmi1"]
    finally:
        doctor.stop()
    (check,) = [c for c in report.checks if c.name == MESSAGE_FORMATS]
    assert report.ready and check.status == "warn", check
    assert (
        "AMQ7460: &3 (at) is declared *CHAR 26" in check.detail and "AMQ7462" not in check.detail.split(" (declared")[0]
    )
    assert "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)" in check.fix


def test_asp_usage_is_written_in_the_units_of_every_other_size(doctor: Doctor):
    """GB as the fleet view, the gate and the reports write it (mqjournal.sizefmt), not GiB: one number per ASP."""
    (asp,) = [c for c in doctor.run()["ibmi1"].checks if c.name == "ASP usage (TEST)"]
    assert re.fullmatch(r"ASP \d+: \d+% used, \d+\.\d [KMGT]B free of \d+\.\d [KMGT]B", asp.detail), asp.detail
