"""What IBM MQ's logger does to a linear log: pure transitions of a `LinuxQueueManager` (no I/O, no clock of its own).

The rules, with their sources (docs/linux-interfaces.md; "verified" = an IBM page or a capture says it):
- Extents fill in turn; a full extent makes the next number current, and "the next number after 9 999 999 is zero"
  (q018510, verified). In Automatic and Archive modes a new extent reuses an `R` extent when one is waiting (renamed
  to the new `S` number) and AMQ7490I counts "created / reused / deleted" (verified: lab-spike, q083360). Manual mode
  never reuses or deletes (ASSUMED from "You need to manage linear logs yourself", q018480).
- A checkpoint sets RECLOG to the oldest of the current extent and the extents the open units of work began in: a
  unit of work that never ends holds RECLOG (the "stuck" case; verified as a rule, q018480/RDO).
- rcdmqimg moves each imaged object's media image to the current extent; MEDIALOG is the oldest image of any
  recoverable object, so a damaged object (never imaged again) holds it (RDO, verified). Whether rcdmqimg also takes
  a checkpoint is not found: here it does not.
- After a checkpoint, images or an archive notification, Automatic mode renames to `R` every extent needed by
  neither restart nor media recovery; Archive mode only those also notified archived; Manual mode leaves them
  (q083360, q129100, RDO verified). Which extents are needed is `linuxmq.extents.fate`'s rule, the planner's own.
  ASSUMED: MQ keeps at most LogPrimaryFiles `R` extents and deletes the oldest beyond that (the lab-spike saw
  deletions counted, not the threshold).
- SET LOG ARCHIVED fails unless LogManagement is Archive (MQRCCF_LOG_TYPE_ERROR), for the current extent
  (MQRCCF_CURRENT_LOG_EXTENT), for an extent it does not know or an `R` one (MQRCCF_LOG_EXTENT_NOT_FOUND, "not found
  or is not valid"); a repeat succeeds (q129100, q129110 verified). RESET QMGR TYPE(ARCHLOG) marks every extent up to
  the named one, here across the wrap (whether MQ follows the wrap is not found). TYPE(ADVANCELOG) starts a new
  extent (q088290, verified).
- strmqm replays from RECLOG: every extent from RECLOG to the current one must be on disk, else AMQ6767 names the
  first one missing (RDO, "Managing log files" 9.4: the ID verified, its text not found). rcrmqobj needs every extent
  from the object's image on (RDO, verified). ASSUMED: a start rolls back the units of work in flight (AMQ7233I) and
  ends with a checkpoint; endmqm takes one too, a crash does not.
- An extent's bytes are the simulator's own (SIMPLIFICATION: not MQ's format): a keyed stream of LogFilePages x 4096
  bytes determined by the queue manager's name and the extent's number, the same however often it is read, so that
  a digest taken on the host equals the one a client takes of what it downloaded.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

from mqjournal.errors import InvalidName
from mqjournal.linuxmq.commands import OBJECT_TYPES
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, Fate, LogManagement, LogPoints, fate
from mqjournal.linuxsim.model import ExtentNumber, LinuxQueueManager, LogExtent, RecoverableObject, UnitOfWork

CHUNK_BYTES = 64 * 1024
"""How much of an extent's content is made at a time (an SFTP read's worth, twice)."""


class LoggerError(Exception):
    """A command MQ refuses, with the message ID or reason code it gives (ASSUMED where the docs found none)."""

    msg_id = ""

    def __init__(self, subject: str, reason: str) -> None:
        self.subject, self.reason = subject, reason
        super().__init__(f"{type(self).__name__}({subject}): {reason}" + (f" ({self.msg_id})" if self.msg_id else ""))


class QueueManagerNotRunning(LoggerError):
    msg_id = "AMQ8146E"


class QueueManagerRunning(LoggerError):
    """strmqm of a running queue manager (mq-ansible takes its rc 5 as "already running")."""


class NotArchiveMode(LoggerError):
    """SET LOG ARCHIVED or RESET QMGR TYPE(ARCHLOG) on a queue manager whose LogManagement is not Archive."""

    msg_id = "MQRCCF_LOG_TYPE_ERROR"


class CurrentExtent(LoggerError):
    """The extent being written cannot be notified archived."""

    msg_id = "MQRCCF_CURRENT_LOG_EXTENT"


class ExtentNotFound(LoggerError):
    """An extent the queue manager does not know (no such file), or a name that is not an extent's."""

    msg_id = "MQRCCF_LOG_EXTENT_NOT_FOUND"


class ReusableExtent(LoggerError):
    """An `R` extent, waiting for reuse: never archived nor notified (q129100)."""

    msg_id = "MQRCCF_LOG_EXTENT_NOT_FOUND"


class ExtentMissing(LoggerError):
    """Restart or media recovery needs an extent that is not in `active/`, or not as the queue manager wrote it."""

    msg_id = "AMQ6767E"


class ExtentBusy(LoggerError):
    """The current extent of a running queue manager (SIMPLIFICATION: Linux would unlink it; the simulator refuses)."""


class ObjectNotFound(LoggerError):
    msg_id = "AMQ8147E"  # ASSUMED: "IBM MQ object <name> not found."


# --- order across the wrap -------------------------------------------------------------------------------------


def behind(number: ExtentNumber, current: ExtentNumber) -> int:
    """How many extents `number` is behind `current`, across the wrap."""
    return (current - number) % EXTENT_NUMBERS


def next_number(number: ExtentNumber) -> ExtentNumber:
    return (number + 1) % EXTENT_NUMBERS


def points(qm: LinuxQueueManager) -> LogPoints:
    """CURRLOG, RECLOG and MEDIALOG as the planner reads them."""
    return LogPoints(current=Extent(qm.current), restart=Extent(qm.restart), media=Extent(qm.media))


def unneeded(qm: LinuxQueueManager, number: ExtentNumber) -> bool:
    """Needed by neither restart nor media recovery, by the planner's own rule (`fate` without a mode's say: the
    Archive reading of it is the plain rule, Automatic hands every extent to MQ)."""
    return fate(Extent(number), points(qm), LogManagement.ARCHIVE) is Fate.RELEASABLE


def _oldest(numbers: Iterable[ExtentNumber], current: ExtentNumber) -> ExtentNumber:
    return max([current, *numbers], key=lambda n: behind(n, current))


def _require_running(qm: LinuxQueueManager) -> None:
    if not qm.running:
        raise QueueManagerNotRunning(qm.name, "IBM MQ queue manager not available")


# --- writing --------------------------------------------------------------------------------------------------


def write(qm: LinuxQueueManager, nbytes: int, *, at: datetime) -> None:
    """Log records of `nbytes` fill the current extent; a full extent makes the next one current."""
    _require_running(qm)
    if nbytes < 0:
        raise ValueError(f"cannot write {nbytes} bytes")
    qm.bytes_logged += nbytes
    qm.bytes_since_image += nbytes
    remaining = nbytes
    while remaining:
        extent = qm.extent(qm.current)
        assert extent is not None, "a running queue manager's current extent is on disk"
        take = min(qm.extent_size - extent.written, remaining)
        extent.written += take
        extent.modified = at
        remaining -= take
        if extent.written >= qm.extent_size:
            _switch(qm, at)


def advance_log(qm: LinuxQueueManager, *, at: datetime) -> None:
    """RESET QMGR TYPE(ADVANCELOG): start writing a new extent, so that the previous one may be archived."""
    _require_running(qm)
    _switch(qm, at)


def _switch(qm: LinuxQueueManager, at: datetime) -> None:
    new = next_number(qm.current)
    waiting = sorted((e for e in qm.extents.values() if e.reusable), key=lambda e: -behind(e.number, qm.current))
    if qm.log_management is not LogManagement.MANUAL and waiting:
        del qm.extents[waiting[0].name]  # renamed: R0000009.LOG becomes the new S extent
        qm.reused += 1
    else:
        qm.created += 1
    extent = LogExtent(number=new, modified=at)
    qm.extents[extent.name] = extent
    qm.current = new


# --- checkpoints, media images, release -----------------------------------------------------------------------


def checkpoint(qm: LinuxQueueManager) -> None:
    """RECLOG moves to the oldest of the current extent and each open unit of work's first extent."""
    _require_running(qm)
    qm.restart = _oldest((u.began_in for u in qm.units_of_work), qm.current)
    qm.checkpoints += 1
    release(qm)


def open_unit_of_work(qm: LinuxQueueManager, uow_id: str) -> None:
    _require_running(qm)
    qm.units_of_work.append(UnitOfWork(id=uow_id, began_in=qm.current))


def end_unit_of_work(qm: LinuxQueueManager, uow_id: str) -> None:
    qm.units_of_work = [u for u in qm.units_of_work if u.id != uow_id]


@dataclass(frozen=True)
class Images:
    """What rcdmqimg did: the objects imaged, and the damaged ones it could not image."""

    imaged: tuple[str, ...]
    damaged: tuple[str, ...]


def matching(qm: LinuxQueueManager, object_type: str, generic: str) -> list[RecoverableObject]:
    """The recoverable objects of `object_type` (an OBJECT_TYPES key) whose name matches `generic` (`*` at the end
    matches any tail). KeyError for an unknown type."""
    wanted = OBJECT_TYPES[object_type.lower()]
    prefix, star, _ = generic.partition("*")

    def named(name: str) -> bool:
        return name.startswith(prefix) if star else name == generic

    return [o for o in qm.objects if (wanted is None or o.type == wanted) and named(o.name)]


def record_media_images(
    qm: LinuxQueueManager, generic: str = "*", object_type: str = "all", *, at: datetime | None = None
) -> Images:
    """rcdmqimg: each matching undamaged object's image moves to the current extent; MEDIALOG becomes the oldest
    image of any recoverable object (a damaged object's image never moves, and holds MEDIALOG)."""
    _require_running(qm)
    found = matching(qm, object_type, generic)
    if not found:
        raise ObjectNotFound(generic, "no recoverable object of that name and type")
    for obj in found:
        if not obj.damaged:
            obj.image_extent = qm.current
    qm.media = _oldest((o.image_extent for o in qm.objects), qm.current)
    if at is not None:
        qm.last_image_at = at
    qm.bytes_since_image = 0
    release(qm)
    return Images(
        imaged=tuple(o.name for o in found if not o.damaged), damaged=tuple(o.name for o in found if o.damaged)
    )


def damage(qm: LinuxQueueManager, name: str) -> None:
    """An object becomes damaged (AMQ7472): it cannot be imaged until rcrmqobj re-creates it."""
    for obj in qm.objects:
        if obj.name == name:
            obj.damaged = True
            return
    raise ObjectNotFound(name, "no recoverable object of that name")


def release(qm: LinuxQueueManager) -> None:
    """Automatic: every extent needed by neither restart nor media recovery becomes `R`; Archive: only those also
    notified archived; Manual: nothing. Then `R` extents beyond LogPrimaryFiles are deleted, oldest first."""
    if qm.log_management is LogManagement.MANUAL:
        return
    for extent in list(qm.extents.values()):
        if extent.reusable or extent.number == qm.current or not unneeded(qm, extent.number):
            continue
        if qm.log_management is LogManagement.ARCHIVE and not extent.archived:
            continue
        del qm.extents[extent.name]
        renamed = extent.model_copy(update={"reusable": True})
        qm.extents[renamed.name] = renamed
    waiting = sorted((e for e in qm.extents.values() if e.reusable), key=lambda e: behind(e.number, qm.current))
    for extent in waiting[qm.log_primary_files :]:
        del qm.extents[extent.name]
        qm.deleted += 1


# --- archive notification -------------------------------------------------------------------------------------


def _known_extent(qm: LinuxQueueManager, name: str) -> LogExtent:
    """The `S` extent SET LOG / RESET QMGR names, or the refusal MQ gives."""
    _require_running(qm)
    if qm.log_management is not LogManagement.ARCHIVE:
        raise NotArchiveMode(name, f"log management is {qm.log_management.value}, not Archive")
    try:
        extent = Extent.parse(name)
    except InvalidName:
        raise ExtentNotFound(name, "not a log extent name") from None
    if extent.reusable:
        raise ReusableExtent(name, "an extent waiting for reuse cannot be archived")
    if extent.number == qm.current:
        raise CurrentExtent(name, "the queue manager is writing this extent")
    found = qm.extents.get(name)
    if found is None:
        raise ExtentNotFound(name, "the queue manager has no such extent")
    return found


def set_log_archived(qm: LinuxQueueManager, name: str) -> bool:
    """SET LOG ARCHIVED(name): the extent is notified archived. True when it already was (MQ accepts the repeat and
    writes a message to its error log)."""
    extent = _known_extent(qm, name)
    repeat = extent.archived
    extent.archived = True
    release(qm)
    return repeat


def reset_archlog(qm: LinuxQueueManager, name: str) -> None:
    """RESET QMGR TYPE(ARCHLOG) ARCHIVED(name): every `S` extent up to `name` (across the wrap) is notified."""
    target = _known_extent(qm, name)
    for extent in qm.extents.values():
        if not extent.reusable and behind(target.number, qm.current) <= behind(extent.number, qm.current):
            extent.archived = True
    release(qm)


def archive_waiting(qm: LinuxQueueManager) -> list[LogExtent]:
    """Archive mode: the `S` extents, except the current one, not yet notified archived, oldest first."""
    if qm.log_management is not LogManagement.ARCHIVE:
        return []
    waiting = [e for e in qm.extents.values() if not e.reusable and not e.archived and e.number != qm.current]
    return sorted(waiting, key=lambda e: -behind(e.number, qm.current))


# --- start, end, recovery -------------------------------------------------------------------------------------


def first_missing(qm: LinuxQueueManager, since: ExtentNumber) -> str | None:
    """The first extent from `since` to the current one (across the wrap) not on disk as written, or None."""
    number = since
    for _ in range(behind(since, qm.current) + 1):
        extent = qm.extent(number)
        if extent is None or not extent.intact:
            return Extent(number).name
        number = next_number(number)
    return None


def start(qm: LinuxQueueManager, *, at: datetime) -> None:
    """strmqm: replays the log from RECLOG, so every extent from it to the current one must be there."""
    if qm.running:
        raise QueueManagerRunning(qm.name, "IBM MQ queue manager running")
    missing = first_missing(qm, qm.restart)
    if missing is not None:
        raise ExtentMissing(missing, f"log file {missing} needed to start queue manager {qm.name} is not available")
    qm.running, qm.ended, qm.started_at = True, None, at
    qm.units_of_work = []  # in flight at the end: rolled back during the recovery phase
    checkpoint(qm)


def end(qm: LinuxQueueManager, *, immediate: bool = False) -> None:
    """endmqm: applications are disconnected, their units of work rolled back, and a shutdown checkpoint taken."""
    _require_running(qm)
    qm.units_of_work = []
    checkpoint(qm)
    qm.running, qm.ended = False, "immediately" if immediate else "normally"


def crash(qm: LinuxQueueManager) -> None:
    """The queue manager's processes die (kill -9, power loss): no checkpoint, RECLOG stays where it was."""
    qm.running, qm.ended = False, "unexpectedly"


def recreate_objects(qm: LinuxQueueManager, object_type: str, generic: str) -> list[str]:
    """rcrmqobj: each matching object is re-created from its last image and the log after it, which must all be in
    `active/` (AMQ6767 names the first extent missing, and nothing is re-created)."""
    _require_running(qm)
    found = matching(qm, object_type, generic)
    if not found:
        raise ObjectNotFound(generic, "no recoverable object of that name and type")
    for obj in found:
        missing = first_missing(qm, obj.image_extent)
        if missing is not None:
            raise ExtentMissing(missing, f"log file {missing} needed to re-create {obj.name} is not available")
    for obj in found:
        obj.damaged = False
    return [o.name for o in found]


# --- files --------------------------------------------------------------------------------------------------


def remove_extent(qm: LinuxQueueManager, name: str) -> None:
    """`rm` of an extent file. MQ does not notice until it needs the file (restart, media recovery)."""
    Extent.parse(name)  # InvalidName for anything that is not an extent's name
    if name not in qm.extents:
        raise ExtentNotFound(name, "No such file or directory")
    if qm.running and name == Extent(qm.current).name:
        raise ExtentBusy(name, "the queue manager is writing this extent")
    del qm.extents[name]


def restore_extent(qm: LinuxQueueManager, name: str, chunks: Iterable[bytes], *, at: datetime) -> LogExtent:
    """A file written back into `active/`: intact only when its bytes are those the queue manager wrote.

    SIMPLIFICATION: the restored extent counts as full and not notified archived (MQ's log control file, which
    would remember both, is not modelled)."""
    digest, size = hashlib.sha256(), 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return restore_extent_hashed(qm, name, size, digest.hexdigest(), at=at)


def restore_extent_hashed(qm: LinuxQueueManager, name: str, size: int, sha256: str, *, at: datetime) -> LogExtent:
    """restore_extent for bytes already counted and hashed as they arrived (an SFTP upload)."""
    extent = Extent.parse(name)
    if extent.reusable:
        raise ReusableExtent(name, "only S extents are restored")
    intact = size == qm.extent_size and sha256 == extent_digest(qm.name, extent.number, qm.extent_size)
    written = 0 if extent.number == qm.current else qm.extent_size
    short = None if size == qm.extent_size else size
    restored = LogExtent(number=extent.number, written=written, intact=intact, modified=at, size=short)
    qm.extents[name] = restored
    return restored


def extent_bytes(qm: LinuxQueueManager, number: ExtentNumber) -> Iterator[bytes]:
    """The content of extent `number`, in chunks: the same bytes on every read, never held whole."""
    return content(qm.name, number, qm.extent_size)


def content(qm_name: str, number: ExtentNumber, size: int) -> Iterator[bytes]:
    key = hashlib.sha256(f"mqjournal-linuxsim/{qm_name}/{number:07d}".encode()).digest()
    stream = Cipher(algorithms.ChaCha20(key, bytes(16)), mode=None).encryptor()
    for offset in range(0, size, CHUNK_BYTES):
        yield stream.update(bytes(min(CHUNK_BYTES, size - offset)))


def content_at(qm_name: str, number: ExtentNumber, size: int, offset: int, length: int) -> bytes:
    """`length` bytes of the content from `offset` (an SFTP read): ChaCha20's block counter is set to the 64-byte
    block holding `offset`, so no byte before it is made."""
    end = min(size, offset + length)
    if offset >= end:
        return b""
    key = hashlib.sha256(f"mqjournal-linuxsim/{qm_name}/{number:07d}".encode()).digest()
    block, skip = divmod(offset, 64)
    # cryptography's ChaCha20 nonce: the 32-bit block counter (little-endian), then the 96-bit nonce (zeros here).
    stream = Cipher(algorithms.ChaCha20(key, block.to_bytes(4, "little") + bytes(12)), mode=None).encryptor()
    return stream.update(bytes(skip + end - offset))[skip:]


@functools.lru_cache(maxsize=1024)
def extent_digest(qm_name: str, number: ExtentNumber, size: int) -> str:
    """SHA-256 (hex) of an extent's content; cached, as the content never changes."""
    digest = hashlib.sha256()
    for chunk in content(qm_name, number, size):
        digest.update(chunk)
    return digest.hexdigest()
