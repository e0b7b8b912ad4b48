"""One simulated partition per case, reached over SSH as the maintenance and recovery DAGs reach it.

A `Scenario` is cheap (a fresh simulator in a temporary folder: about a tenth of a second with its setup), and
deterministic: the same path set up twice sends the very same commands, which is what lets the fault matrix name a
command of a fault-free run and hit the same command in a faulted one. Being deterministic, a path's set-up can be
done once and copied (`SetUp`): the fault matrix starts every case of a path from such a copy.

Everything mqjournal does goes over SSH through sessions that write `audit_path`; everything "someone else" does
(an operator, another backup product) runs on the host directly (`operator`), so the simulator's log of received
commands holds mqjournal's commands only.
"""

from __future__ import annotations

import atexit
import copy
import dataclasses
import os
import shlex
import shutil
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from pathlib import Path
from typing import Any

from mqjournal import rules
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi import capabilities, hostdigest
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.collector import Target, collect
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.executor import DeleteResult, Executor, SaveResult
from mqjournal.ibmi.transport import IbmiSession, RetryPolicy, ssh_connector
from mqjournal.policy import Policy
from mqjournal.recovery.execute import RecoveryExecutor
from mqjournal.recovery.gather import gather
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import RecoveryPlan, Request
from mqjournal.recovery.planner import plan_recovery
from mqjournal.sim import mq
from mqjournal.sim.model import Partition
from mqjournal.sim.protocol import ExecResult
from mqjournal.sim.server import CommandLog, ReceivedCommand
from mqjournal.sim.service import SimulatorService
from tests.conftest import fleet_config
from tests.safety.invariants import Report, SafetyChecker, cl_param

HOST = "ibmi1"
QMGR = "TEST"
LIBRARY = "QMTEST"
SAVE_LIBRARY = "QGPL"
QUEUE = "APP.REQUEST.QUEUE"
OPERATOR = "QSECOFR"
# Retries as the transport does them, without its half-second back-off: the matrix has many cases to get through.
FAST_RETRY = RetryPolicy(attempts=3, first_delay=0.01, factor=2.0, max_delay=0.05)
COMMAND_TIMEOUT = 10.0


@dataclass
class Maintenance:
    """One whole maintenance run on the queue manager: collect, plan, save, delete."""

    run_id: str
    to_save: list[str]
    to_delete: list[str]
    saved: SaveResult
    deleted: DeleteResult

    def unfinished(self) -> list[str]:
        """What a run on an undisturbed host must have done and did not: saves and deletes the plan asked for."""
        problems = [f"{name} not saved: {why}" for name, why in self.saved.not_saved if "attached" not in why]
        done = set(self.deleted.deleted) | set(self.deleted.already_gone)
        kept = dict(self.deleted.kept)
        problems += [
            f"{name} not deleted: {kept.get(name, 'not attempted')}" for name in self.to_delete if name not in done
        ]
        if self.deleted.failed is not None:
            problems.append(f"delete failed on {self.deleted.failed[0]}: {self.deleted.failed[1]}")
        return problems


@dataclass
class Scenario:
    root: Path
    # Start from what a path's set-up left (its files copied into `root`, which must be the folder it was taken in)
    # instead of a new partition and catalog; see `SetUp`.
    restore: SetUp | None = None
    service: SimulatorService = field(init=False)

    def __post_init__(self) -> None:
        if self.restore is not None:
            self.restore.copy_into(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.config = fleet_config(self.root)
        self.service = SimulatorService(self.config)
        if self.restore is not None:
            self.restore.replay_logs(self.service)  # before the server listens: no command of the case comes first
        self.ports = self.service.start()
        self.host = self.service.hosts[HOST]
        self.audit_path = self.root / "audit.jsonl"
        self.db_path = self.root / "catalog.db"
        self.catalog_url = f"sqlite:///{self.db_path}"
        if not self.db_path.exists():
            _empty_catalog(self.db_path)
        self.catalog = Catalog(self.catalog_url)
        self.store_path = self.root / "backups"
        self.store = BackupStore(self.store_path)
        # Save files someone else deleted, and the deletions made before that which had their saves in them.
        self.removed_save_files: set[str] = set()
        self.excused_deletions: set[tuple[str, str]] = set()
        self._sessions: list[IbmiSession] = []
        self.session = self.new_session()
        self.target: Target
        self.tz: timezone
        if self.restore is not None:
            self.restore.resume(self)
            return
        found = survey(self.session, HOST, [])
        (self.target,) = found.targets
        self.tz = found.tz

    # --- reaching the host as mqjournal does -----------------------------------------------------------------

    @property
    def user(self) -> str:
        return self.config.user

    def connector(self):
        return ssh_connector(
            address="127.0.0.1",
            port=self.ports[HOST],
            user=self.user,
            key=self.service.client_key,
            known_hosts=self.config.known_hosts,
        )

    def new_session(self, *, command_timeout: float = COMMAND_TIMEOUT) -> IbmiSession:
        session = IbmiSession(
            HOST,
            self.user,
            self.connector(),
            audit=AuditLog(self.audit_path),
            command_timeout=command_timeout,
            retry=FAST_RETRY,
        )
        self._sessions.append(session)
        return session

    def executor(self, run_id: str, session: IbmiSession | None = None) -> Executor:
        return Executor(session or self.session, self.target, HOST, self.tz, self.catalog, run_id, self.store)

    def recovery_executor(self, run_id: str, session: IbmiSession | None = None) -> RecoveryExecutor:
        return RecoveryExecutor(session or self.session, self.target, HOST, self.tz, self.catalog, run_id)

    def plan(self, run_id: str, session: IbmiSession | None = None) -> tuple[list[str], list[str]]:
        """Checkpoint, collect and plan as the DAG does: (receivers to save, receivers to delete oldest first)."""
        snap = collect(session or self.session, self.target, host=HOST, run_id=run_id, tz=self.tz)
        _, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=Policy())
        # As the DAG's save step (maintenance.save_one): what to save, then what to delete; proven ones are skipped.
        to_save = [r.receiver for r in rows if r.action in rules.SAVES or r.action in rules.DELETES]
        to_delete = [r.receiver for r in sorted(rows, key=lambda r: r.chain_position or 0) if r.action in rules.DELETES]
        return to_save, to_delete

    def maintain(self, run_id: str, session: IbmiSession | None = None) -> Maintenance:
        to_save, to_delete = self.plan(run_id, session)
        executor = self.executor(run_id, session)
        saved = executor.save(to_save, save_library=SAVE_LIBRARY)
        deleted = executor.delete(to_delete, policy=Policy())
        return Maintenance(run_id, to_save, to_delete, saved, deleted)

    def recovery_plan(self, kind: RecoveryKind, **fields) -> RecoveryPlan:
        request = Request(host=HOST, qmgr=QMGR, kind=kind, **fields)
        inputs = gather(self.session, self.target, host=HOST, tz=self.tz, catalog=self.catalog, request=request)
        return plan_recovery(inputs)

    # --- the host itself ---------------------------------------------------------------------------------------

    def advance(self, delta: timedelta) -> None:
        self.host.advance(delta)

    def operator(self, cl: str) -> ExecResult:
        """Someone else runs CL on the partition (not through mqjournal's SSH sessions)."""
        return self.host.run(f"system {shlex.quote(cl)}", OPERATOR)

    def remove_save_file(self, path: str) -> ExecResult:
        """Someone else deletes a save file (DLTF). The receivers deleted by then with a save in it are excused."""
        deleted = {(d.library, d.receiver) for d in self.catalog.deletions_for(HOST, LIBRARY)}
        for entry in self.received():
            if entry.ran and entry.exit_status == 0 and "DLTJRNRCV" in entry.command:
                library, _, name = (cl_param(entry.command, "JRNRCV") or "/").rpartition("/")
                deleted.add((library, name))
        for library, name in deleted:
            if any(f"{s.save_file_library}/{s.save_file}" == path for s in self.catalog.saves_of(HOST, library, name)):
                self.excused_deletions.add((f"{library}/{name}", path))
        out = self.operator(f"DLTF FILE({path})")
        if out.exit_status == 0:
            self.removed_save_files.add(path)
        return out

    def chain(self) -> list[str]:
        """The journal's receivers on the host, oldest first."""
        with self.host.lock:
            found = [r for r in self.host.partition.receivers_in(LIBRARY) if r.attached_at is not None]
            return [r.name for r in sorted(found, key=lambda r: r.attached_at)]

    def received(self, since: int = 0):
        return self.service.received.entries(HOST, since)

    # --- the invariants -------------------------------------------------------------------------------------------

    def checker(self) -> SafetyChecker:
        return SafetyChecker(
            host=self.host,
            host_name=HOST,
            catalog=self.catalog,
            audit_paths=[self.audit_path],
            received=lambda: self.received(),
            store=self.store,
        )

    def check(self, **options) -> Report:
        return self.checker().check(
            removed_save_files=self.removed_save_files, excused_deletions=self.excused_deletions, **options
        )

    def close(self) -> None:
        for session in self._sessions:
            session.close()
        self.service.stop()
        self.catalog.engine.dispose()


def scratch_root(prefix: str) -> Path:
    """A new folder for one scenario (a stateful example's), in memory where there is /dev/shm to write to: the
    audit log fsyncs every record. The caller removes it."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


_EMPTY_CATALOG: Path | None = None


def _empty_catalog(db_path: Path) -> None:
    """Put a new, empty catalog at the schema's newest revision at `db_path`: a copy of one this process migrated once.

    Migrating every scenario's catalog from nothing (Alembic running each revision) cost a tenth of a second of CPU
    apiece; what a scenario tests starts from the empty catalog, not from its migrations (those have their own
    tests: tests/catalog/test_migrations.py)."""
    global _EMPTY_CATALOG
    if _EMPTY_CATALOG is None:
        folder = Path(tempfile.mkdtemp(prefix="mqj-empty-catalog-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        template = folder / "catalog.db"
        Catalog(f"sqlite:///{template}").engine.dispose()
        # Every connection closed: SQLite has moved its write-ahead log into the file, which is then all there is.
        assert [f.name for f in folder.iterdir()] == [template.name], list(folder.iterdir())
        _EMPTY_CATALOG = template
    shutil.copyfile(_EMPTY_CATALOG, db_path)


# --- a path's set-up, done once and copied -------------------------------------------------------------------------


@dataclass(frozen=True)
class SetUp:
    """What a path's set-up left, to start other scenarios from as if each had run the set-up itself.

    On disk, a copy of the scenario's folder once it was closed: the partition (`<host>.json`, written as the
    simulator stops), its SSH keys, the catalog, the backup store and the audit log. The catalog and the store's
    sidecars record absolute paths (the store's URL), so the copy goes back into the very folder it was taken in.
    In memory, what the closed scenario cannot bring back from its files: the simulator's logs of received commands
    and transfers (the invariants read every command the host received, the set-up's included), the session's
    findings that spare a live session its probes (a session of the set-up would not probe again: a new one that
    did would send commands an un-copied case does not), the survey's target, the scenario's notes, and the step's
    argument.
    """

    path: str
    root: Path
    files: Path
    arg: object
    partition: Partition  # as the set-up left it, to compare a restored partition with
    received: tuple[ReceivedCommand, ...]
    transfers: tuple[ReceivedCommand, ...]
    # (a per-session cache, the set-up session's entry in it)
    session_findings: tuple[tuple[weakref.WeakKeyDictionary[IbmiSession, Any], Any], ...]
    target: Target
    tz: timezone
    removed_save_files: frozenset[str]
    excused_deletions: frozenset[tuple[str, str]]

    @classmethod
    def take(cls, path: str, root: Path, files: Path) -> SetUp:
        """Set `path` up in `root` (emptied first), and keep what it left in `files`."""
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)
        s = Scenario(root)
        try:
            arg = PATHS[path].setup(s)
            with s.host.lock:
                partition = s.host.partition.model_copy(deep=True)
            findings = tuple((cache, cache[s.session]) for cache in _SESSION_CACHES if s.session in cache)
            setup = cls(
                path=path,
                root=root,
                files=files,
                arg=copy.deepcopy(arg),
                partition=partition,
                received=tuple(s.service.received.entries()),
                transfers=tuple(s.service.transfers.entries()),
                session_findings=findings,
                target=s.target,
                tz=s.tz,
                removed_save_files=frozenset(s.removed_save_files),
                excused_deletions=frozenset(s.excused_deletions),
            )
        finally:
            s.close()  # the partition is saved to its file as the simulator stops; the catalog's engine is let go
        shutil.copytree(root, files, symlinks=True)
        return setup

    def argument(self) -> object:
        """The step's argument, as the set-up returned it (a copy: a step may change what it is given)."""
        return copy.deepcopy(self.arg)

    def copy_into(self, root: Path) -> None:
        if root != self.root:
            raise ValueError(f"a set-up taken in {self.root} restores there only (its catalog names it), not {root}")
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(self.files, root, symlinks=True)

    def replay_logs(self, service: SimulatorService) -> None:
        _replay(service.received, self.received)
        _replay(service.transfers, self.transfers)

    def resume(self, s: Scenario) -> None:
        s.target, s.tz = self.target, self.tz
        s.removed_save_files |= self.removed_save_files
        s.excused_deletions |= self.excused_deletions
        for cache, finding in self.session_findings:
            cache[s.session] = finding


class SetUps:
    """Each path set up once (in the first scenario's folder, its copy kept under `folder`), and every scenario of it
    started from that copy: the matrix's cases of a path differ only after their set-up, which is deterministic."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._taken: dict[str, SetUp] = {}

    def of(self, path: str, root: Path) -> SetUp:
        """The set-up of `path`, taken in `root` the first time it is asked for."""
        if path not in self._taken:
            self._taken[path] = SetUp.take(path, root, self.folder / path)
        return self._taken[path]

    def start(self, path: str, root: Path) -> tuple[Scenario, object]:
        """A scenario in `root` as `PATHS[path].setup` leaves it, and the step's argument."""
        setup = self.of(path, root)
        return Scenario(root, restore=setup), setup.argument()


# Where a session keeps what it found out about its host, once per session (weakly keyed by it).
_SESSION_CACHES: tuple[weakref.WeakKeyDictionary[IbmiSession, Any], ...] = (capabilities._CACHE, hostdigest._CACHE)


def _replay(log: CommandLog, entries: tuple[ReceivedCommand, ...]) -> None:
    """Append `entries` to an empty log, in order, as they were (seq, state, exit status, answered)."""
    for entry in entries:
        added = log.arrived(entry.host, entry.user, entry.command)
        assert added.seq == entry.seq, (added.seq, entry.seq)
        log.settle(added, **{f.name: getattr(entry, f.name) for f in dataclasses.fields(entry) if f.name != "seq"})


# --- the paths under test -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepPath:
    """A step of mqjournal that changes the host: how to get a scenario ready for it, and how to run it."""

    name: str
    setup: Callable[[Scenario], object]  # returns the step's argument, its run id first
    run: Callable[[object, object, IbmiSession | None], object]  # (actor, argument, session or None)


def _ready_to_save(s: Scenario) -> tuple[str, list[str], list[str]]:
    s.advance(timedelta(minutes=80))  # four receivers to save and delete, and the attached one
    return ("run1", *s.plan("run1"))


def _ready_to_delete(s: Scenario) -> tuple[str, list[str], list[str]]:
    run_id, to_save, to_delete = _ready_to_save(s)
    s.executor(run_id).save(to_save, save_library=SAVE_LIBRARY)
    return run_id, to_save, to_delete


def _delete_out_of_band(s: Scenario, count: int) -> list[str]:
    victims = s.chain()[:count]
    for name in victims:
        out = s.operator(f"DLTJRNRCV JRNRCV({LIBRARY}/{name}) DLTOPT(*IGNINQMSG)")
        assert out.exit_status == 0, out.stderr
    return victims


def _broken_startup(s: Scenario) -> tuple[str, RecoveryPlan]:
    """A unit of work holds the startup point; after maintenance someone deletes two needed (saved) receivers and
    the partition loses power: STRMQM fails with AMQ7432."""
    s.advance(timedelta(minutes=40))
    with s.host.state() as partition:
        mq.open_unit_of_work(partition, partition.queue_manager(QMGR))
    s.advance(timedelta(minutes=50))
    s.maintain("maint1")
    _delete_out_of_band(s, 2)
    with s.host.state() as partition:
        mq.crash(partition, partition.queue_manager(QMGR))
    failed = s.operator(f"STRMQM MQMNAME({QMGR})")
    assert failed.exit_status != 0 and "AMQ7432" in failed.stderr, failed
    plan = s.recovery_plan(RecoveryKind.STARTUP)
    assert plan.executable, plan.markdown()
    return "recovery1", plan


def _damaged_queue(s: Scenario) -> tuple[str, RecoveryPlan]:
    """A damaged queue holds the media recovery point; someone deletes the two oldest (saved) receivers."""
    s.advance(timedelta(minutes=40))
    with s.host.state() as partition:
        mq.damage(partition, partition.queue_manager(QMGR), QUEUE)
    s.advance(timedelta(minutes=50))
    s.maintain("maint1")
    _delete_out_of_band(s, 2)
    plan = s.recovery_plan(RecoveryKind.MEDIA)
    assert plan.executable, plan.markdown()
    return "recovery1", plan


# A step runs on an "actor": a Scenario, or a worker process's stand-in with the same executor()/recovery_executor().


def _save(actor, arg, session: IbmiSession | None):
    run_id, to_save, _ = arg
    return actor.executor(run_id, session).save(to_save, save_library=SAVE_LIBRARY)


def _delete(actor, arg, session: IbmiSession | None):
    run_id, _, to_delete = arg
    return actor.executor(run_id, session).delete(to_delete, policy=Policy())


def _recover(actor, arg, session: IbmiSession | None):
    run_id, plan = arg
    return actor.recovery_executor(run_id, session).execute(plan)


PATHS = {
    "save": StepPath("save", _ready_to_save, _save),
    "delete": StepPath("delete", _ready_to_delete, _delete),
    "startup": StepPath("startup", _broken_startup, _recover),
    "media": StepPath("media", _damaged_queue, _recover),
}


def recovered(s: Scenario, path: str) -> list[str]:
    """What a finished recovery must have achieved on the host (empty when it did)."""
    with s.host.lock:
        qm = s.host.partition.queue_manager(QMGR)
        problems = [] if qm.running else [f"{QMGR} is not running"]
        if path == "media" and qm.object(QUEUE).damaged:
            problems.append(f"{QUEUE} is still damaged")
    return problems
