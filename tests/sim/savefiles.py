"""What the save file tests over SFTP share (their fixtures are in tests/sim/conftest.py): the paths, TEST's detached
receivers, and the transfers themselves."""

from __future__ import annotations

import io

import paramiko

from mqjournal.sim.model import Status
from tests.conftest import SimFleet

SAVF = "/QSYS.LIB/QGPL.LIB/RCVSAV.FILE"
TARGET = "/QSYS.LIB/QGPL.LIB/RESTORE.FILE"


def ok(result: tuple[int, str, str]) -> str:
    status, out, err = result
    assert status == 0, err
    return out


def detached(fleet: SimFleet) -> list[str]:
    with fleet.host().lock:
        receivers = fleet.host().partition.receivers_in("QMTEST")
        return sorted(r.name for r in receivers if r.status is not Status.ATTACHED)


def download(sftp: paramiko.SFTPClient, path: str = SAVF) -> bytes:
    buffer = io.BytesIO()
    sftp.getfo(path, buffer)
    return buffer.getvalue()


def upload(sftp: paramiko.SFTPClient, data: bytes, path: str = TARGET) -> None:
    sftp.putfo(io.BytesIO(data), path)
