"""The audit log's rule: a command's intent is on disk before the command is sent. Sessions writing intents at once
share fsyncs (group commit), and each intent still returns only after an fsync that began once it was written."""

from __future__ import annotations

import os
import threading
import time

from mqjournal.ibmi import audit as audit_module
from mqjournal.ibmi.audit import AuditLog

SESSIONS = 8
REAL_FSYNC = os.fsync


class SlowDisk:
    """os.fsync as a disk that takes a while: each call remembers how much of the log it covered, and when it ended."""

    def __init__(self, path) -> None:
        self.path, self.calls = path, []
        self._lock = threading.Lock()

    def fsync(self, fd: int) -> None:
        covered = self.path.stat().st_size  # bytes in the file when the sync began: what it makes durable
        time.sleep(0.05)
        REAL_FSYNC(fd)
        with self._lock:
            self.calls.append((covered, time.monotonic()))


def _intents_at_once(log: AuditLog) -> list[tuple[str, float]]:
    """SESSIONS threads each writing one intent, released together; (record id, when intent returned) for each."""
    returned: list[tuple[str, float]] = []
    start = threading.Barrier(SESSIONS)

    def session(n: int) -> None:
        start.wait()
        record_id = log.intent(
            host=f"ibmi{n}", user="MQADMIN", command=f"DLTJRNRCV JRNRCV(QMTEST/AMQA00000{n})", attempt=1
        )
        returned.append((record_id, time.monotonic()))

    threads = [threading.Thread(target=session, args=(n,)) for n in range(SESSIONS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return returned


def _end_of(path, record_id: str) -> int:
    """The offset just past the record's line in the file."""
    data = path.read_bytes()
    at = data.index(record_id.encode())
    return data.index(b"\n", at) + 1


def test_each_intent_returns_only_after_an_fsync_that_began_once_it_was_written(tmp_path, monkeypatch):
    path = tmp_path / "audit.jsonl"
    disk = SlowDisk(path)
    monkeypatch.setattr(audit_module.os, "fsync", disk.fsync)

    returned = _intents_at_once(AuditLog(path))

    for record_id, at in returned:
        end = _end_of(path, record_id)
        assert any(covered >= end and done <= at for covered, done in disk.calls), record_id


def test_intents_written_at_once_share_fsyncs(tmp_path, monkeypatch):
    path = tmp_path / "audit.jsonl"
    disk = SlowDisk(path)
    monkeypatch.setattr(audit_module.os, "fsync", disk.fsync)

    _intents_at_once(AuditLog(path))

    assert len(disk.calls) < SESSIONS


def test_an_intent_alone_is_synced_before_it_returns(tmp_path, monkeypatch):
    path = tmp_path / "audit.jsonl"
    disk = SlowDisk(path)
    monkeypatch.setattr(audit_module.os, "fsync", disk.fsync)
    log = AuditLog(path)

    first = log.intent(host="ibmi1", user="MQADMIN", command="DLTJRNRCV JRNRCV(QMTEST/AMQA000001)", attempt=1)
    second = log.intent(host="ibmi1", user="MQADMIN", command="DLTJRNRCV JRNRCV(QMTEST/AMQA000002)", attempt=1)

    assert [covered for covered, _ in disk.calls] == [_end_of(path, first), _end_of(path, second)]
