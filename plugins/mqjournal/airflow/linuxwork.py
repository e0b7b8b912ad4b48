"""The maintenance DAG's steps for the Linux queue managers of the fleet (#32): select, collect, summarize, archive
(before the gate, as IBM i's saves) and release (after it, as IBM i's deletes), each a plain function the DAG's task
calls and the tests call directly.

The same rules as the IBM i steps: a host's queue managers over one SSH session each, one that fails recorded by
name while the others go on, and the task failing at the end naming each; every step safe to rerun (an archive finds
the copy an earlier try made, a release re-reads the live queue manager and releases only what its plan releases
now). Nothing here decides what may go: mqjournal.linuxmq's planner does, in the plan job and again live.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from airflow.sdk import get_current_context

from mqjournal.airflow.forms import split_choice
from mqjournal.airflow.hostwork import spread
from mqjournal.airflow.oncall import run_linux_snapshots
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import LinuxTarget, RunPlan
from mqjournal.catalog import Catalog
from mqjournal.errors import MqJournalError
from mqjournal.fleet import load_fleet
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession
from mqjournal.linuxfleet import LinuxHostConfig
from mqjournal.linuxmq import collector
from mqjournal.linuxmq.archive import archive_extent
from mqjournal.linuxmq.extents import Extent
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxmq.plan import TO_ARCHIVE, TO_RELEASE, QueueManagerLogPlan
from mqjournal.linuxmq.planned import LinuxPlanned
from mqjournal.linuxmq.planrows import read_linux_plan
from mqjournal.linuxmq.release import release_extents
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.outcomes import LinuxArchiveResult, LinuxReleaseResult, StepValue
from mqjournal.sizefmt import size

__all__ = [
    "LinuxStepFailed",
    "LinuxWork",
    "archive",
    "chosen",
    "collect",
    "plan_section",
    "planned",
    "release",
    "returned",
    "select",
    "with_linux",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class LinuxStepFailed(MqJournalError):
    """A step left Linux queue managers failed or with promised work undone: the others' outcomes stand."""


def chosen(queue_managers: Sequence[str], host: str, name: str) -> bool:
    """Whether the trigger form's queue manager choices (`host/QMGR` or a bare `QMGR`; none: all) take this one."""
    return not queue_managers or any(
        qmgr == name and on in (None, host) for on, qmgr in map(split_choice, queue_managers)
    )


def select(settings: Settings, hosts: Sequence[str], queue_managers: Sequence[str]) -> list[LinuxTarget]:
    """The Linux queue managers this run works on: the fleet file's, narrowed by the form (its hosts and queue
    managers were checked against both platforms by the IBM i selection, which runs first)."""
    fleet = load_fleet(settings.fleet_file)
    return [
        LinuxTarget(host=h.name, qmgr=q.name)
        for h in fleet.linux_hosts
        if not hosts or h.name in hosts
        for q in h.queue_managers
        if chosen(queue_managers, h.name, q.name)
    ]


@dataclass
class LinuxWork:
    """A step's outcomes over its Linux queue managers, and those that failed (`host/QMGR` -> the error)."""

    outcomes: list[object] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    undone: dict[str, list[str]] = field(default_factory=dict)  # `host/QMGR` -> promised work not done, each why

    def raise_if_failed(self, doing: str) -> None:
        problems = [f"{label}: {error}" for label, error in self.failures.items()]
        problems += [f"{label}: {line}" for label, lines in self.undone.items() for line in lines]
        if problems:
            raise LinuxStepFailed(
                f"{doing} of Linux queue managers",
                "; ".join(problems),
                "fix what each says and clear this task: what was done is not repeated",
            )


def returned(work: LinuxWork, doing: str) -> list[Any]:
    """The task's XCom value; when some queue managers failed or left work undone, the others' outcomes are pushed
    all the same (the gate and the report show what they did) and the task fails naming each."""
    values = [o.to_xcom() if isinstance(o, StepValue) else o for o in work.outcomes]
    if work.failures or work.undone:
        get_current_context()["ti"].xcom_push("return_value", values)
        work.raise_if_failed(doing)
    return values


def _on_hosts(
    settings: Settings,
    targets: Sequence[tuple[str, str, T]],
    step: Callable[[IbmiSession, LinuxHostConfig, str, T], object],
    doing: str,
) -> LinuxWork:
    """`step(session, host, qmgr, item)` for each (host, qmgr, item), one session per host, hosts in parallel."""
    fleet = load_fleet(settings.fleet_file)
    by_host: dict[str, list[tuple[str, T]]] = defaultdict(list)
    for host, qmgr, item in targets:
        by_host[host].append((qmgr, item))
    work = LinuxWork()
    lock = threading.Lock()

    def one_host(host: str) -> None:
        try:
            config = fleet.linux_host(host)
            with host_session(settings, config) as session:
                for qmgr, item in by_host[host]:
                    try:
                        outcome = step(session, config, qmgr, item)
                    except MqJournalError as exc:
                        log.error("%s/%s: %s failed: %s", host, qmgr, doing, exc)
                        with lock:
                            work.failures[f"{host}/{qmgr}"] = str(exc)
                        continue
                    with lock:
                        work.outcomes.append(outcome)
        except (MqJournalError, OSError, KeyError) as exc:  # the host itself: unreachable, key refused, not in fleet
            log.error("%s: %s failed: %s", host, doing, exc)
            with lock:
                for qmgr, _ in by_host[host]:
                    work.failures.setdefault(f"{host}/{qmgr}", f"host {host}: {exc}")

    spread(list(by_host), one_host, settings.tasks.hosts_in_parallel)
    return work


def collect(settings: Settings, targets: Sequence[LinuxTarget], run_id: str, dry_run: bool = False) -> LinuxWork:
    """Each Linux queue manager's log state into this run's Linux snapshot folder, a file per host. Media images
    (rcdmqimg) as the host's policy says, except in a dry run, which only reads."""
    by_host: dict[str, list[LinuxSnapshot]] = defaultdict(list)

    def one(session: IbmiSession, host: LinuxHostConfig, qmgr: str, _: None) -> str:
        snapshot = collector.collect(
            session,
            qmgr,
            host=host.name,
            run_id=run_id,
            bin_dir=host.mq_bin,
            media_images="imgsched" if dry_run else host.media_images,
            platform=host.host_platform,
        )
        by_host[host.name].append(snapshot)
        return f"{host.name}/{qmgr}"

    work = _on_hosts(settings, [(t.host, t.qmgr, None) for t in targets], one, "collect")
    folder = settings.linux_snapshot_dir(run_id)
    for host, snapshots in by_host.items():
        write_linux_snapshots(folder / f"{host}.jsonl", sorted(snapshots, key=lambda s: s.qmgr))
    return work


def _snapshots(settings: Settings, run_id: str) -> dict[tuple[str, str], LinuxSnapshot]:
    return {(s.host, s.qmgr): s for s in run_linux_snapshots(settings, run_id)}


def planned(settings: Settings, run_id: str, targets: Sequence[LinuxTarget]) -> list[LinuxPlanned]:
    """The plan job's Linux rows of this run's targets, with the log path each was collected with."""
    wanted = {(t.host, t.qmgr) for t in targets}
    if not wanted:
        return []
    snapshots = _snapshots(settings, run_id)
    return [_planned(p, snapshots[(p.host, p.qmgr)]) for p in read_linux_plan(settings.plan_dir(run_id), wanted)]


def with_linux(summary: RunPlan, linux: list[LinuxPlanned]) -> RunPlan:
    """The run's plan with its Linux queue managers': the gate is needed when either platform has something to let
    go, and the plan's text shows both."""
    if not linux:
        return summary
    return summary.model_copy(
        update={
            "linux": linux,
            "anything_to_delete": summary.anything_to_delete or any(p.to_release for p in linux),
            "body": summary.body + plan_section(linux),
        }
    )


def gate_warning(summary: RunPlan, archives: Sequence[LinuxArchiveResult]) -> str:
    """Above the gate's table: the extents offered for release that the archive step left without a proven copy;
    no answer releases those (the live release refuses an extent without one)."""
    releasing = {p.key: set(p.to_release) for p in summary.linux}
    lines = [
        f"- {a.label} {name}: {why}"
        for a in archives
        for name, why in a.not_archived
        if name in releasing.get(a.label, set())
    ]
    if not lines:
        return ""
    return "**Not archived, so not released whatever the answer:**\n\n" + "\n".join(lines) + "\n\n"


def _planned(plan: QueueManagerLogPlan, snapshot: LinuxSnapshot) -> LinuxPlanned:
    releasing = plan.to_release
    return LinuxPlanned(
        host=plan.host,
        qmgr=plan.qmgr,
        log_management=snapshot.log_management.value,
        log_path=snapshot.log_path,
        current_extent=snapshot.current_extent,
        restart_extent=snapshot.restart_extent,
        media_extent=snapshot.media_extent,
        to_archive=[d.extent for d in plan.to_archive],
        to_release=[d.extent for d in releasing],
        bytes_to_release=sum(d.size_bytes for d in releasing),
        kept=sum(1 for d in plan.decisions if d.action not in (*TO_ARCHIVE, *TO_RELEASE)),
        alerts=[f"{alert.value}: {text}" for alert, text in plan.alerts],
    )


def plan_section(linux: Sequence[LinuxPlanned]) -> str:
    """The Linux queue managers' part of the plan, for the gate and the log, in MQ's own terms."""
    if not linux:
        return ""
    lines = [
        "",
        "### Linux queue managers (linear logs)",
        "",
        "| queue manager | LogManagement | CURRLOG | RECLOG | MEDIALOG | to archive | to release | frees | kept |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in linux:
        release = "SET LOG ARCHIVED" if p.log_management == "Archive" else "delete"
        lines.append(
            f"| {p.key} | {p.log_management} | {p.current_extent or '-'} | {p.restart_extent or '-'} | "
            f"{p.media_extent or '-'} | {len(p.to_archive)} | {len(p.to_release)} ({release}) | "
            f"{size(p.bytes_to_release)} | {p.kept} |"
        )
    alerts = [f"- **{p.key}**: {a}" for p in linux for a in p.alerts]
    if alerts:
        lines += ["", *alerts]
    return "\n".join(lines) + "\n"


def archive(settings: Settings, summary: RunPlan, run_id: str) -> LinuxWork:
    """Copy every extent the plan archives into the backup store, proven by the host's SHA-256 and catalogued.
    An extent the plan also releases and that is left without a proven copy is work left undone."""
    store = ExtentStore(settings.backup_store, conn_id=settings.backup_store_conn_id)
    catalog = Catalog(settings.catalog_url)

    def one(session: IbmiSession, host: LinuxHostConfig, qmgr: str, plan: LinuxPlanned) -> LinuxArchiveResult:
        result = LinuxArchiveResult(host=host.name, qmgr=qmgr)
        # An extent is copied once: MQ never writes a closed extent again (a reused one comes back under a new
        # number), so a copy an earlier run made that the store still holds is its copy.
        earlier = {c.extent: c for c in catalog.extent_copies(host.name, qmgr)}
        for name in plan.to_archive:
            if name in earlier and store.still_holds(earlier[name]) is None:
                result.already_archived.append(name)
                continue
            try:
                archive_extent(
                    session,
                    qmgr=qmgr,
                    active=plan.log_path,
                    extent=Extent.parse(name),
                    run_id=run_id,
                    store=store,
                    catalog=catalog,
                    platform=host.host_platform,
                )
            except (ConnectionLost, HostUnreachable):
                raise  # the session is gone: the rest of this host fails as a whole, by name
            except MqJournalError as exc:
                result.not_archived.append((name, str(exc)))
                continue
            result.archived.append(name)
        return result

    work = _on_hosts(settings, [(p.host, p.qmgr, p) for p in summary.linux if p.to_archive], one, "archive")
    plans = {p.key: p for p in summary.linux}
    for outcome in work.outcomes:
        assert isinstance(outcome, LinuxArchiveResult)
        releasing = set(plans[outcome.label].to_release)
        lines = [f"{name}: not archived, so not released ({why})" for name, why in outcome.not_archived]
        if lines and releasing & {name for name, _ in outcome.not_archived}:
            work.undone[outcome.label] = lines
    return work


def release(settings: Settings, summary: RunPlan, approved: set[str], run_id: str) -> LinuxWork | None:
    """Release the extents of the Linux queue managers chosen at the gate, each re-planned on the live queue
    manager first; None when the gate chose none of them."""
    chosen_plans = [p for p in summary.linux if p.key in approved and p.to_release]
    if not chosen_plans:
        return None
    store = ExtentStore(settings.backup_store, conn_id=settings.backup_store_conn_id)
    catalog = Catalog(settings.catalog_url)

    def one(session: IbmiSession, host: LinuxHostConfig, qmgr: str, plan: LinuxPlanned) -> LinuxReleaseResult:
        done = release_extents(
            session,
            qmgr,
            bin_dir=host.mq_bin,
            run_id=run_id,
            store=store,
            catalog=catalog,
            approved=set(plan.to_release),
            platform=host.host_platform,
        )
        sizes = _sizes(settings, run_id, host.name, qmgr)
        return LinuxReleaseResult(
            host=host.name,
            qmgr=qmgr,
            released=done.released,
            released_bytes=sum(sizes.get(name, 0) for name in done.released),
            kept=[(name, why) for name, why in done.kept.items() if name in plan.to_release],
            undone=sorted(done.undone & set(plan.to_release)),
        )

    work = _on_hosts(settings, [(p.host, p.qmgr, p) for p in chosen_plans], one, "release")
    for outcome in work.outcomes:
        assert isinstance(outcome, LinuxReleaseResult)
        why = dict(outcome.kept)
        if outcome.undone:
            work.undone[outcome.label] = [f"{name}: not released ({why.get(name, '?')})" for name in outcome.undone]
    return work


def _sizes(settings: Settings, run_id: str, host: str, qmgr: str) -> dict[str, int]:
    snapshot = _snapshots(settings, run_id).get((host, qmgr))
    return {e.name: e.size_bytes for e in snapshot.extents} if snapshot else {}


def left_undone(
    summary: RunPlan, archives: Sequence[LinuxArchiveResult], releases: Sequence[LinuxReleaseResult]
) -> dict[str, list[str]]:
    """By `host/QMGR`: what the Linux steps promised and did not do, for the report's "left undone"."""
    releasing = {p.key: set(p.to_release) for p in summary.linux}
    left: dict[str, list[str]] = defaultdict(list)
    for a in archives:
        left[a.label] += [
            f"{name} not archived, so not released: {why}"
            for name, why in a.not_archived
            if name in releasing.get(a.label, set())
        ]
    for r in releases:
        why = dict(r.kept)
        left[r.label] += [f"{name} not released: {why.get(name, '?')}" for name in r.undone]
    return {label: lines for label, lines in left.items() if lines}
