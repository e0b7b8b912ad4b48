"""The queue manager hosts of a fleet file that are not IBM i (Linux, AIX, Windows): queue managers with linear logs,
reached over the same SSH transport (#32).

A host of this kind is written among the fleet file's `hosts` with `platform: linux`, `aix` or `windows`; FleetConfig
keeps them apart (`linux_hosts`, all three kinds), so that no IBM i step ever meets one. Its platform decides the forms
of every command sent to it (linuxmq/platforms.py) and the defaults of `mq_bin` and `data_root` (/opt/mqm/bin on
Linux, /usr/mqm/bin on AIX, `C:\\Program Files\\IBM\\MQ\\bin` on Windows: IBM MQ's default installation paths,
docs/linux-interfaces.md section 12, docs/windows-interfaces.md section 2). Every name here is validated before any
command is built, by the platform's own rules (section 9; on Windows, windowsforms: directories of plain characters
only, and no queue manager whose name cmd.exe could misread or whose directory MQ writes with `!` or `&`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.platforms import PLATFORMS, HostPlatform
from mqjournal.linuxmq.snapshot import PlatformName
from mqjournal.names import HostName, MqObjectName, QueueManagerName

UNIX_PLATFORMS = frozenset(PLATFORMS)
"""The `platform` values of the hosts kept here (linuxmq/platforms.PLATFORMS: linux, aix, windows). The name is older
than Windows hosts: it means "the hosts that are not IBM i partitions"."""

_LINUX_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")


def _matching(pattern: re.Pattern[str], what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not pattern.fullmatch(value) or ".." in value.split("/"):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return check


LinuxUser = Annotated[str, AfterValidator(_matching(_LINUX_USER, "a Linux user name (a-z 0-9 _ -, 32 at most)"))]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinuxQueueManagerConfig(_Config):
    """A queue manager on a Linux host. Only `name` is real configuration; the rest describes the simulated one
    (its qm.ini Log stanza and workload): on a real host mqjournal reads qm.ini and DISPLAY QMSTATUS instead."""

    name: QueueManagerName
    log_management: LogManagement = Field(
        LogManagement.ARCHIVE, description="simulator: qm.ini LogManagement (Manual, Automatic or Archive)"
    )
    log_file_pages: int = Field(
        4096, ge=64, le=65535, description="simulator: qm.ini LogFilePages, 4 KiB pages per extent"
    )
    log_primary_files: int = Field(3, ge=2, le=510, description="simulator: qm.ini LogPrimaryFiles")
    log_secondary_files: int = Field(2, ge=0, le=509, description="simulator: qm.ini LogSecondaryFiles")
    log_bytes_per_minute: int = Field(200_000, ge=0, description="simulator: log records written per minute")
    long_running_unit_of_work_at_hour: float | None = Field(
        None, ge=0, description="simulator: a unit of work that begins then and never ends (holds RECLOG back)"
    )
    damaged_object: MqObjectName | None = Field(
        None, description="simulator: an object that gets damaged (holds MEDIALOG)"
    )
    damaged_at_hour: float = Field(0, ge=0)


class LinuxFaultsConfig(_Config):
    """Simulator only: trouble injected on a Linux host."""

    delay_seconds: float = Field(0, ge=0, description="every command answers this much later")


class LinuxHostConfig(_Config):
    platform: PlatformName = "linux"
    name: HostName
    address: str = "127.0.0.1"
    port: int = Field(22, ge=0, le=65535)
    user: LinuxUser = Field("mqjournal", description="the user mqjournal signs on as (a member of group mqm)")
    mq_bin: str = Field(
        "/opt/mqm/bin",
        description="where IBM MQ's control commands are installed; default the platform's: /opt/mqm/bin (Linux), "
        "/usr/mqm/bin (AIX), C:\\Program Files\\IBM\\MQ\\bin (Windows); checked by the platform's rules",
    )
    data_root: str = Field(
        "/var/mqm",
        description="IBM MQ's data root (qmgrs, log, mqs.ini); default the platform's: /var/mqm, or "
        "C:\\ProgramData\\IBM\\MQ on Windows",
    )
    media_images: Literal["rcdmqimg", "imgsched"] = Field(
        "rcdmqimg",
        description="how MEDIALOG moves: rcdmqimg (each collection records media images of every object) or "
        "imgsched (the queue managers image themselves, IMGSCHED(AUTO); nothing is forced)",
    )
    queue_managers: list[LinuxQueueManagerConfig] = Field(default_factory=list)
    faults: LinuxFaultsConfig = Field(default_factory=LinuxFaultsConfig)

    @model_validator(mode="before")
    @classmethod
    def _platform_defaults(cls, data: object) -> object:
        """mq_bin and data_root left out are the platform's default installation's."""
        if isinstance(data, dict) and data.get("platform") in PLATFORMS:
            platform = PLATFORMS[data["platform"]]
            return {"mq_bin": platform.mq_bin, "data_root": platform.data_root} | data
        return data

    @model_validator(mode="after")
    def _names_the_platform_takes(self) -> LinuxHostConfig:
        """Directories and queue manager names as the host's platform may send them: a POSIX path is no Windows one,
        and a name cmd.exe could misread is refused here, before any command, with what to do."""
        platform = self.host_platform
        for what, value in (("mq_bin", self.mq_bin), ("data_root", self.data_root)):
            try:
                platform.directory(value)
            except InvalidName as exc:
                raise ValueError(f"host {self.name}: {what} {exc.obj} is {exc.problem}: {exc.action}") from None
        for qm in self.queue_managers:
            try:
                platform.queue_manager_name(qm.name)
            except InvalidName as exc:
                raise ValueError(
                    f"host {self.name} ({platform.label}): queue manager {qm.name}: {exc.problem}; {exc.action}"
                ) from None
        return self

    @property
    def host_platform(self) -> HostPlatform:
        """Every command sent to this host and the readers of its answers, in its platform's forms."""
        return PLATFORMS[self.platform]

    @property
    def unix_platform(self) -> HostPlatform:
        """The older name of `host_platform`, from before Windows hosts."""
        return self.host_platform

    @model_validator(mode="after")
    def _unique_queue_managers(self) -> LinuxHostConfig:
        names = [q.name for q in self.queue_managers]
        if len(set(names)) != len(names):
            raise ValueError(f"host {self.name}: queue manager names must be unique")
        return self
