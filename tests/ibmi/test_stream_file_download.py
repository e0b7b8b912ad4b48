"""A partition whose sftp-server may not read /QSYS.LIB save files (#29): the doctor finds that a stream file copy
(PASE cp, as ansible's ibmi_fetch does) downloads, records it for the host, and the copy step then downloads through
the stream file, verified against the host's digest, the stream file removed, every command audited."""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import SaveFileCopy
from mqjournal.doctor import check_host
from mqjournal.errors import InvalidName
from mqjournal.fleet import HostConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import AuditLog, read_audit, unexplained_intents
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.hostdigest import CopyNotVouched
from mqjournal.ibmi.routeprobe import PROBE_FILE, find_route
from mqjournal.ibmi.transfer import SaveFileTransferError, download_save_file
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.names import SCRATCH_DIRECTORY
from mqjournal.sim import savfdata
from mqjournal.sim.server import TransferFault
from tests.conftest import SimFleet
from tests.ibmi.rcvsav import connector, rcvsav_copy, saved_session


@pytest.fixture
def session(sim_fleet: SimFleet, tmp_path) -> Iterator[IbmiSession]:
    """TEST's detached receivers saved into QGPL/RCVSAV, on a partition whose sftp-server refuses QSYS.LIB reads."""
    session = saved_session(sim_fleet, tmp_path)
    with sim_fleet.host().lock:
        sim_fleet.host().partition.faults.qsys_sftp_read_refused = True
    yield session
    session.close()


@pytest.fixture
def meta(sim_fleet: SimFleet) -> SaveFileCopy:
    return rcvsav_copy(sim_fleet, "manual__2025-01-01T00:00:00+00:00")


def served(fleet: SimFleet) -> bytes:
    with fleet.host().lock:
        return savfdata.encode(fleet.host().partition.save_files["QGPL/RCVSAV"])


def stream_files(fleet: SimFleet) -> list[str]:
    with fleet.host().lock:
        return sorted(fleet.host().partition.stream_files)


def audited(session: IbmiSession) -> list[dict]:
    assert session.audit.path is not None
    return list(read_audit(session.audit.path))


def test_direct_download_fails_where_sftp_may_not_read_qsys_lib(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    store = BackupStore(tmp_path / "backups")
    with pytest.raises(SaveFileTransferError, match=r"refused the download of /QSYS\.LIB/QGPL\.LIB/RCVSAV\.FILE"):
        download_save_file(session, "QGPL", "RCVSAV", store, meta, via="direct")
    assert store.list_objects() == []


def test_doctor_finds_the_stream_file_route_and_the_copy_step_uses_it(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    routes = DownloadRoutes(tmp_path / "data")
    host = next(h for h in sim_fleet.config.hosts if h.name == "ibmi1")
    report = check_host(sim_fleet.config, host, session=session, routes=routes)
    check = next(c for c in report.checks if c.name == "downloading a save file")
    assert check.status == "pass" and check.detail.startswith("stream_file:"), check
    assert routes.route("ibmi1") == "stream_file"
    with sim_fleet.host().lock:
        assert f"QGPL/{PROBE_FILE}" not in sim_fleet.host().partition.save_files  # the scratch save file is gone
    assert stream_files(sim_fleet) == []

    store = BackupStore(tmp_path / "backups")
    stored = download_save_file(session, "QGPL", "RCVSAV", store, meta, via=routes.route("ibmi1"))
    assert stored.sha256 == hashlib.sha256(served(sim_fleet)).hexdigest() == stored.host_sha256
    assert stored.size_bytes == len(served(sim_fleet))
    assert stream_files(sim_fleet) == []  # removed in the finally
    sent = [r["command"] for r in audited(session) if "outcome" in r]
    scratch = commands.scratch_file_path("QGPL", "RCVSAV", meta.run_id, SCRATCH_DIRECTORY)
    assert any(c.endswith(f"cp /QSYS.LIB/QGPL.LIB/RCVSAV.FILE {scratch}") for c in sent), sent
    assert f"SFTP GET {scratch}" in sent and f"rm -f {scratch}" in sent
    assert any(
        c.startswith(f"SYSTEM CRTSAVF FILE(QGPL/{PROBE_FILE})") or f"CRTSAVF FILE(QGPL/{PROBE_FILE})" in c for c in sent
    )
    assert any(f"DLTF FILE(QGPL/{PROBE_FILE})" in c for c in sent)
    assert session.audit.path is not None and unexplained_intents(session.audit.path, "ibmi1") == []


def test_a_direct_partition_is_recorded_direct(sim_fleet: SimFleet, session: IbmiSession, tmp_path) -> None:
    with sim_fleet.host().lock:
        sim_fleet.host().partition.faults.qsys_sftp_read_refused = False
    found = find_route(session, "QGPL")
    assert found.route == "direct"


def test_a_damaged_download_through_the_stream_file_leaves_neither_copy_nor_stream_file(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault(r"/tmp/mqjournal/.*RCVSAV", "get", after_bytes=len(served(sim_fleet)) // 2, corrupt=True)
    )
    store = BackupStore(tmp_path / "backups")
    with pytest.raises(CopyNotVouched):
        download_save_file(session, "QGPL", "RCVSAV", store, meta, via="stream_file")
    assert store.list_objects() == []
    assert stream_files(sim_fleet) == []
    assert session.audit.path is not None and unexplained_intents(session.audit.path, "ibmi1") == []


def test_a_save_file_changed_before_its_copy_is_not_downloaded(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    """The stream file's digest must be the save file's: another save in between makes it someone else's bytes."""
    from mqjournal.ibmi import streamcopy
    from mqjournal.ibmi.hostdigest import NotOurBytes

    store = BackupStore(tmp_path / "backups")
    with pytest.raises(NotOurBytes, match="changed between its digest and its copy"):
        streamcopy.through_stream_file(
            session, "QGPL", "RCVSAV", "run1", "0" * 64, lambda scratch: scratch, by="stream_file"
        )
    assert store.list_objects() == [] and stream_files(sim_fleet) == []


def test_scratch_paths_are_built_from_validated_names_only() -> None:
    path = commands.scratch_file_path("QGPL", "RCVSAV", "run'; rm -rf /", SCRATCH_DIRECTORY)
    assert path.startswith("/tmp/mqjournal/QGPL.RCVSAV.") and path.endswith(".savf") and "'" not in path
    with pytest.raises(InvalidName):
        commands.scratch_file_path("QGPL", "RCV;SAV", "run1", SCRATCH_DIRECTORY)
    with pytest.raises(InvalidName):
        commands.remove_stream_file("/tmp/mqjournal/../../etc/passwd")


def test_a_probe_file_left_by_an_earlier_doctor_warns_with_the_dltf_and_records_nothing(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
) -> None:
    """A doctor stopped mid-probe leaves QGPL/MQJRTPROBE: the next one cannot make its scratch save file, learns
    nothing of the host, deletes nothing it did not make, and says how to clear it; the host stays ready."""
    assert (
        session.run(commands.create_save_file("QGPL", PROBE_FILE, "mqjournal doctor: download probe")).exit_status == 0
    )
    routes = DownloadRoutes(tmp_path / "data")
    host = next(h for h in sim_fleet.config.hosts if h.name == "ibmi1")
    report = check_host(sim_fleet.config, host, session=session, routes=routes)
    check = next(c for c in report.checks if c.name == "downloading a save file")
    assert check.status == "warn" and "could not be created" in check.detail, check
    assert f"DLTF FILE(QGPL/{PROBE_FILE})" in check.fix
    assert not routes.path.exists()
    with sim_fleet.host().lock:
        assert f"QGPL/{PROBE_FILE}" in sim_fleet.host().partition.save_files  # not the doctor's to delete


def test_a_library_save_on_a_host_recorded_stream_file_downloads_both_parts_through_the_stream_file(
    sim_fleet: SimFleet, executor, tmp_path
) -> None:
    """SAVLIB's save file and its IFS part follow the host's recorded route, as the copy step does: each through a
    stream file, each copy verified against the host's digest, no stream file left behind."""
    from mqjournal.recovery.library_save import save_library

    routes = DownloadRoutes(tmp_path / "data")
    routes.record("ibmi1", "stream_file", datetime.now(UTC), "test: sftp-server may not read QSYS.LIB")
    with sim_fleet.host().lock:
        sim_fleet.host().partition.faults.qsys_sftp_read_refused = True

    result = save_library(
        executor.session,
        executor.target,
        host=executor.host,
        tz=executor.tz,
        catalog=executor.catalog,
        save_library="QGPL",
        run_id="lib1",
        store=executor.store,
        routes=routes,
    )

    assert result.not_copied == "" and result.stored is not None and result.directory_stored is not None
    record = result.record
    for stored, name in ((result.stored, record.save_file), (result.directory_stored, record.directory_save_file)):
        with sim_fleet.host().lock:
            served = savfdata.encode(sim_fleet.host().partition.save_files[f"QGPL/{name}"])
        assert stored.sha256 == stored.host_sha256 == hashlib.sha256(served).hexdigest()
        scratch = commands.scratch_file_path("QGPL", name, "lib1", SCRATCH_DIRECTORY)
        sent = [r["command"] for r in audited(executor.session) if "outcome" in r]
        assert any(c.endswith(f"cp /QSYS.LIB/QGPL.LIB/{name}.FILE {scratch}") for c in sent), sent
        assert f"SFTP GET {scratch}" in sent and f"SFTP GET /QSYS.LIB/QGPL.LIB/{name}.FILE" not in sent
    assert stream_files(sim_fleet) == []


SCRATCH = "/home/MQADMIN/mqjournal-scratch"


def test_the_stream_file_copy_goes_into_the_hosts_scratch_directory(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    """A host whose /tmp is small names another directory in the fleet file: the copy is made there (mkdir -p of
    the whole path), downloaded, verified and removed there."""
    elsewhere = IbmiSession(
        "ibmi1", sim_fleet.config.user, connector(sim_fleet), audit=session.audit, scratch_directory=SCRATCH
    )
    store = BackupStore(tmp_path / "backups")
    with elsewhere:
        stored = download_save_file(elsewhere, "QGPL", "RCVSAV", store, meta, via="stream_file")

    assert stored.sha256 == stored.host_sha256 == hashlib.sha256(served(sim_fleet)).hexdigest()
    scratch = commands.scratch_file_path("QGPL", "RCVSAV", meta.run_id, SCRATCH)
    assert scratch.startswith(SCRATCH + "/")
    sent = [r["command"] for r in audited(session) if "outcome" in r]
    assert f"umask 077 && mkdir -p {SCRATCH} && cp /QSYS.LIB/QGPL.LIB/RCVSAV.FILE {scratch}" in sent
    assert f"SFTP GET {scratch}" in sent and f"rm -f {scratch}" in sent
    assert stream_files(sim_fleet) == []


@pytest.mark.parametrize(
    "directory",
    ["tmp/mqjournal", "/", "/tmp/a;rm -rf /", "/tmp/$(id)", "/tmp/a b", "/tmp/../etc", "/QSYS.LIB/QGPL.LIB", "/tmp/'x"],
)
def test_a_scratch_directory_that_is_not_a_plain_absolute_ifs_path_is_refused_in_the_fleet_file(directory) -> None:
    with pytest.raises(ValidationError, match=r"scratch_directory[\s\S]*(IFS|QSYS\.LIB)[\s\S]*/tmp/mqjournal"):
        HostConfig(name="ibmi1", scratch_directory=directory)
    with pytest.raises(InvalidName):
        IbmiSession("ibmi1", "MQADMIN", lambda: None, audit=AuditLog(None), scratch_directory=directory)  # type: ignore[arg-type,return-value]  # never connects


def test_the_scratch_directory_defaults_to_tmp_mqjournal_and_is_kept_without_a_trailing_slash() -> None:
    assert HostConfig(name="ibmi1").scratch_directory == "/tmp/mqjournal"
    assert HostConfig(name="ibmi1", scratch_directory=SCRATCH + "/").scratch_directory == SCRATCH


def test_the_doctor_probes_through_the_hosts_scratch_directory_and_reports_it(sim_fleet: SimFleet, tmp_path) -> None:
    with sim_fleet.host().lock:
        sim_fleet.host().partition.faults.qsys_sftp_read_refused = True
    host = sim_fleet.config.host("ibmi1").model_copy(update={"scratch_directory": SCRATCH})
    audit = AuditLog(tmp_path / "audit.jsonl")
    routes = DownloadRoutes(tmp_path / "data")

    report = check_host(sim_fleet.config, host, connect=connector(sim_fleet), audit=audit, routes=routes)

    check = next(c for c in report.checks if c.name == "downloading a save file")
    assert check.status == "pass" and check.detail.startswith("stream_file:"), check
    assert f"scratch directory {SCRATCH}" in check.detail
    assert routes.route("ibmi1") == "stream_file"
    sent = [r["command"] for r in read_audit(tmp_path / "audit.jsonl") if "outcome" in r]
    assert any(f"mkdir -p {SCRATCH} && cp " in c for c in sent), sent
    assert stream_files(sim_fleet) == []


def test_where_pase_cp_is_refused_too_the_doctor_records_cpytostmf_and_the_copy_step_uses_it(
    sim_fleet: SimFleet, session: IbmiSession, meta: SaveFileCopy, tmp_path
) -> None:
    """IBM documents that CPYTOSTMF copies a save file to a stream file: where neither sftp-server nor PASE cp may
    read QSYS.LIB, the probe finds that route, and downloads then copy by CPYTOSTMF, verified by the host's digest."""
    with sim_fleet.host().lock:
        sim_fleet.host().partition.faults.qsys_pase_copy_refused = True
    routes = DownloadRoutes(tmp_path / "data")
    host = sim_fleet.config.host("ibmi1")

    report = check_host(sim_fleet.config, host, session=session, routes=routes)

    check = next(c for c in report.checks if c.name == "downloading a save file")
    assert check.status == "pass" and check.detail.startswith("cpytostmf:"), check
    assert "PASE cp" in check.detail and "Operation not supported" in check.detail
    assert routes.route("ibmi1") == "cpytostmf"
    store = BackupStore(tmp_path / "backups")
    stored = download_save_file(session, "QGPL", "RCVSAV", store, meta, via=routes.route("ibmi1"))
    assert stored.sha256 == stored.host_sha256 == hashlib.sha256(served(sim_fleet)).hexdigest()
    scratch = commands.scratch_file_path("QGPL", "RCVSAV", meta.run_id, SCRATCH_DIRECTORY)
    sent = [r["command"] for r in audited(session) if "outcome" in r]
    cl = f"CPYTOSTMF FROMMBR('/QSYS.LIB/QGPL.LIB/RCVSAV.FILE') TOSTMF('{scratch}') STMFOPT(*REPLACE)"
    assert f"system {shlex.quote(cl)}" in sent
    assert f"SFTP GET {scratch}" in sent and f"rm -f {scratch}" in sent
    assert stream_files(sim_fleet) == []
    assert session.audit.path is not None and unexplained_intents(session.audit.path, "ibmi1") == []


def test_where_no_copy_downloads_the_doctor_fails_and_records_nothing(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
) -> None:
    """CPYTOSTMF refused as IBM i refuses a copy (a diagnostic, then CPFA097): no route is recorded, and the check
    names each way that failed."""
    from mqjournal.sim.model import CommandFault

    probe = commands.save_file_path("QGPL", PROBE_FILE)
    with sim_fleet.host().lock:
        faults = sim_fleet.host().partition.faults
        faults.qsys_pase_copy_refused = True
        faults.commands.append(
            CommandFault(pattern="CPYTOSTMF", msg_id="CPFA097", tokens=[probe], diagnostics=[["CPFA09C", probe]])
        )
    routes = DownloadRoutes(tmp_path / "data")

    report = check_host(sim_fleet.config, sim_fleet.config.host("ibmi1"), session=session, routes=routes)

    check = next(c for c in report.checks if c.name == "downloading a save file")
    assert check.status == "fail" and "by CPYTOSTMF" in check.detail and "CPFA097" in check.detail, check
    assert "scratch_directory" in check.fix
    assert not routes.path.exists()
    assert stream_files(sim_fleet) == []
