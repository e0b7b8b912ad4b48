"""Which worker process wrote an intent, told apart from a later process that got the same PID.

A command intent (audit log) and an operation intent (catalog) name the worker that sent the command, so that a
reconciling step leaves alone the intents of a worker still waiting for its answer. Host and PID alone do not name
a process: after a restart (of the worker's container, or of the machine) the PID of a SIGKILLed worker is soon
another process's, and its intent looked forever as if its command were still running, so a receiver the
interrupted DLTJRNRCV deleted was never recorded. A process is named by host, PID, the time it started (clock ticks
after boot, field 22 of /proc/<pid>/stat: fixed for the process's life, and another process's PID reuse has
another) and the machine's boot id (/proc/sys/kernel/random/boot_id: ticks after boot mean nothing after a reboot).

Records written before these fields existed (host:pid only) are judged by the old rule: a live PID is a live worker.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["STALE_AFTER", "Worker", "boot_id", "started_ticks"]

STALE_AFTER = 900.0
"""Seconds after which the intent of a worker on another machine is taken as interrupted: longer than any command
may run (command timeout and retries included)."""

_PROC = Path("/proc")
# The catalog's operations keep the worker in one text column: "host:pid" (before), "host:pid started=N boot=ID".
_TEXT = re.compile(r"^(?P<id>\S+:\d+)(?: started=(?P<started>\d+) boot=(?P<boot>[0-9a-f-]+))?$")


def boot_id() -> str | None:
    """This machine's boot id; None where the kernel gives none (not Linux)."""
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def started_ticks(pid: int) -> int | None:
    """When process `pid` started, in clock ticks after boot; None when there is no such process (or no /proc)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    # The command name (field 2) is in parentheses and may hold spaces and ')': the fields after its last ')' are
    # field 3 onwards, so starttime (field 22) is the 20th of them.
    fields = stat[stat.rfind(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


@dataclass(frozen=True)
class Worker:
    """A worker process: `machine`:`pid`, and when it started since which boot (None in records made before)."""

    machine: str
    pid: int
    started: int | None = None
    boot: str | None = None

    @classmethod
    def this(cls) -> Worker:
        """The process running this: read once per process (a forked child is another process, read again)."""
        global _this
        pid = os.getpid()
        if _this is None or _this.pid != pid:
            _this = cls(socket.gethostname(), pid, started_ticks(pid), boot_id())
        return _this

    # --- the audit log's intent: "worker" as always, and the process's identity in fields of their own ----------

    def fields(self) -> dict[str, Any]:
        known = self.started is not None and self.boot is not None
        return {"worker": f"{self.machine}:{self.pid}"} | (
            {"worker_started": self.started, "worker_boot": self.boot} if known else {}
        )

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Worker | None:
        """The worker an intent names; None when it names none this module can read (judged by its age)."""
        machine, _, pid = str(record.get("worker", "")).rpartition(":")
        if not machine or not pid.isdigit():
            return None
        started, boot = record.get("worker_started"), record.get("worker_boot")
        if isinstance(started, int) and isinstance(boot, str):
            return cls(machine, int(pid), started, boot)
        return cls(machine, int(pid))

    # --- the catalog's operation: one text column --------------------------------------------------------------

    def __str__(self) -> str:
        if self.started is None or self.boot is None:
            return f"{self.machine}:{self.pid}"
        return f"{self.machine}:{self.pid} started={self.started} boot={self.boot}"

    @classmethod
    def parse(cls, text: str) -> Worker | None:
        """The worker of a catalog operation's `worker` text; None when it is not one this module wrote."""
        m = _TEXT.match(text)
        if m is None:
            return None
        machine, _, pid = m.group("id").rpartition(":")
        started = m.group("started")
        return cls(machine, int(pid), int(started) if started else None, m.group("boot"))

    # --- the rule ----------------------------------------------------------------------------------------------

    def is_gone(self) -> bool | None:
        """Whether this worker's process has ended; None when this machine cannot tell (the worker ran on another).

        Judged by what is known of it: with its start time and boot id, the process is gone when the machine has
        booted since, or when its PID is free or another process's (PID reuse); without them (a record written
        before they were), by the old rule: gone when its PID is free.
        """
        if self.machine != socket.gethostname():
            return None
        if self.started is not None and self.boot is not None:
            now = boot_id()
            if now is not None:
                return now != self.boot or started_ticks(self.pid) != self.started
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            pass  # alive, another user's
        return False  # alive: its command may still be running


_this: Worker | None = None


def interrupted(intent: dict[str, Any], *, stale_after: float = STALE_AFTER) -> bool:
    """The intent's command can no longer be waiting for its answer: its worker on this machine is gone, or (a
    worker elsewhere, or none named) the intent is older than any command may run."""
    worker = Worker.of_record(intent)
    gone = worker.is_gone() if worker is not None else None
    if gone is not None:
        return gone
    started = datetime.fromisoformat(intent["at"])
    return (datetime.now(UTC) - started).total_seconds() > stale_after
