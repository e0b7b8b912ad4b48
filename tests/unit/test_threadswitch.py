"""Prompt thread switches while many SSH sessions share one process: set while inside, put back after."""

from __future__ import annotations

import sys

import pytest

from mqjournal import threadswitch
from mqjournal.threadswitch import SWITCH_INTERVAL_S, prompt_switches


@pytest.fixture(autouse=True)
def default_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # CPython's default, whatever a server of another test left
    yield
    sys.setswitchinterval(before)


def test_the_interval_is_1_ms_inside_and_put_back_after():
    with prompt_switches():
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S, abs=1e-6)
    assert sys.getswitchinterval() == pytest.approx(0.005, abs=1e-6)


def test_nested_callers_keep_it_until_the_last_one_leaves():
    threadswitch.enter()
    with prompt_switches():
        pass
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S, abs=1e-6)  # the outer caller is still inside
    threadswitch.leave()
    assert sys.getswitchinterval() == pytest.approx(0.005, abs=1e-6)


def test_a_shorter_interval_already_set_is_kept_and_put_back():
    sys.setswitchinterval(0.0002)
    with prompt_switches():
        assert sys.getswitchinterval() == pytest.approx(0.0002, abs=1e-6)
    assert sys.getswitchinterval() == pytest.approx(0.0002, abs=1e-6)


def test_it_is_put_back_when_the_block_raises_and_a_leave_without_enter_changes_nothing():
    with pytest.raises(RuntimeError), prompt_switches():
        raise RuntimeError("a failed step")
    assert sys.getswitchinterval() == pytest.approx(0.005, abs=1e-6)
    threadswitch.leave()
    with prompt_switches():
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S, abs=1e-6)
    assert sys.getswitchinterval() == pytest.approx(0.005, abs=1e-6)
