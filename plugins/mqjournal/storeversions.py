"""Whether a backup store keeps an object's older versions when it is deleted: an S3 bucket with versioning (which
object lock turns on and keeps on).

Why expiry must know: on such a bucket a DeleteObject without a version ID removes nothing. It adds a delete marker,
so the copy is no longer listed or read, while every version of it stays, with its bytes, until the bucket's
lifecycle rule (NoncurrentVersionExpiration) removes it, or, under object lock, never before its retention date: a
DeleteObject of a locked version is refused with AccessDenied (verified against SeaweedFS 4.48,
tests/backupstore/test_s3.py). Expiry then reports the copy gone from the store's view and no bytes freed, rather
than space the store did not get back. AWS: "Deleting object versions from a versioning-enabled bucket" (a simple
DELETE inserts a delete marker); "Locking objects with Object Lock" (a locked version cannot be deleted or
overwritten; enabling object lock enables versioning, which cannot then be suspended).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqjournal.storechecksum import is_s3

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem  # type: ignore[import-untyped]  # fsspec ships no type information

KEEPING = frozenset({"Enabled", "Suspended"})
"""GetBucketVersioning's Status values under which a deleted object's earlier versions stay: Suspended stops new
versions, not the ones already kept. A bucket never versioned answers no Status."""


def keeps_older_versions(fs: AbstractFileSystem, root: str) -> bool:
    """Whether deleting an object under `root` leaves its versions in the store (an S3 bucket with versioning);
    False for every other kind of store. OSError when the store cannot be asked (s3fs's translation of S3's errors):
    expiry then reports the deletion without counting freed bytes, never the other way round."""
    if not is_s3(fs):
        return False
    bucket, _, _ = fs.split_path(root)
    return fs.call_s3("get_bucket_versioning", Bucket=bucket).get("Status") in KEEPING
