"""The save file tests' partition: TEST's detached receivers saved into QGPL/RCVSAV, a shell and an SFTP client."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import paramiko
import pytest

from tests.conftest import Shell, SimFleet
from tests.sim.savefiles import detached, ok


@pytest.fixture
def shell(sim_fleet: SimFleet) -> Shell:
    """TEST's receivers after three hours of traffic, the detached ones saved into QGPL/RCVSAV."""
    sim_fleet.host().advance(timedelta(hours=3))
    shell = sim_fleet.connect()
    ok(shell.cl("CRTSAVF FILE(QGPL/RCVSAV)"))
    ok(
        shell.cl(
            f"SAVOBJ OBJ({' '.join(detached(sim_fleet))}) LIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF(QGPL/RCVSAV)"
        )
    )
    return shell


@pytest.fixture
def sftp(shell: Shell) -> Iterator[paramiko.SFTPClient]:
    client = shell.client.open_sftp()
    client.get_channel().settimeout(10)  # type: ignore[union-attr]
    yield client
    client.close()
