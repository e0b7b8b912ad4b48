"""`mqjournal demo`: the main job end to end on a simulated fleet, in a local Airflow.

One process sets up and drives everything, each step a small function that fails with what went wrong and what
to do about it:

1. an Airflow home (default ``<repo>/.airflow``): SQLite metadata DB, no example DAGs, the repository's dags/ and
   plugins/ folders, the mqjournal data under ``<home>/mqjournal``, a known admin login (SimpleAuthManager);
2. the IBM i simulator for the fleet file, served over SSH from a thread of this process (state persists in the
   fleet's state folder, so later demos continue the same partitions);
3. an Airflow connections file for the fleet (client key + pinned host keys, and ``spark_default`` = local[*]),
   loaded with ``airflow connections import``, and the SSH pool;
4. ``airflow standalone`` (scheduler, dag-processor, api-server, triggerer) with its output in ``<home>/airflow.log``;
5. over the REST API: unpause and trigger ``mq_journal_maintenance``, follow the run, show where to approve (or
   answer the gate itself with ``--approve`` / ``--reject``), then the task states and the run's report.

Airflow and the simulator are stopped at the end, on any error and on Ctrl-C (unless ``--keep-running``, which
keeps them up until Ctrl-C). This module does not import Airflow: Airflow runs only in its own processes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from mqjournal.fleet import FleetConfig, HostConfig, load_fleet
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.planjob import connect_address, connect_connection
from mqjournal.report import DELETE_NOTHING
from mqjournal.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DAG_ID = "mq_journal_maintenance"
RECOVERY_DAG_ID = "mq_journal_recovery"
GATE_TASK = "approve"
SSH_POOL = ("mqjournal_ssh", "SSH sessions to IBM i")
SSH_POOL_TASKS = 2
"""Batch tasks of a maintenance SSH step running at once: the pool has slots for each one's sessions."""
SIMPLE_AUTH_MANAGER = "airflow.api_fastapi.auth.managers.simple.simple_auth_manager.SimpleAuthManager"
ADMIN = "admin"
FINISHED = {"success", "failed"}
PROGRESS_EVERY = 30.0

Say = Callable[[str], None]


class DemoError(Exception):
    """A step of the demo failed; the message says which, why, and what to do."""


def _say(text: str) -> None:
    print(text, flush=True)


# -- 1. the Airflow home and environment ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoHome:
    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / "mqjournal"

    @property
    def log(self) -> Path:
        return self.root / "airflow.log"

    @property
    def connections_file(self) -> Path:
        return self.data_dir / "connections.json"

    @property
    def passwords_file(self) -> Path:
        return self.root / "simple_auth_manager_passwords.json.generated"

    def report_file(self, run_id: str) -> Path:
        from mqjournal.airflow.settings import safe

        return self.data_dir / "reports" / f"{safe(run_id)}.md"


def venv_bin() -> Path:
    """The bin folder of the Python running this (not resolved: a venv's python is a symlink)."""
    return Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The demo's Spark Connect connection, when it plans on a standing server.
SPARK_CONNECT_CONN_ID = "mqj_spark_connect"


def airflow_environment(
    home: DemoHome, fleet_file: Path, port: int, spark_connect: str | None = None
) -> dict[str, str]:
    """The environment of every Airflow process of the demo: its configuration is all here, nothing global. With
    `spark_connect` (sc://HOST:PORT) the plan is a session on that server, not a spark-submit."""
    # Nothing from an Airflow or mqjournal setup in the caller's shell (AIRFLOW_CONFIG, AIRFLOW__*, AIRFLOW_CONN_*).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "MQJOURNAL_"))}
    env.update(
        {
            "AIRFLOW_HOME": str(home.root),
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home.root / 'airflow.db'}",
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__AUTH_MANAGER": SIMPLE_AUTH_MANAGER,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{ADMIN}:admin",  # user admin, role admin
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(home.passwords_file),
            # Local only: the admin password is known.
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__BASE_URL": f"http://localhost:{port}",
            # Tasks reach the API server here; the default assumes port 8080.
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            # The API server shares a small machine with the plan's JVM and the simulator: on 2 busy cores it answered
            # a task's start later than Airflow's 5 s, four times over, and the task was killed before it ran (seen
            # 2026-11-27). Airflow's documented remedy for timeouts under load.
            "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "30",
            # The demo's DAG files do not change while it runs: Airflow's 30 s re-parse forked a parser that imported
            # every DAG file some 20 times a run, 74 CPU-s over the tests' two demos on 2 cores (process accounting,
            # 2026-11-27). Parsed once at start, then every 10 minutes.
            "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "600",
            # Not the fixed 8793/8794: another Airflow (or demo) on this machine must not keep the logs from serving.
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "MQJOURNAL_FLEET": str(fleet_file),
            "MQJOURNAL_DATA_DIR": str(home.data_dir),
            "MQJOURNAL_CATALOG_URL": f"sqlite:///{home.data_dir / 'catalog.db'}",
            # No weekly schedule in the demo: the only run is the one the demo triggers.
            "MQJOURNAL_SCHEDULE": "",
            # spark-submit and airflow from this virtualenv.
            "PATH": f"{venv_bin()}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONUNBUFFERED": "1",
            "NO_COLOR": "1",
        }
    )
    if spark_connect:
        env[f"AIRFLOW_CONN_{SPARK_CONNECT_CONN_ID.upper()}"] = json.dumps(connect_connection(spark_connect))
        env["MQJOURNAL_SPARK_CONNECT_CONN_ID"] = SPARK_CONNECT_CONN_ID
    return env


def admin_password(home: DemoHome) -> str:
    """The admin password: `admin` on a new home, else whatever the passwords file already says."""
    home.root.mkdir(parents=True, exist_ok=True)
    if not home.passwords_file.exists():
        home.passwords_file.write_text(json.dumps({ADMIN: ADMIN}) + "\n", encoding="utf-8")
        home.passwords_file.chmod(0o600)
    try:
        return json.loads(home.passwords_file.read_text(encoding="utf-8"))[ADMIN]
    except (ValueError, KeyError) as e:
        raise DemoError(f"{home.passwords_file} has no password for {ADMIN!r} ({e}): delete the file and rerun") from e


# -- 2. the simulator ----------------------------------------------------------------------------------------------


def check_port_free(port: int, what: str, hint: str) -> None:
    if port == 0:
        return
    with socket.socket() as s:
        # As servers bind: connections of an earlier demo in TIME_WAIT do not make the port taken, a listener does.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            raise DemoError(f"port {port} ({what}) is taken: {e.strerror}. {hint}") from e


def check_ports(config: FleetConfig, fleet_file: Path, api_port: int) -> None:
    hosts: list[tuple[HostConfig | LinuxHostConfig, str]] = [(h, "simulated IBM i") for h in config.hosts]
    hosts += [(h, "simulated Linux MQ host") for h in config.linux_hosts]
    for host, what in hosts:
        check_port_free(
            host.port,
            f"{what} {host.name}",
            f"Is `mqjournal sim` or another demo serving {fleet_file.name}? "
            f"Stop it, or change the port in {fleet_file}.",
        )
    check_port_free(api_port, "Airflow API server", "Is another Airflow running? Stop it, or pass --port N.")


def start_simulator(config: FleetConfig, say: Say):
    """The fleet's partitions served over SSH from this process; simulated time follows the wall clock."""
    from mqjournal.sim.service import SimulatorService

    fresh = [h.name for h in config.hosts if not (config.state_dir / f"{h.name}.json").exists()]
    fresh += [h.name for h in config.linux_hosts if not (config.state_dir / f"{h.name}.linux.json").exists()]
    if fresh:
        say(f"simulating {', '.join(fresh)}: {config.warmup_hours:g} h of journal and log churn first ...")
    service = SimulatorService(config)
    try:
        ports = service.start(follow_wall_clock=True)
    except OSError as e:
        service.stop()
        raise DemoError(f"the simulator could not listen on its ports ({e}); see the fleet file's ports") from e
    for name, port in ports.items():
        if name in service.linux_hosts:
            linux = config.linux_host(name)
            qms = ", ".join(q.name for q in linux.queue_managers) or "no queue managers"
            say(f"  {name:<12} ssh {config.user_for(linux)}@127.0.0.1 -p {port}  (Linux; {qms})")
            continue
        partition = service.hosts[name].partition
        qms = ", ".join(q.name for q in partition.queue_managers) or "no queue managers"
        say(f"  {name:<12} ssh {config.user}@127.0.0.1 -p {port}  ({qms}; {len(partition.receivers)} receivers)")
    say(f"  state: {config.state_dir}")
    return service, ports


def write_fleet_connections(service, config: FleetConfig, ports: dict[str, int], path: Path) -> Path:
    """`airflow connections import` input: one SSH connection per host (key + pinned host key), and Spark local."""
    from mqjournal.airflow.connections import fleet_connections, write_connections

    connections = fleet_connections(config, service.host_keys, ports)
    connections["spark_default"] = {"conn_type": "spark", "host": "local[*]", "description": "Spark in local mode"}
    return write_connections(path, connections)


# -- 3. Airflow's command line -------------------------------------------------------------------------------------


def airflow_cli(env: dict[str, str], *args: str, what: str, timeout: float = 300) -> str:
    airflow = venv_bin() / "airflow"
    if not airflow.exists():
        raise DemoError(f"{airflow} is missing: run `make install` (or `make demo`) to set up the virtualenv")
    try:
        done = subprocess.run(
            [str(airflow), *args],
            env=env,
            cwd=env["AIRFLOW_HOME"],
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,  # Ctrl-C is for the demo, which cleans up; not for a half-done migration
        )
    except subprocess.TimeoutExpired as e:
        raise DemoError(f"{what}: `airflow {' '.join(args)}` did not finish in {timeout:g} s") from e
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-25:])
        raise DemoError(f"{what}: `airflow {' '.join(args)}` exited {done.returncode}:\n{tail}")
    return done.stdout


def prepare_airflow(env: dict[str, str], connections_file: Path, say: Say) -> None:
    say("airflow db migrate ...")
    airflow_cli(env, "db", "migrate", what="creating the Airflow metadata DB")
    say(f"airflow connections import {connections_file} ...")
    airflow_cli(env, "connections", "import", "--overwrite", str(connections_file), what="importing the connections")
    # Each batch task takes a slot per session it may open (Settings.sessions_per_task): a pool smaller than that
    # would never run one.
    slots = SSH_POOL_TASKS * Settings.from_env(env).sessions_per_task
    airflow_cli(env, "pools", "set", SSH_POOL[0], str(slots), SSH_POOL[1], what="creating the SSH pool")


# -- 4. airflow standalone -----------------------------------------------------------------------------------------


def log_tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def wait_for_log_line(
    log: Path, start: int, parts: tuple[str, ...], *, timeout: float, alive: Callable[[], bool]
) -> bool:
    """Until a line of `log` written after byte `start` holds every one of `parts`; False after `timeout` or once
    the process writing it is no longer `alive`."""
    deadline = time.monotonic() + timeout
    offset, pending = start, b""
    while True:
        with log.open("rb") as lines_file:
            lines_file.seek(offset)
            chunk = lines_file.read()
        offset += len(chunk)
        *lines, pending = (pending + chunk).split(b"\n")
        if any(all(p.encode() in line for p in parts) for line in lines):
            return True
        if time.monotonic() > deadline or not alive():
            return False
        time.sleep(0.5)


class AirflowProcess:
    """`airflow standalone` in its own process group, so that stopping it stops every process it started."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            self.log_start = out.tell()
            banner = f"\n===== mqjournal demo: airflow standalone, {time.strftime('%Y-%m-%d %H:%M:%S')} =====\n"
            out.write(banner.encode())
            out.flush()
            self.proc = subprocess.Popen(
                # cwd: Spark's warehouse and derby files land in the home, not in the repository.
                [str(venv_bin() / "airflow"), "standalone"],
                env=env,
                cwd=env["AIRFLOW_HOME"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_for_log_line(self, *parts: str, timeout: float) -> bool:
        """Until a line of this Airflow's output holds every one of `parts`; False after `timeout`."""
        return wait_for_log_line(self.log, self.log_start, parts, timeout=timeout, alive=self.alive)

    def failure(self, what: str) -> DemoError:
        return DemoError(f"{what}; the last lines of {self.log}:\n{log_tail(self.log)}")

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM to the whole group (standalone does not pass a SIGTERM on to its components), then SIGKILL
        whatever is left after `grace` seconds."""
        pgid = self.proc.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            self.proc.poll()
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.3)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)


class Api:
    """The Airflow REST API (v2) as the admin, with a bearer token from SimpleAuthManager."""

    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.base_url, self.username, self.password = base_url.rstrip("/"), username, password
        self.token: str | None = None

    def _send(self, method: str, path: str, body: object | None, auth: bool) -> tuple[int, object]:
        request = urllib.request.Request(self.base_url + path, method=method)
        request.add_header("Accept", "application/json")
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        if auth and self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, data=data, timeout=30) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def login(self) -> None:
        try:
            credentials = {"username": self.username, "password": self.password}
            status, answer = self._send("POST", "/auth/token", credentials, False)
        except OSError as e:
            raise DemoError(f"logging in to Airflow at {self.base_url} failed: {e}") from e
        if status not in (200, 201) or not isinstance(answer, dict) or "access_token" not in answer:
            raise DemoError(f"logging in to Airflow as {self.username!r} failed ({status}: {answer})")
        self.token = answer["access_token"]

    def _send_checked(self, method: str, path: str, body: object | None) -> tuple[int, object]:
        """`_send`, a GET retried while the API server is briefly unreachable (a busy machine)."""
        attempts = 3 if method == "GET" else 1
        for attempt in range(attempts):
            try:
                return self._send(method, path, body, True)
            except OSError as e:  # URLError, a refused connection, a timeout
                if attempt + 1 == attempts:
                    raise DemoError(f"Airflow API {method} {path} failed: {e}") from e
                time.sleep(2)
        raise AssertionError("unreachable")

    def call(self, method: str, path: str, body: object | None = None, *, ok: tuple[int, ...] = (200,)):
        if self.token is None:
            self.login()
        status, answer = self._send_checked(method, "/api/v2" + path, body)
        if status == 401:  # the token expired (a long wait for a human)
            self.login()
            status, answer = self._send_checked(method, "/api/v2" + path, body)
        if status not in ok:
            raise DemoError(f"Airflow API {method} /api/v2{path} answered {status}: {answer}")
        return answer

    def healthy(self) -> bool:
        try:
            status, _ = self._send("GET", "/api/v2/monitor/health", None, False)
        except OSError:
            return False
        return status == 200


def wait_for_api(airflow: AirflowProcess, api: Api, timeout: float, say: Say) -> None:
    say(f"waiting for the Airflow API on {api.base_url} (log: {airflow.log}) ...")
    deadline = time.monotonic() + timeout
    while not api.healthy():
        if not airflow.alive():
            raise airflow.failure(f"airflow standalone exited ({airflow.proc.returncode}) before its API answered")
        if time.monotonic() > deadline:
            raise airflow.failure(f"the Airflow API did not answer on {api.base_url} within {timeout:g} s")
        time.sleep(1)
    api.login()


def wait_for_dag(airflow: AirflowProcess, api: Api, timeout: float, say: Say) -> None:
    """Until the dag-processor has parsed the DAG file; a parse error fails at once, with its traceback."""
    say(f"waiting for the dag-processor to parse {DAG_ID} ...")
    deadline = time.monotonic() + timeout
    while True:
        status, _ = api._send_checked("GET", f"/api/v2/dags/{DAG_ID}", None)
        if status == 200:
            return
        errors = api.call("GET", "/api/v2/importErrors").get("import_errors", [])
        for error in errors:
            if str(error.get("filename", "")).endswith(f"{DAG_ID}.py"):
                raise DemoError(f"the DAG file {error['filename']} does not import:\n{error.get('stack_trace')}")
        if not airflow.alive():
            raise airflow.failure("airflow standalone exited while the DAG was being parsed")
        if time.monotonic() > deadline:
            raise airflow.failure(f"the DAG {DAG_ID} did not appear within {timeout:g} s (DAGs folder {REPO / 'dags'})")
        time.sleep(2)


# -- 5. the run ----------------------------------------------------------------------------------------------------


def _run_path(run_id: str) -> str:
    return f"/dags/{DAG_ID}/dagRuns/{quote(run_id, safe='')}"


def fail_leftover_runs(api: Api, say: Say) -> None:
    """A run an earlier demo left waiting would hold this one back (max_active_runs=1): mark it failed."""
    query = urlencode([("state", "queued"), ("state", "running")])
    for run in api.call("GET", f"/dags/{DAG_ID}/dagRuns?{query}").get("dag_runs", []):
        say(f"an earlier run is still {run['state']}: {run['dag_run_id']}; marking it failed")
        api.call("PATCH", _run_path(run["dag_run_id"]), {"state": "failed", "note": "left over by an earlier demo"})


def trigger_run(api: Api, conf: dict) -> str:
    api.call("PATCH", f"/dags/{DAG_ID}", {"is_paused": False})
    # The recovery DAG runs only when triggered; unpaused, a recovery the maintenance run triggers for a queue manager
    # that cannot start (its on-call drill) plans at once and waits at its gate, instead of queueing unseen. Not parsed
    # yet (404): it stays as the dag-processor makes it.
    api.call("PATCH", f"/dags/{RECOVERY_DAG_ID}", {"is_paused": False}, ok=(200, 404))
    run = api.call("POST", f"/dags/{DAG_ID}/dagRuns", {"logical_date": None, "conf": conf})
    return run["dag_run_id"]


def task_states(api: Api, run_id: str) -> list[dict]:
    """The run's task instances in the order they started (a mapped task's instances together, by index)."""
    tis = api.call("GET", f"{_run_path(run_id)}/taskInstances?limit=1000").get("task_instances", [])
    first: dict[str, str] = {}
    for ti in tis:
        started = ti.get("start_date") or "~"  # not started: last
        first[ti["task_id"]] = min(first.get(ti["task_id"], "~"), started)
    return sorted(tis, key=lambda t: (first[t["task_id"]], t["task_id"], t["map_index"]))


def summarize_states(tis: list[dict]) -> dict[str, str]:
    """{task_id: 'success' | 'success x3' | '2 success, 1 running'}, mapped task instances folded together."""
    by_task: dict[str, list[str]] = {}
    for ti in tis:
        by_task.setdefault(ti["task_id"], []).append(ti.get("state") or "none")
    out = {}
    for task_id, states in by_task.items():
        counts = {s: states.count(s) for s in dict.fromkeys(states)}
        if len(counts) == 1:
            (state,) = counts
            out[task_id] = state if len(states) == 1 else f"{state} x{len(states)}"
        else:
            out[task_id] = ", ".join(f"{n} {s}" for s, n in counts.items())
    return out


def approval_url(port: int, run_id: str) -> str:
    # The route HITLOperator.generate_link_to_ui builds (standard provider), for the unmapped gate task.
    run = quote(run_id, safe=":+")
    return f"http://localhost:{port}/dags/{DAG_ID}/runs/{run}/tasks/{GATE_TASK}/required_actions?map_index=-1"


def gate_detail(api: Api, run_id: str) -> dict | None:
    for detail in api.call("GET", f"{_run_path(run_id)}/hitlDetails").get("hitl_details", []):
        if detail["task_instance"]["task_id"] == GATE_TASK:
            return detail
    return None


def gate_choice(answer: str, options: list[str]) -> list[str]:
    """--approve chooses every queue manager the gate offers; --reject chooses "Delete nothing"."""
    if answer == "Approve":
        return [o for o in options if o != DELETE_NOTHING]
    return [DELETE_NOTHING]


def answer_gate(api: Api, run_id: str, chosen: list[str]) -> dict:
    return api.call(
        "PATCH",
        f"{_run_path(run_id)}/taskInstances/{GATE_TASK}/-1/hitlDetails",
        {"chosen_options": chosen, "params_input": {}},
    )


def follow_run(
    api: Api,
    airflow: AirflowProcess,
    run_id: str,
    *,
    port: int,
    answer: str | None,
    timeout: float,
    say: Say,
    poll: float = 2.0,
) -> str:
    """Poll the run to its end: print task state changes, show the gate, answer it if told to. Returns the state."""
    started = time.monotonic()
    seen: dict[str, str] = {}
    gate = _GateWatch(api, airflow, run_id, port=port, answer=answer, say=say)
    while True:
        if not airflow.alive():
            raise airflow.failure(f"airflow standalone exited ({airflow.proc.returncode}) during the run")
        run = api.call("GET", _run_path(run_id))
        tis = task_states(api, run_id)
        elapsed = time.monotonic() - started
        _say_state_changes(summarize_states(tis), seen, elapsed, say)
        if run["state"] in FINISHED:
            return run["state"]
        gate.look(tis, elapsed)
        if elapsed > timeout:
            raise DemoError(
                f"the run {run_id} is still {run['state']} after {timeout / 60:g} min (tasks: {seen}); "
                f"rerun with a larger --timeout, or with --keep-running to look at it in the UI"
            )
        time.sleep(poll)


def _say_state_changes(states: dict[str, str], seen: dict[str, str], elapsed: float, say: Say) -> None:
    """One line per task whose state changed since the last poll; `seen` remembers the states said."""
    for task_id, state in states.items():
        if seen.get(task_id, "none") != state:
            seen[task_id] = state
            say(f"  {_clock(elapsed)}  {task_id:<24} {state}")


class _GateWatch:
    """The approval gate during a run: shown once when it waits, answered if --approve/--reject said so, and a
    reminder now and then while a person is to answer it in the UI."""

    def __init__(
        self, api: Api, airflow: AirflowProcess, run_id: str, *, port: int, answer: str | None, say: Say
    ) -> None:
        self.api, self.airflow, self.run_id = api, airflow, run_id
        self.port, self.answer, self.say = port, answer, say
        self.shown_at: float | None = None
        self.last_progress = time.monotonic()

    def look(self, tis: list[dict], elapsed: float) -> None:
        gate = next((t for t in tis if t["task_id"] == GATE_TASK), None)
        if gate is not None and gate.get("state") == "awaiting_input" and self.shown_at is None:
            detail = gate_detail(self.api, self.run_id)
            if detail is not None:
                self.shown_at = self.last_progress = time.monotonic()
                self._show_and_answer(detail)
        if self.shown_at is not None and not self.answer and time.monotonic() - self.last_progress >= PROGRESS_EVERY:
            self.last_progress = time.monotonic()
            self.say(
                f"  {_clock(elapsed)}  still waiting for approval ({_clock(time.monotonic() - self.shown_at)}): "
                f"{approval_url(self.port, self.run_id)}"
            )

    def _show_and_answer(self, detail: dict) -> None:
        show_gate(detail, self.port, self.run_id, self.say)
        if self.answer:
            wait_until_parked(self.airflow, self.run_id, self.say)
            response = answer_gate(self.api, self.run_id, gate_choice(self.answer, detail["options"]))
            who = response["responded_by"]["name"]
            self.say(f"answered {response['chosen_options']} as {who} (--{self.answer.lower()})")
        else:
            self.say("waiting for your answer in the UI (Ctrl-C stops the demo; nothing is deleted without it) ...")


def wait_until_parked(airflow: AirflowProcess, run_id: str, say: Say, timeout: float = 60) -> None:
    """Before an unattended answer: until the scheduler has seen the worker that parked the gate exit.

    Airflow 3.3.2 race: an answer that lands before the scheduler processes that worker's exit puts the task back
    in the queue with the same try number; the late 'success' event from the parked worker then looks like a
    task killed externally, and the scheduler fails the gate ("finished with state success, but the task
    instance's state attribute is queued"). A human is never that fast; --approve is. The scheduler logs the
    event as "TaskInstance Finished: ... task_id=approve, run_id=...".
    """
    seen = airflow.wait_for_log_line(
        "TaskInstance Finished:", f"task_id={GATE_TASK},", f"run_id={run_id},", timeout=timeout
    )
    if not seen:
        say(f"(the scheduler did not log the gate's worker exit within {timeout:g} s; answering anyway)")
    time.sleep(1.0)


def show_gate(detail: dict, port: int, run_id: str, say: Say) -> None:
    url = approval_url(port, run_id)
    say("")
    say("=" * 100)
    say(f"APPROVAL NEEDED: {detail['subject']}")
    say(f"  choose the queue managers whose receivers may be deleted, in the UI: {url}")
    say(f"  (log in as {ADMIN}; options, several at once: {', '.join(detail['options'])})")
    say("-" * 100)
    say((detail.get("body") or "").rstrip())
    say("=" * 100)
    say("")


def task_log(home: DemoHome, run_id: str, ti: dict) -> Path | None:
    """The newest attempt's log file of a task instance (Airflow's default log file layout)."""
    folder = home.root / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}" / f"task_id={ti['task_id']}"
    if ti["map_index"] >= 0:
        folder = folder / f"map_index={ti['map_index']}"
    attempts = sorted(folder.glob("attempt=*.log"), key=lambda p: p.stat().st_mtime)
    return attempts[-1] if attempts else None


def show_task_log(home: DemoHome, run_id: str, ti: dict, say: Say, lines: int = 12) -> None:
    """The end of a failed task's log: its events (the log is JSON lines), and the exception."""
    path = task_log(home, run_id, ti)
    name = ti["task_id"] + (f"[{ti['map_index']}]" if ti["map_index"] >= 0 else "")
    if path is None:
        say(f"  (no log file for {name} under {home.root / 'logs'})")
        return
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            events.append(line)
            continue
        text = str(record.get("event", ""))
        for error in record.get("error_detail") or []:
            text += f" {error.get('exc_type')}: {error.get('exc_value')}"
        if not text.startswith("::"):
            events.append(text)
    say(f"\n{name} failed; the end of {path}:")
    for text in events[-lines:]:
        say(f"    {text[:400]}")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60:d}:{seconds % 60:02d}"


def show_outcome(api: Api, home: DemoHome, run_id: str, state: str, say: Say) -> Path:
    say("")
    say(f"run {run_id}: {state.upper()}")
    for ti in task_states(api, run_id):
        name = ti["task_id"] + (f"[{ti['map_index']}]" if ti["map_index"] >= 0 else "")
        say(f"  {name:<28} {ti.get('state') or 'none'}")
    for ti in task_states(api, run_id):
        if ti.get("state") == "failed":
            show_task_log(home, run_id, ti, say)
    report = home.report_file(run_id)
    say("")
    if report.exists():
        say(f"report: {report}")
        say("-" * 100)
        say(report.read_text(encoding="utf-8").rstrip())
        say("-" * 100)
    else:
        say(f"no report at {report} (the report task did not run); task logs: {home.root / 'logs'}")
    return report


# -- all together --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM cleans up like Ctrl-C does."""

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_demo(
    fleet_file: Path,
    *,
    home: Path,
    port: int = 8080,
    answer: str | None = None,
    keep_running: bool = False,
    timeout_minutes: float = 60,
    startup_timeout: float = 240,
    spark_connect: str | None = None,
    say: Say = _say,
) -> int:
    """0 when the run succeeded, 1 when it did not, 2 when the demo could not set it up, 130 on Ctrl-C."""
    fleet_file = fleet_file.resolve()
    demo_home = DemoHome(home.resolve())
    # Airflow's SSH client drops its connections abruptly; the simulator's transports would narrate each one.
    logging.getLogger("mqjournal.sim.server.transport").setLevel(logging.CRITICAL)
    try:
        with _sigterm_as_interrupt(), contextlib.ExitStack() as cleanup:
            up = _start_fleet_and_airflow(
                cleanup, fleet_file, demo_home, port, startup_timeout, say, spark_connect=spark_connect
            )
            state = _trigger_and_follow(up, demo_home, port=port, answer=answer, timeout=timeout_minutes * 60, say=say)
            result = 0 if state == "success" else 1
            if keep_running:
                _keep_running(up, port, say)
            return result
    except KeyboardInterrupt:
        say("\ninterrupted: Airflow and the simulator are stopped")
        return 130
    except DemoError as e:
        say(f"\nmqjournal demo failed: {e}")
        return 2


@dataclass(frozen=True)
class _Running:
    """What the demo started: Airflow, its API, the admin's password, the simulator's SSH port per host."""

    airflow: AirflowProcess
    api: Api
    password: str
    ports: dict[str, int]


def _start_fleet_and_airflow(
    cleanup: contextlib.ExitStack,
    fleet_file: Path,
    demo_home: DemoHome,
    port: int,
    startup_timeout: float,
    say: Say,
    *,
    spark_connect: str | None = None,
) -> _Running:
    """The simulated fleet, then `airflow standalone` with its connections, up to the DAG being loaded; `cleanup`
    stops both, in reverse order, however the demo ends."""
    if not fleet_file.exists():
        raise DemoError(f"fleet file {fleet_file} not found")
    config = load_fleet(fleet_file)
    check_ports(config, fleet_file, port)
    env = airflow_environment(demo_home, fleet_file, port, spark_connect)
    password = admin_password(demo_home)
    spark = f"Spark Connect {connect_address(spark_connect)}" if spark_connect else "Spark local[*]"
    say(f"Airflow home: {demo_home.root}  (SQLite metadata DB, {spark})")
    began = time.monotonic()

    service, ports = start_simulator(config, say)
    cleanup.callback(_stop_simulator, service, say)
    connections = write_fleet_connections(service, config, ports, demo_home.connections_file)
    prepare_airflow(env, connections, say)

    say("airflow standalone ...")
    airflow = AirflowProcess(env, demo_home.log)
    cleanup.callback(_stop_airflow, airflow, say)
    api = Api(f"http://127.0.0.1:{port}", ADMIN, password)
    wait_for_api(airflow, api, startup_timeout, say)
    wait_for_dag(airflow, api, startup_timeout, say)
    say(
        f"Airflow UI: http://localhost:{port}  (user {ADMIN}, password {password}); "
        f"up after {time.monotonic() - began:.0f} s"
    )
    return _Running(airflow, api, password, ports)


def _trigger_and_follow(
    up: _Running, demo_home: DemoHome, *, port: int, answer: str | None, timeout: float, say: Say
) -> str:
    """One run of the maintenance DAG, followed to its end and its outcome shown. Returns the run's state."""
    fail_leftover_runs(up.api, say)
    run_id = trigger_run(up.api, conf={})
    say(f"triggered {DAG_ID}: {run_id}")
    say(f"  http://localhost:{port}/dags/{DAG_ID}/runs/{quote(run_id, safe=':+')}")
    state = follow_run(up.api, up.airflow, run_id, port=port, answer=answer, timeout=timeout, say=say)
    show_outcome(up.api, demo_home, run_id, state, say)
    return state


def _keep_running(up: _Running, port: int, say: Say) -> None:
    """--keep-running: until Ctrl-C (returns) or until Airflow exits by itself (raises)."""
    say(
        f"\nAirflow keeps running on http://localhost:{port} (user {ADMIN}, password {up.password}), "
        f"the simulator on ports {', '.join(map(str, up.ports.values()))}. Ctrl-C stops both."
    )
    try:
        while up.airflow.alive():
            time.sleep(1)
    except KeyboardInterrupt:
        return
    raise up.airflow.failure("airflow standalone exited")


@contextlib.contextmanager
def _uninterruptible() -> Iterator[None]:
    """A second Ctrl-C must not leave half-stopped processes behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stop_airflow(airflow: AirflowProcess, say: Say) -> None:
    say("stopping Airflow ...")
    with _uninterruptible():
        airflow.stop()


def _stop_simulator(service, say: Say) -> None:
    say("stopping the simulator ...")
    with _uninterruptible():
        service.stop()
