"""What the end-to-end DAG tests share: a simulated fleet wired into a fresh Airflow, and the driver subprocess.

A driver runs in its own process because Airflow reads its configuration once, at import; the test reads back one
`RESULTS <json>` line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


SPARK_CONNECT_ENV = "MQJOURNAL_TEST_SPARK_CONNECT"


def run_driver(driver: str, workdir: Path, *, timeout: int, spark_connect: str | None = None) -> dict:
    """Run tests/dags/<driver> on `workdir` with an Airflow home of its own; its RESULTS line, parsed. With
    `spark_connect` (a server's sc:// URL) the DAGs plan on that server, through a Spark Connect connection."""
    env = {
        **os.environ,
        **({SPARK_CONNECT_ENV: spark_connect} if spark_connect else {}),
        "AIRFLOW_HOME": str(workdir / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        # The repository's plugins: the run-notes listener among them.
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
        # This checkout's mqjournal before the virtualenv's editable install, which may point at another worktree.
        "PYTHONPATH": os.pathsep.join([str(REPO / "plugins"), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "dags" / driver), str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    line = next((text for text in done.stdout.splitlines() if text.startswith("RESULTS ")), None)
    assert done.returncode == 0 and line, done.stdout[-4000:] + done.stderr[-4000:]
    return json.loads(line[len("RESULTS ") :])


def fleet_in_airflow(workdir: Path, hosts: list, *, hours: float = 4, linux_hosts: list | None = None):
    """Serve `hosts` (HostConfig) and `linux_hosts` (LinuxHostConfig) after `hours` of churn, point Airflow's
    connections and mqjournal's settings at them, and return (simulator service, DagBag of dags/). Call from a driver
    process only."""
    from mqjournal.sim.service import SimulatorService

    config = fleet_of(workdir, hosts, hours=hours, linux_hosts=linux_hosts)
    service = SimulatorService(config)
    ports = service.start()
    return service, airflow_for(workdir, config, service.host_keys, ports)


def fleet_of(workdir: Path, hosts: list, *, hours: float, linux_hosts: list | None = None):
    """The simulator's fleet configuration of `hosts` (and `linux_hosts`), its state in workdir/state, `hours` of
    churn before now."""
    from mqjournal.fleet import FleetConfig

    start = datetime.now(UTC) - timedelta(hours=hours)
    return FleetConfig(
        state_dir=workdir / "state", start=start, warmup_hours=hours, hosts=hosts, linux_hosts=linux_hosts or []
    ).resolved(workdir)


def airflow_for(workdir: Path, config, host_keys: dict, ports: dict[str, int]):
    """Airflow's connections and mqjournal's settings pointed at the fleet served on `ports`; the DagBag of dags/."""
    from mqjournal.airflow.connections import fleet_connections

    fleet_file = workdir / "fleet.yaml"
    fleet_file.write_text(
        yaml.safe_dump(
            {
                "state_dir": str(config.state_dir),
                "hosts": [
                    {
                        "name": h.name,
                        "port": ports[h.name],
                        "queue_managers": [
                            q.model_dump(mode="json", include={"name", "clusters"}) for q in h.queue_managers
                        ],
                    }
                    for h in config.hosts
                ]
                + [
                    {
                        "name": h.name,
                        "platform": "linux",
                        "port": ports[h.name],
                        "media_images": h.media_images,
                        "queue_managers": [{"name": q.name} for q in h.queue_managers],
                    }
                    for h in config.linux_hosts
                ],
            }
        )
    )
    for conn_id, conn in fleet_connections(config, host_keys, ports).items():
        os.environ[f"AIRFLOW_CONN_{conn_id.upper()}"] = json.dumps(conn)
    os.environ["AIRFLOW_CONN_SPARK_DEFAULT"] = json.dumps({"conn_type": "spark", "host": "local[*]"})
    if url := os.environ.get(SPARK_CONNECT_ENV):
        from mqjournal.planjob import connect_connection

        os.environ["AIRFLOW_CONN_MQJ_SPARK_CONNECT"] = json.dumps(connect_connection(url))
        os.environ["MQJOURNAL_SPARK_CONNECT_CONN_ID"] = "mqj_spark_connect"
    os.environ["MQJOURNAL_FLEET"] = str(fleet_file)
    os.environ["MQJOURNAL_DATA_DIR"] = str(workdir / "data")
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ['PATH']}"

    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.pool import Pool
    from airflow.utils import db

    db.initdb()
    Pool.create_or_update_pool("mqjournal_ssh", slots=16, description="SSH sessions to IBM i", include_deferred=False)
    return DagBag(dag_folder=str(REPO / "dags"))
