"""SFTP of save files on the simulator, over real SSH with paramiko's SFTPClient (host keys verified), as mqjournal's
backup store will copy them: download /QSYS.LIB/<LIB>.LIB/<NAME>.FILE after SAVOBJ; upload into a save file made
by CRTSAVF, then RSTOBJ from it."""

from __future__ import annotations

import io

import paramiko
import pytest

from mqjournal.sim import savfdata
from mqjournal.sim.model import Status, WithheldAuthority
from mqjournal.sim.server import TransferFault
from tests.conftest import Shell, SimFleet
from tests.sim.savefiles import SAVF, TARGET, detached, download, ok, upload


def save_file(fleet: SimFleet, name: str):
    with fleet.host().lock:
        return fleet.host().partition.save_files[f"QGPL/{name}"].model_copy(deep=True)


def withhold(fleet: SimFleet, **rule: object) -> None:
    with fleet.host().state() as partition:
        partition.user_profile.withheld.append(WithheldAuthority.model_validate(rule))


# --- download ---------------------------------------------------------------------------------------------------


def test_a_save_file_downloads_as_the_whole_save_it_holds(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    data = download(sftp)
    assert sftp.stat(SAVF).st_size == len(data) > 0
    assert len(data) % savfdata.RECORD_BYTES == 0  # IBM i's 528-byte save file records
    assert savfdata.decode(data) == savfdata.SaveFileData.of(save_file(sim_fleet, "RCVSAV"))
    saved = [o.receiver.name for o in savfdata.decode(data).objects]
    assert saved == detached(sim_fleet)


def test_a_download_is_the_same_bytes_every_time(sftp: paramiko.SFTPClient):
    assert download(sftp) == download(sftp)


def test_save_file_paths_are_not_case_sensitive(sftp: paramiko.SFTPClient):
    assert download(sftp, SAVF.lower()) == download(sftp)


def test_an_empty_save_file_is_zero_bytes(shell: Shell, sftp: paramiko.SFTPClient):
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    assert sftp.stat(TARGET).st_size == 0
    assert download(sftp, TARGET) == b""


def test_a_library_lists_its_save_files_and_its_other_objects(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    assert "RCVSAV.FILE" in sftp.listdir("/QSYS.LIB/QGPL.LIB")
    listed = sftp.listdir("/QSYS.LIB/QMTEST.LIB")
    assert {f"{name}.JRNRCV" for name in detached(sim_fleet)} <= set(listed)
    assert {"AMQAJRN.JRN", "AMQJRNINF.USRSPC"} <= set(listed)
    assert {"QGPL.LIB", "QMTEST.LIB"} <= set(sftp.listdir("/QSYS.LIB"))


def test_a_journal_receiver_is_listed_but_cannot_be_read(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    with pytest.raises(OSError):
        download(sftp, f"/QSYS.LIB/QMTEST.LIB/{detached(sim_fleet)[0]}.JRNRCV")


def test_a_missing_save_file_is_no_such_file(sftp: paramiko.SFTPClient):
    with pytest.raises(FileNotFoundError):
        sftp.stat("/QSYS.LIB/QGPL.LIB/NOSUCH.FILE")
    with pytest.raises(FileNotFoundError):
        download(sftp, "/QSYS.LIB/NOLIB.LIB/RCVSAV.FILE")


# --- upload -----------------------------------------------------------------------------------------------------


def test_an_upload_into_a_crtsavf_save_file_restores_its_receivers_with_rstobj(
    sim_fleet: SimFleet, shell: Shell, sftp: paramiko.SFTPClient
):
    data = download(sftp)
    oldest = detached(sim_fleet)[0]
    ok(shell.cl(f"DLTJRNRCV JRNRCV(QMTEST/{oldest}) DLTOPT(*IGNINQMSG)"))
    ok(shell.cl("DLTF FILE(QGPL/RCVSAV)"))  # the host's copy is gone: only the downloaded bytes are left
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))

    upload(sftp, data)

    assert download(sftp, TARGET) == data  # the bytes a store checksummed are the bytes the host now holds
    ok(shell.cl(f"RSTOBJ OBJ({oldest}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RESTORE)"))
    with sim_fleet.host().lock:
        restored = sim_fleet.host().partition.receivers[f"QMTEST/{oldest}"]
    assert restored.status is Status.SAVED


def test_an_upload_to_a_save_file_that_does_not_exist_is_no_such_file(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    with pytest.raises(FileNotFoundError):
        upload(sftp, download(sftp), "/QSYS.LIB/QGPL.LIB/NOSUCH.FILE")
    with sim_fleet.host().lock:
        assert "QGPL/NOSUCH" not in sim_fleet.host().partition.save_files  # sftp never creates a save file


def test_an_upload_into_a_save_file_that_holds_a_save_fails_and_changes_nothing(
    sim_fleet: SimFleet, shell: Shell, sftp: paramiko.SFTPClient
):
    before = save_file(sim_fleet, "RCVSAV")
    with pytest.raises(OSError):
        upload(sftp, download(sftp), SAVF)
    assert save_file(sim_fleet, "RCVSAV") == before


def test_bytes_that_are_not_a_save_file_are_refused_and_the_save_file_stays_empty(
    sim_fleet: SimFleet, shell: Shell, sftp: paramiko.SFTPClient
):
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    with pytest.raises(OSError):
        upload(sftp, b"PK\x03\x04 not a save file" * 100)
    assert save_file(sim_fleet, "RESTORE").empty
    status, _, err = shell.cl("RSTOBJ OBJ(*ALL) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RESTORE)")
    assert status != 0 and "CPF3780" in err


def test_a_changed_byte_in_an_upload_is_refused(sim_fleet: SimFleet, shell: Shell, sftp: paramiko.SFTPClient):
    data = bytearray(download(sftp))
    data[len(data) // 2] ^= 0x01
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    with pytest.raises(OSError):
        upload(sftp, bytes(data))
    assert save_file(sim_fleet, "RESTORE").empty


def test_nothing_but_save_files_can_be_written_or_removed(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    with pytest.raises(PermissionError):
        upload(sftp, b"x", f"/QSYS.LIB/QMTEST.LIB/{detached(sim_fleet)[0]}.JRNRCV")
    with pytest.raises(PermissionError):
        sftp.remove(SAVF)
    with pytest.raises(PermissionError):
        sftp.mkdir("/QSYS.LIB/NEWLIB.LIB")


# --- authority --------------------------------------------------------------------------------------------------


def test_without_read_authority_to_the_save_file_a_download_is_permission_denied(
    sim_fleet: SimFleet, sftp: paramiko.SFTPClient
):
    withhold(sim_fleet, library="QGPL", name="RCVSAV", objtype="*FILE", authorities=["*READ"])
    with pytest.raises(PermissionError):
        download(sftp)


def test_without_execute_authority_to_the_library_nothing_in_it_can_be_reached(
    sim_fleet: SimFleet, sftp: paramiko.SFTPClient
):
    withhold(sim_fleet, library="QGPL", objtype="*LIB", authorities=["*EXECUTE"])
    with pytest.raises(PermissionError):
        sftp.stat(SAVF)
    with pytest.raises(PermissionError):
        download(sftp)


def test_an_upload_needs_rwx_data_authority_to_the_save_file(
    sim_fleet: SimFleet, shell: Shell, sftp: paramiko.SFTPClient
):
    data = download(sftp)
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    withhold(sim_fleet, library="QGPL", name="RESTORE", objtype="*FILE", authorities=["*ADD"])
    with pytest.raises(PermissionError):
        upload(sftp, data)
    assert save_file(sim_fleet, "RESTORE").empty


def test_all_object_special_authority_passes(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    withhold(sim_fleet, library="QGPL", name="RCVSAV", objtype="*FILE", authorities=["*ALL"])
    with sim_fleet.host().state() as partition:
        partition.user_profile.special_authorities.append("*ALLOBJ")
    assert download(sftp)


# --- faults and the transfer log --------------------------------------------------------------------------------


def test_a_download_dropped_mid_file_is_seen_by_the_client(sim_fleet: SimFleet, shell: Shell):
    sftp = sim_fleet.connect().client.open_sftp()
    sftp.get_channel().settimeout(10)  # type: ignore[union-attr]
    size = sftp.stat(SAVF).st_size
    assert size is not None and size > savfdata.RECORD_BYTES
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RCVSAV", direction="get", after_bytes=savfdata.RECORD_BYTES)
    )
    received = io.BytesIO()
    with pytest.raises((OSError, EOFError, paramiko.SSHException)):
        sftp.getfo(SAVF, received)
    assert len(received.getvalue()) < size
    get = [e for e in sim_fleet.service.transfers.entries() if e.command == f"SFTP GET {SAVF}"]
    assert get[-1].state == "dropped" and get[-1].fault == "transfer_fault"
    assert not sim_fleet.service.faults["ibmi1"].transfers  # spent: the next download is whole
    assert len(download(shell.client.open_sftp())) == size


def test_an_upload_dropped_mid_file_leaves_the_save_file_empty(sim_fleet: SimFleet, shell: Shell):
    data = download(shell.client.open_sftp())
    ok(shell.cl("CRTSAVF FILE(QGPL/RESTORE)"))
    sftp = sim_fleet.connect().client.open_sftp()
    sftp.get_channel().settimeout(10)  # type: ignore[union-attr]
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RESTORE", direction="put", after_bytes=len(data) // 2)
    )
    with pytest.raises((OSError, EOFError, paramiko.SSHException)):
        upload(sftp, data)
    assert save_file(sim_fleet, "RESTORE").empty
    assert shell.client.open_sftp().stat(TARGET).st_size == 0  # what a client checking the size sees
    put = [e for e in sim_fleet.service.transfers.entries() if e.command == f"SFTP PUT {TARGET}"]
    assert put[-1].state == "dropped"


def test_every_sftp_request_is_logged_apart_from_the_command_lines(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    commands_before = len(sim_fleet.service.received)
    sftp.listdir("/QSYS.LIB/QGPL.LIB")
    download(sftp)
    with pytest.raises(FileNotFoundError):
        sftp.stat("/QSYS.LIB/QGPL.LIB/NOSUCH.FILE")
    logged = [(e.command, e.state, e.exit_status) for e in sim_fleet.service.transfers.entries()]
    assert ("SFTP LIST /QSYS.LIB/QGPL.LIB", "ran", paramiko.sftp.SFTP_OK) in logged
    assert ("SFTP GET /QSYS.LIB/QGPL.LIB/RCVSAV.FILE", "ran", paramiko.sftp.SFTP_OK) in logged
    assert ("SFTP STAT /QSYS.LIB/QGPL.LIB/NOSUCH.FILE", "ran", paramiko.sftp.SFTP_NO_SUCH_FILE) in logged
    assert len(sim_fleet.service.received) == commands_before


# --- the byte format --------------------------------------------------------------------------------------------


def test_a_record_out_of_sequence_is_refused_as_it_is_written(sim_fleet: SimFleet, sftp: paramiko.SFTPClient):
    data = download(sftp)
    records = [data[i : i + savfdata.RECORD_BYTES] for i in range(0, len(data), savfdata.RECORD_BYTES)]
    assert len(records) >= 2
    writer = savfdata.RecordWriter()
    writer.write(records[0])
    with pytest.raises(savfdata.DamagedSaveFile, match="out of sequence"):
        writer.write(records[0])


def test_an_incomplete_save_file_is_damaged(sftp: paramiko.SFTPClient):
    data = download(sftp)
    with pytest.raises(savfdata.DamagedSaveFile, match="incomplete"):
        savfdata.decode(data[: savfdata.RECORD_BYTES])
