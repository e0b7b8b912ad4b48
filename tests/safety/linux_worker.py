"""A worker process that runs one Linux step of the fault matrix (linux_matrix.py), as an Airflow task runs it: its own
process, SSH session, audit writer, catalog connection and extent store. The ``sigkill`` kind kills it while the host
runs one of its commands (or while one of its transfers is under way), so that the rerun, in the test's own process,
is another worker, as a task retry is.

Workers are forked from a forkserver that has imported this module (and mqjournal) once, as worker.py's are.
"""

from __future__ import annotations

import logging
import multiprocessing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import IbmiSession, ssh_connector
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.migrations import head
from tests.linuxcollect.fleet import LINUX
from tests.safety import linux_matrix
from tests.safety.catalog_lock import shorten_sqlite_busy_timeout
from tests.safety.scenario import FAST_RETRY

head()  # Alembic's scripts read once, in the forkserver, not by every worker forked from it


@dataclass(frozen=True)
class LinuxWorkerSpec:
    path: str  # a key of linux_matrix.PATHS
    arg: Any
    port: int
    client_key: Path
    known_hosts: Path
    catalog_url: str
    audit_path: Path
    store_path: Path


class WorkerCase:
    """What a step needs of a case, in the worker: the catalog and the store (the host's truth is the test's)."""

    def __init__(self, spec: LinuxWorkerSpec) -> None:
        self.catalog = Catalog(spec.catalog_url)
        self.store = ExtentStore(spec.store_path)

    def on_host(self, extent: str) -> bool:
        return True  # unknown here: an archive that fails raises, and the test's rerun judges


def run_step(spec: LinuxWorkerSpec, answer) -> None:
    shorten_sqlite_busy_timeout()
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        key = paramiko.ECDSAKey.from_private_key_file(str(spec.client_key))
        connect = ssh_connector(
            address="127.0.0.1", port=spec.port, user=linux_matrix.USER, key=key, known_hosts=spec.known_hosts
        )
        session = IbmiSession(LINUX, linux_matrix.USER, connect, audit=AuditLog(spec.audit_path), retry=FAST_RETRY)
        with session:
            linux_matrix.step_of(spec.path).run(WorkerCase(spec), session, spec.arg)
    except Exception as exc:
        answer.send(f"{type(exc).__name__}: {exc}")
    else:
        answer.send(None)


_context = None


def start(spec: LinuxWorkerSpec):
    """Start a worker on `spec`; returns (process, the connection its ending arrives on)."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([__name__])
    receive, send = _context.Pipe(duplex=False)
    process = _context.Process(target=run_step, args=(spec, send), name=f"mqjournal-linux-{spec.path}", daemon=True)
    process.start()
    send.close()
    return process, receive
