"""Save a whole queue manager library (SAVLIB) the way IBM's backup procedure does: with the queue manager ended.

A library restore starts from such a save: RSTLIB, then the receivers from the save's AMQJRNINF on. So the record
keeps what the restore needs: the receiver attached at the save and its attach time, AMQJRNINF's oldest needed
receiver and time (after a fresh RCDMQMIMG), and the threshold for the receiver a restore creates. Every detached
receiver that went into the save file is recorded as a receiver save too (a restore can take it from there); the
attached one was saved while attached, so its save is not a full one and is not recorded.

The queue manager is always started again once it was ended, even when the save failed; both are reported.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timezone

from mqjournal.catalog import Catalog, LibrarySaveRecord, SaveRecord
from mqjournal.errors import MalformedAmqjrninf, MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.collector import Target, read_state
from mqjournal.ibmi.transport import IbmiSession, OutcomeUnknown, TransportError
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.names import save_library_for
from mqjournal.recovery.gather import save_files_on_host
from mqjournal.recovery.outcome import ALREADY_RUNNING, SAVED_TO_SAVE_FILE, judge_cl
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot

log = logging.getLogger(__name__)

SAVE_FILE_SLOTS = 10


class LibrarySaveFailed(MqJournalError):
    """The library save could not be made or verified, or the queue manager did not start again afterwards."""


@dataclass
class LibrarySaveResult:
    record: LibrarySaveRecord
    receivers: list[str] = field(default_factory=list)  # detached receivers recorded as saved in the same file
    restart: str = ""  # what STRMQM said


def save_library(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: timezone,
    catalog: Catalog,
    save_library: str,
    run_id: str,
) -> LibrarySaveResult:
    """RCDMQMIMG, read, ENDMQM, CRTSAVF, SAVLIB, verify, STRMQM, record. Raises LibrarySaveFailed, or InvalidName
    (before anything is sent) for a save library the saves could be lost with (see names.save_library_for)."""
    save_library = save_library_for(save_library, target.library)
    where = f"{target.qmgr} ({target.library}) on {host}"

    def read() -> Snapshot:
        return read_state(session, target, host=host, run_id=run_id, tz=tz)

    # A fresh checkpoint first: AMQJRNINF then names the oldest receiver a restore of this save needs.
    verdict = judge_cl(session.run(commands.record_media_images(target.qmgr)))
    if not verdict.ok:
        raise LibrarySaveFailed(
            where,
            f"RCDMQMIMG failed ({verdict.failure}); the queue manager was not ended",
            "check that the queue manager runs, then save again",
            msg_id=verdict.msg_id,
        )
    before = read()
    _oldest_needed(before, where)  # refuse before ending the queue manager if AMQJRNINF cannot be read

    ended = _run_cl(session, commands.end_qmgr(target.qmgr))
    save_error: LibrarySaveFailed | None = None
    result: LibrarySaveResult | None = None
    try:
        if ended is not True:
            raise LibrarySaveFailed(
                where,
                f"ENDMQM failed ({ended}); nothing was saved",
                "end the queue manager's applications and save again",
            )
        at_save = read()
        save_file = _new_save_file(session, host, target.library, save_library, run_id)
        started = at_save.collected_at
        # SAVLIB of a queue manager library always takes the journal's attached receiver, even with MQ ended, so
        # IBM i adds a diagnostic to the completion: judged by the exit status and CPC3722, not by message prefixes.
        saved = _run_cl(
            session, commands.save_library(target.library, save_library, save_file), completion=(SAVED_TO_SAVE_FILE,)
        )
        after = read()
        problem = _unverified(session, at_save, after, save_library, save_file, started, saved)
        if problem:
            raise LibrarySaveFailed(
                f"library {target.library} in {save_library}/{save_file} on {host}",
                problem,
                "check the save library's space and authority, then save again",
            )
        result = _record(
            catalog,
            at_save,
            after,
            host=host,
            target=target,
            tz=tz,
            save_library=save_library,
            save_file=save_file,
            started=started,
            run_id=run_id,
            where=where,
        )
    except LibrarySaveFailed as exc:
        save_error = exc
    except MqJournalError as exc:  # the host could not be read or reached half way
        save_error = LibrarySaveFailed(where, f"the save was interrupted: {exc.problem}", exc.action, msg_id=exc.msg_id)
    finally:
        # Always: a queue manager left ended by a backup is an outage.
        restart = _run_cl(session, commands.start_qmgr(target.qmgr), already_ok=ALREADY_RUNNING)
    if save_error is not None or restart is not True:
        parts = [save_error.problem if save_error else "the library was saved and recorded"]
        if restart is not True:
            parts.append(f"STRMQM afterwards failed: {restart}")
        action = (save_error.action + "; " if save_error else "") + (
            "start the queue manager by hand (STRMQM) now" if restart is not True else "the queue manager runs again"
        )
        raise LibrarySaveFailed(
            save_error.obj if save_error else where,
            "; ".join(parts),
            action,
            msg_id=save_error.msg_id if save_error else None,
        )
    assert result is not None
    result.restart = "STRMQM succeeded"
    return result


def _run_cl(
    session: IbmiSession, command, already_ok: str | None = None, completion: tuple[str, ...] = ()
) -> bool | str:
    """True when the command succeeded, else what went wrong."""
    try:
        verdict = judge_cl(session.run(command), completion=completion)
    except OutcomeUnknown as exc:
        return exc.problem
    except TransportError as exc:
        return f"{exc.problem}"
    if verdict.ok or (already_ok and already_ok in verdict.ids):
        return True
    return verdict.failure or "failed"


def _oldest_needed(snapshot: Snapshot, where: str):
    try:
        return parse_amqjrninf(snapshot.amqjrninf, qmgr=snapshot.qmgr)
    except MalformedAmqjrninf as exc:
        raise LibrarySaveFailed(
            where, f"AMQJRNINF cannot be read ({exc.problem}); the queue manager was not ended", exc.action
        ) from None


def _attached(snapshot: Snapshot) -> Receiver | None:
    return next(
        (
            r
            for r in snapshot.receivers
            if r.status is ReceiverStatus.ATTACHED
            and r.journal == snapshot.journal.name
            and r.library == snapshot.qmgr_library
        ),
        None,
    )


def _detached(snapshot: Snapshot) -> list[Receiver]:
    """The receivers a SAVLIB saves in full: detached, holding entries (not freed, not never-attached)."""
    return [
        r
        for r in snapshot.receivers
        if r.library == snapshot.qmgr_library
        and r.attached_at is not None
        and r.status in (ReceiverStatus.ONLINE, ReceiverStatus.SAVED, ReceiverStatus.PARTIAL)
    ]


def _unverified(
    session: IbmiSession,
    at_save: Snapshot,
    after: Snapshot,
    save_library: str,
    save_file: str,
    started: datetime,
    saved: bool | str,
) -> str | None:
    """Why the save cannot be trusted, or None: the save file is there and every detached receiver shows saved."""
    if saved is not True:
        return f"SAVLIB failed ({saved})"
    path = f"{save_library}/{save_file}"
    if path not in save_files_on_host(session, [save_library]):
        return f"SAVLIB reported success but the save file {path} is not on the host"
    now = {r.name: r for r in after.receivers if r.library == after.qmgr_library}
    unsaved = [
        r.name
        for r in _detached(at_save)
        if now.get(r.name) is None or now[r.name].saved_at is None or now[r.name].saved_at < started
    ]
    if unsaved:
        return f"SAVLIB reported success but {', '.join(unsaved)} do not show a save of this run"
    return None


def _record(
    catalog: Catalog,
    at_save: Snapshot,
    after: Snapshot,
    *,
    host: str,
    target: Target,
    tz: timezone,
    save_library: str,
    save_file: str,
    started: datetime,
    run_id: str,
    where: str,
) -> LibrarySaveResult:
    attached = _attached(at_save)
    if attached is None or attached.attached_at is None:
        raise LibrarySaveFailed(
            where, "the journal has no attached receiver at the save", "check the journal (WRKJRNA)"
        )
    oldest = _oldest_needed(at_save, where)
    now = {r.name: r for r in after.receivers if r.library == after.qmgr_library}
    saved_times = [now[r.name].saved_at for r in _detached(at_save) if r.name in now and now[r.name].saved_at]
    after_attached = now.get(attached.name)
    saved_at = (
        after_attached.saved_at
        if after_attached and after_attached.saved_at and after_attached.saved_at >= started
        else max(saved_times, default=after.collected_at)
    )
    verified_at = datetime.now(UTC)
    record = LibrarySaveRecord(
        host=host,
        qmgr=target.qmgr,
        qmgr_library=target.library,
        journal=target.journal,
        save_file_library=save_library,
        save_file=save_file,
        saved_at=saved_at,
        verified_at=verified_at,
        attached_receiver=attached.name,
        attached_at=attached.attached_at,
        oldest_needed_receiver=oldest.receiver,
        oldest_needed_at=oldest.needed_at.replace(tzinfo=tz),
        threshold_kb=attached.threshold_kb,
        run_id=run_id,
    )
    names = []
    for r in _detached(at_save):
        saved = now[r.name]
        catalog.record_save(
            SaveRecord(
                host=host,
                qmgr=target.qmgr,
                qmgr_library=target.library,
                receiver=r.name,
                library=r.library,
                attached_at=r.attached_at,
                detached_at=r.detached_at,
                first_sequence=r.first_sequence,
                last_sequence=r.last_sequence,
                previous=r.previous,
                next=r.next,
                size_bytes=r.size_bytes,
                save_file_library=save_library,
                save_file=save_file,
                saved_at=saved.saved_at,
                verified_at=verified_at,
                run_id=run_id,
            )
        )
        names.append(r.name)
    catalog.record_library_save(record)
    log.info(
        "%s: library %s saved in %s/%s with %d detached receiver(s)",
        host,
        target.library,
        save_library,
        save_file,
        len(names),
    )
    return LibrarySaveResult(record=record, receivers=names)


def _new_save_file(session: IbmiSession, host: str, qmgr_library: str, save_library: str, run_id: str) -> str:
    """A save file of its own for this library and run (MQL + hash), as the maintenance executor names its own (MQJ)."""
    digest = hashlib.sha1(f"{host}/{qmgr_library}/{run_id}".encode()).digest()
    stem = "MQL" + base64.b32encode(digest).decode()[:6]
    for slot in range(SAVE_FILE_SLOTS):
        name = f"{stem}{slot}"
        out = session.run(commands.create_save_file(save_library, name))
        if out.exit_status == 0:
            return name
        if "CPF5813" not in out.msg_ids:
            verdict = judge_cl(out)
            raise LibrarySaveFailed(
                f"save file {save_library}/{name} on {host}",
                verdict.failure or "CRTSAVF failed",
                "check the save library exists and the user profile may create files in it",
                msg_id=verdict.msg_id,
            )
    raise LibrarySaveFailed(
        f"save files {stem}0-9 in {save_library} on {host}",
        "every save file slot of this run is used",
        "save again with a new run id",
    )
