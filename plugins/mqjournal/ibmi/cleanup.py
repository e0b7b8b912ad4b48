"""The cleanup step: save files leave the partition once the backup store has held them verified long enough.

A save file on the partition it saves takes space on the same ASP as the receivers it freed, and is lost with it;
its copy in the backup store is the backup. So `keep_on_host_days` (policy) after its save, once its copy is
verified, the save file is deleted from the host (DLTF), and only when all of these hold right before:

- the store's copy verifies now (re-read in full, its size and SHA-256 those the catalog recorded: after the DLTF
  it is the only copy);
- the save file on the host is the one copied: its content (QSYS2.SAVE_FILE_OBJECTS) lists every receiver the
  copy's object list names, and the host's SHA-256 of it, read now with that list unchanged around it
  (`hostdigest.read_proof`), is the copy's (which the host vouched for when it was copied);
- the catalog does not mark it discarded (backup expiry deletes those, with their copies).

Age is measured on the partition's clock: the live snapshot's collection time minus the save time its receivers
show (SAVE_TIMESTAMP), as every other age on the host is.
Each DLTF is a catalog intent first and an outcome after (operation kind ``clean_up``), and a removal is recorded
(`Catalog.record_removed_from_host`): its saves stay offered for restores, from the store. A save file that is not
removed is kept with the reason; nothing here touches a receiver.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import StoredObject
from mqjournal.ibmi import commands, hostdigest
from mqjournal.ibmi.backups import SaveFileContent, save_file_contents
from mqjournal.ibmi.context import HostContext
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import OutcomeUnknown
from mqjournal.outcomes import CleanupResult
from mqjournal.policy import Policy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostCleanup(HostContext):
    """The cleanup step on one queue manager's save files."""

    def clean_up(self, policy: Policy) -> CleanupResult:
        result = CleanupResult(target=self.ref)
        store = self.store
        if store is None:
            return result  # nothing is copied off the partition, so nothing may leave it
        live = self.live()
        result.reconciled = self.reconciled(live)
        # Read once for both the choice and the measure (they grow with the host's history of save files).
        gone = self.catalog.removed_from_host(self.host) | self.catalog.discarded_save_files(self.host)
        copies = [
            s
            for s in self.catalog.stored_objects(self.host, self.target.qmgr)
            if s.store_url == store.url and s.qmgr_library == self.target.library
        ]
        due = self._due(copies, gone, live.collected_at, policy, result)
        if due:
            self._remove_due(store, due, result)
        self._measure(store, copies, gone | set(result.removed) | set(result.already_gone), result)
        return result

    def _remove_due(self, store: BackupStore, due: dict[str, StoredObject], result: CleanupResult) -> None:
        contents = save_file_contents(self.session, due)
        for path, stored in due.items():
            why = self._why_kept(store, stored, contents[path])
            if why is None and contents[path].exists is False:
                library, name = path.split("/")
                self.catalog.record_removed_from_host(self.host, library, name, stored.key, self.run_id)
                result.already_gone.append(path)
            elif why is None:
                why = self._remove(path, stored)
                if why is None:
                    result.removed.append(path)
            if why is not None:
                result.kept.append((path, why))

    def _measure(self, store: BackupStore, copies: list[StoredObject], gone: set[str], result: CleanupResult) -> None:
        """The bytes the save files copied into `store` still take on the host (all but those `gone` from it)."""
        copied = {s.save_file_path: s.size_bytes for s in copies}
        result.save_files_on_host_bytes = sum(size for path, size in copied.items() if path not in gone)
        result.store_bytes = store.total_bytes(self.host, self.target.qmgr)

    def _due(
        self, copies: list[StoredObject], gone: set[str], now: datetime, policy: Policy, result: CleanupResult
    ) -> dict[str, StoredObject]:
        """{"LIB/NAME": its newest verified copy} of the save files due to leave the host: of `copies` (this queue
        manager's in the store, oldest first), those not `gone` from it already."""
        due: dict[str, StoredObject] = {}
        library_saved = self._library_saves_made()
        for stored in copies:
            path = stored.save_file_path
            if path in gone:
                continue
            if _age(stored, now, library_saved.get(path)) < policy.keep_on_host:
                result.not_due.append(path)
            else:
                due[path] = stored  # oldest first: a later copy of the same file replaces an earlier one
        result.not_due = sorted(set(result.not_due) - set(due))
        return due

    def _library_saves_made(self) -> dict[str, datetime]:
        """{"LIB/NAME": when the library save was made, by the partition's clock} of this queue manager's library
        saves, both parts (SAVLIB's save file and the SAV of its IFS directory): a copy whose object list names no
        receiver has no other save time of the partition's."""
        made: dict[str, datetime] = {}
        for save in self.catalog.library_saves(self.host, self.target.library):
            for path in (save.save_file_path, save.directory_save_file_path):
                if path is not None:
                    made[path] = save.saved_at
        return made

    def _why_kept(self, store: BackupStore, stored: StoredObject, content: SaveFileContent) -> str | None:
        """Why the host's save file must stay (None: it may go, or it is gone already)."""
        # Against the catalog's digest, not the sidecar's: a copy replaced together with its sidecar agrees with
        # the sidecar, and after the DLTF it would be the only copy.
        problem = store.still_holds(stored)
        if problem is not None:
            return f"its copy in the backup store does not verify ({problem}): the host's save file stays"
        if content.exists is False:
            return None
        if not content.known:
            return "its content could not be read on the host now: kept until it can be"
        missing = [f"{o.library}/{o.receiver}" for o in stored.objects if not content.holds(o.library, o.receiver)]
        if missing:
            return f"the save file on the host does not list {' '.join(missing)}, which its stored copy does: kept"
        return self._digest_differs(stored)

    def _digest_differs(self, stored: StoredObject) -> str | None:
        """Why the host's bytes are not the stored copy's (None: the host's digest of the save file, read now with its
        object list unchanged around it, is the copy's SHA-256). After the DLTF the copy is the only one."""
        if not stored.vouched:
            return "its stored copy was never vouched for by the host's digest: kept"
        expected = ((o.library, o.receiver) for o in stored.objects)
        try:
            proof = hostdigest.read_proof(self.session, stored.save_file_library, stored.save_file, expected)
        except (hostdigest.HostDigestError, OutcomeUnknown) as exc:
            return f"the host's digest of it could not vouch for the copy ({exc.problem}): kept"
        if proof.sha256 != stored.sha256:
            return (
                f"the host's SHA-256 of it is {proof.sha256} where its stored copy's is {stored.sha256} (the save file "
                "changed since it was copied): kept"
            )
        return None

    def _remove(self, path: str, stored: StoredObject) -> str | None:
        """DLTF of the save file, an intent in the catalog first; why it failed, or None."""
        library, name = path.split("/")
        operation = self.catalog.begin(self.operation("clean_up", [], save_file_library=library, save_file=name))
        try:
            out = self.session.run(commands.delete_save_file(library, name))
        except OutcomeUnknown as lost:
            # The next step reads the host and records what happened (reconcile).
            return f"DLTF's answer was lost ({lost.problem}); the next step checks the host"
        messages = "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr))
        if out.exit_status != 0:
            self.catalog.finish(operation, "failed", messages or "DLTF failed")
            return f"DLTF failed: {messages or 'no message'}"
        self.catalog.record_removed_from_host(self.host, library, name, stored.key, self.run_id)
        self.catalog.finish(operation, "done", f"removed from the host; in the backup store as {stored.key}")
        log.info("%s %s: removed from the host, in the backup store as %s", self.host, path, stored.key)
        return None


def _age(stored: StoredObject, host_now: datetime, library_saved: datetime | None = None) -> timedelta:
    """How long ago the save file's save was made, by the partition's clock (its receivers' SAVE_TIMESTAMP, which
    the copy's object list carries, or the library save's time for a library save's file); by this machine's clock
    since the copy, for a copy with neither."""
    saved = [o.saved_at for o in stored.objects if o.saved_at is not None]
    if saved:
        return host_now - max(saved)
    if library_saved is not None:
        return host_now - library_saved
    return datetime.now(UTC) - stored.created_at
