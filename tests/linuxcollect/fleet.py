"""A Linux queue manager host served by the simulator over real SSH, reached as mqjournal reaches it, and mqjournal's
maintenance of one queue manager's log there, step by step: collect and plan, archive, release.

Shared by the Linux tests over SSH (tests/linuxcollect: the `mixed` fleet of their conftest) and the stateful safety
test of the Linux paths (tests/safety/test_linux_stateful.py), so that both run the steps the same way.
"""

from __future__ import annotations

from pathlib import Path

from mqjournal.catalog import Catalog
from mqjournal.fleet import FleetConfig, HostConfig, QueueManagerConfig
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import IbmiSession, RetryPolicy, ssh_connector
from mqjournal.linuxfleet import LinuxHostConfig, LinuxQueueManagerConfig
from mqjournal.linuxmq import collector
from mqjournal.linuxmq.archive import archive_extent
from mqjournal.linuxmq.extents import Extent, LogManagement
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.plan import ExtentAction, QueueManagerLogPlan, plan_queue_manager
from mqjournal.linuxmq.release import ReleaseResult, release_extents
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.conftest import START, SimFleet

LINUX = "mq-linux1"
BIN = "/opt/mqm/bin"
TO_ARCHIVE = (ExtentAction.ARCHIVE_THEN_RELEASE, ExtentAction.ARCHIVE)


def mixed_fleet(tmp_path: Path) -> FleetConfig:
    """An IBM i partition beside a Linux host with an Archive and a Manual queue manager, six hours into their work."""
    return FleetConfig(
        state_dir=tmp_path / "state",
        start=START,
        warmup_hours=6,
        hosts=[HostConfig(name="ibmi1", port=0, queue_managers=[QueueManagerConfig(name="TEST", threshold_kb=500)])],
        linux_hosts=[
            LinuxHostConfig(
                name=LINUX,
                port=0,
                queue_managers=[
                    # Extents of 256 KiB filled at 20 KB a minute: some thirty after the six hours' warm-up.
                    LinuxQueueManagerConfig(
                        name="QM.ORDERS",
                        log_management=LogManagement.ARCHIVE,
                        log_file_pages=64,
                        log_bytes_per_minute=20_000,
                    ),
                    LinuxQueueManagerConfig(
                        name="QMMANUAL",
                        log_management=LogManagement.MANUAL,
                        log_file_pages=64,
                        log_bytes_per_minute=20_000,
                    ),
                ],
            )
        ],
    ).resolved(tmp_path)


def linux_only_fleet(tmp_path: Path) -> FleetConfig:
    """The Linux host alone, with no queue manager yet and no warm-up: the caller creates and runs its own."""
    return FleetConfig(
        state_dir=tmp_path / "state",
        start=START,
        warmup_hours=0,
        hosts=[],
        linux_hosts=[LinuxHostConfig(name=LINUX, port=0)],
    ).resolved(tmp_path)


def session(
    fleet: SimFleet, audit: AuditLog, user: str = "mqjournal", *, retry: RetryPolicy | None = None
) -> IbmiSession:
    """mqjournal's session on the Linux host, its host key checked against the fleet's known_hosts."""
    connect = ssh_connector(
        address="127.0.0.1",
        port=fleet.ports[LINUX],
        user=user,
        key=fleet.service.client_key,
        known_hosts=fleet.config.known_hosts,
    )
    return IbmiSession(LINUX, user, connect, audit=audit, **({"retry": retry} if retry is not None else {}))


def collect_and_plan(
    linux: IbmiSession, qmgr: str, catalog: Catalog, run: str
) -> tuple[LinuxSnapshot, QueueManagerLogPlan]:
    """Collect the queue manager's log (media images first) and plan it against the copies the catalog records."""
    snap = collector.collect(linux, qmgr, host=LINUX, run_id=run, bin_dir=BIN)
    proven = {c.extent for c in catalog.extent_copies(LINUX, qmgr)}
    return snap, plan_queue_manager(snap, proven)


def to_archive(plan: QueueManagerLogPlan) -> list[str]:
    """The extents the plan copies off the host: those it then releases first."""
    return [name for action in TO_ARCHIVE for name in plan.with_action(action)]


def archive(linux: IbmiSession, snap: LinuxSnapshot, name: str, run: str, store: ExtentStore, catalog: Catalog) -> None:
    archive_extent(
        linux, qmgr=snap.qmgr, active=snap.log_path, extent=Extent.parse(name), run_id=run, store=store, catalog=catalog
    )


def release(linux: IbmiSession, qmgr: str, run: str, store: ExtentStore, catalog: Catalog) -> ReleaseResult:
    return release_extents(linux, qmgr, bin_dir=BIN, run_id=run, store=store, catalog=catalog)


def maintain(linux: IbmiSession, qmgr: str, store: ExtentStore, catalog: Catalog, run: str) -> ReleaseResult:
    """One maintenance of the queue manager's log: collect, plan, archive what the plan archives, release."""
    snap, plan = collect_and_plan(linux, qmgr, catalog, run)
    for name in to_archive(plan):
        archive(linux, snap, name, run, store, catalog)
    return release(linux, qmgr, run, store, catalog)
