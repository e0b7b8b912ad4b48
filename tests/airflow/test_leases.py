"""At most N SSH sessions per host, whichever worker asks."""

from __future__ import annotations

import threading
import time

import pytest

from mqjournal.airflow.leases import HostBusy, host_session_slot


def test_no_more_sessions_than_slots_run_on_one_host_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    active, peak, lock = [0], [0], threading.Lock()

    def work():
        with host_session_slot(url, "ibmi1", slots=2, poll=0.01):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.05)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2


def test_other_hosts_are_not_held_up(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with host_session_slot(url, "ibmi1", slots=1):
        with host_session_slot(url, "ibmi2", slots=1, wait=0.1):
            pass


def test_a_host_whose_slots_stay_taken_is_busy(tmp_path):
    url = f"sqlite:///{tmp_path / 'leases.db'}"
    with host_session_slot(url, "ibmi1", slots=1):
        with pytest.raises(HostBusy):
            with host_session_slot(url, "ibmi1", slots=1, wait=0.05, poll=0.01):
                pass
