"""Save files copied between a simulated partition and the backup store over the session's own SSH connection:
downloaded after SAVOBJ with a verified sidecar, uploaded into a CRTSAVF save file for RSTOBJ, and every transfer in
the audit log like a command."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mqjournal.backupstore import BackupStore, StoreObjectCorrupt
from mqjournal.catalog import SaveFileCopy, StoredObject
from mqjournal.errors import InvalidName
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import read_audit, read_events, unexplained_intents
from mqjournal.ibmi.commands import save_file_path
from mqjournal.ibmi.hostdigest import TOOLS, CopyNotVouched, NoHostDigest, NotOurBytes, discover
from mqjournal.ibmi.transfer import (
    RECORD_BYTES,
    SaveFileAuthorityMissing,
    SaveFileNotEmpty,
    SaveFileNotFound,
    TransferInterrupted,
    UploadIncomplete,
    download_save_file,
    upload_save_file,
)
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.sim import savfdata
from mqjournal.sim.model import Status, WithheldAuthority
from mqjournal.sim.server import TransferFault
from tests.conftest import SimFleet
from tests.ibmi.rcvsav import detached, rcvsav_copy, saved_session

SAVF = "/QSYS.LIB/QGPL.LIB/RCVSAV.FILE"
TARGET = "/QSYS.LIB/QGPL.LIB/RESTORE.FILE"


@pytest.fixture
def session(sim_fleet: SimFleet, tmp_path) -> Iterator[IbmiSession]:
    session = saved_session(sim_fleet, tmp_path)
    yield session
    session.close()


@pytest.fixture
def store(tmp_path) -> BackupStore:
    return BackupStore(tmp_path / "backups")


@pytest.fixture
def meta(sim_fleet: SimFleet) -> SaveFileCopy:
    return rcvsav_copy(sim_fleet, "run1")


def run(session: IbmiSession, command: commands.Command) -> None:
    output = session.run(command)
    assert output.exit_status == 0, output.stderr


def audit_path(session: IbmiSession) -> Path:
    assert session.audit.path is not None
    return session.audit.path


def served(fleet: SimFleet, name: str = "RCVSAV") -> bytes:
    """The bytes the simulator's sftp-server gives for QGPL/<name>."""
    with fleet.host().lock:
        return savfdata.encode(fleet.host().partition.save_files[f"QGPL/{name}"])


def transfers(fleet: SimFleet, op: str) -> list:
    return [e for e in fleet.service.transfers.entries() if e.command.startswith(f"SFTP {op} ")]


def settled_states(fleet: SimFleet, op: str, wait: float = 10.0) -> list[str]:
    """The transfers' states once none is still "arrived": the simulator's server thread records a drop after the
    client has already seen the connection end (CI, 2026-11-28: ['dropped', 'arrived'] read a moment too early)."""
    deadline = time.monotonic() + wait
    while "arrived" in (states := [e.state for e in transfers(fleet, op)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return states


def store_files(store: BackupStore) -> list[str]:
    return sorted(store.fs.find(store.root))


def stored_copy(session: IbmiSession, store: BackupStore, meta: SaveFileCopy) -> StoredObject:
    return download_save_file(session, "QGPL", "RCVSAV", store, meta, via="direct")


# --- download ---------------------------------------------------------------------------------------------------


def test_a_saved_save_file_downloads_into_the_store_with_a_verified_sidecar(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    data = served(sim_fleet)
    stored = stored_copy(session, store, meta)
    assert (stored.size_bytes, stored.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert store.fs.cat_file(f"{store.root}/{stored.key}") == data
    assert store.get(stored.key) == stored and store.verify(stored.key).ok
    assert [o.receiver for o in stored.objects] == detached(sim_fleet)


def test_a_download_dropped_mid_file_is_tried_again_and_stored_whole(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    sim_fleet.service.faults["ibmi1"].transfers.append(TransferFault("RCVSAV", "get", after_bytes=RECORD_BYTES))
    stored = stored_copy(session, store, meta)
    assert stored.sha256 == hashlib.sha256(served(sim_fleet)).hexdigest()
    assert [(a["attempt"], a["outcome"]) for a in read_audit(audit_path(session))][-2:] == [
        (1, "transport_error"),
        (2, "ok"),
    ]


def test_a_download_dropped_on_every_attempt_leaves_nothing_in_the_store_and_is_named(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RCVSAV", "get", after_bytes=RECORD_BYTES, times=2)
    )
    with pytest.raises(TransferInterrupted, match=r"ibmi1 QGPL/RCVSAV.*all 2 attempt\(s\).*nothing of it is in the"):
        stored_copy(session, store, meta)
    assert store_files(store) == []
    assert settled_states(sim_fleet, "GET") == ["dropped", "dropped"]


# --- the host's digest: what makes a copy proof (issue #28) ---------------------------------------------------------


def another_jobs_save(fleet: SimFleet, receiver: str) -> None:
    """Another job saves `receiver` alone into QGPL/RCVSAV, clearing what was there (SAVOBJ ... CLEAR(*ALL))."""
    out = fleet.host().run(
        f"system 'SAVOBJ OBJ({receiver}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RCVSAV) CLEAR(*ALL)'",
        "OTHERJOB",
    )
    assert out.exit_status == 0, out.stderr


def test_a_copy_carries_the_hosts_digest_of_the_save_file_and_is_vouched_for(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    assert stored.host_sha256 == hashlib.sha256(served(sim_fleet)).hexdigest() == stored.sha256
    assert stored.vouched and store.get(stored.key) == stored  # the sidecar carries it too
    sent = [e.command for e in sim_fleet.service.received.entries()]
    digests = [c for c in sent if c.startswith("/QOpenSys/usr/bin/openssl dgst -sha256 -r ")]
    assert digests == [
        "/QOpenSys/usr/bin/openssl dgst -sha256 -r /dev/null",
        f"/QOpenSys/usr/bin/openssl dgst -sha256 -r {SAVF}",
    ]


def test_a_download_of_the_right_length_with_other_bytes_is_not_kept(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RCVSAV", "get", after_bytes=len(served(sim_fleet)) // 2, corrupt=True)
    )
    with pytest.raises(CopyNotVouched, match=r"ibmi1 QGPL/RCVSAV.*is not the host's.*removed from the store"):
        stored_copy(session, store, meta)
    assert store_files(store) == [] and store.list_objects() == []


def test_a_save_file_saved_into_again_during_the_download_is_not_kept(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    # Another job's SAVOBJ CLEAR(*ALL) lands as the download starts, while the host digests the save file: either
    # the digest is of the bytes before (and the copy's differ) or of those after (and the object list read again
    # differs from the one read first). Either way nothing is kept.
    last = detached(sim_fleet)[-1]

    def save_on_arrival(entry, event: str) -> None:
        if event == "arrived" and entry.command.startswith("SFTP GET"):
            sim_fleet.service.transfers.listeners.clear()
            another_jobs_save(sim_fleet, last)

    sim_fleet.service.transfers.listeners.append(save_on_arrival)
    with pytest.raises((CopyNotVouched, NotOurBytes), match=r"is not the host's|object list changed"):
        stored_copy(session, store, meta)
    assert store_files(store) == []


def test_a_save_file_that_no_longer_lists_the_receivers_is_not_copied(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    last = detached(sim_fleet)[-1]
    another_jobs_save(sim_fleet, last)
    with pytest.raises(NotOurBytes, match=r"no longer lists QMTEST/AMQA\d{6}.*another save went into it"):
        stored_copy(session, store, meta)
    assert store_files(store) == [] and transfers(sim_fleet, "GET") == []


def test_a_host_without_a_digest_program_copies_nothing_and_says_what_to_install(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    with sim_fleet.host().state() as partition:
        partition.digest_programs = []
    with pytest.raises(NoHostDigest, match=r"no SHA-256 of a file.*no receiver is deleted.*5733-SC1"):
        stored_copy(session, store, meta)
    assert store_files(store) == [] and transfers(sim_fleet, "GET") == []


def test_the_digest_program_is_found_once_per_session_in_the_documented_order(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    with sim_fleet.host().state() as partition:
        partition.digest_programs = ["/QOpenSys/pkgs/bin/sha256sum"]
    mark = len(sim_fleet.service.received)
    assert stored_copy(session, store, meta).vouched
    probes = [e.command for e in sim_fleet.service.received.entries(since=mark) if e.command.endswith("/dev/null")]
    assert probes == [
        "/QOpenSys/usr/bin/openssl dgst -sha256 -r /dev/null",
        "/QOpenSys/pkgs/bin/openssl dgst -sha256 -r /dev/null",
        "/QOpenSys/pkgs/bin/sha256sum /dev/null",
    ]
    assert discover(session) == TOOLS[2]
    assert len([e for e in sim_fleet.service.received.entries(since=mark) if e.command.endswith("/dev/null")]) == 3


def test_the_session_runs_commands_again_after_a_dropped_download(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RCVSAV", "get", after_bytes=RECORD_BYTES, times=2)
    )
    with pytest.raises(TransferInterrupted):
        stored_copy(session, store, meta)
    assert session.run(commands.read_mqs_ini()).exit_status == 0


def test_downloading_a_missing_save_file_is_no_such_save_file(
    session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    missing = meta.model_copy(update={"save_file": "NOSUCH"})
    with pytest.raises(SaveFileNotFound, match="no such save file"):
        download_save_file(session, "QGPL", "NOSUCH", store, missing, via="direct")
    assert store_files(store) == []


def test_a_download_without_read_authority_names_what_to_grant(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    with sim_fleet.host().state() as partition:
        partition.user_profile.withheld.append(
            WithheldAuthority(library="QGPL", name="RCVSAV", objtype="*FILE", authorities=["*READ"])
        )
    with pytest.raises(SaveFileAuthorityMissing, match=r"no authority.*\*READ authority to the save file"):
        stored_copy(session, store, meta)


# --- upload -----------------------------------------------------------------------------------------------------


def test_an_upload_into_a_crtsavf_save_file_restores_the_receiver_with_rstobj(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    oldest = detached(sim_fleet)[0]
    run(session, commands.delete_receiver("QMTEST", oldest, ignore_inquiry=True))
    run(session, commands.delete_save_file("QGPL", "RCVSAV"))  # the host's copy is gone: only the store has it
    run(session, commands.create_save_file("QGPL", "RESTORE", "mqjournal TEST restore"))

    assert upload_save_file(session, store, stored.key, "QGPL", "RESTORE") == stored

    assert hashlib.sha256(served(sim_fleet, "RESTORE")).hexdigest() == stored.sha256
    run(session, commands.restore_receiver("QMTEST", oldest, "QGPL", "RESTORE"))
    with sim_fleet.host().lock:
        assert sim_fleet.host().partition.receivers[f"QMTEST/{oldest}"].status is Status.SAVED


def test_uploading_to_a_missing_save_file_says_crtsavf_first(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    with pytest.raises(SaveFileNotFound, match=r"no such save file.*CRTSAVF FILE\(QGPL/NOSUCH\) first"):
        upload_save_file(session, store, stored.key, "QGPL", "NOSUCH")
    with sim_fleet.host().lock:
        assert "QGPL/NOSUCH" not in sim_fleet.host().partition.save_files
    assert transfers(sim_fleet, "PUT") == []  # the stat found it missing: nothing was opened for writing


def test_an_upload_into_a_save_file_that_holds_a_save_is_refused_before_anything_is_sent(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    before = served(sim_fleet)
    with pytest.raises(SaveFileNotEmpty, match=r"DLTF FILE\(QGPL/RCVSAV\) and CRTSAVF"):
        upload_save_file(session, store, stored.key, "QGPL", "RCVSAV")
    assert served(sim_fleet) == before and transfers(sim_fleet, "PUT") == []


def test_a_corrupted_store_object_is_refused_before_anything_is_sent(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    run(session, commands.create_save_file("QGPL", "RESTORE", "mqjournal TEST restore"))
    path = f"{store.root}/{stored.key}"
    data = bytearray(store.fs.cat_file(path))
    data[len(data) // 2] ^= 0x01
    store.fs.pipe_file(path, bytes(data))
    requests = len(sim_fleet.service.transfers.entries())

    with pytest.raises(StoreObjectCorrupt, match="nothing is restored from it"):
        upload_save_file(session, store, stored.key, "QGPL", "RESTORE")

    assert len(sim_fleet.service.transfers.entries()) == requests and transfers(sim_fleet, "PUT") == []
    with sim_fleet.host().lock:
        assert sim_fleet.host().partition.save_files["QGPL/RESTORE"].empty


def test_an_upload_dropped_mid_file_is_not_retried_and_says_dltf_and_crtsavf(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    run(session, commands.create_save_file("QGPL", "RESTORE", "mqjournal TEST restore"))
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("RESTORE", "put", after_bytes=stored.size_bytes // 2, times=2)
    )
    with pytest.raises(UploadIncomplete, match=r"DLTF FILE\(QGPL/RESTORE\), CRTSAVF FILE\(QGPL/RESTORE\)"):
        upload_save_file(session, store, stored.key, "QGPL", "RESTORE")
    assert len(transfers(sim_fleet, "PUT")) == 1  # the save file may hold part of it: never written into twice


def test_an_upload_without_write_authority_names_what_to_grant(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    run(session, commands.create_save_file("QGPL", "RESTORE", "mqjournal TEST restore"))
    with sim_fleet.host().state() as partition:
        partition.user_profile.withheld.append(
            WithheldAuthority(library="QGPL", name="RESTORE", objtype="*FILE", authorities=["*ADD"])
        )
    with pytest.raises(SaveFileAuthorityMissing, match=r"\*RWX data authority to the save file"):
        upload_save_file(session, store, stored.key, "QGPL", "RESTORE")
    with sim_fleet.host().lock:
        assert sim_fleet.host().partition.save_files["QGPL/RESTORE"].empty


# --- the audit log ----------------------------------------------------------------------------------------------


def test_every_transfer_has_an_intent_and_an_outcome_in_the_audit_log(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    stored = stored_copy(session, store, meta)
    run(session, commands.create_save_file("QGPL", "RESTORE", "mqjournal TEST restore"))
    upload_save_file(session, store, stored.key, "QGPL", "RESTORE")

    events = [e for e in read_events(audit_path(session)) if "transfer" in e]
    assert [(e["event"], e["command"]) for e in events] == [
        ("intent", f"SFTP GET {SAVF}"),
        ("outcome", f"SFTP GET {SAVF}"),
        ("intent", f"SFTP PUT {TARGET}"),
        ("outcome", f"SFTP PUT {TARGET}"),
    ]
    for intent, outcome in (events[0:2], events[2:4]):
        assert intent["id"] == outcome["id"] and intent["at"] <= outcome["at"]
        assert (outcome["outcome"], outcome["size_bytes"], outcome["sha256"]) == (
            "ok",
            stored.size_bytes,
            stored.sha256,
        )
    assert unexplained_intents(audit_path(session), "ibmi1") == []


def test_a_failed_transfer_is_recorded_with_its_error(
    sim_fleet: SimFleet, session: IbmiSession, store: BackupStore, meta: SaveFileCopy
):
    def delete_on_arrival(entry, event: str) -> None:  # another job's DLTF lands as the download starts
        if event == "arrived" and entry.command.startswith("SFTP GET"):
            sim_fleet.service.transfers.listeners.clear()
            assert sim_fleet.host().run("system 'DLTF FILE(QGPL/RCVSAV)'", "OTHERJOB").exit_status == 0

    sim_fleet.service.transfers.listeners.append(delete_on_arrival)
    with pytest.raises(SaveFileNotFound):
        stored_copy(session, store, meta)
    [outcome] = [e for e in read_events(audit_path(session)) if e.get("transfer") and e["event"] == "outcome"]
    assert outcome["outcome"] == "failed" and outcome["sha256"] is None and outcome["error"]


# --- paths ------------------------------------------------------------------------------------------------------


def test_the_path_of_a_save_file_is_built_from_validated_names():
    assert save_file_path("qgpl", "rcvsav") == SAVF
    assert save_file_path("QSYS", "RCVSAV") == "/QSYS.LIB/RCVSAV.FILE"
    for library, name in (("QGPL", "../X"), ("QGPL/X", "A"), ("QGPL", "A.FILE")):
        with pytest.raises(InvalidName):
            save_file_path(library, name)
