"""A pool too small for one batch task is refused where the pool is made: Airflow would leave the task waiting."""

from __future__ import annotations

from mqjournal.airflow import pools
from mqjournal.settings import Settings


def settings(hosts_in_parallel: int, sessions_per_host: int) -> Settings:
    return Settings.from_env(
        {
            "MQJOURNAL_TASK_HOSTS_IN_PARALLEL": str(hosts_in_parallel),
            "MQJOURNAL_SSH_SESSIONS_PER_HOST": str(sessions_per_host),
        }
    )


def test_a_pool_needs_a_slot_per_session_one_batch_task_may_open():
    assert pools.pool_too_small(settings(4, 2), 8) is None
    assert pools.pool_too_small(settings(4, 2), 16) is None
    problem = pools.pool_too_small(settings(4, 2), 7)
    assert problem is not None
    assert "mqjournal_ssh" in problem and "7 slot(s)" in problem and "takes 8" in problem
    assert "MQJOURNAL_TASK_HOSTS_IN_PARALLEL (4)" in problem and "MQJOURNAL_SSH_SESSIONS_PER_HOST (2)" in problem
    assert pools.pool_too_small(settings(1, 1), 1) is None


def test_the_check_exits_non_zero_naming_the_settings_when_the_pool_is_too_small(monkeypatch, capsys):
    monkeypatch.setenv("MQJOURNAL_TASK_HOSTS_IN_PARALLEL", "10")
    monkeypatch.setenv("MQJOURNAL_SSH_SESSIONS_PER_HOST", "2")
    assert pools.main(["19"]) == 1
    assert "takes 20" in capsys.readouterr().err
    assert pools.main(["20"]) == 0
    assert pools.main(["many"]) == 2
