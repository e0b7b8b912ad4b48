"""Reading one file of a host over SFTP at the link's speed: reads kept in flight, resumed after a drop.

The SFTP requests (version 3 of draft-ietf-secsh-filexfer-02, what OpenSSH's sftp-server speaks, IBM i's
included: docs/ibmi-interfaces.md, section 5) are this module's own, carried to the host one of two ways:

- **OpenSSH's ssh client**, in a process of its own, running the host's sftp subsystem (``ssh -s <host> sftp``),
  whenever the session's connections come from `ssh_connector` with a login key (`IbmiSession.openssh`) and an ssh
  client is installed. Its encryption is C and runs beside this interpreter, not under its lock, so several files of
  one host copy at once. Measured on loopback (issue #28): paramiko's readv in 4 MiB windows ran at 0.14-0.25x of
  OpenSSH's sftp client, paramiko with prefetch at about 0.3-0.5x, and four paramiko downloads in one process were
  no faster than one; this module's ratios are in bench/README.md (copy_bench.py). The host key is checked as the
  session checks it: StrictHostKeyChecking=yes against a known_hosts holding the pinned key alone (or the
  connection's known_hosts), never learnt, and no ssh_config is read (``-F none``), so nothing there can loosen it.
  A key held in memory (an Airflow connection's private_key) reaches ssh through a memfd, never a file on disk.
  The downloads of one session share one login: the first one's ssh stays as a connection master (`sshmux`).
- **the session's own paramiko connection** (an SFTP channel) otherwise: a password login (OpenSSH takes a password
  only from a terminal), paramiko-only algorithm settings, or no ssh client.

Either way up to `IN_FLIGHT` reads are outstanding, each as long as the server allows (its limits@openssh.com
answer, else 32 KiB, which every SFTP server takes), and the next is sent as each answer comes, so the link never
idles between windows. This process holds one answer at a time; the rest wait in the pipe and in the SSH channel's
window, so memory does not grow with the file.

A drop (the connection's end, or no answer within the session's command timeout) ends an attempt, whose audit record
says so; the next attempt connects again, checks that the file still has the size and modification time it had, and
asks from the first byte not yet handed on, which is the last verified offset: every byte before it arrived through
the SSH channel's MAC and went into the caller's SHA-256 in order. Each attempt is written to the audit log before
its first request (the caller's `begin`); the session's retry policy bounds the attempts and the pauses between them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import io
import logging
import math
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TypeVar

import paramiko

from mqjournal.backupstore import SourceIncomplete
from mqjournal.ibmi import sshmux
from mqjournal.ibmi.transport import (
    AuthenticationRejected,
    ConnectionLost,
    HostKeyRejected,
    HostUnreachable,
    IbmiSession,
    OpenSshLogin,
    redact,
)

__all__ = [
    "AES_FIRST",
    "IN_FLIGHT",
    "AttemptRecord",
    "FileChanged",
    "RemoteFile",
    "aes_in_hardware",
    "carrier_for",
    "openssh_carrier",
    "paramiko_carrier",
]

log = logging.getLogger(__name__)

IN_FLIGHT = 64
"""Reads outstanding at once, as OpenSSH's sftp client keeps (its -R): at 256 KiB each, 16 MiB on the way, enough
for the SSH channel's window to be the limit at a WAN's round trip, not the requests."""

SAFE_READ = 32 * 1024
"""The read length every SFTP server takes (draft-ietf-secsh-filexfer-02: at least 32768 bytes a packet)."""

MAX_READ = 256 * 1024
"""The longest read asked for even where a server allows more: one answer is all this process holds."""

_PIPE_BYTES = 1024 * 1024
"""The ssh process's output pipe (Linux's default is 64 KiB): fewer wake-ups per MiB copied."""

# SFTP version 3 packet types and status codes (draft-ietf-secsh-filexfer-02, sections 3 and 7).
_INIT, _VERSION, _OPEN, _CLOSE, _READ, _FSTAT = 1, 2, 3, 4, 5, 8
_STATUS, _HANDLE, _DATA, _ATTRS, _EXTENDED, _EXTENDED_REPLY = 101, 102, 103, 105, 200, 201
_FX_OK, _FX_EOF, _FX_NO_SUCH_FILE, _FX_PERMISSION_DENIED = 0, 1, 2, 3
_FXF_READ = 0x01
_ATTR_SIZE, _ATTR_UIDGID, _ATTR_PERMISSIONS, _ATTR_ACMODTIME, _ATTR_EXTENDED = 0x1, 0x2, 0x4, 0x8, 0x80000000
_LIMITS = b"limits@openssh.com"


_T = TypeVar("_T")


class FileChanged(SourceIncomplete):
    """The file is no longer the one the copy began on (another size or modification time when it resumed): the
    bytes received are of another file, so the copy starts over (the caller's retry of a SourceIncomplete)."""


class AttemptRecord(Protocol):
    """One attempt's record in the audit log, its intent written when it was made (mqjournal.ibmi.transfer)."""

    def done(
        self, outcome: str, *, error: str | None = None, size_bytes: int = 0, sha256: str | None = None
    ) -> None: ...


# --- the wire: a byte stream to an sftp-server --------------------------------------------------------------------


class _Wire(Protocol):
    def send(self, data: bytes) -> None: ...

    def recv_into(self, view: memoryview) -> None:
        """Fill `view` whole; EOFError at the stream's end, TimeoutError when nothing comes in time."""
        ...


class _ChannelWire:
    """An SFTP channel of the session's paramiko connection (its timeout is the session's command timeout)."""

    def __init__(self, channel: paramiko.Channel) -> None:
        self._channel = channel

    def send(self, data: bytes) -> None:
        self._channel.sendall(data)

    def recv_into(self, view: memoryview) -> None:
        got = 0
        while got < len(view):
            data = self._channel.recv(len(view) - got)  # raises TimeoutError (socket.timeout) on a stall
            if not data:
                raise EOFError("the SFTP channel closed")
            view[got : got + len(data)] = data
            got += len(data)


class _PipeWire:
    """The stdin and stdout of an ssh process running the sftp subsystem."""

    def __init__(self, process: subprocess.Popen[bytes], timeout: float) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._in, self._out = process.stdin.fileno(), process.stdout.fileno()
        self._timeout_ms = max(1, int(timeout * 1000))
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(self._out, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)  # Linux only: elsewhere the default pipe

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._in, view) :]
            except BrokenPipeError as exc:
                raise EOFError("the ssh process has ended") from exc

    def recv_into(self, view: memoryview) -> None:
        got = 0
        while got < len(view):
            if not self._poll.poll(self._timeout_ms):
                raise TimeoutError("no answer from the host within the command timeout")
            n = os.readv(self._out, [view[got:]])
            if not n:
                raise EOFError("the ssh process has ended")
            got += n


# --- SFTP version 3, the requests a download needs -----------------------------------------------------------


@dataclass(frozen=True)
class _Stat:
    size: int
    mtime: int | None


class _Sftp:
    """The client side of one SFTP session on `wire`: open, fstat, pipelined reads, close."""

    def __init__(self, wire: _Wire, *, read_length: int = SAFE_READ) -> None:
        self._wire = wire
        self._next_id = 0
        self.read_length = read_length

    def handshake(self) -> None:
        """INIT and VERSION; then the server's read limit, when it announces limits@openssh.com (OpenSSH's does)."""
        self._wire.send(struct.pack(">IBI", 5, _INIT, 3))
        kind, body = self._packet()
        if kind != _VERSION:
            raise EOFError(f"the host's sftp-server answered INIT with packet type {kind}")
        extensions, at = [], 4
        while at < len(body):
            name, at = _string(body, at)
            _value, at = _string(body, at)
            extensions.append(name)
        if _LIMITS in extensions:
            _id, reply = self._request(_EXTENDED, _str(_LIMITS))
            if reply[0] == _EXTENDED_REPLY:
                max_read = struct.unpack_from(">Q", reply[1], 8)[0]
                if max_read:
                    self.read_length = max(SAFE_READ, min(MAX_READ, max_read))

    def open(self, path: str) -> bytes:
        _id, (kind, body) = self._request(_OPEN, _str(path.encode()) + struct.pack(">II", _FXF_READ, 0))
        if kind != _HANDLE:
            raise _status_error(kind, body, path)
        return bytes(_string(body, 0)[0])

    def fstat(self, handle: bytes, path: str) -> _Stat:
        _id, (kind, body) = self._request(_FSTAT, _str(handle))
        if kind != _ATTRS:
            raise _status_error(kind, body, path)
        flags, at = struct.unpack_from(">I", body, 0)[0], 4
        size = mtime = None
        if flags & _ATTR_SIZE:
            size, at = struct.unpack_from(">Q", body, at)[0], at + 8
        if flags & _ATTR_UIDGID:
            at += 8
        if flags & _ATTR_PERMISSIONS:
            at += 4
        if flags & _ATTR_ACMODTIME:
            mtime = struct.unpack_from(">I", body, at + 4)[0]
        if size is None:
            raise OSError(errno.EIO, f"the host gave no size for {path}")
        return _Stat(size, mtime)

    def close(self, handle: bytes) -> None:
        self._request(_CLOSE, _str(handle))

    def read(self, handle: bytes, path: str, start: int, end: int) -> Iterator[bytearray]:
        """The bytes of [start, end) in order, then whatever lies past `end` (a file that grew: the caller's size
        check names it), as they come. Up to IN_FLIGHT reads are outstanding; an answer short of what was asked
        (the server's own limit) is asked on from where it stopped; the file's end before `end` ends it early."""
        sent: deque[tuple[int, int, int]] = deque()  # (id, offset, length), in the order sent
        early: dict[int, tuple[int, bytearray]] = {}  # answers that overtook an earlier request's
        asked, probed = start, False
        unsent: EOFError | OSError | None = None  # why a request could not be sent: the connection went
        while True:
            while len(sent) < IN_FLIGHT and not probed and unsent is None:
                # Past the size, one read more: a file that grew since its stat is not the file that was sized.
                length = min(self.read_length, end - asked) if asked < end else self.read_length
                try:
                    request_id = self._send(_READ, _str(handle) + struct.pack(">QI", asked, length))
                except (EOFError, OSError) as exc:
                    # The answers to the reads already sent may have arrived before the connection went: they are
                    # handed on, and a resumed attempt asks from the first byte none of them brought.
                    unsent = exc
                    break
                sent.append((request_id, asked, length))
                probed = asked >= end
                asked += length
            if not sent:
                if unsent is not None:
                    raise unsent
                return
            request_id, offset, length = sent[0]
            if request_id in early:
                kind, data = early.pop(request_id)
            else:
                answered_id, kind, data = self._answer()
                if answered_id != request_id:
                    early[answered_id] = (kind, data)
                    continue
            sent.popleft()
            if kind == _DATA and data:
                yield data
                if offset >= end:
                    self._forget(sent, early)
                    return  # bytes past the size: enough for the caller to name the difference
                if len(data) < length:  # a short answer: drop the reads beyond it and ask on from its end
                    self._forget(sent, early)
                    asked, probed = offset + len(data), False
                continue
            if kind == _DATA or (kind == _STATUS and struct.unpack_from(">I", data, 0)[0] == _FX_EOF):
                self._forget(sent, early)
                return  # the file's end (short of `end`: the caller's size check names it)
            raise _status_error(kind, data, path)

    # the plumbing of requests and answers

    def _send(self, kind: int, payload: bytes) -> int:
        self._next_id = (self._next_id + 1) & 0xFFFFFFFF
        self._wire.send(struct.pack(">IBI", len(payload) + 5, kind, self._next_id) + payload)
        return self._next_id

    def _request(self, kind: int, payload: bytes) -> tuple[int, tuple[int, bytes]]:
        request_id = self._send(kind, payload)
        answered_id, answer_kind, body = self._answer()
        if answered_id != request_id:
            raise EOFError("the host's sftp-server answered another request than the one sent")
        return request_id, (answer_kind, bytes(body))

    def _packet(self) -> tuple[int, bytearray]:
        head = bytearray(5)
        self._wire.recv_into(memoryview(head))
        length, kind = struct.unpack(">IB", head)
        body = bytearray(length - 1)
        self._wire.recv_into(memoryview(body))
        return kind, body

    def _answer(self) -> tuple[int, int, bytearray]:
        """The next answer: its request's id, its type, and its body after the id; a DATA answer's bytes alone,
        read straight into a buffer of their own and copied nowhere else."""
        head = bytearray(9)
        self._wire.recv_into(memoryview(head))
        length, kind, request_id = struct.unpack(">IBI", head)
        body_length = length - 5
        if kind == _DATA:
            size = bytearray(4)
            self._wire.recv_into(memoryview(size))
            body_length = struct.unpack(">I", size)[0]
        body = bytearray(body_length)
        self._wire.recv_into(memoryview(body))
        return request_id, kind, body

    def _forget(self, sent: deque[tuple[int, int, int]], early: dict[int, tuple[int, bytearray]]) -> None:
        """Read and drop the answers to the reads still outstanding, so that the stream stays in step."""
        waiting = {request_id for request_id, _offset, _length in sent} - set(early)
        while waiting:
            waiting.discard(self._answer()[0])
        sent.clear()
        early.clear()


def _str(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _string(body: bytes | bytearray, at: int) -> tuple[bytes, int]:
    length = struct.unpack_from(">I", body, at)[0]
    return bytes(body[at + 4 : at + 4 + length]), at + 4 + length


def _status_error(kind: int, body: bytes | bytearray, path: str) -> OSError:
    """An SFTP status as the OSError paramiko raises for it (errno ENOENT, EACCES; none for a plain failure)."""
    if kind != _STATUS:
        return OSError(errno.EIO, f"unexpected SFTP answer of type {kind} for {path}")
    code = struct.unpack_from(">I", body, 0)[0]
    message = _string(body, 4)[0].decode("utf-8", "replace") if len(body) >= 8 else ""
    if code == _FX_NO_SUCH_FILE:
        return FileNotFoundError(errno.ENOENT, message or "No such file", path)
    if code == _FX_PERMISSION_DENIED:
        return PermissionError(errno.EACCES, message or "Permission denied", path)
    return OSError(f"{message or 'Failure'} (SFTP status {code}) reading {path}")


# --- carriers: how the requests reach the host's sftp-server ------------------------------------------------------

Carrier = Callable[[], AbstractContextManager[_Sftp]]
"""Opens one SFTP session to the host: a failure to connect or a drop comes out of it as the session's errors
(HostUnreachable, ConnectionLost, HostKeyRejected, AuthenticationRejected), an SFTP status as an OSError."""

_VERIFY_KEY = "verify the host's key fingerprint and pin it in the connection's host_key (or known_hosts)"
_CHECK_NETWORK = "check the network to the partition and its sshd (and its sftp subsystem), then run the step again"


def carrier_for(session: IbmiSession) -> Carrier:
    """OpenSSH's client where it can carry the session's login (see the module doc), else the session's own."""
    login = session.openssh
    ssh = shutil.which("ssh")
    if login is not None and ssh is not None:
        key_text = _key_text(login)
        if key_text is not None or (login.key_file is not None and login.passphrase is None):
            return openssh_carrier(session, login, ssh=ssh, key_text=key_text)
    return paramiko_carrier(session)


def paramiko_carrier(session: IbmiSession) -> Carrier:
    """An SFTP channel on the session's paramiko connection (IbmiSession.sftp tells a drop from a refusal)."""

    @contextlib.contextmanager
    def carry() -> Iterator[_Sftp]:
        with session.sftp() as client:
            # paramiko's client has done INIT and VERSION and reads nothing unasked: the channel is ours from here.
            channel = client.sock
            assert isinstance(channel, paramiko.Channel)
            yield _Sftp(_ChannelWire(channel))

    return carry


def openssh_carrier(session: IbmiSession, login: OpenSshLogin, *, ssh: str, key_text: str | None = None) -> Carrier:
    """``ssh -s <host> sftp`` as a process of its own, logging in as `login` says, the host key checked strictly.
    `key_text`: the login key in PEM, when it is not a file ssh can read itself (it goes through a memfd)."""

    @contextlib.contextmanager
    def carry() -> Iterator[_Sftp]:
        with contextlib.ExitStack() as stack:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mqjournal-ssh-")))
            identity = _identity(login, key_text, stack)
            master = sshmux.master_for(session, ssh, login)
            shared = master.options()
            # A master checks the host's key again at each re-key, long after this download: its known_hosts stays
            # in the master's folder, which lives as long as it does.
            keys = master.folder if shared else folder
            argv = _ssh_argv(ssh, login, keys, identity, session.command_timeout, shared)
            said = stack.enter_context(tempfile.TemporaryFile())
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=said, bufsize=0)
            stack.callback(_end, process)
            sftp = _Sftp(_PipeWire(process, session.command_timeout))
            try:
                sftp.handshake()
            except (EOFError, TimeoutError, OSError) as exc:
                raise _not_connected(session.host, process, said, exc) from exc
            try:
                yield sftp
            except (EOFError, TimeoutError) as exc:
                raise _dropped(session.host, process, said, exc) from exc
            except OSError as exc:
                # sftp-server answers a read cut off by its connection's end with a plain failure, then the
                # connection goes: the process's end tells that drop from a refusal (no such file, no authority).
                if exc.errno is None and _ends_within(process, 1.0):
                    raise _dropped(session.host, process, said, exc) from exc
                raise

    return carry


def _key_text(login: OpenSshLogin) -> str | None:
    """The login key in PEM for a memfd, when ssh cannot read it from its file itself (held in memory, or under a
    passphrase); None when it can, or when paramiko cannot write this key type (the session's carrier then)."""
    if login.key is None and login.passphrase is None:
        return None
    if not hasattr(os, "memfd_create"):
        return None
    try:
        text = io.StringIO()
        login.load_key().write_private_key(text)
        return text.getvalue()
    except (paramiko.SSHException, NotImplementedError, ValueError, TypeError):
        return None


def _identity(login: OpenSshLogin, key_text: str | None, stack: contextlib.ExitStack) -> str | None:
    if key_text is None:
        return str(login.key_file) if login.key_file is not None else None
    # A memfd: never on a disk, gone with this process. ssh closes every inherited descriptor at its start, so it
    # reads the key through this process's /proc entry, which only the same user may open.
    fd = os.memfd_create("mqjournal-login-key", os.MFD_CLOEXEC)
    stack.callback(os.close, fd)
    os.fchmod(fd, 0o600)  # ssh refuses a key file others could read
    os.write(fd, key_text.encode())
    return f"/proc/{os.getpid()}/fd/{fd}"


AES_FIRST = (
    "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr"
)
"""OpenSSH's default ciphers (ssh_config(5)), the AES-GCM ones first, for a planner whose CPU encrypts AES in
hardware. chacha20-poly1305 leads OpenSSH's own list because it is fast and constant-time without AES instructions;
with them, AES-GCM costs the copy's two ends much less CPU per byte (measured on loopback, 1 GiB through OpenSSH's
sftp, 2026-12-02: about half the client's and server's user time of chacha20-poly1305; bench/README.md). Both are
authenticated ciphers, and the list is the default set reordered, so a host that takes the default still connects,
and one that lacks AES-GCM negotiates what it has. Written out, not as "^...", which older clients refuse."""


@functools.cache
def aes_in_hardware(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this machine's CPU has AES instructions (x86's `aes` flag, Arm's `aes` feature), as Linux reports
    them; False where it cannot tell (no /proc/cpuinfo), which keeps OpenSSH's own order."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return False
    return any(
        key.strip() in ("flags", "Features") and "aes" in value.split()
        for key, _, value in (line.partition(":") for line in text.splitlines())
    )


def _ssh_argv(
    ssh: str,
    login: OpenSshLogin,
    folder: Path,
    identity: str | None,
    timeout: float,
    shared: dict[str, str] | None = None,
) -> list[str]:
    """`shared`: the session's connection master's options (sshmux), else each run logs in on its own."""
    if login.known_hosts_line is not None:
        known_hosts = folder / "known_hosts"
        # Whole or not at all: another download of the session may be reading it (the master's folder).
        fd, written = tempfile.mkstemp(dir=folder, prefix="known_hosts.")
        with os.fdopen(fd, "w") as out:
            out.write(login.known_hosts_line + "\n")
        os.replace(written, known_hosts)
    elif login.known_hosts is not None:
        known_hosts = login.known_hosts
    else:  # ssh_connector refuses a connection without either: never connect unverified
        raise HostKeyRejected(f"{login.address}:{login.port}", "no host key to verify against", _VERIFY_KEY)
    alive = max(1, math.ceil(timeout / 3))
    options = {
        "BatchMode": "yes",  # never a prompt: an unknown key or a refused login ends the process
        "StrictHostKeyChecking": "yes",
        "UserKnownHostsFile": str(known_hosts),
        "GlobalKnownHostsFile": "/dev/null",
        "UpdateHostKeys": "no",
        "CheckHostIP": "no",
        "VerifyHostKeyDNS": "no",
        "IdentitiesOnly": "yes",
        "IdentityAgent": "none",
        "PreferredAuthentications": "publickey",
        "ConnectTimeout": str(max(1, math.ceil(login.connect_timeout))),
        # A dead link ends ssh after about the command timeout, as a stalled paramiko channel ends the session's.
        "ServerAliveInterval": str(alive),
        "ServerAliveCountMax": "3",
        **(shared or {"ControlMaster": "no", "ControlPath": "none"}),
        "ClearAllForwardings": "yes",
        "LogLevel": "ERROR",
    }
    if aes_in_hardware():
        options["Ciphers"] = AES_FIRST
    if identity is not None:
        options["IdentityFile"] = identity
    if login.proxy_command:
        options["ProxyCommand"] = login.proxy_command
    argv = [ssh, "-F", "none", "-T", "-x", "-a", "-e", "none", "-p", str(login.port), "-l", login.user]
    for name, value in options.items():
        argv += ["-o", f"{name}={value}"]
    return [*argv, "-s", "--", login.address, "sftp"]


def _end(process: subprocess.Popen[bytes]) -> None:
    """Let ssh end (its stdin closed: sftp-server ends too, the host's job with it), or end it."""
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    if not _ends_within(process, 5.0):
        process.kill()
        process.wait()


def _ends_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _said(process: subprocess.Popen[bytes], said: IO[bytes]) -> str:
    _ends_within(process, 2.0)
    said.seek(0)
    lines = [line.strip() for line in said.read(16384).decode("utf-8", "replace").splitlines() if line.strip()]
    # The warning banner around a changed key is noise; the lines that say what happened are kept.
    lines = [line for line in lines if not set(line) <= set("@ ")]
    return redact(" ".join(lines))


_PRESENTED = re.compile(
    r"fingerprint for the (?P<kind>\S+) key sent by the remote host is\s+(?P<fingerprint>\S+?)\.?\s"
)
_UNKNOWN = re.compile(r"Host key verification failed\.?")


def _shown(text: str) -> str:
    """ssh's words in a message: its first 300 characters (a changed key's warning runs to a screenful)."""
    text = text.strip()
    return text if len(text) <= 300 else text[:297] + "..."


def _not_connected(host: str, process: subprocess.Popen[bytes], said: IO[bytes], exc: BaseException) -> Exception:
    text = _said(process, said)
    lowered = text.lower()
    if "host key verification failed" in lowered or "host identification has changed" in lowered:
        presented = _PRESENTED.search(text)
        problem = (
            f"the host presented the {presented['kind']} key {presented['fingerprint']}, not the key it is verified "
            "against; it may have been reinstalled, or be an impostor (OpenSSH's client: host key verification failed)"
            if presented
            else f"the host's key is not known (OpenSSH's client: {_shown(_UNKNOWN.sub('', text)) or 'refused'})"
        )
        return HostKeyRejected(host, problem, _VERIFY_KEY)
    if "permission denied" in lowered or "too many authentication failures" in lowered:
        return AuthenticationRejected(
            host,
            f"the host refused the login (OpenSSH's client: {_shown(text)})",
            "authorize the key for the user on the host (~/.ssh/authorized_keys) or fix the connection's user and key",
        )
    return HostUnreachable(
        host,
        f"no SFTP session could be opened with OpenSSH's client ({_shown(text) or type(exc).__name__})",
        _CHECK_NETWORK,
    )


def _dropped(host: str, process: subprocess.Popen[bytes], said: IO[bytes], exc: BaseException) -> ConnectionLost:
    process.kill()  # a stall as much as a drop: this connection is done either way
    text = _said(process, said)
    why = f"{type(exc).__name__}: {exc}" + (f"; ssh said: {_shown(text)}" if text else "")
    return ConnectionLost(
        host, f"the connection dropped or stalled during an SFTP transfer ({why})", _CHECK_NETWORK, sent=True
    )


# --- one file, read whole across drops ----------------------------------------------------------------------------


class RemoteFile:
    """The file at `path` of the host, read from its first byte to its last over as many connections as it takes,
    at most the session's retry attempts; `begin(attempt)` writes each attempt's intent before it connects."""

    def __init__(
        self,
        carrier: Carrier,
        path: str,
        *,
        host: str,
        attempts: int,
        delay_after: Callable[[int], float],
        pause: Callable[[float], None],
        begin: Callable[[int], AttemptRecord],
        max_read: int = MAX_READ,
    ) -> None:
        """`max_read`: the longest read asked for (the server's own limit, when it tells a smaller one, wins)."""
        self.path, self.host = path, host
        self._max_read = max_read
        self.size = 0
        self.received = 0
        """Bytes handed on, in order: where a resumed attempt asks from."""
        self._carrier, self._attempts, self._delay_after, self._pause, self._begin = (
            carrier,
            attempts,
            delay_after,
            pause,
            begin,
        )
        self._attempt = 0
        self._attempt_bytes = 0
        self._record: AttemptRecord | None = None
        self._stack: contextlib.ExitStack | None = None
        self._sftp: _Sftp | None = None
        self._handle = b""
        self._stat: _Stat | None = None

    def open(self) -> int:
        """Connect, open and size the file (trying again as the policy allows); returns its size."""
        self._connect()
        return self.size

    def chunks(self) -> Iterator[bytes]:
        """The file's bytes in order, once each, resuming after each drop from `received`."""
        while True:
            assert self._sftp is not None
            reader = self._sftp.read(self._handle, self.path, self.received, self.size)
            try:
                while (chunk := self._guarded(functools.partial(next, reader, None))) is not None:
                    self.received += len(chunk)
                    self._attempt_bytes += len(chunk)
                    yield chunk  # a bytearray: hashed and written as bytes are
                return
            except (HostUnreachable, ConnectionLost) as exc:
                self._lost(exc)
                self._connect()

    def done(self, outcome: str, *, error: str | None = None, sha256: str | None = None) -> None:
        """Close the current attempt's audit record with its outcome and the bytes it moved."""
        if self._record is not None:
            self._record.done(outcome, error=error, size_bytes=self._attempt_bytes, sha256=sha256)

    def close(self) -> None:
        """Close the file on the host (its lock on the save file goes) and the connection's SFTP session."""
        if self._sftp is not None and self._stack is not None:
            sftp, handle = self._sftp, self._handle
            with contextlib.suppress(Exception):
                self._guarded(lambda: sftp.close(handle))
        self._release()

    def __enter__(self) -> RemoteFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # attempts

    def _connect(self) -> None:
        while True:
            self._attempt += 1
            self._attempt_bytes = 0
            self._record = self._begin(self._attempt)  # the intent, before anything is sent
            try:
                self._open_once()
                return
            except (HostUnreachable, ConnectionLost) as exc:
                self._lost(exc)

    def _open_once(self) -> None:
        stack = contextlib.ExitStack()
        self._sftp = stack.enter_context(self._carrier())
        self._stack = stack
        sftp = self._sftp
        sftp.read_length = min(sftp.read_length, self._max_read)
        self._handle = self._guarded(lambda: sftp.open(self.path))
        stat = self._guarded(lambda: sftp.fstat(self._handle, self.path))
        if self._stat is None:
            self._stat, self.size = stat, stat.size
        elif stat != self._stat:
            raise FileChanged(
                f"{self.host} {self.path}",
                f"the file changed while it was copied: {stat.size} bytes (modified at {stat.mtime}) where it was "
                f"{self._stat.size} (modified at {self._stat.mtime}); what was received is not resumed",
                "copy it again; a save file changes only when something saves into it again (SAVOBJ, CLRSAVF)",
            )
        elif self.received:
            log.info("%s: resuming %s at byte %d of %d", self.host, self.path, self.received, self.size)

    def _lost(self, exc: HostUnreachable | ConnectionLost) -> None:
        """Record a dropped attempt; raise `exc` when it was the last, else wait the policy's pause."""
        self.done("transport_error", error=str(exc))
        self._release()
        if self._attempt >= self._attempts:
            raise exc
        delay = self._delay_after(self._attempt)
        log.warning(
            "%s: %s; resuming %s at byte %d in %.2f s (%d/%d)",
            self.host,
            exc.problem,
            self.path,
            self.received,
            delay,
            self._attempt + 1,
            self._attempts,
        )
        self._pause(delay)

    def _guarded(self, step: Callable[[], _T]) -> _T:
        """Run `step` as inside the carrier's `with`: its failure comes out as the carrier makes it (a drop as
        ConnectionLost, the connection gone with it); an SFTP status as the OSError it is."""
        try:
            return step()
        except Exception as exc:
            stack, self._stack, self._sftp = self._stack, None, None
            if stack is not None:
                try:
                    stack.__exit__(type(exc), exc, exc.__traceback__)
                except Exception as mapped:
                    if mapped is not exc:
                        raise mapped from exc
            raise

    def _release(self) -> None:
        stack, self._stack, self._sftp = self._stack, None, None
        if stack is not None:
            stack.close()
