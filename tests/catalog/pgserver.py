"""A real PostgreSQL server on loopback, started and stopped by whoever needs one: the catalog tests, fleet_bench's
PostgreSQL catalog. Durable as a production server is (fsync and synchronous commits on), so that a figure measured on
it is the database's, not a throwaway's."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise RuntimeError(
            f"PostgreSQL's {name} is not installed (Debian: apt-get install postgresql); make test installs it "
            "(scripts/system-packages.sh)"
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of database `catalog` on a new server of its own (trust auth on loopback), stopped on leaving."""
    # PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user the package creates.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="mqjournal-pg-", dir="/tmp"))
    data = home / "data"
    if as_user:
        shutil.chown(home, "postgres")
    port = _free_port()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*as_user, *args], check=True, capture_output=True, text=True)

    try:
        run(_bin("initdb"), "-D", str(data), "-U", "mqjournal", "--auth=trust", "-E", "UTF8")
        run(
            _bin("pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(home / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={home}",
            "start",
        )
        try:
            run(_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "mqjournal", "catalog")
            yield f"postgresql+psycopg://mqjournal@127.0.0.1:{port}/catalog"
        finally:
            run(_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(home, ignore_errors=True)
