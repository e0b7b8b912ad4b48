"""Workers whose clock is wrong, each in a process of its own (as Airflow's workers are, on machines of their own):
their Python clock (datetime.now, time.time) runs `skew` seconds ahead of the machine's, or behind it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# The clock is set wrong before anything else is imported, so every module of the worker reads the wrong time.
_WORKER = """
import datetime, sys, time

skew = float(sys.argv[1])


class _Skewed(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return super().now(tz) + datetime.timedelta(seconds=skew)

    @classmethod
    def utcnow(cls):
        return super().utcnow() + datetime.timedelta(seconds=skew)


datetime.datetime = _Skewed
_time = time.time
time.time = lambda: _time() + skew

from mqjournal.airflow.leases import HostBusy, host_session_slot

url, host, slots, wait, hold = sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6] == "hold"
try:
    with host_session_slot(url, host, slots=slots, wait=wait, poll=0.02) as slot:
        print(f"slot {slot}", flush=True)
        if hold:
            sys.stdin.read()  # until the test closes it
except HostBusy:
    print("busy", flush=True)
"""


def _start(url: str, host: str, *, skew: float, slots: int, wait: float, hold: bool) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(skew), url, host, str(slots), str(wait), "hold" if hold else "try"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def try_slot(url: str, host: str, *, skew: float, slots: int, wait: float = 0.5) -> str:
    """What a worker `skew` seconds off gets when it asks for a session on `host`: "slot N" or "busy"."""
    worker = _start(url, host, skew=skew, slots=slots, wait=wait, hold=False)
    out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    return out.strip()


@contextmanager
def holding_slot(url: str, host: str, *, skew: float, slots: int) -> Iterator[str]:
    """A worker `skew` seconds off holding a session on `host` until the block ends; yields "slot N"."""
    worker = _start(url, host, skew=skew, slots=slots, wait=5.0, hold=True)
    try:
        assert worker.stdout is not None and worker.stderr is not None
        got = worker.stdout.readline().strip()
        assert got.startswith("slot "), (got, worker.stderr.read() if worker.poll() is not None else "")
        yield got
    finally:
        worker.communicate(input="", timeout=60)  # closing its stdin ends the hold: the lease is given back
