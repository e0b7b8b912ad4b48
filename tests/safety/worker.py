"""A worker process that runs one mqjournal step, as an Airflow task does: its own SSH session, audit writer, catalog
connection and per-host session lease. The fault matrix SIGKILLs it while the host runs a command.

Workers are forked from a forkserver that has imported this module (and mqjournal) once, so starting one costs
milliseconds, and each starts from a clean, single-threaded process.
"""

from __future__ import annotations

import inspect
import multiprocessing
from dataclasses import dataclass
from datetime import timedelta, timezone
from pathlib import Path

import paramiko

from mqjournal.airflow.leases import host_session_slot
from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.collector import Target
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.recovery.execute import RecoveryExecutor
from tests.safety import scenario  # noqa: F401  (preloaded: the steps' code is imported before the fork)
from tests.safety.catalog_lock import shorten_sqlite_busy_timeout

# The lease a killed worker leaves must not outlive it for long; where the lease API takes a time to live, it is
# this (renewed by a live holder), so a test can wait for the slot to come free.
LEASE_TTL = timedelta(seconds=1)


@dataclass(frozen=True)
class WorkerSpec:
    path: str  # a key of scenario.PATHS
    arg: object
    run_id: str
    port: int
    user: str
    client_key: Path
    known_hosts: Path
    catalog_url: str
    audit_path: Path
    target: Target
    tz: timezone
    lease_slots: int = 2


class WorkerActor:
    """What a step needs from a scenario, rebuilt in the worker from the spec."""

    def __init__(self, spec: WorkerSpec, session: IbmiSession) -> None:
        self.spec, self.session = spec, session
        self.catalog = Catalog(spec.catalog_url)
        self.target, self.tz = spec.target, spec.tz

    def executor(self, run_id: str, session: IbmiSession | None = None) -> Executor:
        return Executor(session or self.session, self.target, scenario.HOST, self.tz, self.catalog, run_id)

    def recovery_executor(self, run_id: str, session: IbmiSession | None = None) -> RecoveryExecutor:
        return RecoveryExecutor(session or self.session, self.target, scenario.HOST, self.tz, self.catalog, run_id)


def lease_options(wait: float) -> dict:
    """Keyword arguments for `host_session_slot`: a short time to live where the lease API has one."""
    params = inspect.signature(host_session_slot).parameters
    options: dict = {"wait": wait, "poll": 0.05}
    if "ttl" in params:
        options["ttl"] = LEASE_TTL
    return options


def run_step(spec: WorkerSpec) -> None:
    shorten_sqlite_busy_timeout()
    key = paramiko.ECDSAKey.from_private_key_file(str(spec.client_key))
    connect = ssh_connector(address="127.0.0.1", port=spec.port, user=spec.user, key=key,
                            known_hosts=spec.known_hosts)
    with host_session_slot(spec.catalog_url, scenario.HOST, slots=spec.lease_slots, **lease_options(30.0)):
        session = IbmiSession(scenario.HOST, spec.user, connect, audit=AuditLog(spec.audit_path),
                              command_timeout=scenario.COMMAND_TIMEOUT, retry=scenario.FAST_RETRY)
        with session:
            scenario.PATHS[spec.path].run(WorkerActor(spec, session), spec.arg, session)


_context = None


def start(spec: WorkerSpec) -> multiprocessing.process.BaseProcess:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([__name__])
    process = _context.Process(target=run_step, args=(spec,), name=f"mqjournal-step-{spec.path}", daemon=True)
    process.start()
    return process
