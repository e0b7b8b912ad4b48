"""Collect a fleet: every host in parallel, one SSH connection each, snapshots written whole or not at all.

Output under OUT: ``run_id=<id>/snapshots.jsonl`` (v1 records) and ``run_id=<id>/failures.jsonl`` (what could not be
collected and why). Every command sent is appended to the audit log the caller names (`mqjournal collect`: the data
folder's, the one every command and DAG writes), else to OUT's ``audit.jsonl``. A host that is down fails on its own;
the others are collected.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from mqjournal.errors import MqJournalError
from mqjournal.fleet import FleetConfig, HostConfig
from mqjournal.ibmi import collector, discovery
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.db2out import SqlRunnerMissing
from mqjournal.ibmi.transport import (
    AuthenticationRejected,
    ConnectFactory,
    HostKeyRejected,
    HostUnreachable,
    IbmiSession,
    ssh_connector,
)
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxmq import collector as linux_collector
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.snapshot import Snapshot, read_snapshots, write_snapshots

log = logging.getLogger(__name__)

# Failures that say the host cannot be reached or trusted: no other queue manager on it can be collected either.
# A host-wide fault: every queue manager of the host would fail the same way, so the host is reported once.
HOST_FATAL = (HostKeyRejected, AuthenticationRejected, HostUnreachable, SqlRunnerMissing)


@dataclass(frozen=True)
class Failure:
    host: str
    qmgr: str | None
    error: str
    msg_id: str | None = None


@dataclass
class HostResult:
    host: str
    snapshots: list[Snapshot] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    linux_snapshots: list[LinuxSnapshot] = field(default_factory=list)  # a Linux host's (#32)


def fleet_connector(config: FleetConfig, host: HostConfig | LinuxHostConfig) -> ConnectFactory:
    """Outside Airflow: the fleet file's address, user, client key and known_hosts."""
    return ssh_connector(
        address=host.address,
        port=host.port,
        user=config.user_for(host),
        key_file=config.client_key,
        known_hosts=config.known_hosts,
    )


def collect_host(
    config: FleetConfig,
    host: HostConfig,
    *,
    run_id: str,
    audit: AuditLog,
    connect: ConnectFactory | None = None,
    since: dict[str, datetime] | None = None,
    change_receiver: bool = False,
) -> HostResult:
    result = HostResult(host.name)
    with (
        _whole_host(result),
        IbmiSession(
            host.name,
            config.user_for(host),
            connect or fleet_connector(config, host),
            audit=audit,
            sql_runner=host.sql_runner,
            scratch_directory=host.scratch_directory,
        ) as session,
    ):
        found = discovery.survey(session, host.name, host.queue_managers, time_zone_rules=host.time_zone_rules)
        result.failures += [Failure(host.name, qmgr, why) for qmgr, why in found.missing]
        for target in found.targets:
            with _each_queue_manager(result, target.qmgr):
                result.snapshots.append(
                    collector.collect(
                        session,
                        target,
                        host=host.name,
                        run_id=run_id,
                        tz=found.tz,
                        since=(since or {}).get(f"{host.name}/{target.qmgr}"),
                        change_receiver=change_receiver,
                    )
                )
    return result


@contextlib.contextmanager
def _whole_host(result: HostResult) -> Iterator[None]:
    """A failure of the host's own (unreachable, its key refused, a queue manager's HOST_FATAL failure) recorded
    once for the host: snapshots already complete for it are kept, the rest of it is recorded as failed."""
    try:
        yield
    except (MqJournalError, OSError, ValueError) as exc:
        log.error("host %s not collected: %s", result.host, exc)
        result.failures.append(Failure(result.host, None, str(exc), getattr(exc, "msg_id", None)))


@contextlib.contextmanager
def _each_queue_manager(result: HostResult, qmgr: str) -> Iterator[None]:
    """One queue manager that fails is recorded as failed and the host's others are collected; a failure that
    says the host itself cannot be worked on (HOST_FATAL) ends the host."""
    try:
        yield
    except MqJournalError as exc:
        if isinstance(exc, HOST_FATAL):
            raise
        log.warning("%s/%s not collected: %s", result.host, qmgr, exc)
        result.failures.append(Failure(result.host, qmgr, str(exc), exc.msg_id))


def collect_linux_host(
    config: FleetConfig,
    host: LinuxHostConfig,
    *,
    run_id: str,
    audit: AuditLog,
    connect: ConnectFactory | None = None,
) -> HostResult:
    """Every queue manager of a Linux host over one SSH connection (linuxmq/collector.py); one that fails is
    recorded as failed and the others are collected, as on IBM i."""
    result = HostResult(host.name)
    with (
        _whole_host(result),
        IbmiSession(host.name, host.user, connect or fleet_connector(config, host), audit=audit) as session,
    ):
        for qm in host.queue_managers:
            with _each_queue_manager(result, qm.name):
                result.linux_snapshots.append(
                    linux_collector.collect(
                        session,
                        qm.name,
                        host=host.name,
                        run_id=run_id,
                        bin_dir=host.mq_bin,
                        media_images=host.media_images,
                        platform=host.host_platform,
                    )
                )
    return result


def collect_fleet(
    config: FleetConfig,
    out: Path,
    *,
    run_id: str | None = None,
    hosts: list[str] | None = None,
    change_receiver: bool = False,
    connectors: dict[str, ConnectFactory] | None = None,
    max_parallel_hosts: int = 4,
    audit_log: Path | None = None,
) -> tuple[Path, list[HostResult]]:
    run_id = run_id or datetime.now(UTC).strftime("collect_%Y%m%dT%H%M%SZ")
    selected = [h for h in config.hosts if not hosts or h.name in hosts]
    linux = [h for h in config.linux_hosts if not hosts or h.name in hosts]
    unknown = set(hosts or []) - {h.name for h in config.hosts} - {h.name for h in config.linux_hosts}
    if unknown:
        raise ValueError(f"hosts not in the fleet file: {', '.join(sorted(unknown))}")
    # Before any host is reached: an OUT that cannot be a folder must fail before a checkpoint is forced.
    out.mkdir(parents=True, exist_ok=True)
    audit = AuditLog(audit_log or out / "audit.jsonl")
    since = previous_collections(out)

    def work(h: HostConfig) -> HostResult:
        return collect_host(
            config,
            h,
            run_id=run_id,
            audit=audit,
            connect=(connectors or {}).get(h.name),
            since=since,
            change_receiver=change_receiver,
        )

    def work_linux(h: LinuxHostConfig) -> HostResult:
        return collect_linux_host(config, h, run_id=run_id, audit=audit, connect=(connectors or {}).get(h.name))

    workers = max(1, min(max_parallel_hosts, len(selected) + len(linux) or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        ibmi_results = pool.map(work, selected)
        linux_results = pool.map(work_linux, linux)
        results = list(ibmi_results) + list(linux_results)

    run_dir = out / f"run_id={run_id}"
    write_snapshots(run_dir / "snapshots.jsonl", (s for r in results for s in r.snapshots))
    if linux:
        # Beside the IBM i run folder, not in it: the plan reads every *.jsonl of a folder it is given as IBM i's.
        linux_dir = linux_run_dir(out, run_id)
        write_linux_snapshots(linux_dir / "snapshots.jsonl", (s for r in results for s in r.linux_snapshots))
    failures = [asdict(f) for r in results for f in r.failures]
    tmp = run_dir / "failures.jsonl.tmp"
    tmp.write_text("".join(json.dumps(f) + "\n" for f in failures), encoding="utf-8")
    tmp.replace(run_dir / "failures.jsonl")
    return run_dir, results


def linux_run_dir(out: Path, run_id: str) -> Path:
    """Where `collect_fleet` writes a run's Linux snapshots under OUT: `linux-snapshots/run_id=<id>/`, as the data
    folder keeps them (Settings.linux_snapshot_dir)."""
    return out / "linux-snapshots" / f"run_id={run_id}"


def previous_collections(out: Path) -> dict[str, datetime]:
    """host/qmgr -> collected_at of its latest snapshot under OUT: the start of the next message window."""
    latest: dict[str, datetime] = {}
    for path in sorted(out.glob("run_id=*/snapshots.jsonl")):
        for snapshot in read_snapshots(path):
            key = f"{snapshot.host}/{snapshot.qmgr}"
            if key not in latest or snapshot.collected_at > latest[key]:
                latest[key] = snapshot.collected_at
    return latest
