"""Backup expiry in the backup store: the copies of save files the catalog has discarded leave the store too.

A save file discarded by backup expiry (mqjournal.recovery.expiry, run by the RecoveryExecutor) is no longer offered
for any restore, but its verified copy in the backup store would stay forever: the DLTF only reaches the partition.
So after the executor ran, every copy of a discarded save file is deleted from the store.

The order is what keeps the catalog right. The executor records a save file discarded once the host shows it gone
(its DLTF succeeded, or it was already gone: the cleanup step removes copied save files from the partition, so a
save file expiry proposes may live only in the store by then). Copies are deleted only after that record. A store
that fails halfway therefore leaves copies no restore is offered, found again and deleted by the next run, never a
catalog that offers a copy that is gone. The catalog keeps its stored_objects rows: they are history, and every
reader asks for saves of files not discarded.

Deleting is idempotent (a copy already gone is reported as such), and each deletion is audited: an intent record
before the store is touched and an outcome after, in the store's audit log (settings.store_audit_log), as the audit
log does for commands sent to hosts.

On a store that keeps older versions (an S3 bucket with versioning or object lock: mqjournal.storeversions) a
deletion only hides the copy: its bytes stay until the bucket's lifecycle rule or its retention lets them go. Such
copies are reported as kept as older versions, and no freed bytes are counted for them.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Collection
from dataclasses import dataclass, field
from time import monotonic

from mqjournal.backupstore import BackupStore, BackupStoreError, check_key
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.ibmi.audit import AuditLog
from mqjournal.storeversions import keeps_older_versions

log = logging.getLogger(__name__)

STORE_USER = "backup-store"
"""The `user` of a store deletion's audit records: no IBM i user profile is involved."""


def in_store(store: BackupStore, key: str) -> bool:
    """Whether anything of `key` is in the store: its sidecar, or its object (a deletion cut off between the two
    leaves the object without its sidecar: still to be removed)."""
    return store.get(key) is not None or bool(store.fs.exists(posixpath.join(store.root, check_key(key))))


def discarded_copies(
    catalog: Catalog, host: str, qmgr: str, save_files: Collection[str] | None = None
) -> list[StoredObject]:
    """The catalog's copies of the queue manager's save files that it records discarded (of `save_files`, LIB/NAME,
    when given), oldest first, in any store."""
    discarded = catalog.discarded_save_files(host)
    return [
        s
        for s in catalog.stored_objects(host, qmgr, unproven=True)  # a claimed copy goes with its save file too
        if s.save_file_path in discarded and (save_files is None or s.save_file_path in save_files)
    ]


def leftover_copies(catalog: Catalog, store: BackupStore, host: str, qmgr: str) -> list[StoredObject]:
    """Copies still in `store` of save files discarded earlier: a run that stopped between the host and the store
    (or `mqjournal recover --kind expiry`, which deletes on the host only) left them."""
    return [s for s in discarded_copies(catalog, host, qmgr) if s.store_url == store.url and in_store(store, s.key)]


@dataclass
class StoreExpiryResult:
    """What deleting the discarded copies of one queue manager did."""

    deleted: list[str] = field(default_factory=list)  # keys removed now
    freed_bytes: int = 0  # what the removed copies took in the store, where it got the bytes back
    kept_as_versions: list[str] = field(default_factory=list)  # keys hidden by the deletion, their bytes kept by the
    # store as older versions (versioning, object lock): its lifecycle rule or retention frees them, not mqjournal
    already_gone: list[str] = field(default_factory=list)  # keys not in the store any more (an earlier run)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (key, why): still in the store, the next run retries
    not_approved: list[str] = field(default_factory=list)  # keys of discarded files the approver did not see
    elsewhere: list[str] = field(default_factory=list)  # "url key" of copies in another store: not reachable here


def expire_copies(
    catalog: Catalog,
    store: BackupStore,
    *,
    host: str,
    qmgr: str,
    approved: Collection[str],
    audit: AuditLog,
) -> StoreExpiryResult:
    """Delete from `store` every copy of the queue manager's discarded save files whose key is in `approved` (the
    keys the approval gate showed). A copy whose save file the catalog does not record discarded is never touched,
    whatever `approved` says: the host's DLTF did not happen (or was not confirmed), so the save may still be
    offered. A failing store is reported per key, and the others are still tried."""
    result = StoreExpiryResult()
    versions: bool | None = None  # asked once, and only when a copy is to be deleted
    for stored in discarded_copies(catalog, host, qmgr):
        if stored.store_url != store.url:
            result.elsewhere.append(f"{stored.store_url} {stored.key}")
        elif stored.key not in approved:
            result.not_approved.append(stored.key)
        else:
            if versions is None:
                versions = keeps_versions(store)
            _expire(store, stored, audit, result, versioned=versions)
    if result.elsewhere:
        log.warning(
            "%s/%s: copies of discarded save files in another backup store are left there (delete them with that "
            "store's tools): %s",
            host,
            qmgr,
            "; ".join(result.elsewhere),
        )
    return result


def keeps_versions(store: BackupStore) -> bool:
    """Whether deleting from `store` leaves the bytes as older versions; True when the store cannot tell."""
    try:
        return keeps_older_versions(store.fs, store.root)
    except OSError as exc:
        # Counting bytes as freed that the store kept would be the worse error: count none.
        log.warning(
            "%s: could not tell whether the store keeps older versions (%s): no bytes counted freed", store.url, exc
        )
        return True


def _expire(
    store: BackupStore, stored: StoredObject, audit: AuditLog, result: StoreExpiryResult, *, versioned: bool
) -> None:
    where = f"{stored.save_file_path} of {stored.host} {stored.qmgr}"
    try:
        if not in_store(store, stored.key):
            result.already_gone.append(stored.key)
            return
    except (BackupStoreError, OSError) as exc:
        # A sidecar that cannot be read is still deleted: the catalog has discarded the save file anyway.
        log.info("%s: the store's copy %s does not read (%s): deleting it all the same", where, stored.key, exc)
    command = f"DELETE {store.url}/{stored.key}"
    intent = audit.intent(host=stored.host, user=STORE_USER, command=command, attempt=1)
    started = monotonic()
    try:
        store.delete(stored.key)
    except (BackupStoreError, OSError) as exc:
        _audit(audit, stored, command, intent, started, "failed", str(exc))
        log.error("%s: the copy %s could not be deleted from %s: %s", where, stored.key, store.url, exc)
        result.failed.append((stored.key, f"{type(exc).__name__}: {exc}"))
        return
    _audit(audit, stored, command, intent, started, "ok")
    result.deleted.append(stored.key)
    if versioned:
        log.info(
            "%s: discarded, so its copy %s was deleted from %s's view; the store keeps its %d bytes as an older "
            "version (versioning or object lock) until its lifecycle rule or retention removes them",
            where,
            stored.key,
            store.url,
            stored.size_bytes,
        )
        result.kept_as_versions.append(stored.key)
        return
    log.info(
        "%s: discarded, so its copy %s (%d bytes) was deleted from %s", where, stored.key, stored.size_bytes, store.url
    )
    result.freed_bytes += stored.size_bytes


def _audit(
    audit: AuditLog,
    stored: StoredObject,
    command: str,
    intent: str,
    started: float,
    outcome: str,
    error: str | None = None,
) -> None:
    audit.record(
        host=stored.host,
        user=STORE_USER,
        command=command,
        exit_status=0 if outcome == "ok" else None,
        msg_ids=[],
        duration_ms=(monotonic() - started) * 1000,
        attempt=1,
        outcome=outcome,
        error=error,
        intent_id=intent,
    )
