"""The backup catalog: every verified save of a receiver or of a queue manager library, every deletion, and
which save files have been discarded.

A receiver is identified by host, library, name *and attach time*: names wrap and come back, attach times do not.
SQLite by default; any SQLAlchemy URL in production. The recovery side reads it (`receivers`, `library_saves`) to
find the save files to restore; a discarded save file's saves are no longer offered.

A save file copied off the partition into the backup store (`mqjournal.backupstore`) is a *stored object*: its
store, key, size, SHA-256 and object list are recorded here and in a JSON sidecar next to it in the store, so the
catalog can be rebuilt from the store alone (`mqjournal catalog rebuild --from-store`). A receiver is *backed up off
the partition* only when a stored object that passed its verification lists it.

Every save and delete is written twice: an operation *intent* before the command is sent, and its outcome after
(`begin` / `finish`). A worker killed in between leaves an open intent that the next step on that queue manager
reconciles against the host (`mqjournal.ibmi.reconcile`). A catalog that cannot be written raises
`CatalogUnavailable` naming the database, and the executor stops before any destructive command.

The tables are made and altered by the migrations in `mqjournal.migrations`, run when a catalog is opened
(docs/catalog.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    Numeric,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.types import TypeEngine

from mqjournal.errors import MqJournalError
from mqjournal.ibmi.workers import Worker
from mqjournal.names import HostName, ObjectName, QueueManagerName

log = logging.getLogger(__name__)

# Sizes reach terabytes: 32-bit columns are refused on PostgreSQL for a 2 GiB receiver. BIGINT is 64-bit everywhere;
# SQLite keeps its own INTEGER (already 64-bit) for the primary keys so that they stay rowid aliases.
_Id = BigInteger().with_variant(Integer(), "sqlite")

# IBM i CRTJRN RCVSIZOPT(*MAXOPT3): journal entries are numbered up to 18 446 744 073 709 551 600 (IBM i
# documentation, "Resetting the sequence number of journal entries"; *MAXOPT1/2 stop at 9 999 999 999). That is
# past BIGINT's 2**63 - 1, so sequence numbers take 20 decimal digits.
MAX_SEQUENCE_NUMBER = 18_446_744_073_709_551_600
_SEQUENCE_DIGITS = 20

ReceiverIncarnation = tuple[str, str, datetime]
"""(library, receiver name, attach time): names wrap, so the catalog knows a receiver by its attach time too."""

# Receiver names per IN list: well under every database's limit on bound parameters (SQLite's was 999).
_NAMES_PER_QUERY = 500


class CatalogUnavailable(MqJournalError):
    """The backup catalog could not be read or written; nothing destructive was sent."""


def display_url(url: str) -> str:
    """A URL as errors, logs and records may show it: its password replaced by ***, the rest as given (the catalog's
    database URL, the backup store's URL; a URL without a password, or a plain path, is returned unchanged, so a
    store's URL recorded before stays the same text)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        # Not of the form SQLAlchemy reads (a path, a URL with an unusual scheme): the password of its netloc.
        split = urlsplit(url) if "://" in url else None
        if split is None or split.password is None:
            return url
        return split._replace(netloc=split.netloc.replace(f":{split.password}@", ":***@", 1)).geturl()
    return url if parsed.password is None else parsed.render_as_string(hide_password=True)


@contextlib.contextmanager
def catalog_errors(url: str, doing: str) -> Iterator[None]:
    """Any database failure inside as CatalogUnavailable, naming the database and what to do."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise CatalogUnavailable(
            f"backup catalog {display_url(url)}",
            f"could not {doing} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})",
            "make the database reachable and writable (SQLite: no other process holding its write lock, its "
            "folder writable; PostgreSQL: the server up and the user granted), then rerun the task; nothing "
            "was deleted after this error",
        ) from None


class _UtcDateTime(TypeDecorator):
    """Stored as UTC whatever the database does with time zones; read back aware."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("the catalog stores aware timestamps only")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class _SequenceNumber(TypeDecorator):
    """A journal sequence number, exact up to 20 digits: NUMERIC(20, 0), or on SQLite the number as 20-digit text.

    SQLite keeps a NUMERIC beyond 2**63 only as a REAL (18446744073709551600 reads back as ...616); zero-padded
    text is exact and compares as the numbers do. Either way Python sees an int.
    """

    impl = Numeric(_SEQUENCE_DIGITS, 0)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(_SEQUENCE_DIGITS))
        return dialect.type_descriptor(Numeric(_SEQUENCE_DIGITS, 0))

    def process_bind_param(self, value: int | None, dialect: Dialect) -> str | Decimal | None:
        if value is None:
            return None
        if not 0 <= value < 10**_SEQUENCE_DIGITS:
            raise ValueError(f"a journal sequence number is from 0 to {MAX_SEQUENCE_NUMBER}, not {value}")
        return f"{value:0{_SEQUENCE_DIGITS}d}" if dialect.name == "sqlite" else Decimal(value)

    def process_result_value(self, value: str | Decimal | int | None, dialect: Dialect) -> int | None:
        return None if value is None else int(value)

    @property
    def python_type(self) -> type:
        return int


class _Base(DeclarativeBase):
    pass


class _Save(_Base):
    __tablename__ = "receiver_saves"
    __table_args__ = (UniqueConstraint("host", "library", "receiver", "attached_at", "save_file_library", "save_file"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    qmgr_library: Mapped[str] = mapped_column(String(10))
    receiver: Mapped[str] = mapped_column(String(10), index=True)
    library: Mapped[str] = mapped_column(String(10))
    attached_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    detached_at: Mapped[datetime | None] = mapped_column(_UtcDateTime, nullable=True)
    first_sequence: Mapped[int | None] = mapped_column(_SequenceNumber, nullable=True)
    last_sequence: Mapped[int | None] = mapped_column(_SequenceNumber, nullable=True)
    previous: Mapped[str | None] = mapped_column(String(10), nullable=True)
    next: Mapped[str | None] = mapped_column(String(10), nullable=True)
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    device: Mapped[str] = mapped_column(String(10), default="*SAVF")
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    saved_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    verified_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    run_id: Mapped[str] = mapped_column(String(250))


# What makes a save or a deletion the same fact: recorded twice, it is kept once.
_SAVE_KEY = ("host", "library", "receiver", "attached_at", "save_file_library", "save_file")
_DELETION_KEY = ("host", "library", "receiver", "attached_at")


class _Deletion(_Base):
    __tablename__ = "receiver_deletions"

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    receiver: Mapped[str] = mapped_column(String(10))
    library: Mapped[str] = mapped_column(String(10))
    attached_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    deleted_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    delete_option: Mapped[str] = mapped_column(String(12))
    run_id: Mapped[str] = mapped_column(String(250))


class _LibrarySave(_Base):
    __tablename__ = "library_saves"
    __table_args__ = (UniqueConstraint("host", "qmgr_library", "save_file_library", "save_file"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    qmgr_library: Mapped[str] = mapped_column(String(10))
    journal: Mapped[str] = mapped_column(String(10))
    device: Mapped[str] = mapped_column(String(10), default="*SAVF")
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    saved_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    verified_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    attached_receiver: Mapped[str] = mapped_column(String(10))
    attached_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    oldest_needed_receiver: Mapped[str | None] = mapped_column(String(10), nullable=True)
    oldest_needed_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    threshold_kb: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    run_id: Mapped[str] = mapped_column(String(250))
    # The SAV of the queue manager's IFS directory, in save_file_library (NULL: catalogued before it was taken).
    directory: Mapped[str | None] = mapped_column(String(255), nullable=True)
    directory_save_file: Mapped[str | None] = mapped_column(String(10), nullable=True)


class _Discarded(_Base):
    __tablename__ = "discarded_save_files"
    __table_args__ = (UniqueConstraint("host", "save_file_library", "save_file"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    discarded_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    run_id: Mapped[str] = mapped_column(String(250))


class _Stored(_Base):
    __tablename__ = "stored_objects"
    # The same save file copied into two stores is two stored objects; one store's key names one object.
    __table_args__ = (UniqueConstraint("store_url", "key"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    qmgr_library: Mapped[str] = mapped_column(String(10))
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    run_id: Mapped[str] = mapped_column(String(250))
    store_url: Mapped[str] = mapped_column(String(1024))
    key: Mapped[str] = mapped_column(String(1024))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    # The host's digest of the save file when it was copied (migration 0003); NULL: never vouched for by the host.
    host_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    verified_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    objects: Mapped[str] = mapped_column(Text)  # the save file's object list, JSON: a list of SavedReceiver
    # What proves the copy (StoredProof), when its bytes were last read again and matched, and what such a read
    # found wrong (while set, the copy proves nothing). The catalog's own: never in a sidecar, which is a claim.
    proof: Mapped[str] = mapped_column(String(24), server_default="copied")
    proof_checked_at: Mapped[datetime | None] = mapped_column(_UtcDateTime, nullable=True)
    proof_problem: Mapped[str | None] = mapped_column(Text, nullable=True)


class _LinuxExtentCopy(_Base):
    """A Linux queue manager's log extent copied into a backup store, its bytes vouched for by the host's SHA-256
    (migration 0008, #32). One store's key names one copy."""

    __tablename__ = "linux_extent_copies"
    __table_args__ = (
        UniqueConstraint("store_url", "key"),
        Index("ix_linux_extent_copies_host_qmgr", "host", "qmgr"),
    )

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    qmgr: Mapped[str] = mapped_column(String(48))
    extent: Mapped[str] = mapped_column(String(12))
    run_id: Mapped[str] = mapped_column(String(250))
    store_url: Mapped[str] = mapped_column(String(1024))
    key: Mapped[str] = mapped_column(String(1024))
    size_bytes: Mapped[int] = mapped_column(_Id)
    sha256: Mapped[str] = mapped_column(String(64))
    host_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    verified_at: Mapped[datetime] = mapped_column(_UtcDateTime)


class _RestoreDrill(_Base):
    """One stored copy drilled (migration 0006): uploaded into a scratch save file on a partition and its object list
    read back. The sampling rule reads when each copy was last drilled; the fleet view the last drill per queue
    manager."""

    __tablename__ = "restore_drills"
    __table_args__ = (
        Index("ix_restore_drills_store_key", "store_url", "key"),
        Index("ix_restore_drills_host_qmgr", "host", "qmgr"),
    )

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    qmgr: Mapped[str] = mapped_column(String(48))
    store_url: Mapped[str] = mapped_column(String(1024))
    key: Mapped[str] = mapped_column(String(1024))
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    run_id: Mapped[str] = mapped_column(String(250))
    drilled_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    outcome: Mapped[str] = mapped_column(String(12))
    scratch: Mapped[str | None] = mapped_column(String(21), nullable=True)  # LIB/NAME of the scratch save file
    problem: Mapped[str | None] = mapped_column(Text, nullable=True)
    action: Mapped[str | None] = mapped_column(Text, nullable=True)


class _StoredReceiver(_Base):
    """One receiver in a stored object's object list (migration 0005): the stored objects holding a receiver are
    found through the index on (host, receiver), not by reading every object list of the host."""

    __tablename__ = "stored_object_receivers"
    __table_args__ = (Index("ix_stored_object_receivers_host_receiver", "host", "receiver"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    stored_object_id: Mapped[int] = mapped_column(_Id, ForeignKey("stored_objects.id"))
    host: Mapped[str] = mapped_column(String(255))
    library: Mapped[str] = mapped_column(String(10))
    receiver: Mapped[str] = mapped_column(String(10))


class _Operation(_Base):
    __tablename__ = "operations"

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    qmgr: Mapped[str] = mapped_column(String(48))
    qmgr_library: Mapped[str] = mapped_column(String(10))
    kind: Mapped[str] = mapped_column(String(10))
    library: Mapped[str] = mapped_column(String(10))
    receivers: Mapped[str] = mapped_column(Text)  # space-separated names
    attached_at: Mapped[datetime | None] = mapped_column(_UtcDateTime, nullable=True)
    save_file_library: Mapped[str | None] = mapped_column(String(10), nullable=True)
    save_file: Mapped[str | None] = mapped_column(String(10), nullable=True)
    delete_option: Mapped[str | None] = mapped_column(String(12), nullable=True)
    run_id: Mapped[str] = mapped_column(String(250))
    worker: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(12), index=True)
    started_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(_UtcDateTime, nullable=True)
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)


class _RemovedFromHost(_Base):
    """A save file deleted from its partition by the cleanup step because the backup store holds it verified: its
    saves stay offered for restores, from the store."""

    __tablename__ = "save_files_removed_from_host"
    __table_args__ = (UniqueConstraint("host", "save_file_library", "save_file"),)

    id: Mapped[int] = mapped_column(_Id, primary_key=True)
    host: Mapped[str] = mapped_column(String(255), index=True)
    save_file_library: Mapped[str] = mapped_column(String(10))
    save_file: Mapped[str] = mapped_column(String(10))
    store_key: Mapped[str] = mapped_column(String(1024))
    removed_at: Mapped[datetime] = mapped_column(_UtcDateTime)
    run_id: Mapped[str] = mapped_column(String(250))


OperationState = Literal["intent", "done", "failed", "reconciled"]


StoredProof = Literal["copied", "host_save_file", "claimed_by_sidecar", "restore_drill"]
"""What makes a stored object a backup to delete against:

- ``copied``: the copy step streamed the host's save file into the store and read the stored bytes back equal;
- ``host_save_file``: recorded as a claim, then its bytes matched the host's save file, whose content listed every
  receiver the object list names;
- ``claimed_by_sidecar``: recorded from its sidecar alone (`mqjournal catalog rebuild --from-store`). A sidecar with
  the right SHA-256 may still list receivers its bytes do not hold: a claim, never proof of a save;
- ``restore_drill``: recorded as a claim, then a restore drill uploaded its bytes into a scratch save file on a
  partition, which took them as a save file and listed every receiver the object list names (mqjournal.drill)."""

PROVING: frozenset[StoredProof] = frozenset({"copied", "host_save_file", "restore_drill"})
"""The proofs a delete, an evidence check or the cleanup step may count on; any other state proves nothing."""


OperationKind = Literal["save", "delete", "discard", "clean_up"]
"""What an operation sends: SAVOBJ into a save file, DLTJRNRCV, DLTF of a save file (backup expiry), or DLTF of a
save file whose copy the backup store holds verified (the cleanup step: the save stays offered, from the store)."""


class Operation(BaseModel):
    """A save (SAVOBJ of `receivers` into the save file), a delete (DLTJRNRCV of one receiver) or a discard (DLTF
    of a save file, backup expiry), as intended.

    `state` is `intent` from just before the command is sent until its outcome is known: `done`, `failed`, or
    `reconciled` when a later step found out on the host what an interrupted one did.
    """

    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: int | None = None
    host: str
    qmgr: str
    qmgr_library: str
    kind: OperationKind
    library: str
    receivers: str
    attached_at: AwareDatetime | None = None
    save_file_library: str | None = None
    save_file: str | None = None
    delete_option: str | None = None
    run_id: str
    worker: str = ""
    state: OperationState = "intent"
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    detail: str | None = None

    @property
    def names(self) -> list[str]:
        return self.receivers.split()


class SaveRecord(BaseModel):
    """One verified save of one receiver."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    host: str
    qmgr: str
    qmgr_library: str
    receiver: str
    library: str
    attached_at: AwareDatetime
    detached_at: AwareDatetime | None
    first_sequence: int | None
    last_sequence: int | None
    previous: str | None
    next: str | None
    size_bytes: int
    device: str = "*SAVF"
    save_file_library: str
    save_file: str
    saved_at: AwareDatetime
    verified_at: AwareDatetime
    run_id: str


class LibrarySaveRecord(BaseModel):
    """One verified save of a whole queue manager library (SAVLIB), taken with the queue manager ended.

    `oldest_needed_*` is AMQJRNINF at the save: restoring this save needs that receiver and every later one.
    A library save has two parts: the SAVLIB of the library (`save_file`) and the SAV of the queue manager's IFS
    directory (`directory`, into `directory_save_file` in the same library), where MQ keeps its object definitions
    and their messages. None for both: a save catalogued before the IFS part was taken, which cannot bring the
    queue manager back by itself.
    """

    model_config = ConfigDict(frozen=True, from_attributes=True)

    host: str
    qmgr: str
    qmgr_library: str
    journal: str
    device: str = "*SAVF"
    save_file_library: str
    save_file: str
    saved_at: AwareDatetime
    verified_at: AwareDatetime
    attached_receiver: str
    attached_at: AwareDatetime
    oldest_needed_receiver: str | None
    oldest_needed_at: AwareDatetime
    threshold_kb: int | None = None
    run_id: str
    directory: str | None = None
    directory_save_file: str | None = None

    @property
    def save_file_path(self) -> str:
        return f"{self.save_file_library}/{self.save_file}"

    @property
    def directory_save_file_path(self) -> str | None:
        return f"{self.save_file_library}/{self.directory_save_file}" if self.directory_save_file else None


class CatalogedReceiver(BaseModel):
    """A receiver as the catalog knows it (one incarnation of a name), with every save still available."""

    model_config = ConfigDict(frozen=True)

    name: str
    library: str
    attached_at: AwareDatetime
    detached_at: AwareDatetime | None
    first_sequence: int | None
    last_sequence: int | None
    previous: str | None
    next: str | None
    size_bytes: int
    saves: tuple[SaveRecord, ...]  # newest first; only full saves (taken after detach) are recorded


class DeletionRecord(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True)

    host: str
    qmgr: str
    receiver: str
    library: str
    attached_at: AwareDatetime
    deleted_at: AwareDatetime
    delete_option: str
    run_id: str


StoredObjectFormat = Literal["mqjournal.stored-object/v1"]
STORED_OBJECT_FORMAT: StoredObjectFormat = "mqjournal.stored-object/v1"


class SavedReceiver(BaseModel):
    """One receiver in a save file's object list, as its save recorded it.

    Only the name and library are always known; the rest, when given, is what a receiver save record needs, so a
    catalog rebuilt from the store has the same receiver saves as the one that made the copy.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    receiver: ObjectName
    library: ObjectName
    attached_at: AwareDatetime | None = None
    detached_at: AwareDatetime | None = None
    first_sequence: int | None = None
    last_sequence: int | None = None
    previous: ObjectName | None = None
    next: ObjectName | None = None
    size_bytes: int | None = None
    saved_at: AwareDatetime | None = None
    verified_at: AwareDatetime | None = None

    @classmethod
    def from_save(cls, save: SaveRecord) -> SavedReceiver:
        return cls.model_validate(save.model_dump(include=set(cls.model_fields)))


class SaveFileCopy(BaseModel):
    """What is known of a save file before it is copied into the backup store: where it was made and what it holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: HostName
    qmgr: QueueManagerName
    qmgr_library: ObjectName
    save_file_library: ObjectName
    save_file: ObjectName
    run_id: str = Field(min_length=1, max_length=250)
    objects: tuple[SavedReceiver, ...] = ()
    host_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    """The SHA-256 the host computed of the save file right before it was copied, while its object list held
    `objects` before and after (ibmi/hostdigest.py). None: the host gave none, so the copy proves nothing."""

    @property
    def save_file_path(self) -> str:
        return f"{self.save_file_library}/{self.save_file}"


class ExtentToCopy(BaseModel):
    """Which Linux queue manager's log extent a copy into the backup store is of, and by which run (#32)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: HostName
    qmgr: QueueManagerName
    extent: str = Field(pattern=r"^S[0-9]{7}\.LOG$")
    run_id: str = Field(min_length=1, max_length=250)


class ExtentCopy(ExtentToCopy):
    """An extent to copy, with the SHA-256 its host computed of it: what its copy must hash to."""

    host_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The SHA-256 the host computed of the extent right before it was copied (coreutils sha256sum)."""


class StoredExtent(ExtentCopy):
    """A log extent in the backup store, its bytes those the host's digest vouched for (no other is ever kept)."""

    sidecar: Literal["mqjournal.stored-extent/v1"] = "mqjournal.stored-extent/v1"
    store_url: str
    key: str
    size_bytes: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: AwareDatetime
    verified_at: AwareDatetime


class StoredObject(SaveFileCopy):
    """A save file in the backup store, verified when it was written: the JSON sidecar next to it, and a catalog row.

    `size_bytes` and `sha256` are of the save file's bytes as the store holds them (computed while streaming and
    again on a re-read of the stored object); `store_url` and `key` say where.
    """

    sidecar: StoredObjectFormat = STORED_OBJECT_FORMAT
    store_url: str
    key: str
    size_bytes: int = Field(ge=0)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: AwareDatetime
    verified_at: AwareDatetime

    @property
    def vouched(self) -> bool:
        """Whether the host's own digest of the save file vouches for these bytes: only such a copy is a backup
        that a receiver may be deleted against (a download of the right length can still be the wrong bytes)."""
        return self.host_sha256 is not None and self.host_sha256 == self.sha256

    def holds(self, library: str, receiver: str, attached_at: datetime | None) -> bool:
        """Whether the object list has this receiver: with `attached_at`, that incarnation of the name only (names
        wrap, so an entry without an attach time proves nothing about a given incarnation)."""
        return any(
            o.library == library and o.receiver == receiver and (attached_at is None or o.attached_at == attached_at)
            for o in self.objects
        )

    def save_records(self) -> list[SaveRecord]:
        """The receiver saves this object proves, for the catalog; receivers listed without an attach time are left
        out (the catalog identifies a receiver by its attach time, see the module docstring)."""
        return [
            SaveRecord(
                host=self.host,
                qmgr=self.qmgr,
                qmgr_library=self.qmgr_library,
                receiver=o.receiver,
                library=o.library,
                attached_at=o.attached_at,
                detached_at=o.detached_at,
                first_sequence=o.first_sequence,
                last_sequence=o.last_sequence,
                previous=o.previous,
                next=o.next,
                size_bytes=o.size_bytes or 0,
                save_file_library=self.save_file_library,
                save_file=self.save_file,
                saved_at=o.saved_at or self.created_at,
                verified_at=o.verified_at or self.verified_at,
                run_id=self.run_id,
            )
            for o in self.objects
            if o.attached_at is not None
        ]


DrillOutcome = Literal["passed", "failed", "error"]
"""A restore drill of one copy: `passed` (the partition listed every receiver the catalog names), `failed` (the copy
does not restore: its bytes were refused or list other objects; the copy then proves nothing), `error` (the drill
could not be made, e.g. CRTSAVF refused or the host dropped: nothing is known about the copy)."""


DRILL_PROBLEM = "restore drill "
"""How a failed drill's `proof_problem` starts: a scrub whose read matches the digest does not clear it."""


class DrillRecord(BaseModel):
    """One copy's restore drill, as the catalog keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: HostName
    qmgr: QueueManagerName
    store_url: str
    key: str
    save_file_library: ObjectName
    save_file: ObjectName
    run_id: str = Field(min_length=1, max_length=250)
    drilled_at: AwareDatetime
    outcome: DrillOutcome
    scratch: str | None = None
    problem: str | None = None
    action: str | None = None


class StoredCopy(BaseModel):
    """A stored object as the catalog knows it: the copy, what proves it, and what its last re-read found."""

    model_config = ConfigDict(frozen=True)

    stored: StoredObject
    proof: StoredProof
    checked_at: AwareDatetime | None = None  # the last re-read that matched (or found `problem`); None: none yet
    problem: str | None = None  # what the last re-read found wrong; the copy proves nothing while it is set

    @property
    def proves(self) -> bool:
        return self.proof in PROVING and self.problem is None

    @property
    def last_verified(self) -> datetime:
        """When the bytes were last known to match: the last re-read, else the copy's own verification."""
        return self.checked_at or self.stored.verified_at


class CatalogSchemaTooNew(CatalogUnavailable):
    """The catalog's schema was migrated by a newer mqjournal than this one; it was left as it is."""


_POOL_SIZE, _POOL_OVERFLOW = 10, 5
_ENGINES: dict[tuple[str, float], Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(url: str, *, lock_timeout: float = 30.0) -> Engine:
    """The engine for the catalog database at `url`, one per URL in this process, shared by every Catalog and lease
    opened on it; for SQLite, its folder is created, writers wait for the lock, and every connection writes ahead
    (`_write_ahead`).

    One engine per URL, not per Catalog (one per queue manager and step): an engine per Catalog kept a pool of
    connections each until it was collected, and a worker running ten hosts at once ran PostgreSQL out of
    connections ("FATAL: sorry, too many clients already", fleet_bench, #28); on SQLite each new engine paid for new
    connections and their pragmas, in the worker's own process, at every step of every queue manager. The shared
    one holds at most its pool's size plus overflow (10 + 5) per process, and keeps ten: a batch task working on ten
    hosts at once (MQJOURNAL_TASK_HOSTS_IN_PARALLEL, 4 by default) keeps a connection for each. A pool keeping fewer
    than are in use closes each one beyond them as it comes back, and the next step opens a new one: a server process
    and a login on PostgreSQL each time. An in-memory SQLite database is an engine's own, so its URL gets a new one
    each time."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    if sqlite and parsed.database in (None, "", ":memory:"):
        return create_engine(url)
    with _ENGINES_LOCK:
        shared = _ENGINES.get((url, lock_timeout))
        if shared is None:
            if sqlite:
                Path(str(parsed.database)).parent.mkdir(parents=True, exist_ok=True)
                shared = create_engine(url, connect_args={"timeout": lock_timeout})
                event.listen(shared, "connect", _write_ahead)
            else:
                shared = create_engine(url, pool_pre_ping=True, pool_size=_POOL_SIZE, max_overflow=_POOL_OVERFLOW)
            _ENGINES[(url, lock_timeout)] = shared
        return shared


def _forget_parents_connections() -> None:
    # A forked task process must not use its parent's pooled connections (SQLAlchemy, "Using Connection Pools with
    # Multiprocessing or os.fork()"): the child opens its own, and leaves the parent's sockets to the parent.
    for engine in _ENGINES.values():
        engine.dispose(close=False)


os.register_at_fork(after_in_child=_forget_parents_connections)


def _write_ahead(dbapi_connection, _record) -> None:
    """SQLite's write-ahead log, synchronous=NORMAL, on every connection of a file catalog.

    In WAL mode readers never block the writer, nor the writer them, and a commit is one append to the log instead of
    a rollback journal written, synced and deleted. With synchronous=NORMAL a commit is durable across a crash of
    the application (every worker killed mid-step), and only an operating system crash or a power cut can take back
    the last commits, never corrupting the database (sqlite.org, PRAGMA synchronous and "Write-Ahead Logging").
    That is safe for every row written after the host's change: a verified save, a deletion, a stored copy, an
    outcome. Their operation's intent stays open until its outcome lands, and the next step on that queue manager
    reconciles the open intent against the host (mqjournal.ibmi.reconcile). The intent itself is written before the
    command leaves, when nothing on the host can stand in for it: `Catalog.begin` commits it at synchronous=FULL.
    The mode stays with the database file; WAL needs the file's shared memory, so the catalog must be on a local
    disk, not a network share (which SQLite cannot lock either).
    """
    cursor = dbapi_connection.cursor()
    try:
        mode = _switch_to_wal(cursor)
        if mode != "wal":
            log.warning("backup catalog: SQLite kept journal mode %s, not WAL: each write costs more syncs", mode)
        cursor.execute(f"PRAGMA synchronous={_SYNCHRONOUS_NORMAL}")
    finally:
        cursor.close()


def _switch_to_wal(cursor) -> str:
    """PRAGMA journal_mode=WAL, waiting for the lock as long as the connection's busy timeout.

    SQLite answers this pragma "database is locked" at once, without calling the busy handler, while another
    connection converts the same new file or holds its write lock (two workers opening a new catalog together):
    the wait the busy timeout gives every other statement is given here by retrying."""
    (busy_ms,) = cursor.execute("PRAGMA busy_timeout").fetchone()
    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode=WAL").fetchone()
            return str(mode)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


# PRAGMA synchronous's levels (sqlite.org): NORMAL syncs the log at checkpoints, FULL at every commit too.
_SYNCHRONOUS_NORMAL, _SYNCHRONOUS_FULL = "NORMAL", "FULL"


SCHEMA_RECHECK_SECONDS = 60.0
"""How long a server catalog's schema, once found at this code's revision, is taken to stay there in this process."""
_SCHEMA_CHECKED: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()


def prepare_schema(engine: Engine, url: str, *, lock_timeout: float = 30.0) -> None:
    """The catalog database's tables (the catalog's and the SSH session leases') at the revision this code knows.

    On a database server, a schema found up to date is not looked at again for SCHEMA_RECHECK_SECONDS: a batch task
    opens the catalog for every queue manager and every SSH session, and the two reads of the check were one in eight
    of its statements, each a round trip that waits behind the worker's other threads (fleet_bench, #28). A newer
    mqjournal migrating the database meanwhile is still refused, at the next check. A catalog file is checked every
    time: the check costs no round trip, and the file can be removed and made again under the same path."""
    server = engine.dialect.name != "sqlite"
    checked = _SCHEMA_CHECKED.get(engine) if server else None
    if checked is not None and time.monotonic() - checked < SCHEMA_RECHECK_SECONDS:
        return
    # Imported here: Alembic is needed once a catalog is opened, not whenever a DAG file imports this module.
    from mqjournal import migrations

    with catalog_errors(url, "bring its schema up to date"):
        try:
            migrations.upgrade(engine, lock_timeout=lock_timeout)
        except migrations.UnknownRevision as exc:
            raise CatalogSchemaTooNew(
                f"backup catalog {display_url(url)}",
                f"its schema is at revision {', '.join(exc.found)}, which a newer mqjournal made (this one knows up "
                f"to {exc.known_head})",
                "upgrade mqjournal on this worker to the version the other workers run; the catalog was not changed",
            ) from None
    if server:
        _SCHEMA_CHECKED[engine] = time.monotonic()


_AUTOCOMMITTING: weakref.WeakKeyDictionary[Engine, Engine] = weakref.WeakKeyDictionary()


def _autocommitting(engine: Engine) -> Engine | None:
    """`engine` with no transaction around a statement, on a database server; None for a SQLite file.

    Reads need no transaction of their own there: at PostgreSQL's default isolation level, READ COMMITTED, every
    statement of a transaction sees its own snapshot anyway (PostgreSQL, "Transaction Isolation"), and no read of the
    catalog relies on two of its statements seeing one snapshot (each delete re-reads the host and the store itself).
    In a transaction a read cost four round trips, the pool's ping, BEGIN, the statement and the ROLLBACK that
    returned the connection; alone it costs two. A SQLite file keeps its transactions: they cost no round trip, and
    its readers want one snapshot."""
    if engine.dialect.name == "sqlite":
        return None
    with _ENGINES_LOCK:
        found = _AUTOCOMMITTING.get(engine)
        if found is None:
            found = _AUTOCOMMITTING[engine] = engine.execution_options(isolation_level="AUTOCOMMIT")
        return found


class Catalog:
    def __init__(self, url: str, *, lock_timeout: float = 30.0) -> None:
        self.url = url
        self.engine = engine_for(url, lock_timeout=lock_timeout)
        self._autocommit = _autocommitting(self.engine)
        prepare_schema(self.engine, url, lock_timeout=lock_timeout)

    @contextlib.contextmanager
    def _session(self, doing: str, *, write: bool = False, synced: bool = False) -> Iterator[Session]:
        """A session; with `write`, one transaction committed when the block ends. With `synced` too, on SQLite, the
        commit is on disk before the block ends, power cut or not (synchronous=FULL): an intent's (`_write_ahead`)."""
        with catalog_errors(self.url, doing):
            if write and synced and self.engine.dialect.name == "sqlite":
                with self.engine.connect() as connection:
                    _synchronous(connection, _SYNCHRONOUS_FULL)
                    try:
                        with Session(bind=connection) as session, session.begin():
                            yield session
                    finally:
                        _synchronous(connection, _SYNCHRONOUS_NORMAL)  # before the pool hands it out again
            elif not write and self._autocommit is not None:
                with Session(self._autocommit) as session:
                    yield session
            else:
                with Session(self.engine) as session:
                    if write:
                        with session.begin():
                            yield session
                    else:
                        yield session

    def _insert_once(self, table: type[_Base], row: dict, *key: str) -> None:
        """Add `row` unless a row with the same `key` columns exists: recording a fact twice keeps one row."""
        with self._session(f"record a row in {table.__tablename__}", write=True) as session:
            _add_once(session, table, row, *key)

    # --- operations: intent, then outcome ------------------------------------------------------------------

    def begin(self, operation: Operation) -> Operation:
        """Record that `operation` is about to be sent; raises CatalogUnavailable (then it must not be sent)."""
        row = operation.model_dump(exclude={"id"}) | {
            "state": "intent",
            "worker": operation.worker or str(Worker.this()),
            "started_at": datetime.now(UTC),
        }
        doing = f"record the intent to {operation.kind} {operation.receivers}"
        statement = insert(_Operation).returning(_Operation.id)
        if self._autocommit is not None:
            # One statement, committed and on the server's disk when it returns (synchronous_commit, on by
            # default): no BEGIN and COMMIT of its own, two round trips fewer for every command sent.
            with catalog_errors(self.url, doing), self._autocommit.connect() as connection:
                new_id = connection.execute(statement, row).scalar_one()
        else:
            # Synced: nothing on the host can stand in for an intent lost with the machine (`_write_ahead`).
            with self._session(doing, write=True, synced=True) as session:
                new_id = session.execute(statement, row).scalar_one()
        return Operation.model_validate(row | {"id": new_id})

    def finish(
        self,
        operation: Operation,
        state: OperationState,
        detail: str,
        *,
        saves: Iterable[SaveRecord] = (),
        deletions: Iterable[DeletionRecord] = (),
    ) -> None:
        """Record the outcome of `operation`, with what it proved on the host (`saves`, `deletions`, each recorded
        once as `record_save` and `record_deletion` do), in one transaction: the intent closes only with them. Lost
        together (the worker killed first), the intent stays open, and reconciling it reads them from the host."""
        with self._session(f"record the outcome of {operation.kind} {operation.receivers}", write=True) as session:
            _add_each_once(session, _Save, [save.model_dump() for save in saves], _SAVE_KEY)
            _add_each_once(session, _Deletion, [deletion.model_dump() for deletion in deletions], _DELETION_KEY)
            # One UPDATE by id, not a read of the row first: a round trip fewer per command on a catalog server.
            changed = session.execute(
                update(_Operation)
                .where(_Operation.id == operation.id)
                .values(state=state, detail=detail, finished_at=datetime.now(UTC))
                .execution_options(synchronize_session=False)
            )
            if changed.rowcount != 1:  # type: ignore[attr-defined]  # an UPDATE's result is a CursorResult
                raise LookupError(
                    f"operation {operation.id} ({operation.kind} {operation.receivers}) is not in the catalog"
                )

    def open_operations(self, host: str, qmgr_library: str) -> list[Operation]:
        """Intents without an outcome on one queue manager, oldest first."""
        with self._session("read the open operations") as session:
            rows = session.scalars(
                select(_Operation)
                .where(_Operation.host == host, _Operation.qmgr_library == qmgr_library, _Operation.state == "intent")
                .order_by(_Operation.id)
            ).all()
            return [Operation.model_validate(row) for row in rows]

    def operations(self, host: str) -> list[Operation]:
        with self._session("read the operations") as session:
            rows = session.scalars(select(_Operation).where(_Operation.host == host).order_by(_Operation.id)).all()
            return [Operation.model_validate(row) for row in rows]

    def record_save(self, record: SaveRecord) -> None:
        """Idempotent: recording the same save twice keeps one row."""
        self._insert_once(_Save, record.model_dump(), *_SAVE_KEY)

    def saves_of(self, host: str, library: str, receiver: str, attached_at: datetime | None = None) -> list[SaveRecord]:
        """Every verified save of a receiver, newest first (all of its incarnations unless `attached_at`)."""
        query = select(_Save).where(_Save.host == host, _Save.library == library, _Save.receiver == receiver)
        if attached_at is not None:
            query = query.where(_Save.attached_at == attached_at)
        with self._session("read the saves of a receiver") as session:
            rows = session.scalars(query.order_by(_Save.saved_at.desc())).all()
            return [SaveRecord.model_validate(row) for row in rows]

    def saves_of_each(
        self, host: str, incarnations: Iterable[ReceiverIncarnation]
    ) -> dict[ReceiverIncarnation, list[SaveRecord]]:
        """`saves_of` for many receiver incarnations (library, name, attach time) of one host, newest first: one
        query per _NAMES_PER_QUERY names instead of one per receiver (a step reads all of a queue manager's)."""
        found: dict[ReceiverIncarnation, list[SaveRecord]] = {key: [] for key in incarnations}
        names = sorted({name for _, name, _ in found})
        with self._session("read the saves of receivers") as session:
            for start in range(0, len(names), _NAMES_PER_QUERY):
                query = select(_Save).where(
                    _Save.host == host, _Save.receiver.in_(names[start : start + _NAMES_PER_QUERY])
                )
                for row in session.scalars(query.order_by(_Save.saved_at.desc())):
                    if (key := (row.library, row.receiver, row.attached_at)) in found:
                        found[key].append(SaveRecord.model_validate(row))
        return found

    def is_saved(self, host: str, library: str, receiver: str, attached_at: datetime) -> bool:
        return bool(self.saves_of(host, library, receiver, attached_at))

    def saves_for(self, host: str, qmgr_library: str) -> list[SaveRecord]:
        with self._session("read the saves of a queue manager") as session:
            rows = session.scalars(
                select(_Save).where(_Save.host == host, _Save.qmgr_library == qmgr_library).order_by(_Save.attached_at)
            ).all()
            return [SaveRecord.model_validate(row) for row in rows]

    def record_deletion(self, record: DeletionRecord) -> None:
        """Idempotent: a deletion reconciled after an interrupted step is recorded once."""
        self._insert_once(_Deletion, record.model_dump(), *_DELETION_KEY)

    def deletions_for(self, host: str, library: str, *, since: datetime | None = None) -> list[DeletionRecord]:
        """The receivers of LIBRARY on HOST deleted (at or after `since`), oldest first."""
        query = select(_Deletion).where(_Deletion.host == host, _Deletion.library == library)
        if since is not None:
            query = query.where(_Deletion.deleted_at >= since)
        with self._session("read the deletions") as session:
            rows = session.scalars(query.order_by(_Deletion.deleted_at)).all()
            return [DeletionRecord.model_validate(row) for row in rows]

    # --- library saves ----------------------------------------------------------------------------------------

    def record_library_save(self, record: LibrarySaveRecord) -> None:
        """Idempotent, like `record_save`."""
        self._insert_once(_LibrarySave, record.model_dump(), "host", "qmgr_library", "save_file_library", "save_file")

    def library_saves(
        self, host: str, qmgr_library: str, *, include_discarded: bool = False
    ) -> list[LibrarySaveRecord]:
        """Every library save of a queue manager, newest first."""
        with self._session("read the library saves") as session:
            rows = session.scalars(
                select(_LibrarySave)
                .where(_LibrarySave.host == host, _LibrarySave.qmgr_library == qmgr_library)
                .order_by(_LibrarySave.saved_at.desc())
            ).all()
            found = [LibrarySaveRecord.model_validate(row) for row in rows]
        if include_discarded:
            return found
        gone = self.discarded_save_files(host)
        return [s for s in found if s.save_file_path not in gone]

    # --- the per-receiver view --------------------------------------------------------------------------------

    def receivers(self, host: str, qmgr_library: str, *, include_discarded: bool = False) -> list[CatalogedReceiver]:
        """Every receiver of a queue manager the catalog has a save of, in attach order, each with its saves."""
        gone = set() if include_discarded else self.discarded_save_files(host)
        grouped: dict[tuple[str, str, datetime], list[SaveRecord]] = {}
        for save in self.saves_for(host, qmgr_library):
            if f"{save.save_file_library}/{save.save_file}" in gone:
                continue
            grouped.setdefault((save.library, save.receiver, save.attached_at), []).append(save)
        found = []
        for (library, name, attached_at), saves in grouped.items():
            saves.sort(key=lambda s: s.saved_at, reverse=True)
            latest = saves[0]
            found.append(
                CatalogedReceiver(
                    name=name,
                    library=library,
                    attached_at=attached_at,
                    detached_at=latest.detached_at,
                    first_sequence=latest.first_sequence,
                    last_sequence=latest.last_sequence,
                    previous=latest.previous,
                    next=latest.next,
                    size_bytes=latest.size_bytes,
                    saves=tuple(saves),
                )
            )
        return sorted(found, key=lambda r: r.attached_at)

    # --- the backup store -------------------------------------------------------------------------------------

    def record_stored(self, stored: StoredObject, proof: StoredProof = "copied") -> None:
        """A copy of a save file in a backup store with each receiver of its object list, and what proves it
        (`copied`: the copy step verified it; a rebuild records `claimed_by_sidecar`). Idempotent: one row per store
        and key, whose proof is not changed here (a rebuild into the catalog that made the copies leaves them
        proven)."""
        row = stored.model_dump(exclude={"objects", "sidecar"}) | {
            "objects": json.dumps([o.model_dump(mode="json") for o in stored.objects], separators=(",", ":")),
            "proof": proof,
        }
        with self._session("record a row in stored_objects", write=True) as session:
            added = _add_once(session, _Stored, row, "store_url", "key")
            if added is not None:
                session.flush()  # the new row's id, for its receivers
                session.add_all(_receivers_of(added.id, stored.host, stored.objects))

    def record_extent_copy(self, stored: StoredExtent) -> None:
        """A log extent copied into a backup store, its bytes vouched for by the host (idempotent per store and key).
        Refused unless the copy's SHA-256 is the host's: nothing unvouched is ever recorded as a copy."""
        if stored.sha256 != stored.host_sha256:
            raise ValueError(f"{stored.key}: its SHA-256 is not the host's; an unvouched copy is never recorded")
        row = stored.model_dump(exclude={"sidecar"})
        self._insert_once(_LinuxExtentCopy, row, "store_url", "key")

    def extent_copies(self, host: str, qmgr: str) -> list[StoredExtent]:
        """The log extents of a Linux queue manager copied into backup stores, oldest first."""
        query = select(_LinuxExtentCopy).where(_LinuxExtentCopy.host == host, _LinuxExtentCopy.qmgr == qmgr)
        with self._session("read the copies of log extents") as session:
            rows = session.scalars(query.order_by(_LinuxExtentCopy.created_at, _LinuxExtentCopy.id)).all()
            return [StoredExtent.model_validate(row, from_attributes=True) for row in rows]

    def stored_objects(self, host: str, qmgr: str | None = None, *, unproven: bool = False) -> list[StoredObject]:
        """The save files of a host (one queue manager's, with `qmgr`) in a backup store, oldest first: only those
        that prove their saves (`StoredCopy.proves`) unless `unproven`, for the readers that show, expire or restore
        copies rather than count them as backups (a restore checks the bytes it uploads anyway)."""
        query = select(_Stored).where(_Stored.host == host)
        if qmgr is not None:
            query = query.where(_Stored.qmgr == qmgr)
        if not unproven:
            query = query.where(*_PROVES)
        with self._session("read the stored objects") as session:
            rows = session.scalars(query.order_by(_Stored.created_at, _Stored.id)).all()
            return [_stored(row) for row in rows]

    def stored_copies(self, store_url: str, *, host: str | None = None) -> list[StoredCopy]:
        """Every stored object of one backup store (of one host), proven or not, with its proof and last re-read:
        the least recently verified first (the scrub's order)."""
        query = select(_Stored).where(_Stored.store_url == store_url)
        if host is not None:
            query = query.where(_Stored.host == host)
        with self._session("read the stored objects of a backup store") as session:
            rows = session.scalars(query.order_by(_Stored.id)).all()
            found = [
                StoredCopy.model_validate(
                    {
                        "stored": _stored(row),
                        "proof": row.proof,
                        "checked_at": row.proof_checked_at,
                        "problem": row.proof_problem,
                    }
                )
                for row in rows
            ]
        return sorted(found, key=lambda c: c.last_verified)

    def record_check(self, store_url: str, key: str, *, at: datetime, problem: str | None) -> None:
        """A stored object's bytes read again at `at`: matching (`problem` None), or not, and then it proves nothing
        until a later read matches again."""
        with self._session(f"record the check of {key}", write=True) as session:
            row = self._stored_row(session, store_url, key)
            if problem is None and (row.proof_problem or "").startswith(DRILL_PROBLEM):
                # Bytes that match their digest still list what they listed: only a drill that passes clears this.
                row.proof_checked_at = at
                return
            row.proof_checked_at, row.proof_problem = at, problem

    def record_proof(
        self, store_url: str, key: str, proof: StoredProof, *, at: datetime, host_sha256: str | None = None
    ) -> None:
        """A claimed stored object proven (`host_save_file`): from now on it counts as a backup. `host_sha256`: the
        host's digest of the save file that proved it, which vouches for the copy (StoredObject.vouched)."""
        with self._session(f"record the proof of {key}", write=True) as session:
            row = self._stored_row(session, store_url, key)
            row.proof, row.proof_checked_at, row.proof_problem = proof, at, None
            if host_sha256 is not None:
                row.host_sha256 = host_sha256

    # --- restore drills --------------------------------------------------------------------------------------

    def record_drill(self, record: DrillRecord) -> None:
        """A copy's drill and what it proved, in one transaction: `passed` on a claimed copy proves it
        (`restore_drill`); `failed` leaves the copy proving nothing until a later read or drill matches
        (`proof_problem`); `error` changes nothing about the copy."""
        with self._session(f"record the restore drill of {record.key}", write=True) as session:
            session.add(_RestoreDrill(**record.model_dump()))
            row = self._stored_row(session, record.store_url, record.key)
            if record.outcome == "passed":
                if row.proof not in PROVING:
                    row.proof = "restore_drill"
                row.proof_checked_at, row.proof_problem = record.drilled_at, None
            elif record.outcome == "failed":
                row.proof_checked_at = record.drilled_at
                row.proof_problem = f"{DRILL_PROBLEM}{record.run_id}: {record.problem}"

    def drills(self, *, host: str | None = None, qmgr: str | None = None) -> list[DrillRecord]:
        """Every restore drill (of a host, of one queue manager), oldest first."""
        query = select(_RestoreDrill)
        if host is not None:
            query = query.where(_RestoreDrill.host == host)
        if qmgr is not None:
            query = query.where(_RestoreDrill.qmgr == qmgr)
        with self._session("read the restore drills") as session:
            rows = session.scalars(query.order_by(_RestoreDrill.drilled_at, _RestoreDrill.id)).all()
            columns = [c.name for c in _RestoreDrill.__table__.columns if c.name != "id"]
            return [DrillRecord.model_validate({c: getattr(r, c) for c in columns}) for r in rows]

    def drill_count(self) -> int:
        """How many drills were ever recorded: the next scratch save file's number starts after it."""
        with self._session("count the restore drills") as session:
            return int(session.scalar(select(func.count(_RestoreDrill.id))) or 0)

    @staticmethod
    def _stored_row(session: Session, store_url: str, key: str) -> _Stored:
        row = session.scalars(select(_Stored).where(_Stored.store_url == store_url, _Stored.key == key)).first()
        if row is None:
            raise LookupError(f"{key} of {store_url} is not a stored object of the catalog")
        return row

    def off_partition_copies(
        self, host: str, library: str, receiver: str, attached_at: datetime | None = None
    ) -> list[StoredObject]:
        """The stored objects that prove their saves (`StoredCopy.proves`) and whose object list holds the receiver,
        newest first."""
        return self.off_partition_copies_of_each(host, [(library, receiver, attached_at)])[
            (library, receiver, attached_at)
        ]

    def off_partition_copies_of_each(
        self, host: str, incarnations: Iterable[tuple[str, str, datetime | None]]
    ) -> dict[tuple[str, str, datetime | None], list[StoredObject]]:
        """`off_partition_copies` for many receiver incarnations of one host (an attach time None: any of the name's
        incarnations), newest first: one indexed query per _NAMES_PER_QUERY names (stored_object_receivers)."""
        found: dict[tuple[str, str, datetime | None], list[StoredObject]] = {key: [] for key in incarnations}
        names = sorted({name for _, name, _ in found})
        rows: dict[int, _Stored] = {}  # by id: an object listing names of two queries is found by both
        with self._session("read the stored objects of receivers") as session:
            for start in range(0, len(names), _NAMES_PER_QUERY):
                listing = select(_StoredReceiver.stored_object_id).where(
                    _StoredReceiver.host == host, _StoredReceiver.receiver.in_(names[start : start + _NAMES_PER_QUERY])
                )
                rows |= {
                    row.id: row for row in session.scalars(select(_Stored).where(_Stored.id.in_(listing), *_PROVES))
                }
        # The object list itself decides (library and attach time too); the index only narrowed by host and name.
        for row in sorted(rows.values(), key=lambda r: (r.created_at, r.id), reverse=True):
            stored = _stored(row)
            for key, copies in found.items():
                if stored.holds(*key):
                    copies.append(stored)
        return found

    def is_backed_up_off_partition(
        self, host: str, library: str, receiver: str, attached_at: datetime | None = None
    ) -> bool:
        """True once a copy of a save file holding the receiver is in a backup store, verified there; until then,
        the only backup of the receiver is a save file on the same partition (lost with its disk or ASP)."""
        return bool(self.off_partition_copies(host, library, receiver, attached_at))

    def record_removed_from_host(
        self, host: str, save_file_library: str, save_file: str, store_key: str, run_id: str
    ) -> None:
        """The save file was deleted from the host, its verified copy `store_key` staying. Idempotent."""
        row = {
            "host": host,
            "save_file_library": save_file_library,
            "save_file": save_file,
            "store_key": store_key,
            "removed_at": datetime.now(UTC),
            "run_id": run_id,
        }
        self._insert_once(_RemovedFromHost, row, "host", "save_file_library", "save_file")

    def removed_from_host(self, host: str) -> set[str]:
        """The save files ("LIB/NAME") the cleanup step deleted from `host`."""
        with self._session("read the save files removed from the host") as session:
            rows = session.execute(
                select(_RemovedFromHost.save_file_library, _RemovedFromHost.save_file).where(
                    _RemovedFromHost.host == host
                )
            ).all()
            return {f"{lib}/{name}" for lib, name in rows}

    # --- discarded save files ---------------------------------------------------------------------------------

    def record_discarded(self, host: str, save_file_library: str, save_file: str, run_id: str) -> None:
        """The save file was deleted (backup expiry): its saves are no longer offered for a restore. Idempotent."""
        row = {
            "host": host,
            "save_file_library": save_file_library,
            "save_file": save_file,
            "discarded_at": datetime.now(UTC),
            "run_id": run_id,
        }
        self._insert_once(_Discarded, row, "host", "save_file_library", "save_file")

    def known_save_files(self, host: str) -> set[str]:
        """Every save file the catalog has ever named on `host` ("LIB/NAME"): a new save never takes one of these
        names, so a record about an earlier file (a save, a discard) can never be read as about the new one."""
        with self._session("read the known save files") as session:
            saved = session.execute(select(_Save.save_file_library, _Save.save_file).where(_Save.host == host)).all()
            operated = session.execute(
                select(_Operation.save_file_library, _Operation.save_file).where(
                    _Operation.host == host, _Operation.save_file.is_not(None)
                )
            ).all()
            library_saves = session.execute(
                select(_LibrarySave.save_file_library, _LibrarySave.save_file, _LibrarySave.directory_save_file).where(
                    _LibrarySave.host == host
                )
            ).all()
        names = {f"{lib}/{name}" for lib, name in saved} | {f"{lib}/{name}" for lib, name in operated}
        names |= {f"{lib}/{name}" for lib, name, _ in library_saves}
        names |= {f"{lib}/{name}" for lib, _, name in library_saves if name}
        return names | self.discarded_save_files(host)

    def discarded_save_files(self, host: str) -> set[str]:
        with self._session("read the discarded save files") as session:
            rows = session.execute(
                select(_Discarded.save_file_library, _Discarded.save_file).where(_Discarded.host == host)
            ).all()
            return {f"{lib}/{name}" for lib, name in rows}


_PROVES = (_Stored.proof.in_(sorted(PROVING)), _Stored.proof_problem.is_(None))
"""The rows `StoredCopy.proves`: a claimed copy, or one whose last re-read did not match, is not a backup."""

_NOT_IN_A_SIDECAR = {"id", "proof", "proof_checked_at", "proof_problem"}


def _stored(row: _Stored) -> StoredObject:
    values = {c.name: getattr(row, c.name) for c in _Stored.__table__.columns if c.name not in _NOT_IN_A_SIDECAR}
    return StoredObject.model_validate(values | {"objects": json.loads(row.objects)})


def _synchronous(connection: Connection, level: str) -> None:
    # Between transactions: SQLite applies the level to the commits that follow on this connection.
    connection.exec_driver_sql(f"PRAGMA synchronous={level}")
    connection.commit()


_Row = TypeVar("_Row", bound=_Base)


def _add_once(session: Session, table: type[_Row], row: dict, *key: str) -> _Row | None:
    """Add `row` unless a row with the same `key` columns exists (recording a fact twice keeps one row); the row
    added, or None."""
    exists = session.scalars(select(table).where(*(getattr(table, k) == row[k] for k in key)).limit(1)).first()
    if exists is not None:
        return None
    added = table(**row)
    session.add(added)
    return added


def _add_each_once(
    session: Session, table: type[_Save] | type[_Deletion], rows: list[dict], key: tuple[str, ...]
) -> None:
    """`_add_once` for many rows of receivers of one host: the rows already there read in one query per
    _NAMES_PER_QUERY receiver names (not one query per row), and the rest inserted in one statement. Nothing is
    written until they are all read, so a SQLite writer takes the database's one write lock at the end, not for the
    whole loop. Inserted as rows, not as objects for the session to flush: the session's unit of work was most of an
    operation's outcome (`finish`, 3.8 ms of CPU per command on a batch task's thread, fleet_bench)."""
    if not rows:
        return
    hosts = {row["host"] for row in rows}
    if len(hosts) != 1:
        raise ValueError(f"rows of one host at a time, not of {sorted(hosts)}")
    (host,) = hosts
    names = sorted({row["receiver"] for row in rows})
    columns = [getattr(table, k) for k in key]
    seen: set[tuple] = set()
    with session.no_autoflush:
        for start in range(0, len(names), _NAMES_PER_QUERY):
            query = select(*columns).where(
                table.host == host, table.receiver.in_(names[start : start + _NAMES_PER_QUERY])
            )
            seen |= {tuple(found) for found in session.execute(query)}
    new = []
    for row in rows:
        if (identity := tuple(row[k] for k in key)) not in seen:
            seen.add(identity)
            new.append(row)
    if new:
        session.execute(insert(table), new)


def _receivers_of(stored_object_id: int, host: str, objects: Iterable[SavedReceiver]) -> list[_StoredReceiver]:
    """A stored object's rows in stored_object_receivers: one per receiver name of its object list."""
    named = sorted({(o.library, o.receiver) for o in objects})
    return [
        _StoredReceiver(stored_object_id=stored_object_id, host=host, library=library, receiver=receiver)
        for library, receiver in named
    ]
