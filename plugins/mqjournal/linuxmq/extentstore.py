"""Linux queue managers' log extents in the backup store, with the same proof as IBM i save files (#32).

Beside the save files, under their own top folder (which the save files' listings never reach: theirs are three
folders deep, these four):

    <store>/linux/<host>/<qmgr>/<run id>/Snnnnnnn.LOG        the extent's bytes, as the host's file holds them
    <store>/linux/<host>/<qmgr>/<run id>/Snnnnnnn.LOG.json   its sidecar: a StoredExtent (mqjournal.catalog)

Each component is percent-encoded as the save files' are (a queue manager name may hold '/' and '%'). The write is
the store's verified one (backupstore.ObjectStore): streamed and hashed, vouched for (the copy's SHA-256 must be the
host's, or nothing is kept), made sure of as the store's kind allows, the sidecar last. Before an extent is released
on the strength of its copy, `still_holds` proves the copy now (the store's kept checksum, else a full re-read).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import BinaryIO
from urllib.parse import unquote

from pydantic import ValidationError

from mqjournal.backupstore import (
    SIDECAR_SUFFIX,
    BackupStoreError,
    InvalidStoreKey,
    ObjectStore,
    Source,
    StoreObjectExists,
    component,
)
from mqjournal.catalog import ExtentToCopy, StoredExtent
from mqjournal.settings import safe

__all__ = ["EXTENTS_FOLDER", "ExtentStore", "extent_key"]

EXTENTS_FOLDER = "linux"
_COMPONENT = re.compile(r"[A-Za-z0-9_%-][A-Za-z0-9._%-]*")
_EXTENT = re.compile(r"S[0-9]{7}\.LOG")


def extent_key(copy: ExtentToCopy) -> str:
    parts = (copy.host, copy.qmgr, safe(copy.run_id))
    return "/".join((EXTENTS_FOLDER, *(component(part) for part in parts), copy.extent))


def check_extent_key(key: str) -> str:
    parts = key.split("/") if isinstance(key, str) else []
    if (
        len(parts) != 5
        or parts[0] != EXTENTS_FOLDER
        or not _EXTENT.fullmatch(parts[4])
        or not all(_COMPONENT.fullmatch(p) and component(unquote(p)) == p for p in parts[1:4])
    ):
        raise InvalidStoreKey(
            repr(key),
            "not a key of a log extent in the backup store (linux/<host>/<qmgr>/<run id>/Snnnnnnn.LOG, each part "
            "percent-encoded, none '.' or '..')",
            "use a key the store gave (StoredExtent.key)",
        )
    return key


class ExtentStore(ObjectStore):
    """The log extents in the backup store at `url`."""

    def _path(self, key: str) -> str:
        path = posixpath.join(self.root, check_extent_key(key))
        self._refuse_links(path)
        self._refuse_links(path + SIDECAR_SUFFIX)
        return path

    def put(
        self, source: Source, target: ExtentToCopy, *, expected_size: int, vouch: Callable[[str], str]
    ) -> StoredExtent:
        """Copy an extent into the store; `vouch(sha256)` returns the host's SHA-256 of the extent when the bytes are
        the host's and raises otherwise (then nothing is left). StoreObjectExists when a verified copy is already at
        the key: a backup is never overwritten."""
        key = extent_key(target)
        path = self._path(key)
        name = f"{target.extent} of {target.host} {target.qmgr} in the backup store at {key}"
        if self.get(key) is not None:
            raise StoreObjectExists(
                name,
                "a verified copy of this extent is already in the backup store, and a backup is never overwritten",
                "skip the copy; if the one there no longer verifies, delete it and copy again",
            )
        created_at = datetime.now(UTC)
        vouched: list[str] = []
        written = self._put_verified(
            path,
            source,
            name=name,
            expected_size=expected_size,
            vouch=lambda sha256: vouched.append(vouch(sha256)),
            short=("the extent holds", "copy it again; if the size keeps differing, look at the file on the host"),
        )
        stored = StoredExtent(
            **target.model_dump(include=set(ExtentToCopy.model_fields)),
            host_sha256=vouched[0],
            store_url=self.url,
            key=key,
            size_bytes=written.size_bytes,
            sha256=written.sha256,
            created_at=created_at,
            verified_at=datetime.now(UTC),
        )
        self._record(path, stored)
        return stored

    def get(self, key: str) -> StoredExtent | None:
        path = self._path(key) + SIDECAR_SUFFIX
        if not self.fs.exists(path):
            return None
        try:
            with self.fs.open(path, "rb") as f:
                stored = StoredExtent.model_validate_json(f.read())
        except (ValidationError, OSError) as exc:
            raise BackupStoreError(
                self._where(path),
                f"the sidecar could not be read as a stored extent ({exc})",
                "restore the sidecar from another copy of the store; the extent next to it is not used until then",
            ) from None
        if stored.key != key:
            raise BackupStoreError(
                self._where(path), f"the sidecar describes {stored.key}, not {key}", "put it back beside its extent"
            )
        return stored

    def open_copy(self, stored: StoredExtent) -> BinaryIO:
        """The stored bytes of `stored`, for a restore (which checks their SHA-256 as it sends them)."""
        return self.fs.open(self._path(stored.key), "rb")
