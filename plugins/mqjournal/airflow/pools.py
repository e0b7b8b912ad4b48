"""The SSH pool's size against what the DAGs' batch tasks take from it.

A batch task takes a pool slot for each SSH session it may open (Settings.sessions_per_task: hosts in parallel x
sessions per host). A task that needs more slots than the pool has is never run, and Airflow says so only in the
scheduler's log, so a pool too small for one task is refused where the pool is made (the deployment's
airflow-init, the demo): `python -m mqjournal.airflow.pools SLOTS`.
"""

from __future__ import annotations

import sys

from mqjournal.settings import Settings


def pool_too_small(settings: Settings, slots: int) -> str | None:
    """Why a pool of `slots` would never run a batch task; None when it runs at least one."""
    needed = settings.sessions_per_task
    if slots >= needed:
        return None
    return (
        f"the pool {settings.tasks.ssh_pool} would have {slots} slot(s), but each batch task takes {needed}: "
        f"MQJOURNAL_TASK_HOSTS_IN_PARALLEL ({settings.tasks.hosts_in_parallel}) x MQJOURNAL_SSH_SESSIONS_PER_HOST "
        f"({settings.ssh.sessions_per_host}), one slot per SSH session it may open, and a task needing more slots "
        f"than its pool has never runs. Give the pool at least {needed} slots (a multiple of {needed}: that many "
        "batch tasks at once), or lower those settings"
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        sys.stderr.write("usage: python -m mqjournal.airflow.pools SLOTS\n")
        return 2
    problem = pool_too_small(Settings.from_env(), int(args[0]))
    if problem is not None:
        sys.stderr.write(f"mqjournal: {problem}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
