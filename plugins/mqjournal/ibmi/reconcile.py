"""Explain, from the host, what an interrupted step did, before the next step on that queue manager does anything.

A worker killed while DLTJRNRCV ran (or whose reply was lost, or whose catalog write failed after the command)
leaves an operation intent in the catalog and a command intent in the audit log, and nothing else. The receiver
may be gone or not: only the host knows. Reconciling closes each such intent with what the host shows now:
- a delete: the receiver of that attach time is gone, so it is recorded as deleted (the save it was deleted on
  was proven before the intent was written), or it is still there and nothing happened;
- a save: the receivers the save file lists are recorded as saved, the others are not;
- a discard (backup expiry's DLTF): a save file that is gone is recorded discarded;
- a cleanup (DLTF of a save file the backup store holds): a save file that is gone is recorded removed from the host;
- any other command: what the live state read now shows of it, written to the audit log.
Nothing is sent to the host here but reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mqjournal.catalog import Catalog, DeletionRecord, Operation, SaveRecord
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import unexplained_intents
from mqjournal.ibmi.backups import SaveFileContent, save_file_contents
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.ibmi.workers import Worker, interrupted
from mqjournal.rules import is_saved
from mqjournal.snapshot import Receiver, Snapshot

WorkerIsGone = Callable[[dict[str, Any]], bool]
"""Whether an intent's worker can no longer be waiting for its command's answer (mqjournal.ibmi.workers.interrupted)."""

_DLTJRNRCV = re.compile(r"DLTJRNRCV JRNRCV\((\w+)/(\w+)\)")
_SAVOBJ = re.compile(r"SAVOBJ OBJ\(([^)]*)\) LIB\((\w+)\).* SAVF\((\w+)/(\w+)\)")
_CRTSAVF = re.compile(r"CRTSAVF FILE\((\w+)/(\w+)\)")


@dataclass
class Reconciliation:
    """What was found: one line per operation or command intent closed, for the step's result and report."""

    findings: list[str] = field(default_factory=list)


def reconcile(
    session: IbmiSession, catalog: Catalog, live: Snapshot, *, host: str, worker_is_gone: WorkerIsGone = interrupted
) -> Reconciliation:
    """Close the open intents of this queue manager (catalog) and of its commands (audit log) against `live`."""
    done = Reconciliation()
    receivers = {(r.library, r.name): r for r in live.receivers}
    operations = [op for op in catalog.open_operations(host, live.qmgr_library) if _gone(op, worker_is_gone)]
    save_files = [
        f"{op.save_file_library}/{op.save_file}" for op in operations if op.kind in ("save", "discard", "clean_up")
    ]
    intents = (
        [i for i in unexplained_intents(session.audit.path, host) if _ours(i["command"], live) and worker_is_gone(i)]
        if session.audit.path is not None
        else []
    )
    for intent in intents:
        if m := _SAVOBJ.search(intent["command"]):
            save_files.append(f"{m.group(3)}/{m.group(4)}")
        elif m := _CRTSAVF.search(intent["command"]):
            save_files.append(f"{m.group(1)}/{m.group(2)}")
    contents = save_file_contents(session, save_files) if save_files else {}

    for op in operations:
        if op.kind == "delete":
            finding = _delete(catalog, op, receivers.get((op.library, op.names[0])), host)
        else:
            content = contents.get(f"{op.save_file_library}/{op.save_file}")
            if content is None or not content.known:
                # Neither gone nor readable: no conclusion yet; the intent stays open for the next step.
                done.findings.append(
                    f"{op.save_file_library}/{op.save_file} could not be read: the interrupted "
                    f"{op.kind} of {op.receivers or 'it'} stays open until it can be"
                )
                continue
            if op.kind == "discard":
                finding = _discard(catalog, op, content, host)
            elif op.kind == "clean_up":
                finding = _cleaned_up(catalog, op, content, host)
            else:
                finding = _save(catalog, op, receivers, content, host)
        catalog.finish(op, "reconciled", finding)
        done.findings.append(finding)
    for intent in intents:
        finding = _explain(intent["command"], receivers, contents)
        session.audit.reconciled(intent, finding)
        done.findings.append(f"interrupted command {intent['command']} ({intent['at']}): {finding}")
    return done


def _gone(op: Operation, worker_is_gone: WorkerIsGone) -> bool:
    # The catalog stamps every operation it stores (Catalog.begin); one without a time is as old as can be.
    at = op.started_at or datetime.min.replace(tzinfo=UTC)
    # The catalog keeps the worker as text (Catalog.begin): read back into the fields an audit intent has.
    worker = Worker.parse(op.worker)
    return worker_is_gone((worker.fields() if worker else {"worker": op.worker}) | {"at": at.isoformat()})


def _save_file_of(op: Operation) -> tuple[str, str]:
    """The save file of a save or discard intent: the executors always write it into the intent."""
    if op.save_file_library is None or op.save_file is None:
        raise ValueError(f"the catalog's {op.kind} operation {op.id} names no save file")
    return op.save_file_library, op.save_file


def _ours(command: str, live: Snapshot) -> bool:
    # Commands about another queue manager's library are left to that queue manager's own step.
    if _DLTJRNRCV.search(command) or _SAVOBJ.search(command):
        return f"{live.qmgr_library}/" in command or f"LIB({live.qmgr_library})" in command
    return True


def _delete(catalog: Catalog, op: Operation, now: Receiver | None, host: str) -> str:
    name = op.names[0]
    if now is not None and now.attached_at == op.attached_at:
        return f"{name} in {op.library} is still on the host: the interrupted DLTJRNRCV did not delete it"
    if op.attached_at is None:  # the executor writes a delete intent with its receiver's attach time
        raise ValueError(f"the catalog's delete operation {op.id} of {name} has no attach time")
    catalog.record_deletion(
        DeletionRecord(
            host=host,
            qmgr=op.qmgr,
            receiver=name,
            library=op.library,
            attached_at=op.attached_at,
            deleted_at=datetime.now(UTC),
            delete_option=op.delete_option or "*NONE",
            run_id=op.run_id,
        )
    )
    return f"{name} in {op.library} is gone from the host: the interrupted DLTJRNRCV deleted it; recorded"


def _discard(catalog: Catalog, op: Operation, content: SaveFileContent, host: str) -> str:
    library, name = _save_file_of(op)
    where = f"{library}/{name}"
    if content.exists:
        return f"{where} still exists: the interrupted DLTF did not delete it"
    catalog.record_discarded(host, library, name, op.run_id)
    return f"{where} is gone from the host: the interrupted DLTF deleted it; its saves are no longer offered"


def _cleaned_up(catalog: Catalog, op: Operation, content: SaveFileContent, host: str) -> str:
    library, name = _save_file_of(op)
    where = f"{library}/{name}"
    if content.exists:
        return f"{where} still exists: the interrupted cleanup did not delete it"
    copies = [s for s in catalog.stored_objects(host, op.qmgr) if s.save_file_path == where]
    catalog.record_removed_from_host(host, library, name, copies[-1].key if copies else "", op.run_id)
    return f"{where} is gone from the host: the interrupted cleanup deleted it; its saves are offered from the store"


def _save(
    catalog: Catalog,
    op: Operation,
    receivers: Mapping[tuple[str, str], Receiver],
    content: SaveFileContent,
    host: str,
) -> str:
    library, save_file = _save_file_of(op)
    where = f"{library}/{save_file}"
    if not content.exists:
        return f"{where} does not exist: the interrupted save of {op.receivers} saved nothing"
    recorded = []
    for name in op.names:
        now = receivers.get((op.library, name))
        if content.holds(op.library, name) and now is not None and is_saved(now):
            catalog.record_save(
                save_record(
                    now,
                    host=host,
                    qmgr=op.qmgr,
                    qmgr_library=op.qmgr_library,
                    save_file_library=library,
                    save_file=save_file,
                    run_id=op.run_id,
                )
            )
            recorded.append(name)
    missing = [n for n in op.names if n not in recorded]
    tail = f"; not saved: {' '.join(missing)}" if missing else ""
    return f"{where} holds {' '.join(recorded) or 'none'} of the interrupted save; recorded{tail}"


def save_record(
    now: Receiver, *, host: str, qmgr: str, qmgr_library: str, save_file_library: str, save_file: str, run_id: str
) -> SaveRecord:
    """The catalog's record of `now` (as the host shows it after the save) proven in the save file."""
    if now.attached_at is None or now.saved_at is None:
        raise ValueError(f"{now.library}/{now.name} has no attach or save time: it is not fully saved")
    return SaveRecord(
        host=host,
        qmgr=qmgr,
        qmgr_library=qmgr_library,
        receiver=now.name,
        library=now.library,
        attached_at=now.attached_at,
        detached_at=now.detached_at,
        first_sequence=now.first_sequence,
        last_sequence=now.last_sequence,
        previous=now.previous,
        next=now.next,
        size_bytes=now.size_bytes,
        save_file_library=save_file_library,
        save_file=save_file,
        saved_at=now.saved_at,
        verified_at=datetime.now(UTC),
        run_id=run_id,
    )


def _explain(
    command: str, receivers: Mapping[tuple[str, str], Receiver], contents: Mapping[str, SaveFileContent]
) -> str:
    if m := _DLTJRNRCV.search(command):
        present = (m.group(1), m.group(2)) in receivers
        return f"{m.group(2)} is {'still on' if present else 'gone from'} the host"
    if m := _SAVOBJ.search(command):
        content = contents[f"{m.group(3)}/{m.group(4)}"]
        if content.exists is False:
            return f"save file {m.group(3)}/{m.group(4)} does not exist: nothing was saved"
        if content.receivers is None:
            return f"save file {m.group(3)}/{m.group(4)} could not be read: the catalog operation stays open"
        held = sorted(n for lib, n in content.receivers if lib == m.group(2))
        return f"save file {m.group(3)}/{m.group(4)} holds {' '.join(held) or 'no receiver'}"
    if m := _CRTSAVF.search(command):
        exists = contents[f"{m.group(1)}/{m.group(2)}"].exists
        state = {True: "exists", False: "was not created", None: "could not be looked up"}[exists]
        return f"save file {m.group(1)}/{m.group(2)} {state}"
    statements = commands.sql_statements(command)
    if (statements and not any("ASSOCIATE_JOURNAL_RECEIVER" in s for s in statements)) or command.startswith("cat "):
        return "a read: it changes nothing on the host"
    if "RCDMQMIMG" in command:
        return "a checkpoint: it changes no receiver, and this step takes another"
    return "not a save or a delete: its effect, if any, is in the state this step reads and acts on now"
