"""Prompt thread switches while one process talks to many SSH sessions at once.

A batch task works on ten hosts at once through two sessions each, and every session has paramiko's reader thread
beside the thread that waits for its answer: some thirty threads in one process, each doing a little work per
packet. CPython hands the GIL to a thread that woke from I/O only when the running thread gives it up, after at
most the switch interval (5 ms by default, `sys.setswitchinterval`). A command's answer passes through several
such hand-offs (the channel opened, the data, the exit status, the close), so with the process half busy an SSH
command waits for the GIL on top of the partition's own time: at 50 hosts, ten at once, the fleet's save and delete
phases ran 1.17-1.27x the time the round trips alone need, and 1.14-1.17x with a 1 ms interval (bench/fleet_bench.py;
bench/README.md, 2026-12-03). The waiting thread gets in sooner, for a few more switches of CPU-bound work. The
same holds for the simulator, which serves each partition's sessions from threads of its own.

The interval is process-wide; `prompt_switches` sets it while at least one caller is inside and puts back what
was there when the last one leaves.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

SWITCH_INTERVAL_S = 0.001

_lock = threading.Lock()
_inside = 0
_before: float | None = None  # the interval to put back; None when it was short enough already


def enter() -> None:
    """Start prompt switches (paired with `leave`)."""
    global _inside, _before
    with _lock:
        if _inside == 0:
            current = sys.getswitchinterval()
            _before = current if current > SWITCH_INTERVAL_S else None
            if _before is not None:
                sys.setswitchinterval(SWITCH_INTERVAL_S)
        _inside += 1


def leave() -> None:
    """End what `enter` started; the last caller out puts the interval back."""
    global _inside
    with _lock:
        if _inside == 0:
            return  # a stop without a start (a server stopped twice): nothing to put back
        _inside -= 1
        if _inside == 0 and _before is not None:
            sys.setswitchinterval(_before)


@contextlib.contextmanager
def prompt_switches() -> Iterator[None]:
    """Prompt thread switches for the block (see the module's docstring)."""
    enter()
    try:
        yield
    finally:
        leave()
