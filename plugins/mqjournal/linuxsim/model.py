"""The state of one simulated Linux, AIX or Windows host and its linear-logging queue managers, as plain data persisted
as JSON.

Behaviour lives in `logger.py` (what MQ's logger does to extents and log points); this module only says what a host
holds. Paths follow MQ's defaults (docs/linux-interfaces.md, section 1, verified): the data directory is
`/var/mqm/qmgrs/<dir>` and the log path `/var/mqm/log/<dir>/` with the extents in its `active/`, where `<dir>` is the
queue manager's name with `.` written `!` and `/` written `&` ("IBM MQ file names"; mq-container's `dspmqinf2.txt`).
An extent is `S` + 7 digits + `.LOG` (or `R…` when MQ keeps it for reuse) of LogFilePages x 4096 bytes (section 2).

What is the simulator's own (SIMPLIFICATION, never shown through an interface): an extent's `written` count, the
units of work by the extent they began in, and each recoverable object's image extent; MQ keeps the equivalents in
its log control file and object catalogue, whose formats are not public.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, LogManagement
from mqjournal.linuxmq.qmini import PAGE_BYTES
from mqjournal.names import qmgr_name

STATE_VERSION = 1
MQM_PREFIX = "/var/mqm"
INSTALLATION_NAME = "Installation1"
INSTALLATION_PATH = "/opt/mqm"
INSTALLATION_PATHS = {"linux": "/opt/mqm", "aix": "/usr/mqm", "windows": r"C:\Program Files\IBM\MQ"}
"""IBM MQ's default MQ_INSTALLATION_PATH of each platform (verified: "Installation location on Multiplatforms")."""
WINDOWS_DATA_PREFIX = r"C:\ProgramData\IBM\MQ"
"""IBM MQ's data directory on Windows, 9.0 and later (q005870, q119400: DataPath)."""
INSTALLATION_VERSION = "9.4.2.0"  # the release of the instana capture the answers' shapes come from
_DIRECTORY_CHARACTERS = str.maketrans({".": "!", "/": "&"})

ExtentNumber = int


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


def directory_name(name: str) -> str:
    """The directory MQ keeps a queue manager's data and log in: its name, transformed (`.`->`!`, `/`->`&`).

    ASSUMED: no `.000` suffix (MQ adds one when a directory of that name already exists at crtmqm)."""
    return qmgr_name(name).translate(_DIRECTORY_CHARACTERS)


class LogExtent(_State):
    """One extent file in `<LogPath>active/`."""

    number: int = Field(ge=0, lt=EXTENT_NUMBERS)
    reusable: bool = False
    """`R` prefix: an extent MQ renamed to reuse it (Automatic and Archive modes), its old number kept in the name."""
    written: int = Field(default=0, ge=0)
    """Bytes of log records written into it so far (the file itself is always LogFilePages x 4096 bytes)."""
    archived: bool = False
    """Notified archived by SET LOG ARCHIVED or RESET QMGR TYPE(ARCHLOG) (Archive mode)."""
    intact: bool = True
    """False for a file written back with other bytes than the queue manager wrote: it cannot be replayed."""
    modified: AwareDatetime
    """The file's modification time (what `ls -l` shows; IBM: never order extents by it)."""
    size: int | None = Field(default=None, ge=0)
    """The file's size when it is not LogFilePages x 4096 bytes (a restore cut short), else None."""

    @property
    def name(self) -> str:
        return Extent(self.number, reusable=self.reusable).name


class UnitOfWork(_State):
    """An open unit of work: it holds RECLOG back at the extent it began in until it ends."""

    id: str
    began_in: ExtentNumber


class RecoverableObject(_State):
    """An object media recovery can re-create (IMGRCOVO/IMGRCOVQ YES): its last media image is in `image_extent`."""

    name: str
    type: Literal["qmgr", "queue", "channel", "process", "namelist", "authinfo", "listener", "service", "topic"]
    image_extent: ExtentNumber
    damaged: bool = False
    """A damaged object cannot be imaged: its image never moves on, and neither does MEDIALOG (RDO)."""


class LinuxQueueManager(_State):
    """One linear-logging queue manager: its qm.ini Log: stanza, its extents, and its log points."""

    name: str
    log_type: Literal["LINEAR", "CIRCULAR"] = "LINEAR"
    """qm.ini's LogType. SIMPLIFICATION: only qm.ini and DISPLAY QMSTATUS say CIRCULAR; the extents are still written
    as a linear log's (a client reads nothing more of a circular queue manager: it plans nothing on one)."""
    log_management: LogManagement = LogManagement.MANUAL
    log_file_pages: int = Field(default=4096, ge=1)
    """LogFilePages: an extent is this many 4 KiB pages (IBM's documented range was not retrieved; any >= 1 here)."""
    log_primary_files: int = Field(default=3, ge=2, le=510)
    log_secondary_files: int = Field(default=2, ge=1, le=509)
    running: bool = True
    ended: Literal["normally", "immediately", "unexpectedly"] | None = None
    """How it ended, for dspmq's STATUS; None while running."""
    extents: dict[str, LogExtent] = Field(default_factory=dict)
    """The files of `<LogPath>active/`, by file name."""
    current: ExtentNumber = 0
    """CURRLOG: the extent being written."""
    restart: ExtentNumber = 0
    """RECLOG: the oldest extent restart recovery needs, set at each checkpoint."""
    media: ExtentNumber = 0
    """MEDIALOG: the oldest extent media recovery needs, the oldest image of any recoverable object."""
    units_of_work: list[UnitOfWork] = Field(default_factory=list)
    objects: list[RecoverableObject] = Field(default_factory=list)
    img_sched: Literal["MANUAL", "AUTO"] = "MANUAL"
    img_interval_minutes: int | None = 60
    """IMGINTVL: minutes between automatic images (None: OFF)."""
    img_log_length_mb: int | None = None
    """IMGLOGLN: MB of log written between automatic images (None: OFF, IBM's default)."""
    logger_events: bool = False
    started_at: AwareDatetime
    log_started_at: AwareDatetime
    last_image_at: AwareDatetime
    bytes_logged: int = 0
    """Every byte of log records ever written: the simulator's log sequence number."""
    bytes_since_image: int = 0
    checkpoints: int = 0
    created: int = 0
    reused: int = 0
    deleted: int = 0
    """AMQ7490I's log extent statistics: extents created, reused and deleted."""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        return qmgr_name(value)

    @property
    def directory(self) -> str:
        return directory_name(self.name)

    @property
    def data_path(self) -> str:
        return f"{MQM_PREFIX}/qmgrs/{self.directory}"

    @property
    def log_path(self) -> str:
        """LogPath as qm.ini writes it, with its trailing slash."""
        return f"{MQM_PREFIX}/log/{self.directory}/"

    @property
    def active_path(self) -> str:
        """Where the extents are, as DISPLAY QMSTATUS LOGPATH shows it (with the trailing slash)."""
        return f"{self.log_path}active/"

    @property
    def extent_size(self) -> int:
        return self.log_file_pages * PAGE_BYTES

    def file_size(self, extent: LogExtent) -> int:
        """The extent file's size on disk: LogFilePages x 4096, or what a restore cut short left."""
        return self.extent_size if extent.size is None else extent.size

    def extent(self, number: ExtentNumber) -> LogExtent | None:
        """The `S` extent of that number, if its file is on disk."""
        return self.extents.get(Extent(number).name)


class WindowsQueueManager(LinuxQueueManager):
    """A queue manager of a Windows host: the Linux model's logger and state, its directories Windows' own
    (`DataPath\\qmgrs\\<dir>`, `DataPath\\log\\<dir>\\active\\`, q005870 and q018890). Saved as a
    LinuxQueueManager's JSON; a Windows host's state reads its queue managers back as these (LinuxHost)."""

    @property
    def data_path(self) -> str:
        return f"{WINDOWS_DATA_PREFIX}\\qmgrs\\{self.directory}"

    @property
    def log_path(self) -> str:
        return f"{WINDOWS_DATA_PREFIX}\\log\\{self.directory}\\"

    @property
    def active_path(self) -> str:
        return f"{self.log_path}active\\"


def on_platform(qm: LinuxQueueManager, platform: str) -> LinuxQueueManager:
    """The queue manager as a host of `platform` keeps it: under Windows' directories on Windows."""
    if platform == "windows" and not isinstance(qm, WindowsQueueManager):
        return WindowsQueueManager.model_validate(qm.model_dump())
    return qm


class LogFileSystem(_State):
    """The file system mounted on `/var/mqm/log` (IBM suggests one of its own for the logs: docs/linux-interfaces.md,
    section 11): every queue manager's extents take room in it, `df` reports it."""

    device: str = "/dev/mapper/vg_mq-log"
    mounted_on: str = f"{MQM_PREFIX}/log"
    size_bytes: int = Field(default=20 * 1024**3, gt=0)
    other_bytes: int = Field(default=64 * 1024**2, ge=0)
    """What else it holds (the log control files, a lost+found, the file system's own metadata)."""


class LinuxHost(_State):
    """One Linux or AIX host: its clock and its queue managers by name."""

    name: str
    now: AwareDatetime
    state_version: int = STATE_VERSION
    platform: Literal["linux", "aix", "windows"] = "linux"
    """Which base system answers the shell's commands (linuxsim/commands.py; linuxsim/windows.py for Windows): a state
    saved before AIX and Windows hosts existed has none and is a Linux host's, so STATE_VERSION stays."""
    queue_managers: dict[str, LinuxQueueManager] = Field(default_factory=dict)
    mqm_members: list[str] = Field(default_factory=lambda: ["mqm"])
    """Users in group mqm: IBM asks it for most control commands and the log files are the group's (section 8)."""
    log_file_system: LogFileSystem = Field(default_factory=LogFileSystem)
    missing_programs: list[str] = Field(default_factory=list)
    """Programs not installed on this host (a fault: a host without coreutils' `sha256sum`): `command not found`."""

    @model_validator(mode="after")
    def _windows_directories(self) -> LinuxHost:
        """A Windows host's queue managers, read back from JSON, keep their data and log under Windows' directories."""
        if self.platform == "windows":
            self.queue_managers = {name: on_platform(qm, "windows") for name, qm in self.queue_managers.items()}
        return self

    def queue_manager(self, name: str) -> LinuxQueueManager | None:
        return self.queue_managers.get(name)

    @property
    def installation_path(self) -> str:
        return INSTALLATION_PATHS[self.platform]


def new_queue_manager(
    name: str,
    now: datetime,
    *,
    log_management: LogManagement = LogManagement.MANUAL,
    log_file_pages: int = 4096,
    log_primary_files: int = 3,
    log_secondary_files: int = 2,
    objects: tuple[tuple[str, str], ...] = (),
    img_sched: Literal["MANUAL", "AUTO"] = "MANUAL",
    first_extent: ExtentNumber = 0,
) -> LinuxQueueManager:
    """crtmqm + strmqm: a running queue manager writing S0000000.LOG, its objects imaged there (crtmqm records the
    first media images: ASSUMED), and the queue manager object itself recoverable.

    `first_extent`: the number of the extent it writes first, every log point and media image there. SIMPLIFICATION:
    a queue manager that has long been running (near the 9,999,999 wrap, say) without its history: every extent
    before that one is gone, as archived and deleted (Manual) or reused (Automatic, Archive) extents are; crtmqm
    itself always starts at zero."""
    first = LogExtent(number=first_extent, modified=now)
    recoverable = [RecoverableObject(name=name, type="qmgr", image_extent=first.number)]
    recoverable += [
        RecoverableObject.model_validate({"name": n, "type": t, "image_extent": first.number}) for n, t in objects
    ]
    return LinuxQueueManager(
        name=name,
        log_management=log_management,
        log_file_pages=log_file_pages,
        log_primary_files=log_primary_files,
        log_secondary_files=log_secondary_files,
        extents={first.name: first},
        current=first.number,
        restart=first.number,
        media=first.number,
        objects=recoverable,
        img_sched=img_sched,
        started_at=now,
        log_started_at=now,
        last_image_at=now,
        created=1,
    )
