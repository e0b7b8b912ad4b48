"""The command watchdog: one thread keeps every session's command deadlines (ibmi/watchdog.py)."""

from __future__ import annotations

import os
import threading
import time

from mqjournal.ibmi import watchdog


def test_alarms_fire_in_deadline_order_and_a_cancelled_one_never_fires() -> None:
    fired: list[str] = []
    done = threading.Event()
    watchdog.arm(0.15, lambda: (fired.append("late"), done.set()))
    cancelled = watchdog.arm(0.05, lambda: fired.append("cancelled"))
    watchdog.arm(0.10, lambda: fired.append("early"))
    cancelled.cancel()

    assert done.wait(5)
    assert fired == ["early", "late"]


def test_a_failing_callback_leaves_the_others_firing() -> None:
    done = threading.Event()
    watchdog.arm(0.01, lambda: 1 / 0)
    watchdog.arm(0.05, done.set)

    assert done.wait(5)


def test_one_thread_keeps_many_deadlines() -> None:
    before = threading.active_count()
    alarms = [watchdog.arm(60, lambda: None) for _ in range(200)]
    assert threading.active_count() <= before + 1
    for alarm in alarms:
        alarm.cancel()


def test_a_forked_child_keeps_its_own_deadlines() -> None:
    watchdog.arm(60, lambda: None).cancel()  # the parent's thread exists; a child does not inherit it
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its alarm fires
        fired = threading.Event()
        watchdog.arm(0.01, fired.set)
        os._exit(0 if fired.wait(5) else 1)
    started = time.monotonic()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, (
        f"the child's alarm did not fire ({time.monotonic() - started:.1f} s)"
    )
