"""The fleet file: which IBM i partitions there are, how to reach them, and (for the simulator) what runs on them.

One file serves both sides: the collector reads the connection settings, the simulator also reads the queue
managers and their workload. Every name in it is validated before anything is sent to a host.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from mqjournal.linuxfleet import UNIX_PLATFORMS, LinuxHostConfig
from mqjournal.names import (
    OBJECT_NAME_PATTERN,
    SCRATCH_DIRECTORY,
    HostName,
    MqObjectName,
    ObjectName,
    QueueManagerName,
    qmgr_library_for,
    scratch_directory,
)
from mqjournal.space import DataCompression
from mqjournal.yamlfile import read_yaml

_OFFSET = re.compile(r"([+-])([01][0-9]|2[0-3]):([0-5][0-9])")


def _offset(value: str) -> str:
    if not _OFFSET.fullmatch(value):
        raise ValueError(f"{value!r} is not a UTC offset like +01:00")
    return value


def conn_id_for(host: str) -> str:
    """The Airflow connection that holds a host's SSH credentials and pinned key: the host name with '-' and '.' as
    '_', after `ibmi_` unless the name already starts with it: `prod1` -> `ibmi_prod1`, `ibmi-prod1` -> `ibmi_prod1`
    (not `ibmi_ibmi_prod1`), `prod-1.example.com` -> `ibmi_prod_1_example_com`, `ibmi1` -> `ibmi_ibmi1` (`ibmi1` is
    one word, not the prefix).

    The one place this mapping lives. It is not one to one (prod-1 and prod.1 both give ibmi_prod_1, prod1 and
    ibmi-prod1 both ibmi_prod1, and Airflow's environment-variable backend upper-cases ids), so a fleet file whose
    hosts collide is refused on load. Connections named by the rule before it (`legacy_conn_id_for`) are still read.
    """
    name = host.replace("-", "_").replace(".", "_")
    return name if name.lower().startswith("ibmi_") else f"ibmi_{name}"


def legacy_conn_id_for(host: str) -> str:
    """The connection id the rule before `conn_id_for` gave: always ibmi_ + the name (`ibmi_ibmi_prod1`). A host
    whose connection has only this id is still reached through it (mqjournal.airflow.connections.resolve_conn_id)."""
    return f"ibmi_{host.replace('-', '_').replace('.', '_')}"


UtcOffset = Annotated[str, AfterValidator(_offset)]
ScratchDirectory = Annotated[str, AfterValidator(scratch_directory)]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterConfig(_Config):
    """An MQ cluster the queue manager belongs to; `full_repository` when it holds a full repository for it
    (its REPOS attribute, or REPOSNL). Real configuration: the planner reads it to plan REFRESH CLUSTER after a
    restore, and the simulator sets up the same memberships."""

    name: MqObjectName = Field(description="the MQ cluster name (1-48 of A-Z a-z 0-9 . / _ %)")
    full_repository: bool = False


class QueueManagerConfig(_Config):
    name: QueueManagerName
    library: ObjectName | None = Field(None, description="default: QM + the queue manager name (TEST -> QMTEST)")
    # The 26 letters spelled once; mypy wants a Literal's values written out, pydantic takes the tuple.
    instance: Literal[tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")] = "A"  # type: ignore[valid-type]
    clusters: list[ClusterConfig] = Field(default_factory=list, description="the MQ clusters it is a member of")
    # Simulator only: the receiver threshold and the persistent workload.
    threshold_kb: int = Field(2_000, ge=1, le=1_000_000_000)
    entries_per_minute: int = Field(40, ge=0)
    entry_bytes: int = Field(700, ge=1)
    objects: list[MqObjectName] = Field(
        default_factory=lambda: ["SYSTEM.DEFAULT.LOCAL.QUEUE", "SYSTEM.DEAD.LETTER.QUEUE", "APP.REQUEST.QUEUE"]
    )

    # Simulator only: trouble to stage during the warm-up, in hours after the simulated start.
    long_running_unit_of_work_at_hour: float | None = Field(
        None, ge=0, description="open a unit of work then and never end it (holds AMQ7460 back)"
    )
    damaged_object: MqObjectName | None = Field(None, description="an object that gets damaged (holds AMQ7462 back)")
    damaged_at_hour: float = Field(0, ge=0)

    @property
    def qmgr_library(self) -> str:
        return self.library or qmgr_library_for(self.name)

    @model_validator(mode="after")
    def _unique_clusters(self) -> QueueManagerConfig:
        names = [c.name for c in self.clusters]
        if len(set(names)) != len(names):
            raise ValueError(f"queue manager {self.name}: a cluster is listed twice")
        return self


class CommandFaultConfig(_Config):
    pattern: str = Field(description="regex searched in the CL command text")
    msg_id: str = Field(pattern=r"^[A-Z]{3}[0-9A-F]{4}$")
    tokens: list[str] = Field(default_factory=list)
    times: int = Field(1, ge=0, description="0: every time")


class FaultsConfig(_Config):
    """Simulator only: trouble injected on a host, for reliability work and demos."""

    delay_seconds: float = Field(0, ge=0, description="every command answers this much later")
    asp_full: bool = False
    ccsid_unconvertible: bool = Field(False, description="user space character data does not convert (read bytes)")
    qsys_sftp_read_refused: bool = Field(
        False, description="sftp-server may not read /QSYS.LIB save files (download via a stream file instead)"
    )
    qsys_pase_copy_refused: bool = Field(
        False, description="PASE cp may not read /QSYS.LIB save files either (CPYTOSTMF copies them instead)"
    )
    commands: list[CommandFaultConfig] = Field(default_factory=list)


class WithheldAuthorityConfig(_Config):
    """Simulator only: authorities the signed-on user profile lacks to some objects (CHKOBJ answers CPF9802)."""

    library: ObjectName
    name: str = Field("*ALL", pattern=rf"^(\*ALL|{OBJECT_NAME_PATTERN}\*?)$", description="name, PREFIX* or *ALL")
    objtype: Literal["*LIB", "*JRNRCV", "*JRN", "*FILE", "*USRSPC", "*MSGQ", "*CMD"]
    authorities: list[
        Literal[
            "*ALL",
            "*CHANGE",
            "*USE",
            "*OBJEXIST",
            "*OBJMGT",
            "*OBJOPR",
            "*OBJALTER",
            "*OBJREF",
            "*READ",
            "*ADD",
            "*UPD",
            "*DLT",
            "*EXECUTE",
        ]
    ] = Field(min_length=1)


SpecialAuthority = Literal["*ALLOBJ", "*AUDIT", "*IOSYSCFG", "*JOBCTL", "*SAVSYS", "*SECADM", "*SERVICE", "*SPLCTL"]


def _default_special_authorities() -> list[SpecialAuthority]:
    return ["*JOBCTL", "*SAVSYS", "*IOSYSCFG"]


DigestProgram = Literal["/QOpenSys/usr/bin/openssl", "/QOpenSys/pkgs/bin/openssl", "/QOpenSys/pkgs/bin/sha256sum"]


def _default_digest_programs() -> list[DigestProgram]:
    return ["/QOpenSys/usr/bin/openssl"]


class PartitionSystemConfig(_Config):
    """Simulator only: how a simulated partition is set up. A real partition answers these itself (the collector and
    `mqjournal doctor` read the release, the services and the job's formats from it), so the client never reads them."""

    release: Literal["7.3", "7.4", "7.5", "7.6"] = Field(
        "7.5", description="the IBM i release (with its latest Db2 PTF group): which QSYS2 services and columns exist"
    )
    db2_group_level: int | None = Field(
        None, ge=0, description="the release's Db2 PTF group level installed (SF99704 on 7.4 ...); default: the latest"
    )
    language: Literal["ENU", "DEU"] = Field(
        "ENU", description="the job's language (LANGID): the language of CPF and AMQ message texts"
    )
    date_format: Literal["*YMD", "*MDY", "*DMY", "*JUL"] = Field(
        "*YMD", description="the job's date format (QDATFMT), used in message texts"
    )
    date_separator: Literal["/", "-", ".", ",", " "] = Field("/", description="the job's date separator (QDATSEP)")
    time_separator: Literal[":", ".", ",", " "] = Field(":", description="the job's time separator (QTIMSEP)")
    db2_link: bool = Field(
        False,
        description="an admin made /QOpenSys/usr/bin/db2 (a link to qsh) so a bare `db2` runs in PASE; "
        "a stock partition has none",
    )
    digest_programs: list[DigestProgram] = Field(
        default_factory=_default_digest_programs,
        description="the PASE programs that can digest a file: 5733-SC1's openssl (with the sshd it brings), the "
        "open-source RPMs' openssl and sha256sum; [] for a partition that has none",
    )
    # The user profile SSH signs on with, and what else an admin set up (for `mqjournal doctor`'s tests).
    special_authorities: list[SpecialAuthority] = Field(
        default_factory=_default_special_authorities,
        description="the user profile's SPCAUT (*SAVSYS lets it save and restore any object)",
    )
    group_profile: ObjectName | None = Field("QMQMADM", description="its GRPPRF (QMQMADM: an MQ administrator)")
    supplemental_groups: list[ObjectName] = Field(default_factory=list, description="its SUPGRPPRF")
    withheld_authorities: list[WithheldAuthorityConfig] = Field(default_factory=list)
    libraries: list[ObjectName] = Field(default_factory=list, description="libraries an admin created (a save library)")
    clock_offset_seconds: float = Field(0, description="how far the partition's clock runs ahead of real time")
    message_formats: dict[Literal["AMQ7460", "AMQ7462", "AMQ7432", "AMQ7472", "CPI70E3"], str] = Field(
        default_factory=dict,
        description="the substitution variables the partition's message descriptions declare, as ADDMSGD FMT writes"
        " them (e.g. '(*BIN 4) (*BIN 4) (*DTS 8) (*CHAR 12) (*CHAR 10)'), where they differ from mqmessages.LAYOUTS;"
        " the simulator lays the messages' data out by them",
    )
    time_zone: ObjectName | None = Field(
        None,
        description="QTIMZON, the time zone description (sim/timezones.py: QN0500EST3, QP0100CET2, Q0000GMT2 have DST);"
        " None: the one without DST for utc_offset (QP0100UTCS)",
    )
    # How large the simulated save files are: what they save (the receivers' storage), less the save's data
    # compression, times this factor. 1.0 moves save files sized like their receivers (benches); a small factor
    # keeps tests and the demo fast with the same shape.
    save_file_size_factor: float = Field(
        1.0,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="save files are the saved storage, compressed, times this (above 0, at most 1; 1.0: real size)",
    )
    save_compression_ratios: dict[DataCompression, float] = Field(
        default_factory=dict,
        description="bytes of save file per byte saved, by DTACPR value, where they differ from "
        "mqjournal.space.EXPECTED_RATIO (each above 0, at most 2)",
    )

    @model_validator(mode="after")
    def _ratios_in_bounds(self) -> PartitionSystemConfig:
        for value, ratio in self.save_compression_ratios.items():
            if not 0 < ratio <= 2:
                raise ValueError(f"save_compression_ratios: {value} {ratio} is not above 0 and at most 2")
        from mqjournal.msgformats import parse_declared  # fleet.py is imported by msgformats' importers

        for msg_id, fmt in self.message_formats.items():
            if not parse_declared(fmt, None):
                raise ValueError(f"message_formats: {msg_id} {fmt!r} is not a list of ADDMSGD FMT fields")
        return self


class HostConfig(_Config):
    platform: Literal["ibmi"] = "ibmi"
    name: HostName
    address: str = "127.0.0.1"
    port: int = Field(22, ge=0, le=65535)
    user: ObjectName | None = None
    utc_offset: UtcOffset = "+00:00"
    time_zone_rules: str | None = Field(
        None,
        description="the Olson zone (e.g. America/New_York) whose daylight saving time rules the partition's time"
        " zone description (QTIMZON) follows, for a site's own description that mqjournal's table does not list:"
        " its times are then read with these rules instead of today's QUTCOFFSET. The simulator's partition follows"
        " them too. None: the table's rules, or today's QUTCOFFSET with a warning",
    )
    # *RQD: an inquiry (such as CPA7025) makes the job wait for an operator, as IBM i does by default.
    inquiry_reply: Literal["*RQD", "*DFT"] = "*RQD"
    # Real configuration: how SQL reaches the db2 utility. `qsh` (the default, what works on a stock partition):
    # /QOpenSys/usr/bin/qsh -c "db2 ...", since db2 is a QSH utility that PASE does not have on its PATH;
    # `db2`: a bare db2, for partitions where an admin linked /QOpenSys/usr/bin/db2 to qsh.
    sql_runner: Literal["qsh", "db2"] = "qsh"
    # Real configuration: where a save file is copied to a stream file for its download, on a host whose sftp-server
    # may not read QSYS.LIB itself (ibmi/streamcopy.py); the probe of `mqjournal doctor` uses it too. A plain absolute
    # IFS directory: the profile must be able to create it (mkdir -p) and hold a save file's size in it.
    scratch_directory: ScratchDirectory = Field(
        SCRATCH_DIRECTORY, description="the IFS directory for a save file's stream file copy (default /tmp/mqjournal)"
    )
    system: PartitionSystemConfig = Field(default_factory=PartitionSystemConfig)
    queue_managers: list[QueueManagerConfig] = Field(default_factory=list)
    faults: FaultsConfig = Field(default_factory=FaultsConfig)

    @property
    def tz(self) -> timezone:
        match = _OFFSET.fullmatch(self.utc_offset)
        # The field's own pattern admits only offsets this expression reads.
        assert match is not None, self.utc_offset
        sign, hours, minutes = match.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        return timezone(-delta if sign == "-" else delta)

    @model_validator(mode="after")
    def _known_time_zone_rules(self) -> HostConfig:
        if self.time_zone_rules is not None:
            try:
                ZoneInfo(self.time_zone_rules)
            except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder of zones, such as America
                raise ValueError(
                    f"host {self.name}: time_zone_rules {self.time_zone_rules!r} is not an Olson time zone name this "
                    "machine knows (tzdata); write the zone whose daylight saving time rules the partition's time "
                    "zone description follows, such as America/New_York, or leave it out"
                ) from None
        return self

    @model_validator(mode="after")
    def _unique_queue_managers(self) -> HostConfig:
        libraries = [q.qmgr_library for q in self.queue_managers]
        names = [q.name for q in self.queue_managers]
        if len(set(libraries)) != len(libraries) or len(set(names)) != len(names):
            raise ValueError(f"host {self.name}: queue manager names and libraries must be unique")
        return self


class FleetConfig(_Config):
    user: ObjectName = "MQADMIN"
    state_dir: Path = Path(".sim")
    client_key: Path | None = Field(None, description="private key for SSH; default: STATE_DIR/client_key")
    known_hosts: Path | None = Field(None, description="known_hosts; default: STATE_DIR/known_hosts")
    start: AwareDatetime | None = Field(None, description="simulator: the first simulated moment")
    warmup_hours: float = Field(0, ge=0, description="simulator: hours of workload to run before serving")
    hosts: list[HostConfig] = Field(description="the IBM i partitions")
    linux_hosts: list[LinuxHostConfig] = Field(
        default_factory=list,
        description="the queue manager hosts that are not IBM i: those written among `hosts` with `platform: linux`, "
        "`aix` or `windows` (#32)",
    )

    @model_validator(mode="before")
    @classmethod
    def _hosts_by_platform(cls, data: object) -> object:
        """One `hosts` list in the file, each host of its `platform` (ibmi unless written): the others (Linux,
        AIX, Windows) are kept apart, so that every IBM i step reads `hosts` as partitions only."""
        if not isinstance(data, dict) or not isinstance(data.get("hosts"), list):
            return data
        hosts = data["hosts"]

        def unix(h: object) -> bool:
            return isinstance(h, dict) and h.get("platform") in UNIX_PLATFORMS

        linux = [h for h in hosts if unix(h)]
        if not linux:
            return data
        return data | {
            "hosts": [h for h in hosts if not unix(h)],
            "linux_hosts": [*data.get("linux_hosts", []), *linux],
        }

    @model_validator(mode="after")
    def _unique_hosts(self) -> FleetConfig:
        names = [h.name for h in self.hosts] + [h.name for h in self.linux_hosts]
        if len(set(names)) != len(names):
            raise ValueError("host names must be unique")
        # Two hosts on one Airflow connection: one host's steps would run on the other, under the wrong name.
        seen: dict[str, str] = {}
        for name in names:
            conn_id = conn_id_for(name)
            other = seen.setdefault(conn_id.upper(), name)
            if other != name:
                raise ValueError(
                    f"hosts {other} and {name} would share the Airflow connection {conn_id_for(other)} "
                    "(the id replaces '-' and '.' by '_', starts with ibmi_ once, and is not case-sensitive "
                    "everywhere); rename one of them in the fleet file (the address says where it is)"
                )
        # A host still on its old connection id must not be read through another host's new one.
        for name in names:
            other = seen.get(legacy_conn_id_for(name).upper(), name)
            if other != name:
                raise ValueError(
                    f"host {name}'s former Airflow connection id {legacy_conn_id_for(name)} is host {other}'s "
                    "connection id; rename one of them in the fleet file (the address says where it is)"
                )
        return self

    def host(self, name: str) -> HostConfig:
        for host in self.hosts:
            if host.name == name:
                return host
        raise KeyError(name)

    def linux_host(self, name: str) -> LinuxHostConfig:
        for host in self.linux_hosts:
            if host.name == name:
                return host
        raise KeyError(name)

    def user_for(self, host: HostConfig | LinuxHostConfig) -> str:
        return host.user or self.user

    def resolved(self, base: Path) -> FleetConfig:
        """Paths relative to the fleet file's folder, defaults filled in."""
        state = self.state_dir if self.state_dir.is_absolute() else base / self.state_dir
        key = self.client_key or state / "client_key"
        known = self.known_hosts or state / "known_hosts"
        return self.model_copy(
            update={
                "state_dir": state,
                "client_key": key if key.is_absolute() else base / key,
                "known_hosts": known if known.is_absolute() else base / known,
            }
        )

    def first_moment(self, now: datetime | None = None) -> datetime:
        if self.start is not None:
            return self.start
        now = now or datetime.now(UTC)
        return now - timedelta(hours=self.warmup_hours)


def load_fleet(path: Path) -> FleetConfig:
    """Read and validate a fleet file (YAML or JSON); relative paths are taken from the file's folder."""
    data = read_yaml(path, "fleet file")
    return FleetConfig.model_validate(data).resolved(path.parent.resolve())
