"""Carry out an approved plan on a partition: save, verify, and delete only what is still deletable now.

Every step is idempotent, so an on-call engineer can rerun any of them:
- save skips receivers the host and the catalog both show saved, and never reuses a save file that holds data;
- delete re-reads AMQJRNINF and the chain on the live host, re-applies the rules (`rules.plan_queue_manager`), and
  deletes oldest first, only receivers that are approved, deletable now and verifiably saved, stopping at the
  first that is not or that fails. Receivers already gone are skipped.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

from mqjournal import rules
from mqjournal.catalog import Catalog, DeletionRecord, SaveRecord
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.collector import Target, read_state
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import IbmiSession, OutcomeUnknown
from mqjournal.policy import Policy
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot

SAVE_FILE_SLOTS = 10


class SaveFailed(MqJournalError):
    pass


@dataclass
class SaveResult:
    saved: list[str] = field(default_factory=list)
    already_saved: list[str] = field(default_factory=list)
    not_saved: list[tuple[str, str]] = field(default_factory=list)  # (receiver, why)
    save_files: list[str] = field(default_factory=list)  # LIB/NAME


@dataclass
class DeleteResult:
    deleted: list[str] = field(default_factory=list)
    already_gone: list[str] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (receiver, why), in chain order
    failed: tuple[str, str] | None = None  # (receiver, message) that stopped the run


@dataclass(frozen=True)
class Executor:
    session: IbmiSession
    target: Target
    host: str
    tz: timezone
    catalog: Catalog
    run_id: str

    def live(self) -> Snapshot:
        return read_state(self.session, self.target, host=self.host, run_id=self.run_id, tz=self.tz)

    # --- save ----------------------------------------------------------------------------------------------

    def save(self, wanted: list[str], *, save_library: str) -> SaveResult:
        result = SaveResult()
        live = self.live()
        on_host = _by_name(live, self.target.library)
        todo: list[Receiver] = []
        for name in wanted:
            receiver = on_host.get(name)
            if receiver is None:
                result.not_saved.append((name, "not on the system"))
            elif receiver.status == ReceiverStatus.ATTACHED:
                result.not_saved.append((name, "attached: it is saved once it has been detached"))
            elif rules.is_saved(receiver) and self.catalog.is_saved(self.host, receiver.library, name, receiver.attached_at):
                result.already_saved.append(name)
            else:
                todo.append(receiver)
        for start in range(0, len(todo), commands.MAX_SAVOBJ_OBJECTS):
            self._save_batch(todo[start : start + commands.MAX_SAVOBJ_OBJECTS], save_library, live.collected_at, result)
        return result

    def _save_batch(self, batch: list[Receiver], save_library: str, started: datetime, result: SaveResult) -> None:
        save_file = self._new_save_file(save_library)
        result.save_files.append(f"{save_library}/{save_file}")
        out = self.session.run(
            commands.save_receivers(self.target.library, [r.name for r in batch], save_library, save_file)
        )
        message = "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr)) or "no message"
        # Verify on the host, whatever SAVOBJ said: only what the partition shows saved counts.
        after = _by_name(self.live(), self.target.library)
        for receiver in batch:
            now = after.get(receiver.name)
            verified = (
                now is not None
                and now.attached_at == receiver.attached_at
                and rules.is_saved(now)
                and now.saved_at >= started
            )
            if not verified:
                result.not_saved.append((receiver.name, f"the save could not be verified on the host ({message})"))
                continue
            self.catalog.record_save(
                SaveRecord(
                    host=self.host,
                    qmgr=self.target.qmgr,
                    qmgr_library=self.target.library,
                    receiver=now.name,
                    library=now.library,
                    attached_at=now.attached_at,
                    detached_at=now.detached_at,
                    first_sequence=now.first_sequence,
                    last_sequence=now.last_sequence,
                    previous=now.previous,
                    next=now.next,
                    size_bytes=receiver.size_bytes,
                    save_file_library=save_library,
                    save_file=save_file,
                    saved_at=now.saved_at,
                    verified_at=datetime.now(timezone.utc),
                    run_id=self.run_id,
                )
            )
            result.saved.append(receiver.name)

    def _new_save_file(self, save_library: str) -> str:
        """A save file of its own for this queue manager and run: a rerun never overwrites an earlier save."""
        digest = hashlib.sha1(f"{self.host}/{self.target.library}/{self.run_id}".encode()).digest()
        stem = "MQJ" + base64.b32encode(digest).decode()[:6]
        for slot in range(SAVE_FILE_SLOTS):
            name = f"{stem}{slot}"
            out = self.session.run(commands.create_save_file(save_library, name))
            if out.exit_status == 0:
                return name
            if "CPF5813" not in out.msg_ids:
                raise SaveFailed(
                    f"save file {save_library}/{name} on {self.host}",
                    "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr)) or "CRTSAVF failed",
                    "check the save library exists and the user profile may create files in it",
                    msg_id=out.msg_ids[-1] if out.msg_ids else None,
                )
        raise SaveFailed(
            f"save files {stem}0-9 in {save_library} on {self.host}",
            "every save file slot of this run is used",
            "rerun as a new DAG run (a new run id), or clear old save files after backing them up",
        )

    # --- delete --------------------------------------------------------------------------------------------

    def delete(self, approved: list[str], *, policy: Policy) -> DeleteResult:
        result = DeleteResult()
        live = self.live()
        on_host = _by_name(live, self.target.library)
        result.already_gone = [name for name in approved if name not in on_host]
        pending = [name for name in approved if name in on_host]
        qm, rows = rules.plan_queue_manager(live, [live], as_of=live.collected_at, policy=policy)
        if qm.blocked:
            result.kept = [(name, f"blocked on the live host: {qm.block_reason}") for name in pending]
            return result
        action = {(r.receiver, r.library): (r.action, r.reason) for r in rows}
        chain = rules.chain_of(live)
        remaining = [r for r in chain if r.name in pending]
        result.kept += [(name, "not in the journal's receiver chain") for name in pending if name not in {r.name for r in chain}]
        for receiver in chain:  # oldest first, as DLTJRNRCV requires
            if not remaining:
                break
            if receiver is not remaining[0]:
                result.kept += [(r.name, f"{receiver.name}, older in the chain, is not approved for deletion") for r in remaining]
                break
            why = self._why_kept(receiver, action[(receiver.name, receiver.library)])
            failure = None if why is not None else self._delete_one(receiver)
            if why is not None or failure is not None:
                result.kept.append((receiver.name, why or f"DLTJRNRCV failed: {failure}"))
                result.kept += [(r.name, f"{receiver.name}, older in the chain, was not deleted") for r in remaining[1:]]
                if failure is not None:
                    result.failed = (receiver.name, failure)
                break
            result.deleted.append(receiver.name)
            remaining.pop(0)
        return result

    def _why_kept(self, receiver: Receiver, planned: tuple[str, str]) -> str | None:
        action, reason = planned
        if action not in rules.DELETES:
            return f"not deletable now ({reason})"
        if not self.catalog.is_saved(self.host, receiver.library, receiver.name, receiver.attached_at):
            return "not verifiably saved: no verified save in the catalog"
        if not rules.is_saved(receiver) and not self._catalog_proves(receiver):
            return "the host does not show it saved and the catalog's save does not cover all of its entries"
        return None

    def _catalog_proves(self, receiver: Receiver) -> bool:
        saves = self.catalog.saves_of(self.host, receiver.library, receiver.name, receiver.attached_at)
        return any(s.last_sequence == receiver.last_sequence and s.detached_at is not None for s in saves)

    def _delete_one(self, receiver: Receiver) -> str | None:
        # *IGNINQMSG only where the catalog proves the save; otherwise a never-saved receiver would wait on CPA7025.
        ignore = not rules.is_saved(receiver) and self._catalog_proves(receiver)
        try:
            out = self.session.run(commands.delete_receiver(receiver.library, receiver.name, ignore_inquiry=ignore))
            ok = out.exit_status == 0
            message = "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr))
        except OutcomeUnknown:
            # The answer was lost: the host says whether it happened.
            ok = receiver.name not in _by_name(self.live(), receiver.library)
            message = "the connection dropped during DLTJRNRCV and the receiver is still there"
        if not ok:
            return message or "DLTJRNRCV failed"
        self.catalog.record_deletion(
            DeletionRecord(
                host=self.host,
                qmgr=self.target.qmgr,
                receiver=receiver.name,
                library=receiver.library,
                attached_at=receiver.attached_at,
                deleted_at=datetime.now(timezone.utc),
                delete_option="*IGNINQMSG" if ignore else "*NONE",
                run_id=self.run_id,
            )
        )
        return None


def _by_name(snapshot: Snapshot, library: str) -> dict[str, Receiver]:
    return {r.name: r for r in snapshot.receivers if r.library == library}
