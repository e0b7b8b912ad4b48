"""A real PostgreSQL server for the catalog tests: started on loopback by the tests, stopped after them."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.catalog.databases import new_postgres_database


def _bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if found is None:
        raise RuntimeError(
            f"PostgreSQL's {name} is not installed (Debian: apt-get install postgresql); make test installs it (scripts/system-packages.sh)"
        )
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    # PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user the package creates.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="mqjournal-pg-", dir="/tmp"))
    data = home / "data"
    if as_user:
        shutil.chown(home, "postgres")
    port = _free_port()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*as_user, *args], check=True, capture_output=True, text=True)

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
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.xdist_group("postgresql"))])
def empty_database(request, tmp_path) -> str:
    """The URL of a database with nothing in it, on SQLite (the default catalog) and on PostgreSQL (production)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'catalog.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_url"))
