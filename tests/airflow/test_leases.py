"""At most N SSH sessions per host, whichever worker asks."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest

from mqjournal.airflow.leases import HostBusy, host_session_slot
from tests.airflow.skewed_workers import holding_slot, try_slot


def test_no_more_sessions_than_slots_run_on_one_host_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    active, peak, changed = [0], [0], threading.Condition()

    def work():
        with host_session_slot(url, "ibmi1", slots=2, poll=0.01), changed:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            changed.notify_all()
            # Hold the slot until a second holder has been seen (or 10 s), so that two overlap however slowly a
            # loaded machine starts the threads; a third would raise the peak past 2.
            changed.wait_for(lambda: peak[0] >= 2, timeout=10)
            time.sleep(0.01)
            active[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2


def test_other_hosts_are_not_held_up(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with host_session_slot(url, "ibmi1", slots=1), host_session_slot(url, "ibmi2", slots=1, wait=0.1):
        pass


def test_a_host_whose_slots_stay_taken_is_busy(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with (
        host_session_slot(url, "ibmi1", slots=1),
        pytest.raises(HostBusy),
        host_session_slot(url, "ibmi1", slots=1, wait=0.05, poll=0.01),
    ):
        pass


def test_a_live_holder_keeps_its_slot_beyond_the_ttl(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with host_session_slot(url, "ibmi1", slots=1, ttl=timedelta(seconds=0.4)):
        time.sleep(1.0)  # 2.5 ttls: renewed meanwhile
        with pytest.raises(HostBusy), host_session_slot(url, "ibmi1", slots=1, wait=0.1, poll=0.02):
            pass


_HOLD = """
import sys, time
from datetime import timedelta
from mqjournal.airflow.leases import host_session_slot
with host_session_slot(sys.argv[1], "ibmi1", slots=1, ttl=timedelta(seconds=float(sys.argv[2]))):
    print("holding", flush=True)
    time.sleep(600)
"""


def test_the_slot_of_a_killed_task_is_free_again_within_one_ttl(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    worker = subprocess.Popen([sys.executable, "-c", _HOLD, url, "1.5"], stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().strip() == "holding"
        with pytest.raises(HostBusy), host_session_slot(url, "ibmi1", slots=1, wait=0.2, poll=0.05):
            pass
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    started = time.monotonic()
    with host_session_slot(url, "ibmi1", slots=1, wait=10, poll=0.05):
        waited = time.monotonic() - started
    assert waited <= 1.5 + 1.0  # one ttl plus polling, not the 2 hours a lease used to last


TEN_MINUTES = 600.0


@pytest.mark.parametrize("skew", [TEN_MINUTES, -TEN_MINUTES], ids=["ahead", "behind"])
def test_a_worker_whose_clock_is_wrong_opens_no_third_session_on_a_host_capped_at_two(tmp_path, skew):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with host_session_slot(url, "ibmi1", slots=2), holding_slot(url, "ibmi1", skew=skew, slots=2):
        assert try_slot(url, "ibmi1", skew=skew, slots=2) == "busy"  # the wrong clock takes no expired-looking lease
        assert try_slot(url, "ibmi1", skew=0, slots=2) == "busy"  # nor does a right one take the wrong one's lease
    assert try_slot(url, "ibmi1", skew=skew, slots=2) == "slot 0"  # given back, the slots are free to any clock
