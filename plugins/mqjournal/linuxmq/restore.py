"""Restore plans for a Linux queue manager's log (#32): the extents a restart or a media recovery needs that are not
in its log directory, the copies to put back, and the upload that proves each on the host.

IBM (RDO; docs/linux-interfaces.md section 6): a restart replays the log from RECLOG, so every extent from RECLOG to
the current one must be in `<LogPath>active/`; media recovery of an object (`rcrmqobj`) reads from the object's
media image on, so every extent from MEDIALOG (the oldest image) to the current one; a missing one is AMQ6767 and
the queue manager does not start, or the object is not re-created. AMQ6767's text is not known, so nothing here
reads it: the points come from the queue manager's last snapshot (its RECLOG, MEDIALOG and CURRLOG as collected) and
what is missing from the directory as it is listed now.

An extent is put back only from a copy whose bytes the host vouched for when it was archived (the catalog's), read
back from the store with its SHA-256 checked as it is read, written whole into a file that is not there (never over
one: an extent on disk is MQ's), and proven on the host after the upload by its own digest (`sha256sum` on Linux,
the program found there on AIX: linuxmq/extentdigest.py, certutil on Windows): a file that is not the copy is removed
again, and the restore says so. A file there that is shorter than the copy (the extent's size on this
host) is no extent MQ wrote but what an upload cut short left, its worker killed before it could remove it: it is
removed, and the copy put in its place.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from mqjournal.catalog import StoredExtent
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.transfer import TransferAudit
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession, TransportError
from mqjournal.linuxmq.extentdigest import host_sha256
from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.platforms import LINUX, HostPlatform
from mqjournal.linuxmq.snapshot import LinuxSnapshot

__all__ = ["ExtentRestorePlan", "RestoreError", "plan_range", "plan_restore", "restore_extent"]

CHUNK = 256 * 1024
log = logging.getLogger(__name__)


class RestoreError(MqJournalError):
    """An extent could not be put back with proof: nothing of it is left on the host."""


@dataclass(frozen=True)
class ExtentRestorePlan:
    host: str
    qmgr: str
    missing: tuple[str, ...]  # needed and not in the directory, oldest first
    copies: dict[str, StoredExtent]  # of those, the ones a proven copy exists for (the newest copy)
    gaps: tuple[str, ...]  # needed, missing, and no copy: the plan cannot bring the queue manager back alone

    @property
    def complete(self) -> bool:
        return not self.gaps


def _from(first: Extent, current: Extent) -> list[str]:
    count = first.behind(current) + 1
    return [Extent((first.number + n) % EXTENT_NUMBERS).name for n in range(count)]


def plan_restore(
    snapshot: LinuxSnapshot, on_disk: Iterable[str], copies: Iterable[StoredExtent], *, media: bool = True
) -> ExtentRestorePlan:
    """What to put back so that the queue manager restarts (and, with `media`, so that media recovery of every
    object finds its log), from its last snapshot's points and the extents in its directory now."""
    points = snapshot.points()
    if points is None:
        raise RestoreError(
            f"{snapshot.host} {snapshot.qmgr}",
            "its last snapshot has no log points (a circular log, or its status was not read)",
            "a circular log is restored whole from a queue manager backup, not extent by extent",
        )
    first = points.oldest_needed if media else points.restart
    return plan_range(snapshot.host, snapshot.qmgr, first, points.current, on_disk, copies)


def plan_range(
    host: str, qmgr: str, first: Extent, last: Extent, on_disk: Iterable[str], copies: Iterable[StoredExtent]
) -> ExtentRestorePlan:
    """What to put back so that every extent from `first` to `last` (across the wrap) is in the directory: the ones
    not `on_disk`, each from its newest copy the host vouched for, or a gap."""
    present = set(on_disk)
    missing = tuple(name for name in _from(first, last) if name not in present)
    newest: dict[str, StoredExtent] = {}
    for copy in sorted(copies, key=lambda c: c.created_at):
        if copy.host == host and copy.qmgr == qmgr and copy.sha256 == copy.host_sha256:
            newest[copy.extent] = copy
    found = {name: newest[name] for name in missing if name in newest}
    gaps = tuple(name for name in missing if name not in found)
    return ExtentRestorePlan(host, qmgr, missing, found, gaps)


def restore_extent(
    session: IbmiSession, *, active: str, copy: StoredExtent, store: ExtentStore, platform: HostPlatform = LINUX
) -> None:
    """Upload `copy` into `active` on its host as its extent file, then prove it there with the host's digest."""
    where = f"{session.host} {copy.qmgr} {copy.extent}"
    path = platform.sftp_path(active, copy.extent)  # `/C:/...` on Windows (its SFTP server's form)
    problem = store.still_holds(copy, reread=True)
    if problem is not None:
        raise RestoreError(
            where, f"its copy does not verify: {problem}", "restore from another copy, or treat it as lost"
        )
    digest, sent, opened = hashlib.sha256(), 0, False  # once opened for writing, a failure leaves a file of ours
    audit: TransferAudit | None = None
    try:
        with session.sftp() as sftp:
            there = None
            with contextlib.suppress(FileNotFoundError):
                there = sftp.stat(path)
            if there is not None and there.st_size is not None and there.st_size < copy.size_bytes:
                # Shorter than the extent's own copy (its size on this host): no extent MQ wrote, but what an upload
                # of it cut short left behind (its worker killed before it could take it back). The copy the host
                # vouched for goes in its place.
                log.warning("%s: %s is %d bytes, not %d: an upload cut short; taken back", where, path,
                            there.st_size, copy.size_bytes)  # fmt: skip
                removed = session.run(platform.remove_extent(active, Extent.parse(copy.extent)))
                # rm's status, or del's words (del exits 0 either way: docs/windows-interfaces.md section 3).
                refused = platform.removal_refused(removed, platform.file_path(active, copy.extent))
                if refused is not None:
                    raise RestoreError(
                        where,
                        f"{path} is what an upload cut short left ({there.st_size} of {copy.size_bytes} bytes), and "
                        f"it could not be removed: {refused}",
                        "remove it yourself (it is not the extent), then restore again",
                    )
                there = None
            if there is not None:
                raise RestoreError(
                    where,
                    f"{path} is on the host already: an extent on disk is the queue manager's, never written over",
                    "if it is damaged, move it aside yourself (it may be evidence), then restore again",
                )
            with store.open_copy(copy) as source:
                audit = TransferAudit(session, "put", path, 1)  # the intent, before the first byte leaves
                with sftp.open(path, "wb") as target:
                    opened = True
                    target.set_pipelined(True)
                    while chunk := source.read(CHUNK):
                        digest.update(chunk)
                        target.write(chunk)
                        sent += len(chunk)
    except (HostUnreachable, ConnectionLost) as exc:
        if audit is None:
            raise
        audit.done("transport_error", error=str(exc), size_bytes=sent)
        if opened:
            _take_back(session, active, copy, where, platform)
        raise
    except (OSError, MqJournalError) as exc:
        if audit is None:
            raise
        audit.done("failed", error=str(exc), size_bytes=sent)
        if opened:
            # The file was not there before this upload (stat said so): what it left is ours and not the extent.
            # Left in place it would pass for the extent, and the next plan would not put the extent back.
            _take_back(session, active, copy, where, platform)
        if isinstance(exc, MqJournalError):
            raise
        raise RestoreError(where, f"the upload of {path} failed ({exc})", "restore it again") from exc
    assert audit is not None  # the file was opened and written
    audit.done("ok", size_bytes=sent, sha256=digest.hexdigest())
    said = host_sha256(session, platform, active, Extent.parse(copy.extent)).sha256
    if digest.hexdigest() != copy.sha256 or said != copy.sha256:
        written = platform.file_path(active, copy.extent)
        out = session.run(platform.remove_extent(active, Extent.parse(copy.extent)))  # ours, and not the copy
        refused = platform.removal_refused(out, written)  # rm's status, del's words: a file left passes for the extent
        wrong = (
            f"the file written on the host is not the copy (sent {digest.hexdigest()}, the host says {said}, the copy "
            f"is {copy.sha256})"
        )
        if refused is not None:
            raise RestoreError(
                where,
                f"{wrong}, and it could not be removed again ({refused}): {written} is not the extent",
                "remove that file on the host first, then restore it again",
            )
        raise RestoreError(
            where,
            f"{wrong}; it was removed again",
            "restore it again; if it keeps differing, look at the link and the store",
        )


def _take_back(session: IbmiSession, active: str, copy: StoredExtent, where: str, platform: HostPlatform) -> None:
    """Remove what a cut-off upload of `copy` left; when the host cannot be reached for it, say where it is."""
    path = platform.file_path(active, copy.extent)
    try:
        out = session.run(platform.remove_extent(active, Extent.parse(copy.extent)))
    except TransportError as exc:
        log.error(
            "%s: an upload was cut off and what it left at %s could not be removed (%s): remove it before the "
            "extent is restored again, or the queue manager reads half a file",
            where,
            path,
            exc.problem,
        )
        return
    # rm -f's status, or del's words (del exits 0 either way): a file left here would pass for the extent.
    if (refused := platform.removal_refused(out, path)) is not None:
        log.error(
            "%s: an upload was cut off and what it left at %s was not removed (%s): remove it before the extent is "
            "restored again, or the queue manager reads half a file",
            where,
            path,
            refused,
        )
