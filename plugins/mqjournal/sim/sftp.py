"""SFTP on a simulated partition: the QSYS.LIB view of its save files, as IBM i's OpenSSH sftp-server gives it.

What IBM i does (sources in docs/ibmi-interfaces.md, "SFTP of save files"):
- A save file LIB/NAME is the IFS path ``/QSYS.LIB/LIB.LIB/NAME.FILE`` (``/QSYS.LIB/NAME.FILE`` in QSYS); QSYS.LIB
  names are not case-sensitive. Its data can be read as a byte stream, and placed into a different, existing and
  empty save file; one writer and no other open while it writes; never opened for read and write at once.
- The data are 528-byte records whose sequence and check the system validates as they are written: a record out of
  order or changed is refused at once.
- sftp-server turns errno into SFTP status codes: ENOENT/ENOTDIR -> no such file, EPERM/EACCES -> permission denied,
  ENOSYS -> unsupported, anything else -> failure.

What the simulator does, and where it simplifies or assumes (each marked):
- Download (open for reading): the save file's bytes in the stand-in format of `savfdata` (SIMPLIFICATION: not IBM's
  format), as large as the save (the saved storage, compressed, times the fleet's `save_file_size_factor`). Each
  read makes just the range asked for (`savfdata.SaveFileImage`): a save file of gigabytes is never in memory. The
  save is taken at open: a CL command changing the save file meanwhile does not change a download under way
  (SIMPLIFICATION: IBM i would lock the file instead).
- Upload (open for writing): only into an existing, empty save file (assumed for a non-empty one: refused, where
  IBM i might clear it). Records are checked as they arrive (`savfdata.RecordWriter`); a bad or out-of-order one
  fails that write, and the rest of the upload with it. The save file takes the data when the upload is closed
  complete; an incomplete or refused upload leaves it empty (SIMPLIFICATION: IBM i keeps the records written so far,
  which no restore accepts either; an empty save file fails RSTOBJ and shows size 0, as the client's checks need).
- A missing save file: opening it fails with "no such file", with or without the create flag (assumed: IBM's C
  runtime and FTP pages say a write to a missing save file may create a physical file instead of a save file, so a
  client must CRTSAVF first and check the object list after the upload; the simulator never creates one).
- Authority (`authority.withheld`, the CHKOBJ model): *EXECUTE on the library to reach anything in it, *READ on the
  library to list it; *READ on the save file to download, *READ *ADD *UPD *DLT *EXECUTE (IFS *RWX) to upload.
  Lacking any: "permission denied". Authority for save file stream I/O through sftp is assumed from IBM's IFS_WRITE
  authority table, not documented for open() itself in a retrieved source.
- Journal receivers, journals, user spaces and message queues are listed (``.JRNRCV``, ``.JRN``, ``.USRSPC``,
  ``.MSGQ``) but cannot be opened: "failure" (QSYS.LIB stream I/O covers physical file members, user spaces and save
  files; SIMPLIFICATION: user spaces are not readable here).
- A partition whose sftp-server may not read QSYS.LIB save files (fault `qsys_sftp_read_refused`): opening one for
  reading fails with "failure" (ASSUMED shape: no capture of a real refusal was found). Stream files that PASE `cp`
  made of a save file (`streamfiles`) are read like save files, whatever the fault.
- The rest of the IFS is not simulated: ``/`` holds only QSYS.LIB (and those stream files); relative paths start
  at ``/`` (SIMPLIFICATION: sftp-server starts in the user's home directory). Nothing else can be written,
  removed, renamed or created ("permission denied"): mqjournal creates and deletes save files with CL (CRTSAVF,
  DLTF), never through SFTP.

Every request is logged in `log` (a `CommandLog`, kept apart from the log of command lines so that the audit
invariants over commands are not changed by transfers) as ``SFTP <OP> <path>``: OPEN for reading is ``GET``, for
writing ``PUT``; a transfer's entry is settled when it is closed (``ran``, `exit_status` the SFTP status of its
outcome) or dropped (``dropped`` with `fault` ``transfer_fault``).
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import stat
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TypeVar

import paramiko
from paramiko.sftp import (
    SFTP_FAILURE,
    SFTP_NO_SUCH_FILE,
    SFTP_OK,
    SFTP_PERMISSION_DENIED,
)

from mqjournal.sim import authority, savfdata, streamfiles
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.model import Partition, SaveFile, qualified
from mqjournal.sim.qsyslib import LIBRARY_X, READ, QsysPath, resolve
from mqjournal.sim.server import CommandLog, HostTransportFaults, ReceivedCommand, SftpSession, TransferFault

__all__ = ["QsysLibSftp"]

log = logging.getLogger(__name__)

_RWX = frozenset({"*READ", "*ADD", "*UPD", "*DLT", "*EXECUTE"})  # IFS *RWX as IBM i's data authorities
# The other object types a library lists (the table of `Partition` they live in, and the IFS suffix).
_LISTED = (("receivers", "JRNRCV"), ("journals", "JRN"), ("user_spaces", "USRSPC"), ("message_queues", "MSGQ"))
_T = TypeVar("_T")


class _Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _resolve(path: str) -> QsysPath:
    """Parse an SFTP path; raises _Refused(no such file) for anything outside QSYS.LIB's two levels."""
    try:
        return resolve(path)
    except FileNotFoundError:
        raise _Refused(SFTP_NO_SUCH_FILE) from None


def _attributes(
    name: str, *, directory: bool, size: int = 0, moment: datetime | None = None
) -> paramiko.SFTPAttributes:
    attr = paramiko.SFTPAttributes()
    attr.filename = name
    # The mode bits are the simulator's (IBM i maps object authorities onto them; not modelled).
    attr.st_mode = (stat.S_IFDIR | 0o755) if directory else (stat.S_IFREG | 0o644)
    attr.st_size = size
    attr.st_uid = attr.st_gid = 0
    if moment is not None:
        attr.st_atime = attr.st_mtime = int(moment.timestamp())
    return attr


class _OpenFiles:
    """Who has which save file open: IBM i allows many readers, or one writer and nobody else."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._readers: dict[tuple[str, str], int] = {}
        self._writers: set[tuple[str, str]] = set()

    def open(self, key: tuple[str, str], *, write: bool) -> bool:
        with self._lock:
            if key in self._writers or (write and self._readers.get(key)):
                return False
            if write:
                self._writers.add(key)
            else:
                self._readers[key] = self._readers.get(key, 0) + 1
            return True

    def close(self, key: tuple[str, str], *, write: bool) -> None:
        with self._lock:
            if write:
                self._writers.discard(key)
            elif self._readers.get(key, 0) > 1:
                self._readers[key] -= 1
            else:
                self._readers.pop(key, None)


class QsysLibSftp:
    """The SFTP side of a fleet: call it with a session to get that session's `SFTPServerInterface`."""

    def __init__(
        self,
        hosts: Mapping[str, SimulatedHost],
        faults: Callable[[str], HostTransportFaults] = lambda host: HostTransportFaults(),
        log: CommandLog | None = None,
    ) -> None:
        self.hosts = hosts
        self.faults = faults
        self.log = log
        self.open_files = _OpenFiles()
        self._lock = threading.Lock()

    def __call__(self, session: SftpSession) -> paramiko.SFTPServerInterface:
        return _QsysLibView(self, session)

    def take_transfer_fault(self, host: str, path: str, direction: str) -> TransferFault | None:
        """The first live transfer fault for `path`, with one of its `times` used up."""
        rules = self.faults(host).transfers
        with self._lock:
            for rule in list(rules):
                if rule.times > 0 and rule.direction == direction and re.search(rule.pattern, path):
                    rule.times -= 1
                    if rule.times <= 0:
                        rules.remove(rule)
                    return rule
        return None


class _QsysLibView(paramiko.SFTPServerInterface):
    """One session's requests (paramiko runs them one at a time, in the subsystem's thread)."""

    def __init__(self, sftp: QsysLibSftp, session: SftpSession) -> None:
        # paramiko's base class takes the connection's server object; this view needs none of it.
        self._sftp = sftp
        self._session = session
        self._host = sftp.hosts[session.host]

    # --- the log ------------------------------------------------------------------------------------------

    def _arrived(self, op: str, path: str) -> ReceivedCommand | None:
        if self._sftp.log is None:
            return None
        return self._sftp.log.arrived(self._session.host, self._session.user, f"SFTP {op} {path}")

    def _settle(self, entry: ReceivedCommand | None, status: int, **changes: object) -> None:
        if entry is not None and self._sftp.log is not None:
            self._sftp.log.settle(entry, **{"state": "ran", "exit_status": status, **changes})

    def _logged(self, op: str, path: str, work: Callable[[], _T]) -> _T | int:
        """Run one request, logging it; a `_Refused` becomes its SFTP status."""
        entry = self._arrived(op, self.canonicalize(path))
        try:
            result = work()
        except _Refused as refused:
            self._settle(entry, refused.status)
            return refused.status
        self._settle(entry, result if isinstance(result, int) else SFTP_OK)
        return result

    # --- authority and lookups (under the host's lock) ------------------------------------------------------

    def _partition(self) -> Partition:
        return self._host.partition

    def _require(self, library: str, name: str, objtype: str, wanted: frozenset[str]) -> None:
        if authority.withheld(self._partition(), library, name, objtype, wanted):
            raise _Refused(SFTP_PERMISSION_DENIED)

    def _library(self, library: str) -> None:
        """The library exists and may be searched (*X): what every path below it needs."""
        if library != "QSYS" and library not in self._partition().libraries:
            raise _Refused(SFTP_NO_SUCH_FILE)
        self._require(library, library, "*LIB", LIBRARY_X)

    def _save_file(self, where: QsysPath) -> SaveFile:
        assert where.library is not None and where.name is not None
        self._library(where.library)
        save_file = self._partition().save_files.get(qualified(where.library, where.name))
        if where.suffix != "FILE" or save_file is None:
            raise _Refused(SFTP_NO_SUCH_FILE)
        return save_file

    def _object_attributes(self, where: QsysPath) -> paramiko.SFTPAttributes:
        assert where.library is not None and where.name is not None
        self._library(where.library)
        key = qualified(where.library, where.name)
        partition = self._partition()
        if where.suffix == "FILE" and key in partition.save_files:
            save_file = partition.save_files[key]
            size = savfdata.SaveFileImage.of(save_file).size
            return _attributes(posixpath.basename(where.text), directory=False, size=size, moment=_modified(save_file))
        for table, suffix in _LISTED:
            found = getattr(partition, table).get(key)
            if where.suffix == suffix and found is not None:
                size = getattr(found, "size_bytes", 0)
                return _attributes(posixpath.basename(where.text), directory=False, size=size)
        raise _Refused(SFTP_NO_SUCH_FILE)

    def _stat(self, path: str) -> paramiko.SFTPAttributes:
        if not streamfiles.in_qsys_lib(path):
            with self._host.lock:
                found = self._partition().stream_files.get(posixpath.normpath(path))
                if found is None:
                    raise _Refused(SFTP_NO_SUCH_FILE)
                size = savfdata.SaveFileImage.of(found.copy_of).size
                return _attributes(posixpath.basename(found.path), directory=False, size=size)
        where = _resolve(path)
        with self._host.lock:
            if where.text == "/":
                return _attributes("/", directory=True)
            if where.library is None:
                return _attributes("QSYS.LIB", directory=True)
            if not where.is_object:
                self._library(where.library)
                return _attributes(f"{where.library}.LIB", directory=True)
            return self._object_attributes(where)

    # --- SFTPServerInterface --------------------------------------------------------------------------------

    def canonicalize(self, path: str) -> str:
        try:
            return _resolve(path).text
        except _Refused:
            return posixpath.normpath(posixpath.join("/", path))

    def stat(self, path: str) -> paramiko.SFTPAttributes | int:
        return self._logged("STAT", path, lambda: self._stat(path))

    def lstat(self, path: str) -> paramiko.SFTPAttributes | int:
        return self._logged("LSTAT", path, lambda: self._stat(path))

    def list_folder(self, path: str) -> list[paramiko.SFTPAttributes] | int:
        return self._logged("LIST", path, lambda: self._list(path))

    def _list(self, path: str) -> list[paramiko.SFTPAttributes]:
        where = _resolve(path)
        with self._host.lock:
            partition = self._partition()
            if where.text == "/":
                return [_attributes("QSYS.LIB", directory=True)]
            if where.is_object:
                raise _Refused(SFTP_NO_SUCH_FILE)  # ENOTDIR: an object is not a directory
            if where.library is None:
                libraries = sorted(lib for lib in partition.libraries if lib != "QSYS")
                listed = [_attributes(f"{lib}.LIB", directory=True) for lib in libraries]
                return listed + self._objects_in("QSYS")
            self._library(where.library)
            self._require(where.library, where.library, "*LIB", READ)
            return self._objects_in(where.library)

    def _objects_in(self, library: str) -> list[paramiko.SFTPAttributes]:
        partition = self._partition()
        found = [
            _attributes(f"{s.name}.FILE", directory=False, size=savfdata.SaveFileImage.of(s).size, moment=_modified(s))
            for s in partition.save_files.values()
            if s.library == library
        ]
        for table, suffix in _LISTED:
            for obj in getattr(partition, table).values():
                if obj.library == library:
                    size = getattr(obj, "size_bytes", 0)
                    found.append(_attributes(f"{obj.name}.{suffix}", directory=False, size=size))
        return sorted(found, key=lambda a: a.filename)

    def open(self, path: str, flags: int, attr: paramiko.SFTPAttributes) -> paramiko.SFTPHandle | int:
        access = flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
        if access == os.O_RDONLY:
            return self._open_read(path)
        entry = self._arrived("PUT", self.canonicalize(path))
        try:
            if access == os.O_RDWR:
                raise _Refused(SFTP_FAILURE)  # a save file may not be opened for read/write access
            return self._open_write(path, flags, entry)
        except _Refused as refused:
            self._settle(entry, refused.status)
            return refused.status

    def _open_read(self, path: str) -> paramiko.SFTPHandle | int:
        entry = self._arrived("GET", self.canonicalize(path))
        if not streamfiles.in_qsys_lib(path):
            return self._open_stream_file(path, entry)
        try:
            where = _resolve(path)
            if where.is_object and self._partition().faults.qsys_sftp_read_refused:
                raise _Refused(SFTP_FAILURE)  # ASSUMED shape of a partition whose sftp-server may not read QSYS.LIB
            if not where.is_object:
                raise _Refused(SFTP_FAILURE)  # EISDIR
            with self._host.lock:
                if where.suffix != "FILE":
                    self._object_attributes(where)  # no such object, or one that exists but has no stream I/O
                    raise _Refused(SFTP_FAILURE)
                save_file = self._save_file(where)
                self._require(save_file.library, save_file.name, "*FILE", READ)
                image = savfdata.SaveFileImage.of(save_file)  # the save as it is now; bytes made as they are read
                key = (self._session.host, save_file.key)
                if not self._sftp.open_files.open(key, write=False):
                    raise _Refused(SFTP_FAILURE)  # open for writing elsewhere
        except _Refused as refused:
            self._settle(entry, refused.status)
            return refused.status
        fault = self._sftp.take_transfer_fault(self._session.host, where.text, "get")
        return _ReadHandle(self, key, image, entry, fault)

    def _open_stream_file(self, path: str, entry: ReceivedCommand | None) -> paramiko.SFTPHandle | int:
        with self._host.lock:
            try:
                found = streamfiles.stream_file(self._partition(), path)
            except FileNotFoundError:
                self._settle(entry, SFTP_NO_SUCH_FILE)
                return SFTP_NO_SUCH_FILE
            image = savfdata.SaveFileImage.of(found.copy_of)
            key = (self._session.host, found.path)
            if not self._sftp.open_files.open(key, write=False):
                self._settle(entry, SFTP_FAILURE)
                return SFTP_FAILURE
        fault = self._sftp.take_transfer_fault(self._session.host, found.path, "get")
        return _ReadHandle(self, key, image, entry, fault)

    def _open_write(self, path: str, flags: int, entry: ReceivedCommand | None) -> paramiko.SFTPHandle:
        where = _resolve(path)
        if not where.is_object or where.suffix != "FILE":
            raise _Refused(SFTP_PERMISSION_DENIED)  # the simulator writes nothing but save files
        with self._host.lock:
            save_file = self._save_file(where)  # no such file also with O_CREAT: sftp never creates a save file
            if flags & os.O_CREAT and flags & os.O_EXCL:
                raise _Refused(SFTP_FAILURE)  # EEXIST
            self._require(save_file.library, save_file.name, "*FILE", _RWX)
            if not save_file.empty:
                raise _Refused(SFTP_FAILURE)  # assumed: data goes only into an existing, empty save file
            key = (self._session.host, save_file.key)
            if not self._sftp.open_files.open(key, write=True):
                raise _Refused(SFTP_FAILURE)  # open elsewhere: a writer must be alone
        fault = self._sftp.take_transfer_fault(self._session.host, where.text, "put")
        return _WriteHandle(self, key, entry, fault)

    def _commit(self, key: tuple[str, str], data: savfdata.SaveFileData) -> bool:
        """Fill the save file the upload was written into; False if it has gone meanwhile (DLTF) or was filled."""
        with self._host.state() as partition:
            save_file = partition.save_files.get(key[1])
            if save_file is None or not save_file.empty:
                return False
            data.fill(save_file)
            return True

    def remove(self, path: str) -> int:
        return self._refuse("REMOVE", path)

    def rename(self, oldpath: str, newpath: str) -> int:
        return self._refuse("RENAME", oldpath)

    def posix_rename(self, oldpath: str, newpath: str) -> int:
        return self._refuse("RENAME", oldpath)

    def mkdir(self, path: str, attr: paramiko.SFTPAttributes) -> int:
        return self._refuse("MKDIR", path)

    def rmdir(self, path: str) -> int:
        return self._refuse("RMDIR", path)

    def chattr(self, path: str, attr: paramiko.SFTPAttributes) -> int:
        return self._refuse("SETSTAT", path)

    def symlink(self, target_path: str, path: str) -> int:
        return self._refuse("SYMLINK", path)

    def _refuse(self, op: str, path: str) -> int:
        # SIMPLIFICATION: IBM i would carry some of these out (unlink() of a save file deletes it); mqjournal never
        # asks, and a simulator that refuses keeps a client from growing to depend on them.
        entry = self._arrived(op, self.canonicalize(path))
        self._settle(entry, SFTP_PERMISSION_DENIED)
        return SFTP_PERMISSION_DENIED


def _modified(save_file: SaveFile) -> datetime:
    return savfdata.modified_at(save_file)


class _ReadHandle(paramiko.SFTPHandle):
    def __init__(
        self,
        view: _QsysLibView,
        key: tuple[str, str],
        image: savfdata.SaveFileImage,
        entry: ReceivedCommand | None,
        fault: TransferFault | None,
    ) -> None:
        super().__init__(os.O_RDONLY)
        self._view, self._key, self._image, self._entry, self._fault = view, key, image, entry, fault
        self._closed = False
        self._dropped = False

    def read(self, offset: int, length: int) -> bytes | int:
        if self._dropped:
            return SFTP_FAILURE
        end = min(offset + length, self._image.size)
        if self._fault is not None and self._fault.corrupt:
            data = bytearray(self._image.read(offset, end - offset))
            if offset <= self._fault.after_bytes < end:
                data[self._fault.after_bytes - offset] ^= 0xFF
            return bytes(data)
        if self._fault is not None and end > self._fault.after_bytes:
            # The connection goes: the client's pending reads fail and what it has is short of the file. The log
            # says so first: the client may look at it as soon as it sees the drop, before paramiko closes this.
            self._dropped = True
            self._view._settle(self._entry, SFTP_FAILURE, state="dropped", fault="transfer_fault")
            log.debug("%s: dropping the connection while %s is read", self._view._session.host, self._key[1])
            self._view._session.drop()
            return SFTP_FAILURE
        return self._image.read(offset, end - offset)

    def stat(self) -> paramiko.SFTPAttributes | int:
        return _attributes(self._key[1], directory=False, size=self._image.size)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._view._sftp.open_files.close(self._key, write=False)
        if not self._dropped:  # a dropped read was logged as it dropped
            self._view._settle(self._entry, SFTP_OK)


class _WriteHandle(paramiko.SFTPHandle):
    def __init__(
        self, view: _QsysLibView, key: tuple[str, str], entry: ReceivedCommand | None, fault: TransferFault | None
    ) -> None:
        super().__init__(os.O_WRONLY)
        self._view, self._key, self._entry, self._fault = view, key, entry, fault
        self._writer = savfdata.RecordWriter()
        self._refused = False
        self._dropped = False
        self._closed = False

    # paramiko's stubs say Buffer (3.12's collections.abc); its SFTPServer always passes bytes.
    def write(self, offset: int, data: bytes) -> int:  # type: ignore[override]
        if self._refused or self._dropped:
            return SFTP_FAILURE
        if offset != self._writer.received:
            # Save file records are written sequentially: a write elsewhere breaks the sequence.
            self._refused = True
            return SFTP_FAILURE
        if self._fault is not None and offset + len(data) > self._fault.after_bytes:
            self._dropped = True
            self._view._settle(self._entry, SFTP_FAILURE, state="dropped", fault="transfer_fault")
            log.debug("%s: dropping the connection while %s is written", self._view._session.host, self._key[1])
            self._view._session.drop()
            return SFTP_FAILURE
        try:
            self._writer.write(data)
        except savfdata.DamagedSaveFile as exc:
            log.debug("%s: refusing an upload into %s: %s", self._view._session.host, self._key[1], exc)
            self._refused = True
            return SFTP_FAILURE
        return SFTP_OK

    def stat(self) -> paramiko.SFTPAttributes | int:
        return _attributes(self._key[1], directory=False, size=self._writer.received)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            status = SFTP_FAILURE
            if not (self._refused or self._dropped) and self._writer.received == 0:
                status = SFTP_OK  # nothing written: the save file stays empty, as the (empty) data says
            elif not (self._refused or self._dropped) and self._writer.complete:
                try:
                    if self._view._commit(self._key, self._writer.result()):
                        status = SFTP_OK
                except savfdata.DamagedSaveFile as exc:
                    log.debug("%s: an upload into %s is not a save: %s", self._view._session.host, self._key[1], exc)
        finally:
            self._view._sftp.open_files.close(self._key, write=True)
        if not self._dropped:  # a dropped write was logged as it dropped
            self._view._settle(self._entry, status)
