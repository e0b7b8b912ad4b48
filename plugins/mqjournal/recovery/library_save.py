"""Save a whole queue manager library (SAVLIB) the way IBM's backup procedure does: with the queue manager ended.

A library restore starts from such a save: RSTLIB, then the receivers from the save's AMQJRNINF on. So the record
keeps what the restore needs: the receiver attached at the save and its attach time, AMQJRNINF's oldest needed
receiver and time (after a fresh RCDMQMIMG), and the threshold for the receiver a restore creates. Every detached
receiver that went into the save file is recorded as a receiver save too (a restore can take it from there); the
attached one was saved while attached, so its save is not a full one and is not recorded.

A library save has two parts, as IBM's backup procedure takes them: SAVLIB of the library (journal, receivers,
AMQJRNINF) and SAV of the queue manager's IFS directory (/QIBM/UserData/mqm/qmgrs/<name>: MQ's object definitions
and the messages they hold, which are in no library) into a second save file beside the first. The save is recorded
only when both parts are verified; a library restore needs both (recovery/restore.py).

The queue manager is always started again once it was ended, even when the save failed; both are reported.

Once the save is verified and the queue manager runs again, the save file is copied into the backup store (it is
no backup while it sits on the partition it saves) and the copy recorded, described by the receivers recorded as
saved in it. A copy that fails leaves the library save standing on the host, reported as not backed up off the
partition (`LibrarySaveResult.not_copied`): the save itself did not fail.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, LibrarySaveRecord, SavedReceiver, SaveFileCopy, SaveRecord, StoredObject
from mqjournal.errors import MalformedAmqjrninf, MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.collector import Target, read_state
from mqjournal.ibmi.downloadroutes import DownloadRoutes, route_for
from mqjournal.ibmi.readings import PartitionZone
from mqjournal.ibmi.savefiles import create_save_file
from mqjournal.ibmi.transfer import Route, download_save_file
from mqjournal.ibmi.transport import IbmiSession, OutcomeUnknown, TransportError
from mqjournal.jrninf import OldestNeeded, parse_amqjrninf
from mqjournal.names import library_save_text, qmgr_directory, save_file_names, save_library_for
from mqjournal.recovery.gather import save_files_on_host
from mqjournal.recovery.outcome import ALREADY_RUNNING, SAVED_TO_SAVE_FILE, judge_cl
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot

log = logging.getLogger(__name__)


class LibrarySaveFailed(MqJournalError):
    """The library save could not be made or verified, or the queue manager did not start again afterwards."""


@dataclass
class LibrarySaveResult:
    record: LibrarySaveRecord
    receivers: list[str] = field(default_factory=list)  # detached receivers recorded as saved in the same file
    restart: str = ""  # what STRMQM said
    receiver_saves: list[SaveRecord] = field(default_factory=list)
    stored: StoredObject | None = None  # the verified copy in the backup store
    directory_stored: StoredObject | None = None  # the IFS part's verified copy in the backup store
    not_copied: str = ""  # why a part has none: that save file is then only on the partition it saves


def save_library(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: PartitionZone,
    catalog: Catalog,
    save_library: str,
    run_id: str,
    store: BackupStore | None = None,
    routes: DownloadRoutes | None,
) -> LibrarySaveResult:
    """RCDMQMIMG, read, ENDMQM, CRTSAVF, SAVLIB, verify, CRTSAVF, SAV, verify, STRMQM, record, copy both save files
    into the backup store, each by the host's download route as `mqjournal doctor` recorded it in `routes` (None:
    no record is kept, so directly; required, so that no caller forgets a host that downloads through a stream
    file). Raises
    LibrarySaveFailed, or InvalidName (before anything is sent) for a save library the saves could be lost with (see
    names.save_library_for)."""
    save_library = save_library_for(save_library, target.library)
    where = f"{target.qmgr} ({target.library}) on {host}"
    _checkpoint(session, target, where)
    before = read_state(session, target, host=host, run_id=run_id, tz=tz)
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
        result = _save_ended_library(
            session, target, host=host, tz=tz, catalog=catalog, save_library=save_library, run_id=run_id, where=where
        )
    except LibrarySaveFailed as exc:
        save_error = exc
    except MqJournalError as exc:  # the host could not be read or reached half way
        save_error = LibrarySaveFailed(where, f"the save was interrupted: {exc.problem}", exc.action, msg_id=exc.msg_id)
    finally:
        # Always: a queue manager left ended by a backup is an outage.
        restart = _run_cl(session, commands.start_qmgr(target.qmgr), already_ok=ALREADY_RUNNING)
    if result is not None:
        # After STRMQM: the copy takes as long as the save file is big, and the queue manager need not wait for it.
        copy_off_partition(session, catalog, store, result, via=route_for(routes, host))
    if save_error is not None or restart is not True:
        raise _save_and_restart_failure(save_error, restart, where)
    assert result is not None  # no save error, so the save returned its result
    result.restart = "STRMQM succeeded"
    return result


def copy_off_partition(
    session: IbmiSession, catalog: Catalog, store: BackupStore | None, result: LibrarySaveResult, *, via: Route
) -> None:
    """The library save's file and its IFS part copied into the backup store by the host's download route `via`
    and recorded (`result.stored`, `result.directory_stored`), or why not (`result.not_copied`); never raises for a
    copy that failed: the save on the host stands."""
    record = result.record
    where = f"{record.host} {record.save_file_path}"
    if store is None:
        result.not_copied = "no backup store is configured: the library save is only on the partition it saves"
        return
    meta = SaveFileCopy(
        host=record.host,
        qmgr=record.qmgr,
        qmgr_library=record.qmgr_library,
        save_file_library=record.save_file_library,
        save_file=record.save_file,
        run_id=record.run_id,
        objects=tuple(SavedReceiver.from_save(s) for s in result.receiver_saves),
    )
    try:
        stored = download_save_file(session, record.save_file_library, record.save_file, store, meta, via=via)
        catalog.record_stored(stored)
        directory_stored = None
        if record.directory_save_file:
            # The IFS part holds no receivers: its copy's object list is empty.
            directory_meta = meta.model_copy(update={"save_file": record.directory_save_file, "objects": ()})
            directory_stored = download_save_file(
                session, record.save_file_library, record.directory_save_file, store, directory_meta, via=via
            )
            catalog.record_stored(directory_stored)
    except MqJournalError as exc:  # SaveFileTransferError, BackupStoreError, CatalogUnavailable
        result.not_copied = (
            f"the library save stands on the host, but it is NOT backed up off the partition: copying "
            f"{record.save_file_path} and {record.directory_save_file_path} into the backup store {store.url} "
            f"failed ({exc}); copy them again before relying on it (a lost partition takes them with it)"
        )
        log.warning("%s: %s", where, result.not_copied)
        return
    result.stored = stored
    result.directory_stored = directory_stored
    log.info("%s: copied into the backup store as %s (%d bytes)", where, stored.key, stored.size_bytes)


def _checkpoint(session: IbmiSession, target: Target, where: str) -> None:
    """A fresh checkpoint first: AMQJRNINF then names the oldest receiver a restore of this save needs."""
    verdict = judge_cl(session.run(commands.record_media_images(target.qmgr)))
    if not verdict.ok:
        raise LibrarySaveFailed(
            where,
            f"RCDMQMIMG failed ({verdict.failure}); the queue manager was not ended",
            "check that the queue manager runs, then save again",
            msg_id=verdict.msg_id,
        )


def _save_ended_library(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: PartitionZone,
    catalog: Catalog,
    save_library: str,
    run_id: str,
    where: str,
) -> LibrarySaveResult:
    """With the queue manager ended: read, CRTSAVF, SAVLIB, read again, verify, record."""

    def read() -> Snapshot:
        return read_state(session, target, host=host, run_id=run_id, tz=tz)

    at_save = read()
    save_file = _new_save_file(session, host, target, save_library, catalog, tz)
    started = at_save.collected_at
    # SAVLIB of a queue manager library always takes the journal's attached receiver, even with MQ ended, so
    # IBM i adds a diagnostic to the completion: judged by the exit status and CPC3722, not by message prefixes.
    saved = _run_cl(
        session, commands.save_library(target.library, save_library, save_file), completion=(SAVED_TO_SAVE_FILE,)
    )
    after = read()
    problem = _unverified(session, at_save, after, save_library, save_file, started, saved)
    directory_file = ""
    if not problem:
        # Beside the SAVLIB's own save file, which the catalog does not know yet.
        directory_file = _new_save_file(
            session, host, target, save_library, catalog, tz, taken=f"{save_library}/{save_file}"
        )
        problem = _directory_unverified(session, target, save_library, directory_file)
    if problem:
        raise LibrarySaveFailed(
            f"library {target.library} in {save_library}/{save_file} on {host}",
            problem,
            "check the save library's space and authority, then save again",
        )
    return _record(
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
        directory_save_file=directory_file,
    )


def _directory_unverified(session: IbmiSession, target: Target, save_library: str, save_file: str) -> str | None:
    """SAV of the queue manager's IFS directory into `save_file`; why it cannot be trusted, or None."""
    path = f"{save_library}/{save_file}"
    saved = _run_cl(session, commands.save_qmgr_directory(target.qmgr, save_library, save_file))
    if saved is not True:
        return (
            f"SAV of the queue manager's IFS directory {qmgr_directory(target.qmgr)} failed ({saved}): the library "
            "was saved, but without its IFS part (MQ's object definitions and their messages) it cannot bring the "
            "queue manager back, so it is not recorded"
        )
    if path not in save_files_on_host(session, [save_library]):
        return f"SAV reported success but the save file {path} is not on the host"
    return None


def _save_and_restart_failure(
    save_error: LibrarySaveFailed | None, restart: bool | str, where: str
) -> LibrarySaveFailed:
    """One error for what went wrong with the save and with STRMQM afterwards: the operator needs both."""
    parts = [save_error.problem if save_error else "the library was saved and recorded"]
    if restart is not True:
        parts.append(f"STRMQM afterwards failed: {restart}")
    action = (save_error.action + "; " if save_error else "") + (
        "start the queue manager by hand (STRMQM) now" if restart is not True else "the queue manager runs again"
    )
    return LibrarySaveFailed(
        save_error.obj if save_error else where,
        "; ".join(parts),
        action,
        msg_id=save_error.msg_id if save_error else None,
    )


def _run_cl(
    session: IbmiSession, command: commands.Command, already_ok: str | None = None, completion: tuple[str, ...] = ()
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


def _oldest_needed(snapshot: Snapshot, where: str) -> OldestNeeded:
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
    unsaved = unsaved_receivers(at_save, after, started)
    if unsaved:
        return f"SAVLIB reported success but {', '.join(unsaved)} do not show a save of this run"
    return None


def _saved_times(after: Snapshot) -> dict[str, datetime]:
    """When each receiver of the queue manager library was last saved, as the host shows it after the save."""
    return {r.name: r.saved_at for r in after.receivers if r.library == after.qmgr_library and r.saved_at is not None}


def unsaved_receivers(at_save: Snapshot, after: Snapshot, started: datetime) -> list[str]:
    """The receivers SAVLIB had to save in full that do not show a save of this run afterwards."""
    saved = _saved_times(after)
    return [r.name for r in _detached(at_save) if r.name not in saved or saved[r.name] < started]


def library_save_time(at_save: Snapshot, after: Snapshot, attached: Receiver, started: datetime) -> datetime:
    """When the library was saved: the attached receiver's save time if it shows this run's save, else the latest
    save of a detached receiver, else the time the host was read after the save."""
    saved = _saved_times(after)
    attached_saved = saved.get(attached.name)
    if attached_saved is not None and attached_saved >= started:
        return attached_saved
    return max((saved[r.name] for r in _detached(at_save) if r.name in saved), default=after.collected_at)


def _record(
    catalog: Catalog,
    at_save: Snapshot,
    after: Snapshot,
    *,
    host: str,
    target: Target,
    tz: PartitionZone,
    save_library: str,
    save_file: str,
    started: datetime,
    run_id: str,
    where: str,
    directory_save_file: str,
) -> LibrarySaveResult:
    attached = _attached(at_save)
    if attached is None or attached.attached_at is None:
        raise LibrarySaveFailed(
            where, "the journal has no attached receiver at the save", "check the journal (WRKJRNA)"
        )
    oldest = _oldest_needed(at_save, where)
    verified_at = datetime.now(UTC)
    record = LibrarySaveRecord(
        host=host,
        qmgr=target.qmgr,
        qmgr_library=target.library,
        journal=target.journal,
        save_file_library=save_library,
        save_file=save_file,
        saved_at=library_save_time(at_save, after, attached, started),
        verified_at=verified_at,
        attached_receiver=attached.name,
        attached_at=attached.attached_at,
        oldest_needed_receiver=oldest.receiver,
        oldest_needed_at=tz.aware(oldest.needed_at),
        threshold_kb=attached.threshold_kb,
        run_id=run_id,
        directory=qmgr_directory(target.qmgr),
        directory_save_file=directory_save_file,
    )
    receiver_saves = receiver_save_records(at_save, after, record)
    for receiver_save in receiver_saves:
        catalog.record_save(receiver_save)
    catalog.record_library_save(record)
    log.info(
        "%s: library %s saved in %s/%s with %d detached receiver(s)",
        host,
        target.library,
        save_library,
        save_file,
        len(receiver_saves),
    )
    return LibrarySaveResult(
        record=record, receivers=[s.receiver for s in receiver_saves], receiver_saves=receiver_saves
    )


def receiver_save_records(at_save: Snapshot, after: Snapshot, library_save: LibrarySaveRecord) -> list[SaveRecord]:
    """A receiver save, in the library save's file, for each receiver SAVLIB saved in full (verified before)."""
    saved = _saved_times(after)
    records = []
    for r in _detached(at_save):
        if r.attached_at is None:  # never: _detached keeps only receivers that were attached
            continue
        records.append(
            SaveRecord(
                host=library_save.host,
                qmgr=library_save.qmgr,
                qmgr_library=library_save.qmgr_library,
                receiver=r.name,
                library=r.library,
                attached_at=r.attached_at,
                detached_at=r.detached_at,
                first_sequence=r.first_sequence,
                last_sequence=r.last_sequence,
                previous=r.previous,
                next=r.next,
                size_bytes=r.size_bytes,
                save_file_library=library_save.save_file_library,
                save_file=library_save.save_file,
                saved_at=saved[r.name],
                verified_at=library_save.verified_at,
                run_id=library_save.run_id,
            )
        )
    return records


def _new_save_file(
    session: IbmiSession,
    host: str,
    target: Target,
    save_library: str,
    catalog: Catalog,
    tz: PartitionZone,
    taken: str | None = None,
) -> str:
    """A save file of its own for this library save, named and described as the receiver saves are."""
    today = tz.local(datetime.now(UTC)).date()
    return create_save_file(
        session,
        host=host,
        library=save_library,
        names=save_file_names(target.library, today),
        text=library_save_text(target.qmgr, target.library, today),
        known=catalog.known_save_files(host) | ({taken} if taken else set()),
        error=LibrarySaveFailed,
    )
