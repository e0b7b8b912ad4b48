"""A simulated partition at run time: its state under a lock, persisted after every change, and its shell."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.sim import digest, mq
from mqjournal.sim.clcommands import InquiryWait
from mqjournal.sim.model import (
    STATE_VERSION,
    ClusterMembership,
    CommandFault,
    JobAttributes,
    Partition,
    UserProfile,
    WithheldAuthority,
    Workload,
)
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.shell import Utility, qsh, run_line, system_arguments
from mqjournal.sim.streamfiles import Pase
from mqjournal.sim.system import changes_partition, run_cl
from mqjournal.sim.views import PartitionCatalog

if TYPE_CHECKING:
    from mqjournal.sim.sql import ViewTables

# The job's language and date/time formats: how `system` and MESSAGE_TEXT show message texts (language.py).
JOB_FIELDS = {"language", "date_format", "date_separator", "time_separator"}
log = logging.getLogger(__name__)

MQS_INI = "/QIBM/UserData/mqm/mqs.ini"


class SimulatedHost:
    """One partition. Every command and every clock change runs under `lock` and is saved to `state_path`."""

    def __init__(self, partition: Partition, state_path: Path | None) -> None:
        self.partition = partition
        self.state_path = state_path
        self.lock = threading.RLock()
        self._replies = threading.Condition(self.lock)
        self._pending: dict[int, str | None] = {}
        self._stopping = False
        # Counts the partition's changes (each ends in save()), so that the SQL services' tables built from it
        # (ViewTables) are kept while it stays the same and built again once it changed.
        self.generation = 0
        self._view_tables: ViewTables | None = None

    @classmethod
    def create(cls, config: HostConfig, start: datetime, state_path: Path | None) -> SimulatedHost:
        partition = Partition(
            name=config.name,
            now=(start + timedelta(seconds=config.system.clock_offset_seconds)).astimezone(config.tz),
            inquiry_reply=config.inquiry_reply,
            state_version=STATE_VERSION,
            release=config.system.release,
            job=JobAttributes(**config.system.model_dump(include=JOB_FIELDS)),
        )
        host = cls(partition, state_path)
        host.apply_faults(config)
        host.apply_system(config)
        for qm in config.queue_managers:
            host.add_queue_manager(qm)
        host.save()
        return host

    @classmethod
    def load(cls, state_path: Path) -> SimulatedHost | None:
        """The partition saved at `state_path`, or None if it was written by an older simulator (discard it)."""
        try:
            partition = Partition.model_validate_json(state_path.read_text(encoding="utf-8"))
        except ValueError:
            log.warning("discarding unreadable simulator state %s", state_path)
            return None
        if partition.state_version != STATE_VERSION:
            log.warning("discarding simulator state %s of an older version", state_path)
            return None
        return cls(partition, state_path)

    def apply_faults(self, config: HostConfig) -> None:
        """The fleet file's partition-level faults (transport faults are the SSH server's, see service.py)."""
        with self.lock:
            faults = self.partition.faults
            faults.asp_full = config.faults.asp_full
            faults.ccsid_unconvertible = config.faults.ccsid_unconvertible
            faults.qsys_sftp_read_refused = config.faults.qsys_sftp_read_refused
            faults.qsys_pase_copy_refused = config.faults.qsys_pase_copy_refused
            faults.commands = [CommandFault(**f.model_dump()) for f in config.faults.commands]
            # Not a fault, but read from the fleet file on every start like one: whether an admin linked
            # /QOpenSys/usr/bin/db2 to qsh, so that a bare `db2` runs in the PASE shell.
            self.partition.db2_link = config.system.db2_link
            self.partition.digest_programs = list(config.system.digest_programs)
            self.partition.time_zone = config.system.time_zone or ""
            self.partition.time_zone_rules = config.time_zone_rules or ""

    def apply_system(self, config: HostConfig) -> None:
        """The fleet file's partition setup: release, the signed-on user profile, libraries an admin made, clock."""
        system = config.system
        with self.lock:
            p = self.partition
            p.release = system.release
            p.db2_group_level = system.db2_group_level
            # The job's language and formats too: a simulator restarted on an edited fleet file answers as it says.
            p.job = JobAttributes(**system.model_dump(include=JOB_FIELDS))
            p.clock_offset_seconds = system.clock_offset_seconds
            p.message_formats = {str(msg_id): fmt for msg_id, fmt in system.message_formats.items()}
            # Read on every start: save files made from now on take these sizes; those made before keep theirs.
            p.save_file_size_factor = system.save_file_size_factor
            p.save_compression_ratios = {str(value): ratio for value, ratio in system.save_compression_ratios.items()}
            p.user_profile = UserProfile(
                special_authorities=list(system.special_authorities),
                group_profile=system.group_profile,
                supplemental_groups=list(system.supplemental_groups),
                withheld=[WithheldAuthority(**w.model_dump()) for w in system.withheld_authorities],
            )
            for library in system.libraries:
                if library not in p.libraries:
                    p.libraries.append(library)

    def register_user(self, user: str) -> None:
        """A user profile SSH signs on with (the fleet's user): QSYS2.USER_INFO shows the profile under its name."""
        with self.lock:
            if user not in self.partition.signed_on_users:
                self.partition.signed_on_users.append(user)

    @property
    def clock_offset(self) -> timedelta:
        return timedelta(seconds=self.partition.clock_offset_seconds)

    def add_queue_manager(self, config: QueueManagerConfig) -> None:
        with self.lock:
            mq.create_queue_manager(
                self.partition,
                config.name,
                config.qmgr_library,
                threshold_kb=config.threshold_kb,
                objects=tuple(config.objects),
                workload=Workload(entries_per_minute=config.entries_per_minute, entry_bytes=config.entry_bytes),
                instance=config.instance,
                clusters=tuple(
                    ClusterMembership(name=c.name, full_repository=c.full_repository) for c in config.clusters
                ),
            )

    # --- state ------------------------------------------------------------------------------------------

    def save(self) -> None:
        """Write the state atomically: a simulator killed mid-write restarts as the last whole partition. Every
        change of the partition ends here, which counts it (`generation`)."""
        with self.lock:
            self.generation += 1
            if self.state_path is None:
                return
            text = self.partition.model_dump_json()
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, self.state_path)

    @contextlib.contextmanager
    def state(self) -> Iterator[Partition]:
        """Change the partition directly (tests, scenarios): under the lock, saved afterwards."""
        with self.lock:
            try:
                yield self.partition
            finally:
                self.save()  # also after a failed change, which may have changed part of the partition

    def advance(self, delta: timedelta) -> None:
        with self.state() as partition:
            mq.advance(partition, partition.now + delta)

    def advance_to(self, moment: datetime) -> None:
        with self.state() as partition:
            if moment > partition.now:
                mq.advance(partition, moment)

    def warm_up(self, config: HostConfig, start: datetime, hours: float) -> None:
        """Run `hours` of workload from `start`, staging the fleet file's trouble at its hour."""
        events: list[tuple[float, str, str | None]] = []
        for qm in config.queue_managers:
            if qm.long_running_unit_of_work_at_hour is not None:
                events.append((qm.long_running_unit_of_work_at_hour, qm.name, None))
            if qm.damaged_object is not None:
                events.append((qm.damaged_at_hour, qm.name, qm.damaged_object))
        for hour, name, damaged in sorted(events, key=lambda e: e[0]):
            if hour >= hours:
                continue
            self.advance_to(start + timedelta(hours=hour))
            with self.state() as partition:
                live = partition.queue_manager(name)
                # The events come from the fleet file's own queue managers, which the partition was built from.
                assert live is not None, name
                if damaged is None:
                    mq.open_unit_of_work(partition, live)
                else:
                    mq.damage(partition, live, damaged)
        self.advance_to(start + timedelta(hours=hours))

    # --- the shell ----------------------------------------------------------------------------------------

    def run(self, command_line: str, user: str) -> ExecResult:
        """What sshd runs for an exec request: the PASE shell, with IBM i's utilities (see shell.py)."""
        with self.lock:
            self.partition.job_counter += 1
            job = f"{self.partition.job_counter:06d}/{user}/QP0ZSPWP"

        def system(args: list[str]) -> ExecResult:
            _, text = system_arguments(args)
            with self.lock:
                # A command that only reads the partition (CHKOBJ, a display) is not saved after: a save writes the
                # whole partition and starts a new generation of its SQL tables (ViewTables).
                changes = changes_partition(self.partition, text)
                try:
                    return run_cl(self.partition, text, job, self._wait_for_reply)
                finally:
                    if changes:
                        self.save()

        def db2(args: list[str]) -> ExecResult:
            from mqjournal.sim.sql import ViewTables, run_db2

            with self.lock:
                if self._view_tables is None:
                    self._view_tables = ViewTables()
                tables = self._view_tables.at(self.partition, self.generation)
                try:
                    return run_db2(args, PartitionCatalog(self.partition, view_tables=tables))
                finally:
                    if any("ASSOCIATE_JOURNAL_RECEIVER" in a.upper() for a in args):
                        self.save()  # the one table function that changes the partition

        def echo(args: list[str]) -> ExecResult:
            return ExecResult(0, " ".join(args) + "\n")

        # Qshell's own utilities: db2 lives only here; system is Qshell's too (same "MSGID: text" lines).
        qshell = {
            "db2": db2,
            "system": system,
            "echo": echo,
            "true": lambda args: ExecResult(0),
            "false": lambda args: ExecResult(1),
        }
        utilities = {
            "system": system,
            "qsh": qsh(qshell),
            "uname": lambda args: ExecResult(
                0, "OS400\n" if "-a" not in args else f"OS400 {self.partition.name} 4 7 00F000000000\n"
            ),
            "hostname": lambda args: ExecResult(0, f"{self.partition.name}\n"),
            "echo": echo,
            "cat": self._cat,
            "true": lambda args: ExecResult(0),
            "false": lambda args: ExecResult(1),
        }
        pase = Pase(self.partition)

        def locked(utility: Utility) -> Utility:
            def run(args: list[str]) -> ExecResult:
                with self.lock:
                    try:
                        return utility(args)
                    finally:
                        self.save()

            return run

        utilities |= {name: locked(getattr(pase, name)) for name in ("umask", "mkdir", "cp", "rm")}
        if self.partition.db2_link:
            utilities["db2"] = db2  # the admin's link: qsh started as `db2` runs the db2 utility
        utilities |= self._digest_programs()
        return run_line(command_line, utilities)

    def _digest_programs(self) -> dict[str, Utility]:
        """The installed digest programs, by their full path (they are not on the PATH the client relies on)."""

        def program(path: str) -> Utility:
            def run(args: list[str]) -> ExecResult:
                with self.lock:
                    if path == digest.SHA256SUM:
                        return digest.sha256sum(self.partition, args)
                    return digest.openssl(self.partition, path, args)

            return run

        return {path: program(path) for path in self.partition.digest_programs}

    def _cat(self, args: list[str]) -> ExecResult:
        """Only the IFS file the planner reads: MQ's mqs.ini, which maps queue managers to their libraries."""
        if args != [MQS_INI]:
            return ExecResult(2, "", "".join(f"cat: {a}: No such file or directory\n" for a in args))
        with self.lock:
            stanzas = [
                f"QueueManager:\n   Name={q.name}\n   Prefix=/QIBM/UserData/mqm\n   Library={q.library}\n"
                f"   Directory={q.name}\n"
                for q in self.partition.queue_managers
            ]
        return ExecResult(0, "AllQueueManagers:\n   DefaultPrefix=/QIBM/UserData/mqm\n\n" + "\n".join(stanzas))

    # --- inquiry messages -----------------------------------------------------------------------------------

    def _wait_for_reply(self, wait: InquiryWait) -> str | None:
        """Block the job (MSGW) until an operator replies; the lock is released while waiting."""
        self._pending[wait.message_key] = None
        self.save()
        while self._pending.get(wait.message_key) is None and not self._stopping:
            self._replies.wait(timeout=0.5)
        return self._pending.pop(wait.message_key, None)

    def waiting_inquiries(self) -> list[int]:
        with self.lock:
            return [key for key, reply in self._pending.items() if reply is None]

    def reply(self, message_key: int, reply: str) -> None:
        """An operator answers an inquiry (as on WRKMSG QSYSOPR)."""
        with self.lock:
            if message_key not in self._pending:
                raise KeyError(f"no job waits on message key {message_key}")
            self._pending[message_key] = reply
            self._replies.notify_all()

    def stop(self) -> None:
        with self.lock:
            self._stopping = True
            self._replies.notify_all()
