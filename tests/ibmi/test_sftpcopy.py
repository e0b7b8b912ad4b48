"""Save file downloads at the link's speed (mqjournal.ibmi.sftpcopy), against the simulated partition over real SSH:
OpenSSH's ssh client carrying the sftp subsystem with the session's pinned host key, or the session's own channel;
a dropped download resumed from the last byte received; memory that does not grow with the file; several files of
one host at once; a host key that is not the pinned one refused before anything is asked."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import signal
import struct
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import paramiko
import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import SaveFileCopy
from mqjournal.ibmi import commands, sftpcopy, sshmux, transfer
from mqjournal.ibmi.audit import AuditLog, read_audit, read_events
from mqjournal.ibmi.commands import save_file_path
from mqjournal.ibmi.hostdigest import CopyNotVouched
from mqjournal.ibmi.transfer import RECORD_BYTES, download_save_file
from mqjournal.ibmi.transport import (
    AuthenticationRejected,
    HostKeyRejected,
    IbmiSession,
    OpenSshLogin,
    RetryPolicy,
    ssh_connector,
)
from mqjournal.sim import savfdata
from mqjournal.sim.model import Status
from mqjournal.sim.server import TransferFault
from tests.conftest import SimFleet

MIB = 1024 * 1024
BIG_MIB = 16


def connector(fleet: SimFleet, **pin: str):
    return ssh_connector(
        address="127.0.0.1",
        port=fleet.ports["ibmi1"],
        user=fleet.config.user,
        key=fleet.service.client_key,
        **({"host_key": pin["host_key"]} if pin else {"known_hosts": fleet.config.known_hosts}),
    )


def new_session(fleet: SimFleet, tmp_path, connect, *, attempts: int = 3) -> IbmiSession:
    return IbmiSession(
        "ibmi1",
        fleet.config.user,
        connect,
        audit=AuditLog(tmp_path / "audit.jsonl"),
        command_timeout=60,  # the simulated host shares this machine: a loaded one answers late, not never
        retry=RetryPolicy(attempts=attempts, first_delay=0),
        sleep=lambda _: None,
    )


@pytest.fixture
def session(sim_fleet: SimFleet, tmp_path) -> Iterator[IbmiSession]:
    """A session whose connections come from ssh_connector with a login key: downloads go through OpenSSH's ssh."""
    sim_fleet.host().advance(timedelta(hours=3))
    session = new_session(sim_fleet, tmp_path, connector(sim_fleet))
    yield session
    session.close()


def big_save_files(fleet: SimFleet, session: IbmiSession, *names: str, mib: int = BIG_MIB) -> dict[str, bytes]:
    """Save files QGPL/<name> of about `mib` MiB each, saved by SAVOBJ; returns the bytes the host serves for each.

    The simulator's save file bytes are zlib of the save's JSON, so a save of real receivers is a few KiB; the
    receivers' text, made of random characters before the save, makes it as large as a real one's bytes."""
    partition = fleet.host().partition
    with fleet.host().lock:
        detached = [r for r in partition.receivers_in("QMTEST") if r.status is not Status.ATTACHED]
    served = {}
    for name in names:
        with fleet.host().lock:
            detached[0].text = base64.b64encode(os.urandom(mib * MIB * 3 // 4)).decode()
        run(session, commands.create_save_file("QGPL", name, "mqjournal TEST big save"))
        run(session, commands.save_receivers("QMTEST", [r.name for r in detached], "QGPL", name, compression="*NO"))
        with fleet.host().lock:
            served[name] = savfdata.encode(partition.save_files[f"QGPL/{name}"])
    with fleet.host().lock:
        detached[0].text = ""
    return served


def run(session: IbmiSession, command: commands.Command) -> None:
    output = session.run(command)
    assert output.exit_status == 0, output.stderr


def meta_for(name: str) -> SaveFileCopy:
    return SaveFileCopy(
        host="ibmi1", qmgr="TEST", qmgr_library="QMTEST", save_file_library="QGPL", save_file=name, run_id="run1"
    )


def gets(session: IbmiSession) -> list[dict]:
    """The outcomes of the downloads in the session's audit log, in order."""
    assert session.audit.path is not None
    return [r for r in read_audit(session.audit.path) if r.get("transfer") == "get"]


def remote_file(session: IbmiSession, name: str, *, carrier=None, max_read: int = sftpcopy.MAX_READ):
    return transfer.remote_file(session, save_file_path("QGPL", name), carrier=carrier, max_read=max_read)


# --- the carrier --------------------------------------------------------------------------------------------------


def test_a_session_with_a_login_key_downloads_through_openssh_and_one_with_a_bare_factory_through_its_channel(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    # carrier_for's choice is told by the carrier's closure: OpenSSH's carrier has no session.sftp in it.
    assert session.openssh is not None and session.openssh.address == "127.0.0.1"
    bare = new_session(sim_fleet, tmp_path, lambda: connector(sim_fleet)())
    assert bare.openssh is None
    assert "openssh_carrier" in sftpcopy.carrier_for(session).__qualname__
    assert "paramiko_carrier" in sftpcopy.carrier_for(bare).__qualname__


@pytest.mark.parametrize("through", ["openssh", "channel"])
def test_a_large_save_file_downloads_whole_with_its_sha256(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path, through: str
):
    served = big_save_files(sim_fleet, session, "BIGSAV")["BIGSAV"]
    if through == "channel":
        session = new_session(sim_fleet, tmp_path, lambda: connector(sim_fleet)())
    store = BackupStore(tmp_path / "backups")
    stored = download_save_file(session, "QGPL", "BIGSAV", store, meta_for("BIGSAV"), via="direct")
    assert len(served) > 8 * MIB
    assert (stored.size_bytes, stored.sha256) == (len(served), hashlib.sha256(served).hexdigest())
    assert store.fs.cat_file(f"{store.root}/{stored.key}") == served
    [outcome] = gets(session)
    assert (outcome["outcome"], outcome["size_bytes"], outcome["sha256"]) == ("ok", len(served), stored.sha256)


# --- resuming -----------------------------------------------------------------------------------------------------


def test_a_download_dropped_mid_file_resumes_from_the_last_byte_received(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    served = big_save_files(sim_fleet, session, "BIGSAV")["BIGSAV"]
    dropped_at = 5 * MIB
    sim_fleet.service.faults["ibmi1"].transfers.append(TransferFault("BIGSAV", "get", after_bytes=dropped_at))
    store = BackupStore(tmp_path / "backups")
    stored = download_save_file(session, "QGPL", "BIGSAV", store, meta_for("BIGSAV"), via="direct")
    assert stored.sha256 == hashlib.sha256(served).hexdigest()
    first, second = gets(session)
    assert (first["attempt"], first["outcome"], second["attempt"], second["outcome"]) == (
        1,
        "transport_error",
        2,
        "ok",
    )
    # Every byte crossed once: the second attempt moved only what the first had not.
    assert 0 < first["size_bytes"] <= dropped_at
    assert first["size_bytes"] + second["size_bytes"] == len(served)


@pytest.mark.parametrize("through", ["openssh", "channel"])
def test_each_resumed_attempt_asks_from_the_last_byte_handed_on(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path, through: str
):
    sim_fleet.host().advance(timedelta(days=1))
    served = big_save_files(sim_fleet, session, "BIGSAV", mib=1)["BIGSAV"]
    if through == "channel":
        session = new_session(sim_fleet, tmp_path, lambda: connector(sim_fleet)())
    faults = sim_fleet.service.faults["ibmi1"].transfers
    faults += [TransferFault("BIGSAV", "get", after_bytes=n * 100 * RECORD_BYTES) for n in (1, 3)]
    with remote_file(session, "BIGSAV", max_read=RECORD_BYTES * 10) as remote:
        assert remote.open() == len(served)
        received = b"".join(remote.chunks())
        remote.done("ok")
    # Handed on once each, in order: an attempt that asked from anywhere but the last byte received would have
    # repeated or skipped bytes. What a drop loses on the way (answers sent but cut off) is asked again.
    assert received == served
    assert [r["outcome"] for r in gets(session)] == ["transport_error", "transport_error", "ok"]
    moved = [r["size_bytes"] for r in gets(session)]
    assert moved[0] <= 100 * RECORD_BYTES and moved[0] + moved[1] <= 300 * RECORD_BYTES
    assert moved[0] + moved[1] > 0 and sum(moved) == len(served)


def test_a_download_dropped_on_every_attempt_gives_up_after_the_sessions_attempts(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    big_save_files(sim_fleet, session, "BIGSAV", mib=1)
    sim_fleet.service.faults["ibmi1"].transfers.append(TransferFault("BIGSAV", "get", after_bytes=0, times=3))
    store = BackupStore(tmp_path / "backups")
    with pytest.raises(Exception, match="all 3 attempt"):
        download_save_file(session, "QGPL", "BIGSAV", store, meta_for("BIGSAV"), via="direct")
    assert [r["outcome"] for r in gets(session)] == ["transport_error"] * 3
    assert store.fs.find(store.root) == []


class _WireThatGoes:
    """An SFTP server's side of a wire in memory: it answers each READ of `served` as it is sent, until the
    connection goes after `requests` requests; the answers already sent stay readable, as a socket's do."""

    def __init__(self, served: bytes, requests: int) -> None:
        self.served, self.requests, self.sent = served, requests, 0
        self.answers = bytearray()

    def send(self, data: bytes) -> None:
        if self.sent == self.requests:
            raise EOFError("the SFTP channel closed")
        self.sent += 1
        request_id, handle_length = struct.unpack_from(">II", data, 5)
        offset, length = struct.unpack_from(">QI", data, 13 + handle_length)
        chunk = self.served[offset : offset + length]
        self.answers += struct.pack(">IBII", len(chunk) + 9, 103, request_id, len(chunk)) + chunk

    def recv_into(self, view: memoryview) -> None:
        if len(self.answers) < len(view):
            raise EOFError("the SFTP channel closed")
        view[:] = self.answers[: len(view)]
        del self.answers[: len(view)]


def test_a_read_whose_next_request_cannot_be_sent_hands_on_the_answers_already_there():
    # The connection goes while the client still fills its window of reads: the answers to the reads it did send
    # arrived, and are handed on (a resumed attempt then asks from after them, not from the start again).
    served = os.urandom(10 * 4096)
    sftp = sftpcopy._Sftp(_WireThatGoes(served, requests=3), read_length=4096)
    handed_on = bytearray()
    with pytest.raises(EOFError):
        for chunk in sftp.read(b"h", "/QSYS.LIB/QGPL.LIB/BIGSAV.FILE", 0, len(served)):
            handed_on += chunk
    assert handed_on == served[: 3 * 4096]


# --- memory -------------------------------------------------------------------------------------------------------


def test_a_downloads_memory_does_not_grow_with_the_file(sim_fleet: SimFleet, session: IbmiSession):
    served = big_save_files(sim_fleet, session, "BIGSAV")["BIGSAV"]
    digest = hashlib.sha256()
    with remote_file(session, "BIGSAV") as remote:
        remote.open()  # the simulated host builds the file's bytes here, in this process: not the client's memory
        tracemalloc.start()
        try:
            for chunk in remote.chunks():
                digest.update(chunk)
            _now, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        remote.done("ok")
    assert digest.hexdigest() == hashlib.sha256(served).hexdigest()
    # The simulated host's server threads are traced too (their 32 KiB answers, its channel's buffers).
    assert peak < 4 * MIB < len(served) // 2


# --- several files at once ----------------------------------------------------------------------------------------


def test_several_save_files_of_one_host_download_at_once_each_whole(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    names = ["SAV1", "SAV2", "SAV3", "SAV4"]
    served = big_save_files(sim_fleet, session, *names, mib=4)
    store = BackupStore(tmp_path / "backups")
    stored, errors = {}, []
    started = threading.Barrier(len(names))

    def copy(name: str) -> None:
        started.wait()
        try:
            stored[name] = download_save_file(session, "QGPL", name, store, meta_for(name), via="direct")
        except Exception as exc:  # pragma: no cover - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=copy, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert {name: stored[name].sha256 for name in names} == {
        n: hashlib.sha256(b).hexdigest() for n, b in served.items()
    }
    for name in names:
        assert store.fs.cat_file(f"{store.root}/{stored[name].key}") == served[name]
    assert sorted(r["outcome"] for r in gets(session)) == ["ok"] * len(names)


# --- the host key -------------------------------------------------------------------------------------------------


def test_a_host_presenting_another_key_than_the_pinned_one_is_refused_before_anything_is_asked(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    big_save_files(sim_fleet, session, "BIGSAV", mib=1)
    other = paramiko.ECDSAKey.generate()
    pinned = new_session(sim_fleet, tmp_path, connector(sim_fleet, host_key=f"{other.get_name()} {other.get_base64()}"))
    assert pinned.openssh is not None and pinned.openssh.known_hosts_line is not None
    store = BackupStore(tmp_path / "backups")
    gets_before = [e for e in sim_fleet.service.transfers.entries() if e.command.startswith("SFTP GET ")]
    presented = sim_fleet.service.host_keys["ibmi1"]
    # OpenSSH's client, as the copy runs it (download_save_file's session would refuse the host first, when it asks
    # for the host's digest: paramiko's refusal, tested in test_transport.py).
    with (
        pytest.raises(HostKeyRejected, match=f"presented the ECDSA key {re.escape(presented.fingerprint)}, not the"),
        remote_file(pinned, "BIGSAV") as remote,
    ):
        remote.open()
    # Never tried again (it could be an impostor), nothing asked of the host, nothing in the store.
    assert len(gets(pinned)) == 1  # one attempt (its outcome is the caller's, transfer._download)
    assert [e for e in sim_fleet.service.transfers.entries() if e.command.startswith("SFTP GET ")] == gets_before
    assert store.fs.find(store.root) == []


def test_a_host_missing_from_known_hosts_is_refused_and_not_learnt(sim_fleet: SimFleet, session: IbmiSession, tmp_path):
    big_save_files(sim_fleet, session, "BIGSAV", mib=1)
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    unknown = new_session(
        sim_fleet,
        tmp_path,
        ssh_connector(
            address="127.0.0.1",
            port=sim_fleet.ports["ibmi1"],
            user=sim_fleet.config.user,
            key=sim_fleet.service.client_key,
            known_hosts=empty,
        ),
    )
    with (
        pytest.raises(HostKeyRejected, match="the host's key is not known"),
        remote_file(unknown, "BIGSAV") as remote,
    ):
        remote.open()
    assert empty.read_text() == ""
    # One attempt's intent (its outcome is the caller's, transfer._download): never tried again.
    assert [e["event"] for e in read_events(tmp_path / "audit.jsonl") if e.get("transfer")] == ["intent"]


def test_a_save_file_that_changed_before_the_resume_is_copied_again_from_its_first_byte_and_counts_for_nothing(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    big_save_files(sim_fleet, session, "BIGSAV", mib=2)
    partition = sim_fleet.host().partition

    def saved_again(_seconds: float) -> None:
        # Between the drop and the resume, the save file gets other data (as a new SAVOBJ into it would).
        with sim_fleet.host().lock:
            partition.save_files["QGPL/BIGSAV"].objects[0].receiver.text = "saved again"

    changing = IbmiSession(
        "ibmi1",
        sim_fleet.config.user,
        connector(sim_fleet),
        audit=AuditLog(tmp_path / "changing.jsonl"),
        command_timeout=60,
        retry=RetryPolicy(attempts=3, first_delay=0),
        sleep=saved_again,
    )
    sim_fleet.service.faults["ibmi1"].transfers.append(TransferFault("BIGSAV", "get", after_bytes=MIB))
    store = BackupStore(tmp_path / "backups")
    # The copy starts over from the first byte and arrives whole, but the host digested the bytes saved before: the
    # copy is not this save's, so it is removed and nothing counts (hostdigest).
    with pytest.raises(CopyNotVouched, match="not the host's"):
        download_save_file(changing, "QGPL", "BIGSAV", store, meta_for("BIGSAV"), via="direct")
    assert store.fs.find(store.root) == []
    outcomes = [(r["attempt"], r["outcome"]) for r in gets(changing)]
    # The last attempt's bytes arrived whole, and its record says they were not kept, and why (the sidecar is
    # written only once the copy's SHA-256 equals the host's digest).
    assert outcomes == [(1, "transport_error"), (2, "failed"), (1, "failed")]
    assert "changed while it was copied" in gets(changing)[1]["error"]
    assert "not the host's" in gets(changing)[2]["error"]


def test_a_login_the_host_refuses_is_named_and_not_tried_again(sim_fleet: SimFleet, session: IbmiSession, tmp_path):
    big_save_files(sim_fleet, session, "BIGSAV", mib=1)
    stranger = new_session(
        sim_fleet,
        tmp_path,
        ssh_connector(
            address="127.0.0.1",
            port=sim_fleet.ports["ibmi1"],
            user=sim_fleet.config.user,
            key=paramiko.ECDSAKey.generate(),
            known_hosts=sim_fleet.config.known_hosts,
        ),
    )
    with pytest.raises(AuthenticationRejected, match="refused the login"), remote_file(stranger, "BIGSAV") as remote:
        remote.open()
    assert len(gets(stranger)) == 1  # one attempt, not tried again


# --- the ciphers OpenSSH's client offers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "has_aes"),
    [
        ("flags\t\t: fpu vme sse2 aes avx2 sha_ni", True),  # x86
        ("Features\t: fp asimd evtstrm aes pmull sha1 sha2", True),  # Arm
        ("flags\t\t: fpu vme sse2 avx2", False),
        ("model name\t: AES-less test CPU aes", False),  # the word elsewhere than the flags says nothing
    ],
)
def test_aes_in_hardware_reads_the_cpus_flags(tmp_path, line, has_aes):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\n{line}\n\n")
    assert sftpcopy.aes_in_hardware(str(cpuinfo)) is has_aes
    assert sftpcopy.aes_in_hardware(str(tmp_path / "none")) is False


def test_the_aes_first_list_is_openssh_default_set_reordered_and_the_installed_client_takes_it():
    offered = sftpcopy.AES_FIRST.split(",")
    assert offered[:2] == ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
    ssh = shutil.which("ssh")
    assert ssh is not None, "OpenSSH's client is needed (Debian's openssh-client)"
    default = subprocess.run([ssh, "-F", "none", "-G", "h"], capture_output=True, text=True, check=True).stdout
    (ciphers,) = [line.split()[1] for line in default.splitlines() if line.startswith("ciphers ")]
    assert sorted(ciphers.split(",")) == sorted(offered)  # the same set: a host that takes the default connects
    ours = subprocess.run(
        [ssh, "-F", "none", "-o", f"Ciphers={sftpcopy.AES_FIRST}", "-G", "h"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"ciphers {sftpcopy.AES_FIRST}" in ours.splitlines()


def test_the_ssh_command_offers_aes_gcm_first_only_on_a_cpu_with_aes_instructions(monkeypatch, tmp_path):
    login = OpenSshLogin(
        address="127.0.0.1",
        port=22,
        user="mqj",
        known_hosts_line="[127.0.0.1]:22 ssh-ed25519 AAAA",
        known_hosts=None,
        key_file=None,
    )
    for has_aes in (True, False):
        monkeypatch.setattr(sftpcopy, "aes_in_hardware", lambda has_aes=has_aes: has_aes)
        argv = sftpcopy._ssh_argv("ssh", login, tmp_path, None, 30.0)
        assert (f"Ciphers={sftpcopy.AES_FIRST}" in argv) is has_aes


# --- one login per session ----------------------------------------------------------------------------------------


def _masters_of(session: IbmiSession) -> list[str]:
    """The command lines of the ssh processes serving this session's control socket (its connection master)."""
    master = sshmux.master_for(session, "ssh", session.openssh)
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(master.socket).encode() in a for a in argv):
            found.append(b" ".join(argv).decode(errors="replace"))
    return found


def test_the_downloads_of_a_session_share_one_login_and_its_close_ends_it(
    sim_fleet: SimFleet, session: IbmiSession, tmp_path
):
    served = big_save_files(sim_fleet, session, "SAVA", "SAVB", "SAVC", mib=1)
    store = BackupStore(tmp_path / "backups")
    before = sim_fleet.service.server.logins("ibmi1")
    for name in served:
        stored = download_save_file(session, "QGPL", name, store, meta_for(name), via="direct")
        assert stored.sha256 == hashlib.sha256(served[name]).hexdigest()
    # One login for the three (a job on the partition each on IBM i), the session's own paramiko one apart.
    assert sim_fleet.service.server.logins("ibmi1") - before == 1
    master = sshmux.master_for(session, "ssh", session.openssh)
    assert master.socket.exists() and _masters_of(session)
    assert oct(master.folder.stat().st_mode & 0o777) == oct(0o700)  # nobody else may reach the socket
    session.close()
    assert not master.folder.exists()
    deadline = time.monotonic() + 10
    while _masters_of(session) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _masters_of(session) == []


def test_a_master_that_died_is_replaced_by_the_next_download(sim_fleet: SimFleet, session: IbmiSession, tmp_path):
    served = big_save_files(sim_fleet, session, "SAVA", "SAVB", mib=1)
    store = BackupStore(tmp_path / "backups")
    download_save_file(session, "QGPL", "SAVA", store, meta_for("SAVA"), via="direct")
    master = sshmux.master_for(session, "ssh", session.openssh)
    assert len(_masters_of(session)) == 1
    logins = sim_fleet.service.server.logins("ibmi1")
    pid = next(
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and str(master.socket).encode() in _read(p / "cmdline")
    )
    os.kill(pid, signal.SIGKILL)  # its socket stays behind, stale
    stored = download_save_file(session, "QGPL", "SAVB", store, meta_for("SAVB"), via="direct")
    assert stored.sha256 == hashlib.sha256(served["SAVB"]).hexdigest()
    assert [r["outcome"] for r in gets(session)] == ["ok", "ok"]
    assert sim_fleet.service.server.logins("ibmi1") == logins + 1  # the new master's
    session.close()


def test_a_master_folder_removed_under_the_session_is_made_again(sim_fleet: SimFleet, session: IbmiSession, tmp_path):
    served = big_save_files(sim_fleet, session, "SAVA", "SAVB", mib=1)
    store = BackupStore(tmp_path / "backups")
    download_save_file(session, "QGPL", "SAVA", store, meta_for("SAVA"), via="direct")
    master = sshmux.master_for(session, "ssh", session.openssh)
    shutil.rmtree(master.folder)  # as a clean-up of /tmp would: the socket and its folder gone, the master orphaned
    stored = download_save_file(session, "QGPL", "SAVB", store, meta_for("SAVB"), via="direct")
    assert stored.sha256 == hashlib.sha256(served["SAVB"]).hexdigest()
    assert master.socket.exists()
    session.close()


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
