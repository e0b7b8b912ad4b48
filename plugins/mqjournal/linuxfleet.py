"""The UNIX hosts of a fleet file (Linux, AIX): queue managers with linear logs, reached over the same SSH transport
(#32).

A host of this kind is written among the fleet file's `hosts` with `platform: linux` or `platform: aix`; FleetConfig
keeps them apart (`linux_hosts`, both kinds), so that no IBM i step ever meets one. Its platform decides the forms
of the few commands that differ (linuxmq/platforms.py) and the default of `mq_bin` (/opt/mqm/bin on Linux,
/usr/mqm/bin on AIX: IBM MQ's default installation paths, docs/linux-interfaces.md section 12). Every name here is
validated before any command is built (section 9: MQ names, extent names, paths are never quoted, only checked).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from mqjournal.linuxmq.extents import LogManagement
from mqjournal.linuxmq.platforms import PLATFORMS, UnixPlatform
from mqjournal.names import HostName, MqObjectName, QueueManagerName

UNIX_PLATFORMS = frozenset({"linux", "aix"})
"""The `platform` values of the hosts kept here (each one of linuxmq/platforms.PLATFORMS)."""

_LINUX_USER = re.compile(r"[a-z_][a-z0-9_-]{0,31}")
# A directory mqjournal names in a command: absolute, plain characters, no "..": nothing a shell would expand.
_PLAIN_DIRECTORY = re.compile(r"/(?:[A-Za-z0-9._-]+/)*[A-Za-z0-9._-]*")


def _matching(pattern: re.Pattern[str], what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not pattern.fullmatch(value) or ".." in value.split("/"):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return check


LinuxUser = Annotated[str, AfterValidator(_matching(_LINUX_USER, "a Linux user name (a-z 0-9 _ -, 32 at most)"))]
PlainDirectory = Annotated[
    str, AfterValidator(_matching(_PLAIN_DIRECTORY, "an absolute directory of letters, digits, '.', '_', '-'"))
]


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
    platform: Literal["linux", "aix"] = "linux"
    name: HostName
    address: str = "127.0.0.1"
    port: int = Field(22, ge=0, le=65535)
    user: LinuxUser = Field("mqjournal", description="the user mqjournal signs on as (a member of group mqm)")
    mq_bin: PlainDirectory = Field(
        "/opt/mqm/bin",
        description="where IBM MQ's control commands are installed; default the platform's: /opt/mqm/bin (Linux), "
        "/usr/mqm/bin (AIX)",
    )
    data_root: PlainDirectory = Field("/var/mqm", description="IBM MQ's data root (qmgrs/, log/, mqs.ini)")
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
        """mq_bin left out is the platform's default installation's."""
        if isinstance(data, dict) and "mq_bin" not in data and data.get("platform") in PLATFORMS:
            return data | {"mq_bin": PLATFORMS[data["platform"]].mq_bin}
        return data

    @property
    def unix_platform(self) -> UnixPlatform:
        """The forms of the commands that differ on this host's platform, for every step that builds or reads one."""
        return PLATFORMS[self.platform]

    @model_validator(mode="after")
    def _unique_queue_managers(self) -> LinuxHostConfig:
        names = [q.name for q in self.queue_managers]
        if len(set(names)) != len(names):
            raise ValueError(f"host {self.name}: queue manager names must be unique")
        return self
