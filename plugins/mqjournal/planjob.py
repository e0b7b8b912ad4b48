"""Launch the plan job (`spark_apps/plan_receivers.py`) with spark-submit, from the CLI or from Airflow.

`spark_submit_args` is the one definition of the command line: `run_plan` runs it here, and a SparkSubmitOperator
can be given the same application, --py-files and application arguments (`application_path`, `build_py_files`,
`application_args`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import mqjournal
from mqjournal.errors import MqJournalError
from mqjournal.planrows import PlanTotals
from mqjournal.policy import Policy, load_policy

if TYPE_CHECKING:
    from airflow.sdk import ObjectStoragePath
    from pyspark.sql import SparkSession

MASTER_ENV = "MQJOURNAL_SPARK_MASTER"
DEFAULT_MASTER = "local[*]"
APP_NAME = "mqjournal-plan"
TAIL_LINES = 20

_PACKAGE_DIR = Path(mqjournal.__file__).resolve().parent
# plugins/mqjournal -> the project root, which holds spark_apps/ next to plugins/.
_APPLICATION = _PACKAGE_DIR.parent.parent / "spark_apps" / "plan_receivers.py"

# Spark's INFO/DEBUG lines and Java stack frames say nothing about why a plan failed: left out of the error's tail.
_LOG_NOISE = re.compile(r"^(\d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (INFO|DEBUG|TRACE) |\tat |\t\.\.\. \d+ more)")


class PlanJobFailed(MqJournalError):
    """The plan job failed: spark-submit ended with a non-zero status, or the plan failed in a Spark Connect
    session (then `returncode` is what spark-submit would have ended with: 2 for bad input, 1 otherwise)."""

    def __init__(self, returncode: int, stderr_tail: str, *, job: str = "spark-submit plan_receivers.py") -> None:
        self.returncode = returncode
        self.stderr_tail = stderr_tail  # the job's stderr, which spark-submit interleaves with its stdout
        super().__init__(
            job,
            f"exited with status {returncode}; the last lines of its stderr:\n{stderr_tail}\n",
            "fix the cause shown above and plan again; nothing was planned",
        )


def application_path() -> Path:
    if not _APPLICATION.is_file():
        raise FileNotFoundError(f"the plan job is not at {_APPLICATION}: is mqjournal installed from its source tree?")
    return _APPLICATION


def spark_submit_executable() -> Path:
    """The spark-submit of the running Python's environment (pip's pyspark puts it next to python)."""
    return Path(sys.executable).parent / "spark-submit"


def resolve_master(master: str | None = None) -> str:
    return master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER


def build_py_files(directory: Path) -> Path:
    """Zip the mqjournal package so executors (and the driver) import the same code as this process."""
    target = Path(directory) / "mqjournal.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(_PACKAGE_DIR.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                archive.write(path, Path("mqjournal") / path.relative_to(_PACKAGE_DIR))
    return target


SPARK_SCHEMES = {"file": "file", "local": "file", "hdfs": "hdfs", "s3": "s3a", "s3a": "s3a", "gs": "gs", "gcs": "gs"}
"""The scheme under which Spark's Hadoop filesystems read a data folder URL's fsspec protocol: Hadoop 3 has no
filesystem for s3:// (that is EMR's own), its S3 connector is s3a://; gs:// is the Cloud Storage connector's."""


def _location(value: Path | str | ObjectStoragePath) -> str:
    # Paths are made absolute: the driver and the executors do not share this process's working directory.
    # Strings may be URIs (hdfs://, s3a://) and pass as given.
    if isinstance(value, Path):
        return str(value.absolute())
    if isinstance(value, str):
        return value
    return spark_url(value)


def spark_url(path: ObjectStoragePath) -> str:
    """A data folder URL as Spark reads it (s3://bucket/x is s3a://bucket/x); never with the Airflow connection id
    that ObjectStoragePath's text carries: Spark has its own credentials (docs/deploy.md)."""
    scheme = SPARK_SCHEMES.get(path.protocol)
    if scheme is None:
        raise ValueError(
            f"Spark cannot read the data folder {path} ({path.protocol}://): use a folder every Spark process sees, "
            f"or one of {', '.join(sorted(f'{s}://' for s in SPARK_SCHEMES))}"
        )
    if scheme == "hdfs":  # the name node is in the storage options, not in the path
        options = path.storage_options
        authority = f"{options.get('host', '')}:{options['port']}" if options.get("port") else options.get("host", "")
        return f"hdfs://{authority}{path.path}"
    return f"{scheme}://{path.path}"  # s3 and gs: the bucket leads the path; file: the path is absolute


def _as_of(as_of: datetime | None) -> datetime:
    value = as_of or datetime.now(UTC)
    # A time without offset is taken as UTC, the planner's default zone (the job does the same).
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _as_of_text(as_of: datetime | None) -> str:
    return _as_of(as_of).isoformat()


Locations: TypeAlias = "Path | str | ObjectStoragePath | Sequence[Path | str | ObjectStoragePath] | None"
"""One location, or several (each run partition to read: mqjournal.history.partitions_needed), or none."""


def _locations(value: Locations) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [_location(v) for v in value]
    return [_location(value)]


def application_args(
    snapshots: Path | str | ObjectStoragePath | None,
    out: Path | str | ObjectStoragePath,
    *,
    history: Locations = None,
    policy: Policy | None = None,
    as_of: datetime | None = None,
    linux_snapshots: Locations = None,
    linux_history: Locations = None,
) -> list[str]:
    """The plan job's own arguments. `as_of` None means now, fixed here so a retried task plans the same time.
    `snapshots` None: no IBM i queue managers to plan (a Linux-only fleet). `linux_snapshots`: the Linux queue
    managers' snapshots; `linux_history`: their earlier ones (for the stuck alerts)."""
    args = [] if snapshots is None else ["--snapshots", _location(snapshots)]
    for location in _locations(history):
        args += ["--history", location]
    for option, locations in (("--linux-snapshots", linux_snapshots), ("--linux-history", linux_history)):
        for location in _locations(locations):
            args += [option, location]
    args += [
        "--policy-json",
        (policy or Policy()).model_dump_json(),
        "--as-of",
        _as_of_text(as_of),
        "--out",
        _location(out),
    ]
    return args


def default_conf(master: str) -> dict[str, str]:
    conf = {"spark.sql.session.timeZone": "UTC"}
    if master.startswith("local"):
        # 200 shuffle partitions cost seconds of task overhead on one machine for a fleet of any size.
        conf |= {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}
        # Adaptive execution re-plans after every stage to coalesce partitions and switch joins: on one machine with
        # 4 partitions there is nothing to coalesce, and the re-planning cost a fleet's plan a fifth of its CPU on a
        # warm Spark Connect server (27.8 -> 22.5 CPU-s a plan, and 63 -> 53 for a JVM's first; 2026-11-28).
        conf["spark.sql.adaptive.enabled"] = "false"
    return conf


def spark_submit_args(
    snapshots: Path | str | None,
    out: Path | str,
    *,
    py_files: Path | str,
    history: Path | str | None = None,
    policy: Policy | None = None,
    as_of: datetime | None = None,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    linux_snapshots: Locations = None,
    linux_history: Locations = None,
) -> list[str]:
    """The arguments to spark-submit (without the executable): options, the application, then its arguments."""
    resolved = resolve_master(master)
    args = ["--master", resolved, "--name", APP_NAME, "--py-files", _location(py_files)]
    for key, value in (default_conf(resolved) | dict(conf or {})).items():
        args += ["--conf", f"{key}={value}"]
    args.append(str(application_path()))
    return args + application_args(
        snapshots,
        out,
        history=history,
        policy=policy,
        as_of=as_of,
        linux_snapshots=linux_snapshots,
        linux_history=linux_history,
    )


# What pyspark leaves in os.environ once this process opened a Spark Connect session: inherited, they would make
# the spark-submit job's own session a Connect client too.
CONNECT_MODE_ENV = ("SPARK_CONNECT_MODE_ENABLED", "SPARK_REMOTE", "SPARK_LOCAL_REMOTE")


def submit_environment(master: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CONNECT_MODE_ENV}
    # pip's spark-submit only finds its Spark home through find-spark-home on PATH; point it at the package.
    if "SPARK_HOME" not in env:
        import pyspark

        env["SPARK_HOME"] = str(Path(pyspark.__file__).parent)
    # The driver runs here (client mode) and needs this environment's pyspark and pydantic.
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        # Local executors are on this machine too; on a cluster their Python is the cluster's configuration.
        env.setdefault("PYSPARK_PYTHON", sys.executable)
    return env


def output_tail(text: str, lines: int = TAIL_LINES) -> str:
    kept = [line for line in text.splitlines() if line.strip() and not _LOG_NOISE.match(line)]
    return "\n".join(kept[-lines:])


def _read_end(path: Path, size: int = 256 * 1024) -> str:
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - size))
        return stream.read().decode("utf-8", errors="replace")


def run_plan(
    snapshots: Path | None,
    out: Path,
    *,
    history: Path | None,
    policy_file: Path | None,
    as_of: datetime | None,
    master: str | None = None,
    conf: dict[str, str] | None = None,
    linux_snapshots: Path | None = None,
    linux_history: Sequence[Path] = (),
) -> PlanTotals:
    """Run the plan job to completion and return its summary.json; PlanJobFailed if spark-submit fails.
    `snapshots` (IBM i) or `linux_snapshots`, or both."""
    policy = load_policy(policy_file)
    resolved = resolve_master(master)
    with tempfile.TemporaryDirectory(prefix="mqjournal-plan-") as scratch:
        scratch_dir = Path(scratch)
        args = spark_submit_args(
            snapshots,
            out,
            py_files=build_py_files(scratch_dir),
            history=history,
            policy=policy,
            as_of=as_of,
            master=resolved,
            conf=conf,
            linux_snapshots=linux_snapshots,
            linux_history=linux_history,
        )
        # spark-submit relays the Python driver's stderr to its own stdout, so both streams go to one file (not a
        # pipe: a busy job must never block on a full pipe, nor grow this process's memory).
        output = scratch_dir / "spark-submit.log"
        with output.open("wb") as log:
            completed = subprocess.run(
                [str(spark_submit_executable()), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=submit_environment(resolved),
                check=False,
            )
        if completed.returncode != 0:
            raise PlanJobFailed(completed.returncode, output_tail(_read_end(output)))
    return PlanTotals.model_validate_json((Path(out) / "summary.json").read_text(encoding="utf-8"))


def connect_address(remote: str) -> str:
    """A Spark Connect URL as logs may show it: scheme, host and port, never its parameters (a token)."""
    return remote.split("/;", 1)[0].split(";", 1)[0]


def ship_package(spark: SparkSession) -> None:
    """Give a Spark Connect session this process's mqjournal (the --py-files zip), for the plan's Python workers on
    the server: they plan each queue manager with the reference planner (`mqjournal.sparkplan.grouped`). The zip is
    named by its content, so a session given it twice is given one file, and another version of it another."""
    import hashlib

    with tempfile.TemporaryDirectory(prefix="mqjournal-artifact-") as directory:
        built = build_py_files(Path(directory))
        digest = hashlib.sha256(built.read_bytes()).hexdigest()[:16]
        named = built.rename(built.with_name(f"mqjournal-{digest}.zip"))
        spark.addArtifacts(str(named), pyfile=True)


def connect_connection(remote: str) -> dict[str, str | int]:
    """The Airflow connection (type spark_connect, the apache-spark provider's) of a Spark Connect URL sc://HOST:PORT."""
    host, _, port = connect_address(remote).removeprefix("sc://").rpartition(":")
    return {"conn_type": "spark_connect", "host": host, "port": int(port)}


def plan_in_session(
    spark: SparkSession,
    snapshots: Path | str | ObjectStoragePath | None,
    out: Path | str | ObjectStoragePath,
    *,
    history: Sequence[Path | str | ObjectStoragePath] = (),
    policy: Policy,
    as_of: datetime | None,
    job: str,
    linux_snapshots: Sequence[Path | str | ObjectStoragePath] = (),
    linux_history: Sequence[Path | str | ObjectStoragePath] = (),
) -> PlanTotals:
    """The plan job in a session this process holds (a Spark Connect client's), failing as spark-submit's would."""
    import traceback

    from mqjournal.sparkplan.job import SESSION_CONF, failure_text, is_connect, plan

    for key, value in SESSION_CONF.items():
        spark.conf.set(key, value)
    if is_connect(spark):
        ship_package(spark)
    inputs = [*([] if snapshots is None else [_location(snapshots)]), *_locations(history)]
    linux_inputs, linux_earlier = _locations(linux_snapshots), _locations(linux_history)
    try:
        return plan(
            spark,
            inputs=inputs,
            out=_location(out),
            policy=policy,
            as_of=_as_of(as_of),
            linux_inputs=linux_inputs,
            linux_history=linux_earlier,
        )
    except Exception as exc:
        failure, of_input = failure_text(exc, [*inputs, *linux_inputs, *linux_earlier])
        trace = "" if of_input else output_tail(traceback.format_exc()) + "\n"
        raise PlanJobFailed(2 if of_input else 1, f"{trace}mqjournal plan failed: {failure}", job=job) from exc


def run_plan_connect(
    remote: str,
    snapshots: Path | None,
    out: Path,
    *,
    history: Path | None,
    policy_file: Path | None,
    as_of: datetime | None,
    linux_snapshots: Path | None = None,
    linux_history: Sequence[Path] = (),
) -> PlanTotals:
    """The plan job on a standing Spark Connect server (`remote`, sc://HOST:PORT): no JVM started here, none
    warmed up again. The server must see the snapshots and the output folder at the same paths as this process."""
    from pyspark.sql import SparkSession

    before = {k: os.environ.get(k) for k in CONNECT_MODE_ENV}
    spark = SparkSession.builder.remote(remote).getOrCreate()
    try:
        return plan_in_session(
            spark,
            snapshots,
            out,
            history=[history] if history else [],
            policy=load_policy(policy_file),
            as_of=as_of,
            job=f"the plan job on Spark Connect {connect_address(remote)}",
            linux_snapshots=[linux_snapshots] if linux_snapshots else [],
            linux_history=linux_history,
        )
    finally:
        spark.stop()
        for key, value in before.items():  # this process's later sessions and spark-submits are as before
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


__all__ = [
    "PlanJobFailed",
    "application_args",
    "application_path",
    "build_py_files",
    "plan_in_session",
    "run_plan",
    "run_plan_connect",
    "spark_submit_args",
    "spark_submit_executable",
    "submit_environment",
]
