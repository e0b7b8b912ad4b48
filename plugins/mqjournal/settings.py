"""mqjournal's settings in one place: where the fleet, data, catalog, backup store and Spark job are, how SSH
behaves (timeouts, retries, sessions per host), how long a session lease and an approval gate last.

Every field has its default here, in its Field, and is read from the environment by `Settings.from_env`
(pydantic-settings: `SshSettings.from_env` for the command line, which has no fleet-wide settings): `MQJOURNAL_<FIELD>`
at the top level (a few have names of their own: MQJOURNAL_FLEET, MQJOURNAL_BACKUP_STORE), `MQJOURNAL_SSH_<FIELD>`,
`MQJOURNAL_LEASE_<FIELD>`, `MQJOURNAL_APPROVAL_<FIELD>`, `MQJOURNAL_TASK_<FIELD>`, `MQJOURNAL_SCRUB_<FIELD>` and
`MQJOURNAL_DRILL_<FIELD>` in the sections, e.g. MQJOURNAL_SSH_COMMAND_TIMEOUT=120. A constructor call reads no
environment, and the modules that use a setting take it as an argument whose default is the one written here, so a
test or a library caller needs no environment at all.

This module imports nothing of mqjournal: the SSH transport, the Airflow hook and the DAG files all read it. (A data
folder URL is opened by mqjournal.datafolder, imported then.)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Self, TypedDict
from urllib.parse import urlsplit

from pydantic import BeforeValidator, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

if TYPE_CHECKING:
    from mqjournal.datafolder import DataPath

REPO = Path(__file__).resolve().parents[2]

CATALOG_URL_ENV = "MQJOURNAL_CATALOG_URL"
"""The catalog database's URL: the Airflow steps and `mqjournal recover` read the same variable."""

BACKUP_STORE_ENV = "MQJOURNAL_BACKUP_STORE"
"""The backup store's URL: the Airflow steps and `mqjournal catalog rebuild` read the same variable."""

DEFAULT_EXPIRY_SCHEDULE = "0 5 * * 0"
"""Sunday 05:00: after the maintenance window (Sunday 02:00), so the week's saves and library saves are catalogued."""


class _Section(BaseSettings):
    """Settings read from an environment by `from_env` only: a constructor call takes its arguments and the defaults
    written here, so a test or a library caller needs no environment at all."""

    model_config = SettingsConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The defaults, overridden by each variable of `environ` (the process's by default) that names a setting."""
        return cls(**_Environment(cls, os.environ if environ is None else environ)())


class _Environment(EnvSettingsSource):
    """pydantic-settings' environment source on a given mapping, of which it reads only the variables the settings
    name (as they are written: MQJOURNAL_SSH_COMMAND_TIMEOUT, not its lower case), so what it reads can be listed.

    An empty variable of a setting without a fixed default (none, or made from other settings) is as if it were not
    set; a schedule's empty variable means no schedule (its own validator)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(settings_cls)

    def _extract_field_info(
        self, field: FieldInfo, field_name: str, model_config: Mapping[str, Any] | None = None
    ) -> list[tuple[str, str, bool]]:
        # A setting's variable is its alias where it has one (MQJOURNAL_FLEET); its name is for Python callers.
        config = {**(model_config or self.config), "validate_by_name": False, "populate_by_name": False}
        return super()._extract_field_info(field, field_name, config)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        names = (
            variable
            for name, field in self.settings_cls.model_fields.items()
            if not _is_section(field)
            for _, variable, _ in self._extract_field_info(field, name)
        )
        return {name: self._environ[name.upper()] for name in names if name.upper() in self._environ}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        value, key, is_complex = super().get_field_value(field, field_name)
        if value == "" and (field.default is None or field.default_factory is not None):
            value = None
        return value, key, is_complex

    def __call__(self) -> dict[str, Any]:
        values = super().__call__()
        for name, field in self.settings_cls.model_fields.items():
            if _is_section(field):  # a section reads its own variables, with its own prefix
                assert isinstance(field.annotation, type)
                values[name] = _Environment(field.annotation, self._environ)()
        return values


def _is_section(field: FieldInfo) -> bool:
    return isinstance(field.annotation, type) and issubclass(field.annotation, _Section)


def _empty_is_none(value: object) -> object:
    return None if value == "" else value


def _comma_separated(value: object) -> object:
    return tuple(item.strip() for item in value.split(",") if item.strip()) if isinstance(value, str) else value


Schedule = Annotated[str | None, BeforeValidator(_empty_is_none)]
"""A cron schedule; empty: none (the DAG is triggered by hand only)."""


class SshSettings(_Section):
    """How mqjournal talks to a partition over SSH."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_SSH_")

    connect_timeout: float = Field(
        10.0,
        gt=0,
        description="seconds to open the TCP connection, read the banner and log in; an Airflow connection's "
        "conn_timeout extra takes precedence for that connection",
    )
    command_timeout: float = Field(
        60.0, gt=0, description="seconds one command may run before it is given up on (it may still be running)"
    )
    retry_attempts: int = Field(
        3, ge=1, description="attempts to bring a command to the host when the connection fails (one: no retry)"
    )
    retry_first_delay: float = Field(0.5, ge=0, description="seconds to wait after the first failed attempt")
    retry_factor: float = Field(2.0, ge=1, description="each further wait is this many times the one before")
    retry_max_delay: float = Field(8.0, ge=0, description="the longest wait between two attempts, in seconds")
    sessions_per_host: int = Field(
        2, ge=1, description="SSH sessions open at once on one partition, across every Airflow worker"
    )


class LeaseSettings(_Section):
    """The per-host session leases in the catalog database (mqjournal.airflow.leases)."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_LEASE_")

    ttl_seconds: float = Field(
        120.0,
        gt=0,
        description="how long a lease lasts unless renewed; its holder renews it every quarter of it, so a killed "
        "worker's slot is free again within this time",
    )
    wait_seconds: float = Field(
        600.0, ge=0, description="how long a task waits for a free session slot before it fails (HostBusy)"
    )
    poll_seconds: float = Field(1.0, gt=0, description="how often a waiting task looks for a free slot")

    @property
    def ttl(self) -> timedelta:
        return timedelta(seconds=self.ttl_seconds)


class ApprovalSettings(_Section):
    """How long the DAGs' approval gates wait for an answer (with none, nothing is deleted or run), who is told that
    one waits, and who may answer."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_APPROVAL_")

    maintenance_hours: float = Field(12.0, gt=0, description="the maintenance DAG's gate before its deletes")
    recovery_hours: float = Field(4.0, gt=0, description="the recovery DAG's gate before its steps run")
    expiry_hours: float = Field(
        24.0, gt=0, description="the backup expiry DAG's gate before it deletes save files and their copies"
    )
    email: str | None = Field(
        None,
        description="who is told by e-mail that a gate waits (comma-separated addresses), through the SMTP provider's "
        "connection smtp_default; none: no e-mail",
    )
    webhook_conn_id: str = Field(
        "mqjournal_approval_webhook",
        min_length=1,
        description="the Airflow connection of a webhook told that a gate waits (its URL in the connection's host, "
        "or extra {'url': ...}, so a token in it stays a secret); no such connection: no webhook",
    )
    approvers: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_comma_separated)] = Field(
        (),
        description="who may answer the gates: Airflow user ids, comma-separated (MQJOURNAL_APPROVAL_APPROVERS="
        "alice,bob; the id is the one the auth manager gives a user: the user name in the simple auth manager); "
        "empty: anyone who may use the UI. Airflow's gates take users only, not a role: list the role's users",
    )

    @property
    def recovery_timeout(self) -> timedelta:
        return timedelta(hours=self.recovery_hours)

    @property
    def expiry_timeout(self) -> timedelta:
        return timedelta(hours=self.expiry_hours)


class ScrubSettings(_Section):
    """The backup store's scrub (mqjournal.scrub, docs/backup-store.md): every copy read again in full within a set
    number of days, a bounded number of bytes per run."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_SCRUB_")

    every_days: float = Field(
        30.0,
        ge=0,
        description="every stored copy is read again and compared with its recorded digest within this many days (0: "
        "every copy at every run, up to max_gib_per_run)",
    )
    max_gib_per_run: float = Field(
        4096.0, gt=0, description="GiB one scrub reads at most; what is left is read first by the next run"
    )

    @property
    def every(self) -> timedelta:
        return timedelta(days=self.every_days)

    @property
    def max_bytes(self) -> int:
        return int(self.max_gib_per_run * 1024**3)


DEFAULT_DRILL_SCHEDULE = "0 6 * * 0"
"""Sunday 06:00: after the backup expiry (05:00), so no copy about to expire is drilled."""


class DrillSettings(_Section):
    """The restore drill (mqjournal.drill, docs/backup-store.md): a sample of stored copies uploaded into scratch save
    files on their partitions and their object lists read back, behind an approval, a bounded amount per run."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_DRILL_")

    schedule: Schedule = Field(
        DEFAULT_DRILL_SCHEDULE,
        description="the restore drill DAG's cron schedule (MQJOURNAL_DRILL_SCHEDULE; empty: triggered by hand only)",
    )
    copies_per_run: int = Field(2, ge=1, le=1000, description="stored copies one drill run uploads at most")
    max_gib_per_run: float = Field(
        8.0, gt=0, description="GiB one drill run uploads at most (the first copy is drilled whatever its size)"
    )
    every_days: float = Field(
        90.0, gt=0, description="every stored copy is drilled again within this many days (if the runs keep up)"
    )
    library: str = Field(
        "QGPL",
        min_length=1,
        max_length=10,
        description="the library the scratch save files (DRLnnnnnnn) are created in and deleted from; not QTEMP or "
        "an IBM library",
    )

    @property
    def every(self) -> timedelta:
        return timedelta(days=self.every_days)

    @property
    def max_bytes(self) -> int:
        return int(self.max_gib_per_run * 1024**3)


class SshTaskOptions(TypedDict):
    """The keyword arguments of `@task(...)` for a maintenance task that opens an SSH session."""

    pool: str
    pool_slots: int
    retries: int
    retry_delay: float
    max_active_tis_per_dagrun: int


class TaskSettings(_Section):
    """How the DAGs run the tasks that open SSH sessions."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_TASK_")

    ssh_pool: str = Field("mqjournal_ssh", min_length=1, description="the Airflow pool every SSH task takes a slot of")
    ssh_retries: int = Field(
        2, ge=0, description="retries of a maintenance SSH task (each step is idempotent; recovery steps never retry)"
    )
    ssh_retry_delay_seconds: float = Field(30.0, ge=0, description="seconds before such a retry")
    ssh_tasks_per_run: int = Field(4, ge=1, description="instances of one mapped SSH task running at once in a run")
    max_mapped_tasks: int = Field(
        256,
        ge=1,
        le=1024,
        description="instances of one maintenance SSH step in a run at most: beyond this many hosts, each instance "
        "works on a batch of hosts (Airflow refuses to map more than [core] max_map_length, 1024 by default)",
    )
    hosts_in_parallel: int = Field(
        4, ge=1, description="hosts one instance of a maintenance SSH step works on at once (discovery too)"
    )

    def ssh_task(self, sessions: int = 1, retries: int | None = None) -> SshTaskOptions:
        """`@task(**options)` of an SSH task that opens up to `sessions` sessions at once, each a slot of the pool, so
        the pool caps sessions fleet-wide (a new dict each time: the decorator fills in its task_id); `retries`
        overrides ssh_retries (0 for a step an admin must look at before it runs again)."""
        return SshTaskOptions(
            pool=self.ssh_pool,
            pool_slots=sessions,
            retries=self.ssh_retries if retries is None else retries,
            retry_delay=self.ssh_retry_delay_seconds,
            max_active_tis_per_dagrun=self.ssh_tasks_per_run,
        )


class Settings(_Section):
    """Where the DAGs find their fleet, data, catalog and Spark job, and the sections above."""

    model_config = SettingsConfigDict(env_prefix="MQJOURNAL_")

    airflow_home: Path | None = Field(
        None,
        validation_alias="AIRFLOW_HOME",
        description="Airflow's home (AIRFLOW_HOME; from_env: ~/airflow when unset, as Airflow takes it): the default "
        "data folder, and the local folder of a data folder URL, is its mqjournal/",
    )
    fleet_file: Path = Field(
        REPO / "docker" / "fleet.example.yaml",
        validation_alias="MQJOURNAL_FLEET",
        description="the fleet file (MQJOURNAL_FLEET; default: docker/fleet.example.yaml of this repository)",
    )
    data_dir: Path | str = Field(
        default_factory=lambda data: _in_airflow_home(data["airflow_home"]),
        description="snapshots, plans, reports, recovery and expiry plans: a folder (local, or a shared mount every "
        "worker and Spark sees) or an object store URL such as s3://bucket/mqjournal, opened as Airflow's "
        "ObjectStoragePath (MQJOURNAL_DATA_DIR; default: $AIRFLOW_HOME/mqjournal)",
    )
    data_conn_id: str | None = Field(
        None,
        description="the Airflow connection that holds the credentials of a data folder URL (MQJOURNAL_DATA_CONN_ID; "
        "default: none, the filesystem's own configuration, e.g. AWS_* variables)",
    )
    local_dir: Path | None = Field(
        None,
        description="what must stay on a filesystem: the audit logs, the plan job's package for spark-submit, the "
        "default SQLite catalog (MQJOURNAL_LOCAL_DIR; default: the data folder when it is a folder, else "
        "$AIRFLOW_HOME/mqjournal)",
    )
    catalog_url: str = Field(
        default_factory=lambda data: (
            f"sqlite:///{_local_folder(data['local_dir'], data['data_dir'], data['airflow_home']) / 'catalog.db'}"
        ),
        description="the backup catalog's database (MQJOURNAL_CATALOG_URL; default: sqlite:///<local_dir>/catalog.db)",
    )
    backup_store_url: str | None = Field(
        None,
        validation_alias="MQJOURNAL_BACKUP_STORE",
        repr=False,  # it may hold a password (user:password@host): shown by BackupStore.url, masked
        description="the backup store save files are copied into off the partition: a folder, a file:// URL or any "
        "fsspec URL such as s3://bucket/mqjournal (MQJOURNAL_BACKUP_STORE; default: <data_dir>/backups)",
    )
    backup_store_conn_id: str | None = Field(
        # The default store is in the data folder, so it is reached with the data folder's connection.
        default_factory=lambda data: None if data["backup_store_url"] else data["data_conn_id"],
        description="the Airflow connection that holds the backup store's credentials, for s3:// or gs:// URLs "
        "(MQJOURNAL_BACKUP_STORE_CONN_ID; default: the data folder's connection for the default store, else none: "
        "the filesystem's own configuration, e.g. AWS_* variables)",
    )
    spark_app: Path = Field(
        REPO / "spark_apps" / "plan_receivers.py",
        description="the plan job (MQJOURNAL_SPARK_APP; default: spark_apps/plan_receivers.py of this repository)",
    )
    spark_conn_id: str = Field(
        "spark_default", description="the Spark connection (MQJOURNAL_SPARK_CONN_ID; default: spark_default)"
    )
    spark_connect_conn_id: str | None = Field(
        None,
        description="a Spark Connect connection (type spark_connect): the plan runs as a session on that standing "
        "server instead of a spark-submit per run, which must then see the data folder at the same path "
        "(MQJOURNAL_SPARK_CONNECT_CONN_ID; default: none, spark-submit through spark_conn_id)",
    )
    schedule: Schedule = Field(
        "0 2 * * 0",
        description="the maintenance DAG's cron schedule (MQJOURNAL_SCHEDULE; default: Sunday 02:00, the weekly "
        "maintenance window, in the scheduler's time zone; empty: triggered by hand only)",
    )
    expiry_schedule: Schedule = Field(
        DEFAULT_EXPIRY_SCHEDULE,
        description="the backup expiry DAG's cron schedule (MQJOURNAL_EXPIRY_SCHEDULE; default: Sunday 05:00, after "
        "the maintenance window, so the week's saves are in the catalog; empty: triggered by hand only)",
    )
    metrics_token: SecretStr | None = Field(
        None,
        description="the bearer token Prometheus presents to scrape the metrics, /mqjournal/metrics on the API "
        "server (MQJOURNAL_METRICS_TOKEN; default: none, only an Airflow login that may read the maintenance DAG "
        "reads them; docs/monitoring.md)",
    )
    ssh: SshSettings = Field(default_factory=SshSettings)
    lease: LeaseSettings = Field(default_factory=LeaseSettings)
    approval: ApprovalSettings = Field(default_factory=ApprovalSettings)
    tasks: TaskSettings = Field(default_factory=TaskSettings)
    scrub: ScrubSettings = Field(default_factory=ScrubSettings)
    drill: DrillSettings = Field(default_factory=DrillSettings)

    @field_validator("data_dir", mode="before")
    @classmethod
    def _path_unless_url(cls, value: object) -> object:
        """A URL stays text (it is opened as an ObjectStoragePath); anything else is a path, as it always was."""
        return value.rstrip("/") if isinstance(value, str) and is_url(value) else Path(str(value))

    @model_validator(mode="after")
    def _local_dir_for_a_url(self) -> Self:
        _local_folder(self.local_dir, self.data_dir, self.airflow_home)  # refuses a URL with nowhere local
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        values = _Environment(cls, os.environ if environ is None else environ)()
        values.setdefault("AIRFLOW_HOME", str(Path.home() / "airflow"))  # Airflow's own default
        return cls(**values)

    @property
    def sessions_per_task(self) -> int:
        """The SSH sessions one instance of a maintenance SSH step may hold at once: the pool slots it takes."""
        return self.tasks.hosts_in_parallel * self.ssh.sessions_per_host

    @cached_property
    def data_folder(self) -> DataPath:
        """The data folder as a path: the folder's `Path`, or the URL opened as an ObjectStoragePath."""
        if isinstance(self.data_dir, Path):
            return self.data_dir
        from mqjournal.datafolder import open_url  # Airflow is imported only for a URL

        return open_url(self.data_dir, self.data_conn_id)

    @property
    def local_folder(self) -> Path:
        """The folder for what an object store cannot hold: a log appended to and fsync'd record by record, read on
        from where its side file says (objects are written whole, never appended to); the zip spark-submit ships
        (--py-files names a local file); a SQLite file (it locks and writes in place)."""
        return _local_folder(self.local_dir, self.data_dir, self.airflow_home)

    @property
    def snapshots(self) -> DataPath:
        return self.data_folder / "snapshots"

    def snapshot_dir(self, run_id: str) -> DataPath:
        return self.snapshots / f"run_id={safe(run_id)}"

    @property
    def linux_snapshots(self) -> DataPath:
        """Linux queue managers' snapshots (mqjournal.linux-snapshot/v1), apart from IBM i's: the IBM i plan reads
        every `*.jsonl` under `snapshots`, and a record of the other contract there would stop it."""
        return self.data_folder / "linux-snapshots"

    def linux_snapshot_dir(self, run_id: str) -> DataPath:
        return self.linux_snapshots / f"run_id={safe(run_id)}"

    def plan_dir(self, run_id: str) -> DataPath:
        return self.data_folder / "plans" / f"run_id={safe(run_id)}"

    def report_file(self, run_id: str) -> DataPath:
        return self.data_folder / "reports" / f"{safe(run_id)}.md"

    def note_file(self, run_id: str) -> DataPath:
        """The run's one-line outcome, which the listener (mqjournal_listener_plugin) puts in its note in the grid."""
        return self.data_folder / "reports" / f"{safe(run_id)}.note"

    def recovery_report_file(self, run_id: str) -> DataPath:
        return self.data_folder / "reports" / f"recovery_{safe(run_id)}.md"

    def recovery_plan_file(self, run_id: str) -> DataPath:
        return self.data_folder / "recovery" / safe(run_id) / "plan.json"

    def recovery_note_file(self, run_id: str) -> DataPath:
        """The recovery run's one-line outcome, naming its approver, for its note in the grid."""
        return self.data_folder / "reports" / f"recovery_{safe(run_id)}.note"

    def expiry_report_file(self, run_id: str) -> DataPath:
        return self.data_folder / "reports" / f"expiry_{safe(run_id)}.md"

    def expiry_note_file(self, run_id: str) -> DataPath:
        """The backup expiry run's one-line outcome, naming its approver, for its note in the grid."""
        return self.data_folder / "reports" / f"expiry_{safe(run_id)}.note"

    def report_page_file(self, dag_id: str, run_id: str) -> DataPath | None:
        """The file the plugin serves as the run's report page (mqjournal.reportlinks): the maintenance run's HTML
        page, the other DAGs' Markdown; None for a DAG that writes no report."""
        files = {
            "mq_journal_maintenance": lambda r: self.report_file(r).with_suffix(".html"),
            "mq_journal_recovery": self.recovery_report_file,
            "mq_journal_backup_expiry": self.expiry_report_file,
            "mq_journal_restore_drill": self.drill_report_file,
        }
        return files[dag_id](run_id) if dag_id in files else None

    def drill_report_file(self, run_id: str) -> DataPath:
        return self.data_folder / "reports" / f"drill_{safe(run_id)}.md"

    def drill_note_file(self, run_id: str) -> DataPath:
        """The restore drill run's one-line outcome, for its note in the grid (as `note_file` for maintenance)."""
        return self.data_folder / "reports" / f"drill_{safe(run_id)}.note"

    def expiry_plan_file(self, run_id: str, host: str, qmgr: str) -> DataPath:
        return self.data_folder / "expiry" / safe(run_id) / f"{safe(host)}__{safe(qmgr)}.json"

    @property
    def dist_dir(self) -> Path:
        """Where the plan job's package (mqjournal.zip) is built for spark-submit's --py-files."""
        return self.local_folder / "dist"

    @property
    def audit_log(self) -> Path:
        return self.local_folder / "audit.jsonl"

    @property
    def store_audit_log(self) -> Path:
        """Deletions from the backup store (backup expiry), as intent and outcome records like the audit log's; kept
        apart from it because that log is of commands sent to hosts, and its readers match it with what hosts ran."""
        return self.local_folder / "store-audit.jsonl"

    @property
    def backup_store(self) -> str:
        """The backup store's URL: the one set, or the data folder's backups/."""
        return self.backup_store_url or _backups_in(self.data_dir)


def is_url(location: str) -> bool:
    """Whether a folder setting names an object store URL (`s3://bucket/prefix`, `file:///srv/x`), not a path."""
    return "://" in location and bool(urlsplit(location).scheme)


def _in_airflow_home(home: Path | None) -> Path:
    if home is None:
        raise ValueError("name the data folder (data_dir), or Airflow's home (AIRFLOW_HOME) that holds it")
    return home / "mqjournal"


def _local_folder(local_dir: Path | None, data_dir: Path | str, airflow_home: Path | None) -> Path:
    if local_dir is not None:
        return local_dir
    if isinstance(data_dir, Path):
        return data_dir
    if airflow_home is None:
        raise ValueError(
            f"the data folder {data_dir} is a URL: local_dir must name a folder for the audit logs, the plan job's "
            "package and the default catalog (MQJOURNAL_LOCAL_DIR)"
        )
    return _in_airflow_home(airflow_home)


def _backups_in(data: Path | str) -> str:
    return f"{data}/backups" if isinstance(data, str) else str(data / "backups")


def safe(run_id: str) -> str:
    """Run ids carry ':' and '+' (manual__2026-11-22T05:00:00+00:00): keep paths portable."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in run_id)


def settings() -> Settings:
    """The settings of this process, from its environment."""
    return Settings.from_env()
