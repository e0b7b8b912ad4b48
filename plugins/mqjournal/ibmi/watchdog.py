"""One thread per process that runs callbacks at their deadlines: the command timeouts of every SSH session.

A command's wait for the host's answer to its exec request has no timeout of its own (paramiko's exec_command);
closing the channel at the deadline ends it. A threading.Timer per command did that with a thread started and
ended for every command: with ten hosts' sessions in one task, the thread starts were a tenth of the task's own
interpreter time in a fleet run's save step (bench/README.md). Here one thread keeps every deadline.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Alarm", "arm"]

log = logging.getLogger(__name__)


@dataclass(order=True)
class Alarm:
    """A callback due at `deadline` (time.monotonic()); `cancel()` before then and it never runs."""

    deadline: float
    _order: int
    _callback: Callable[[], None] | None = field(compare=False)

    def cancel(self) -> None:
        self._callback = None  # left in the heap, skipped when due: cancelling takes no lock

    def _fire(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()


class _Watchdog:
    def __init__(self) -> None:
        self._due: list[Alarm] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._pid: int | None = None  # the process whose thread keeps the deadlines (a forked child starts its own)

    def arm(self, seconds: float, callback: Callable[[], None]) -> Alarm:
        alarm = Alarm(time.monotonic() + max(0.0, seconds), next(self._order), callback)
        with self._changed:
            if self._pid != os.getpid():
                self._pid, self._due = os.getpid(), []
                threading.Thread(target=self._run, name="command-watchdog", daemon=True).start()
            heapq.heappush(self._due, alarm)
            if self._due[0] is alarm:
                self._changed.notify()
        return alarm

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._due and self._due[0]._callback is None:
                    heapq.heappop(self._due)  # cancelled
                if not self._due:
                    self._changed.wait()
                    continue
                wait = self._due[0].deadline - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                alarm = heapq.heappop(self._due)
            try:
                alarm._fire()  # outside the lock: a callback may take its time (closing a channel)
            except Exception:  # one failing callback must not end every session's timeouts
                log.exception("a command watchdog callback failed")


_WATCHDOG = _Watchdog()


def arm(seconds: float, callback: Callable[[], None]) -> Alarm:
    """Run `callback` in the watchdog's thread once `seconds` have passed, unless the alarm is cancelled first."""
    return _WATCHDOG.arm(seconds, callback)
