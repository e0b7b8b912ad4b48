"""Save files across the SSH connection: downloaded into the backup store, uploaded back from it for a restore.

IBM i's sftp-server shows save file LIB/NAME as ``/QSYS.LIB/LIB.LIB/NAME.FILE``, its 528-byte records end to end
(docs/ibmi-interfaces.md, section 5, with the sources). What that section says mqjournal must check is checked here:

- A download is compared with the size the host gave (`stat`) while the backup store computes its SHA-256; a short
  one leaves nothing in the store. What makes it proof is the host's own digest of the save file (`hostdigest`): its
  object list is read first (no byte is asked for a save file that no longer lists the copy's receivers), then the
  host digests it while the bytes come and reads the object list again; the store writes the sidecar only once the
  copy's SHA-256 equals that digest (BackupStore.put's `vouch`), and a copy whose SHA-256 differs leaves nothing.
  How the bytes come is `sftpcopy`'s: OpenSSH's ssh client where the session's login allows it (else the session's
  channel), reads kept in flight, and a dropped download resumed from the last byte received (downloading changes
  nothing on the host), within the session's retry attempts; a copy that came out short or long, or a file that
  changed meanwhile, starts over.
- An upload goes only into a save file that exists and is empty: CRTSAVF is the caller's (a write to a missing
  ``.FILE`` may create a physical file instead, IBM's C runtime and FTP say), and the file is opened without the
  create flag so that no upload can make one. The bytes come from `BackupStore.open_for_restore`, which refuses a
  store object whose checksum no longer matches before anything is sent. They go in whole records (the host checks
  each as it arrives), then the size on the host is compared. An upload is never retried once bytes were sent: the
  save file may hold part of them and is then no longer empty (DLTF, CRTSAVF, and the restore step again).
  Reading the object list back (QSYS2.SAVE_FILE_OBJECTS) before RSTOBJ is the restore plan's step, not this one's.

Each attempt is written to the session's audit log like a command, an intent before the first request and an
outcome after, its ``command`` reading ``SFTP GET /QSYS.LIB/...`` (or ``PUT``) with ``"transfer"`` set, and the
outcome holding the bytes moved and their SHA-256.
"""

from __future__ import annotations

import errno
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal, TypeVar

import paramiko
from paramiko.sftp import CMD_HANDLE, CMD_OPEN, SFTP_FLAG_WRITE

from mqjournal.backupstore import BackupStore, BackupStoreError, SourceIncomplete
from mqjournal.catalog import SaveFileCopy, StoredObject
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import hostdigest, sftpcopy, streamcopy
from mqjournal.ibmi.commands import save_file_path
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession, TransportError
from mqjournal.names import object_name

__all__ = [
    "RECORD_BYTES",
    "Route",
    "SaveFileAuthorityMissing",
    "SaveFileNotEmpty",
    "SaveFileNotFound",
    "SaveFileTransferError",
    "TransferAudit",
    "TransferInterrupted",
    "UploadIncomplete",
    "download_save_file",
    "remote_file",
    "upload_save_file",
]

log = logging.getLogger(__name__)

RECORD_BYTES = 528
"""A save file's record: the host checks each one as it is written, so uploads go in whole records."""

UPLOAD_CHUNK = RECORD_BYTES * 62
"""32,736 bytes: the most whole records in one SFTP write (paramiko sends at most 32,768 bytes a request)."""


class SaveFileTransferError(MqJournalError):
    """A save file could not be copied between the host and the backup store."""


class SaveFileNotFound(SaveFileTransferError):
    """The host has no such save file (SFTP: no such file)."""


class SaveFileAuthorityMissing(SaveFileTransferError):
    """The user profile may not read (or write) the save file (SFTP: permission denied)."""


class SaveFileNotEmpty(SaveFileTransferError):
    """An upload's target already holds data: IBM i places data only into an existing, empty save file."""


class TransferInterrupted(SaveFileTransferError):
    """A download dropped or came up short on every attempt; nothing of it is in the backup store."""


class UploadIncomplete(SaveFileTransferError):
    """An upload failed after bytes were sent: the save file may hold part of them, so it is not retried."""


# --- download ---------------------------------------------------------------------------------------------------


Route = Literal["direct", "stream_file", "cpytostmf"]
"""How a host's save files are downloaded: SFTP of /QSYS.LIB/... itself, or of a stream file copy (streamcopy) made
by PASE `cp` ("stream_file") or by CPYTOSTMF ("cpytostmf")."""


def download_save_file(
    session: IbmiSession,
    library: str,
    name: str,
    store: BackupStore,
    meta: SaveFileCopy,
    *,
    via: Route,
) -> StoredObject:
    """Copy save file `library`/`name` from the host into `store`, verified, described by `meta` (whose save file
    it must be). A dropped or short transfer is tried again by the session's retry policy, and ends in
    TransferInterrupted; a missing save file or missing authority is raised at once; nothing but a verified copy is
    ever left in the store. The copy carries the host's digest (`host_sha256`) and is kept only when its bytes hash
    to it: NoHostDigest (a host without a digest program), NotOurBytes (the save file no longer lists `meta`'s
    receivers, or changed while it was digested) and CopyNotVouched (other bytes arrived) leave nothing in the store.
    `via` is the host's recorded route (downloadroutes.route_for): "stream_file" and "cpytostmf" download a scratch
    copy the host makes first (streamcopy: PASE `cp`, or CPYTOSTMF), for a host recorded as needing it. It has no
    default, so that no caller downloads directly from a host whose sftp-server may not read QSYS.LIB by leaving it
    out."""
    path = save_file_path(library, name)
    where = f"{session.host} {object_name(library)}/{object_name(name)}"
    if (meta.save_file_library, meta.save_file) != (object_name(library), object_name(name)):
        raise ValueError(f"{where}: the copy's description is of {meta.save_file_path}")
    expected = [(o.library, o.receiver) for o in meta.objects]
    try:
        if via == "stream_file" or via == "cpytostmf":
            return _through_stream_file(session, library, name, store, meta, expected, where, by=via)
        # The object list first, alone: no byte is asked for a save file that does not list `meta`'s receivers.
        listing = hostdigest.read_listing(session, library, name, expected)
        # The host's digest (and the object list again) while the bytes come: both read the whole save file, and the
        # copy is kept only when its bytes hash to that digest (hostdigest.digest_listed), so running them side by
        # side proves what running them one after the other does, in the time of the longer one.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="host-digest") as pool:
            digest = pool.submit(hostdigest.digest_listed, session, listing)
            return _download_with_retries(session, path, where, store, meta, _Vouch(digest, meta))
    except hostdigest.SaveFileAbsent as exc:
        raise _refused(FileNotFoundError(errno.ENOENT, exc.problem), where, path, session.user, "download") from exc
    except hostdigest.SaveFileUnreadable as exc:
        raise _refused(PermissionError(errno.EACCES, exc.problem), where, path, session.user, "download") from exc
    except _DigestFailed as failed:
        raise failed.cause from None  # the digest command's own transport error, as the session raised it


def _through_stream_file(
    session: IbmiSession,
    library: str,
    name: str,
    store: BackupStore,
    meta: SaveFileCopy,
    expected: list[tuple[str, str]],
    where: str,
    *,
    by: streamcopy.StreamRoute,
) -> StoredObject:
    # The scratch copy's digest must equal the save file's (streamcopy), so the save file's is read first here.
    proof = hostdigest.read_proof(session, library, name, expected)
    return streamcopy.through_stream_file(
        session,
        library,
        name,
        meta.run_id,
        proof.sha256,
        lambda scratch: _download_with_retries(session, scratch, where, store, meta, _Vouch.done(proof, meta)),
        by=by,
    )


class _DigestFailed(Exception):
    """Carries the host digest command's transport error (the session's, after its retries) out of the download,
    apart from the transfer's own."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class _Vouch:
    """BackupStore.put's `vouch` for a download: the description to record once the copy's SHA-256 equals the
    host's digest of the save file (waiting for it when it is read beside the download); CopyNotVouched, or the
    digest's own refusal, otherwise, and put leaves nothing behind."""

    def __init__(self, proof: Future[hostdigest.HostProof], meta: SaveFileCopy) -> None:
        self._proof, self._meta = proof, meta

    @classmethod
    def done(cls, proof: hostdigest.HostProof, meta: SaveFileCopy) -> _Vouch:
        ready: Future[hostdigest.HostProof] = Future()
        ready.set_result(proof)
        return cls(ready, meta)

    def __call__(self, sha256: str) -> SaveFileCopy:
        try:
            proof = self._proof.result()
        except TransportError as exc:
            raise _DigestFailed(exc) from exc
        hostdigest.check_sha256(proof, sha256)
        return self._meta.model_copy(update={"host_sha256": proof.sha256})


def _download_with_retries(
    session: IbmiSession, path: str, where: str, store: BackupStore, meta: SaveFileCopy, vouch: _Vouch
) -> StoredObject:
    try:
        # A drop is resumed inside the attempt (sftpcopy, the session's attempts); a copy that came out short or
        # long, or a file that changed, starts over.
        return _with_retries(
            session,
            lambda attempt: _download(session, path, where, store, meta, vouch, attempt),
            (SourceIncomplete,),
            where,
            "downloading again",
        )
    except (HostUnreachable, ConnectionLost, SourceIncomplete) as exc:
        attempts = session.retry.attempts
        raise TransferInterrupted(
            where,
            f"the download of {path} failed on all {attempts} attempt(s), the last: {_why(exc)}; nothing of "
            "it is in the backup store",
            "check the network to the partition and its sshd, then run the step again; the save file on the "
            "host is not counted as backed up off the partition",
        ) from exc


_T = TypeVar("_T")


def _with_retries(
    session: IbmiSession,
    attempt_once: Callable[[int], _T],
    retry_on: tuple[type[Exception], ...],
    where: str,
    again: str,
) -> _T:
    """`attempt_once(attempt)` under the session's retry policy, as commands are: a `retry_on` failure is tried again
    after the policy's pause, and the last one is raised."""
    attempts = session.retry.attempts
    for attempt in range(1, attempts + 1):
        try:
            return attempt_once(attempt)
        except retry_on as exc:
            if attempt == attempts:
                raise
            delay = session.retry.delay_after(attempt)
            log.warning("%s: %s; %s in %.2f s (%d/%d)", where, _why(exc), again, delay, attempt + 1, attempts)
            session.pause(delay)
    raise AssertionError("unreachable: the last attempt returns or raises")


def remote_file(
    session: IbmiSession, path: str, *, carrier: sftpcopy.Carrier | None = None, max_read: int = sftpcopy.MAX_READ
) -> sftpcopy.RemoteFile:
    """The file at `path` (a save file, a Linux log extent) as sftpcopy reads it for `session`: its carrier, the
    session's retry attempts, and an audit intent written before each attempt (its outcome is the caller's)."""
    return sftpcopy.RemoteFile(
        carrier or sftpcopy.carrier_for(session),
        path,
        host=session.host,
        attempts=session.retry.attempts,
        delay_after=session.retry.delay_after,
        pause=session.pause,
        begin=lambda attempt: TransferAudit(session, "get", path, attempt),
        max_read=max_read,
    )


def _download(
    session: IbmiSession, path: str, where: str, store: BackupStore, meta: SaveFileCopy, vouch: _Vouch, attempt: int
) -> StoredObject:
    # How the bytes come (OpenSSH's client or the session's channel, reads in flight, resumed after a drop from the
    # last byte received) is sftpcopy's; what they are checked against and where they go is this module's.
    remote = remote_file(session, path)
    try:
        with remote:
            size = remote.open()
            try:
                stored = store.put(_from_host(remote.chunks()), meta, expected_size=size, vouch=vouch)
            except _RemoteReadFailed as failed:
                raise failed.cause from None  # the SFTP error, apart from the store's own OSErrors
            except OSError as exc:
                raise _store_error(store, exc) from exc
    except OSError as exc:
        remote.done("failed", error=str(exc))
        raise _refused(exc, where, path, session.user, "download") from exc
    except (HostUnreachable, ConnectionLost) as exc:
        remote.done("transport_error", error=str(exc))
        raise
    except _DigestFailed as failed:
        remote.done("failed", error=f"the host's digest of the save file could not be read: {failed.cause}")
        raise
    except MqJournalError as exc:  # SourceIncomplete, CopyNotVouched, NotOurBytes, the login or the store refused
        remote.done("failed", error=str(exc))
        raise
    remote.done("ok", sha256=stored.sha256)
    log.info("%s: %s downloaded into %s (%d bytes)", where, path, stored.key, stored.size_bytes)
    return stored


class _RemoteReadFailed(Exception):
    """Carries an SFTP read's error through BackupStore.put, apart from the store's own OSErrors."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _from_host(chunks: Iterator[bytes]) -> Iterator[bytes]:
    try:
        yield from chunks
    except OSError as exc:
        raise _RemoteReadFailed(exc) from exc


# --- upload -----------------------------------------------------------------------------------------------------


def upload_save_file(session: IbmiSession, store: BackupStore, key: str, library: str, name: str) -> StoredObject:
    """Copy the stored object `key` into save file `library`/`name` on the host, which must exist and be empty
    (CRTSAVF first). Returns the stored object it came from. The object is verified before anything is sent
    (StoreObjectCorrupt otherwise); after the upload the save file's size must be the object's."""
    path = save_file_path(library, name)
    where = f"{session.host} {object_name(library)}/{object_name(name)}"
    with store.open_for_restore(key) as reader:
        stored = reader.stored
        if stored.size_bytes % RECORD_BYTES:
            raise SaveFileTransferError(
                where,
                f"the stored object {key} is {stored.size_bytes} bytes, not whole {RECORD_BYTES}-byte save file "
                "records; nothing was sent",
                "restore from another copy of these receivers; this one is not a save file's bytes",
            )
        # A drop reaches here only before anything was written (see _upload): the save file is still empty.
        _with_retries(
            session,
            lambda attempt: _upload(session, path, where, reader.read, stored, attempt),
            (HostUnreachable, ConnectionLost),
            where,
            "uploading again",
        )
        return stored


def _upload(
    session: IbmiSession, path: str, where: str, read: Callable[[int], bytes], stored: StoredObject, attempt: int
) -> None:
    audit = TransferAudit(session, "put", path, attempt)
    sent = [0]
    opened = False
    try:
        with session.sftp() as sftp:
            found = sftp.stat(path).st_size or 0
            if found:
                audit.done("failed", error=f"the save file holds {found} bytes")
                raise SaveFileNotEmpty(
                    where,
                    f"the save file holds {found} bytes, and IBM i places data only into an empty save file; "
                    "nothing was sent",
                    f"if it holds nothing needed, DLTF FILE({_qualified(where)}) and CRTSAVF it again, then run the "
                    "restore step again",
                )
            remote = _open_for_writing(sftp, path)
            opened = True  # from here the save file may take bytes: no retry, and no claim that it is empty
            with remote:
                remote.set_pipelined(True)
                for chunk in _records(read):
                    remote.write(chunk)
                    sent[0] += len(chunk)
            landed = sftp.stat(path).st_size or 0
    except SaveFileNotEmpty:
        raise
    except (OSError, HostUnreachable, ConnectionLost, MqJournalError) as exc:
        dropped = isinstance(exc, (HostUnreachable, ConnectionLost))
        audit.done("transport_error" if dropped else "failed", error=str(exc), size_bytes=sent[0])
        if opened:
            raise _incomplete(where, path, exc, sent[0], stored.size_bytes) from exc
        if isinstance(exc, OSError):
            raise _refused(exc, where, path, session.user, "upload") from exc
        raise
    if landed != stored.size_bytes:
        audit.done("failed", error=f"the save file holds {landed} bytes after the upload", size_bytes=sent[0])
        raise _incomplete(where, path, None, landed, stored.size_bytes)
    audit.done("ok", size_bytes=sent[0], sha256=stored.sha256)
    log.info("%s: %s uploaded from %s (%d bytes)", where, path, stored.key, sent[0])


def _open_for_writing(sftp: paramiko.SFTPClient, path: str) -> paramiko.SFTPFile:
    """Open `path` for writing without the create and truncate flags that paramiko's mode "w" sends: a save file
    must already exist (CRTSAVF), and an upload must never make some other kind of file in its place."""
    kind, message = sftp._request(CMD_OPEN, path, SFTP_FLAG_WRITE, paramiko.SFTPAttributes())  # type: ignore[attr-defined]  # paramiko's own request, not in its stubs
    if kind != CMD_HANDLE:
        raise paramiko.SFTPError("Expected handle")
    # Unbuffered: each write is one request, so each carries the whole records _records cut.
    return paramiko.SFTPFile(sftp, message.get_binary(), "wb", bufsize=0)


def _records(read: Callable[[int], bytes]) -> Iterator[bytes]:
    """The object's bytes in pieces of whole records, whatever sizes the store's reads return."""
    pending = b""
    while data := read(UPLOAD_CHUNK):
        pending += data
        cut = len(pending) - len(pending) % UPLOAD_CHUNK
        for start in range(0, cut, UPLOAD_CHUNK):
            yield pending[start : start + UPLOAD_CHUNK]
        pending = pending[cut:]
    if pending:
        yield pending  # the rest, whole records too: the size was checked to be a multiple of 528


# --- errors and the audit ---------------------------------------------------------------------------------------


class TransferAudit:
    """One transfer attempt in the session's audit log: the intent now, before any request, the outcome once."""

    def __init__(self, session: IbmiSession, direction: str, path: str, attempt: int) -> None:
        self._session, self._direction, self._attempt = session, direction, attempt
        self._command = f"SFTP {direction.upper()} {path}"
        self._started = time.monotonic()
        self._id = session.audit.intent(
            host=session.host, user=session.user, command=self._command, attempt=attempt, transfer=direction
        )
        self._done = False

    def done(self, outcome: str, *, error: str | None = None, size_bytes: int = 0, sha256: str | None = None) -> None:
        if self._done:
            return
        self._done = True
        self._session.audit.record(
            host=self._session.host,
            user=self._session.user,
            command=self._command,
            exit_status=None,
            msg_ids=[],
            duration_ms=(time.monotonic() - self._started) * 1000.0,
            attempt=self._attempt,
            outcome=outcome,
            error=error,
            intent_id=self._id,
            transfer=self._direction,
            size_bytes=size_bytes,
            sha256=sha256,
        )


def _qualified(where: str) -> str:
    return where.rpartition(" ")[2]


def _why(exc: BaseException) -> str:
    return exc.problem if isinstance(exc, MqJournalError) else str(exc)


def _refused(exc: OSError, where: str, path: str, user: str, what: str) -> SaveFileTransferError:
    """The host's SFTP answer as an error that says what to do (sftp-server's errno mapping: see the module doc)."""
    if exc.errno == errno.ENOENT:
        if what == "upload":
            return SaveFileNotFound(
                where,
                f"no such save file: {path} does not exist (or its library does not); nothing was sent",
                f"CRTSAVF FILE({_qualified(where)}) first, then upload again; an upload never creates the save file",
            )
        return SaveFileNotFound(
            where, f"no such save file: {path} does not exist", "look for the save file's new name in the catalog"
        )
    if exc.errno in (errno.EACCES, errno.EPERM):
        needs = "*RWX data authority to the save file" if what == "upload" else "*READ authority to the save file"
        return SaveFileAuthorityMissing(
            where,
            f"no authority: user profile {user} may not {what} {path}",
            f"grant {user} *EXECUTE on the library and {needs} (GRTOBJAUT), then run the step again",
        )
    return SaveFileTransferError(
        where,
        f"the host refused the {what} of {path} ({exc})",
        "look at the save file on the host (WRKOBJLCK for a job using it, DSPSAVF), then run the step again",
    )


def _incomplete(where: str, path: str, exc: BaseException | None, got: int, expected: int) -> UploadIncomplete:
    why = f" ({_why(exc)})" if exc is not None else ""
    return UploadIncomplete(
        where,
        f"the upload into {path} did not complete{why}: {got} of {expected} bytes; the save file may hold part of "
        "them, so it is not uploaded into again",
        f"DLTF FILE({_qualified(where)}), CRTSAVF FILE({_qualified(where)}), then run the restore step again",
    )


def _store_error(store: BackupStore, exc: OSError) -> BackupStoreError:
    return BackupStoreError(
        store.url,
        f"the backup store could not be written ({type(exc).__name__}: {exc}); nothing of the copy was kept",
        "check the store (space, permissions, the mount or network), then run the step again",
    )
