"""Carry out an approved plan on a partition: save, verify, and delete only what is still deletable now.

Every step is idempotent, so an on-call engineer can rerun any of them:
- each step first reconciles what an interrupted earlier step left open (`reconcile`), from the host;
- save skips receivers whose catalogued save is proven on the host now, never reuses a save file that holds data,
  and counts a receiver saved only when the new save file's content lists it (QSYS2.SAVE_FILE_OBJECTS); then it
  copies every save file holding the wanted receivers into the backup store, unless a proven copy is there
  already (a rerun finishes a copy an earlier attempt lost), and records each verified copy in the catalog; a copy
  the store holds but the catalog does not count (an earlier attempt's, or one a rebuild recorded from its sidecar)
  is matched with the host's save file, bytes and object list, before it counts;
- delete takes a fresh checkpoint (RCDMQMIMG), re-reads AMQJRNINF, the recovery points and the chain, checks every
  catalogued save in the save files on the host and in the backup store (each copy counted on is read again in
  full and matched with the digest the catalog recorded), and deletes exactly what
  `rules.delete_decisions` allows (a save counts only once its copy is verified off the partition), oldest first,
  stopping at the first failure. Receivers already gone are skipped.
With `backup: site` the save step does nothing, and the delete step's proof is the live receiver's own save
history (SAVE_TIMESTAMP, status SAVED or FREED, old enough by the partition's clock) instead of the catalog.
Every save and delete is written to the catalog as an intent before its command is sent (a catalog that cannot be
written stops the step there, `CatalogUnavailable`) and its outcome after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mqjournal import rules
from mqjournal.backupstore import BackupStore, BackupStoreError, StoreObjectExists, StoreVerificationFailed, key_for
from mqjournal.catalog import DeletionRecord, SavedReceiver, SaveFileCopy, SaveRecord, StoredObject, StoredProof
from mqjournal.decisions import SaveVerdict, save_decisions, unproven_save
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands, hostdigest
from mqjournal.ibmi.backups import evidence_for, save_file_contents
from mqjournal.ibmi.collector import collect
from mqjournal.ibmi.context import HostContext
from mqjournal.ibmi.downloadroutes import route_for
from mqjournal.ibmi.hostdigest import HostDigestError
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.reconcile import save_record
from mqjournal.ibmi.refusals import refusal
from mqjournal.ibmi.savefiles import create_save_file, save_file_sizes
from mqjournal.ibmi.transfer import SaveFileTransferError, download_save_file
from mqjournal.ibmi.transport import CommandOutput, CommandTimedOut, OutcomeUnknown
from mqjournal.names import receiver_save_text, save_file_names, save_library_for
from mqjournal.outcomes import DeleteResult, SaveResult
from mqjournal.policy import Policy
from mqjournal.rules import BackupEvidence, DeleteReason, EvidenceKey
from mqjournal.snapshot import Receiver, receivers_by_name


class SaveFailed(MqJournalError):
    pass


LACKS_PROOF = frozenset({DeleteReason.NO_PROVEN_BACKUP, DeleteReason.NOT_SAVED_BY_SITE})
"""Why a delete the plan promised is refused for lack of a proven backup: work left undone, unlike a receiver that
is needed again or attached now (MQ's state moved on, and keeping it is the right outcome)."""


@dataclass(frozen=True)
class Executor(HostContext):
    """The save and delete steps of the maintenance run on one queue manager."""

    # --- save ----------------------------------------------------------------------------------------------

    def save(self, wanted: list[str], *, save_library: str, policy: Policy | None = None) -> SaveResult:
        if policy is not None and policy.site_backup:
            # The site's own backup saves the receivers (docs/site-backup.md): a save file of ours would only fill
            # the disk the deletes are meant to free. Nothing is sent to the host.
            asked = f" ({len(wanted)} asked for: {', '.join(wanted)})" if wanted else ""
            return SaveResult(
                target=self.ref,
                note=f"backup: site: the site's own backup saves the receivers, mqjournal saves none{asked}",
            )
        save_library = save_library_for(save_library, self.target.library)
        result = SaveResult(target=self.ref)
        live = self.live()
        result.reconciled = self.reconciled(live)
        on_host = receivers_by_name(live, self.target.library)
        evidence = evidence_for(
            self.session, self.catalog, self.host, [on_host[n] for n in wanted if n in on_host], self.store
        )
        todo: list[Receiver] = []
        to_copy: set[str] = set()
        held_in: dict[str, set[str]] = {}  # receiver -> the save files whose copy would prove it
        moved_on: set[str] = set()  # gone or attached on the host now: nothing to save, so nothing left undone
        for decision in save_decisions(wanted, live, evidence):
            if decision.verdict is SaveVerdict.NOT_SAVED:
                result.not_saved.append((decision.receiver, decision.detail))
                moved_on.add(decision.receiver)
            elif decision.verdict is SaveVerdict.ALREADY_SAVED:
                result.already_saved.append(decision.receiver)
                held_in[decision.receiver] = _not_yet_copied(evidence, on_host[decision.receiver])
                to_copy |= held_in[decision.receiver]
            else:
                todo.append(on_host[decision.receiver])
        compression = (policy or Policy()).save_compression
        for start in range(0, len(todo), commands.MAX_SAVOBJ_OBJECTS):
            batch = todo[start : start + commands.MAX_SAVOBJ_OBJECTS]
            saved_before = len(result.saved)
            if path := self._save_batch(batch, save_library, compression, result):
                to_copy.add(path)
                held_in |= {name: {path} for name in result.saved[saved_before:]}
        self._copy_off_partition(sorted(to_copy), result)
        result.unproven = _unproven([n for n in wanted if n not in moved_on], result, held_in)
        # What this step's save files take on the ASP: the run report's net space (mqjournal.space).
        result.save_file_bytes = save_file_sizes(self.session, result.save_files)
        return result

    def _save_batch(self, batch: list[Receiver], save_library: str, compression: str, result: SaveResult) -> str | None:
        """SAVOBJ of `batch` into a new save file; the save file's LIB/NAME when it holds a save to copy off."""
        save_file = self._new_save_file(save_library, batch)
        path = f"{save_library}/{save_file}"
        result.save_files.append(path)
        names = [r.name for r in batch]
        operation = self.catalog.begin(
            self.operation("save", names, save_file_library=save_library, save_file=save_file)
        )
        out = self.session.run(
            commands.save_receivers(self.target.library, names, save_library, save_file, compression=compression)
        )
        message = _messages(out) or "no message"
        # Only the save file's own content counts: SAVOBJ's answer, or a SAVE_TIMESTAMP set by another save of the
        # same library (the nightly SAVLIB) landing meanwhile, prove nothing about this file.
        content = save_file_contents(self.session, [path])[path]
        if content.receivers is None:
            # Not readable now: the save may well be there. The operation stays open, and the next step on this
            # queue manager reads the save file again and records what it holds (reconcile).
            why = f"{path} could not be read after SAVOBJ ({message}); the next run checks it again"
            result.not_saved += [(r.name, why) for r in batch]
            return None
        after = receivers_by_name(self.receivers_now(), self.target.library)
        saved: list[SaveRecord] = []
        for receiver in batch:
            now = after.get(receiver.name)
            in_file = content.holds(receiver.library, receiver.name)
            why = unproven_save(receiver, now, in_save_file=in_file, save_file=path, message=message)
            if why or now is None:
                result.not_saved.append((receiver.name, why))
            else:
                saved.append(
                    save_record(
                        now,
                        host=self.host,
                        qmgr=self.target.qmgr,
                        qmgr_library=self.target.library,
                        save_file_library=save_library,
                        save_file=save_file,
                        run_id=self.run_id,
                    )
                )
        # The saves, proven in the save file that exists now, and the outcome in one transaction.
        detail = f"{len(saved)} of {len(batch)} saved in {path}: {message}"
        self.catalog.finish(operation, "done", detail, saves=saved)
        result.saved += [s.receiver for s in saved]
        return path if saved else None

    # --- copy off the partition ------------------------------------------------------------------------------

    def _copy_off_partition(self, save_files: list[str], result: SaveResult) -> None:
        """Each save file ("LIB/NAME") copied into the backup store and recorded, unless the store has it verified.

        A copy that fails leaves the save on the host as it is, and its receivers not deletable: the next step
        (save or delete) on this queue manager copies it again."""
        if not save_files:
            return
        if self.store is None:
            why = "no backup store is configured, so the save file stays the only backup, on the partition it saves"
            result.not_copied += [(path, why) for path in save_files]
            return
        saves = self.catalog.saves_for(self.host, self.target.library)
        # A copy the host's digest never vouched for (made before copies were, or rebuilt from a sidecar) is matched
        # with the host's save file again by `_copy`.
        stored = {
            s.save_file_path
            for s in self.catalog.stored_objects(self.host, self.target.qmgr)
            if s.store_url == self.store.url and s.vouched
        }
        for path in save_files:
            if path in stored:
                continue
            in_file = [s for s in saves if f"{s.save_file_library}/{s.save_file}" == path]
            try:
                copy, proof = self._copy(self.store, path, in_file)
            except (SaveFileTransferError, BackupStoreError, HostDigestError) as exc:
                result.not_copied.append((path, str(exc)))
                continue
            self.catalog.record_stored(copy, proof)
            if proof == "host_save_file":  # a claimed or not yet vouched row is proven now, by the host's digest
                self.catalog.record_proof(
                    copy.store_url, copy.key, proof, at=datetime.now(UTC), host_sha256=copy.host_sha256
                )
            result.copied.append(copy.key)

    def _copy(self, store: BackupStore, path: str, saves: list[SaveRecord]) -> tuple[StoredObject, StoredProof]:
        """The save file's copy in the store, and what proves it: copied now, or, when a copy is there already (from
        an earlier attempt, or one a rebuild recorded from its sidecar), matched with the host's save file."""
        library, name = path.split("/")
        meta = SaveFileCopy(
            host=self.host,
            qmgr=self.target.qmgr,
            qmgr_library=self.target.library,
            save_file_library=library,
            save_file=name,
            # The run whose save made the file: a rerun that finishes the copy files it where the save was made.
            run_id=saves[0].run_id if saves else self.run_id,
            objects=tuple(SavedReceiver.from_save(s) for s in saves),
        )
        try:
            via = route_for(self.routes, self.host)
            return download_save_file(self.session, library, name, store, meta, via=via), "copied"
        except StoreObjectExists:
            pass
        # A copy is there: from an earlier attempt that stopped before the catalog row, one a rebuild recorded from
        # its sidecar, or one made before copies were vouched for by the host's digest. Its sidecar is only a claim:
        # the copy counts once its bytes are the host's save file's, by the host's own digest read now while the
        # save file's object list holds every receiver the copy names (hostdigest.read_proof).
        check = store.verify(key_for(meta))
        if not check.ok or check.stored is None:
            raise StoreVerificationFailed(
                check.key,
                f"a copy from an earlier attempt is in the store but does not verify ({check.problem})",
                "delete that copy from the store (it is no backup) and run the step again",
            ) from None
        stored = check.stored
        host = hostdigest.read_proof(self.session, library, name, ((o.library, o.receiver) for o in stored.objects))
        if host.sha256 != stored.sha256:
            raise StoreVerificationFailed(
                check.key,
                f"a copy of {path} is in the store but its {stored.size_bytes} bytes (SHA-256 {stored.sha256}) are "
                f"not the host's save file (the host's SHA-256 {host.sha256}, {host.tool}); it proves no save",
                "delete that copy from the store (BackupStore.delete: it is no backup of this save file) and run the "
                "save step again, which copies the host's save file",
            )
        return stored.model_copy(update={"host_sha256": host.sha256}), "host_save_file"

    def _new_save_file(self, save_library: str, batch: list[Receiver]) -> str:
        """A save file of its own for this batch: a rerun never writes into an earlier save."""
        today = self.tz.local(datetime.now(UTC)).date()  # the save file's name and text: the partition's day
        return create_save_file(
            self.session,
            host=self.host,
            library=save_library,
            names=save_file_names(self.target.library, today),
            text=receiver_save_text(self.target.qmgr, batch[0].name, batch[-1].name, today),
            known=self.catalog.known_save_files(self.host),
            error=SaveFailed,
        )

    # --- delete --------------------------------------------------------------------------------------------

    def delete(self, approved: list[str], *, policy: Policy) -> DeleteResult:
        result = DeleteResult(target=self.ref)
        # As the seeds' procedure does: a fresh checkpoint right before deleting, so AMQJRNINF and AMQ7460/AMQ7462
        # describe now, not the moment the plan was made (it may have waited hours for approval).
        live = collect(self.session, self.target, host=self.host, run_id=self.run_id, tz=self.tz)
        result.reconciled = self.reconciled(live)
        on_host = receivers_by_name(live, self.target.library)
        # With the site's backup the live receivers' save history is the proof (docs/planning-rules.md, section
        # 6.1): no save file or store is read, so a partition without QSYS2.SAVE_FILE_OBJECTS can still be cleaned.
        evidence = (
            {}
            if policy.site_backup
            else evidence_for(
                self.session, self.catalog, self.host, [on_host[n] for n in approved if n in on_host], self.store
            )
        )
        stopped: str | None = None
        for decision in rules.delete_decisions(approved, live, evidence, policy=policy):
            if decision.reason is DeleteReason.ALREADY_GONE:
                result.already_gone.append(decision.receiver)
            elif not decision.delete:
                result.kept.append((decision.receiver, decision.detail))
                if decision.reason in LACKS_PROOF:
                    result.unproven.append((decision.receiver, decision.detail))
            elif stopped is not None:
                result.kept.append((decision.receiver, f"{stopped}, older in the chain, was not deleted"))
            else:
                failure = self._delete_one(on_host[decision.receiver], ignore_inquiry=decision.ignore_inquiry)
                if failure is None:
                    result.deleted.append(decision.receiver)
                    result.freed_bytes += on_host[decision.receiver].size_bytes or 0
                else:
                    result.kept.append((decision.receiver, f"DLTJRNRCV failed: {failure}"))
                    result.failed, stopped = (decision.receiver, failure), decision.receiver
        return result

    def _delete_one(self, receiver: Receiver, *, ignore_inquiry: bool) -> str | None:
        """DLTJRNRCV of one receiver, written to the catalog as an intent first; the failure, or None."""
        option = "*IGNINQMSG" if ignore_inquiry else "*NONE"
        attached_at = rules.attached_at(receiver)  # a chain member always has one: the catalog keys on it
        operation = self.catalog.begin(
            self.operation("delete", [receiver.name], attached_at=attached_at, delete_option=option)
        )
        try:
            out = self.session.run(
                commands.delete_receiver(receiver.library, receiver.name, ignore_inquiry=ignore_inquiry)
            )
            ok = out.exit_status == 0
            # A refusal whatever its message IDs (those DLTJRNRCV sends are not verified): its reasons are reported.
            message = _messages(out) if ok else str(refusal(receiver.library, receiver.name, out))
        except OutcomeUnknown as lost:
            # The answer was lost: the host says whether it happened.
            ok = receiver.name not in receivers_by_name(self.live(), receiver.library)
            if not ok and isinstance(lost.__cause__, CommandTimedOut):
                # Still running, perhaps (a CPA7025 inquiry waits for an operator): it may yet delete the receiver.
                # The intent stays open, and the next step records what the host then shows.
                return f"DLTJRNRCV did not answer within the timeout and may still be running ({lost.problem})"
            message = "the connection dropped during DLTJRNRCV" + ("" if ok else " and the receiver is still there")
        if not ok:
            self.catalog.finish(operation, "failed", message or "DLTJRNRCV failed")
            return message or "DLTJRNRCV failed"
        deletion = DeletionRecord(
            host=self.host,
            qmgr=self.target.qmgr,
            receiver=receiver.name,
            library=receiver.library,
            attached_at=attached_at,
            deleted_at=datetime.now(UTC),
            delete_option=option,
            run_id=self.run_id,
        )
        # The deletion with the outcome: lost together, the open intent is reconciled into it from the host.
        self.catalog.finish(operation, "done", message or "deleted", deletions=[deletion])
        return None


def _not_yet_copied(evidence: Mapping[EvidenceKey, Sequence[BackupEvidence]], receiver: Receiver) -> set[str]:
    """The save files on the host that hold `receiver` but have no verified copy in the store."""
    found = evidence.get((receiver.library, receiver.name, rules.attached_at(receiver)), ())
    if any(e.proven for e in found):
        return set()
    return {e.save_file for e in found if e.saved_on_host}


def _unproven(wanted: Sequence[str], result: SaveResult, held_in: Mapping[str, set[str]]) -> list[tuple[str, str]]:
    """The wanted receivers the save step leaves without a backup off the partition, in the order asked: its save
    not proven (SAVOBJ did not put it in the save file, or the file could not be read), or saved only in save files
    none of which was copied into the backup store now (a delete needs a verified copy, rules.BackupEvidence.proven).
    `wanted` leaves out the receivers the host has moved on from (gone, or attached again)."""
    not_saved = dict(result.not_saved)
    not_copied = dict(result.not_copied)
    out: list[tuple[str, str]] = []
    for name in wanted:
        if name in not_saved:
            out.append((name, f"not saved: {not_saved[name]}"))
            continue
        files = held_in.get(name, set())
        if files and files <= not_copied.keys():
            path = sorted(files)[0]
            out.append((name, f"its save file {path} was not copied into the backup store: {not_copied[path]}"))
    return out


def _messages(out: CommandOutput) -> str:
    return "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr))
