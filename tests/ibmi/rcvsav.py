"""TEST's detached receivers saved into QGPL/RCVSAV on the simulated partition, and a session to it: what the
transfer tests (direct and through a stream file) start from."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from mqjournal.catalog import SavedReceiver, SaveFileCopy
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import ConnectFactory, IbmiSession, RetryPolicy, ssh_connector
from mqjournal.sim.model import Status
from tests.conftest import SimFleet


def connector(fleet: SimFleet) -> ConnectFactory:
    """SSH to the fleet's `ibmi1` with the simulator's client key and pinned host key."""
    return ssh_connector(
        address="127.0.0.1",
        port=fleet.ports["ibmi1"],
        user=fleet.config.user,
        key=fleet.service.client_key,
        known_hosts=fleet.config.known_hosts,
    )


def saved_session(fleet: SimFleet, tmp_path: Path) -> IbmiSession:
    """After three hours of traffic, TEST's detached receivers saved into QGPL/RCVSAV; a session that tries twice
    without waiting."""
    fleet.host().advance(timedelta(hours=3))
    session = IbmiSession(
        "ibmi1",
        fleet.config.user,
        connector(fleet),
        audit=AuditLog(tmp_path / "audit.jsonl"),
        command_timeout=10,
        retry=RetryPolicy(attempts=2, first_delay=0),
        sleep=lambda _: None,
    )
    for command in (
        commands.create_save_file("QGPL", "RCVSAV", "mqjournal TEST test save"),
        commands.save_receivers("QMTEST", detached(fleet), "QGPL", "RCVSAV", compression="*LOW"),
    ):
        output = session.run(command)
        assert output.exit_status == 0, output.stderr
    return session


def detached(fleet: SimFleet) -> list[str]:
    with fleet.host().lock:
        receivers = fleet.host().partition.receivers_in("QMTEST")
        return sorted(r.name for r in receivers if r.status is not Status.ATTACHED)


def rcvsav_copy(fleet: SimFleet, run_id: str) -> SaveFileCopy:
    """What the catalog knows of QGPL/RCVSAV: the receivers saved into it."""
    return SaveFileCopy(
        host="ibmi1",
        qmgr="TEST",
        qmgr_library="QMTEST",
        save_file_library="QGPL",
        save_file="RCVSAV",
        run_id=run_id,
        objects=tuple(SavedReceiver(receiver=name, library="QMTEST") for name in detached(fleet)),
    )
