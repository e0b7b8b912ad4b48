"""The audit trail of every command attempt sent to an IBM i host, as JSON Lines.

An operator reconstructing an incident needs every attempt, including the ones that never got an answer: a
command whose connection dropped may still have run on the host, and a worker killed while DLTJRNRCV runs leaves
nothing but what was written before the command left. So each attempt writes two records with one `id`: an
`intent`, flushed to disk *before* the command is sent, and its `outcome` after. An intent without an outcome is
an interrupted command (its intent names the worker process that wrote it: mqjournal.ibmi.workers); the next step
on that host explains it against the host and appends a `reconciled`
record (see `mqjournal.ibmi.reconcile`). Records hold only the command line (built from validated object names)
and what came back; credentials never reach this module.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path

from mqjournal.ibmi.openintents import open_intents
from mqjournal.ibmi.workers import Worker

__all__ = ["OUTCOMES", "TRANSFERS", "AuditLog", "read_audit", "read_events", "unexplained_intents"]

log = logging.getLogger(__name__)

OUTCOMES = frozenset({"ok", "failed", "transport_error", "timeout"})


class AuditLog:
    """Append-only JSON Lines, one record per command attempt; safe to share between threads."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()  # one record written at a time
        self._sync_lock = threading.Lock()  # one fsync at a time; the writers waiting for it share the next
        self._written = 0  # records written (flushed to the file) by this log
        self._synced = 0  # records of those known to be on disk
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def intent(
        self, *, host: str, user: str, command: str, attempt: int, transfer: str | None = None, stdin: str = ""
    ) -> str:
        """Write that `command` is about to be sent, durably; returns the id its outcome must carry.

        `transfer` ("get" or "put") marks an SFTP transfer of a save file (mqjournal.ibmi.transfer), whose `command`
        reads ``SFTP GET /QSYS.LIB/...``: it travels on the same connection but is no command line, so a reader
        matching records with the commands a host ran leaves it out. `stdin`, what the command reads on its
        standard input (runmqsc's MQSC), is recorded with it as "input". Raises if the record cannot be written: a
        command (or transfer) that cannot be recorded is not sent.
        """
        record_id = uuid.uuid4().hex
        entry = {
            "event": "intent",
            "id": record_id,
            "at": _now(),
            "host": host,
            "user": user,
            "command": command,
            "attempt": attempt,
        } | Worker.this().fields()
        self._write(entry | _transfer(transfer) | ({"input": stdin} if stdin else {}), durable=True)
        return record_id

    def record(
        self,
        *,
        host: str,
        user: str,
        command: str,
        exit_status: int | None,
        msg_ids: list[str],
        duration_ms: float,
        attempt: int,
        outcome: str,
        error: str | None = None,
        intent_id: str | None = None,
        transfer: str | None = None,
        size_bytes: int | None = None,
        sha256: str | None = None,
    ) -> None:
        """The outcome of one attempt (of the intent `intent_id`, when one was written); for a transfer, also the
        bytes that went across and their SHA-256, when known."""
        if outcome not in OUTCOMES:
            raise ValueError(f"audit outcome {outcome!r} is not one of {sorted(OUTCOMES)}")
        extra = _transfer(transfer)
        if transfer is not None:
            extra |= {"size_bytes": size_bytes, "sha256": sha256}
        self._write(
            {
                "event": "outcome",
                "id": intent_id or uuid.uuid4().hex,
                "at": _now(),
                "host": host,
                "user": user,
                "command": command,
                "exit_status": exit_status,
                "msg_ids": list(msg_ids),
                "duration_ms": round(duration_ms, 3),
                "attempt": attempt,
                "outcome": outcome,
                "error": error,
            }
            | extra,
            durable=True,
        )

    def reconciled(self, intent: dict, finding: str) -> None:
        """What the host shows about an intent that never got its outcome (the command may or may not have run)."""
        self._write(
            {
                "event": "reconciled",
                "id": intent["id"],
                "at": _now(),
                "host": intent["host"],
                "command": intent["command"],
                "finding": finding,
            },
            durable=True,
        )

    def _write(self, entry: dict, *, durable: bool) -> None:
        line = json.dumps(entry, ensure_ascii=False)
        log.debug("audit %s", line)
        if self.path is None:
            return
        # One write of one whole line per record, under the lock and in append mode: concurrent sessions in this
        # process never interleave, and a crash can at worst lose the last line, never corrupt an earlier one.
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            self._written += 1
            mine = self._written
        if durable:
            self._sync(mine)

    def _sync(self, record: int) -> None:
        """Return once the `record`-th record this log wrote is on disk: an intent must survive the worker (and the
        machine) dying while its command runs on the host.

        Group commit: one fsync covers every record written before it started, so a writer whose record an fsync
        in progress does not cover waits for it, then syncs once for all the records written meanwhile; sessions
        writing at once share fsyncs instead of queueing one each behind the write lock."""
        with self._sync_lock:
            if self._synced >= record:
                return  # another writer's fsync started after this record was written
            with self._lock:
                covered = self._written  # every record written so far is in the file before this fsync starts
            with self.path.open("a", encoding="utf-8") as handle:  # type: ignore[union-attr]
                os.fsync(handle.fileno())
            self._synced = covered


TRANSFERS = frozenset({"get", "put"})


def _transfer(transfer: str | None) -> dict:
    # Only transfers carry the key: a command's records stay as they always were.
    if transfer is None:
        return {}
    if transfer not in TRANSFERS:
        raise ValueError(f"audit transfer {transfer!r} is not one of {sorted(TRANSFERS)}")
    return {"transfer": transfer}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def read_events(path: Path) -> list[dict]:
    """Every record of an audit file (intents, outcomes, reconciliations), oldest first."""
    if not path.exists():
        return []
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON audit record: {exc}") from exc
    return records


def read_audit(path: Path) -> list[dict]:
    """One record per command attempt, oldest first: its outcome, or its intent (outcome None) when none came."""
    events = read_events(path)
    finished = {e["id"] for e in events if e.get("event", "outcome") == "outcome"}
    attempts = []
    for e in events:
        kind = e.get("event", "outcome")  # records written before intents existed are outcomes
        if kind == "outcome":
            attempts.append(e)
        elif kind == "intent" and e["id"] not in finished:
            attempts.append({**e, "exit_status": None, "msg_ids": [], "outcome": None, "error": None})
    return attempts


def unexplained_intents(path: Path, host: str) -> list[dict]:
    """Intents on `host` with neither an outcome nor a reconciliation: commands interrupted mid-flight (or still
    waiting for their answer). Read from where the last reader stopped (mqjournal.ibmi.openintents), not whole."""
    return [e for e in open_intents(path) if e["host"] == host]
