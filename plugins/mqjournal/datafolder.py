"""The data folder's paths: a local (or shared-mount) folder as a `pathlib.Path`, or an object store URL (`s3://`,
`gs://`, `file://`, `memory://` in tests) as Airflow's `ObjectStoragePath`. Every reader and writer of the data folder
takes either and works through the path's own API; what the two kinds do differently is here.

- Opening a URL: Airflow's ObjectStoragePath finds a filesystem in Airflow's registry, which knows `file://` and the
  schemes of the installed providers (`s3://` needs apache-airflow-providers-amazon). Without a connection id the
  registry would only hand over the filesystem with its own configuration (AWS_* variables, an instance role), so a
  scheme it does not know is attached with fsspec's own filesystem (s3fs, gcsfs, memory) instead of refused.
- Atomic writes: a folder renames a temporary file into place; an object store has no rename (a move is a copy and
  a delete), but one put is atomic there: a reader sees the whole object or none.
- Modification times: an object store has no folder times, and not every filesystem's `stat` carries one (memory
  has only a creation time), so `modified` asks the filesystem.
- pyarrow reads a local path itself; an object's path it reads through the same fsspec filesystem.

Like `settings`, this module imports nothing of mqjournal, and Airflow only when a URL is opened.
"""

from __future__ import annotations

import stat
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from airflow.sdk import ObjectStoragePath

DataPath: TypeAlias = "Path | ObjectStoragePath"
"""A path in the data folder, of either kind."""

RENAMING_PROTOCOLS = frozenset({"file", "local"})
"""fsspec protocols of filesystems with an atomic rename (a `file://` URL is a folder, opened through fsspec)."""


def open_url(url: str, conn_id: str | None = None) -> ObjectStoragePath:
    """The ObjectStoragePath of `url`, with the credentials of the Airflow connection `conn_id` (none: the
    filesystem's own configuration)."""
    from airflow.sdk import ObjectStoragePath
    from airflow.sdk.io import attach, has_fs

    scheme = urlsplit(url).scheme
    if not has_fs(scheme):
        if conn_id is not None:
            raise ValueError(
                f"Airflow has no filesystem for {scheme}:// to use the connection {conn_id} with: install the provider "
                "that brings it (s3://: apache-airflow-providers-amazon[s3fs]; gs://: apache-airflow-providers-google)"
            )
        import fsspec  # type: ignore[import-untyped]  # fsspec ships no type information

        attach(scheme, fs=fsspec.filesystem(scheme))
    return ObjectStoragePath(url, conn_id=conn_id)


def write_text_atomically(path: DataPath, text: str) -> None:
    """Write `text` so that a reader sees all of it or the file as it was: a temporary file (`<name>.tmp`, which no
    reader of the data folder takes for a collection) renamed into place, or one put on an object store."""
    path.parent.mkdir(parents=True, exist_ok=True)
    match path:
        case Path():
            _write_and_rename(path, text)
        case _ if path.protocol in RENAMING_PROTOCOLS:
            _write_and_rename(path, text)
        case _:
            path.write_text(text, encoding="utf-8")


_Kind = TypeVar("_Kind", Path, "ObjectStoragePath")


def _write_and_rename(path: _Kind, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def modified(path: DataPath) -> float:
    """When the file was last written, in seconds since the epoch (0 for a folder of an object store, which is no
    object and has no time)."""
    return _mtime(path, path.stat())


def file_modified(path: DataPath) -> float | None:
    """`modified` of a regular file, None for anything else, from one stat (a listing's entries are stat'ed each)."""
    info = path.stat()
    return _mtime(path, info) if stat.S_ISREG(info.st_mode) else None


def _mtime(path: DataPath, info: Any) -> float:
    if isinstance(info.st_mtime, datetime):  # some fsspec filesystems give the time itself
        return info.st_mtime.timestamp()
    if info.st_mtime or isinstance(path, Path):
        return float(info.st_mtime)
    try:  # a filesystem whose info carries no mtime (memory:// has a creation time only)
        return float(path.fs.modified(path.path).timestamp())
    except (NotImplementedError, OSError):
        return 0.0


def arrow_source(path: DataPath) -> tuple[str, Any]:
    """`(source, filesystem)` for pyarrow's readers: a local path with pyarrow's own filesystem (None), an object's
    path with its fsspec filesystem (pyarrow wraps it), so pyarrow reads with the data folder's credentials."""
    if isinstance(path, Path):
        return str(path), None
    return path.path, path.fs
