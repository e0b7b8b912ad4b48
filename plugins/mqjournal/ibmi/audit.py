"""The audit trail of every command attempt sent to an IBM i host, as JSON Lines.

An operator reconstructing an incident needs every attempt, including the ones that never got an answer: a
command whose connection dropped may still have run on the host. Records hold only the command line (built from
validated object names) and what came back; credentials never reach this module.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["OUTCOMES", "AuditLog", "read_audit"]

log = logging.getLogger(__name__)

OUTCOMES = frozenset({"ok", "failed", "transport_error", "timeout"})


class AuditLog:
    """Append-only JSON Lines, one record per command attempt; safe to share between threads."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

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
    ) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"audit outcome {outcome!r} is not one of {sorted(OUTCOMES)}")
        entry = {
            "at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
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
        line = json.dumps(entry, ensure_ascii=False)
        log.debug("audit %s", line)
        if self.path is None:
            return
        # One write of one whole line per record, under the lock and in append mode: concurrent sessions in this
        # process never interleave, and a crash can at worst lose the last line, never corrupt an earlier one.
        with self._lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def read_audit(path: Path) -> list[dict]:
    """The records of an audit file, oldest first; a file not yet written holds none."""
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
