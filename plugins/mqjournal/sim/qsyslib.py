"""The QSYS.LIB file system of a simulated partition: its paths, and a save file's bytes as a program reads them.

Two servers read it: SFTP (sim/sftp.py) and the PASE digest programs (sim/digest.py), by the same path and
authority rules, as on IBM i, where both open the same stream. Paths: a save file LIB/NAME is
``/QSYS.LIB/LIB.LIB/NAME.FILE`` (``/QSYS.LIB/NAME.FILE`` in QSYS); QSYS.LIB names are not case-sensitive.
"""

from __future__ import annotations

import errno
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mqjournal.sim import authority, savfdata
from mqjournal.sim.model import Partition, qualified

ROOT = "/QSYS.LIB"
READ = frozenset({"*READ"})
LIBRARY_X = frozenset({"*EXECUTE"})
_OBJECT = re.compile(r"^([A-Z0-9_$#@]{1,10})\.([A-Z]{1,6})$")


@dataclass(frozen=True)
class QsysPath:
    """A resolved path: the root, QSYS.LIB, a library, or an object in a library."""

    text: str  # canonical, upper case from /QSYS.LIB on
    library: str | None = None
    name: str | None = None
    suffix: str | None = None  # FILE, JRNRCV, ... for an object

    @property
    def is_object(self) -> bool:
        return self.name is not None


def _not_found() -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, "No such file or directory")


def resolve(path: str) -> QsysPath:
    """Parse a path; FileNotFoundError for anything outside QSYS.LIB's two levels."""
    text = posixpath.normpath(posixpath.join("/", path))
    if text in ("/", "//"):
        return QsysPath("/")
    parts = [p for p in text.split("/") if p]
    if parts[0].upper() != "QSYS.LIB":
        raise _not_found()  # SIMPLIFICATION: only QSYS.LIB of the IFS is simulated
    # QSYS.LIB names are not case-sensitive (quoted names, which are, do not occur in mqjournal's objects).
    upper = [p.upper() for p in parts[1:]]
    if not upper:
        return QsysPath(ROOT)
    first = _OBJECT.match(upper[0])
    if first is None:
        raise _not_found()
    if first.group(2) == "LIB" and first.group(1) != "QSYS":
        library = first.group(1)
        if len(upper) == 1:
            return QsysPath(f"{ROOT}/{library}.LIB", library=library)
        second = _OBJECT.match(upper[1])
        if len(upper) != 2 or second is None:
            raise _not_found()
        return QsysPath(f"{ROOT}/{library}.LIB/{upper[1]}", library, second.group(1), second.group(2))
    if len(upper) != 1:
        raise _not_found()
    return QsysPath(f"{ROOT}/{upper[0]}", "QSYS", first.group(1), first.group(2))


def read_save_file(partition: Partition, path: str) -> Iterator[bytes]:
    """The bytes a PASE program that opens `path` for reading gets, a chunk at a time: a save file of gigabytes is
    never whole in memory (`save_file_image`'s rules)."""
    return save_file_image(partition, path).chunks()


def save_file_image(partition: Partition, path: str) -> savfdata.SaveFileImage:
    """What a PASE program that opens `path` for reading reads (what `openssl dgst` or `sha256sum` digest), by the
    same rules as an SFTP download: FileNotFoundError for no such save file (or library), PermissionError without
    *X on the library or *R to the save file, IsADirectoryError for a library, and OSError (ENOTSUP) for an object
    QSYS.LIB has no stream I/O for (the caller holds the host's lock)."""
    where = resolve(path)
    if not where.is_object:
        raise IsADirectoryError(errno.EISDIR, "Is a directory")
    assert where.library is not None and where.name is not None
    if where.library != "QSYS" and where.library not in partition.libraries:
        raise _not_found()
    if authority.withheld(partition, where.library, where.library, "*LIB", LIBRARY_X):
        raise PermissionError(errno.EACCES, "Permission denied")
    save_file = partition.save_files.get(qualified(where.library, where.name))
    if save_file is None or where.suffix != "FILE":
        raise _not_found()
    if authority.withheld(partition, save_file.library, save_file.name, "*FILE", READ):
        raise PermissionError(errno.EACCES, "Permission denied")
    return savfdata.SaveFileImage.of(save_file)
