"""The state of one simulated IBM i partition, as plain data that persists to disk as JSON.

Behaviour lives elsewhere (`journal.py` for what IBM i does, `mq.py` for what MQ does, `library.py` for saving,
restoring and deleting whole libraries); this module only says what a partition holds. Objects are keyed
``LIBRARY/NAME`` as IBM i qualifies them.

Journal identity and association: every journal gets an identity when it is created (CRTMQM, CRTJRN) and keeps it
when it is restored from a save. A receiver remembers the journal it is or was attached to (name, library, and that
journal's identity: ``journal_id``) and whether it is in that journal's receiver directory (``associated``). A
restored receiver rejoins the directory only when a journal of that name and identity is there; otherwise it stays
outside it until QSYS2.ASSOCIATE_JOURNAL_RECEIVER associates it. Only receivers in the directory are read by MQ's
recovery passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mqjournal.sim import timezones
from mqjournal.sim.language import JobFormat


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


def qualified(library: str, name: str) -> str:
    return f"{library}/{name}"


class Status(StrEnum):
    ATTACHED = "ATTACHED"
    ONLINE = "ONLINE"
    SAVED = "SAVED"
    FREED = "FREED"
    PARTIAL = "PARTIAL"
    EMPTY = "EMPTY"


class JournalReceiver(_State):
    name: str
    library: str
    threshold_kb: int
    text: str = ""
    owner: str = "QMQM"
    status: Status = Status.EMPTY
    # The journal the receiver is or was attached to (QSYS2.JOURNAL_RECEIVER_INFO shows these even when the receiver
    # is not in the journal's directory: NULL only if it was never attached) and that journal's identity.
    journal: str | None = None
    journal_library: str | None = None
    journal_id: str | None = None
    # In the journal's receiver directory (WRKJRNA F15): true from attach on; a restore or ASSOCIATE decides anew.
    associated: bool = False
    created_at: datetime
    attached_at: datetime | None = None
    detached_at: datetime | None = None
    saved_at: datetime | None = None
    # A save taken while attached does not cover the entries written after it: IBM i calls that "never fully saved".
    fully_saved: bool = False
    size_bytes: int = 16_384  # an empty receiver still occupies storage
    entries: int = 0
    first_sequence: int | None = None
    last_sequence: int | None = None
    first_entry_at: datetime | None = None
    last_entry_at: datetime | None = None
    previous: str | None = None
    previous_library: str | None = None
    next: str | None = None
    next_library: str | None = None
    # Attach order within the journal: the simulator's ground truth, never shown through an interface.
    attach_order: int | None = None
    # Set while a job waits on an inquiry about this receiver: IBM i keeps the lock for as long as the job waits.
    locked_by_job: str | None = None

    @property
    def key(self) -> str:
        return qualified(self.library, self.name)

    @property
    def readable(self) -> bool:
        """Its entries can be read by a recovery pass (a FREED receiver must be restored first)."""
        return self.status in (Status.ATTACHED, Status.ONLINE, Status.SAVED, Status.PARTIAL)


class Segment(_State):
    """Which sequence numbers a receiver held: kept after the receiver is deleted, as the journal's history."""

    receiver: str
    library: str
    first_sequence: int
    last_sequence: int
    first_entry_at: datetime
    last_entry_at: datetime


class Journal(_State):
    name: str
    library: str
    # Set when the journal is created (CRTMQM, CRTJRN) and kept when it is restored from a save.
    id: str = ""
    text: str = ""
    delete_receivers: bool = False  # DLTRCV(*YES); MQ's AMQAJRN has *NO
    attached: str | None = None
    attached_library: str | None = None
    message_queue: str = "QSYSOPR"
    message_queue_library: str = "QSYS"
    system_managed: bool = True  # MNGRCV(*SYSTEM): MQ's AMQAJRN is created this way
    # Seed rule 2: after CPI70E3 the system stops switching until someone attaches a receiver by hand.
    switching_stopped: bool = False
    last_sequence: int = 0
    attach_counter: int = 0
    history: list[Segment] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return qualified(self.library, self.name)


class MqObject(_State):
    """A queue manager object that MQ can image and recreate (a queue, a channel ...)."""

    name: str
    type: str = "*LCLQ"
    damaged: bool = False
    # Persistent messages on a local queue: they live in the queue's file in the queue manager's IFS directory.
    messages: int = 0
    # The media recovery record: the first entry of the object's latest media image.
    image_sequence: int = 0
    image_at: datetime | None = None


class UnitOfWork(_State):
    id: str
    started_sequence: int
    started_at: datetime


class RecoveryPoint(_State):
    sequence: int
    at: datetime


class Workload(_State):
    """Persistent MQ traffic that lands in the journal."""

    entries_per_minute: int = 40
    entry_bytes: int = 700


class ClusterMembership(_State):
    """One MQ cluster the queue manager belongs to, and whether it holds a full repository for it (REPOS)."""

    name: str
    full_repository: bool = False
    refresh_count: int = 0
    last_refreshed_at: datetime | None = None
    last_refresh_repos: bool | None = None  # REPOS(*YES) on the last RFRMQMCL


class QueueManager(_State):
    name: str
    library: str
    instance: str = "A"
    running: bool = True
    workload: Workload = Field(default_factory=Workload)
    objects: list[MqObject] = Field(default_factory=list)
    open_units_of_work: list[UnitOfWork] = Field(default_factory=list)
    startup_point: RecoveryPoint | None = None
    records_since_checkpoint: int = 0
    last_checkpoint_at: datetime | None = None
    uow_counter: int = 0
    clusters: list[ClusterMembership] = Field(default_factory=list)
    # Its IFS directory (/QIBM/UserData/mqm/qmgrs/<name>) is there: `objects` and the definitions above stand for
    # its files. False once the directory is lost (sim/qmgrdir.py); SAV of it and RST bring it back.
    directory_present: bool = True

    @property
    def journal_name(self) -> str:
        return f"AMQ{self.instance}JRN"

    def object(self, name: str) -> MqObject | None:
        return next((o for o in self.objects if o.name == name), None)

    def cluster(self, name: str) -> ClusterMembership | None:
        return next((c for c in self.clusters if c.name == name), None)


class MessageType(StrEnum):
    COMPLETION = "COMPLETION"
    DIAGNOSTIC = "DIAGNOSTIC"
    ESCAPE = "ESCAPE"
    INFORMATIONAL = "INFORMATIONAL"
    INQUIRY = "INQUIRY"
    REPLY = "REPLY"


class QueuedMessage(_State):
    key: int
    id: str | None
    type: MessageType
    severity: int
    text: str
    at: datetime
    from_user: str = "QMQM"
    from_job: str = ""
    from_program: str = ""
    reply: str | None = None
    # The replacement data in hex (MESSAGE_TOKENS): the text is made from it in the job's language when shown.
    # None for a message stored before the simulator kept it: then `text` (English) is shown as it was.
    data: str | None = None


class MessageQueue(_State):
    name: str
    library: str
    messages: list[QueuedMessage] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return qualified(self.library, self.name)


class SavedObject(_State):
    """One object inside a save file: the receiver as it was when saved."""

    receiver: JournalReceiver
    saved_at: datetime
    saved_while_attached: bool


class LibraryImage(_State):
    """What SAVLIB puts in a save file besides the receivers (which are `SaveFile.objects`, as SAVOBJ saves them).

    Only the library's objects: the queue manager's IFS directory (its object definitions and their messages) is not
    in the library, so SAVLIB leaves it out; SAV saves it (`SaveFile.directory_image`).
    Message queues are saved as descriptions only: IBM i does not save the messages on a message queue.
    """

    saved_at: datetime
    journals: list[Journal] = Field(default_factory=list)
    user_spaces: list[UserSpace] = Field(default_factory=list)
    message_queues: list[MessageQueue] = Field(default_factory=list)


class DirectoryImage(_State):
    """What SAV of a queue manager's IFS directory puts in a save file: the queue manager's definitions and its
    queues with their messages (`QueueManager` stands for the directory's files), under the path it was saved from."""

    saved_at: datetime
    path: str
    queue_manager: QueueManager


class SaveFile(_State):
    name: str
    library: str
    created_at: datetime
    text: str = ""
    # OBJ: a SAVOBJ save (receivers only); LIB: a SAVLIB save (receivers plus `library_image`); DIR: a SAV of a
    # queue manager's IFS directory (`directory_image`).
    kind: Literal["OBJ", "LIB", "DIR"] = "OBJ"
    saved_library: str | None = None
    objects: list[SavedObject] = Field(default_factory=list)
    library_image: LibraryImage | None = None
    directory_image: DirectoryImage | None = None
    # The save's DTACPR value (None: saved before the simulator recorded it) and the bytes of saved data it wrote:
    # the saved storage, less the compression, times the partition's size factor (savfdata.saved_data_bytes).
    compression: str | None = None
    data_bytes: int = 0

    @property
    def key(self) -> str:
        return qualified(self.library, self.name)

    @property
    def empty(self) -> bool:
        return not self.objects and self.library_image is None and self.directory_image is None

    def clear(self) -> None:
        self.objects = []
        self.library_image = None
        self.directory_image = None
        self.saved_library = None
        self.kind = "OBJ"
        self.compression = None
        self.data_bytes = 0

    @property
    def saved_storage_bytes(self) -> int:
        """The storage of what the save holds, as the simulator models it: the receivers' sizes, plus a library
        save's other objects (SIMPLIFICATION: 4 KB a journal, user space or message queue; 64 KB for MQ's IFS
        directory, plus 4 KB a message on its queues)."""
        size = sum(o.receiver.size_bytes for o in self.objects)
        if self.library_image is not None:
            image = self.library_image
            size += 4_096 * (len(image.journals) + len(image.user_spaces) + len(image.message_queues))
        if self.directory_image is not None:
            size += 65_536 + 4_096 * sum(o.messages for o in self.directory_image.queue_manager.objects)
        return size

    @property
    def size_bytes(self) -> int:
        """The object's storage on the ASP (OBJSIZE): a description page and the saved data it holds."""
        return 8_192 + self.data_bytes


class UserSpace(_State):
    name: str
    library: str
    data: str  # the character view; IBM i stores it in EBCDIC

    @property
    def key(self) -> str:
        return qualified(self.library, self.name)


class CommandFault(_State):
    """Make a CL command fail with a given message, `times` times (0 = until removed)."""

    pattern: str
    msg_id: str
    tokens: list[str] = Field(default_factory=list)
    times: int = 1
    # Sent before the escape, each [msg_id, *tokens]: how a real refusal gives its reason (a DLT command's
    # diagnostics before CPF2125), so clients can be tried on shapes and IDs the simulator's commands never send.
    diagnostics: list[list[str]] = Field(default_factory=list)


class HostFaults(_State):
    commands: list[CommandFault] = Field(default_factory=list)
    asp_full: bool = False
    # The user space's character column fails to convert (a CCSID 65535 job): only DATA_BINARY can be read.
    ccsid_unconvertible: bool = False
    # sftp-server may not open a /QSYS.LIB save file for reading (docs/ibmi-interfaces.md, section 5: the failure's
    # shape, "failure", is ASSUMED); PASE programs (cp, openssl) still read it, as IBM's tools rely on.
    qsys_sftp_read_refused: bool = False
    # PASE `cp` may not read a /QSYS.LIB save file either (ASSUMED shape, sim/streamfiles.py): CPYTOSTMF, a CL
    # command of the ILE side, still copies it.
    qsys_pase_copy_refused: bool = False


class StreamFile(_State):
    """A stream file in the IFS outside QSYS.LIB (only what `cp` of a save file makes): the save it copied, whose
    bytes it holds (`savfdata`), and its owner's permissions."""

    path: str
    copy_of: SaveFile
    mode: int = 0o644


class WithheldAuthority(_State):
    """Authorities the signed-on profile does NOT have to some objects (a simulator fault for `mqjournal doctor`)."""

    library: str
    name: str = "*ALL"  # a name, a generic PREFIX*, or *ALL
    objtype: str
    authorities: list[str]  # e.g. ["*OBJEXIST"]; *ALL withholds everything


class UserProfile(_State):
    """The user profile SSH sessions sign on with (one template for whichever user signs on): what CHKOBJ and
    QSYS2.USER_INFO answer from. Only CHKOBJ and USER_INFO read it: the other simulated commands do not check
    authority (see doctor's report on what is assumed)."""

    status: str = "*ENABLED"
    special_authorities: list[str] = Field(default_factory=lambda: ["*JOBCTL", "*SAVSYS", "*IOSYSCFG"])
    group_profile: str | None = "QMQMADM"
    supplemental_groups: list[str] = Field(default_factory=list)
    withheld: list[WithheldAuthority] = Field(default_factory=list)


STATE_VERSION = 3  # bumped when a saved partition can no longer be read as it was written


class JobAttributes(_State):
    """How the SSH job shows message texts: its language (LANGID) and date/time formats (fleet `system:`)."""

    language: Literal["ENU", "DEU"] = "ENU"
    date_format: Literal["*YMD", "*MDY", "*DMY", "*JUL"] = "*YMD"
    date_separator: str = "-"
    time_separator: str = ":"


class Partition(_State):
    name: str
    now: datetime  # aware, at the partition's UTC offset
    # A state file written before journal identities existed loads as version 1 and is discarded (service.py).
    state_version: int = 1
    libraries: list[str] = Field(default_factory=lambda: ["QSYS", "QGPL", "QUSRSYS"])
    queue_managers: list[QueueManager] = Field(default_factory=list)
    journals: dict[str, Journal] = Field(default_factory=dict)
    receivers: dict[str, JournalReceiver] = Field(default_factory=dict)
    message_queues: dict[str, MessageQueue] = Field(default_factory=dict)
    save_files: dict[str, SaveFile] = Field(default_factory=dict)
    # The IFS outside QSYS.LIB, as far as mqjournal writes it: directories made with mkdir, stream files by path.
    directories: list[str] = Field(default_factory=lambda: ["/tmp"])
    stream_files: dict[str, StreamFile] = Field(default_factory=dict)
    user_spaces: dict[str, UserSpace] = Field(default_factory=dict)
    faults: HostFaults = Field(default_factory=HostFaults)
    # How an SSH job answers inquiry messages: *RQD waits for an operator (the IBM i default), *DFT takes the
    # message's default reply at once.
    inquiry_reply: str = "*RQD"
    # Whether an admin linked /QOpenSys/usr/bin/db2 to qsh: only then does a bare `db2` run in the PASE shell (a
    # stock partition has no db2 in PASE; see shell.py). Set from the fleet file's system.db2_link on every start.
    db2_link: bool = False
    # The PASE programs that digest a file (sim/digest.py), from the fleet file's system.digest_programs on every start.
    digest_programs: list[str] = Field(default_factory=lambda: ["/QOpenSys/usr/bin/openssl"])
    job: JobAttributes = Field(default_factory=JobAttributes)
    message_counter: int = 0
    job_counter: int = 0
    journal_counter: int = 0
    # The IBM i release (with its latest Db2 PTF group): which QSYS2 services and columns exist (sim/releases.py).
    release: str = "7.5"
    db2_group_level: int | None = None  # the Db2 PTF group level installed; None: the release's latest
    # The system ASP (1): what QSYS2.ASP_INFO shows. Receivers and save files count against it (views.py).
    asp_capacity_bytes: int = 200 * 2**30
    asp_other_used_bytes: int = 60 * 2**30  # the operating system, the applications and their data
    # How large save files are (fleet file `system:`, set on every start): the saved storage times this factor, after
    # the data compression of the save at these ratios (by DTACPR value; savfdata.saved_data_bytes).
    save_file_size_factor: float = 1.0
    save_compression_ratios: dict[str, float] = Field(default_factory=dict)
    # How far the partition's clock runs ahead of real time (negative: behind), for the simulated wall clock.
    clock_offset_seconds: float = 0
    # System value QTIMZON: the time zone description. "" (a state file from before): the fixed-offset one of `now`.
    time_zone: str = ""
    # The Olson zone a site's own QTIMZON description follows (the fleet file's host time_zone_rules); "": IBM's.
    time_zone_rules: str = ""
    user_profile: UserProfile = Field(default_factory=UserProfile)
    # The substitution variables its message descriptions declare (fleet `system.message_formats`), by message ID,
    # where they differ from mqmessages.LAYOUTS: MESSAGE_FILE_DATA shows them and messages are laid out by them.
    message_formats: dict[str, str] = Field(default_factory=dict)
    signed_on_users: list[str] = Field(default_factory=list)  # the profiles SSH signs on with (QSYS2.USER_INFO rows)

    def tick(self) -> datetime:
        """Advance the clock a millisecond, so that two events of one command never share a timestamp."""
        self.now += timedelta(milliseconds=1)
        return self.now

    def serial_number(self) -> str:
        """QSRLNBR: the machine's serial number, made from the partition's name so it is stable across restarts and
        distinct per partition (an IBM serial is 7-8 characters, like this one)."""
        return "78" + hashlib.sha256(self.name.encode()).hexdigest()[:5].upper()

    def rdb_name(self) -> str:
        """The local relational database's name (CURRENT SERVER, ASP_INFO.RDB_NAME): IBM i makes it from the system
        name, an RDB name is at most 18 characters and has no '-'."""
        return self.name.upper().replace("-", "")[:18]

    def job_format(self) -> JobFormat:
        j = self.job
        # A message's time is shown as the partition's clock showed it then, DST included.
        zone = timezones.rules(self.time_zone_description(), self.time_zone_rules) or self.now.tzinfo
        return JobFormat(j.language, j.date_format, j.date_separator, j.time_separator, zone)

    def local_now(self) -> datetime:
        return self.local(self.now)

    def local(self, moment: datetime) -> datetime:
        """A moment as this partition's clock showed it then: local time without offset, DST included."""
        return timezones.local(moment, self.time_zone_description(), self.time_zone_rules)

    def utc_offset_now(self) -> timedelta:
        return timezones.offset_at(self.now, self.time_zone_description(), self.time_zone_rules)

    def time_zone_description(self) -> str:
        offset = self.now.utcoffset()
        return self.time_zone or timezones.fixed_offset_description(offset if offset is not None else timedelta(0))

    def queue_manager(self, name: str) -> QueueManager | None:
        return next((q for q in self.queue_managers if q.name == name), None)

    def receivers_in(self, library: str) -> list[JournalReceiver]:
        return [r for r in self.receivers.values() if r.library == library]

    def new_journal_id(self) -> str:
        self.journal_counter += 1
        return f"{self.name}:JRN{self.journal_counter:06d}"

    def journal_receivers(self, journal: Journal) -> list[JournalReceiver]:
        """The journal's receiver directory in attach order (the simulator knows the order; clients must not sort)."""
        found = [
            r
            for r in self.receivers.values()
            if r.associated and r.journal == journal.name and r.journal_library == journal.library
        ]
        return sorted(found, key=lambda r: (r.attach_order is None, r.attach_order or 0))

    def message_queue(self, library: str, name: str) -> MessageQueue:
        key = qualified(library, name)
        if key not in self.message_queues:
            self.message_queues[key] = MessageQueue(name=name, library=library)
        return self.message_queues[key]

    def object_exists(self, library: str, name: str, objtype: str) -> bool:
        key = qualified(library, name)
        tables: dict[str, Mapping[str, object]] = {
            "*JRNRCV": self.receivers,
            "*JRN": self.journals,
            "*FILE": self.save_files,
            "*USRSPC": self.user_spaces,
            "*MSGQ": self.message_queues,
        }
        return key in tables[objtype]
