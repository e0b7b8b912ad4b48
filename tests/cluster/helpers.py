"""The deployment topology (docker/compose.yaml's services) as local processes, for machines without a Docker engine:
PostgreSQL and Redis from Debian's packages, a Spark standalone master and worker from the pyspark package's own
launcher, and Airflow's components as separate processes with the CeleryExecutor. Each is a process group of its own,
in one temporary folder, on free loopback ports.

Every process started here, and everything those start, carries MARKER=<the folder> in its environment: the cleanup
finds whatever escaped its process group by that entry, so it never touches a process this test did not start.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mqjournal import demo
from mqjournal.fleet import load_fleet

REPO = Path(__file__).resolve().parents[2]
DEMO_FLEET = REPO / "docker" / "fleet.example.yaml"
MARKER = "MQJOURNAL_CLUSTER_TEST"
SPARK_APP_NAME = "mqjournal-plan"  # what the plan job names its session (spark_apps/plan_receivers.py)
DB_USER = "mqjournal"

Say = demo.Say


class ClusterError(Exception):
    """A service did not start; the message names it and ends with its log."""


# -- processes -----------------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a process, None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name in parentheses may hold spaces: the fields that follow start after the last ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    return fields[0], int(fields[2])


def _living(pid: int) -> bool:
    # A zombie is dead: its parent (or an init that does not reap) only holds its exit status.
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        stat = _stat(int(entry.name))
        if stat is not None and stat[1] == pgid and stat[0] != "Z":
            members.append(int(entry.name))
    return members


def marked_processes(marker_value: str) -> dict[int, str]:
    """{pid: command line} of the live processes whose environment holds MARKER=`marker_value` (Linux /proc)."""
    entry = f"{MARKER}={marker_value}".encode()
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        pid = int(proc.name)
        if pid == os.getpid():
            continue
        try:
            if entry in (proc / "environ").read_bytes().split(b"\0") and _living(pid):
                found[pid] = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
    return found


class Service:
    """One server process in a process group of its own (start_new_session), its output in one log file."""

    def __init__(
        self, name: str, proc: subprocess.Popen, *, log: Path, stop_signal: signal.Signals = signal.SIGTERM
    ) -> None:
        """A server already started in a session of its own, its output in `log`: by `start`, or by a function of
        mqjournal (`sparkconnect.start_server`: the product's own launch), stopped as the others are."""
        self.name, self.proc, self.pid, self.log, self.stop_signal = name, proc, proc.pid, log, stop_signal

    @classmethod
    def start(
        cls,
        name: str,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        log: Path,
        stop_signal: signal.Signals = signal.SIGTERM,
    ) -> Service:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            proc = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return cls(name, proc, log=log, stop_signal=stop_signal)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, lines: int = 40) -> str:
        return demo.log_tail(self.log, lines)

    def failure(self, what: str) -> ClusterError:
        state = "running" if self.alive() else f"exited {self.proc.returncode}"
        return ClusterError(f"{self.name} ({state}): {what}; the end of {self.log}:\n{self.tail()}")

    def wait_for_log_line(self, *parts: str, timeout: float) -> bool:
        """Until a line of the log holds every one of `parts`; False after `timeout` or when the process exits."""
        return demo.wait_for_log_line(self.log, 0, parts, timeout=timeout, alive=self.alive)

    def stop(self, grace: float = 30.0) -> None:
        """The stop signal to the whole group, SIGKILL to what is left after `grace` s; the group is gone after."""
        pgid = self.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, self.stop_signal)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            self.proc.poll()  # reap the leader, else it stays a member as a zombie
            if not group_members(pgid):
                return
            time.sleep(0.3)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(10)


def free_port() -> int:
    return demo.free_port()


def wait_until(check: Callable[[], bool], what: str, service: Service, timeout: float, poll: float = 0.5) -> None:
    """Until `check()` is true; fails with the service's log when it exits or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(OSError):
            if check():
                return
        if not service.alive():
            raise service.failure(f"exited while waiting for {what}")
        if time.monotonic() > deadline:
            raise service.failure(f"no {what} within {timeout:g} s")
        time.sleep(poll)


# -- PostgreSQL ----------------------------------------------------------------------------------------------------


def postgres_bin(name: str) -> str:
    # Debian's server binaries are under /usr/lib/postgresql/<major>/bin, not on PATH (initdb aside, on some images).
    found = next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None) or shutil.which(name)
    if found is None:
        raise ClusterError(
            f"PostgreSQL's {name} is not installed (Debian: apt-get install postgresql); make cluster-test installs it"
        )
    return found


def start_postgres(folder: Path, env: dict[str, str], say: Say, started: list[Service]) -> int:
    """A PostgreSQL server on loopback (trust auth for DB_USER), with the databases `airflow` and `catalog`."""
    # PostgreSQL refuses to run as root: as root, the server runs as the `postgres` user the Debian package creates.
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder.mkdir()
    if as_user:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    subprocess.run(
        [*as_user, postgres_bin("initdb"), "-D", str(data), "-U", DB_USER, "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
        env=env,
    )
    settings = {
        "listen_addresses": "127.0.0.1",
        "port": str(port),
        "unix_socket_directories": str(folder),
        # A throwaway server on a shared 2-core machine: durability buys nothing here and costs seconds.
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
    }
    options = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
    # In the foreground, as the group's leader, so that it is stopped like every other service (SIGINT: fast).
    server = Service.start(
        "postgresql",
        [*as_user, postgres_bin("postgres"), "-D", str(data), *options],
        env=env,
        cwd=folder,
        log=folder.parent / "logs" / "postgresql.log",
        stop_signal=signal.SIGINT,
    )
    started.append(server)
    say(f"  postgresql   127.0.0.1:{port}  (pid {server.pid}, data {data})")
    wait_until(lambda: _accepts(port), "connections", server, timeout=60)
    import psycopg

    with psycopg.connect(f"postgresql://{DB_USER}@127.0.0.1:{port}/postgres", autocommit=True) as conn:
        for database in ("airflow", "catalog"):
            conn.execute(f"CREATE DATABASE {database}")
    return port


def _accepts(port: int) -> bool:
    import psycopg

    try:
        with psycopg.connect(f"postgresql://{DB_USER}@127.0.0.1:{port}/postgres", connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


def postgres_url(port: int, database: str, driver: str = "postgresql+psycopg") -> str:
    return f"{driver}://{DB_USER}@127.0.0.1:{port}/{database}"


# -- Redis ---------------------------------------------------------------------------------------------------------


def start_redis(folder: Path, env: dict[str, str], say: Say, started: list[Service]) -> int:
    executable = shutil.which("redis-server")
    if executable is None:
        raise ClusterError(
            "redis-server is not installed (Debian: apt-get install redis-server); make cluster-test installs it"
        )
    folder.mkdir()
    port = free_port()
    # No snapshots, no append-only file: the broker's queue lives as long as the test.
    argv = [executable, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    argv += ["--daemonize", "no", "--dir", str(folder)]
    server = Service.start("redis", argv, env=env, cwd=folder, log=folder.parent / "logs" / "redis.log")
    started.append(server)
    say(f"  redis        127.0.0.1:{port}  (pid {server.pid})")
    wait_until(lambda: _pong(port), "PONG", server, timeout=30)
    return port


def _pong(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"PING\r\n")
        return s.recv(64).startswith(b"+PONG")


# -- Spark standalone ----------------------------------------------------------------------------------------------


def spark_home() -> Path:
    """pip's pyspark is a whole Spark distribution: jars/, bin/spark-class, bin/spark-submit."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def master_state(ui_port: int) -> dict:
    """The Spark master's own account of its workers and applications (its web UI's /json/); {} while the UI, just
    started, still answers with its HTML page (seen once, 2026-11-28), so that a wait on it goes on waiting."""
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=10) as response:
        body = response.read()
    try:
        state = json.loads(body)
    except json.JSONDecodeError:
        return {}
    return state if isinstance(state, dict) else {}


@dataclass
class Spark:
    master: Service
    worker: Service
    port: int
    ui_port: int

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def state(self) -> dict:
        return master_state(self.ui_port)


def spark_environment(base: dict[str, str], folder: Path) -> dict[str, str]:
    """What the Spark daemons and every spark-submit of the test share: the pyspark package as SPARK_HOME, and one
    configuration folder."""
    return base | {
        "SPARK_HOME": str(spark_home()),
        "SPARK_CONF_DIR": str(folder / "conf"),
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_LOCAL_IP": "127.0.0.1",
        # The daemons' own heap; the default 1 GiB each is more than a 2-core test machine should give them.
        "SPARK_DAEMON_MEMORY": "512m",
    }


def start_spark(folder: Path, env: dict[str, str], say: Say, started: list[Service]) -> Spark:
    """A standalone master and one worker of 1 core and 1 GiB, from pyspark's spark-class (the JVM in the
    foreground: spark-class execs it)."""
    folder.mkdir()
    (folder / "conf").mkdir()
    # spark-submit (run by the plan task on the Celery worker) reads these: one executor of one core, sized to fit
    # the worker, and as few shuffle partitions as the local mode uses (200 cost seconds each on one core).
    (folder / "conf" / "spark-defaults.conf").write_text(
        "spark.executor.memory 512m\n"
        "spark.cores.max 1\n"
        "spark.sql.shuffle.partitions 4\n"
        "spark.ui.enabled false\n"
        "spark.driver.host 127.0.0.1\n"
        "spark.driver.bindAddress 127.0.0.1\n",
        encoding="utf-8",
    )
    spark_class = str(spark_home() / "bin" / "spark-class")
    env = spark_environment(env, folder)
    logs = folder.parent / "logs"

    port, ui_port = free_port(), free_port()
    master_args = ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui_port)]
    master = Service.start(
        "spark master",
        [spark_class, "org.apache.spark.deploy.master.Master", *master_args],
        env=env,
        cwd=folder,
        log=logs / "spark-master.log",
    )
    started.append(master)
    url = f"spark://127.0.0.1:{port}"
    say(f"  spark master {url}  (web UI :{ui_port}, pid {master.pid})")
    wait_until(lambda: master_state(ui_port).get("status") == "ALIVE", "master answering on its web UI", master, 90)

    work = folder / "work"  # not the default $SPARK_HOME/work, which is inside the virtualenv
    worker_args = ["--host", "127.0.0.1", "--port", str(free_port()), "--webui-port", str(free_port())]
    worker_args += ["--cores", "1", "--memory", "1g", "--work-dir", str(work), url]
    worker = Service.start(
        "spark worker",
        [spark_class, "org.apache.spark.deploy.worker.Worker", *worker_args],
        env=env,
        cwd=folder,
        log=logs / "spark-worker.log",
    )
    started.append(worker)
    say(f"  spark worker 1 core, 1 GiB  (pid {worker.pid}, work dir {work})")
    wait_until(lambda: master_state(ui_port).get("aliveworkers") == 1, "worker registered", worker, 90)
    return Spark(master, worker, port, ui_port)


def start_connect_server(spark: Spark, env: dict[str, str], logs: Path, say: Say, started: list[Service]) -> str:
    """`mqjournal spark-connect` (by `sparkconnect.start_server`, as the tests' own server) with the standalone
    master as its master, so that its executors are the worker's; `env` is `spark_environment`'s, whose
    spark-defaults.conf sizes the executor to the worker. Its sc:// URL once it listens."""
    from mqjournal.sparkconnect import ConnectServerFailed, start_server, wait_until_listening

    port, log = free_port(), logs / "spark-connect.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    server = Service(
        "spark connect", start_server(log, address="127.0.0.1", port=port, master=spark.url, env=env), log=log
    )
    started.append(server)
    say(f"  spark connect sc://127.0.0.1:{port}  (master {spark.url}, pid {server.pid})")
    try:
        wait_until_listening(server.proc, log, address="127.0.0.1", port=port, wait=240)
    except ConnectServerFailed as exc:
        raise server.failure(f"did not listen: {exc}") from exc  # with its log's end: the folder is removed after
    return f"sc://127.0.0.1:{port}"


# -- the simulated fleet -------------------------------------------------------------------------------------------


def fleet_file(folder: Path) -> Path:
    """docker/fleet.example.yaml with its simulator state in `folder` and SSH ports the simulator picks (port 0:
    the connections file names the ones it got)."""
    config = yaml.safe_load(DEMO_FLEET.read_text(encoding="utf-8"))
    config["state_dir"] = str(folder / "state")
    for host in config["hosts"]:
        host["port"] = 0
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "fleet.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def receivers(service) -> dict[str, set[str]]:
    """{host: {'LIBRARY/RECEIVER', ...}} on each simulated partition right now."""
    found = {}
    for name, host in service.hosts.items():
        with host.lock:
            found[name] = set(host.partition.receivers)
    return found


# -- Airflow -------------------------------------------------------------------------------------------------------

COMPONENTS = {
    "api-server": ["api-server"],
    "scheduler": ["scheduler"],
    "dag-processor": ["dag-processor"],
    "triggerer": ["triggerer"],
    "celery worker": ["celery", "worker", "--concurrency", "4", "--celery-hostname", "mqjournal-cluster@%h"],
}


def airflow_environment(
    home: demo.DemoHome,
    fleet: Path,
    *,
    api_port: int,
    pg_port: int,
    redis_port: int,
    data_dir: Path,
    spark_env: dict[str, str],
) -> dict[str, str]:
    """The demo's environment for Airflow, with the deployment's services in place of its local ones."""
    from cryptography.fernet import Fernet

    env = demo.airflow_environment(home, fleet, api_port)
    env.update({k: spark_env[k] for k in ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_LOCAL_IP")})
    env.update(
        {
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": postgres_url(pg_port, "airflow"),
            # Airflow derives its async URL with asyncpg, which nothing else needs; psycopg 3 does async too.
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": postgres_url(pg_port, "airflow", "postgresql+psycopg_async"),
            "AIRFLOW__CELERY__BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
            # db+ and the psycopg 3 driver: Celery's database backend would look for psycopg2 otherwise.
            "AIRFLOW__CELERY__RESULT_BACKEND": "db+" + postgres_url(pg_port, "airflow"),
            # Separate processes must agree on these; `airflow standalone` makes them up for its own children only.
            "AIRFLOW__CORE__FERNET_KEY": Fernet.generate_key().decode(),
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(32),
            "AIRFLOW__API__WORKERS": "1",
            "MQJOURNAL_DATA_DIR": str(data_dir),
            "MQJOURNAL_CATALOG_URL": postgres_url(pg_port, "catalog"),
            # The executors on the Spark worker run the plan's Python here: on a cluster, its workers' own Python.
            "PYSPARK_PYTHON": sys.executable,
        }
    )
    return env


@dataclass
class Airflow:
    """Airflow's components as one thing for mqjournal.demo's helpers (follow_run, wait_for_api, the gate's
    wait_until_parked): alive while every component is, the scheduler's log for the lines they wait for."""

    components: dict[str, Service]
    api: demo.Api
    env: dict[str, str]

    @property
    def scheduler(self) -> Service:
        return self.components["scheduler"]

    @property
    def log(self) -> Path:
        return self.components["api-server"].log

    @property
    def proc(self) -> subprocess.Popen:
        dead = [c for c in self.components.values() if not c.alive()]
        return (dead or [self.scheduler])[0].proc

    def alive(self) -> bool:
        return all(c.alive() for c in self.components.values())

    def wait_for_log_line(self, *parts: str, timeout: float) -> bool:
        return self.scheduler.wait_for_log_line(*parts, timeout=timeout)

    def failure(self, what: str) -> demo.DemoError:
        dead = [c for c in self.components.values() if not c.alive()] or list(self.components.values())
        tails = "\n".join(f"--- {c.name} ({c.log}) ---\n{c.tail(25)}" for c in dead)
        return demo.DemoError(f"{what}; the end of the logs:\n{tails}")


def start_airflow(home: demo.DemoHome, env: dict[str, str], logs: Path, say: Say, started: list[Service]) -> Airflow:
    components: dict[str, Service] = {}
    for name, args in COMPONENTS.items():
        components[name] = Service.start(
            f"airflow {name}",
            [str(demo.venv_bin() / "airflow"), *args],
            env=env,
            cwd=home.root,
            log=logs / f"airflow-{name.replace(' ', '-')}.log",
        )
        started.append(components[name])
        say(f"  airflow {name:<14} (pid {components[name].pid})")
    api = demo.Api(f"http://127.0.0.1:{env['AIRFLOW__API__PORT']}", demo.ADMIN, demo.admin_password(home))
    return Airflow(components, api, env)


# -- all of it -----------------------------------------------------------------------------------------------------


@dataclass
class Cluster:
    root: Path
    services: list[Service] = field(default_factory=list)
    pg_port: int = 0
    spark: Spark | None = None
    airflow: Airflow | None = None
    simulator: Any = None
    data_dir: Path | None = None
    stragglers: dict[int, str] = field(default_factory=dict)
    """Processes that carried the marker but had left their service's group, killed by the cleanup."""

    def url(self, database: str, driver: str = "postgresql+psycopg") -> str:
        return postgres_url(self.pg_port, database, driver)


def base_environment(root: Path) -> dict[str, str]:
    """This process's environment without what would configure the services (Airflow's, mqjournal's, Spark's), and
    with the marker that the cleanup finds them by."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "MQJOURNAL_", "SPARK_", "PYSPARK_"))}
    return base | {MARKER: str(root)}


@contextlib.contextmanager
def running_cluster(say: Say, *, startup_timeout: float = 300) -> Iterator[Cluster]:
    """Everything up, then stopped in reverse order and its folder removed, however the body ends."""
    # Under /tmp and world-readable, not pytest's 0700 folder: the `postgres` user must reach its part of it.
    root = Path(tempfile.mkdtemp(prefix="mqjournal-cluster-", dir="/tmp"))
    root.chmod(0o755)
    base = base_environment(root)
    cluster = Cluster(root)
    began = time.monotonic()
    # SIGTERM (a CI job's time limit) cleans up as Ctrl-C does: these processes are in sessions of their own.
    stack = contextlib.ExitStack()
    stack.enter_context(demo._sigterm_as_interrupt())
    try:
        say(f"cluster folder {root}")
        cluster.pg_port = start_postgres(root / "postgresql", base, say, cluster.services)
        redis_port = start_redis(root / "redis", base, say, cluster.services)
        spark = cluster.spark = start_spark(root / "spark", base, say, cluster.services)

        fleet = fleet_file(root / "fleet")
        cluster.simulator, ports = demo.start_simulator(load_fleet(fleet), say)
        home = demo.DemoHome(root / "airflow")
        cluster.data_dir = root / "shared"  # the data folder of the Celery worker, the scheduler and Spark
        cluster.data_dir.mkdir()
        env = airflow_environment(
            home,
            fleet,
            api_port=free_port(),
            pg_port=cluster.pg_port,
            redis_port=redis_port,
            data_dir=cluster.data_dir,
            spark_env=spark_environment(base, root / "spark"),
        )
        demo.admin_password(home)
        connections = write_connections(cluster.simulator, fleet, ports, spark, home.connections_file)
        demo.prepare_airflow(env, connections, say)
        airflow = cluster.airflow = start_airflow(home, env, root / "logs", say, cluster.services)
        demo.wait_for_api(airflow, airflow.api, startup_timeout, say)  # type: ignore[arg-type]
        demo.wait_for_dag(airflow, airflow.api, startup_timeout, say)  # type: ignore[arg-type]
        worker = airflow.components["celery worker"]
        if not worker.wait_for_log_line("ready.", timeout=startup_timeout):
            raise worker.failure("the Celery worker did not say it is ready")
        say(f"cluster up after {time.monotonic() - began:.0f} s")
        yield cluster
    finally:
        try:
            stop_all(cluster, say)
        finally:
            stack.close()


def write_connections(simulator, fleet: Path, ports: dict[str, int], spark: Spark, path: Path) -> Path:
    """The fleet's SSH connections, and spark_default on the standalone master (client mode: the driver runs in
    the plan task, on the Celery worker)."""
    from mqjournal.airflow.connections import fleet_connections
    from mqjournal.airflow.connections import write_connections as write

    connections = fleet_connections(load_fleet(fleet), simulator.host_keys, ports)
    connections["spark_default"] = {
        "conn_type": "spark",
        "host": "spark://127.0.0.1",
        "port": spark.port,
        "extra": json.dumps({"deploy-mode": "client"}),
        "description": "the test's Spark standalone master",
    }
    return write(path, connections)


def assert_nothing_left(cluster: Cluster, services: list[Service]) -> None:
    """Nothing a test started is left once its cluster is stopped: each service's process group is empty, no process
    carries the test's marker in its environment, and the folder is gone."""
    assert [s.name for s in services if group_members(s.pid)] == []
    assert marked_processes(str(cluster.root)) == {}
    assert cluster.stragglers == {}, cluster.stragglers
    assert not cluster.root.exists()


def stop_all(cluster: Cluster, say: Say) -> None:
    """Airflow first (its tasks hold connections to the rest), then Spark, Redis, PostgreSQL; then whatever
    carries the marker but left its group; then the simulator and the folder."""
    for service in reversed(cluster.services):
        say(f"stopping {service.name} (pid {service.pid}) ...")
        service.stop()
    cluster.stragglers = marked_processes(str(cluster.root))
    for pid, command in cluster.stragglers.items():
        say(f"  left its process group: {pid} {command[:160]}")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if cluster.simulator is not None:
        say("stopping the simulator ...")
        cluster.simulator.stop()
    shutil.rmtree(cluster.root, ignore_errors=True)
