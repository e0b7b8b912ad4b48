"""The SSH session to one IBM i host: one verified connection, reused for every command, with an audit trail.

The one hard question here is what to do when the connection fails while a command is out. Then nobody knows
whether the host ran it, so only a command that is safe to run twice (`Command.idempotent`) is sent again; for any
other the caller gets `OutcomeUnknown` and must look at the host before deciding. A failure before the command
left (connecting, opening the channel) is always retried. A command that ran and failed (non-zero exit status,
CPF messages) is an answer, not a transport failure: it is returned, never retried.

Every command is also written to the Python log at INFO (the task log, under Airflow): the CL command as an admin
types it, then each message IBM i answered with (CPC..., CPF..., CPD..., CPI...), then the exit status. An SQL
command is logged by each statement's start and its row count, never its rows (a receiver chain is thousands).
"""

from __future__ import annotations

import base64
import binascii
import functools
import logging
import re
import shlex
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, NoReturn

import paramiko
from paramiko.pkey import UnknownKeyType

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import watchdog as alarms
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.commands import Command, sql_statements
from mqjournal.ibmi.readings import cl_messages
from mqjournal.names import SCRATCH_DIRECTORY
from mqjournal.names import scratch_directory as scratch_directory_named
from mqjournal.settings import SshSettings

__all__ = [
    "DEFAULT_MAX_ANSWER_BYTES",
    "AnswerTooLarge",
    "AuthenticationRejected",
    "CommandOutput",
    "CommandTimedOut",
    "ConnectFactory",
    "ConnectionLost",
    "HostKeyRejected",
    "HostUnreachable",
    "IbmiSession",
    "OpenSshLogin",
    "OutcomeUnknown",
    "RetryPolicy",
    "TransportError",
    "log_answer",
    "redact",
    "shown",
    "ssh_connector",
]

log = logging.getLogger(__name__)

_MSG_ID = re.compile(r"^([A-Z]{3}[0-9A-F]{4}): ", re.MULTILINE)
_VERIFY_KEY = "verify the host's key fingerprint and add it to known_hosts / the connection's host_key"
_CHECK_NETWORK = "check the network to the partition and its sshd, then run the command again"

_DEFAULTS = SshSettings()
"""The documented defaults (mqjournal.settings); a caller with settings of its own passes them explicitly."""

DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The most a command's answer (stdout and stderr together) may bring back: far above any CL or SQL answer
mqjournal asks for (a receiver chain of thousands of rows is a few MB), far below what would hurt a worker."""


# --- what a command gives back ---------------------------------------------------------------------------------


def _msg_ids(*texts: str) -> list[str]:
    # Line by line, not a MULTILINE search: a db2 answer is a few hundred lines thousands of columns wide, and the
    # search tried a match at each of its characters, for every command a session sends.
    return [match.group(1) for text in texts for line in text.split("\n") if (match := _MSG_ID.match(line))]


@dataclass(frozen=True)
class CommandOutput:
    """What a command that ran gave back; a non-zero `exit_status` is the host's answer, not a transport error."""

    exit_status: int
    stdout: str
    stderr: str
    duration_ms: float  # the whole attempt, a (re)connect included, as in its audit record

    @property
    def msg_ids(self) -> list[str]:
        """IDs of the IBM i messages in the output ("CPF2105: ..." lines), stdout first, in order."""
        return _msg_ids(self.stdout, self.stderr)


# --- what the log shows of a command ---------------------------------------------------------------------------

_STATEMENT_SHOWN = 100  # characters of an SQL statement in the log: enough to tell which query it is
_ANSWER_SHOWN = 200  # characters of an unexplained stderr line in the log
# A CL parameter or SQL option that would carry a secret. mqjournal builds none (its commands are made of validated
# object names, and the audit log records them whole), so this only guards a future command from leaking one.
_SECRET = re.compile(
    r"(?P<key>\b(?:PASSWORD|PASSWD|PWD|NEWPWD|OLDPWD|PASSPHRASE|PWDEXP|SECRET|TOKEN)\b)"
    r"(?P<sep>\s*\(\s*|\s*=\s*|\s+)(?P<value>'[^']*'|\"[^\"]*\"|[^\s)]+)",
    re.IGNORECASE,
)
_SQL_RESULT = re.compile(r"(?P<rows>\d+) RECORD\(S\) SELECTED\.|SQLSTATE: (?P<state>\w+)")


def redact(text: str) -> str:
    """`text` with the value of every password-like parameter replaced by ***."""
    return _SECRET.sub(lambda m: f"{m['key']}{m['sep']}***", text)


def shown(command: Command | str) -> str:
    """A command as an admin reads it: the CL of ``system '...'`` as typed on a command line, an SQL command as its
    statements (each cut to its start), anything else as sent; password-like values never."""
    return _shown(str(command))


@functools.lru_cache(maxsize=1024)  # the same commands go to many queue managers (see commands._sql_statements)
def _shown(text: str) -> str:
    statements = sql_statements(text)
    if statements is not None:
        count = f" ({len(statements)} statements)" if len(statements) > 1 else ""
        return f"SQL{count}: " + " | ".join(_statement_start(s) for s in statements)
    if text.startswith("system "):
        try:
            argv = shlex.split(text)
        except ValueError:
            argv = []
        if len(argv) == 2:
            return redact(argv[1])
    return redact(text)


def _statement_start(statement: str) -> str:
    first = redact(" ".join(statement.split()))
    return first if len(first) <= _STATEMENT_SHOWN else first[: _STATEMENT_SHOWN - 3] + "..."


def _sql_answer(stdout: str) -> str:
    """Each statement's row count, or its SQLSTATE when it failed, in order: `1 row; 240 rows; SQLSTATE 42704`."""
    parts = []
    # Each line stripped first: on db2's lines of thousands of blanks, the pattern's leading and trailing blanks
    # backtracked over every one of them at every line start.
    for match in filter(None, (_SQL_RESULT.fullmatch(line.strip()) for line in stdout.split("\n"))):
        if match["rows"] is not None:
            rows = int(match["rows"])
            parts.append(f"{rows} row" if rows == 1 else f"{rows} rows")
        else:
            parts.append(f"SQLSTATE {match['state']}")
    return "; ".join(parts) or "no result"


def log_answer(host: str, command: Command, output: CommandOutput) -> None:
    """The answer to `command` in the log: each IBM i message (ID and text), then the exit status and time; for SQL
    the row count of each statement instead of the rows."""
    status = f"exit status {output.exit_status}, {output.duration_ms:.0f} ms"
    if sql_statements(command.text) is not None:
        log.info("%s:   %s (%s)", host, _sql_answer(output.stdout), status)
        return
    messages = cl_messages(output.stdout, output.stderr)
    for message in messages:
        log.info("%s:   %s %s", host, message.id, message.text)
    if not messages and output.exit_status != 0:
        said = next((line.strip() for line in output.stderr.splitlines() if line.strip()), "")
        if said:
            status += f": {redact(said)[:_ANSWER_SHOWN]}"
    log.info("%s:   %s", host, status)


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = _DEFAULTS.retry_attempts
    first_delay: float = _DEFAULTS.retry_first_delay
    factor: float = _DEFAULTS.retry_factor
    max_delay: float = _DEFAULTS.retry_max_delay

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.first_delay < 0 or self.factor < 1 or self.max_delay < 0:
            raise ValueError(f"not a usable retry policy: {self}")

    @classmethod
    def of(cls, ssh: SshSettings) -> RetryPolicy:
        return cls(ssh.retry_attempts, ssh.retry_first_delay, ssh.retry_factor, ssh.retry_max_delay)

    def delay_after(self, attempt: int) -> float:
        """Seconds to wait after failed attempt `attempt` (1-based) before the next one."""
        return min(self.max_delay, self.first_delay * self.factor ** (attempt - 1))


# --- errors ---------------------------------------------------------------------------------------------------


class TransportError(MqJournalError):
    """A command could not be brought to an IBM i host, or its answer back."""


class HostKeyRejected(TransportError):
    """The host's SSH key is unknown or differs from the known one; never retried (it could be an impostor)."""


class AuthenticationRejected(TransportError):
    """The host refused the login (or the login key could not be loaded); never retried."""


class HostUnreachable(TransportError):
    """No SSH connection could be made; nothing was sent, so it is retried."""


class ConnectionLost(TransportError):
    """The connection dropped; `sent` tells whether the command had left (then it may have run)."""

    def __init__(self, obj: str, problem: str, action: str, *, sent: bool) -> None:
        self.sent = sent
        super().__init__(obj, problem, action)


class CommandTimedOut(TransportError):
    """The command did not finish within the session's command_timeout; it may still be running."""


class AnswerTooLarge(TransportError):
    """The host sent back more than the session's `max_answer_bytes`: the channel was closed, the rest dropped.

    The command did run (it was answering), so one that must not run twice ends in OutcomeUnknown; an idempotent one
    is not sent again either, since it would only bring the same answer.
    """


class OutcomeUnknown(TransportError):
    """A command that must not run twice was sent, and no answer came back."""

    def __init__(self, host: str, command: Command | str, *, cause: str = "no answer came back") -> None:
        self.command = str(command)
        super().__init__(
            host,
            f"the outcome of {self.command} is unknown: {cause}",
            "re-read the state on the host before retrying; the command may have run",
        )


# --- connecting -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenSshLogin:
    """How OpenSSH's own client reaches the host an `ssh_connector` connects to: the same address, user, login key
    and host-key check. Save file downloads use it (mqjournal.ibmi.sftpcopy: OpenSSH's C encryption, in its own
    process, copies at the link's speed where paramiko's does not); commands never do."""

    address: str
    port: int
    user: str
    known_hosts_line: str | None
    """The pinned host key as a known_hosts line for address:port: then the only key accepted."""
    known_hosts: Path | None
    """Without a pin: the known_hosts file the host must be listed in."""
    key_file: Path | None
    passphrase: str | None = field(default=None, repr=False)
    key: paramiko.PKey | None = field(default=None, repr=False)
    proxy_command: str | None = None
    connect_timeout: float = _DEFAULTS.connect_timeout

    def load_key(self) -> paramiko.PKey:
        """The login key (read from `key_file` with its passphrase, as `ssh_connector` reads it)."""
        if self.key is not None:
            return self.key
        return _load_key(self.key_file, self.passphrase, f"{self.user}@{self.address}:{self.port}")


class _Connector:
    """A ConnectFactory that also says how OpenSSH's client reaches the same host (None: it cannot, e.g. a
    password login, which OpenSSH takes only from a terminal)."""

    def __init__(self, connect: ConnectFactory, openssh: OpenSshLogin | None) -> None:
        self._connect, self.openssh = connect, openssh

    def __call__(self) -> paramiko.SSHClient:
        return self._connect()


ConnectFactory = Callable[[], paramiko.SSHClient]
"""Returns a connected client; raises paramiko/socket errors (classified by IbmiSession) or a TransportError."""


class _UnknownHostKey(paramiko.SSHException):
    def __init__(self, hostname: str, key: paramiko.PKey) -> None:
        self.key = key
        super().__init__(f"Server {hostname!r} not found in known_hosts")


class _RejectPolicy(paramiko.RejectPolicy):
    # RejectPolicy's exception drops the offered key; keep it, so the error can show the fingerprint to verify.
    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> NoReturn:
        raise _UnknownHostKey(hostname, key)


class _HostKeyMismatch(paramiko.BadHostKeyException):
    """The host presented another key than the one it is verified against; `source` says which that was."""

    def __init__(self, hostname: str, got_key: paramiko.PKey, expected_key: paramiko.PKey, source: str) -> None:
        self.source = source
        super().__init__(hostname, got_key, expected_key)


def _parse_host_key(text: str) -> paramiko.PKey:
    parts = text.split()
    if len(parts) < 2:
        raise ValueError("host_key must read 'type base64' as in known_hosts, e.g. 'ecdsa-sha2-nistp256 AAAA...'")
    try:
        return paramiko.PKey.from_type_string(parts[0], base64.b64decode(parts[1], validate=True))
    except (binascii.Error, ValueError, paramiko.SSHException, UnknownKeyType) as exc:
        raise ValueError(f"host_key is not a public key of type {parts[0]!r} ({type(exc).__name__})") from None


def ssh_connector(
    *,
    address: str,
    port: int,
    user: str,
    key: paramiko.PKey | None = None,
    key_file: Path | None = None,
    passphrase: str | None = None,
    password: str | None = None,
    known_hosts: Path | None = None,
    host_key: str | None = None,
    timeout: float = _DEFAULTS.connect_timeout,
    look_for_keys: bool = False,
    proxy_command: str | None = None,
    disabled_algorithms: dict | None = None,
    compress: bool = False,
    keepalive_interval: float = 0,
) -> ConnectFactory:
    """A factory of connections to `user@address:port` that verify the host key before anything else.

    With a pinned `host_key` ("type base64"), that key and only that key is accepted: `known_hosts` is not read, so
    no entry there (of any key type) can let another key in, and a mismatch names both fingerprints. Without one,
    the key must match `known_hosts`. An unknown key is rejected, never learnt. The login uses `key`, or `key_file`
    (decrypted with `passphrase`, re-read at each connect so that a rotated key is picked up), or `password`, or
    with `look_for_keys` the user's ~/.ssh keys. `proxy_command` (an ssh_config ProxyCommand) carries the
    connection instead of a direct TCP socket; `keepalive_interval` (seconds, 0: none) keeps a connection idle
    during a long command alive through firewalls.
    """
    if known_hosts is None and host_key is None:
        raise ValueError(f"{address}:{port}: give known_hosts or host_key; connecting without verifying is refused")
    if key is not None and key_file is not None:
        raise ValueError(f"{address}:{port}: give at most one of key and key_file")
    if key is None and key_file is None and password is None and not look_for_keys:
        raise ValueError(f"{address}:{port}: give a key, a key_file or a password to log in with")
    pinned = _parse_host_key(host_key) if host_key is not None else None
    # The name paramiko looks the host up by, as OpenSSH writes it in known_hosts.
    known_name = address if port == 22 else f"[{address}]:{port}"
    where = f"{user}@{address}:{port}"

    def connect() -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(_RejectPolicy())
        if pinned is not None:
            # The pin alone: paramiko accepts any key listed for the host, whatever its type, so known_hosts stays out.
            client.get_host_keys().add(known_name, pinned.get_name(), pinned)
        else:
            try:
                client.load_host_keys(str(known_hosts))
            except OSError as exc:
                problem = f"cannot read known_hosts {known_hosts} ({exc.strerror})"
                raise HostKeyRejected(where, problem, _VERIFY_KEY) from None
        pkey = _load_key(key_file, passphrase, where) if key_file is not None else key
        sock: paramiko.ProxyCommand | socket.socket
        if proxy_command:
            sock = paramiko.ProxyCommand(proxy_command)
        else:
            sock = socket.create_connection((address, port), timeout=timeout)
            # Each command is a few small request/reply packets: Nagle plus delayed ACKs would add ~40 ms to each.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            try:
                client.connect(
                    address,
                    port=port,
                    username=user,
                    pkey=pkey,
                    password=password,
                    sock=sock,
                    timeout=timeout,
                    banner_timeout=timeout,
                    auth_timeout=timeout,
                    channel_timeout=timeout,
                    look_for_keys=look_for_keys,
                    allow_agent=False,
                    disabled_algorithms=disabled_algorithms,
                    compress=compress,
                )
            except paramiko.BadHostKeyException as exc:
                source = "pinned" if pinned is not None else f"known_hosts {known_hosts}"
                raise _HostKeyMismatch(known_name, exc.key, exc.expected_key, source) from None
            transport = client.get_transport()
            if transport is None:  # connect() returned without a transport: nothing was verified
                raise paramiko.SSHException("SSH session not active after connecting")
            if pinned is not None:
                # Checked again here, not left to paramiko's lookup alone: the pin is the whole point.
                presented = transport.get_remote_server_key()
                if presented != pinned:
                    raise _HostKeyMismatch(known_name, presented, pinned, "pinned")
            if keepalive_interval:
                transport.set_keepalive(int(keepalive_interval))
        except BaseException:
            client.close()
            sock.close()
            raise
        return client

    login = None
    if (key is not None or key_file is not None) and not disabled_algorithms:
        # disabled_algorithms are paramiko's names, with no faithful OpenSSH spelling: such a host keeps paramiko.
        login = OpenSshLogin(
            address=address,
            port=port,
            user=user,
            known_hosts_line=f"{known_name} {pinned.get_name()} {pinned.get_base64()}" if pinned is not None else None,
            known_hosts=None if pinned is not None else known_hosts,
            key_file=key_file,
            passphrase=passphrase,
            key=key,
            proxy_command=proxy_command,
            connect_timeout=timeout,
        )
    return _Connector(connect, login)


def _load_key(path: Path | None, passphrase: str | None, where: str) -> paramiko.PKey:
    assert path is not None
    try:
        # cryptography, underneath, takes the passphrase as bytes only.
        # The stub says str, after paramiko's own annotation; at run time the password goes to cryptography as is.
        password = passphrase.encode() if passphrase is not None else None
        return paramiko.PKey.from_path(path, password)  # type: ignore[arg-type]  # bytes: see above
    except (OSError, ValueError, TypeError, paramiko.SSHException, UnknownKeyType) as exc:
        # Only the exception's type: the text of a key parser's error is not worth the risk of quoting key data.
        raise AuthenticationRejected(
            where,
            f"cannot load the private key file {path} ({type(exc).__name__})",
            "check the key file, its permissions and its passphrase",
        ) from None


def _connect_error(host: str, user: str, exc: Exception) -> TransportError:
    if isinstance(exc, _HostKeyMismatch):
        return HostKeyRejected(
            host,
            f"the host presented the {exc.key.get_name()} key {exc.key.fingerprint}, not the {exc.source} "
            f"{exc.expected_key.get_name()} key {exc.expected_key.fingerprint}; it may have been reinstalled, "
            "or be an impostor",
            _VERIFY_KEY,
        )
    if isinstance(exc, paramiko.BadHostKeyException):
        return HostKeyRejected(
            host,
            f"the host presented the {exc.key.get_name()} key {exc.key.fingerprint}, "
            f"not the known {exc.expected_key.fingerprint}; it may have been reinstalled, or be an impostor",
            _VERIFY_KEY,
        )
    if isinstance(exc, _UnknownHostKey):
        return HostKeyRejected(
            host, f"the host's {exc.key.get_name()} key {exc.key.fingerprint} is not known", _VERIFY_KEY
        )
    if isinstance(exc, paramiko.SSHException) and "not found in known_hosts" in str(exc):
        return HostKeyRejected(host, "the host's key is not known", _VERIFY_KEY)
    if isinstance(exc, paramiko.AuthenticationException):
        return AuthenticationRejected(
            host,
            f"the host refused the login of {user} with the configured key",
            f"authorize the key for {user} on the host (~/.ssh/authorized_keys) or fix the connection's user and key",
        )
    return HostUnreachable(
        host,
        f"cannot connect ({type(exc).__name__}: {exc})",
        "check that the partition is up, sshd runs (STRTCPSVR SERVER(*SSHD)), and the address and port are right",
    )


# --- the session ----------------------------------------------------------------------------------------------


def _ms(started: float) -> float:
    return (time.monotonic() - started) * 1000.0


def _text(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


class IbmiSession:
    """One SSH connection to one IBM i host, reused for every command and replaced when it drops."""

    def __init__(
        self,
        host: str,
        user: str,
        connect: ConnectFactory,
        *,
        audit: AuditLog,
        command_timeout: float = _DEFAULTS.command_timeout,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], object] = time.sleep,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
        sql_runner: Literal["qsh", "db2"] = "qsh",
        scratch_directory: str = SCRATCH_DIRECTORY,
    ) -> None:
        """`max_answer_bytes`: the most one command's stdout and stderr together may bring back (64 MiB by
        default); past it the channel is closed and the command ends in AnswerTooLarge (see that class).
        `sql_runner`: how SQL reaches the host's db2 utility, the fleet file's `sql_runner` for the host: "qsh"
        (through /QOpenSys/usr/bin/qsh -c, what a stock partition has) or "db2" (a bare db2, where an admin linked
        it); every caller builds its SQL commands with it (commands.sql(..., runner=session.sql_runner)).
        `scratch_directory`: the fleet file's `scratch_directory` for the host, where a save file is copied to a
        stream file for its download (streamcopy); InvalidName unless it is a plain absolute IFS directory."""
        if max_answer_bytes < 1:
            raise ValueError(f"max_answer_bytes must be positive, not {max_answer_bytes}")
        if sql_runner not in ("qsh", "db2"):
            raise ValueError(f"sql_runner must be 'qsh' or 'db2', not {sql_runner!r}")
        self.host = host
        self.user = user
        self.sql_runner = sql_runner
        self.scratch_directory = scratch_directory_named(scratch_directory)
        self.round_trips = 0  # commands sent, retries included
        self._connect = connect
        self._audit = audit
        self._command_timeout = command_timeout
        self._retry = retry
        self._sleep = sleep
        self._max_answer_bytes = max_answer_bytes
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()
        self._on_close: list[Callable[[], object]] = []

    @property
    def audit(self) -> AuditLog:
        """The audit trail this session writes: the executor reconciles interrupted commands from it."""
        return self._audit

    @property
    def retry(self) -> RetryPolicy:
        """How often and after what pause a failed attempt is made again (save file transfers follow it too)."""
        return self._retry

    @property
    def command_timeout(self) -> float:
        """Seconds a command, or one SFTP request of a transfer, may take before it counts as stalled."""
        return self._command_timeout

    @property
    def openssh(self) -> OpenSshLogin | None:
        """How OpenSSH's client reaches this host, when the session's connections come from `ssh_connector`."""
        login = getattr(self._connect, "openssh", None)
        return login if isinstance(login, OpenSshLogin) else None

    def pause(self, seconds: float) -> None:
        """Wait between attempts, as the session does (tests pass a `sleep` that does not)."""
        self._sleep(seconds)

    @contextmanager
    def sftp(self) -> Iterator[paramiko.SFTPClient]:
        """An SFTP channel on this session's connection (connecting first if need be), each request bounded by the
        command timeout: for save file transfers (mqjournal.ibmi.transfer).

        The SFTP server's answers (no such file, permission denied, a failure) come out as paramiko's OSErrors; a
        connection that drops or stalls comes out as ConnectionLost(sent=True), and the connection is dropped with it
        so that the next command or transfer starts on a new one. Failing to open the channel is
        ConnectionLost(sent=False): nothing was sent.
        """
        client = self._connected()
        transport = client.get_transport()
        try:
            if transport is None:
                raise paramiko.SSHException("SSH session not active")
            channel = transport.open_session(timeout=self._command_timeout)
            channel.settimeout(self._command_timeout)
            channel.invoke_subsystem("sftp")
            sftp = paramiko.SFTPClient(channel)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            self._discard(client)
            raise ConnectionLost(
                self.host,
                f"no SFTP channel could be opened ({type(exc).__name__}: {exc})",
                _CHECK_NETWORK + "; an SFTP channel also needs sshd's sftp subsystem (Subsystem sftp in sshd_config)",
                sent=False,
            ) from exc
        with self._lock:
            self.round_trips += 1
        try:
            yield sftp
        except (paramiko.SSHException, EOFError, OSError) as exc:
            # An SFTP status (ENOENT, EACCES, a failure) leaves the connection up; a drop or a stall does not.
            dropped = isinstance(exc, (paramiko.SSHException, EOFError, TimeoutError)) or not transport.is_active()
            if not dropped:
                raise
            self._discard(client)
            raise ConnectionLost(
                self.host,
                f"the connection dropped or stalled during an SFTP transfer ({type(exc).__name__}: {exc})",
                _CHECK_NETWORK,
                sent=True,
            ) from exc
        finally:
            # Closing sends a message on the connection: on one that just dropped, paramiko raises EOFError there,
            # which would replace the error that says what happened (and escape the callers' handlers unnamed).
            with suppress(paramiko.SSHException, EOFError, OSError):
                sftp.close()

    def __enter__(self) -> IbmiSession:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            ending, self._on_close = self._on_close, []
        if client is not None:
            client.close()
        for end in ending:
            try:
                end()
            except Exception:  # one that fails must not keep the others (or the caller's own close) from running
                log.warning("%s: could not end what the session held", self.host, exc_info=True)

    def on_close(self, end: Callable[[], object]) -> None:
        """Call `end` when the session closes: what lives as long as it does (sftpcopy's connection master)."""
        with self._lock:
            self._on_close.append(end)

    def run(self, command: Command) -> CommandOutput:
        """Run `command` and return its output, whatever its exit status; see the module doc for the retries."""
        attempts = self._retry.attempts
        for attempt in range(1, attempts + 1):
            try:
                return self._attempt(command, attempt)
            except AnswerTooLarge as exc:
                # It ran and was answering: never sent again, and for a non-idempotent command nobody knows its result.
                if not command.idempotent:
                    log.error(
                        "%s: %s ran but its answer was cut off at the cap; not sending it again",
                        self.host,
                        shown(command),
                    )
                    raise OutcomeUnknown(self.host, command, cause=exc.problem) from exc
                raise
            except (HostUnreachable, ConnectionLost, CommandTimedOut) as exc:
                sent = not isinstance(exc, HostUnreachable) and getattr(exc, "sent", True)
                if sent and not command.idempotent:
                    log.error(
                        "%s: %s was sent but no answer came back; not sending it again", self.host, shown(command)
                    )
                    cause = (
                        f"it did not finish within {self._command_timeout:g} s"
                        if isinstance(exc, CommandTimedOut)
                        else "the connection dropped before its answer came back"
                    )
                    raise OutcomeUnknown(self.host, command, cause=cause) from exc
                if attempt == attempts:
                    log.error("%s: giving up on %s after %d attempt(s): %s", self.host, shown(command), attempts, exc)
                    raise
                delay = self._retry.delay_after(attempt)
                log.warning(
                    "%s: %s; trying %s again in %.2f s (%d/%d)",
                    self.host,
                    exc,
                    shown(command),
                    delay,
                    attempt + 1,
                    attempts,
                )
                self._sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, command: Command, attempt: int) -> CommandOutput:
        started = time.monotonic()
        out, err = bytearray(), bytearray()
        # Recorded before anything leaves: if this write fails the command is not sent, and if the worker dies
        # while the host runs it, the intent is what the next run finds and reconciles.
        intent_id = self._audit.intent(
            host=self.host, user=self.user, command=command.text, attempt=attempt, stdin=command.stdin
        )

        def audit(outcome: str, exit_status: int | None = None, error: str | None = None) -> None:
            self._audit.record(
                host=self.host,
                user=self.user,
                command=command.text,
                exit_status=exit_status,
                msg_ids=_msg_ids(_text(out), _text(err)),
                duration_ms=_ms(started),
                attempt=attempt,
                outcome=outcome,
                error=error,
                intent_id=intent_id,
            )

        client: paramiko.SSHClient | None = None
        try:
            client = self._connected()
            channel = self._open_channel(client)
            try:
                with self._lock:
                    self.round_trips += 1
                if attempt == 1:
                    log.info("%s: %s", self.host, shown(command))
                else:
                    log.info("%s: %s (attempt %d)", self.host, shown(command), attempt)
                status = self._exchange(channel, command, out, err, time.monotonic() + self._command_timeout)
            finally:
                channel.close()
        except TransportError as exc:
            if client is not None and isinstance(exc, (ConnectionLost, CommandTimedOut)):
                # A stalled or half-dead connection would fail the next command too; a new one costs little.
                self._discard(client)
            audit("timeout" if isinstance(exc, CommandTimedOut) else "transport_error", error=str(exc))
            raise
        output = CommandOutput(status, _text(out), _text(err), _ms(started))
        audit("ok" if status == 0 else "failed", exit_status=status)
        log_answer(self.host, command, output)
        return output

    def _connected(self) -> paramiko.SSHClient:
        # Under the lock: threads sharing the session share one connection rather than racing to open several.
        with self._lock:
            if self._client is not None:
                transport = self._client.get_transport()
                if transport is not None and transport.is_active():
                    return self._client
                # It died while idle (IPL, idle timeout, an earlier drop): nothing is lost by replacing it.
                log.info("%s: the connection has closed; reconnecting", self.host)
                self._client.close()
                self._client = None
            log.debug("%s: connecting as %s", self.host, self.user)
            try:
                self._client = self._connect()
            except (OSError, EOFError, paramiko.SSHException) as exc:
                raise _connect_error(self.host, self.user, exc) from exc
            return self._client

    def _discard(self, client: paramiko.SSHClient) -> None:
        with self._lock:
            if self._client is client:
                self._client = None
        client.close()

    def _open_channel(self, client: paramiko.SSHClient) -> paramiko.Channel:
        transport = client.get_transport()
        try:
            if transport is None:
                raise paramiko.SSHException("SSH session not active")
            return transport.open_session(timeout=self._command_timeout)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise ConnectionLost(
                self.host,
                f"the connection was gone before the command was sent ({type(exc).__name__}: {exc})",
                _CHECK_NETWORK,
                sent=False,
            ) from exc

    def _exchange(
        self, channel: paramiko.Channel, command: Command, out: bytearray, err: bytearray, deadline: float
    ) -> int:
        """Send `command` on `channel` and read its output into `out`/`err` until its exit status, or raise."""
        # exec_command waits for the host's reply without any timeout; closing the channel is what ends the wait.
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            channel.close()

        watchdog = alarms.arm(deadline - time.monotonic(), expire)
        try:
            channel.exec_command(command.text)
            if command.stdin:
                channel.sendall(command.stdin.encode("utf-8"))
            channel.shutdown_write()  # end of file on the program's standard input
            watchdog.cancel()
            # stdout, then stderr: paramiko buffers the streams apart, so only a stderr beyond the SSH window (2 MB)
            # left unread could stall the host; CL and SQL messages are far smaller.
            for recv, sink in ((channel.recv, out), (channel.recv_stderr, err)):
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError
                    channel.settimeout(remaining)
                    chunk = recv(65536)
                    if not chunk:
                        break
                    sink += chunk
                    if len(out) + len(err) > self._max_answer_bytes:
                        raise self._too_large(command)  # the caller closes the channel: the rest is dropped
            if not channel.status_event.wait(max(0.0, deadline - time.monotonic())):
                raise TimeoutError
        except TimeoutError as exc:
            raise self._timed_out(command) from exc
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if expired.is_set():
                raise self._timed_out(command) from exc
            raise self._lost(command, f"{type(exc).__name__}: {exc}") from exc
        finally:
            watchdog.cancel()
        if channel.exit_status_ready() and channel.exit_status >= 0:
            return channel.exit_status
        if expired.is_set():
            raise self._timed_out(command)
        # The channel closed without an exit status: the connection dropped, before or after the command ran.
        raise self._lost(command, "the channel closed without an exit status")

    def _too_large(self, command: Command) -> AnswerTooLarge:
        return AnswerTooLarge(
            self.host,
            f"the answer to {command} passed the cap of {self._max_answer_bytes} bytes (stdout and stderr together), "
            "so the channel was closed and the rest dropped; the command did run",
            "narrow what the command returns, or raise the session's max_answer_bytes if such an answer is expected",
        )

    def _timed_out(self, command: Command) -> CommandTimedOut:
        return CommandTimedOut(
            self.host,
            f"{command} did not finish within {self._command_timeout:g} s; it may still be running",
            "look at the host's active jobs and job log before sending it again, or raise command_timeout",
        )

    def _lost(self, command: Command, reason: str) -> ConnectionLost:
        return ConnectionLost(
            self.host,
            f"the connection dropped before the answer to {command} came back ({reason})",
            _CHECK_NETWORK,
            sent=True,
        )
