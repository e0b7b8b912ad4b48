"""A simulated Linux, AIX or Windows MQ host at run time: its state under a lock, its shell, a workload, and
persistence as JSON.

The shell of a Linux or AIX host runs one simple command per line, split as bash splits words (`shlex`): pipes, lists
and redirections are not simulated and are refused (exit 2) rather than run as something else, since mqjournal never
sends them. A Windows host's line is answered as cmd.exe would run it (linuxsim/windows.py), with the host's
`layout` (its cmd.exe settings, certutil's form: not saved with the state, SIMPLIFICATION).
"""

from __future__ import annotations

import contextlib
import logging
import ntpath
import os
import shlex
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxsim import commands, logger, windows
from mqjournal.linuxsim.model import (
    STATE_VERSION,
    LinuxHost,
    LinuxQueueManager,
    LogExtent,
    new_queue_manager,
    on_platform,
)
from mqjournal.sim.protocol import ExecResult

log = logging.getLogger(__name__)
MB = 1024 * 1024
_OPERATORS = frozenset("|&;<>()")


class LinuxSimulatedHost:
    """One Linux host. Every command and every clock change runs under `lock` and is saved to `state_path`."""

    def __init__(self, host: LinuxHost, state_path: Path | None = None) -> None:
        self.host = host
        self.state_path = state_path
        self.lock = threading.RLock()
        self.layout = windows.WindowsLayout()
        """A Windows host's cmd.exe settings and answers' forms (linuxsim/windows.py); unused on Linux and AIX."""

    @classmethod
    def create(
        cls,
        name: str,
        now: datetime,
        state_path: Path | None = None,
        *,
        platform: Literal["linux", "aix", "windows"] = "linux",
    ) -> LinuxSimulatedHost:
        host = LinuxHost(name=name, now=now, platform=platform)
        if platform == "aix":
            host.log_file_system.device = "/dev/fslv00"  # crfs's name for a file system's first logical volume
        simulated = cls(host, state_path)
        simulated.save()
        return simulated

    @classmethod
    def load(cls, state_path: Path) -> LinuxSimulatedHost | None:
        """The host saved at `state_path`, or None if it is unreadable or of another version (discard it)."""
        try:
            host = LinuxHost.model_validate_json(state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            log.warning("discarding unreadable simulator state %s", state_path)
            return None
        if host.state_version != STATE_VERSION:
            log.warning("discarding simulator state %s of another version", state_path)
            return None
        return cls(host, state_path)

    def save(self) -> None:
        """Write the state atomically: a simulator killed mid-write restarts as the last whole host."""
        if self.state_path is None:
            return
        with self.lock:
            text = self.host.model_dump_json()
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.state_path)

    @contextlib.contextmanager
    def state(self) -> Iterator[LinuxHost]:
        """Change the host directly (tests, scenarios): under the lock, saved afterwards."""
        with self.lock:
            try:
                yield self.host
            finally:
                self.save()

    def add_queue_manager(
        self,
        name: str,
        *,
        log_management: LogManagement = LogManagement.MANUAL,
        log_file_pages: int = 4096,
        log_primary_files: int = 3,
        log_secondary_files: int = 2,
        objects: tuple[tuple[str, str], ...] = (),
        img_sched: Literal["MANUAL", "AUTO"] = "MANUAL",
        first_extent: int = 0,
    ) -> LinuxQueueManager:
        """crtmqm and strmqm of a linear-logging queue manager (one that has run for long, from `first_extent`:
        model.new_queue_manager)."""
        with self.state() as host:
            if name in host.queue_managers:
                raise ValueError(f"queue manager {name} exists")
            qm = new_queue_manager(
                name,
                host.now,
                log_management=log_management,
                log_file_pages=log_file_pages,
                log_primary_files=log_primary_files,
                log_secondary_files=log_secondary_files,
                objects=objects,
                img_sched=img_sched,
                first_extent=first_extent,
            )
            host.queue_managers[qm.name] = placed = on_platform(qm, host.platform)
            return placed

    # --- the shell ----------------------------------------------------------------------------------------

    def run(self, command_line: str, user: str, stdin: str = "") -> ExecResult:
        """What sshd runs for an exec request: one simple command, with `stdin` (runmqsc's MQSC)."""
        if self.host.platform == "windows":
            return self._run_windows(command_line, user, stdin)
        try:
            lexer = shlex.shlex(command_line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            words = list(lexer)
        except ValueError as exc:
            return ExecResult(2, "", f"bash: -c: line 1: syntax error: {exc}\n")
        operators = [w for w in words if w and set(w) <= _OPERATORS]
        if operators:
            return ExecResult(2, "", f"bash: the simulator runs simple commands only, not {operators[0]!r}\n")
        with self.lock:
            try:
                return commands.run(self.host, user, words, stdin)
            finally:
                if words and words[0].rsplit("/", 1)[-1] in commands.CHANGES_STATE:
                    self.save()

    def _run_windows(self, command_line: str, user: str, stdin: str) -> ExecResult:
        """What Win32-OpenSSH's `cmd.exe /c "<line>"` gives back; the state saved after a program that changes it."""
        with self.lock:
            try:
                return windows.answer(self.host, user, command_line, stdin, self.layout)
            finally:
                words = windows.split_arguments(command_line)
                program = ntpath.splitext(ntpath.basename(words[0]))[0].lower() if words else ""
                if program in commands.CHANGES_STATE or program in ("del", "erase"):
                    self.save()

    # --- files, as SFTP would move them -------------------------------------------------------------------

    def extent_at(self, path: str) -> tuple[LinuxQueueManager, str] | None:
        """The queue manager whose active directory holds `path` (the host's own form of it), and the file's name."""
        if self.host.platform == "windows":
            return windows.extent_at(self.host, path)
        return commands.in_active(self.host, path)

    def active_at(self, path: str) -> LinuxQueueManager | None:
        """The queue manager whose active directory `path` is."""
        if self.host.platform == "windows":
            return windows.active_queue_manager(self.host, path)
        return commands.active_directory(self.host, path)

    def read_extent(self, path: str) -> Iterator[bytes]:
        """The bytes of an extent file, streamed (what a download of it gets). FileNotFoundError elsewhere."""
        with self.lock:
            found = self.extent_at(path)
            extent = found[0].extents.get(found[1]) if found else None
            if found is None or extent is None:
                raise FileNotFoundError(path)
            qm = found[0]
            name, size, number = qm.name, qm.extent_size, extent.number
        return logger.content(name, number, size)

    def write_extent(self, path: str, chunks: Iterable[bytes]) -> LogExtent:
        """A file written back into `active/` (a restore): intact only with the bytes the queue manager wrote."""
        with self.state():
            found = self.extent_at(path)
            if found is None:
                raise PermissionError(path)
            return logger.restore_extent(found[0], found[1], chunks, at=self.host.now)

    # --- time and work ------------------------------------------------------------------------------------

    def workload(
        self,
        hours: float,
        *,
        mb_per_hour: float = 64,
        checkpoint_every_mb: float = 4,
        step_minutes: int = 5,
        bytes_per_minute: Mapping[str, int] | None = None,
        events: Sequence[tuple[float, str, Callable[[LinuxQueueManager], None]]] = (),
    ) -> None:
        """`hours` of work on every running queue manager: log records written evenly (`bytes_per_minute` of a queue
        manager named there, else `mb_per_hour`), a checkpoint after each `checkpoint_every_mb` of them, and
        (IMGSCHED AUTO) media images when IMGINTVL minutes or IMGLOGLN MB have passed since the last (ami, verified:
        "when workload permits" is taken as at once). Each of `events`, (hour, queue manager, what happens to it),
        happens once that many hours in. The clock moves on."""
        steps = max(1, round(hours * 60 / step_minutes))
        per_step = int(mb_per_hour * MB * step_minutes / 60)
        since_checkpoint: dict[str, int] = {}
        waiting = sorted(events, key=lambda e: e[0])
        for step in range(steps):
            with self.state() as host:
                host.now += timedelta(minutes=step_minutes)
                while waiting and waiting[0][0] * 60 <= (step + 1) * step_minutes:
                    _, name, happen = waiting.pop(0)
                    happen(host.queue_managers[name])
                for qm in host.queue_managers.values():
                    if not qm.running:
                        continue
                    written = per_step if bytes_per_minute is None else bytes_per_minute[qm.name] * step_minutes
                    logger.write(qm, written, at=host.now)
                    since_checkpoint[qm.name] = since_checkpoint.get(qm.name, 0) + written
                    if since_checkpoint[qm.name] >= checkpoint_every_mb * MB:
                        logger.checkpoint(qm)
                        since_checkpoint[qm.name] = 0
                    if _image_due(qm, host.now):
                        logger.record_media_images(qm, "*", "all", at=host.now)

    def advance(self, delta: timedelta) -> None:
        with self.state() as host:
            host.now += delta


def _image_due(qm: LinuxQueueManager, now: datetime) -> bool:
    if qm.img_sched != "AUTO":
        return False
    by_time = qm.img_interval_minutes is not None and now - qm.last_image_at >= timedelta(
        minutes=qm.img_interval_minutes
    )
    by_log = qm.img_log_length_mb is not None and qm.bytes_since_image >= qm.img_log_length_mb * MB
    return by_time or by_log
