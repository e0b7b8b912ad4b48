"""Serves simulated IBM i partitions over real SSH on loopback, one listening port per host.

The client under test is paramiko's `SSHClient`, and it must not be able to tell this server from the OpenSSH of
an IBM i partition: public key authentication only, "session" channels carrying one `exec` each, output then exit
status then close, and an OpenSSH version string. Transport faults (delays, dropped connections, refused
connections) are injected per host from `TransportFaults`, looked up at every command so tests can change them
while the fleet is serving.

Given an `SftpFactory`, the same connections also serve the ``sftp`` subsystem, as sshd does with its
``Subsystem sftp`` line: the factory makes the file system one signed-on session sees (sim/sftp.py serves the
QSYS.LIB view of save files). `TransferFault`s drop a connection in the middle of a transfer.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import paramiko
from paramiko.common import (
    AUTH_FAILED,
    AUTH_SUCCESSFUL,
    MSG_CHANNEL_REQUEST,
    OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED,
    OPEN_SUCCEEDED,
)
from paramiko.pkey import PublicBlob

from mqjournal.sim.protocol import DropRule, ExecResult, TransportFaults

__all__ = [
    "SERVER_VERSION",
    "CommandLog",
    "CommandRule",
    "FaultsLookup",
    "FleetSshServer",
    "Handler",
    "HostTransportFaults",
    "ReceivedCommand",
    "SftpFactory",
    "SftpSession",
    "SimulatedHostEndpoint",
    "TransferFault",
    "load_or_create_host_key",
]

log = logging.getLogger(__name__)

# IBM i ships OpenSSH from the open-source RPMs; nothing on the wire may say "simulator" or "paramiko".
SERVER_VERSION = "SSH-2.0-OpenSSH_9.6"

Handler = Callable[[str, str, str], ExecResult]
# A handler for hosts whose programs read their standard input (a Linux host's runmqsc): (host, user, command line,
# what the client sent on the channel before its end of file).
StdinHandler = Callable[[str, str, str, str], ExecResult]
ReadsStdin = Callable[[str, str], bool]  # (host, command line): whether the command's program reads its stdin
_STDIN_LIMIT = 1 << 20  # MQSC scripts are lines; more than this is not one
"""`handler(host_name, user_name_upper, command_line)` runs one command line on one simulated host."""

FaultsLookup = Callable[[str], TransportFaults]
"""`faults(host_name)` gives the (shared, mutable) faults of one host."""

# paramiko's server-side transports log a port scan or an abandoned negotiation at ERROR, with a traceback.
# For a simulator on loopback that is noise, so their records go to a logger of ours, demoted to DEBUG.
_TRANSPORT_LOG = f"{__name__}.transport"

_ACCEPT_POLL_SECONDS = 0.2
_STOP_JOIN_SECONDS = 1.0


class _DemoteToDebug(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.levelno, record.levelname = logging.DEBUG, logging.getLevelName(logging.DEBUG)
        return True


logging.getLogger(_TRANSPORT_LOG).addFilter(_DemoteToDebug())


def load_or_create_host_key(path: str | os.PathLike[str]) -> paramiko.PKey:
    """Load the host key at `path`, creating an ECDSA (nistp256) key there first if there is none.

    A restarted simulator must present the same host key, or every client with a pinned key would (rightly)
    refuse it. paramiko cannot generate Ed25519 keys, hence ECDSA; any key type paramiko reads is accepted.
    """
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        key = paramiko.ECDSAKey.generate()
        # Write aside, then link into place: the link fails if another process created the key meanwhile, so two
        # simulators started together still agree on one key, and nobody ever reads a half-written file.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            key.write_private_key_file(str(tmp))
            os.link(tmp, path)
            log.info("created SSH host key %s", path)
            return key
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
    return paramiko.PKey.from_path(path)


def _parse_authorized_keys(lines: Iterable[str]) -> frozenset[bytes]:
    """The key blobs of OpenSSH public key lines ("type base64 [comment]"); blank and '#' lines are skipped."""
    blobs = set()
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            blobs.add(PublicBlob.from_string(line).key_blob)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"not an OpenSSH public key line: {line[:60]!r}") from exc
    return frozenset(blobs)


@dataclass(frozen=True)
class SimulatedHostEndpoint:
    """One simulated partition as seen on the network: its SSH port, host key and who may log in."""

    name: str
    port: int  # 0: an ephemeral port, reported by FleetSshServer.ports once started
    host_key: paramiko.PKey
    authorized_keys: Sequence[str]  # OpenSSH public key lines, accepted for every user in `users`
    users: frozenset[str]  # user profiles allowed to log in; IBM i profiles are case-insensitive
    case_sensitive_users: bool = False  # a Linux host's user names are case-sensitive

    def __post_init__(self) -> None:
        if not self.case_sensitive_users:
            object.__setattr__(self, "users", frozenset(user.upper() for user in self.users))
        object.__setattr__(self, "authorized_keys", tuple(self.authorized_keys))


# --- command rules and the log of received commands -------------------------------------------------------------

RULE_ACTIONS = frozenset({"drop_before", "drop_after", "hold_before", "hold_after", "answer"})
_HOLD_POLL_SECONDS = 0.02


@dataclass
class CommandRule:
    """A fault for a command line matching `pattern` (a regex searched in the line): the first `skip` matches pass,
    the next `times` get `action`.

    - ``drop_before`` / ``drop_after``: as `DropRule`, the connection drops before the command runs, or after it ran
      and before its answer.
    - ``hold_before``: the command waits, not yet run, until `release` is set or `seconds` pass, then runs and is
      answered if the client is still there. A client whose command timeout is shorter has given up by then: the
      command hangs past the timeout and lands late.
    - ``hold_after``: the command runs at once; its answer is held until `release` is set, `seconds` pass or the
      client goes away (a worker killed while the host runs the command).
    - ``answer``: the host does not run the command and answers `reply` instead (a command that fails with its
      documented message where the partition's CL faults cannot reach, such as an SQL statement).
    """

    pattern: str
    action: str
    skip: int = 0
    times: int = 1
    seconds: float = 30.0
    release: threading.Event | None = None
    reply: ExecResult | None = None

    def __post_init__(self) -> None:
        if self.action not in RULE_ACTIONS:
            raise ValueError(f"command rule action {self.action!r} is not one of {sorted(RULE_ACTIONS)}")
        if self.action == "answer" and self.reply is None:
            raise ValueError("an 'answer' rule needs its reply")


TRANSFER_DIRECTIONS = frozenset({"get", "put"})


@dataclass
class TransferFault:
    """The connection drops in the middle of an SFTP transfer of a path matching `pattern` (a regex searched in the
    upper-case path): a download (``get``) once `after_bytes` of the file have been sent, an upload (``put``) once
    `after_bytes` have been received (or, with `corrupt`, a download arrives whole with one byte changed); `times`
    transfers, then the fault is spent. The client sees its connection
    lost mid-file, as when a network or the partition's sshd fails during a copy: what arrived is short."""

    pattern: str
    direction: str = "get"
    after_bytes: int = 0
    times: int = 1
    corrupt: bool = False
    """A download only: instead of dropping, the byte at `after_bytes` arrives changed and the rest whole, so the copy
    has the save file's length and other bytes (what a faulty link, proxy or disk in between can do)."""
    release: threading.Event | None = None
    """A Linux host's transfers only (linuxsim/sftp.py): instead of dropping, the transfer stops at `after_bytes`
    (`held` is set) until `release` is set, its client's worker killed meanwhile; then it goes on."""
    held: bool = False
    refuse: bool = False
    """A Linux host's transfers only: the file is not opened, "permission denied" (what sftp-server answers when the
    file's mode does not let the user read or write it)."""

    def __post_init__(self) -> None:
        if self.direction not in TRANSFER_DIRECTIONS:
            raise ValueError(f"transfer fault direction {self.direction!r} is not one of {sorted(TRANSFER_DIRECTIONS)}")


@dataclass
class HostTransportFaults(TransportFaults):
    """`TransportFaults` plus rules aimed at single commands (see `CommandRule`) and at SFTP transfers."""

    rules: list[CommandRule] = field(default_factory=list)
    transfers: list[TransferFault] = field(default_factory=list)


@dataclass
class ReceivedCommand:
    """One command line that arrived at a simulated host over SSH, and what became of it.

    `state`: ``arrived`` (not run yet: delayed or held), ``dropped`` (the connection dropped before it ran),
    ``answered_by_fault`` (an `answer` rule replied, it did not run), ``ran`` (the host ran it: `exit_status`).
    `answered` is set once its whole answer was handed to the client's connection. `stdin` is what the client sent
    on the channel's standard input, for a command whose program reads it (a Linux host's runmqsc: the MQSC, which
    is what the command does), else None.
    """

    seq: int
    host: str
    user: str
    command: str
    arrived_at: float
    state: str = "arrived"
    exit_status: int | None = None
    fault: str | None = None
    answered: bool = False
    stdin: str | None = None

    @property
    def ran(self) -> bool:
        return self.state == "ran"


@dataclass(frozen=True)
class SftpSession:
    """One ``sftp`` subsystem channel: the host, the signed-on user profile (upper case), and a way to drop the
    whole SSH connection (for `TransferFault`s)."""

    host: str
    user: str
    drop: Callable[[], None]


SftpFactory = Callable[[SftpSession], paramiko.SFTPServerInterface]
"""`sftp(session)`: the file system an sftp session sees; paramiko's `SFTPServer` sends it the requests."""


CommandListener = Callable[[ReceivedCommand, str], None]
"""`listener(entry, event)`: called in the server's thread when a command arrives (``arrived``) and right after the
host ran it, before its answer is sent (``ran``)."""


class CommandLog:
    """Every command line the simulated hosts received, in arrival order; thread-safe, with listeners."""

    def __init__(self) -> None:
        self._entries: list[ReceivedCommand] = []
        self._changed = threading.Condition()
        self.listeners: list[CommandListener] = []

    def arrived(self, host: str, user: str, command: str) -> ReceivedCommand:
        with self._changed:
            entry = ReceivedCommand(len(self._entries), host, user, command, time.time())
            self._entries.append(entry)
            self._changed.notify_all()
        self._tell(entry, "arrived")
        return entry

    def settle(self, entry: ReceivedCommand, **changes: object) -> None:
        with self._changed:
            for name, value in changes.items():
                setattr(entry, name, value)
            self._changed.notify_all()
        if changes.get("state") == "ran":
            self._tell(entry, "ran")

    def _tell(self, entry: ReceivedCommand, event: str) -> None:
        for listener in list(self.listeners):
            try:
                listener(entry, event)
            except Exception:
                log.exception("command log listener failed on %r", entry.command)

    def entries(self, host: str | None = None, since: int = 0) -> list[ReceivedCommand]:
        """Copies of the entries from position `since` on, of one host or all."""
        with self._changed:
            return [dataclasses.replace(e) for e in self._entries[since:] if host is None or e.host == host]

    def __len__(self) -> int:
        with self._changed:
            return len(self._entries)

    def clear(self) -> None:
        with self._changed:
            self._entries = []
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[list[ReceivedCommand]], bool], timeout: float) -> bool:
        """Wait until `predicate(entries)` holds (it sees the live entries: read, do not keep them)."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self._entries), timeout)


def _handle_channel_request(chan: paramiko.Channel, m: paramiko.Message) -> None:
    paramiko.Channel._handle_request(chan, m)  # type: ignore[attr-defined]  # private, untyped in the stubs
    # Only now is the reply to an exec request on the wire. A worker started from inside the callback could send
    # its output, exit status and close before that reply, and paramiko's client then fails with "Channel closed".
    server = chan.get_transport().server_object
    if isinstance(server, _HostInterface):
        server.start_pending_exec(chan)


class _Transport(paramiko.Transport):
    _channel_handler_table: ClassVar[dict[int, Callable[[paramiko.Channel, paramiko.Message], None]]] = {
        **paramiko.Transport._channel_handler_table,  # type: ignore[attr-defined]  # private, untyped in the stubs
        MSG_CHANNEL_REQUEST: _handle_channel_request,
    }

    def run(self) -> None:
        try:
            super().run()
        finally:
            # paramiko leaves its handshake timer thread running (15 s) when a client leaves mid-handshake, as a
            # port scan or a probe does; cancel it so that no thread outlives its connection.
            self.packetizer.complete_handshake()


class _HostInterface(paramiko.ServerInterface):
    """The server side of one SSH connection to one simulated host."""

    def __init__(self, fleet: FleetSshServer, endpoint: SimulatedHostEndpoint, key_blobs: frozenset[bytes]):
        self._fleet = fleet
        self._endpoint = endpoint
        self._key_blobs = key_blobs
        self._user: str | None = None
        self._pending: dict[int, str] = {}  # channel id -> command line, until the exec reply is sent
        # The transport holds its channels only weakly, and a collected Channel closes itself: an open channel is
        # held here until a worker takes it (concurrent clients open several before sending any exec).
        self._idle: dict[int, paramiko.Channel] = {}
        self._lock = threading.Lock()
        self.transport: paramiko.Transport | None = None  # set once the connection's transport exists

    @property
    def host(self) -> str:
        return self._endpoint.name

    @property
    def user(self) -> str | None:
        """The signed-on user profile, once public key authentication succeeded."""
        return self._user

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        user = username if self._endpoint.case_sensitive_users else username.upper()
        if user in self._endpoint.users and key.asbytes() in self._key_blobs:
            self._user = user
            self._fleet.signed_on(self._endpoint.name)
            return AUTH_SUCCESSFUL
        log.debug("%s: refused key %s for user %r", self._endpoint.name, key.fingerprint, username)
        return AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return OPEN_SUCCEEDED
        return OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_env_request(self, channel: paramiko.Channel, name: bytes, value: bytes) -> bool:
        return True  # accepted and ignored, as sshd does for the variables it allows

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        with self._lock:
            if self._user is None or channel.get_id() in self._pending:
                return False
            self._pending[channel.get_id()] = command.decode("utf-8", errors="replace")
        return True

    def start_pending_exec(self, channel: paramiko.Channel) -> None:
        # Opened channels queue up in the transport for an accept() that nothing else calls; collect them here.
        transport = channel.get_transport()
        while (opened := transport.accept(timeout=0)) is not None:
            self._idle[opened.get_id()] = opened
        self._idle = {chanid: chan for chanid, chan in self._idle.items() if not chan.closed}
        with self._lock:
            command = self._pending.pop(channel.get_id(), None)
        if command is not None:
            assert self._user is not None
            self._idle.pop(channel.get_id(), None)  # the worker holds it from now on
            self._fleet._start_exec(self._endpoint.name, self._user, channel, command)


def _sftp_session(server: paramiko.ServerInterface, factory: SftpFactory) -> paramiko.SFTPServerInterface:
    """paramiko's `SFTPServer` builds its request handler from the connection's server object: hand the factory
    the session it serves instead."""
    if not isinstance(server, _HostInterface) or server.user is None or server.transport is None:
        raise RuntimeError("an sftp subsystem outside an authenticated simulator connection")
    transport = server.transport
    return factory(SftpSession(server.host, server.user, transport.close))


class FleetSshServer:
    """Serves a fleet of simulated hosts, one SSH listener per host on `listen` (127.0.0.1 unless told: a container
    serving other containers listens on its own address), from daemon threads."""

    def __init__(
        self,
        endpoints: Sequence[SimulatedHostEndpoint],
        handler: Handler,
        faults: FaultsLookup = lambda host: TransportFaults(),
        received: CommandLog | None = None,
        sftp: SftpFactory | None = None,
        listen: str = "127.0.0.1",
        stdin_handler: tuple[ReadsStdin, StdinHandler] | None = None,
    ) -> None:
        names = [endpoint.name for endpoint in endpoints]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate host names among {names}")
        self._endpoints = list(endpoints)
        self._key_blobs = {e.name: _parse_authorized_keys(e.authorized_keys) for e in self._endpoints}
        self._handler = handler
        self._stdin_handler = stdin_handler
        self._faults = faults
        self._received = received
        self._sftp = sftp
        self._listen = listen
        self._lock = threading.Lock()  # guards the collections below and every DropRule list it mutates
        self._logins: collections.Counter[str] = collections.Counter()
        self._stopping = threading.Event()
        self._listeners: dict[str, socket.socket] = {}
        self._acceptors: list[threading.Thread] = []
        self._transports: set[paramiko.Transport] = set()
        self._workers: set[threading.Thread] = set()

    # lifecycle

    def start(self) -> None:
        """Bind every host's port on the listen address and start serving; raises OSError if a port is taken."""
        if self._listeners:
            raise RuntimeError("already started")
        self._stopping.clear()
        try:
            for endpoint in self._endpoints:
                listener = socket.create_server((self._listen, endpoint.port))
                # A timeout as well as the shutdown in stop(): closing a socket alone does not wake an accept().
                listener.settimeout(_ACCEPT_POLL_SECONDS)
                self._listeners[endpoint.name] = listener
        except OSError:
            self._close_listeners()
            raise
        for endpoint in self._endpoints:
            thread = threading.Thread(
                target=self._accept_loop,
                args=(endpoint, self._listeners[endpoint.name]),
                name=f"sim-ssh-accept-{endpoint.name}",
                daemon=True,
            )
            thread.start()
            self._acceptors.append(thread)
        log.info("serving SSH for %s", ", ".join(f"{n}:{p}" for n, p in self.ports.items()))

    @property
    def ports(self) -> dict[str, int]:
        """The port each host listens on, ephemeral ones resolved; only meaningful once started."""
        if not self._listeners:
            raise RuntimeError("not started")
        return {name: listener.getsockname()[1] for name, listener in self._listeners.items()}

    def stop(self) -> None:
        """Close the listeners and every live connection, and join the threads (bounded, about a second)."""
        self._stopping.set()
        self._close_listeners()
        for thread in self._acceptors:
            thread.join(_STOP_JOIN_SECONDS)
        self._acceptors.clear()
        with self._lock:
            transports, self._transports = list(self._transports), set()
        for transport in transports:
            transport.close()
        # A handler still running cannot be interrupted; its output then goes nowhere and its thread is a daemon.
        deadline = time.monotonic() + _STOP_JOIN_SECONDS
        with self._lock:
            workers = list(self._workers)
        for thread in workers:
            thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> FleetSshServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _close_listeners(self) -> None:
        for listener in self._listeners.values():
            # On Linux, shutting a listening socket down wakes the accept() waiting on it at once; without it, stop()
            # waits out the accept poll, a fifth of a second for every simulator a test starts. Where shutdown is
            # refused (not connected, elsewhere), the poll still ends the loop.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self._listeners = {}

    # connections

    def signed_on(self, host: str) -> None:
        """A login succeeded: on IBM i, a job started for it (sshd's log says "Accepted publickey")."""
        with self._lock:
            self._logins[host] += 1

    def logins(self, host: str) -> int:
        """The logins `host` accepted so far."""
        with self._lock:
            return self._logins[host]

    def _accept_loop(self, endpoint: SimulatedHostEndpoint, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                sock, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break  # the listener was closed by stop()
            try:
                self._serve_connection(endpoint, sock, peer)
            except Exception:
                log.exception("%s: cannot serve the connection from %s", endpoint.name, peer)
                sock.close()

    def _serve_connection(self, endpoint: SimulatedHostEndpoint, sock: socket.socket, peer: object) -> None:
        if self._faults(endpoint.name).refuse_connections:
            log.debug("%s: refusing the connection from %s", endpoint.name, peer)
            sock.close()
            return
        # Many small request/reply packets per command: without this, Nagle and delayed ACKs cost ~40 ms each time.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport = _Transport(sock)
        transport.set_log_channel(_TRANSPORT_LOG)
        transport.local_version = SERVER_VERSION
        transport.add_server_key(endpoint.host_key)
        with self._lock:
            if self._stopping.is_set():
                sock.close()
                return
            # Connections that ended on their own are forgotten here rather than by a thread per connection.
            self._transports = {t for t in self._transports if t.is_active()}
            self._transports.add(transport)
        # With an event, start_server returns at once: negotiation, auth and channels run in the transport's
        # own daemon thread, which ends by itself when the client goes away or stalls (paramiko's timeouts).
        server = _HostInterface(self, endpoint, self._key_blobs[endpoint.name])
        server.transport = transport
        if self._sftp is not None:
            # paramiko starts the handler in its own thread for each "subsystem sftp" request, as sshd starts
            # sftp-server; a host without an SFTP factory refuses the request, as an sshd without the line does.
            transport.set_subsystem_handler("sftp", paramiko.SFTPServer, _sftp_session, self._sftp)
        transport.start_server(event=threading.Event(), server=server)

    # commands

    def _start_exec(self, host: str, user: str, channel: paramiko.Channel, command: str) -> None:
        thread = threading.Thread(
            target=self._run_exec, args=(host, user, channel, command), name=f"sim-ssh-exec-{host}", daemon=True
        )
        with self._lock:
            self._workers.add(thread)
        thread.start()

    def _run_exec(self, host: str, user: str, channel: paramiko.Channel, command: str) -> None:
        transport = channel.get_transport()
        entry = self._received.arrived(host, user, command) if self._received is not None else None
        try:
            stdin = self._stdin(host, command, channel)
            if stdin is not None and entry is not None and self._received is not None:
                self._received.settle(entry, stdin=stdin)
            result = self._outcome(host, user, command, channel, entry, stdin)
            if result is None:
                transport.close()
                return
            channel.sendall(result.stdout.encode("utf-8"))
            channel.sendall_stderr(result.stderr.encode("utf-8"))
            channel.shutdown_write()
            channel.send_exit_status(result.exit_status)
            if entry is not None and self._received is not None:
                self._received.settle(entry, answered=True)
        except Exception:
            log.debug("%s: could not answer %r; the client has gone", host, command, exc_info=True)
        finally:
            # Closing tells a client that is still there; one that has gone makes close() raise, harmlessly.
            with contextlib.suppress(EOFError, OSError, paramiko.SSHException):
                channel.close()
            with self._lock:
                self._workers.discard(threading.current_thread())

    def _stdin(self, host: str, command: str, channel: paramiko.Channel) -> str | None:
        """What the client sends on the channel up to its end of file, for a command whose program reads it (as a
        shell's program reads its standard input); None for every other command, which never waits for it."""
        if self._stdin_handler is None or not self._stdin_handler[0](host, command):
            return None
        received = bytearray()
        channel.settimeout(30.0)
        while chunk := channel.recv(65536):
            received += chunk
            if len(received) > _STDIN_LIMIT:
                raise ValueError(f"{host}: more than {_STDIN_LIMIT} bytes of standard input for {command!r}")
        return received.decode("utf-8", errors="replace")

    def _outcome(
        self,
        host: str,
        user: str,
        command: str,
        channel: paramiko.Channel | None = None,
        entry: ReceivedCommand | None = None,
        stdin: str | None = None,
    ) -> ExecResult | None:
        """What to answer to `command`, or None to drop the connection instead of answering."""

        def settle(**changes: object) -> None:
            if entry is not None and self._received is not None:
                self._received.settle(entry, **changes)

        try:
            faults = self._faults(host)
            if faults.delay_seconds > 0 and self._stopping.wait(faults.delay_seconds):
                settle(state="dropped", fault="simulator stopping")
                return None
            drop = self._take_drop_rule(faults, command)
            rule = self._take_command_rule(faults, command) if drop is None else None
        except Exception:
            log.exception("%s: cannot apply the transport faults for %r", host, command)
            return ExecResult(255, stderr="internal error: transport faults\n")
        if (drop is not None and not drop.after_run) or (rule is not None and rule.action == "drop_before"):
            log.debug("%s: dropping the connection before running %r", host, command)
            settle(state="dropped", fault="drop_before")
            return None
        if rule is not None and rule.action == "answer" and rule.reply is not None:  # CommandRule requires its reply
            settle(state="answered_by_fault", fault="answer", exit_status=rule.reply.exit_status)
            return rule.reply
        if rule is not None and rule.action == "hold_before":
            log.debug("%s: holding %r before running it", host, command)
            self._hold(rule, channel=None)
            if self._stopping.is_set():
                settle(state="dropped", fault="simulator stopping")
                return None
        result = self._run_handler(host, user, command, stdin)
        settle(state="ran", exit_status=result.exit_status, fault=rule.action if rule is not None else None)
        if (drop is not None) or (rule is not None and rule.action == "drop_after"):
            log.debug("%s: dropping the connection after running %r", host, command)
            if drop is not None:
                settle(fault="drop_after")
            return None
        if rule is not None and rule.action == "hold_after":
            log.debug("%s: holding the answer to %r", host, command)
            self._hold(rule, channel=channel)
        return result

    def _hold(self, rule: CommandRule, *, channel: paramiko.Channel | None) -> None:
        """Wait until the rule is released, its time is up, the simulator stops or (with `channel`) the client goes."""
        deadline = time.monotonic() + rule.seconds
        while time.monotonic() < deadline and not self._stopping.is_set():
            if rule.release is not None and rule.release.is_set():
                return
            if channel is not None:
                transport = channel.get_transport()
                if channel.closed or transport is None or not transport.is_active():
                    return
            self._stopping.wait(_HOLD_POLL_SECONDS)

    def _run_handler(self, host: str, user: str, command: str, stdin: str | None = None) -> ExecResult:
        try:
            if stdin is not None and self._stdin_handler is not None:
                result = self._stdin_handler[1](host, user, command, stdin)
            else:
                result = self._handler(host, user, command)
            # SSH's exit-status is a uint32 (RFC 4254, section 6.10): a POSIX shell's fits a byte, but Win32-OpenSSH
            # sends a Windows process's whole exit code (9009, certutil's 0x80070002: docs/windows-interfaces.md)
            if not isinstance(result, ExecResult) or not 0 <= result.exit_status <= 0xFFFFFFFF:
                raise TypeError(f"the handler must return an ExecResult with a uint32 status, not {result!r}")
            return result
        except Exception as exc:
            log.exception("%s: the handler failed on %r", host, command)
            return ExecResult(255, stderr=f"internal error: {type(exc).__name__}\n")

    def _take_drop_rule(self, faults: TransportFaults, command: str) -> DropRule | None:
        """The first live drop rule matching `command`, with one of its `times` used up."""
        with self._lock:
            for index, rule in enumerate(faults.drops):
                if rule.times > 0 and re.search(rule.pattern, command):
                    if rule.times > 1:
                        faults.drops[index] = dataclasses.replace(rule, times=rule.times - 1)
                    else:
                        del faults.drops[index]
                    return rule
        return None

    def _take_command_rule(self, faults: TransportFaults, command: str) -> CommandRule | None:
        """The first live command rule matching `command` once its skips are used up, with one of its `times` used."""
        rules = getattr(faults, "rules", None)
        if not rules:
            return None
        with self._lock:
            for index, rule in enumerate(rules):
                if rule.times <= 0 or not re.search(rule.pattern, command):
                    continue
                if rule.skip > 0:
                    rule.skip -= 1
                    continue
                rule.times -= 1
                if rule.times <= 0:
                    del rules[index]
                return rule
        return None
