"""A worker is named by host, PID, start time and boot: an intent whose PID another process has now is interrupted."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

from mqjournal.ibmi.audit import AuditLog, read_events
from mqjournal.ibmi.workers import Worker, boot_id, interrupted, started_ticks

HERE = socket.gethostname()


def _intent(worker: Worker, *, at: datetime | None = None) -> dict:
    return worker.fields() | {"at": (at or datetime.now(UTC)).isoformat()}


def _ended_pid() -> int:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


def test_an_intent_of_this_live_worker_is_not_interrupted():
    assert not interrupted(_intent(Worker.this()))


def test_an_intent_whose_pid_another_process_has_now_is_interrupted():
    me = Worker.this()
    assert me.started is not None
    earlier_owner = Worker(HERE, me.pid, me.started - 1, me.boot)  # same PID, started at another time
    assert interrupted(_intent(earlier_owner))


def test_an_intent_written_before_the_machine_booted_is_interrupted():
    me = Worker.this()
    before_boot = Worker(HERE, me.pid, me.started, "00000000-0000-0000-0000-000000000000")
    assert interrupted(_intent(before_boot))


def test_an_intent_whose_worker_ended_is_interrupted():
    assert interrupted(_intent(Worker(HERE, _ended_pid(), 12345, boot_id())))


def test_an_old_intent_naming_only_host_and_pid_is_judged_by_the_old_rule():
    assert not interrupted({"worker": f"{HERE}:{os.getpid()}", "at": datetime.now(UTC).isoformat()})
    assert interrupted({"worker": f"{HERE}:{_ended_pid()}", "at": datetime.now(UTC).isoformat()})


def test_an_intent_of_a_worker_on_another_machine_is_interrupted_only_once_older_than_any_command():
    elsewhere = Worker("another-worker", 4242, 99, "b")
    assert not interrupted(_intent(elsewhere))
    assert interrupted(_intent(elsewhere, at=datetime.now(UTC) - timedelta(hours=1)))


def test_the_start_time_is_the_processs_own_and_a_free_pid_has_none():
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert started_ticks(child.pid) is not None and started_ticks(child.pid) >= started_ticks(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert started_ticks(_ended_pid()) is None


def test_the_catalogs_worker_text_reads_back_as_the_same_worker_and_old_text_as_host_and_pid():
    me = Worker.this()
    assert Worker.parse(str(me)) == me
    assert Worker.parse(f"{HERE}:17") == Worker(HERE, 17)
    assert Worker.parse("worker-1") is None  # not one mqjournal wrote: judged by its age


def test_an_audit_intent_records_its_workers_start_time_and_boot(tmp_path):
    log = AuditLog(tmp_path / "audit.jsonl")
    log.intent(host="ibmi1", user="MQADMIN", command="system 'DSPJRN'", attempt=1)
    (intent,) = read_events(log.path)
    assert intent["worker"] == f"{HERE}:{os.getpid()}"
    assert (intent["worker_started"], intent["worker_boot"]) == (started_ticks(os.getpid()), boot_id())
