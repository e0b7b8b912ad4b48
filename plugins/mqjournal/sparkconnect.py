"""A standing Spark Connect server for the plan job: the command that starts one from this environment's pyspark,
and a server held for the length of a `with` block (the tests' and the benchmarks').

pip's pyspark ships Spark's Connect server (jars/spark-connect_*.jar) but not Spark's sbin/start-connect-server.sh,
which is a spark-submit of the server's class; `server_command` is that spark-submit. A deployment with a Spark
distribution may run the script instead: the plan task needs only the connection (docs/deploy.md).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from mqjournal.errors import MqJournalError
from mqjournal.planjob import default_conf, spark_submit_executable

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002  # Spark Connect's own default


class ConnectServerFailed(MqJournalError):
    """The Spark Connect server did not start listening."""


def server_command(*, address: str = "127.0.0.1", port: int = DEFAULT_PORT, master: str = "local[*]") -> list[str]:
    """spark-submit of Spark's Connect server, listening on `address` only (loopback unless told otherwise: the
    server runs whatever a client sends it, with the server's own file access)."""
    conf = default_conf(master) | {
        "spark.connect.grpc.binding.address": address,
        "spark.connect.grpc.binding.port": str(port),
    }
    args = [str(spark_submit_executable()), "--class", SERVER_CLASS, "--name", "mqjournal-spark-connect"]
    args += ["--master", master]
    for key, value in conf.items():
        args += ["--conf", f"{key}={value}"]
    return [*args, "spark-internal"]


def listening(address: str, port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((address, port), timeout=1):
        return True
    return False


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


def start_server(
    log: Path, *, address: str, port: int, master: str, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """The command line's server (`mqjournal spark-connect`, which becomes Spark's process: what users run), in a
    session of its own, its output appended to `log` (`wait_until_listening` waits for it to listen); `env` adds to
    this process's environment (SPARK_CONF_DIR, for one).

    The server's Python workers plan each queue manager (`mqjournal.sparkplan.grouped`): unless told otherwise
    (PYSPARK_PYTHON here or in `env`), they are this Python, which has pyarrow and mqjournal's dependencies."""
    python = {} if "PYSPARK_PYTHON" in os.environ else {"PYSPARK_PYTHON": sys.executable}
    added = {**python, **(env or {})}
    with log.open("ab") as output:
        cli = Path(sys.executable).parent / "mqjournal"
        server = subprocess.Popen(
            [str(cli), "spark-connect", "--listen", f"{address}:{port}", "--master", master],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **added},
        )
    return server


def wait_until_listening(server: subprocess.Popen[bytes], log: Path, *, address: str, port: int, wait: float) -> None:
    deadline = time.monotonic() + wait
    while not listening(address, port):
        if server.poll() is not None or time.monotonic() > deadline:
            raise ConnectServerFailed(
                f"Spark Connect server on {address}:{port}",
                f"did not start listening within {wait:.0f} s (exit status {server.poll()})",
                f"read its output in {log}",
            )
        time.sleep(0.5)


@contextlib.contextmanager
def standing_server(
    log: Path, *, address: str = "127.0.0.1", port: int | None = None, master: str = "local[*]", wait: float = 180
) -> Iterator[str]:
    """A Connect server for the block's length; yields its URL (sc://ADDRESS:PORT). Its output goes to `log`."""
    port = port or free_port(address)
    log.write_bytes(b"")
    server = start_server(log, address=address, port=port, master=master)
    try:
        wait_until_listening(server, log, address=address, port=port, wait=wait)
        yield f"sc://{address}:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
