"""A fleet file's Linux, AIX and Windows hosts as the simulator serves them: made from their configuration or loaded
from the state folder (`<host>.linux.json`), warmed up, and which of their commands read standard input."""

from __future__ import annotations

import ntpath
import shlex
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from pathlib import Path

from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.linuxsim.model import LinuxQueueManager
from mqjournal.linuxsim.windows import split_arguments

__all__ = ["linux_host", "reads_stdin", "state_path"]

_READS_STDIN = frozenset({"runmqsc"})  # "The runmqsc command takes its input from stdin" (q083460)


def state_path(state_dir: Path, name: str) -> Path:
    return state_dir / f"{name}.linux.json"


def reads_stdin(command_line: str, *, windows: bool = False) -> bool:
    """Whether the line runs a program that reads standard input (runmqsc): a POSIX shell's first word, or on Windows
    cmd.exe's program (`"C:\\...\\bin\\runmqsc.exe"`, any case, with or without .exe)."""
    if windows:
        words = split_arguments(command_line)
        program = ntpath.splitext(ntpath.basename(words[0]))[0].lower() if words else ""
        return program in _READS_STDIN
    try:
        words = shlex.split(command_line)
    except ValueError:
        return False
    return bool(words) and words[0].rsplit("/", 1)[-1] in _READS_STDIN


def _events(config: LinuxHostConfig) -> Iterator[tuple[float, str, Callable[[LinuxQueueManager], None]]]:
    """What the fleet file says happens to a queue manager during the warm-up: a unit of work that begins and never
    ends (RECLOG stays in the extent it began in), an object that gets damaged (MEDIALOG stays at its last image)."""
    for qm in config.queue_managers:
        if qm.long_running_unit_of_work_at_hour is not None:
            yield (
                qm.long_running_unit_of_work_at_hour,
                qm.name,
                partial(logger.open_unit_of_work, uow_id="long-running"),
            )
        if qm.damaged_object is not None:
            yield qm.damaged_at_hour, qm.name, partial(logger.damage, name=qm.damaged_object)


def linux_host(config: LinuxHostConfig, state_dir: Path, start: datetime, warmup_hours: float) -> LinuxSimulatedHost:
    """The host saved in the state folder, else a new one with the configured queue managers, run for
    `warmup_hours` of workload (each queue manager writing its configured log bytes per minute)."""
    path = state_path(state_dir, config.name)
    host = LinuxSimulatedHost.load(path) if path.exists() else None
    if host is not None and host.host.platform != config.platform:
        host = None  # the fleet file made it a host of another platform: a new one, as a fresh state folder would
    if host is None:
        host = LinuxSimulatedHost.create(config.name, start, path, platform=config.platform)
        for qm in config.queue_managers:
            host.add_queue_manager(
                qm.name,
                log_management=qm.log_management,
                log_file_pages=qm.log_file_pages,
                log_primary_files=qm.log_primary_files,
                log_secondary_files=qm.log_secondary_files,
                objects=((qm.damaged_object, "queue"),) if qm.damaged_object else (),
            )
        if warmup_hours and config.queue_managers:
            host.workload(
                warmup_hours,
                bytes_per_minute={q.name: q.log_bytes_per_minute for q in config.queue_managers},
                events=list(_events(config)),
            )
    with host.state() as state:
        if config.user not in state.mqm_members:
            state.mqm_members.append(config.user)  # the planner's user, a member of group mqm (section 8)
    return host
