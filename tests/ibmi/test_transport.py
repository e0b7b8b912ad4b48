"""IbmiSession and ssh_connector against the simulated partition, over real SSH on loopback."""

from __future__ import annotations

import io
import logging
from datetime import datetime, timedelta
from pathlib import Path

import paramiko
import pytest

from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import AuditLog, read_audit, read_events, unexplained_intents
from mqjournal.ibmi.commands import Command
from mqjournal.ibmi.db2out import parse_single
from mqjournal.ibmi.transport import (
    AuthenticationRejected,
    CommandOutput,
    CommandTimedOut,
    ConnectFactory,
    ConnectionLost,
    HostKeyRejected,
    HostUnreachable,
    IbmiSession,
    OutcomeUnknown,
    RetryPolicy,
    shown,
    ssh_connector,
)
from mqjournal.policy import Policy
from mqjournal.sim.protocol import DropRule
from tests.ibmi.executing import planned

AUDIT_FIELDS = {
    "event",
    "id",
    "at",
    "host",
    "user",
    "command",
    "exit_status",
    "msg_ids",
    "duration_ms",
    "attempt",
    "outcome",
    "error",
}

UNAME = Command("uname", idempotent=True)


class Counting:
    """Wraps a connect factory to count the connections the session opens."""

    def __init__(self, connect: ConnectFactory) -> None:
        self.connect = connect
        self.calls = 0

    def __call__(self) -> paramiko.SSHClient:
        self.calls += 1
        return self.connect()


def connector(sim_fleet, **overrides) -> ConnectFactory:
    settings = {
        "address": "127.0.0.1",
        "port": sim_fleet.ports["ibmi1"],
        "user": sim_fleet.config.user,
        "key": sim_fleet.service.client_key,
        "known_hosts": sim_fleet.config.known_hosts,
    }
    settings.update(overrides)
    return ssh_connector(**settings)


@pytest.fixture
def audit_path(tmp_path: Path) -> Path:
    return tmp_path / "audit" / "ibmi1.jsonl"


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_session(sim_fleet, audit_path, sleeps):
    sessions: list[IbmiSession] = []

    def make(connect: ConnectFactory | None = None, **kwargs) -> tuple[IbmiSession, Counting]:
        counting = Counting(connect or connector(sim_fleet))
        kwargs.setdefault("command_timeout", 5.0)
        session = IbmiSession(
            "ibmi1", sim_fleet.config.user, counting, audit=AuditLog(audit_path), sleep=sleeps.append, **kwargs
        )
        sessions.append(session)
        return session, counting

    yield make
    for session in sessions:
        session.close()


def outcomes(audit_path: Path) -> list[tuple[int, str]]:
    return [(r["attempt"], r["outcome"]) for r in read_audit(audit_path)]


def test_values_without_a_host() -> None:
    output = CommandOutput(1, "CPC2191: Object deleted.\nnot a message: CPF0000\n", "CPF2105: Not found.\n", 1.0)
    assert output.msg_ids == ["CPC2191", "CPF2105"]
    assert str(UNAME) == "uname"
    with pytest.raises(ValueError, match="single command"):
        Command("uname\nsystem 'DLTLIB QGPL'", idempotent=True)
    assert [RetryPolicy(attempts=6).delay_after(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 4.0, 8.0]
    assert RetryPolicy(max_delay=3.0).delay_after(5) == 3.0


# --- round trips ----------------------------------------------------------------------------------------------


def test_cl_command_round_trip_parses_message_ids(make_session, audit_path) -> None:
    session, _ = make_session()
    output = session.run(Command('system "CRTSAVF FILE(QGPL/RT1)"', idempotent=False))
    assert output.exit_status == 0
    assert output.msg_ids == ["CPC9801"]
    assert "RT1" in output.stdout
    assert output.duration_ms > 0
    [record] = read_audit(audit_path)
    assert record["outcome"] == "ok" and record["msg_ids"] == ["CPC9801"] and record["exit_status"] == 0


def test_sql_round_trip(make_session) -> None:
    session, _ = make_session()
    output = session.run(commands.sql("SELECT 1 AS X FROM SYSIBM.SYSDUMMY1", runner=session.sql_runner))
    assert output.exit_status == 0
    assert parse_single(output.stdout) == [{"X": "1"}]
    assert output.msg_ids == []


def test_one_connection_is_reused_for_every_command(make_session) -> None:
    session, counting = make_session()
    for text in ("uname", "echo one", 'system "CRTSAVF FILE(QGPL/REUSE)"', commands.sql("VALUES 1", runner="qsh").text):
        assert session.run(Command(text, idempotent=True)).exit_status == 0
    assert counting.calls == 1
    assert session.round_trips == 4
    session.close()
    assert session.run(UNAME).stdout == "OS400\n"
    assert counting.calls == 2


def test_failing_cl_command_is_returned_not_retried(make_session, audit_path) -> None:
    session, _ = make_session()
    output = session.run(Command('system "DLTJRNRCV JRNRCV(QMTEST/NOPE)"', idempotent=True))
    assert output.exit_status != 0
    assert output.msg_ids == ["CPF2105"]
    assert session.round_trips == 1
    [record] = read_audit(audit_path)
    assert record["outcome"] == "failed" and record["exit_status"] == output.exit_status
    assert record["msg_ids"] == ["CPF2105"] and record["error"] is None


def test_audit_has_one_well_formed_record_per_attempt(make_session, audit_path, sim_fleet) -> None:
    session, _ = make_session()
    sim_fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="echo"))
    session.run(UNAME)
    session.run(Command("echo hi", idempotent=True))
    session.run(Command('system "DLTJRNRCV JRNRCV(QMTEST/NOPE)"', idempotent=False))
    records = read_audit(audit_path)
    assert [(r["command"], r["attempt"], r["outcome"]) for r in records] == [
        ("uname", 1, "ok"),
        ("echo hi", 1, "transport_error"),
        ("echo hi", 2, "ok"),
        ('system "DLTJRNRCV JRNRCV(QMTEST/NOPE)"', 1, "failed"),
    ]
    for record in records:
        assert set(record) == AUDIT_FIELDS

        at = datetime.fromisoformat(record["at"])
        assert at.utcoffset() == timedelta(0)
        assert record["host"] == "ibmi1" and record["user"] == sim_fleet.config.user
        assert isinstance(record["duration_ms"], float) and record["duration_ms"] >= 0
        assert isinstance(record["msg_ids"], list)
    assert records[1]["exit_status"] is None and "ConnectionLost" in records[1]["error"]
    assert [r["exit_status"] for r in (records[0], records[2])] == [0, 0]


def test_each_attempt_writes_its_intent_before_the_command_and_its_outcome_after(make_session, audit_path) -> None:
    session, _ = make_session()
    session.run(Command('system "CRTSAVF FILE(QGPL/INTENT1)"', idempotent=False))
    intent, outcome = read_events(audit_path)
    assert (intent["event"], outcome["event"]) == ("intent", "outcome")
    assert intent["id"] == outcome["id"] and intent["command"] == outcome["command"]
    assert intent["at"] <= outcome["at"] and unexplained_intents(audit_path, "ibmi1") == []


def test_a_command_that_cannot_be_recorded_is_not_sent(make_session, audit_path, sim_fleet) -> None:
    session, counting = make_session()
    audit_path.parent.mkdir(parents=True, exist_ok=True)
    audit_path.mkdir()  # the audit file cannot be opened for appending
    with pytest.raises(OSError):
        session.run(Command('system "CRTSAVF FILE(QGPL/UNRECORD)"', idempotent=False))
    assert counting.calls == 0 and session.round_trips == 0
    assert "QGPL/UNRECORD" not in sim_fleet.host().partition.save_files


def test_an_intent_without_an_outcome_is_an_attempt_whose_outcome_is_unknown(audit_path) -> None:
    log = AuditLog(audit_path)
    interrupted = log.intent(
        host="ibmi1", user="MQADMIN", command="system 'DLTJRNRCV JRNRCV(QMTEST/AMQA000001)'", attempt=1
    )
    [attempt] = read_audit(audit_path)
    assert attempt["id"] == interrupted and attempt["outcome"] is None
    [open_intent] = unexplained_intents(audit_path, "ibmi1")
    log.reconciled(open_intent, "AMQA000001 is gone from QMTEST: the delete ran")
    assert unexplained_intents(audit_path, "ibmi1") == []


# --- host keys and authentication -----------------------------------------------------------------------------


def test_unknown_host_key_is_refused_and_not_retried(make_session, sim_fleet, tmp_path, audit_path) -> None:
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    session, counting = make_session(connector(sim_fleet, known_hosts=empty))
    with pytest.raises(HostKeyRejected, match="known_hosts") as caught:
        session.run(UNAME)
    assert sim_fleet.service.host_keys["ibmi1"].fingerprint in str(caught.value)
    assert counting.calls == 1 and session.round_trips == 0
    assert outcomes(audit_path) == [(1, "transport_error")]


def test_changed_host_key_is_refused_and_not_retried(make_session, sim_fleet, tmp_path, sleeps) -> None:
    other = paramiko.ECDSAKey.generate()
    known = tmp_path / "other_known_hosts"
    known.write_text(f"[127.0.0.1]:{sim_fleet.ports['ibmi1']} {other.get_name()} {other.get_base64()}\n")
    session, counting = make_session(connector(sim_fleet, known_hosts=known))
    with pytest.raises(HostKeyRejected, match="fingerprint") as caught:
        session.run(UNAME)
    assert other.fingerprint in str(caught.value)
    assert counting.calls == 1 and sleeps == []


def test_pinned_host_key_works_without_known_hosts(make_session, sim_fleet) -> None:
    key = sim_fleet.service.host_keys["ibmi1"]
    session, _ = make_session(connector(sim_fleet, known_hosts=None, host_key=f"{key.get_name()} {key.get_base64()}"))
    assert session.run(UNAME).stdout == "OS400\n"

    other = paramiko.ECDSAKey.generate()
    pinned_other = f"{other.get_name()} {other.get_base64()}"
    wrong, counting = make_session(connector(sim_fleet, known_hosts=None, host_key=pinned_other))
    with pytest.raises(HostKeyRejected):
        wrong.run(UNAME)
    assert counting.calls == 1


def test_connector_refuses_to_connect_unverified(sim_fleet) -> None:
    with pytest.raises(ValueError, match="known_hosts or host_key"):
        connector(sim_fleet, known_hosts=None)
    with pytest.raises(ValueError, match="host_key"):
        connector(sim_fleet, known_hosts=None, host_key="ssh-ed25519 not-base64!")


def test_wrong_client_key_is_rejected_and_not_retried(make_session, sim_fleet, sleeps) -> None:
    session, counting = make_session(connector(sim_fleet, key=paramiko.ECDSAKey.generate()))
    with pytest.raises(AuthenticationRejected, match=sim_fleet.config.user):
        session.run(UNAME)
    assert counting.calls == 1 and sleeps == []


# --- transport faults -----------------------------------------------------------------------------------------


def test_refused_connections_are_retried_then_raised(make_session, sim_fleet, sleeps, audit_path) -> None:
    faults = sim_fleet.service.faults["ibmi1"]
    faults.refuse_connections = True
    session, counting = make_session(retry=RetryPolicy(attempts=3, first_delay=0.5, factor=2.0))
    with pytest.raises(HostUnreachable, match="ibmi1"):
        session.run(Command('system "CRTSAVF FILE(QGPL/NEVER)"', idempotent=False))
    assert counting.calls == 3 and sleeps == [0.5, 1.0]
    assert session.round_trips == 0
    assert outcomes(audit_path) == [(1, "transport_error"), (2, "transport_error"), (3, "transport_error")]

    faults.refuse_connections = False
    assert session.run(UNAME).exit_status == 0
    assert counting.calls == 4


def test_drop_before_run_of_idempotent_command_is_retried(make_session, sim_fleet, sleeps, audit_path) -> None:
    sim_fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="uname"))
    session, counting = make_session()
    assert session.run(UNAME).stdout == "OS400\n"
    assert outcomes(audit_path) == [(1, "transport_error"), (2, "ok")]
    assert counting.calls == 2 and session.round_trips == 2 and sleeps == [0.5]


def test_drop_after_run_of_non_idempotent_command_is_not_resent(make_session, sim_fleet, audit_path) -> None:
    host = sim_fleet.host("ibmi1")
    jobs_before = host.partition.job_counter
    sim_fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="CRTSAVF", after_run=True))
    session, counting = make_session()
    command = Command('system "CRTSAVF FILE(QGPL/ONCE)"', idempotent=False)
    with pytest.raises(OutcomeUnknown, match="re-read the state on the host") as caught:
        session.run(command)
    assert isinstance(caught.value.__cause__, ConnectionLost)
    assert caught.value.command == command.text
    # The handler ran exactly once: one job, the file is there, and nothing was sent a second time.
    assert host.partition.job_counter == jobs_before + 1
    assert "QGPL/ONCE" in host.partition.save_files
    assert session.round_trips == 1
    [record] = read_audit(audit_path)
    assert record["outcome"] == "transport_error" and record["msg_ids"] == [] and record["exit_status"] is None
    # The session recovers for the next command.
    assert session.run(UNAME).exit_status == 0
    assert counting.calls == 2


def test_drop_before_run_of_non_idempotent_command_is_unknown_too(make_session, sim_fleet) -> None:
    # The client cannot tell a drop before the run from one after it, so it must not guess.
    host = sim_fleet.host("ibmi1")
    jobs_before = host.partition.job_counter
    sim_fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="CRTSAVF"))
    session, _ = make_session()
    with pytest.raises(OutcomeUnknown):
        session.run(Command('system "CRTSAVF FILE(QGPL/TWICE)"', idempotent=False))
    assert host.partition.job_counter == jobs_before and session.round_trips == 1


def test_connection_dead_before_sending_is_resent_for_any_command(make_session, monkeypatch, audit_path) -> None:
    session, counting = make_session()
    session.run(UNAME)
    transport = session._client.get_transport()

    def dead(*args, **kwargs):
        raise paramiko.SSHException("SSH session not active")

    monkeypatch.setattr(transport, "open_session", dead)
    output = session.run(Command('system "CRTSAVF FILE(QGPL/AFTERDEAD)"', idempotent=False))
    assert output.msg_ids == ["CPC9801"]
    assert outcomes(audit_path) == [(1, "ok"), (1, "transport_error"), (2, "ok")]
    assert counting.calls == 2 and session.round_trips == 2


def test_command_timeout_depends_on_idempotence(make_session, sim_fleet, audit_path, sleeps) -> None:
    faults = sim_fleet.service.faults["ibmi1"]
    faults.delay_seconds = 1.0
    session, _ = make_session(command_timeout=0.25, retry=RetryPolicy(attempts=2, first_delay=0.01))
    with pytest.raises(CommandTimedOut, match=r"0\.25 s"):
        session.run(UNAME)
    assert outcomes(audit_path) == [(1, "timeout"), (2, "timeout")]
    assert session.round_trips == 2

    with pytest.raises(OutcomeUnknown, match="did not finish") as caught:
        session.run(Command('system "CRTSAVF FILE(QGPL/SLOW)"', idempotent=False))
    assert isinstance(caught.value.__cause__, CommandTimedOut)
    assert session.round_trips == 3
    assert outcomes(audit_path)[-1] == (1, "timeout")

    faults.delay_seconds = 0.0
    assert session.run(UNAME).exit_status == 0


# --- secrets --------------------------------------------------------------------------------------------------


def test_no_key_material_or_passphrase_in_logs_audit_or_errors(
    make_session, sim_fleet, tmp_path, audit_path, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    passphrase = "correct-horse-battery-staple-42"
    key = sim_fleet.service.client_key
    key_file = tmp_path / "encrypted_key"
    key.write_private_key_file(str(key_file), password=passphrase)
    plain = io.StringIO()
    key.write_private_key(plain)
    secrets = [passphrase, *_base64_lines(plain.getvalue()), *_base64_lines(key_file.read_text())]
    assert len(secrets) > 3

    session, _ = make_session(connector(sim_fleet, key=None, key_file=key_file, passphrase=passphrase))
    session.run(UNAME)
    session.run(Command('system "DLTJRNRCV JRNRCV(QMTEST/NOPE)"', idempotent=True))
    errors = []
    for wrong_passphrase in ("not-" + passphrase, None):
        failing, _ = make_session(connector(sim_fleet, key=None, key_file=key_file, passphrase=wrong_passphrase))
        with pytest.raises(AuthenticationRejected) as caught:
            failing.run(UNAME)
        errors.append(caught.value)
    sim_fleet.service.faults["ibmi1"].drops.append(DropRule(pattern="CRTSAVF", after_run=True))
    with pytest.raises(OutcomeUnknown) as caught:
        session.run(Command('system "CRTSAVF FILE(QGPL/SECRET)"', idempotent=False))
    errors.append(caught.value)

    dumped = "\n".join([audit_path.read_text(), caplog.text, *(f"{e!s} {e!r} {e.__cause__!r}" for e in errors)])
    assert "encrypted_key" in dumped  # the errors name the file: the dump does hold the failures
    for secret in secrets:
        assert secret not in dumped


def _base64_lines(pem: str) -> list[str]:
    return [line for line in pem.splitlines() if len(line) >= 16 and not line.startswith(("-----", "Proc-", "DEK-"))]


# --- a pinned host key wins over known_hosts ------------------------------------------------------------------


def _public_key_line(kind: str) -> tuple[str, str]:
    """A fresh public key of `kind` as 'type base64', and its SHA256 fingerprint as paramiko shows it."""
    if kind == "ecdsa":
        key = paramiko.ECDSAKey.generate()
    else:  # paramiko cannot generate Ed25519 keys; cryptography can
        import base64

        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        public = Ed25519PrivateKey.generate().public_key()
        text = public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
        kind_name, blob = text.split()[:2]
        key = paramiko.PKey.from_type_string(kind_name, base64.b64decode(blob))
    return f"{key.get_name()} {key.get_base64()}", key.fingerprint


def _known_hosts_listing(tmp_path: Path, sim_fleet, key_line: str) -> Path:
    path = tmp_path / "known_hosts_listing"
    path.write_text(f"[127.0.0.1]:{sim_fleet.ports['ibmi1']} {key_line}\n")
    return path


@pytest.mark.parametrize("pinned_kind", ["ed25519", "ecdsa"], ids=["pin-of-another-type", "pin-of-the-same-type"])
def test_a_host_listed_in_known_hosts_but_not_matching_the_pinned_key_is_refused(
    make_session, sim_fleet, tmp_path, pinned_kind
) -> None:
    # The host that answers (an impostor, as far as the pin goes) is in known_hosts; the pin must still win.
    presented = sim_fleet.service.host_keys["ibmi1"]
    known = _known_hosts_listing(tmp_path, sim_fleet, f"{presented.get_name()} {presented.get_base64()}")
    pinned, pinned_fingerprint = _public_key_line(pinned_kind)
    session, counting = make_session(connector(sim_fleet, known_hosts=known, host_key=pinned))
    with pytest.raises(HostKeyRejected) as caught:
        session.run(UNAME)
    message = str(caught.value)
    assert presented.fingerprint in message and pinned_fingerprint in message and "pinned" in message
    assert counting.calls == 1 and session.round_trips == 0


@pytest.mark.parametrize("listed_kind", ["ed25519", "ecdsa"])
def test_the_pinned_key_is_accepted_whatever_known_hosts_lists_for_the_host(
    make_session, sim_fleet, tmp_path, listed_kind
):
    listed, _ = _public_key_line(listed_kind)
    key = sim_fleet.service.host_keys["ibmi1"]
    session, _ = make_session(
        connector(
            sim_fleet,
            known_hosts=_known_hosts_listing(tmp_path, sim_fleet, listed),
            host_key=f"{key.get_name()} {key.get_base64()}",
        )
    )
    assert session.run(UNAME).stdout == "OS400\n"


# --- a cap on what a host may send back -----------------------------------------------------------------------


def _loud(times: int, width: int = 500) -> str:
    """A command line whose answer is about `times` * `width` bytes of stdout."""
    return "; ".join([f"echo {'A' * width}"] * times)


def test_an_answer_past_the_cap_is_refused_naming_host_command_and_cap(make_session, audit_path, sleeps) -> None:
    from mqjournal.ibmi.transport import AnswerTooLarge

    session, counting = make_session(max_answer_bytes=2000)
    loud = Command(_loud(6), idempotent=True)
    with pytest.raises(AnswerTooLarge) as caught:
        session.run(loud)
    message = str(caught.value)
    assert "ibmi1" in message and "echo AAAA" in message and "2000 bytes" in message and "max_answer_bytes" in message
    assert session.round_trips == 1 and sleeps == []  # the same command would only bring the same answer
    ((attempt, outcome),) = outcomes(audit_path)
    assert (attempt, outcome) == (1, "transport_error")
    assert "2000 bytes" in read_audit(audit_path)[-1]["error"]
    # Only that channel was closed: the connection goes on serving.
    assert session.run(Command(_loud(3), idempotent=True)).exit_status == 0
    assert counting.calls == 1


def test_stderr_counts_towards_the_cap(make_session) -> None:
    from mqjournal.ibmi.transport import AnswerTooLarge

    session, _ = make_session(max_answer_bytes=2000)
    with pytest.raises(AnswerTooLarge):
        session.run(Command("; ".join([f"nope{'x' * 400}"] * 6), idempotent=True))


def test_an_answer_past_the_cap_leaves_the_outcome_of_a_command_that_must_not_run_twice_unknown(
    make_session, audit_path
) -> None:
    from mqjournal.ibmi.transport import AnswerTooLarge

    session, _ = make_session(max_answer_bytes=2000)
    with pytest.raises(OutcomeUnknown) as caught:
        session.run(Command(_loud(6), idempotent=False))
    assert isinstance(caught.value.__cause__, AnswerTooLarge)
    assert "2000 bytes" in str(caught.value) and session.round_trips == 1
    assert outcomes(audit_path) == [(1, "transport_error")]


def test_an_sql_answer_of_many_rows_past_the_cap_is_refused(make_session, sim_fleet) -> None:
    from mqjournal.ibmi.transport import AnswerTooLarge

    sim_fleet.host().advance(timedelta(hours=6))  # receivers to list
    sql = commands.sql("SELECT * FROM QSYS2.JOURNAL_RECEIVER_INFO", runner="qsh")
    session, _ = make_session()
    full = session.run(sql)
    assert full.exit_status == 0 and len(full.stdout) > 4000
    capped, _ = make_session(max_answer_bytes=4000)
    with pytest.raises(AnswerTooLarge, match="4000 bytes"):
        capped.run(sql)


def test_the_default_cap_is_64_mib_and_the_airflow_hook_keeps_it() -> None:
    import inspect

    from mqjournal.airflow.hook import IbmiHook
    from mqjournal.ibmi.transport import DEFAULT_MAX_ANSWER_BYTES

    assert DEFAULT_MAX_ANSWER_BYTES == 64 * 1024 * 1024
    assert inspect.signature(IbmiSession).parameters["max_answer_bytes"].default == DEFAULT_MAX_ANSWER_BYTES
    assert IbmiHook(ssh_conn_id="unused").max_answer_bytes == DEFAULT_MAX_ANSWER_BYTES


# --- the log an admin reads (the Airflow task log) ---------------------------------------------------------------


def transport_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "mqjournal.ibmi.transport" and r.levelno == logging.INFO
    ]


def test_save_and_delete_log_each_cl_command_then_the_messages_ibm_i_answered(executor, caplog) -> None:
    caplog.set_level(logging.INFO, logger="mqjournal.ibmi.transport")
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    executor.delete(to_delete[:1], policy=Policy())
    lines = transport_log(caplog)
    # The CL as an admin would type it, not the PASE command line that carries it.
    savobj = next(i for i, line in enumerate(lines) if line.startswith("ibmi1: SAVOBJ OBJ("))
    assert "LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV)" in lines[savobj] and "system '" not in lines[savobj]
    assert lines[savobj + 1] == f"ibmi1:   CPC3722 {len(to_save)} objects saved from library QMTEST."
    assert lines[savobj + 2].startswith("ibmi1:   exit status 0, ")
    delete = lines.index(f"ibmi1: DLTJRNRCV JRNRCV(QMTEST/{to_delete[0]}) DLTOPT(*NONE)")
    assert lines[delete + 1].startswith("ibmi1:   exit status 0, ")


def test_a_failing_cl_command_logs_its_escape_message(make_session, caplog) -> None:
    caplog.set_level(logging.INFO, logger="mqjournal.ibmi.transport")
    session, _ = make_session()
    output = session.run(commands.cl("DLTJRNRCV JRNRCV(QMTEST/AMQA999999) DLTOPT(*NONE)", idempotent=False))
    assert output.exit_status != 0
    command, *answer = transport_log(caplog)
    assert command == "ibmi1: DLTJRNRCV JRNRCV(QMTEST/AMQA999999) DLTOPT(*NONE)"
    assert any(line.startswith("ibmi1:   CPF2105 ") and "AMQA999999" in line for line in answer), answer
    assert answer[-1].startswith(f"ibmi1:   exit status {output.exit_status}, ")


def test_sql_is_logged_by_its_statements_and_row_counts_never_its_rows(make_session, sim_fleet, caplog) -> None:
    caplog.set_level(logging.INFO, logger="mqjournal.ibmi.transport")
    session, _ = make_session()
    sim_fleet.host().advance(timedelta(hours=3))
    receivers = [r.name for r in sim_fleet.host().partition.receivers_in("QMTEST")]
    assert len(receivers) > 5
    chain = commands.sql(
        commands.receivers("QMTEST", "AMQAJRN", "A"), "SELECT * FROM QSYS2.NO_SUCH_VIEW", runner=session.sql_runner
    )
    output = session.run(chain)
    assert all(name in output.stdout for name in receivers)
    command, answer = transport_log(caplog)
    assert command.startswith("ibmi1: SQL (2 statements): SELECT ") and "| SELECT * FROM QSYS2.NO_SUCH_VIEW" in command
    assert "qsh -c" not in command
    assert answer.startswith(f"ibmi1:   {len(receivers)} rows; SQLSTATE 42704 (exit status {output.exit_status}, ")
    assert not any(name in line for line in (command, answer) for name in receivers[1:])


def test_a_long_statement_is_cut_to_its_start() -> None:
    statement = "SELECT " + ", ".join(f"COLUMN_{n}" for n in range(200)) + " FROM QSYS2.JOURNAL_INFO"
    text = shown(commands.sql(statement, runner="qsh"))
    assert text.startswith("SQL: SELECT COLUMN_0, COLUMN_1") and text.endswith("...") and len(text) < 120


@pytest.mark.parametrize(
    "command",
    [
        "system 'CHGUSRPRF USRPRF(MQADMIN) PASSWORD(Sekr1t)'",
        "system 'CHGDSTPWD PASSWORD(''Sekr1t'')'",
        "system \"CRTUSRPRF USRPRF(X) PWD(Sekr1t) TEXT('x')\"",
        "db2 'SET ENCRYPTION PASSWORD = '\"'\"'Sekr1t'\"'\"''",
        "curl --token=Sekr1t https://example.com",
    ],
)
def test_no_password_value_is_ever_logged(make_session, caplog, command) -> None:
    caplog.set_level(logging.DEBUG, logger="mqjournal.ibmi.transport")
    session, _ = make_session()
    session.run(Command(command, idempotent=True))
    assert transport_log(caplog) and not any("Sekr1t" in line for line in transport_log(caplog))


def test_an_sftp_error_is_not_replaced_by_the_channel_failing_to_close_on_a_dropped_connection(
    make_session, monkeypatch
) -> None:
    # A drop paramiko reports as an OSError while its transport still looks active is re-raised as the OSError; the
    # channel's close then sends on a dead socket and raises EOFError, which must not take the OSError's place (it
    # escaped every caller's handlers, unnamed, in the Linux fault matrix).
    session, _ = make_session()

    def close_on_a_dead_socket(self) -> None:
        raise EOFError

    monkeypatch.setattr(paramiko.SFTPClient, "close", close_on_a_dead_socket)
    with pytest.raises(ConnectionResetError), session.sftp():
        raise ConnectionResetError("connection reset by peer")
    with session.sftp() as sftp:  # and a transfer that went well is not failed by its close either
        assert sftp.listdir("/QSYS.LIB") is not None
