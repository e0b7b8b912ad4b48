"""A worker process that runs one mqjournal step, as an Airflow task does: its own process, SSH session, audit
writer, catalog connection and per-host session lease. Faulted steps run in one (the SIGKILL kind kills it while
the host runs a command), so that the rerun, in the test's own process, is another worker, as a task retry is: a
step leaves the open intents of a live worker alone, and the test process is alive.

Workers are forked from a forkserver that has imported this module (and mqjournal) once, so starting one costs
milliseconds, and each starts from a clean, single-threaded process. A worker sends back how its step ended.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import multiprocessing
import sqlite3
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path

import paramiko
from sqlalchemy.exc import SQLAlchemyError

from mqjournal.airflow.leases import host_session_slot
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.collector import Target
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.migrations import head
from mqjournal.recovery.execute import RecoveryExecutor
from tests.safety import scenario
from tests.safety.catalog_lock import shorten_sqlite_busy_timeout

# The lease a killed worker leaves must not outlive it for long; where the lease API takes a time to live, it is
# this (renewed by a live holder), so a test can wait for the slot to come free.
LEASE_TTL = timedelta(seconds=1)

# Opening a catalog imports Alembic and reads the migration scripts, once per process: done here, in the forkserver
# that preloads this module, it is not paid again by every worker forked from it (a fifth of the fault matrix's CPU).
head()


@dataclass(frozen=True)
class WorkerSpec:
    path: str  # a key of scenario.PATHS
    arg: object  # the step's argument (its run id first)
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    catalog_url: str
    audit_path: Path
    store_path: Path
    target: Target
    tz: timezone
    command_timeout: float = scenario.COMMAND_TIMEOUT
    # The DAG takes a per-host SSH session lease (in the catalog database) around every step; None: no lease. The
    # fault matrix runs without one, so that a locked catalog is seen by the step itself (see test_fault_matrix).
    lease_slots: int | None = None


@dataclass(frozen=True)
class StepEnded:
    """How a worker's step ended, as the worker saw it: nothing for success, else its error."""

    error_type: str | None = None
    message: str = ""
    database_error: bool = False  # a SQLAlchemy / sqlite3 error is in the error's chain


class WorkerError(Exception):
    """The step in a worker raised `error_type`; its text is the worker's."""

    def __init__(self, ended: StepEnded) -> None:
        self.ended = ended
        super().__init__(ended.message)

    def __str__(self) -> str:
        return self.ended.message


class WorkerActor:
    """What a step needs from a scenario, rebuilt in the worker from the spec."""

    def __init__(self, spec: WorkerSpec, session: IbmiSession) -> None:
        self.spec, self.session = spec, session
        self.catalog = Catalog(spec.catalog_url)
        self.store = BackupStore(spec.store_path)
        self.target, self.tz = spec.target, spec.tz

    def executor(self, run_id: str, session: IbmiSession | None = None) -> Executor:
        return Executor(session or self.session, self.target, scenario.HOST, self.tz, self.catalog, run_id, self.store)

    def recovery_executor(self, run_id: str, session: IbmiSession | None = None) -> RecoveryExecutor:
        return RecoveryExecutor(session or self.session, self.target, scenario.HOST, self.tz, self.catalog, run_id)


def lease_options(wait: float) -> dict:
    """Keyword arguments for `host_session_slot`: a short time to live where the lease API has one."""
    params = inspect.signature(host_session_slot).parameters
    options: dict = {"wait": wait, "poll": 0.05}
    if "ttl" in params:
        options["ttl"] = LEASE_TTL
    return options


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def run_step(spec: WorkerSpec, answer) -> None:
    shorten_sqlite_busy_timeout()
    logging.getLogger().addHandler(logging.NullHandler())  # the step's warnings are the test's to judge, not noise
    try:
        key = paramiko.ECDSAKey.from_private_key_file(str(spec.client_key))
        connect = ssh_connector(
            address="127.0.0.1", port=spec.port, user=spec.user, key=key, known_hosts=spec.known_hosts
        )
        lease = (
            host_session_slot(spec.catalog_url, scenario.HOST, slots=spec.lease_slots, **lease_options(30.0))
            if spec.lease_slots is not None
            else contextlib.nullcontext()
        )
        with lease:
            session = IbmiSession(
                scenario.HOST,
                spec.user,
                connect,
                audit=AuditLog(spec.audit_path),
                command_timeout=spec.command_timeout,
                retry=scenario.FAST_RETRY,
            )
            with session:
                scenario.PATHS[spec.path].run(WorkerActor(spec, session), spec.arg, session)
    except Exception as exc:
        database = any(isinstance(e, (SQLAlchemyError, sqlite3.Error)) for e in _chain(exc))
        answer.send(StepEnded(type(exc).__name__, f"{type(exc).__name__}: {exc}", database))
    else:
        answer.send(StepEnded())


_context = None


def start(spec: WorkerSpec):
    """Start a worker on `spec`; returns (process, the connection its `StepEnded` arrives on)."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([__name__])
    receive, send = _context.Pipe(duplex=False)
    process = _context.Process(target=run_step, args=(spec, send), name=f"mqjournal-step-{spec.path}", daemon=True)
    process.start()
    send.close()
    return process, receive
