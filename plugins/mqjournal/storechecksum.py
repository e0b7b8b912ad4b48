"""An S3 store's own SHA-256 of an object: asked for when a copy is written in one PutObject, read back with HeadObject,
and used by `BackupStore.still_holds` in place of a full re-read when it equals the catalog's digest.

Why it may stand in for a re-read: on a PutObject that carries `x-amz-checksum-sha256`, the server computes the
SHA-256 of the body it receives and refuses the request when the two differ (BadDigest), then keeps the value with
the object and returns it on HeadObject with `x-amz-checksum-mode: ENABLED`. Any later write to the key (an overwrite
in place, a copy onto it) replaces the object and its checksum: the new object has another SHA-256, or none. So a kept
SHA-256 equal to the catalog's digest says the object now at the key is the bytes that were verified. What it does not
see is a disk rotting under the store: the scrub (`mqjournal.scrub`) reads every byte for that.

Why only one PutObject: a multipart upload's SHA-256 is COMPOSITE (the SHA-256 of the parts' SHA-256s, "...-N"),
which is not the SHA-256 of the object, and asking for SHA-256 on a multipart upload obliges the client to send each
part's checksum on completion, which s3fs does not. So objects larger than s3fs's block size (multipart) carry no
usable checksum and are re-read in full. docs/backup-store.md gives what was verified against a real server.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem  # type: ignore[import-untyped]  # fsspec ships no type information

SHA256_ON_PUT = {"ChecksumAlgorithm": "SHA256"}


@dataclass(frozen=True)
class KeptChecksum:
    """An object's size and the full-object SHA-256 (hex) its store computed when it was written."""

    size_bytes: int
    sha256: str


def is_s3(fs: AbstractFileSystem) -> bool:
    """Whether `fs` is s3fs's filesystem (the one fsspec opens s3:// with)."""
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return bool({"s3", "s3a"} & set(protocols)) and hasattr(fs, "call_s3")


def write_options(fs: AbstractFileSystem, size: int | None) -> dict[str, Any]:
    """What to open an object for writing with so that the store computes and keeps its SHA-256: on S3, for an
    object of a known size that s3fs writes in one PutObject (no larger than its block size); nothing otherwise."""
    if not is_s3(fs) or size is None or size > int(fs.default_block_size):
        return {}
    return dict(SHA256_ON_PUT)


def kept_sha256(fs: AbstractFileSystem, path: str) -> KeptChecksum | None:
    """The object's size and the SHA-256 its S3 store computed and keeps for it, or None: not S3, no SHA-256 kept,
    or a composite one (a multipart upload's), which is not the object's SHA-256. OSError when the store cannot be
    asked (s3fs's translation of S3's errors)."""
    if not is_s3(fs):
        return None
    bucket, key, _ = fs.split_path(path)
    head = fs.call_s3("head_object", Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    value, kind = head.get("ChecksumSHA256"), head.get("ChecksumType")
    if not value or "-" in value or kind not in (None, "FULL_OBJECT"):
        return None
    try:
        digest = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(digest) != 32:
        return None
    return KeptChecksum(int(head["ContentLength"]), digest.hex())
