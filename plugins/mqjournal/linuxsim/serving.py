"""A fleet file's Linux hosts as the simulator serves them: made from their configuration or loaded from the state
folder (`<host>.linux.json`), warmed up, and which of their commands read standard input."""

from __future__ import annotations

import shlex
from datetime import datetime
from pathlib import Path

from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxsim.host import LinuxSimulatedHost

__all__ = ["linux_host", "reads_stdin", "state_path"]

_READS_STDIN = frozenset({"runmqsc"})  # "The runmqsc command takes its input from stdin" (q083460)
MB = 1024 * 1024


def state_path(state_dir: Path, name: str) -> Path:
    return state_dir / f"{name}.linux.json"


def reads_stdin(command_line: str) -> bool:
    try:
        words = shlex.split(command_line)
    except ValueError:
        return False
    return bool(words) and words[0].rsplit("/", 1)[-1] in _READS_STDIN


def linux_host(config: LinuxHostConfig, state_dir: Path, start: datetime, warmup_hours: float) -> LinuxSimulatedHost:
    """The host saved in the state folder, else a new one with the configured queue managers, run for
    `warmup_hours` of workload (each queue manager writing its configured log bytes per minute)."""
    path = state_path(state_dir, config.name)
    host = LinuxSimulatedHost.load(path) if path.exists() else None
    if host is None:
        host = LinuxSimulatedHost.create(config.name, start, path)
        for qm in config.queue_managers:
            host.add_queue_manager(
                qm.name,
                log_management=qm.log_management,
                log_file_pages=qm.log_file_pages,
                log_primary_files=qm.log_primary_files,
                log_secondary_files=qm.log_secondary_files,
            )
        if warmup_hours and config.queue_managers:
            per_hour = max(q.log_bytes_per_minute for q in config.queue_managers) * 60 / MB
            host.workload(warmup_hours, mb_per_hour=per_hour)
    with host.state() as state:
        if config.user not in state.mqm_members:
            state.mqm_members.append(config.user)  # the planner's user, a member of group mqm (section 8)
    return host
