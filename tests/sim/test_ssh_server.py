"""The simulator's SSH server, driven over real sockets on 127.0.0.1 by paramiko's SSHClient."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import paramiko
import pytest

from mqjournal.sim.protocol import DropRule, ExecResult, TransportFaults
from mqjournal.sim.server import (
    SERVER_VERSION,
    FleetSshServer,
    SimulatedHostEndpoint,
    load_or_create_host_key,
)

USER = "MQADMIN"


@pytest.fixture(scope="module")
def client_key() -> paramiko.PKey:
    return paramiko.ECDSAKey.generate()


@pytest.fixture(scope="module")
def host_key(tmp_path_factory: pytest.TempPathFactory) -> paramiko.PKey:
    return load_or_create_host_key(tmp_path_factory.mktemp("keys") / "host_key")


def public_line(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.get_base64()} tester@workstation"


class Recorder:
    """A handler that answers from a function and remembers what it was asked."""

    def __init__(self, answer: Callable[[str, str, str], ExecResult] | None = None) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self._answer = answer or (lambda host, user, command: ExecResult(0, stdout=f"{host}:{command}\n"))
        self._lock = threading.Lock()

    def __call__(self, host: str, user: str, command: str) -> ExecResult:
        with self._lock:
            self.calls.append((host, user, command))
        return self._answer(host, user, command)


@pytest.fixture
def serve(host_key: paramiko.PKey, client_key: paramiko.PKey) -> Iterator[Callable[..., FleetSshServer]]:
    """Start a fleet serving `names` (all sharing the module's host key unless `keys` says otherwise)."""
    started: list[FleetSshServer] = []

    def start(
        handler: Callable[[str, str, str], ExecResult],
        names: tuple[str, ...] = ("AS400A",),
        faults: dict[str, TransportFaults] | None = None,
        keys: dict[str, paramiko.PKey] | None = None,
    ) -> FleetSshServer:
        faults = faults if faults is not None else {}
        endpoints = [
            SimulatedHostEndpoint(
                name=name,
                port=0,
                host_key=(keys or {}).get(name, host_key),
                authorized_keys=[public_line(client_key)],
                users=frozenset({USER.lower()}),
            )
            for name in names
        ]
        fleet = FleetSshServer(endpoints, handler, lambda host: faults.setdefault(host, TransportFaults()))
        fleet.start()
        started.append(fleet)
        return fleet

    yield start
    for fleet in started:
        fleet.stop()


def connect(
    port: int, host_key: paramiko.PKey, pkey: paramiko.PKey, user: str = USER, **kwargs: object
) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.get_host_keys().add(f"[127.0.0.1]:{port}", host_key.get_name(), host_key)
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    try:
        client.connect(
            "127.0.0.1",
            port=port,
            username=user,
            pkey=pkey,
            look_for_keys=False,
            allow_agent=False,
            timeout=5,
            banner_timeout=5,
            auth_timeout=5,
            **kwargs,
        )
    except BaseException:
        client.close()
        raise
    return client


def run(client: paramiko.SSHClient, command: str) -> tuple[int, str, str]:
    _, stdout, stderr = client.exec_command(command, timeout=10)
    out, err = stdout.read().decode(), stderr.read().decode()
    return stdout.channel.recv_exit_status(), out, err


def assert_no_new_threads(baseline: set[threading.Thread], within: float = 3.0) -> None:
    deadline = time.monotonic() + within
    while set(threading.enumerate()) - baseline and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [thread.name for thread in set(threading.enumerate()) - baseline] == []


def test_exec_round_trip_separates_stdout_stderr_and_exit_status(serve, host_key, client_key) -> None:
    handler = Recorder(lambda host, user, command: ExecResult(3, stdout="out\n", stderr="err ✓\n"))
    fleet = serve(handler)

    with connect(fleet.ports["AS400A"], host_key, client_key, user="mqadmin") as client:
        assert client.get_transport().remote_version == SERVER_VERSION
        assert run(client, "system 'DSPJRN JRN(QMQM/AMQAJRN)'") == (3, "out\n", "err ✓\n")

    assert handler.calls == [("AS400A", "MQADMIN", "system 'DSPJRN JRN(QMQM/AMQAJRN)'")]


def test_many_commands_on_one_connection_in_sequence_and_concurrently(serve, host_key, client_key) -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def slow_echo(host: str, user: str, command: str) -> ExecResult:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.1)
        with lock:
            running[0] -= 1
        return ExecResult(0, stdout=command)

    fleet = serve(Recorder(slow_echo))
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        assert [run(client, f"echo {i}")[1] for i in range(5)] == [f"echo {i}" for i in range(5)]

        most[0] = 0
        with ThreadPoolExecutor(max_workers=8) as pool:
            outputs = list(pool.map(lambda i: run(client, f"echo {i}")[1], range(8)))
        assert outputs == [f"echo {i}" for i in range(8)]
        # They overlapped rather than queued behind each other (counted, not timed: a loaded machine is slow).
        assert most[0] > 1


def test_instant_commands_in_a_burst_all_get_their_answer(serve, host_key, client_key) -> None:
    # An instant handler answers while the server is still replying to the exec request itself: the output and
    # close must still follow that reply, or the client fails with "Channel closed".
    fleet = serve(lambda host, user, command: ExecResult(0, stdout=command))
    with connect(fleet.ports["AS400A"], host_key, client_key) as client, ThreadPoolExecutor(max_workers=8) as pool:
        outputs = list(pool.map(lambda i: run(client, f"echo {i}"), range(100)))
    assert outputs == [(0, f"echo {i}", "") for i in range(100)]


def test_malformed_authorized_key_line_is_rejected_up_front(host_key) -> None:
    endpoint = SimulatedHostEndpoint("AS400A", 0, host_key, ["ssh-ed25519 not-base64!"], frozenset({USER}))
    with pytest.raises(ValueError, match="public key"):
        FleetSshServer([endpoint], Recorder())


def test_each_host_answers_on_its_own_port(serve, host_key, client_key, tmp_path: Path) -> None:
    other_key = load_or_create_host_key(tmp_path / "b_key")
    fleet = serve(Recorder(), names=("AS400A", "AS400B"), keys={"AS400B": other_key})
    ports = fleet.ports
    assert len(set(ports.values())) == 2

    with connect(ports["AS400A"], host_key, client_key) as a, connect(ports["AS400B"], other_key, client_key) as b:
        assert run(a, "hostname") == (0, "AS400A:hostname\n", "")
        assert run(b, "hostname") == (0, "AS400B:hostname\n", "")


def test_unknown_client_key_is_refused(serve, host_key) -> None:
    fleet = serve(Recorder())
    with pytest.raises(paramiko.AuthenticationException):
        connect(fleet.ports["AS400A"], host_key, paramiko.ECDSAKey.generate())


def test_unknown_user_is_refused(serve, host_key, client_key) -> None:
    fleet = serve(Recorder())
    with pytest.raises(paramiko.AuthenticationException):
        connect(fleet.ports["AS400A"], host_key, client_key, user="QSECOFR")


def test_password_authentication_is_not_offered(serve, host_key) -> None:
    fleet = serve(Recorder())
    with pytest.raises(paramiko.BadAuthenticationType) as refused:
        connect(fleet.ports["AS400A"], host_key, None, password="secret")
    assert refused.value.allowed_types == ["publickey"]


def test_client_detects_a_host_key_it_did_not_pin(serve, host_key, client_key) -> None:
    fleet = serve(Recorder())
    with pytest.raises(paramiko.BadHostKeyException):
        connect(fleet.ports["AS400A"], paramiko.ECDSAKey.generate(), client_key)


def test_host_key_survives_a_restart(host_key, client_key, tmp_path: Path, serve) -> None:
    first = load_or_create_host_key(tmp_path / "ssh" / "host_key")
    assert (tmp_path / "ssh" / "host_key").stat().st_mode & 0o077 == 0
    again = load_or_create_host_key(tmp_path / "ssh" / "host_key")
    assert again.asbytes() == first.asbytes()

    # A client that pinned the first run's key accepts the restarted simulator.
    fleet = serve(Recorder(), keys={"AS400A": again})
    with connect(fleet.ports["AS400A"], first, client_key) as client:
        assert run(client, "true")[0] == 0


def test_shell_requests_are_refused(serve, host_key, client_key) -> None:
    fleet = serve(Recorder())
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        channel = client.get_transport().open_session()
        with pytest.raises(paramiko.SSHException):
            channel.invoke_shell()
        assert run(client, "true")[0] == 0  # the connection is still usable


def test_delay_fault_slows_the_command(serve, host_key, client_key) -> None:
    faults = {"AS400A": TransportFaults(delay_seconds=0.5)}
    fleet = serve(Recorder(), faults=faults)
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        started = time.monotonic()
        assert run(client, "true")[0] == 0
        assert time.monotonic() - started >= 0.5


# A dropped connection looks the same to the client whether the command ran or not: exec_command succeeds (the
# exec request was accepted), then both streams end empty, recv_exit_status() gives -1 (no exit status ever came)
# and the transport is no longer active, so the next exec_command raises SSHException("SSH session not active").


def assert_dropped(client: paramiko.SSHClient, command: str) -> None:
    assert run(client, command) == (-1, "", "")
    assert not client.get_transport().is_active()
    with pytest.raises(paramiko.SSHException):
        client.exec_command("true")


def test_drop_before_run_closes_the_connection_without_running(serve, host_key, client_key) -> None:
    faults = {"AS400A": TransportFaults(drops=[DropRule(pattern=r"DLTJRNRCV", times=2)])}
    handler = Recorder()
    fleet = serve(handler, faults=faults)
    port = fleet.ports["AS400A"]

    with connect(port, host_key, client_key) as client:
        assert run(client, "system 'DSPJRN'")[0] == 0  # does not match: served normally
        assert_dropped(client, "system 'DLTJRNRCV JRNRCV(QMQM/AMQA000001)'")
    assert faults["AS400A"].drops == [DropRule(pattern=r"DLTJRNRCV", times=1)]

    with connect(port, host_key, client_key) as client:
        assert_dropped(client, "system 'DLTJRNRCV JRNRCV(QMQM/AMQA000002)'")
    assert faults["AS400A"].drops == []

    with connect(port, host_key, client_key) as client:
        assert run(client, "system 'DLTJRNRCV JRNRCV(QMQM/AMQA000003)'")[0] == 0  # the rule is spent
    assert [command for _, _, command in handler.calls] == [
        "system 'DSPJRN'",
        "system 'DLTJRNRCV JRNRCV(QMQM/AMQA000003)'",
    ]


def test_drop_after_run_runs_the_command_then_closes_the_connection(serve, host_key, client_key) -> None:
    faults = {"AS400A": TransportFaults(drops=[DropRule(pattern="CHGJRN", after_run=True)])}
    handler = Recorder()
    fleet = serve(handler, faults=faults)

    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        assert_dropped(client, "system 'CHGJRN JRN(QMQM/AMQAJRN) JRNRCV(*GEN)'")
    assert handler.calls == [("AS400A", USER, "system 'CHGJRN JRN(QMQM/AMQAJRN) JRNRCV(*GEN)'")]
    assert faults["AS400A"].drops == []


def test_refused_connections_fail_before_the_banner(serve, host_key, client_key) -> None:
    faults = {"AS400A": TransportFaults(refuse_connections=True)}
    fleet = serve(Recorder(), faults=faults)
    with pytest.raises(paramiko.SSHException, match="banner"):
        connect(fleet.ports["AS400A"], host_key, client_key)

    faults["AS400A"].refuse_connections = False
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        assert run(client, "true")[0] == 0


def test_handler_exception_answers_255_and_keeps_serving(serve, host_key, client_key, caplog) -> None:
    def answer(host: str, user: str, command: str) -> ExecResult:
        if command == "boom":
            raise RuntimeError("catalog exploded")
        return ExecResult(0, stdout="fine\n")

    fleet = serve(Recorder(answer))
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        status, out, err = run(client, "boom")
        assert (status, out) == (255, "")
        assert err.strip() and "\n" not in err.strip()
        assert run(client, "ok") == (0, "fine\n", "")
    assert any(r.exc_info and "catalog exploded" in str(r.exc_info[1]) for r in caplog.records)


def test_one_megabyte_of_output_arrives_whole(serve, host_key, client_key) -> None:
    payload = "".join(f"{i:07d} AMQA{i:06d}\n" for i in range(60_000))[: 1 << 20]
    fleet = serve(Recorder(lambda host, user, command: ExecResult(0, stdout=payload, stderr="done\n")))
    with connect(fleet.ports["AS400A"], host_key, client_key) as client:
        assert run(client, "big") == (0, payload, "done\n")


def test_probes_and_aborted_handshakes_leave_no_trace(serve, host_key, client_key, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    fleet = serve(Recorder())
    port = fleet.ports["AS400A"]
    threads_before = set(threading.enumerate())

    socket.create_connection(("127.0.0.1", port)).close()  # a port scan
    with socket.create_connection(("127.0.0.1", port)) as probe:  # something that is not SSH at all
        probe.sendall(b"GET / HTTP/1.0\r\n\r\n")
        probe.settimeout(5)
        assert probe.recv(100).startswith(b"SSH-2.0-OpenSSH_9.6")
    with socket.create_connection(("127.0.0.1", port)) as half:  # a banner, then nothing
        half.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
        half.recv(100)

    with connect(port, host_key, client_key) as client:
        assert run(client, "true")[0] == 0
    noisy = [r for r in caplog.records if r.name.startswith("mqjournal") and r.levelno > logging.INFO]
    assert noisy == []

    assert_no_new_threads(threads_before)  # every connection's threads end with the connection


def test_stop_closes_ports_and_connections_quickly(serve, host_key, client_key) -> None:
    baseline = set(threading.enumerate())
    fleet = serve(Recorder(), names=("AS400A", "AS400B"))
    ports = fleet.ports
    client = connect(ports["AS400A"], host_key, client_key)
    assert run(client, "true")[0] == 0

    started = time.monotonic()
    fleet.stop()
    # Not held up by the open connection's idle wait (paramiko's is minutes); loose, for a loaded machine.
    assert time.monotonic() - started < 10

    for port in ports.values():
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=1)
    client.get_transport().join(2)  # the client's transport thread notices the closed connection
    assert not client.get_transport().is_active()
    client.close()
    assert_no_new_threads(baseline)
