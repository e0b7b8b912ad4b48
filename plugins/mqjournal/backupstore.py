"""The backup store: save files copied off the partition, each verified and described by a JSON sidecar.

A save file on the partition it saves is no backup: losing that disk or ASP loses the receivers and their saves
together. The store is where copies go: a folder by default (`$MQJOURNAL_DATA_DIR/backups`), or any fsspec URL,
e.g. `s3://bucket/mqjournal`, `gs://...`, `memory://...` (tests), a mounted NFS folder. Layout:

    <store>/<host>/<qmgr>/<run id>/<SAVFLIB>.<SAVF>.savf        the save file's bytes, as IBM i serves them
    <store>/<host>/<qmgr>/<run id>/<SAVFLIB>.<SAVF>.savf.json   its sidecar: a StoredObject (mqjournal.catalog)

Each path component is percent-encoded but for A-Z a-z 0-9 . _ - (a queue manager name may hold '/' and '%', an
IBM i name '#', '$' and '@'), and a leading '.' too: no name can climb out of its folder or hide a file. Run ids are
shortened as everywhere else (`settings.safe`).

**A sidecar means verified.** `put` streams the bytes into the store computing size and SHA-256, has the caller
vouch for that digest (the copy step compares it with the host's own digest of the save file), makes sure the store
holds what was written, and only then writes the sidecar (under a temporary name, moved into place, so a
half-written one is never read as a record). How a store is made sure of depends on its kind (`_written_back`): an
S3 object written in one PutObject by the SHA-256 the store computed as it received it (one HEAD), a local folder by
nothing more (a read right after the write is served from the page cache just written, so it proves nothing that
the full re-read before a delete and the scrub do not), any other store by reading the object back in full. A failed
copy, vouching or verification removes what it wrote. `delete` removes the sidecar first for the same reason. An
object without a sidecar is an interrupted copy, never a backup.

**A sidecar is the store's record, not proof for the catalog.** The catalog counts a copy as a backup only when
the copy step made it (or the save step matched it with the host's save file); a catalog rebuilt from sidecars
holds their copies as claims (`catalog.StoredProof`). Right before a delete counts a copy, `still_holds` proves it
against the catalog's digest: by the SHA-256 an S3 store computed and keeps for it when there is one
(`storechecksum`), else by reading its bytes again in full; the scrub (`mqjournal.scrub`) reads every copy in full
within a set number of days. docs/backup-store.md gives what each reads.

**A folder store follows no symbolic link below its root**, for writes, reads and deletes (`StoreLinkRefused`): a
folder of the store linked elsewhere would receive copies and sidecars outside it. The store's URL is shown, and
recorded, without its password (`catalog.display_url`).

**fsspec, not ObjectStoragePath, is the front.** Airflow's ObjectStoragePath (airflow.sdk) is a pathlib face on an
fsspec filesystem; what it adds is credentials from an Airflow connection (`airflow.sdk.io.get_fs(scheme,
conn_id)`), plus lineage wrappers on every file handle. The store needs the filesystem calls only, and it must work
where Airflow is not: `mqjournal catalog rebuild --from-store` is the way back after losing the catalog database,
possibly with Airflow's metadata database gone too. So the store takes a URL and opens it with fsspec; given an
Airflow connection id (setting `backup_store_conn_id`), it asks `airflow.sdk.io.get_fs` for the same filesystem
ObjectStoragePath would use, and imports Airflow only then.
"""

from __future__ import annotations

import hashlib
import logging
import os
import posixpath
import re
import stat
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self
from urllib.parse import quote, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from mqjournal import storechecksum
from mqjournal.catalog import Catalog, SaveFileCopy, StoredObject, display_url
from mqjournal.errors import InvalidName, MqJournalError
from mqjournal.settings import Settings, safe

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem  # type: ignore[import-untyped]  # fsspec ships no type information

log = logging.getLogger(__name__)

CHUNK_SIZE = 1024 * 1024
"""Bytes read and written at a time: a save file of gigabytes never sits in memory."""

SAVE_FILE_SUFFIX = ".savf"
SIDECAR_SUFFIX = ".json"

_KEEP = "._-"  # the characters kept as they are in a path component, with A-Z a-z 0-9
_COMPONENT = re.compile(r"[A-Za-z0-9_%-][A-Za-z0-9._%-]*")


class BackupStoreError(MqJournalError):
    """The backup store could not be read or written, or holds something it should not."""


class StoreUnavailable(BackupStoreError):
    """The store's URL does not open: an unknown protocol, a missing filesystem package, a folder that is not there."""


class StoreVerificationFailed(BackupStoreError):
    """The bytes read back from the store are not the bytes written: nothing of the copy is left in the store."""


class SourceIncomplete(BackupStoreError):
    """The source gave another number of bytes than it was said to hold (a transfer cut short, a file that changed):
    nothing of the copy is left in the store."""


class StoreObjectCorrupt(BackupStoreError):
    """A stored object no longer matches its sidecar: it is never restored from."""


class StoreObjectExists(BackupStoreError):
    """A verified copy is already at that key: a backup is never overwritten."""


class StoreLinkRefused(BackupStoreError):
    """A symbolic link on the path of a key in a folder store: the store writes, reads and deletes only under its own
    folder, so nothing is done through it."""


class InvalidStoreKey(InvalidName):
    """A key that is not of the store's layout (a path that could climb out of the store, among others)."""


class _Reader(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


Source = _Reader | Iterable[bytes]
"""The save file's bytes: a binary file object (an SFTP file, an open local file) or an iterable of chunks."""


class VerifyResult(BaseModel):
    """A stored object re-read and compared with its sidecar. `problem` names what differs; None when it matches."""

    model_config = ConfigDict(frozen=True)

    key: str
    problem: str | None = None
    stored: StoredObject | None = None  # the sidecar, when it could be read
    size_bytes: int | None = None  # as read now
    sha256: str | None = None  # as read now

    @property
    def ok(self) -> bool:
        return self.problem is None

    def __str__(self) -> str:
        return f"{self.key}: {'verified' if self.ok else self.problem}"


class Sidecar(BaseModel):
    """One sidecar found in the store: its StoredObject, or why it could not be read."""

    model_config = ConfigDict(frozen=True)

    key: str  # of the save file object the sidecar describes
    stored: StoredObject | None = None
    problem: str | None = None


def component(text: str) -> str:
    """`text` as one path component of the store: percent-encoded, never '.', '..' or hidden."""
    if not text:
        raise InvalidStoreKey(repr(text), "an empty name cannot be a folder of the backup store", "give a name")
    encoded = quote(text, safe=_KEEP)
    return "%2E" + encoded[1:] if encoded.startswith(".") else encoded


def key_for(copy: SaveFileCopy) -> str:
    """The store key of a save file's copy: <host>/<qmgr>/<run id>/<SAVFLIB>.<SAVF>.savf."""
    name = f"{copy.save_file_library}.{copy.save_file}{SAVE_FILE_SUFFIX}"
    return "/".join(component(part) for part in (copy.host, copy.qmgr, safe(copy.run_id), name))


def check_key(key: str) -> str:
    """`key` when it is a key of the store's layout; InvalidStoreKey otherwise (a path traversal among others)."""
    parts = key.split("/") if isinstance(key, str) else []
    if (
        len(parts) != 4
        or not parts[3].endswith(SAVE_FILE_SUFFIX)
        or not all(_COMPONENT.fullmatch(p) and component(unquote(p)) == p for p in parts)
    ):
        raise InvalidStoreKey(
            repr(key),
            "not a key of the backup store (<host>/<qmgr>/<run id>/<SAVFLIB>.<SAVF>.savf, each part percent-encoded, "
            "none '.' or '..', no leading '/')",
            "use a key the store gave (StoredObject.key, or a sidecar's path without .json)",
        )
    return key


class _Recorded(Protocol):
    """What a sidecar records of any verified copy (a StoredObject, a StoredExtent)."""

    @property
    def key(self) -> str: ...
    @property
    def size_bytes(self) -> int: ...
    @property
    def sha256(self) -> str: ...


@dataclass(frozen=True)
class _Digest:
    size_bytes: int
    sha256: str


class ObjectStore:
    """Verified objects with JSON sidecars at `url`, on the fsspec filesystem `fs` (opened from the URL when not
    given): what every kind of copy shares (save files here, a Linux queue manager's log extents in linuxmq): the
    write that streams and hashes, has the caller vouch, makes sure of what the store holds and removes it otherwise;
    the sidecar written last; no symbolic link followed below a folder store's root."""

    def __init__(self, url: str | Path, *, fs: AbstractFileSystem | None = None, conn_id: str | None = None) -> None:
        self.fs, self.root = _open(str(url), fs=fs, conn_id=conn_id)
        self.url: str = display_url(self.fs.unstrip_protocol(self.root))
        """The store's URL in one spelling (file:///srv/backups for /srv/backups), its password as ***: the catalog's
        and the sidecars' store_url, and the name in every message (a password rotates; the store stays the same)."""
        protocols = (self.fs.protocol,) if isinstance(self.fs.protocol, str) else tuple(self.fs.protocol)
        self._folder: str | None = os.path.realpath(self.root) if {"file", "local"} & set(protocols) else None
        """A folder store's root with its links resolved (the configured folder may be a link to a mount): every
        path of a key must stay under it. None on other filesystems, which have no links."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def _refuse_links(self, path: str) -> None:
        """StoreLinkRefused when any component of `path` below the root is a symbolic link, or the path resolves
        outside the root: a folder of the store linked elsewhere would receive copies and sidecars outside it, and a
        copy replaced by a link is no longer the store's. Each component is looked at without following links
        (lstat); components not there yet are what a write creates, as real folders."""
        if self._folder is None:
            return
        current = self.root
        for part in posixpath.relpath(path, self.root).split("/"):
            current = posixpath.join(current, part)
            try:
                mode = os.lstat(current).st_mode
            except (FileNotFoundError, NotADirectoryError):
                break  # not there (yet), or under a file: the read or write itself fails, with its own error
            except OSError as exc:
                raise self._link_refused(current, f"could not be looked at ({exc})") from None
            if stat.S_ISLNK(mode):
                raise self._link_refused(current, f"is a symbolic link (to {os.readlink(current)})")
        resolved = os.path.realpath(path)
        if resolved != self._folder and not resolved.startswith(self._folder.rstrip("/") + "/"):
            raise self._link_refused(path, f"resolves to {resolved}, outside the store")

    def _link_refused(self, path: str, problem: str) -> StoreLinkRefused:
        return StoreLinkRefused(
            self._where(path),
            f"{problem}: the backup store writes, reads and deletes only under its own folder {self._folder} and "
            "follows no symbolic link below it; nothing was done through it",
            "replace the link by a real folder or file of the store (move what it points to into the store), or set "
            "the store's URL to the folder the link points to",
        )

    def _where(self, path: str) -> str:
        """A path of the store as messages name it: as a URL, without a password."""
        return display_url(self.fs.unstrip_protocol(path))

    def exists(self) -> bool:
        """Whether the store's root is there (a folder; on object stores, anything under the prefix)."""
        try:
            return bool(self.fs.exists(self.root))
        except OSError:
            return False

    def _path(self, key: str) -> str:
        """The path of `key` in this store's layout, checked (each kind of copy has its own layout)."""
        raise NotImplementedError

    def get(self, key: str) -> _Recorded | None:
        """The sidecar of `key`, or None when there is none; BackupStoreError when it cannot be read."""
        raise NotImplementedError

    def still_holds(self, stored: _Recorded, *, reread: bool = False) -> str | None:
        """Why the store does not hold `stored` as recorded now (None when it does): asked right before a delete
        (or an extent's release) counts the copy as a backup. The sidecar must record the same copy, and the object
        must have the recorded size and SHA-256 (`stored` is the catalog's record, so the digest compared is the one
        recorded when the copy verified, not whatever the sidecar says now).

        The SHA-256 is the one an S3 store computed and keeps for the object when it equals the catalog's
        (`storechecksum`: a copy written in one PutObject); otherwise, and always with `reread` (the scrub, which
        looks for rot under the store), the object's bytes read again in full. A size alone proves nothing: an
        object overwritten with zeros, or one flipped byte, keeps its size. docs/backup-store.md gives the cost."""
        try:
            found = self.get(stored.key)
        except BackupStoreError as exc:
            return exc.problem
        if found is None:
            return f"{stored.key} has no sidecar in {self.url}"
        if (found.size_bytes, found.sha256) != (stored.size_bytes, stored.sha256):
            return f"the sidecar of {stored.key} records another copy than the catalog"
        try:
            path = self._path(stored.key)
        except BackupStoreError as exc:
            return exc.problem
        return self._holds_bytes(path, stored.key, stored.size_bytes, stored.sha256, reread=reread)

    def _put_verified(
        self,
        path: str,
        source: Source,
        *,
        name: str,
        expected_size: int | None,
        vouch: Callable[[str], None] | None,
        short: tuple[str, str],
    ) -> _Digest:
        """Stream `source` to `path` computing size and SHA-256; then the size check, the caller's vouching and the
        store's own account of what it holds; anything short of all three removes what was written and raises.
        `short`: what the source should hold and what to do, for SourceIncomplete's message."""
        self.fs.makedirs(posixpath.dirname(path), exist_ok=True)
        self._refuse_links(path)  # a link put in place while the folders were made
        try:
            written = self._write(source, path, storechecksum.write_options(self.fs, expected_size))
            if expected_size is not None and written.size_bytes != expected_size:
                raise SourceIncomplete(
                    name,
                    f"the source gave {written.size_bytes} bytes where {short[0]} {expected_size}; the copy was "
                    "removed",
                    short[1],
                )
            if vouch is not None:
                vouch(written.sha256)
            read_back = self._written_back(path, written)
        except BaseException:
            self._discard(path)  # a copy cut off (a dropped SFTP session, a full store, bytes not vouched for)
            raise
        if read_back != written:
            self._discard(path)
            raise StoreVerificationFailed(
                name,
                f"the backup store gave back {read_back.size_bytes} bytes with SHA-256 {read_back.sha256} where "
                f"{written.size_bytes} bytes with SHA-256 {written.sha256} were written; the copy was removed",
                "check the store (space, a flaky mount or network, its own checksums), then run the step again; the "
                "original on the host is not counted as backed up off it until a copy verifies",
            )
        return written

    def _holds_bytes(self, path: str, key: str, size_bytes: int, sha256: str, *, reread: bool) -> str | None:
        """Why the object at `path` is not `size_bytes` bytes with SHA-256 `sha256` now (None when it is): by the
        checksum an S3 store computed and keeps for it when it equals them, else by reading it again in full."""
        try:
            recorded = storechecksum.KeptChecksum(size_bytes, sha256)
            if not reread and storechecksum.kept_sha256(self.fs, path) == recorded:
                return None  # the store computed it from the bytes it holds at the key now: none is read
            now = self._digest(path)
        except BackupStoreError as exc:
            return exc.problem
        except OSError as exc:
            return f"{key} could not be read in {self.url} ({exc})"
        if now.size_bytes != size_bytes:
            return f"{key} holds {now.size_bytes} bytes where {size_bytes} were verified"
        if now.sha256 != sha256:
            return (
                f"{key} re-read now has SHA-256 {now.sha256} where {sha256} was verified (the same size: its bytes "
                "changed)"
            )
        return None

    def _record(self, path: str, record: BaseModel) -> None:
        """The sidecar of a verified copy, written last: a copy whose sidecar cannot be written goes with it."""
        try:
            self._write_sidecar(path, record)
        except BaseException:
            self._discard(path + SIDECAR_SUFFIX)
            self._discard(path)
            raise

    def _write_sidecar(self, path: str, record: BaseModel) -> None:
        body = record.model_dump_json(indent=2).encode()
        if self._folder is None:
            # An object store's PUT is whole (no reader sees it half-written); a move there would be a copy and a
            # delete, and on a bucket with versioning or object lock it would leave the partial object's versions.
            with self.fs.open(path + SIDECAR_SUFFIX, "wb") as out:
                out.write(body)
            return
        # Written beside and moved into place: a sidecar in a folder is never seen half-written (a rename on a local
        # or NFS folder).
        partial = f"{path}{SIDECAR_SUFFIX}.{uuid.uuid4().hex}.partial"
        try:
            with self.fs.open(partial, "wb") as out:
                out.write(body)
            self.fs.mv(partial, path + SIDECAR_SUFFIX)
        finally:
            self._discard(partial)

    def _write(self, source: Source, path: str, options: dict[str, Any]) -> _Digest:
        digest, size = hashlib.sha256(), 0
        with self.fs.open(path, "wb", **options) as out:
            for chunk in _chunks(source):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        return _Digest(size, digest.hexdigest())

    def _written_back(self, path: str, written: _Digest) -> _Digest:
        """What the store holds at `path` right after `written` went there, as far as its kind can say cheaply and
        usefully (the module doc): the SHA-256 an S3 store computed as it received a one-PutObject copy; for a local
        folder, `written` itself (a read now would come from the page cache this process just filled: the re-read
        that proves the copy is the one before a delete, `still_holds`); otherwise the object read back in full."""
        if self._folder is not None:
            return written
        kept = storechecksum.kept_sha256(self.fs, path)
        if kept is not None:
            return _Digest(kept.size_bytes, kept.sha256)
        return self._digest(path)

    def _remove(self, path: str) -> None:
        if self.fs.exists(path):
            self.fs.rm_file(path)

    def _discard(self, path: str) -> None:
        """Clean up after a failure without hiding it: a store that cannot remove is reported by the original error
        (and what is left has no sidecar, so it is never taken for a backup)."""
        try:
            self._remove(path)
        except OSError:
            log.warning(
                "could not remove %s from the backup store after a failed copy", self._where(path), exc_info=True
            )

    # --- reading ----------------------------------------------------------------------------------------------

    def _digest(self, path: str) -> _Digest:
        self._refuse_links(path)
        digest, size = hashlib.sha256(), 0
        with self.fs.open(path, "rb") as f:
            while chunk := f.read(CHUNK_SIZE):
                digest.update(chunk)
                size += len(chunk)
        return _Digest(size, digest.hexdigest())


class BackupStore(ObjectStore):
    """The save files' backup store (the module doc)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> BackupStore:
        """The store the settings name (the data folder's backups/ unless set), with their Airflow connection."""
        return cls(settings.backup_store, conn_id=settings.backup_store_conn_id)

    def _path(self, key: str) -> str:
        path = posixpath.join(self.root, check_key(key))
        self._refuse_links(path)
        self._refuse_links(path + SIDECAR_SUFFIX)
        return path

    # --- writing ----------------------------------------------------------------------------------------------

    def put(
        self,
        source: Source,
        copy: SaveFileCopy,
        *,
        expected_size: int | None = None,
        vouch: Callable[[str], SaveFileCopy] | None = None,
    ) -> StoredObject:
        """Copy a save file into the store, verified: the bytes streamed in, computing size and SHA-256, the store
        made sure of them as its kind allows (the module doc), the sidecar written last. Raises
        StoreVerificationFailed (nothing left behind) when the store does not hold what was written,
        StoreObjectExists when a verified copy is already there.

        `expected_size`: the size the source is known to have (the save file's size on the host); a source that
        ends short of it, or runs past it, raises SourceIncomplete and leaves nothing behind. A transfer that ends
        early without an error (a server closing the file at a dropped read) would otherwise look complete.

        `vouch`: called with the SHA-256 of the bytes written once they are all in the store, before the sidecar;
        it returns the description to record (`copy` with the host's digest: transfer) or raises, and then nothing
        is left behind: no sidecar is ever written for bytes nobody vouched for."""
        key = key_for(copy)
        path = self._path(key)
        if self.get(key) is not None:
            raise StoreObjectExists(
                self._name(key, copy),
                "a verified copy of this save file is already in the backup store, and a backup is never overwritten",
                "skip the copy (BackupStore.verify tells whether the one there still matches); if it no longer does, "
                "delete it (BackupStore.delete) and copy again",
            )
        created_at = datetime.now(UTC)
        vouched = [copy]

        def vouch_for(sha256: str) -> None:
            if vouch is not None:
                vouched[0] = vouch(sha256)

        written = self._put_verified(
            path,
            source,
            name=self._name(key, copy),
            expected_size=expected_size,
            vouch=vouch_for,
            short=(
                "the save file holds",
                "copy it again; if the size keeps differing, look at the save file on the host (DSPSAVF, its size) "
                "and at what carries the transfer",
            ),
        )
        copy = vouched[0]
        stored = StoredObject(
            **copy.model_dump(),
            store_url=self.url,
            key=key,
            size_bytes=written.size_bytes,
            sha256=written.sha256,
            created_at=created_at,
            verified_at=datetime.now(UTC),
        )
        self._record(path, stored)
        return stored

    def delete(self, key: str) -> None:
        """Remove a stored object and its sidecar (the sidecar first: a sidecar without its object would be a
        record of a backup that is gone). Deleting what is not there is not an error."""
        path = self._path(key)
        self._remove(path + SIDECAR_SUFFIX)
        self._remove(path)

    def get(self, key: str) -> StoredObject | None:
        """The sidecar of `key`, or None when there is none. Raises BackupStoreError when it cannot be read."""
        path = self._path(key) + SIDECAR_SUFFIX
        if not self.fs.exists(path):
            return None
        return self._read_sidecar(path, key)

    def _read_sidecar(self, path: str, key: str) -> StoredObject:
        self._refuse_links(path)
        try:
            with self.fs.open(path, "rb") as f:
                stored = StoredObject.model_validate_json(f.read())
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(map(str, first["loc"])) or "(the whole file)"
            raise BackupStoreError(
                self._where(path),
                f"the sidecar is not a valid {stored_format()} record ({where}: {first['msg']})",
                "restore the sidecar from another copy of the store; the object next to it is not used until then",
            ) from None
        except OSError as exc:
            raise BackupStoreError(
                self._where(path),
                f"the sidecar could not be read ({exc})",
                "check the store's permissions and reachability",
            ) from None
        if stored.key != key:
            raise BackupStoreError(
                self._where(path),
                f"the sidecar describes {stored.key}, not the object next to it ({key})",
                "a sidecar was moved or copied by hand: put it back beside its own object",
            )
        return stored

    def verify(self, key: str) -> VerifyResult:
        """Re-read a stored object and compare its size and SHA-256 with its sidecar."""
        check_key(key)  # a key outside the layout is refused, not reported
        try:
            path = self._path(key)
            stored = self.get(key)
        except BackupStoreError as exc:
            return VerifyResult(key=key, problem=f"{exc.problem}; {exc.action}")
        if stored is None:
            return VerifyResult(key=key, problem="no sidecar: not a verified copy (an interrupted one)")
        if not self.fs.exists(path):
            return VerifyResult(
                key=key, stored=stored, problem="the object is missing from the store (its sidecar is there)"
            )
        found = self._digest(path)
        result = VerifyResult(key=key, stored=stored, size_bytes=found.size_bytes, sha256=found.sha256)
        if found.size_bytes != stored.size_bytes:
            problem = f"size {found.size_bytes} bytes where the sidecar records {stored.size_bytes}"
        elif found.sha256 != stored.sha256:
            problem = f"SHA-256 {found.sha256} where the sidecar records {stored.sha256} (same size: bytes changed)"
        else:
            return result
        return result.model_copy(update={"problem": f"mismatch: {problem}"})

    def open_for_restore(self, key: str) -> RestoreReader:
        """The stored object's bytes for a restore, after a verification; StoreObjectCorrupt when it does not match.

        The reader checks the SHA-256 again as it is read and raises StoreObjectCorrupt at the end when the bytes
        changed meanwhile: the upload to the host is then not to be trusted (the restore plan checks it anyway).
        """
        result = self.verify(key)
        if not result.ok or result.stored is None:
            raise StoreObjectCorrupt(
                key,
                f"{result.problem}; nothing is restored from it",
                "restore from another save of the receivers (an older run, another store), or treat them as a gap",
            )
        return RestoreReader(self.fs.open(self._path(key), "rb"), result.stored)

    def iter_sidecars(self, host: str | None = None, qmgr: str | None = None) -> Iterator[Sidecar]:
        """Every sidecar in the store (of one host, or one queue manager), in key order, read or with its problem."""
        prefix = [component(host) if host else "*", component(qmgr) if qmgr else "*", "*"]
        pattern = posixpath.join(self.root, *prefix, f"*{SAVE_FILE_SUFFIX}{SIDECAR_SUFFIX}")
        for path in sorted(self.fs.glob(pattern)):
            key = posixpath.relpath(path, self.root).removesuffix(SIDECAR_SUFFIX)
            try:
                yield Sidecar(key=check_key(key), stored=self._read_sidecar(path, key))
            except BackupStoreError as exc:
                yield Sidecar(key=key, problem=f"{exc.problem}; {exc.action}")
            except InvalidName:
                yield Sidecar(key=key, problem="a file of the store's layout with a name the store never gives")

    def list_objects(self, host: str | None = None, qmgr: str | None = None) -> list[StoredObject]:
        """The stored objects whose sidecars read (see `iter_sidecars` for the ones that do not)."""
        return [s.stored for s in self.iter_sidecars(host, qmgr) if s.stored is not None]

    def unrecorded_objects(self) -> list[str]:
        """Keys of save file objects without a sidecar: copies interrupted before their verification."""
        found = self.fs.glob(posixpath.join(self.root, "*", "*", "*", f"*{SAVE_FILE_SUFFIX}"))
        return sorted(
            key
            for path in found
            if not self.fs.exists(path + SIDECAR_SUFFIX)
            for key in [posixpath.relpath(path, self.root)]
        )

    def links(self) -> list[str]:
        """Every symbolic link below a folder store's root (none elsewhere): what is behind one is not the store's,
        and is never listed, read or recorded from it (`_refuse_links`)."""
        if self._folder is None:
            return []
        found = []
        for folder, dirs, files in os.walk(self.root, followlinks=False):
            found += [
                posixpath.relpath(posixpath.join(folder, name), self.root)
                for name in dirs + files
                if os.path.islink(posixpath.join(folder, name))
            ]
        return sorted(found)

    def total_bytes(self, host: str, qmgr: str) -> int:
        """What one queue manager's save files take in the store (by their sidecars)."""
        return sum(s.size_bytes for s in self.list_objects(host, qmgr))

    @staticmethod
    def _name(key: str, copy: SaveFileCopy) -> str:
        return f"{copy.save_file_path} of {copy.host} {copy.qmgr} in the backup store at {key}"


class RestoreReader:
    """A stored object's bytes, hashed as they are read; at the end, StoreObjectCorrupt if they were not the ones
    verified."""

    def __init__(self, raw: Any, stored: StoredObject) -> None:
        self._raw = raw
        self.stored = stored
        self._digest = hashlib.sha256()
        self._size = 0

    def read(self, size: int = CHUNK_SIZE, /) -> bytes:
        chunk: bytes = self._raw.read(size)
        if chunk:
            self._digest.update(chunk)
            self._size += len(chunk)
        elif (self._size, self._digest.hexdigest()) != (self.stored.size_bytes, self.stored.sha256):
            raise StoreObjectCorrupt(
                self.stored.key,
                f"the object changed while it was read ({self._size} bytes, SHA-256 {self._digest.hexdigest()}; the "
                f"sidecar records {self.stored.size_bytes} bytes, {self.stored.sha256})",
                "do not use what was read; verify the store and restore from a copy that matches",
            )
        return chunk

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _chunks(source: Source) -> Iterator[bytes]:
    read = getattr(source, "read", None)
    if read is None:
        yield from source  # type: ignore[misc]  # an iterable of chunks: the other arm of Source
        return
    while chunk := read(CHUNK_SIZE):
        yield chunk


def stored_format() -> str:
    return StoredObject.model_fields["sidecar"].default


def _open(url: str, *, fs: AbstractFileSystem | None, conn_id: str | None) -> tuple[AbstractFileSystem, str]:
    """The filesystem and root path of a store URL (a plain path is a local folder)."""
    if fs is not None:
        return fs, fs._strip_protocol(url).rstrip("/") or "/"
    scheme = urlsplit(url).scheme if "://" in url else "file"
    try:
        if conn_id is not None:
            from airflow.sdk.io import get_fs  # only here: the store is usable where Airflow is not installed

            opened = get_fs(scheme, conn_id)
            return opened, opened._strip_protocol(url).rstrip("/") or "/"
        import fsspec.core  # type: ignore[import-untyped]  # fsspec ships no type information

        opened, root = fsspec.core.url_to_fs(url)
    except ImportError as exc:
        raise StoreUnavailable(
            display_url(url),
            f"the filesystem for {scheme}:// is not installed ({exc.name or exc})",
            f"install fsspec's package for {scheme}:// (s3fs for s3://, gcsfs for gs://) on this machine",
        ) from None
    except ValueError as exc:
        raise StoreUnavailable(
            display_url(url),
            f"not a backup store URL ({str(exc).replace(url, display_url(url))})",
            "give a folder, a file:// URL or an fsspec URL such as s3://bucket/x",
        ) from None
    return opened, root.rstrip("/") or "/"


# --- rebuilding the catalog from the store --------------------------------------------------------------------


class RebuildSummary(BaseModel):
    """What `rebuild_catalog` found in a store and recorded."""

    model_config = ConfigDict(frozen=True)

    store_url: str
    recorded: list[str] = []  # keys of the stored objects recorded in the catalog, as claims (claimed_by_sidecar)
    receiver_saves: int = 0  # receiver saves recorded from their object lists
    without_attach_time: list[str] = []  # receivers listed without an attach time: not recorded as saves
    mismatches: list[str] = []  # objects that failed their verification: not recorded
    unreadable: list[str] = []  # sidecars that could not be read: not recorded
    unrecorded: list[str] = []  # objects without a sidecar (interrupted copies): not recorded
    links: list[str] = []  # symbolic links in a folder store: nothing behind them is read or recorded

    @property
    def clean(self) -> bool:
        return not (self.mismatches or self.unreadable or self.links)

    def text(self) -> str:
        lines = [
            f"backup store {self.store_url}: {len(self.recorded)} stored object(s) verified against their sidecars "
            f"and recorded as claimed, {self.receiver_saves} receiver save(s) recorded",
            "  a claimed copy proves no save (no receiver is deleted on its account) until the save step matches its "
            "bytes with the host's save file; restores may use it",
        ]
        lines += [f"  mismatch, not recorded: {m}" for m in self.mismatches]
        lines += [f"  unreadable sidecar, not recorded: {u}" for u in self.unreadable]
        lines += [f"  no sidecar (an interrupted copy), not recorded: {k}" for k in self.unrecorded]
        lines += [f"  a symbolic link, nothing behind it read or recorded: {link}" for link in self.links]
        lines += [f"  listed without an attach time, no receiver save recorded: {r}" for r in self.without_attach_time]
        return "\n".join(lines)


def rebuild_catalog(store: BackupStore, catalog: Catalog) -> RebuildSummary:
    """Record every stored object of `store` that verifies against its sidecar, and the receiver saves its sidecar
    lists, in `catalog` (empty or not: recording is idempotent). The rows are the sidecars' values but for
    `store_url`, which is where the store is read from now (a store moved or mounted elsewhere is restored from
    where it is).

    A sidecar is a claim: one with the right SHA-256 may list receivers its bytes do not hold (written by hand, by
    another tool, or damaged with its digest recomputed). So each object is recorded `claimed_by_sidecar`, which
    proves no save: no receiver is deleted and no host save file is cleaned up on its account until the save step
    matches its bytes with the host's save file (`host_save_file`). A row already in the catalog keeps its proof."""
    if not store.exists():
        raise StoreUnavailable(
            store.url, "the backup store does not exist or cannot be read", "give the URL of an existing backup store"
        )
    recorded, mismatches, unreadable, without = [], [], [], []
    saves = 0
    for sidecar in store.iter_sidecars():
        if sidecar.stored is None:
            unreadable.append(f"{sidecar.key}: {sidecar.problem}")
            continue
        result = store.verify(sidecar.key)
        if not result.ok:
            mismatches.append(str(result))
            continue
        stored = sidecar.stored.model_copy(update={"store_url": store.url})
        catalog.record_stored(stored, proof="claimed_by_sidecar")
        for save in stored.save_records():
            catalog.record_save(save)
            saves += 1
        without += [f"{o.library}/{o.receiver} in {stored.key}" for o in stored.objects if o.attached_at is None]
        recorded.append(stored.key)
    return RebuildSummary(
        store_url=store.url,
        recorded=recorded,
        receiver_saves=saves,
        without_attach_time=without,
        mismatches=mismatches,
        unreadable=unreadable,
        unrecorded=store.unrecorded_objects(),
        links=store.links(),
    )
