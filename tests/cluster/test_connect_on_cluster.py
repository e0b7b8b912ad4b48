"""The plan job on a Spark Connect server whose executors are a standalone cluster's (docs/deploy.md, "The plan on a
standing Spark Connect server"): a master and one worker, `mqjournal spark-connect --master spark://...` as the
compose file's `spark-connect` service runs it, and `run_plan_connect` as the plan task calls it.

The other tests' Connect server runs local[*], where the executor is a thread of the server's JVM and its Python
workers are the server's children, next to its own Python. Here the Python workers that plan each queue manager
(`mapInArrow`) are the children of an executor the worker launched, and their Python (the server's PYSPARK_PYTHON,
`executor_python`) has the project's requirements but not mqjournal, as a cluster's would: they can import it only
from the zip the session was given as an artifact (`planjob.ship_package`), which must travel from the client to
the server to that executor. Without the artifact the plan fails here with ModuleNotFoundError (tried 2026-12-02).

Run it with the other cluster test (`make cluster-test`), or alone (under a minute on 2 cores):
`.venv/bin/python -m pytest -m cluster tests/cluster/test_connect_on_cluster.py -s`."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mqjournal import demo
from mqjournal.planjob import run_plan_connect
from mqjournal.policy import Policy
from mqjournal.rules import plan_fleet
from mqjournal.snapshot import Snapshot, read_snapshots, write_snapshots
from mqjournal.vocabulary import Action
from tests.cluster import helpers
from tests.plan.builders import chain, names, snapshot

pytestmark = pytest.mark.cluster

AS_OF = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
HOSTS, QUEUE_MANAGERS, RUNS = 2, 3, 3
SERVER_APP_NAME = "mqjournal-spark-connect"  # the application name sparkconnect.server_command gives the server


def say(text: str) -> None:
    print(text, flush=True)


@contextlib.contextmanager
def connect_on_cluster() -> Iterator[tuple[helpers.Cluster, str]]:
    """A standalone master and worker and a Connect server on them whose executors run `executor_python`; every one
    of them stopped, however the block ends, by `helpers.stop_all` (which also kills what carries the marker and
    removes the folder)."""
    root = Path(tempfile.mkdtemp(prefix="mqjournal-connect-cluster-", dir="/tmp"))
    cluster = helpers.Cluster(root)
    # Without this process's PYTHONPATH (pytest's, which names plugins/): the executors must not inherit a way to
    # mqjournal from the worker's environment.
    base = {k: v for k, v in helpers.base_environment(root).items() if k != "PYTHONPATH"}
    # SIGTERM (a CI job's time limit) cleans up as Ctrl-C does, as in helpers.running_cluster.
    with demo._sigterm_as_interrupt():
        try:
            say(f"cluster folder {root}")
            cluster.spark = helpers.start_spark(root / "spark", base, say, cluster.services)
            # The cluster's SPARK_CONF_DIR: its spark-defaults.conf sizes the server's executor to the 1 GiB worker
            # (a default 1 GiB executor would never be granted) and takes its one core.
            env = helpers.spark_environment(base, root / "spark") | {"PYSPARK_PYTHON": str(executor_python(root))}
            url = helpers.start_connect_server(cluster.spark, env, root / "logs", say, cluster.services)
            yield cluster, url
        finally:
            helpers.stop_all(cluster, say)


def executor_python(root: Path) -> Path:
    """The executors' Python as a cluster's would be: pyarrow and the rest of the requirements, but no mqjournal.
    This virtualenv's Python without `site` (-S), so that the editable install's .pth file, which puts plugins/ on
    sys.path, is not read; its site-packages on PYTHONPATH instead. Each start appends its working folder and
    PYTHONPATH to `python_starts`' file: where the Python ran, and that nothing but the artifact gave it mqjournal."""
    script = root / "executor-python"
    record = shlex.quote(str(root / "python-starts"))
    site_packages = shlex.quote(sysconfig.get_paths()["purelib"])
    script.write_text(
        "#!/bin/sh\n"
        f'printf \'%s\\t%s\\n\' "$(pwd)" "${{PYTHONPATH-}}" >> {record}\n'
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}"{site_packages} exec {shlex.quote(sys.executable)} -S "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def python_starts(root: Path) -> list[tuple[Path, list[str]]]:
    """(working folder, PYTHONPATH entries) of each start of `executor_python`."""
    record = root / "python-starts"
    lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
    return [(Path(cwd), [e for e in path.split(":") if e]) for cwd, _, path in (line.partition("\t") for line in lines)]


def holds_mqjournal(entry: str) -> bool:
    """Whether a sys.path entry (a folder or a zip) has the mqjournal package."""
    path = Path(entry)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return any(name.startswith("mqjournal/") for name in archive.namelist())
    return (path / "mqjournal").exists()


def assert_no_mqjournal_without_the_artifact(python: Path, cwd: Path) -> None:
    """The control: `executor_python` itself, without this process's PYTHONPATH, cannot import mqjournal (were the
    editable install's .pth read, the plan would pass whether the artifact arrived or not)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    tried = subprocess.run([str(python), "-c", "import mqjournal"], env=env, cwd=cwd, capture_output=True, text=True)
    assert tried.returncode != 0 and "No module named 'mqjournal'" in tried.stderr, (tried.returncode, tried.stderr)


def fleet(run: int) -> list[Snapshot]:
    """Collection `run` (0 the oldest) of every queue manager: detached receivers saved, others not yet, the newest
    still needed, so that the plan deletes, saves and keeps."""
    collected = AS_OF - timedelta(hours=24 * (RUNS - run))
    snapshots = []
    for host in range(HOSTS):
        for qm in range(QUEUE_MANAGERS):
            library = f"QMC{host}{qm:02d}"
            start = collected - timedelta(hours=40)
            receivers = chain(names(1 + run * 4, 40), library=library, start=start, saved=tuple(names(1, 30)))
            snapshots.append(
                snapshot(
                    receivers,
                    oldest=receivers[-6].name,
                    host=f"ibmi{host}",
                    qmgr=f"QM{qm}",
                    library=library,
                    run_id=f"R{run}",
                    collected_at=collected,
                )
            )
    return snapshots


def write_fleet(folder: Path) -> Path:
    """The fleet's collections in the collector's layout (run_id=<id>/snapshots.jsonl)."""
    for run in range(RUNS):
        write_snapshots(folder / f"run_id=R{run}" / "snapshots.jsonl", fleet(run))
    return folder


def server_application(state: dict) -> dict:
    """The Connect server's application in the master's state: one, running."""
    apps = [a for a in state.get("activeapps", []) if a["name"] == SERVER_APP_NAME]
    assert len(apps) == 1, json.dumps(state, indent=1)[:3000]
    return apps[0]


def executor_logs(executor_dir: Path) -> str:
    """The stderr of each executor the worker launched for an application (work/<app>/<executor>/stderr)."""
    logs = sorted(executor_dir.glob("*/stderr"))
    assert logs, f"the worker launched no executor: {sorted(executor_dir.parent.glob('*'))}"
    return "\n".join(log.read_text(errors="replace") for log in logs)


def test_the_plan_on_a_connect_server_runs_in_the_standalone_cluster_s_executor():
    began = time.monotonic()
    with connect_on_cluster() as (cluster, url):
        assert cluster.spark is not None
        inputs = write_fleet(cluster.root / "data" / "snapshots")
        out = cluster.root / "data" / "plan"
        planned_at = time.monotonic()
        summary = run_plan_connect(url, inputs, out, history=None, policy_file=None, as_of=AS_OF)
        say(f"planned on {url} in {time.monotonic() - planned_at:.0f} s: {summary.actions}")

        # The same plan as the pure-Python planner's, on the same snapshots (JSON round-tripped, as the job reads).
        snapshots = [s for path in sorted(inputs.rglob("*.jsonl")) for s in read_snapshots(path)]
        reference = plan_fleet(snapshots, as_of=AS_OF, policy=Policy()).summary()
        assert summary == reference
        assert summary.queue_managers == HOSTS * QUEUE_MANAGERS
        assert all(summary.actions.get(action, 0) > 0 for action in (Action.DELETE, Action.SAVE, Action.KEEP)), (
            summary.actions
        )

        # The server is an application of the standalone master, which granted it the worker's one core: with a
        # spark:// master the server's JVM runs no task itself.
        app = server_application(cluster.spark.state())
        assert app["cores"] == 1, app
        executor_dir = cluster.root / "spark" / "work" / app["id"]
        log = executor_logs(executor_dir)
        # The worker's executor fetched the session's artifact, and ran the plan's Python (mapInArrow) there.
        assert re.search(r"Fetching spark://\S+/artifacts/\S+/pyfiles/mqjournal-[0-9a-f]+\.zip", log), log[-3000:]
        assert "Starting Python task execution" in log, log[-3000:]
        assert list(executor_dir.glob("*/*/mqjournal-*.zip")), sorted(executor_dir.rglob("*"))

        # Its Python was the server's PYSPARK_PYTHON, started in the executor's folder, and had no mqjournal but the
        # artifact's: the plan could only import the shipped zip.
        starts = python_starts(cluster.root)
        assert starts, "the executor never started the server's PYSPARK_PYTHON"
        assert all(cwd.is_relative_to(executor_dir) for cwd, _ in starts), starts
        assert [e for _, path in starts for e in path if holds_mqjournal(e)] == [], starts
        assert_no_mqjournal_without_the_artifact(cluster.root / "executor-python", cluster.root)

        services = list(cluster.services)
        say(f"checked after {time.monotonic() - began:.0f} s; stopping the cluster")

    helpers.assert_nothing_left(cluster, services)
    say(f"connect on cluster test: {time.monotonic() - began:.0f} s")
