"""Archive a Linux queue manager's log extents: copied off the host into the backup store, proven, catalogued (#32).

For each extent the plan says to archive (linuxmq/plan.py: any S extent behind the one being written), in order:
1. The host's SHA-256 of the extent (`sha256sum <extent>` on Linux; on AIX the digest program found there:
   linuxmq/extentdigest.py; `certutil -hashfile <extent> SHA256` on Windows), read beside the download (2.): the
   digest the copy must have. MQ has finished writing any extent but the current one (q129100: any S extent but
   the current one may be archived "because the queue manager has finished writing to them"), so its bytes do not
   change; one that MQ reused or deleted meanwhile
   (Automatic mode, another job) fails the digest or the download, or arrives as other bytes, and nothing is kept.
2. The download over SFTP (ibmi/sftpcopy: OpenSSH's client where the login allows it, reads in flight, resumed after
   a drop), each attempt in the audit log as `SFTP GET <path>` before its first request and its outcome after.
3. The store keeps the bytes only when their SHA-256 is the host's (ExtentStore.put's vouch), then the catalog
   records the copy. Nothing else counts as a copy of an extent: the release step lets an extent go only against
   one of these.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from mqjournal.backupstore import BackupStoreError
from mqjournal.catalog import Catalog, ExtentCopy, ExtentToCopy, StoredExtent
from mqjournal.errors import MqJournalError
from mqjournal.ibmi.transfer import remote_file
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession
from mqjournal.linuxmq.extentdigest import host_sha256
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore, extent_key
from mqjournal.linuxmq.platforms import LINUX, HostPlatform

__all__ = ["ArchiveError", "ExtentNotVouched", "archive_extent"]

log = logging.getLogger(__name__)


class ArchiveError(MqJournalError):
    """An extent could not be copied off its host with proof: nothing of it is kept or recorded."""


class ExtentNotVouched(ArchiveError):
    """The bytes that arrived are not the ones the host's digest describes."""


def _host_digest(session: IbmiSession, platform: HostPlatform, active: str, extent: Extent, where: str) -> str:
    found = host_sha256(session, platform, active, extent)
    if found.sha256 is None:
        raise ArchiveError(
            where,
            f"the host gave no SHA-256 of {platform.file_path(active, extent.name)} ({found.said})",
            "check that the extent is still there (MQ may have reused or deleted it: LogManagement) and that the user "
            "may read it (group mqm); an extent without the host's digest is never counted as copied",
        )
    return found.sha256


def _copied_before(store: ExtentStore, copy: ExtentCopy) -> StoredExtent | None:
    """The copy a run made already at this copy's key, when it is of the bytes the host vouches for now and the store
    still holds them; None when there is none. Another copy at the key is refused: a backup is never overwritten."""
    found = store.get(extent_key(copy))
    if found is None:
        return None
    problem = store.still_holds(found, reread=True)
    if found.sha256 != copy.host_sha256 or problem is not None:
        raise ArchiveError(
            f"{copy.host} {copy.qmgr} {copy.extent}",
            f"the store holds another copy at {found.key} ({problem or 'not the bytes the host digests now'})",
            "look at that copy: if it is no backup, delete it from the store, then archive again",
        )
    return found


def archive_extent(
    session: IbmiSession,
    *,
    qmgr: str,
    active: str,
    extent: Extent,
    run_id: str,
    store: ExtentStore,
    catalog: Catalog,
    platform: HostPlatform = LINUX,
) -> StoredExtent:
    """Copy `extent` of `qmgr` (in its log's `active` directory) into `store` with the host's proof (by its
    `platform`'s digest program), and record it."""
    where = f"{session.host} {qmgr} {extent.name}"
    if extent.reusable:
        raise ArchiveError(where, "an R extent is MQ's, kept for reuse: it holds no log to archive", "archive S only")
    target = ExtentToCopy(host=session.host, qmgr=qmgr, extent=extent.name, run_id=run_id)
    if store.get(extent_key(target)) is not None:
        # A rerun after a copy whose record was lost with its worker: that copy, if it is of the bytes the host
        # digests now.
        copy = ExtentCopy(**target.model_dump(), host_sha256=_host_digest(session, platform, active, extent, where))
        already = _copied_before(store, copy)
        if already is not None:
            catalog.record_extent_copy(already)
            return already
    path = platform.sftp_path(active, extent.name)  # `/C:/...` on Windows (its SFTP server's form)
    # The host's digest while the bytes come: both read the whole extent, which MQ no longer writes, and the copy is
    # kept only when its bytes hash to that digest, so side by side proves what one after the other does.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="extent-digest") as pool:
        digest = pool.submit(_host_digest, session, platform, active, extent, where)

        def vouch(sha256: str) -> str:
            host_sha256 = digest.result()
            if sha256 != host_sha256:
                raise ExtentNotVouched(
                    where,
                    f"the copy's SHA-256 {sha256} is not the host's {host_sha256}: not the extent's bytes; nothing "
                    "was kept",
                    "archive it again; if it keeps differing, look at the file on the host and at the link",
                )
            return host_sha256

        remote = remote_file(session, path)
        try:
            with remote:
                size = remote.open()
                stored = store.put(remote.chunks(), target, expected_size=size, vouch=vouch)
        except (HostUnreachable, ConnectionLost) as exc:
            remote.done("transport_error", error=str(exc))
            raise
        except (MqJournalError, OSError) as exc:
            remote.done("failed", error=str(exc))
            if (refused := digest.exception()) is not None:
                raise refused from None  # the host has no such extent, or may not read it: its own words say so
            if isinstance(exc, (ArchiveError, BackupStoreError)):
                raise
            raise ArchiveError(where, f"the download of {path} failed ({exc})", "archive it again") from exc
    remote.done("ok", sha256=stored.sha256)
    catalog.record_extent_copy(stored)
    log.info("%s: archived into %s (%d bytes)", where, stored.key, stored.size_bytes)
    return stored
