"""One restore drill on a partition: a stored copy uploaded into a scratch save file, its object list read back and
judged, the scratch save file deleted whatever happened.

The steps, each through the session (so each command is in the audit log, an intent before it is sent and an
outcome after, and the upload too, as `ibmi.transfer` writes it):

1. CRTSAVF of a scratch save file in the scratch library (`scratch`: DRL and seven digits; a taken name, CPF5813,
   is passed over, so nothing of the site's is ever written into);
2. the copy's bytes uploaded into it (`transfer.upload_save_file`: the store object is verified against its sidecar
   before a byte is sent, sent in whole 528-byte records, the size compared after);
3. QSYS2.SAVE_FILE_OBJECTS of the scratch save file, judged against the receivers the catalog says the copy holds
   (`verdict`);
4. in a `finally`, DLTF of the scratch save file, only when this drill created it and its name is a scratch name. A
   DLTF that fails is reported with the file's name and what to do; it holds nothing but a copy of the stored bytes.

Nothing else is written to the partition, and nothing the drill did not create is deleted. Outcomes:

- `passed`: IBM i took the bytes as a save file and listed every receiver the catalog names;
- `failed`: the copy does not restore: the store object no longer matches its sidecar, or its sidecar not the
  catalog's digest, or IBM i refused the bytes as a save file's records, or the list lacks receivers;
- `error`: the drill could not be made (the partition lacks SAVE_FILE_OBJECTS, CRTSAVF refused, the connection
  dropped, authority missing): nothing is known of the copy.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

from mqjournal.backupstore import BackupStore, StoreObjectCorrupt
from mqjournal.catalog import StoredObject
from mqjournal.drill import scratch
from mqjournal.drill.verdict import judge
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.backups import require_content_service, save_file_contents
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transfer import SaveFileTransferError, UploadIncomplete, upload_save_file
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession, OutcomeUnknown, TransportError
from mqjournal.names import TEXT_LENGTH

log = logging.getLogger(__name__)

Outcome = Literal["passed", "failed", "error"]

NAME_TRIES = 20
"""Scratch names tried before a drill gives up (each taken one is a CPF5813 answer, one round trip)."""

_NOT_FOUND = ("CPF2105",)  # DLTF of an object that is not there: it is gone, which is what was wanted


class DrillNotMade(MqJournalError):
    """The scratch save file could not be created: the drill was not made."""


@dataclass
class DrillResult:
    """One copy's drill, for the catalog and the run's report."""

    key: str
    store_url: str
    host: str
    qmgr: str
    save_file: str  # the copy's own save file, LIB/NAME
    outcome: Outcome = "error"
    problem: str | None = None
    action: str | None = None
    note: str | None = None
    scratch: str | None = None  # LIB/NAME, once created
    scratch_left: str | None = None  # a scratch save file the drill could not delete: what it is and what to do
    steps: list[str] = field(default_factory=list)

    def line(self) -> str:
        head = f"{self.outcome.upper()}: {self.key} ({self.host} {self.qmgr} {self.save_file})"
        detail = "; ".join(x for x in (self.problem, self.action, self.note) if x)
        left = f"; SCRATCH LEFT: {self.scratch_left}" if self.scratch_left else ""
        return head + (f": {detail}" if detail else "") + left


def drill_copy(
    session: IbmiSession, store: BackupStore, stored: StoredObject, *, library: str, first_number: int
) -> DrillResult:
    """Drill `stored` (the catalog's record of the copy) on the partition of `session`, in scratch library `library`,
    trying scratch names from `first_number`. What the drill finds, and what keeps it from being made, is in the
    result; only a scratch library that may not hold scratch files raises (InvalidName), before anything is sent."""
    result = DrillResult(
        key=stored.key, store_url=stored.store_url, host=stored.host, qmgr=stored.qmgr, save_file=stored.save_file_path
    )
    lib = scratch.scratch_library(library)
    if (problem := _sidecar_problem(store, stored)) is not None:
        return _failed(result, problem, "put the copy back from another store, or drill it again after a save")
    created: str | None = None
    try:
        require_content_service(session)
        created = _create(session, stored, lib, first_number, result)
        result.scratch = f"{lib}/{created}"
        result.steps.append(f"CRTSAVF FILE({result.scratch})")
        upload_save_file(session, store, stored.key, lib, created)
        result.steps.append(f"upload {stored.key} into {result.scratch}")
        listed = save_file_contents(session, [result.scratch])[result.scratch].receivers
        result.steps.append(f"SAVE_FILE_OBJECTS of {result.scratch}")
        verdict = judge({(o.library, o.receiver) for o in stored.objects}, listed)
        if verdict.passed:
            result.outcome, result.note = "passed", verdict.note
        elif listed is None:
            result.outcome, result.problem = "error", verdict.problem
            result.action = "check QSYS2.SAVE_FILE_OBJECTS on the partition (the Db2 PTF group), then drill again"
        else:
            _failed(result, verdict.problem or "the object list differs", _AGAIN)
    except StoreObjectCorrupt as exc:
        _failed(result, exc.problem, exc.action)
    except UploadIncomplete as exc:
        if isinstance(exc.__cause__, (HostUnreachable, ConnectionLost)):
            result.outcome, result.problem = "error", exc.problem
            result.action = "check the network to the partition, then drill again"
        else:
            _failed(
                result,
                f"IBM i refused the copy's bytes as a save file's records: {exc.problem}",
                "this copy does not restore: restore from another copy of these receivers; run a new save",
            )
    except SaveFileTransferError as exc:
        refused = "not whole" in exc.problem  # the object is not a save file's bytes at all
        if refused:
            _failed(result, exc.problem, exc.action)
        else:
            result.outcome, result.problem, result.action = "error", exc.problem, exc.action
    except (MqJournalError, TransportError) as exc:
        result.outcome = "error"
        result.problem = getattr(exc, "problem", str(exc))
        result.action = getattr(exc, "action", "fix the cause, then drill again")
    finally:
        if created is not None:
            result.scratch_left = _delete_scratch(session, lib, created)
    log.info("%s: %s", session.host, result.line())
    return result


_AGAIN = "this copy does not restore what the catalog says: restore from another copy of these receivers"


def _failed(result: DrillResult, problem: str, action: str) -> DrillResult:
    result.outcome, result.problem, result.action = "failed", problem, action
    return result


def _sidecar_problem(store: BackupStore, stored: StoredObject) -> str | None:
    """What differs between the store's sidecar and the catalog's record, before anything is sent: a sidecar
    rewritten with other bytes would pass the store's own check."""
    try:
        sidecar = store.get(stored.key)
    except MqJournalError as exc:
        return f"the store's sidecar of {stored.key} cannot be read ({exc.problem})"
    if sidecar is None:
        return f"{stored.key} is not in the backup store {store.url}"
    if (sidecar.sha256, sidecar.size_bytes) != (stored.sha256, stored.size_bytes):
        return (
            f"the store's sidecar of {stored.key} names other bytes ({sidecar.size_bytes} bytes, SHA-256 "
            f"{sidecar.sha256[:12]}...) than the catalog recorded ({stored.size_bytes} bytes, {stored.sha256[:12]}...)"
        )
    return None


def _create(session: IbmiSession, stored: StoredObject, library: str, first_number: int, result: DrillResult) -> str:
    """CRTSAVF of the first free scratch name from `first_number`. A taken name (CPF5813) belongs to someone else and
    is passed over; a CRTSAVF whose answer was lost leaves a name that may or may not be ours: it is reported, never
    deleted (DLTF of a file this drill may not have made could delete the site's)."""
    text = f"mqjournal restore drill {stored.save_file_path}"[:TEXT_LENGTH]
    for name in scratch.names_from(first_number, NAME_TRIES):
        try:
            out = session.run(commands.create_save_file(library, name, text))
        except OutcomeUnknown:
            result.scratch_left = (
                f"CRTSAVF FILE({library}/{name}) was sent but its answer was lost: if {library}/{name} exists and "
                f"its TEXT reads '{text}', it is this drill's empty scratch file: DLTF FILE({library}/{name})"
            )
            raise
        if out.exit_status == 0:
            return name
        if "CPF5813" not in out.msg_ids:
            messages = cl_messages(out.stdout, out.stderr)
            raise DrillNotMade(
                f"scratch save file {library}/{name} on {session.host}",
                "; ".join(f"{m.id}: {m.text}" for m in messages) or "CRTSAVF failed",
                "check that the scratch library exists and the user profile may create files in it "
                "(MQJOURNAL_DRILL_LIBRARY)",
                msg_id=messages[-1].id if messages else None,
            )
    raise DrillNotMade(
        f"scratch save files in {library} on {session.host}",
        f"all {NAME_TRIES} scratch names from {scratch.scratch_name(first_number)} are taken",
        f"delete the site's own {scratch.PREFIX}nnnnnnn save files from {library} if they are old drills' "
        "leftovers, or set MQJOURNAL_DRILL_LIBRARY to another library",
    )


def _delete_scratch(session: IbmiSession, library: str, name: str) -> str | None:
    """DLTF of this drill's scratch save file; None when it is gone, else what is left and what to do."""
    where = f"{library}/{name}"
    if not scratch.is_scratch(name):  # never reached: created names come from scratch.names_from
        return f"{where} is not a scratch save file name: not deleted"
    todo = f"it holds only a copy of stored bytes: DLTF FILE({where}) on {session.host}"
    try:
        out = session.run(commands.delete_save_file(library, name))
    except (MqJournalError, TransportError) as exc:
        return f"DLTF FILE({where}) did not answer ({exc}); {todo} once the partition answers"
    if out.exit_status == 0 or any(m in out.msg_ids for m in _NOT_FOUND):
        return None
    said = "; ".join(f"{m.id}: {m.text}" for m in cl_messages(out.stdout, out.stderr)) or f"exit {out.exit_status}"
    return f"DLTF FILE({where}) failed ({said}); {todo}"
