"""SFTP on a simulated Linux MQ host: its queue managers' log extents, as OpenSSH's sftp-server shows a file system.
On a Windows host the paths are Win32-OpenSSH's (`/C:/ProgramData/IBM/MQ/log/QM1/active/S0000007.LOG`, verified:
its realpath, docs/windows-interfaces.md section 1), mapped by linuxsim/windows.extent_at.

What is served: the extent files of each queue manager's `<LogPath>active/` (stat, list, read at any offset, the
bytes the host's `sha256sum` digests), and writing an `S` extent back into it (a restore: the file is whole, and the
queue manager's own bytes, only when every byte arrived, in order). A user outside group mqm gets "permission
denied", as the files' mode (rw-rw----, owner and group mqm: docs/linux-interfaces.md section 8, ASSUMED) gives.
SIMPLIFICATION: nothing else of the file system exists ("no such file"), and nothing is removed or renamed through
SFTP: mqjournal removes an extent with `rm`, a command the audit log records like any other.

The host's transfer faults (server.TransferFault, the same as a partition's) apply to downloads and uploads: the
connection drops once `after_bytes` of an extent were sent (or received), or (`corrupt`) the byte at `after_bytes`
arrives changed, or (`refuse`) the file is not opened ("permission denied"), or (`release`) the transfer stops there
until released (a client killed mid-transfer). An upload
dropped midway, or whose client went away, leaves the bytes that arrived in the file (sftp-server writes each request
into the file it opened, ASSUMED as for any POSIX server: nothing takes them back), which is then not the extent.

Given a `CommandLog`, every transfer is logged there as ``SFTP GET <path>`` (an extent opened for reading) or
``SFTP PUT <path>`` (opened for writing), as the partitions' transfers are (sim/sftp.py): settled ``ran`` with the
SFTP status when the file is closed (or refused), ``dropped`` with `fault` ``transfer_fault`` when a fault drops the
connection. SIMPLIFICATION: listings and stats are not logged (mqjournal audits transfers, not lookups).
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import stat
from collections.abc import Callable
from typing import TypeVar

import paramiko
from paramiko.sftp import SFTP_FAILURE, SFTP_NO_SUCH_FILE, SFTP_OK, SFTP_OP_UNSUPPORTED, SFTP_PERMISSION_DENIED

from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.sim.server import CommandLog, ReceivedCommand, SftpSession, TransferFault

__all__ = ["LinuxLogSftp"]

_T = TypeVar("_T")


class _Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class LinuxLogSftp:
    """The SFTP factory for the fleet's Linux hosts (`hosts` by name); `take_fault(host, path, direction)` gives the
    transfer fault a transfer meets, if any (the service's, shared with the partitions); `log` logs each transfer."""

    def __init__(
        self,
        hosts: dict[str, LinuxSimulatedHost],
        take_fault: Callable[[str, str, str], TransferFault | None] = lambda host, path, direction: None,
        log: CommandLog | None = None,
    ) -> None:
        self.hosts = hosts
        self.take_fault = take_fault
        self.log = log

    def __call__(self, session: SftpSession) -> paramiko.SFTPServerInterface:
        return _LogView(self.hosts[session.host], session, self.take_fault, self.log)


def _file(name: str, size: int, mtime: float) -> paramiko.SFTPAttributes:
    attributes = paramiko.SFTPAttributes()
    attributes.filename, attributes.st_size, attributes.st_mode = name, size, stat.S_IFREG | 0o660
    attributes.st_mtime = attributes.st_atime = int(mtime)
    return attributes


class _LogView(paramiko.SFTPServerInterface):
    def __init__(
        self,
        host: LinuxSimulatedHost,
        session: SftpSession,
        take_fault: Callable[[str, str, str], TransferFault | None],
        log: CommandLog | None = None,
    ) -> None:
        # paramiko's base class takes the connection's server object; this view needs none of it.
        self._host, self._session, self._user, self._take_fault = host, session, session.user, take_fault
        self._log = log

    def _arrived(self, op: str, path: str) -> _Transfer:
        entry = self._log.arrived(self._session.host, self._session.user, f"SFTP {op} {path}") if self._log else None
        return _Transfer(self._log, entry)

    def _guarded(self, work: Callable[[], _T]) -> _T | int:
        try:
            return work()
        except _Refused as refused:
            return refused.status

    def _member(self) -> None:
        if self._user not in self._host.host.mqm_members:
            raise _Refused(SFTP_PERMISSION_DENIED)

    def _extent(self, path: str) -> tuple[str, int, int, float]:
        """(queue manager, extent number, size, mtime) of an extent file at `path`."""
        with self._host.lock:
            found = self._host.extent_at(path)
            if found is None or found[1] not in found[0].extents:
                raise _Refused(SFTP_NO_SUCH_FILE)
            self._member()
            qm, name = found
            extent = qm.extents[name]
            return qm.name, extent.number, qm.file_size(extent), extent.modified.timestamp()

    def canonicalize(self, path: str) -> str:
        return posixpath.normpath(posixpath.join("/", path))

    def stat(self, path: str) -> paramiko.SFTPAttributes | int:
        def work() -> paramiko.SFTPAttributes:
            _, _, size, mtime = self._extent(path)
            return _file(posixpath.basename(path), size, mtime)

        return self._guarded(work)

    lstat = stat

    def list_folder(self, path: str) -> list[paramiko.SFTPAttributes] | int:
        def work() -> list[paramiko.SFTPAttributes]:
            with self._host.lock:
                qm = self._host.active_at(path)
                if qm is None:
                    raise _Refused(SFTP_NO_SUCH_FILE)
                self._member()
                return [_file(n, qm.file_size(e), e.modified.timestamp()) for n, e in sorted(qm.extents.items())]

        return self._guarded(work)

    def open(self, path: str, flags: int, attr: paramiko.SFTPAttributes) -> paramiko.SFTPHandle | int:
        access = flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
        transfer = self._arrived("GET" if access == os.O_RDONLY else "PUT", self.canonicalize(path))
        if access == os.O_RDWR:
            transfer.settle(SFTP_FAILURE)
            return SFTP_FAILURE
        opened = self._guarded(
            (lambda: self._open_read(path, transfer))
            if access == os.O_RDONLY
            else (lambda: self._open_write(path, transfer))
        )
        if isinstance(opened, int):
            transfer.settle(opened)
        return opened

    def _open_read(self, path: str, transfer: _Transfer) -> paramiko.SFTPHandle:
        qmgr, number, size, mtime = self._extent(path)
        fault = self._take_fault(self._session.host, self.canonicalize(path).upper(), "get")
        if fault is not None and fault.refuse:
            raise _Refused(SFTP_PERMISSION_DENIED)
        return _ReadHandle(qmgr, number, size, mtime, fault, self._session.drop, transfer)

    def _open_write(self, path: str, transfer: _Transfer) -> paramiko.SFTPHandle:
        with self._host.lock:
            found = self._host.extent_at(path)
            if found is None:
                raise _Refused(SFTP_PERMISSION_DENIED)
            self._member()
            try:
                extent = Extent.parse(found[1])
            except ValueError:
                raise _Refused(SFTP_PERMISSION_DENIED) from None
            if extent.reusable or (found[0].running and found[1] == Extent(found[0].current).name):
                raise _Refused(SFTP_FAILURE)  # the file the running queue manager writes: not written over
        fault = self._take_fault(self._session.host, self.canonicalize(path).upper(), "put")
        if fault is not None and fault.refuse:
            raise _Refused(SFTP_PERMISSION_DENIED)
        return _WriteHandle(self._host, path, fault, self._session.drop, transfer)

    def remove(self, path: str) -> int:
        return SFTP_PERMISSION_DENIED

    def rename(self, oldpath: str, newpath: str) -> int:
        return SFTP_PERMISSION_DENIED

    def posix_rename(self, oldpath: str, newpath: str) -> int:
        return SFTP_PERMISSION_DENIED

    def mkdir(self, path: str, attr: paramiko.SFTPAttributes) -> int:
        return SFTP_PERMISSION_DENIED

    def rmdir(self, path: str) -> int:
        return SFTP_PERMISSION_DENIED

    def chattr(self, path: str, attr: paramiko.SFTPAttributes) -> int:
        return SFTP_PERMISSION_DENIED

    def symlink(self, target_path: str, path: str) -> int:
        return SFTP_OP_UNSUPPORTED


_HOLD_SECONDS = 60.0


def _hold(fault: TransferFault) -> None:
    """Stop the transfer until the fault is released (its client's worker is killed meanwhile), at most a minute."""
    fault.held = True
    assert fault.release is not None
    fault.release.wait(_HOLD_SECONDS)


class _Transfer:
    """One transfer's entry in the log (when there is a log), settled once: closed, refused or dropped."""

    def __init__(self, log: CommandLog | None, entry: ReceivedCommand | None) -> None:
        self._log, self._entry, self._settled = log, entry, False

    def settle(self, status: int, **changes: object) -> None:
        if self._settled or self._log is None or self._entry is None:
            return
        self._settled = True
        self._log.settle(self._entry, **{"state": "ran", "exit_status": status, **changes})

    def dropped(self) -> None:
        """Said before the connection goes: a client may read the log as soon as it sees the drop."""
        self.settle(SFTP_FAILURE, state="dropped", fault="transfer_fault")


class _ReadHandle(paramiko.SFTPHandle):
    def __init__(
        self,
        qmgr: str,
        number: int,
        size: int,
        mtime: float,
        fault: TransferFault | None,
        drop: Callable[[], None],
        transfer: _Transfer,
    ) -> None:
        super().__init__(os.O_RDONLY)
        self._qmgr, self._number, self._size, self._mtime = qmgr, number, size, mtime
        self._fault, self._drop, self._dropped, self._transfer = fault, drop, False, transfer

    def read(self, offset: int, length: int) -> bytes | int:
        if self._dropped:
            return SFTP_FAILURE
        data = logger.content_at(self._qmgr, self._number, self._size, offset, length)
        fault = self._fault
        if fault is not None and fault.release is not None:
            if offset + len(data) > fault.after_bytes:
                _hold(fault)
            return data
        if fault is not None and fault.corrupt:
            if offset <= fault.after_bytes < offset + len(data):
                changed = bytearray(data)
                changed[fault.after_bytes - offset] ^= 0xFF
                return bytes(changed)
            return data
        if fault is not None and offset + len(data) > fault.after_bytes:
            self._dropped = True  # the connection goes: pending reads fail, what arrived is short of the file
            self._transfer.dropped()
            self._drop()
            return SFTP_FAILURE
        return data

    def stat(self) -> paramiko.SFTPAttributes | int:
        return _file(Extent(self._number).name, self._size, self._mtime)

    def close(self) -> None:
        super().close()
        self._transfer.settle(SFTP_OK)


class _WriteHandle(paramiko.SFTPHandle):
    """Bytes in order from offset 0, hashed as they come; the extent is written back when the handle closes, or
    when a fault drops the connection midway (what arrived by then)."""

    def __init__(
        self,
        host: LinuxSimulatedHost,
        path: str,
        fault: TransferFault | None = None,
        drop: Callable[[], None] = lambda: None,
        transfer: _Transfer | None = None,
    ) -> None:
        super().__init__(os.O_WRONLY)
        self._host, self._path, self._fault, self._drop = host, path, fault, drop
        self._transfer = transfer or _Transfer(None, None)
        self._digest, self._size, self._broken, self._dropped = hashlib.sha256(), 0, False, False
        self._stopped = False  # its client went away midway (a held transfer fault): the file is what arrived

    def write(self, offset: int, data: bytes) -> int:  # type: ignore[override]
        if self._dropped or self._stopped:
            return SFTP_FAILURE
        if offset != self._size:
            self._broken = True  # out of order: the file would not be the bytes sent
            return SFTP_FAILURE
        fault = self._fault
        if fault is not None and fault.release is not None and offset + len(data) > fault.after_bytes:
            # The client goes while it sends: the bytes before the fault are in the file, the rest never arrives
            # (pipelined requests already on the wire are not run either), and the file stays as it is.
            kept = data[: max(0, fault.after_bytes - offset)]
            self._digest.update(kept)
            self._size += len(kept)
            _hold(fault)
            self._stopped = True
            return SFTP_FAILURE
        if fault is not None and fault.corrupt:
            if offset <= fault.after_bytes < offset + len(data):
                changed = bytearray(data)
                changed[fault.after_bytes - offset] ^= 0xFF
                data = bytes(changed)
        elif fault is not None and offset + len(data) > fault.after_bytes:
            # The connection goes: the bytes before the fault are in the file, the rest never arrives.
            kept = data[: max(0, fault.after_bytes - offset)]
            self._digest.update(kept)
            self._size += len(kept)
            self._dropped = True
            self._write_back()
            self._transfer.dropped()
            self._drop()
            return SFTP_FAILURE
        self._digest.update(data)
        self._size += len(data)
        return SFTP_OK

    def stat(self) -> paramiko.SFTPAttributes | int:
        return _file(posixpath.basename(self._path), self._size, 0)

    def close(self) -> None:
        super().close()
        if self._dropped:
            return  # written back as it dropped
        if self._broken:
            self._transfer.settle(SFTP_FAILURE)
            return
        self._write_back()
        self._transfer.settle(SFTP_FAILURE if self._stopped else SFTP_OK)

    def _write_back(self) -> None:
        with self._host.state() as host:
            found = self._host.extent_at(self._path)
            if found is not None:
                logger.restore_extent_hashed(found[0], found[1], self._size, self._digest.hexdigest(), at=host.now)
