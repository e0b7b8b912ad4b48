"""One standing Spark Connect server shared by the test processes of a run (pytest-xdist's workers).

The first process that asks starts the server (`mqjournal spark-connect`, as a user would) and writes its address in
the run's folder; the others, under the same file lock, find it there. The server runs in a session of its own, so
that a worker's end does not end it: the run's controller stops it (`stop`) when the whole session is over.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from mqjournal.sparkconnect import ConnectServerFailed, free_port, start_server, wait_until_listening

STARTUP_WAIT = 240.0  # seconds: a JVM's start on 2 busy cores


class SharedServer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._address = folder / "url"
        self._pid = folder / "pid"
        self.log = folder / "server.log"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with (self.folder / "lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def url(self, *, master: str) -> str:
        """The server's sc:// URL, once it listens; started by this call when no process of the run has yet."""
        with self._locked():
            if self._address.exists():
                return self._address.read_text(encoding="utf-8")
            port = free_port()
            server = start_server(self.log, address="127.0.0.1", port=port, master=master, env=self._test_conf())
            self._pid.write_text(str(server.pid), encoding="utf-8")
            try:
                wait_until_listening(server, self.log, address="127.0.0.1", port=port, wait=STARTUP_WAIT)
            except ConnectServerFailed:
                self.stop()
                raise
            url = f"sc://127.0.0.1:{port}"
            self._address.write_text(url, encoding="utf-8")
            return url

    def _test_conf(self) -> dict[str, str]:
        """Spark's defaults for this server only: whole-stage code generation off. The tests' plans are a few
        receivers each, and compiling generated code for each of a plan's queries was a fifth of the server's CPU
        per plan (a warm plan of test_spark_job's fleet 14.2 -> 11.3 CPU-s, measured 2026-11-28). Spark computes the
        same rows either way; the plans launched by spark-submit (the demo, tests/plan/test_plan_from_a_url_data_
        folder.py, `make cluster-test`) keep Spark's defaults, code generation included."""
        conf_dir = self.folder / "spark-conf"
        conf_dir.mkdir(exist_ok=True)
        (conf_dir / "spark-defaults.conf").write_text("spark.sql.codegen.wholeStage false\n", encoding="utf-8")
        return {"SPARK_CONF_DIR": str(conf_dir)}

    def stop(self) -> None:
        """End the server this run started, if it did (its process group: spark-submit and its JVM)."""
        if not self._pid.exists():
            return
        pid = int(self._pid.read_text(encoding="utf-8"))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    os.killpg(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)
            else:
                os.killpg(pid, signal.SIGKILL)
        self._pid.unlink()
