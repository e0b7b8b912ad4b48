"""The deployment (docker/compose.yaml, docker/Dockerfile and the files beside them), checked without Docker: the
services the issue names, the image against the pins, the settings and connections the containers get, the shared
data volume, where secrets come from, and the simulated fleet's connections against a real simulator."""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
import subprocess
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from mqjournal.fleet import FleetConfig, conn_id_for, load_fleet
from mqjournal.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DOCKER = REPO / "docker"

AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-apiserver",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
    "airflow-worker",
)
SERVICES = ("postgres", "redis", *AIRFLOW_SERVICES, "spark-master", "spark-worker", "ibmi-sim")
DATA_VOLUME = "mqjournal-data"
# Who touches the data folder: tasks (workers), the run-notes listener (scheduler), the fleet view (API server) and
# the plan job's executors (Spark).
DATA_USERS = ("airflow-worker", "airflow-scheduler", "airflow-apiserver", "spark-master", "spark-worker")

INTERPOLATION = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::?[-?+][^}]*)?\}")
SECRET_NAME = re.compile(r"(PASSWORD|PASSWD|SECRET|SECRET_KEY|FERNET_KEY|TOKEN|PRIVATE_KEY|AUTH)$", re.IGNORECASE)
URL_PASSWORD = re.compile(r"://[^:/@\s]*:([^@\s]*)@")
SECRET_FLAG = re.compile(r"--?[\w-]*(pass|secret|token)[\w-]*$", re.IGNORECASE)


@functools.cache
def compose() -> dict[str, Any]:
    # PyYAML resolves the file's anchors and << merges as Compose does.
    return yaml.safe_load((DOCKER / "compose.yaml").read_text(encoding="utf-8"))


def service(name: str) -> dict[str, Any]:
    return compose()["services"][name]


def environment(name: str) -> dict[str, str]:
    env = service(name).get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: str(value) for key, value in env.items()}


def mounts(name: str) -> list[tuple[str, str]]:
    """(source, target) of each of the service's volumes, short or long syntax."""
    found = []
    for item in service(name).get("volumes") or []:
        if isinstance(item, dict):
            found.append((item["source"], item["target"]))
        else:
            source, target, *_ = item.split(":")
            found.append((source, target))
    return found


def interpolated(value: str) -> bool:
    return INTERPOLATION.fullmatch(value) is not None


def url(value: str):
    """`value` split as a URL once Compose has put each variable in (here its name), as the container sees it."""
    return urlsplit(INTERPOLATION.sub(lambda m: m["name"], value))


def strings(node: object) -> Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from strings(key)
            yield from strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item)


def lists(node: object) -> Iterator[list]:
    if isinstance(node, list):
        yield node
        for item in node:
            yield from lists(item)
    elif isinstance(node, Mapping):
        for value in node.values():
            yield from lists(value)


def dockerfile() -> str:
    # Continuation lines joined, as the Dockerfile parser reads them.
    return (DOCKER / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")


def instructions(keyword: str) -> list[list[str]]:
    """The arguments of each `keyword` instruction of the Dockerfile, flags (--chown=...) left out."""
    found = []
    for line in dockerfile().splitlines():
        words = line.split()
        if words and words[0].upper() == keyword:
            found.append([w for w in words[1:] if not w.startswith("--")])
    return found


def requirement_pin(package: str) -> str:
    for line in (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name, _, version = line.split("#")[0].strip().partition("==")
        if name.lower() == package:
            return version
    raise AssertionError(f"requirements.txt pins no {package}")


def project_python() -> str:
    """The one minor version pyproject.toml allows, e.g. 3.11 for '>=3.11,<3.12'."""
    spec = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    low = re.search(r">=\s*(\d+)\.(\d+)", spec)
    high = re.search(r"<\s*(\d+)\.(\d+)", spec)
    assert low and high and (int(high[1]), int(high[2])) == (int(low[1]), int(low[2]) + 1), spec
    return f"{low[1]}.{low[2]}"


def in_image(path: str) -> Path:
    """The repository file the Dockerfile copies to `path` in the image (AssertionError if it copies none there)."""
    for args in instructions("COPY"):
        *sources, dest = args
        for source in sources:
            origin = REPO / source
            if origin.is_dir():
                if path.startswith(dest.rstrip("/") + "/"):
                    candidate = origin / path[len(dest.rstrip("/")) + 1 :]
                    if candidate.is_file():
                        return candidate
            elif (dest.rstrip("/") + "/" + origin.name if dest.endswith("/") or len(sources) > 1 else dest) == path:
                return origin
    raise AssertionError(f"the Dockerfile copies nothing to {path}")


class _Recording(Mapping[str, str]):
    """An empty environment that notes every variable it is asked for."""

    def __init__(self) -> None:
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return False

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@functools.cache
def settings_variables() -> frozenset[str]:
    """Every MQJOURNAL_* variable `Settings.from_env` reads: what it asks its environment for."""
    environ = _Recording()
    Settings.from_env(environ)
    return frozenset(name for name in environ.asked if name.startswith("MQJOURNAL_"))


def settings_of(name: str) -> Settings:
    return Settings.from_env(environment(name))


def spark_master(conn: str) -> str:
    """The master URL the Spark provider's SparkSubmitHook makes of a spark connection (JSON or URI form)."""
    if conn.lstrip().startswith("{"):
        data = json.loads(conn)
        conn_type, host, port = data["conn_type"], data.get("host") or "", data.get("port")
    else:
        parts = urlsplit(conn)
        conn_type, host, port = parts.scheme, parts.hostname or "", parts.port
    master = host if conn_type == "spark" and ("://" in host or not port) else f"{conn_type}://{host}"
    return f"{master}:{port}" if port else master


# -- the services --------------------------------------------------------------------------------------------------


def test_every_service_of_the_deployment_is_there():
    missing = [name for name in SERVICES if name not in compose()["services"]]
    assert not missing, f"compose.yaml has no {', '.join(missing)}"


def test_the_project_services_run_the_image_built_from_the_dockerfile():
    for name in (*AIRFLOW_SERVICES, "spark-master", "spark-worker", "ibmi-sim"):
        build = service(name).get("build")
        assert build, f"{name} does not build the project image"
        assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == DOCKER / "Dockerfile", name
        assert (DOCKER / build["context"]).resolve() == REPO, f"{name}: the build context is not the repository root"


def test_the_workers_are_two_by_default():
    assert service("airflow-worker")["deploy"]["replicas"] == 2
    # A fixed container name or host port would keep a second replica (or --scale airflow-worker=N) from starting.
    assert "container_name" not in service("airflow-worker")
    assert "ports" not in service("airflow-worker")


def test_airflow_init_migrates_the_database_and_creates_the_pool():
    script = "\n".join(service("airflow-init")["command"])
    assert "airflow db migrate" in script
    assert "airflow pools set" in script
    for name in AIRFLOW_SERVICES[1:]:
        assert service(name)["depends_on"]["airflow-init"]["condition"] == "service_completed_successfully", name


def test_the_ssh_pool_runs_a_batch_task_and_airflow_init_refuses_one_too_small_before_making_it():
    from mqjournal.airflow.pools import pool_too_small

    script = "\n".join(service("airflow-init")["command"])
    assert 0 <= script.index('python -m mqjournal.airflow.pools "$$SSH_POOL_SLOTS"') < script.index("airflow pools set")
    default = re.fullmatch(r"\$\{SSH_POOL_SLOTS:-(\d+)\}", environment("airflow-init")["SSH_POOL_SLOTS"])
    assert default is not None
    example = dict(
        line.split("=", 1)
        for line in (DOCKER / ".env.example").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    )
    for slots in (default.group(1), example["SSH_POOL_SLOTS"]):
        assert pool_too_small(settings_of("airflow-worker"), int(slots)) is None, slots


# -- the image -----------------------------------------------------------------------------------------------------


def test_the_image_is_airflow_at_the_pinned_version_on_the_projects_python():
    (base,) = instructions("FROM")
    python = project_python()
    assert base == [f"apache/airflow:{requirement_pin('apache-airflow')}-python{python}"]
    # SPARK_HOME and PYSPARK_PYTHON name the interpreter's folders: the same Python.
    for line in dockerfile().splitlines():
        for version in re.findall(r"python(\d+\.\d+)", line):
            assert version == python, line


def test_the_build_context_sends_what_the_dockerfile_copies_and_keeps_out_secrets_and_local_state():
    rules = []
    for raw in (DOCKER / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            negate = line.startswith("!")
            pattern = line.lstrip("!")
            regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
            rules.append((negate, re.compile(regex)))

    def sent(path: str) -> bool:
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        included = True
        for negate, regex in rules:
            if any(regex.fullmatch(prefix) for prefix in prefixes):
                included = negate
        return included

    copied = [source for args in instructions("COPY") for source in args[:-1]]
    assert copied
    for source in copied:
        origin = REPO / source
        assert origin.exists(), f"the Dockerfile copies {source}, which the repository does not have"
        files = (
            [p for p in origin.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
            if origin.is_dir()
            else [origin]
        )
        for file in files:
            relative = file.relative_to(REPO).as_posix()
            assert sent(relative), f"{relative} is copied by the Dockerfile but left out of the build context"
    for private in (
        "docker/.env",
        ".venv/bin/python",
        ".git/config",
        ".sim/example/ibmi-prod1.json",
        ".airflow/airflow.db",
        "plugins/mqjournal.egg-info/PKG-INFO",
        "plugins/mqjournal/__pycache__/fleet.cpython-311.pyc",
    ):
        assert not sent(private), f"{private} would be sent to the builder"


# -- settings ------------------------------------------------------------------------------------------------------


def test_every_mqjournal_variable_of_the_deployment_is_a_setting_mqjournal_reads():
    read = settings_variables()
    assert {"MQJOURNAL_DATA_DIR", "MQJOURNAL_SSH_COMMAND_TIMEOUT"} <= read, "the probe of Settings.from_env saw nothing"
    for file in ("compose.yaml", ".env.example", "Dockerfile"):
        used = set(re.findall(r"\bMQJOURNAL_[A-Z0-9_]+", (DOCKER / file).read_text(encoding="utf-8")))
        unknown = sorted(used - read)
        assert not unknown, f"docker/{file} sets {', '.join(unknown)}, which mqjournal.settings never reads"
    for name in AIRFLOW_SERVICES:
        settings_of(name)  # the values validate


def test_the_data_folder_is_one_volume_at_one_path_wherever_it_is_used():
    assert DATA_VOLUME in compose()["volumes"]
    targets = {}
    for name in DATA_USERS:
        found = [target for source, target in mounts(name) if source == DATA_VOLUME]
        assert len(found) == 1, f"{name} does not mount {DATA_VOLUME} (once)"
        targets[name] = found[0]
    assert len(set(targets.values())) == 1, f"{DATA_VOLUME} is mounted at different paths: {targets}"
    (path,) = set(targets.values())
    for name in AIRFLOW_SERVICES:
        s = settings_of(name)
        assert str(s.data_dir) == path, f"{name}: MQJOURNAL_DATA_DIR is {s.data_dir}, the volume is at {path}"
        store = s.backup_store
        if "://" not in store:
            assert Path(store).is_relative_to(path), f"{name}: the backup store {store} is not on {DATA_VOLUME}"


def test_every_service_reads_the_same_fleet_file_and_the_image_has_it():
    fleets = {str(settings_of(name).fleet_file) for name in AIRFLOW_SERVICES}
    assert len(fleets) == 1, fleets
    load_fleet(in_image(fleets.pop()))


# -- secrets -------------------------------------------------------------------------------------------------------


def test_no_secret_is_written_in_compose_or_the_dockerfile():
    for name in compose()["services"]:
        for key, value in environment(name).items():
            if SECRET_NAME.search(key):
                assert interpolated(value), f"{name}: {key} is written in compose.yaml, not taken from docker/.env"
    for text in strings(compose()):
        for password in URL_PASSWORD.findall(text):
            assert interpolated(password), f"a URL in compose.yaml carries a written password: {text}"
        if text.lstrip().startswith("{"):
            extra = json.loads(text).get("extra") or {}
            for key in ("password", "private_key", "private_key_passphrase"):
                assert key not in extra or interpolated(str(extra[key])), f"a connection writes its {key}: {text}"
    for command in lists(compose()):
        for flag, value in itertools.pairwise(command):
            if isinstance(flag, str) and SECRET_FLAG.match(flag):
                assert isinstance(value, str) and interpolated(value), f"{flag} is given a written value: {command}"
    for keyword in ("ENV", "ARG"):
        for args in instructions(keyword):
            for word in args:
                assert not SECRET_NAME.search(word.split("=")[0]), f"the Dockerfile sets {word}: a secret in the image"
    for password in URL_PASSWORD.findall(dockerfile()):
        pytest.fail(f"the Dockerfile carries a URL with a password ({password})")


def test_each_required_secret_is_a_placeholder_in_env_example_and_env_is_never_committed():
    required = set(re.findall(r"\$\{([A-Z0-9_]+):\?", (DOCKER / "compose.yaml").read_text(encoding="utf-8")))
    assert required
    example = {}
    for line in (DOCKER / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            example[key] = value
    for name in sorted(required):
        assert name in example, f"compose.yaml requires {name}; .env.example does not list it"
        if SECRET_NAME.search(name) or name.endswith("_KEY"):
            assert example[name] == "", f".env.example gives {name} a value: only placeholders there"
    assert ".env" in (DOCKER / ".gitignore").read_text(encoding="utf-8").split()


@pytest.mark.skipif(shutil.which("openssl") is None, reason="make-env.sh draws its random values with openssl")
def test_make_env_gives_every_required_variable_a_value(tmp_path):
    for name in (".env.example", "make-env.sh"):
        shutil.copy(DOCKER / name, tmp_path / name)
    subprocess.run(["bash", str(tmp_path / "make-env.sh")], check=True, capture_output=True)
    values = dict(
        line.split("=", 1) for line in (tmp_path / ".env").read_text(encoding="utf-8").splitlines() if "=" in line
    )
    for name in set(re.findall(r"\$\{([A-Z0-9_]+):\?", (DOCKER / "compose.yaml").read_text(encoding="utf-8"))):
        assert values.get(name), f"make-env.sh leaves {name} empty"
    from cryptography.fernet import Fernet

    Fernet(values["AIRFLOW_FERNET_KEY"].encode())  # ValueError unless it is a Fernet key
    assert (tmp_path / ".env").stat().st_mode & 0o077 == 0, "docker/.env is readable by others"
    # A second run keeps the secrets in use.
    again = subprocess.run(["bash", str(tmp_path / "make-env.sh")], capture_output=True)
    assert again.returncode != 0


# -- Airflow's executor and databases ------------------------------------------------------------------------------


def test_the_executor_is_celery_with_a_redis_broker_and_a_postgresql_result_backend():
    for name in AIRFLOW_SERVICES:
        env = environment(name)
        assert env["AIRFLOW__CORE__EXECUTOR"] == "CeleryExecutor", name
        broker = url(env["AIRFLOW__CELERY__BROKER_URL"])
        assert (broker.scheme, broker.hostname) == ("redis", "redis"), f"{name}: broker {broker.geturl()}"
        backend = url(env["AIRFLOW__CELERY__RESULT_BACKEND"])
        assert backend.scheme.startswith("db+postgresql") and backend.hostname == "postgres", name
        metadata = url(env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"])
        assert metadata.scheme.startswith("postgresql") and metadata.hostname == "postgres", name
        api = url(env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"])
        assert api.hostname == "airflow-apiserver" and api.port == 8080, name
    assert "8080" in service("airflow-apiserver")["ports"][0].split(":")[-1]


def test_the_catalog_url_names_the_database_and_user_postgres_init_creates():
    catalog = url(settings_of("airflow-worker").catalog_url)
    postgres = environment("postgres")
    assert catalog.scheme == "postgresql+psycopg" and catalog.hostname == "postgres"
    assert catalog.username == postgres["CATALOG_DB_USER"]
    assert catalog.path.lstrip("/") == postgres["CATALOG_DB_NAME"]
    password = INTERPOLATION.fullmatch(postgres["CATALOG_DB_PASSWORD"])
    assert password and catalog.password == password["name"], "the catalog's password is not the one postgres sets"
    assert ("./postgres-init", "/docker-entrypoint-initdb.d") in mounts("postgres")
    script = (DOCKER / "postgres-init" / "10-mqjournal-catalog.sh").read_text(encoding="utf-8")
    for variable in ("CATALOG_DB_USER", "CATALOG_DB_NAME", "CATALOG_DB_PASSWORD"):
        assert f"${variable}" in script


# -- Spark ---------------------------------------------------------------------------------------------------------


def test_spark_default_points_at_the_spark_master_service():
    env = environment("airflow-worker")
    conn_id = settings_of("airflow-worker").spark_conn_id
    conn = env.get(f"AIRFLOW_CONN_{conn_id.upper()}")
    assert conn, f"the workers have no connection {conn_id} (MQJOURNAL_SPARK_CONN_ID)"
    assert spark_master(conn) == "spark://spark-master:7077"
    master = " ".join(service("spark-master")["command"])
    assert "org.apache.spark.deploy.master.Master" in master and "--port 7077" in master
    assert "--host spark-master" in master
    worker = " ".join(service("spark-worker")["command"])
    assert "org.apache.spark.deploy.worker.Worker spark://spark-master:7077" in worker


def test_the_spark_connect_connection_reaches_the_spark_connect_service_which_runs_on_the_spark_cluster():
    conn = json.loads(environment("airflow-worker")["AIRFLOW_CONN_SPARK_CONNECT"])
    assert conn["conn_type"] == "spark_connect"
    server = service(conn["host"])
    command = " ".join(server["command"])
    assert f"mqjournal spark-connect --listen 0.0.0.0:{conn['port']}" in command
    assert "--master spark://spark-master:7077" in command
    # Opt-in: without the profile and MQJOURNAL_SPARK_CONNECT_CONN_ID the plan stays a spark-submit.
    assert server["profiles"] == ["spark-connect"] and "ports" not in server
    assert environment("airflow-worker")["MQJOURNAL_SPARK_CONNECT_CONN_ID"] == "${MQJOURNAL_SPARK_CONNECT_CONN_ID:-}"


# -- the partitions ------------------------------------------------------------------------------------------------


def compose_fleet() -> FleetConfig:
    return load_fleet(in_image(str(settings_of("airflow-worker").fleet_file)))


def test_the_compose_fleet_is_the_example_fleet_reached_through_ibmi_sim():
    def without_access(config: FleetConfig) -> FleetConfig:
        hosts = [h.model_copy(update={"address": "-"}) for h in config.hosts]
        linux = [h.model_copy(update={"address": "-"}) for h in config.linux_hosts]
        return config.model_copy(
            update={"state_dir": None, "client_key": None, "known_hosts": None, "hosts": hosts, "linux_hosts": linux}
        )

    ours = compose_fleet()
    assert without_access(ours) == without_access(load_fleet(DOCKER / "fleet.example.yaml"))
    assert {h.address for h in ours.hosts + ours.linux_hosts} == {"ibmi-sim"}
    assert environment("ibmi-sim")["SIM_FLEET"] == str(settings_of("airflow-worker").fleet_file)


def test_each_host_has_a_connection_to_the_simulator_that_verifies_its_host_key():
    fleet = compose_fleet()
    env = environment("airflow-worker")
    worker_mounts = {target: source for source, target in mounts("airflow-worker")}
    sim_mounts = {target: source for source, target in mounts("ibmi-sim")}
    for host in fleet.hosts + fleet.linux_hosts:
        name = f"AIRFLOW_CONN_{conn_id_for(host.name).upper()}"
        assert name in env, f"the workers have no connection for {host.name} ({name})"
        conn = json.loads(env[name])
        extra = conn.get("extra") or {}
        assert (conn["host"], conn["port"]) == ("ibmi-sim", host.port), host.name
        assert conn["login"] == fleet.user_for(host)
        assert str(extra.get("no_host_key_check", "false")).lower() == "false", host.name
        assert str(extra.get("allow_host_key_change", "false")).lower() == "false", host.name
        assert extra["key_file"] == str(fleet.client_key), f"{host.name} logs in with another key than the sim's"
        if "host_key" not in extra:
            # Verified against the worker's ~/.ssh/known_hosts: the volume the simulator writes its known_hosts to.
            assert fleet.known_hosts is not None
            ssh = str(fleet.known_hosts.parent)
            assert ssh == "/home/airflow/.ssh", "the hook reads ~/.ssh/known_hosts, the airflow user's"
            assert worker_mounts.get(ssh) and worker_mounts[ssh] == sim_mounts.get(ssh), "known_hosts is not shared"
    assert service("ibmi-sim")["healthcheck"]["test"][-1] == "health"


def test_the_workers_connections_reach_the_simulated_fleet_and_verify_its_keys(tmp_path, monkeypatch):
    """The connections as compose gives them, through IbmiHook, to the compose fleet's partitions served here: only
    what Docker provides is stood in for (the worker's home, the name ibmi-sim and the container's address)."""
    from mqjournal.airflow.hook import IbmiHook
    from mqjournal.ibmi.commands import Command
    from mqjournal.ibmi.transport import HostKeyRejected
    from mqjournal.sim.service import SimulatorService

    home = tmp_path / "home"

    def local(path: Path | None) -> Path:
        assert path is not None and path.is_relative_to("/home/airflow")
        return home / path.relative_to("/home/airflow")

    fleet = compose_fleet()
    served = fleet.model_copy(
        update={
            "state_dir": tmp_path / "state",
            "client_key": local(fleet.client_key),
            "known_hosts": local(fleet.known_hosts),
            "warmup_hours": 0,
            "hosts": [h.model_copy(update={"address": "127.0.0.1", "port": 0}) for h in fleet.hosts],
        }
    )
    env = environment("airflow-worker")
    monkeypatch.setenv("HOME", str(home))
    with SimulatorService(served) as sim:
        ports = sim.start()
        for host in fleet.hosts:
            conn_id = conn_id_for(host.name)
            conn = json.loads(env[f"AIRFLOW_CONN_{conn_id.upper()}"])
            conn["host"], conn["port"] = "127.0.0.1", ports[host.name]
            conn["extra"]["key_file"] = str(local(Path(conn["extra"]["key_file"])))
            monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))
            with IbmiHook(ssh_conn_id=conn_id).session(host.name) as session:
                assert session.run(Command("uname", idempotent=True)).stdout == "OS400\n"
        # Without the simulator's known_hosts the same connection is refused, not trusted on first use.
        os.remove(local(fleet.known_hosts))
        with pytest.raises(HostKeyRejected), IbmiHook(ssh_conn_id=conn_id).session(host.name) as session:
            session.run(Command("uname", idempotent=True))
