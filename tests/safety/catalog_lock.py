"""The catalog made unavailable: its SQLite database locked exclusively by another connection.

The catalog's engine waits up to 30 s for a lock; the safety tests make every SQLite connection of the process
wait a quarter of a second instead (`shorten_sqlite_busy_timeout`), which changes how long a step waits, not what
it does once the wait is over: "database is locked".
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine

BUSY_TIMEOUT_MS = 250

_installed = False
_lock = threading.Lock()


def _on_connect(dbapi_connection, connection_record) -> None:
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def shorten_sqlite_busy_timeout() -> None:
    global _installed
    with _lock:
        if not _installed:
            event.listen(Engine, "connect", _on_connect)
            _installed = True


def restore_sqlite_busy_timeout() -> None:
    global _installed
    with _lock:
        if _installed:
            event.remove(Engine, "connect", _on_connect)
            _installed = False


class CatalogLock:
    """An exclusive lock on the catalog's SQLite file, taken and released from any thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None

    @property
    def held(self) -> bool:
        return self._connection is not None

    def acquire(self) -> None:
        if self._connection is not None:
            return
        connection = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        connection.execute("BEGIN EXCLUSIVE")
        self._connection = connection

    def release(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.execute("ROLLBACK")
            connection.close()
