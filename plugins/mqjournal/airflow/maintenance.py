"""The maintenance DAG's steps as plain functions: the DAG file only wires them; tests call them directly.

Each step is safe to rerun: collection rewrites its own snapshot file, saves skip what is verified, deletes re-check
the live host and skip what is gone. XCom carries small values only (targets, names, counts, paths), each a
model of mqjournal.airflow.xcom: a step takes and returns those, its task converts at the seam.
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mqjournal import forecast
from mqjournal.airflow import linuxwork
from mqjournal.airflow.approval import DELETE_NOTHING, approved_keys, read_answer
from mqjournal.airflow.forms import split_choice
from mqjournal.airflow.hostwork import BatchResult, run_per_queue_manager, run_where_needed, spread, with_not_found
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import (
    HostBatch,
    MaintenanceTarget,
    NotFound,
    PartitionTimeZone,
    Preflight,
    RunPlan,
    SparkSubmission,
)
from mqjournal.backupstore import BackupStore
from mqjournal.cannotstart import newest_by_queue_manager, with_cannot_start_alerts
from mqjournal.catalog import Catalog
from mqjournal.datafolder import DataPath
from mqjournal.fleet import HostConfig, load_fleet
from mqjournal.history import PlanInputs, host_of, partitions_needed
from mqjournal.ibmi import collector, discovery
from mqjournal.ibmi.cleanup import HostCleanup
from mqjournal.ibmi.context import HostContext
from mqjournal.ibmi.downloadroutes import DownloadRoutes
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.readings import PartitionZone
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.names import save_library_for
from mqjournal.outcomes import CleanupResult, DeleteResult, LinuxArchiveResult, LinuxReleaseResult, SaveResult
from mqjournal.planrows import read_plan, read_receivers
from mqjournal.policy import Policy
from mqjournal.report import plan_body, planned_save_file_bytes
from mqjournal.reportlinks import report_link_markdown
from mqjournal.runreport import RunFacts, render_html, render_markdown
from mqjournal.sizefmt import size
from mqjournal.snapshot import Snapshot, write_snapshots
from mqjournal.undone import gate_warning, left_undone, note_tail
from mqjournal.vocabulary import DELETES, SAVES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

MAINTENANCE_DAG = "mq_journal_maintenance"


@dataclass(frozen=True)
class Selection:
    """A run's queue managers: those found on their hosts, and those the fleet file names whose journal is not there
    (each failed by name in the run's first step on its host, never silently left out)."""

    targets: list[MaintenanceTarget]
    not_found: list[NotFound]


def select_targets(settings: Settings, hosts: list[str], queue_managers: list[str]) -> Selection:
    """The queue managers this run works on: the fleet file's, narrowed by the trigger form, found on each host."""
    fleet = load_fleet(settings.fleet_file)
    every_host = [h.name for h in fleet.hosts] + [h.name for h in fleet.linux_hosts]
    unknown = set(hosts) - set(every_host)
    if unknown:
        raise ValueError(
            f"hosts not in the fleet file {settings.fleet_file}: {', '.join(sorted(unknown))}; "
            f"its hosts are {', '.join(every_host) or 'none'} (names are case-sensitive)"
        )
    selected = [h for h in fleet.hosts if not hosts or h.name in hosts]

    def survey(host: HostConfig) -> discovery.HostSurvey:
        with host_session(settings, host) as session:
            return discovery.survey(session, host.name, host.queue_managers, time_zone_rules=host.time_zone_rules)

    # Each host is surveyed in its own session, several at once: discovery waits on SSH round trips, not on us.
    surveys = spread(selected, survey, settings.tasks.hosts_in_parallel)
    targets = []
    not_found: list[NotFound] = []
    # host -> the queue managers discovery found there, or was told to look for; a Linux host's, its fleet file's
    # (the Linux steps select those: linuxwork.select)
    found_on: dict[str, list[str]] = {
        h.name: [q.name for q in h.queue_managers] for h in fleet.linux_hosts if not hosts or h.name in hosts
    }

    def chosen(host: str, name: str) -> bool:
        return linuxwork.chosen(queue_managers, host, name)

    for host, found in zip(selected, surveys, strict=True):
        found_on[host.name] = [t.qmgr for t in found.targets] + [qmgr for qmgr, _ in found.missing]
        not_found += [NotFound(host=host.name, qmgr=q, why=why) for q, why in found.missing if chosen(host.name, q)]
        for t in found.targets:
            if not chosen(host.name, t.qmgr):
                continue
            targets.append(
                MaintenanceTarget(
                    host=host.name,
                    qmgr=t.qmgr,
                    library=t.library,
                    journal=t.journal,
                    instance=t.instance,
                    journal_queue=list(t.journal_queue),
                    utc_offset_minutes=_offset_minutes(found.tz),
                    time_zone=PartitionTimeZone.of(found.tz),
                )
            )
    # A typo must not quietly make a run that processes nothing (or less than asked).
    missing = sorted(
        choice
        for choice in queue_managers
        if not any(
            split_choice(choice)[1] in names and split_choice(choice)[0] in (None, host)
            for host, names in found_on.items()
        )
    )
    if missing:
        known = "; ".join(f"{h}: {', '.join(names) or 'none'}" for h, names in found_on.items())
        raise ValueError(
            f"queue managers found on none of the selected hosts: {', '.join(missing)}; found there: {known} "
            "(queue manager names are case-sensitive); correct the trigger form's queue_managers"
        )
    for n in not_found:
        log.error("%s: %s", n.label, n.error)
    return Selection(targets=targets, not_found=not_found)


def _offset_minutes(zone: PartitionZone) -> int:
    """The partition's offset now, as the report writes its times for people."""
    return int(zone.offset_on(datetime.now(UTC)).total_seconds() // 60)


def collect_one(
    settings: Settings, target: MaintenanceTarget, run_id: str, change_receiver: bool, dry_run: bool = False
) -> str:
    """Checkpoint and collect one queue manager into this run's snapshot folder; returns the file. A dry run only
    reads: no CHGJRN, no RCDMQMIMG."""
    with host_session(settings, target.host) as session:
        return collect_on(session, settings, target, run_id, change_receiver, dry_run)


def collect_on(
    session: IbmiSession,
    settings: Settings,
    target: MaintenanceTarget,
    run_id: str,
    change_receiver: bool,
    dry_run: bool = False,
) -> str:
    """`collect_one` over a session already open to the target's host."""
    snapshot = collector.collect(
        session,
        target.target,
        host=target.host,
        run_id=run_id,
        tz=target.tz,
        change_receiver=change_receiver and not dry_run,
        checkpoint=not dry_run,
    )
    path = settings.snapshot_dir(run_id) / f"{target.host}__{target.library}.jsonl"
    write_snapshots(path, [snapshot])
    return str(path)


def summarize(
    plan_dir: DataPath,
    targets: Sequence[MaintenanceTarget],
    policy: Policy | None = None,
    *,
    snapshots: DataPath | None = None,
    collected: Iterable[Snapshot] = (),
) -> RunPlan:
    """What save and delete act on, for this run's targets only, and the plan as the log shows it; the save files'
    size estimated with `policy`'s data compression (which the run report sets beside the real sizes). The store is
    not read here: the gate's body reads it when the gate opens, after this run's saves (gate_body).

    With `snapshots` (the data folder's snapshot history), each ASP's forecast is made from it and ASP_FULL_SOON is
    added to the queue managers whose ASP reaches the policy's limit soon (mqjournal.forecast): the plan job reads no
    ASP history, so the gate, the run report and the run's XCom get the alert from here. From `collected` (the
    run's snapshots), QMGR_CANNOT_START where a queue manager cannot start (mqjournal.cannotstart), the on-call
    step's rule."""
    policy = policy or Policy()
    wanted = {t.ref for t in targets}
    qms, receivers = read_plan(plan_dir, wanted)
    forecasts = forecast.read_forecasts(snapshots, policy) if snapshots is not None else {}
    qms = forecast.with_forecast_alerts(qms, forecasts, policy)
    qms = with_cannot_start_alerts(qms, newest_by_queue_manager(collected))
    to_save: dict[str, list[str]] = defaultdict(list)
    to_delete: dict[str, list[str]] = defaultdict(list)
    for r in receivers:
        if r.action in SAVES:
            to_save[r.ref.key].append(r.receiver)
        if r.action in DELETES:
            to_delete[r.ref.key].append(r.receiver)
    summary = RunPlan(
        queue_managers=qms,
        to_save=dict(to_save),
        to_delete=dict(to_delete),
        save_file_bytes_estimate={q.ref.key: planned_save_file_bytes(q, policy) for q in qms},
        anything_to_delete=any(to_delete.values()),
        body=plan_body(qms, receivers, policy, forecasts=forecasts),
        asp_forecasts=[
            f.model_copy(update={"history": []}) for q in qms if (f := forecast.forecast_of(q, forecasts)) is not None
        ],
    )
    log.info("the plan of this run's targets:\n%s", summary.body)
    return summary


def gate_body(
    plan_dir: DataPath,
    summary: RunPlan,
    store: BackupStore | None,
    policy: Policy,
    *,
    saves: object = None,
    run_id: str | None = None,
    linux_archives: object = None,
) -> str:
    """The approval gate's body, made as the gate opens: the gate waits for the saves, so what the backup store holds
    of each queue manager includes the copies this run's saves just made (summarize runs before them). The table
    says when each ASP reaches the policy's limit, by the forecasts summarize made (mqjournal.forecast). Above the
    table, a warning when the saves (the save task's XCom value, `saves`) left any receiver offered here without a
    backup off the partition, naming those no answer deletes; below it, the link to the run's report."""
    qms = summary.queue_managers
    receivers = read_receivers(plan_dir, {q.ref for q in qms})
    store_bytes = {q.ref.key: store.total_bytes(q.host, q.qmgr) for q in qms} if store is not None else None
    done = [SaveResult.from_xcom(v) for v in mapped_results(saves)]
    warning = gate_warning(summary.to_delete, done, saves_ran=saves is not None)
    page = report_link_markdown(MAINTENANCE_DAG, run_id, "The run's report") if run_id else ""
    link = f"\n\n{page}: written when the run ends.\n" if page else ""
    archived = [LinuxArchiveResult.from_xcom(a) for a in mapped_results(linux_archives)]
    warning += linuxwork.gate_warning(summary, archived)
    body = plan_body(qms, receivers, policy, store_bytes=store_bytes, forecasts=summary.forecasts())
    body = body if qms or not summary.linux else ""
    return warning + body + linuxwork.plan_section(summary.linux) + link


_Step = TypeVar("_Step", bound=HostContext)


def _on_host(
    step: type[_Step], settings: Settings, session: IbmiSession, target: MaintenanceTarget, run_id: str
) -> _Step:
    """A step on one queue manager (the executor, the cleanup), with the catalog and backup store of the settings."""
    store = BackupStore.from_settings(settings)
    routes = DownloadRoutes(settings.data_folder)  # how `mqjournal doctor` found each host downloads
    catalog = Catalog(settings.catalog_url)
    return step(session, target.target, target.host, target.tz, catalog, run_id, store, routes=routes)


def clean_up_on(
    session: IbmiSession, settings: Settings, target: MaintenanceTarget, run_id: str, policy: Policy
) -> CleanupResult:
    """Save files of this queue manager that the backup store holds verified leave the partition after
    `keep_on_host_days` (mqjournal.ibmi.cleanup)."""
    return _on_host(HostCleanup, settings, session, target, run_id).clean_up(policy)


def save_one(
    settings: Settings,
    target: MaintenanceTarget,
    summary: RunPlan,
    run_id: str,
    save_library: str,
    policy: Policy | None = None,
) -> SaveResult:
    # Before any SSH: a save in the queue manager's own library, QTEMP or an IBM library could be lost with it.
    save_library_for(save_library, target.library)
    if not to_save(summary, target):
        return SaveResult(target=target.ref)
    with host_session(settings, target.host) as session:
        return save_on(session, settings, target, summary, run_id, save_library, policy)


def to_save(summary: RunPlan, target: MaintenanceTarget) -> list[str]:
    """The receivers to delete too: one saved only by someone else (status SAVED on the host) is planned "delete", and
    is deleted only once a save of ours proves it; those already proven are skipped by the executor."""
    return list(dict.fromkeys(summary.to_save.get(target.key, []) + summary.to_delete.get(target.key, [])))


def save_on(
    session: IbmiSession,
    settings: Settings,
    target: MaintenanceTarget,
    summary: RunPlan,
    run_id: str,
    save_library: str,
    policy: Policy | None = None,
) -> SaveResult:
    """`save_one` over a session already open to the target's host."""
    save_library = save_library_for(save_library, target.library)
    wanted = to_save(summary, target)
    if not wanted:
        return SaveResult(target=target.ref)
    executor = _on_host(Executor, settings, session, target, run_id)
    return executor.save(wanted, save_library=save_library, policy=policy)


def delete_one(
    settings: Settings, target: MaintenanceTarget, summary: RunPlan, run_id: str, policy: Policy
) -> DeleteResult:
    if not summary.to_delete.get(target.key):
        return DeleteResult(target=target.ref)
    with host_session(settings, target.host) as session:
        return delete_on(session, settings, target, summary, run_id, policy)


def delete_on(
    session: IbmiSession,
    settings: Settings,
    target: MaintenanceTarget,
    summary: RunPlan,
    run_id: str,
    policy: Policy,
) -> DeleteResult:
    """`delete_one` over a session already open to the target's host."""
    approved = summary.to_delete.get(target.key, [])
    if not approved:
        return DeleteResult(target=target.ref)
    return _on_host(Executor, settings, session, target, run_id).delete(approved, policy=policy)


# --- per batch of hosts: what the DAG's mapped tasks run (mqjournal.airflow.hostwork) -----------------------------


def collect_batch(
    settings: Settings, batch: HostBatch, run_id: str, change_receiver: bool, dry_run: bool = False
) -> BatchResult[str]:
    """Collect the batch's queue managers; those whose journal was not found fail here, by name."""
    done = run_per_queue_manager(
        settings,
        batch,
        lambda session, t: collect_on(session, settings, t, run_id, change_receiver, dry_run),
        doing="read only (dry run)" if dry_run else "checkpoint and collect",
    )
    return with_not_found(done, batch)


def save_batch(
    settings: Settings, batch: HostBatch, summary: RunPlan, run_id: str, save_library: str, policy: Policy
) -> BatchResult[SaveResult]:
    for t in batch.targets:  # before any SSH, as save_one: the library is refused for every queue manager or none
        save_library_for(save_library, t.library)
    return run_where_needed(
        settings,
        batch,
        lambda t: bool(to_save(summary, t)),
        lambda session, t: save_on(session, settings, t, summary, run_id, save_library, policy),
        lambda t: SaveResult(target=t.ref),
        doing="save and copy to the backup store",
    )


def clean_up_batch(settings: Settings, batch: HostBatch, run_id: str, policy: Policy) -> BatchResult[CleanupResult]:
    return run_per_queue_manager(
        settings,
        batch,
        lambda session, t: clean_up_on(session, settings, t, run_id, policy),
        doing="clean up save files kept on the partition",
    )


def delete_batch(
    settings: Settings, batch: HostBatch, summary: RunPlan, chosen: set[str], run_id: str, policy: Policy
) -> BatchResult[DeleteResult] | None:
    """The deletes of the batch's queue managers chosen at the gate; None when the gate chose none of them (the
    task is then skipped, so the grid tells a rejected run from an approved one)."""
    approved = [t for t in batch.targets if t.key in chosen]
    for t in batch.targets:
        if t.key not in chosen and summary.to_delete.get(t.key):
            log.info("%s: not chosen at the approval gate, nothing deleted", t.label)
    if not approved:
        return None
    return run_where_needed(
        settings,
        HostBatch(targets=approved),
        lambda t: bool(summary.to_delete.get(t.key)),
        lambda session, t: delete_on(session, settings, t, summary, run_id, policy),
        lambda t: DeleteResult(target=t.ref),
        doing="re-check and delete",
    )


def mapped_results(pulled: object) -> list[object]:
    """A mapped task's XCom values as a list: Airflow gives one instance's value bare, and None when skipped."""
    if pulled is None:
        return []
    if isinstance(pulled, dict):
        return [pulled]
    if isinstance(pulled, Iterable):  # a list, or Airflow's lazy sequence of the mapped instances' values
        # A batch of hosts returns a list of its queue managers' values: one flat list for the report.
        return [item for value in pulled if value for item in (value if isinstance(value, list) else [value])]
    raise TypeError(f"not the value of a mapped task: {type(pulled).__name__}")


def outcome(
    dry_run: bool,
    summary: RunPlan | None,
    approval: dict[str, Any] | None,
    deletes: Sequence[DeleteResult],
    approve_state: str | None = None,
) -> str:
    """One line for the report and the run's note in the grid: what the run decided, and who decided it."""
    if summary is None:
        return "failed before a plan was made: nothing was saved or deleted"
    if dry_run:
        return "dry run: plan only, nothing saved or deleted"
    if not summary.anything_to_delete:
        return "nothing to delete: no approval was needed"
    if approval is not None and approval.get("responded_by_user") is None and approval.get("chosen_options"):
        # A gate asked when it still had "Delete nothing" as its timeout answer.
        return f"no answer before the gate's timeout ({DELETE_NOTHING}): nothing was deleted"
    if approval is None and approve_state == "failed":
        return "no answer before the gate's timeout, or the gate failed: nothing was deleted"
    if approval is None and approve_state == "upstream_failed":
        return "the gate was not asked, because a step before it failed (see the saves): nothing was deleted"
    if approval is None:
        return "not approved (the gate did not answer): nothing was deleted"
    who = (approval.get("responded_by_user") or {}).get("name", "?")
    answer = read_answer(summary, approval.get("chosen_options") or [])
    if answer.refusal:
        return f"answered by {who}, but {answer.refusal}"
    chosen = answer.keys
    if not chosen:
        return f"rejected by {who}: nothing deleted"
    deleted = [d for d in deletes if d.target.key in chosen]
    count = sum(len(d.deleted) for d in deleted)
    freed = sum(d.freed_bytes for d in deleted)
    offered = {k for k, names in summary.to_delete.items() if names} | {p.key for p in summary.linux if p.to_release}
    declined = len(offered - chosen)
    tail = f"; {declined} queue manager{'s' if declined != 1 else ''} declined" if declined else ""
    return f"approved by {who}: {count} deleted, {size(freed)} freed{tail}"


def write_report(settings: Settings, facts: RunFacts) -> str:
    """The run report for a person, Markdown and a self-contained HTML page beside it. Returns the Markdown."""
    text = render_markdown(facts)
    path = settings.report_file(facts.run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.with_suffix(".html").write_text(render_html(facts), encoding="utf-8")
    return text


SPARK_ENV = ("SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")


def report(
    settings: Settings,
    run_id: str,
    *,
    dry_run: bool,
    summary: object,
    saves: object,
    deletes: object,
    approval: dict[str, Any] | None,
    approve_state: str | None,
    cleanups: object = None,
    batches: object = None,
    linux_archives: object = None,
    linux_releases: object = None,
) -> str:
    """The report task: what the run's tasks pushed (each may be missing when its task did not run), the outcome
    line, and the report file written. Returns the Markdown text."""
    plan = RunPlan.from_xcom(summary) if summary is not None else None
    deleted = [DeleteResult.from_xcom(d) for d in mapped_results(deletes)]
    result = outcome(dry_run, plan, approval, deleted, approve_state)
    saved = [SaveResult.from_xcom(s) for s in mapped_results(saves)]
    cleaned = [CleanupResult.from_xcom(c) for c in mapped_results(cleanups)]
    archived = [LinuxArchiveResult.from_xcom(a) for a in mapped_results(linux_archives)]
    released = [LinuxReleaseResult.from_xcom(r) for r in mapped_results(linux_releases)]
    if released:
        count = sum(len(r.released) for r in released)
        result = f"{result}; {count} Linux log extents released, {size(sum(r.released_bytes for r in released))}"
    offered = {k for k, names in (plan.to_delete if plan else {}).items() if names}
    offered |= {p.key for p in (plan.linux if plan else []) if p.to_release}
    chosen = approved_keys(plan, approval) if plan and not dry_run else set()
    answered = (approval or {}).get("responded_by_user") or {}
    not_found = [n for b in (HostBatch.list_from_xcom(batches) if batches else []) for n in b.not_found]
    left = left_undone(saves=saved, deletes=deleted, not_found=[f"{n.label}: {n.error}" for n in not_found])
    left |= linuxwork.left_undone(plan, archived, released) if plan else {}
    if left:
        result = f"{result}; {note_tail(left)}"
    facts = RunFacts(
        run_id=run_id,
        dry_run=dry_run,
        outcome=result,
        approved_by=answered.get("name") if chosen else None,
        approved_at=(approval or {}).get("responded_at") if chosen else None,
        chosen=sorted(chosen),
        declined=sorted(offered - chosen) if approval is not None and not dry_run else [],
        # The summary holds the plan's queue manager rows of this run's targets; only the receivers are read again.
        queue_managers=plan.queue_managers if plan else [],
        save_file_bytes_estimate=plan.save_file_bytes_estimate if plan else {},
        receivers=read_receivers(settings.plan_dir(run_id), {q.ref for q in plan.queue_managers}) if plan else [],
        saves=saved,
        deletes=deleted,
        cleanups=cleaned,
        not_found=[f"{n.label}: {n.error}" for n in not_found],
        left_undone=left,
        linux=plan.linux if plan else [],
        linux_archives=archived,
        linux_releases=released,
    )
    text = write_report(settings, facts)
    settings.note_file(run_id).write_text(result, encoding="utf-8")
    log.info("%s", text)
    return text


def plan_submission(settings: Settings, run_id: str, policy: Policy, master: str) -> SparkSubmission:
    """SparkSubmitOperator's templated inputs for the plan job: this run's snapshots are current (IBM i's, and Linux's
    when the run collected any), the earlier runs a rule reads are history; `as_of` is fixed now, so a retried plan
    task plans the same moment."""
    from mqjournal import planjob

    py_files = planjob.build_py_files(_dist(settings))
    env = planjob.submit_environment(master)
    inputs = _plan_history(settings, run_id, policy)
    return SparkSubmission(
        args=planjob.application_args(
            inputs.snapshots,
            settings.plan_dir(run_id),
            history=inputs.history,
            policy=policy,
            as_of=datetime.now(UTC),
            linux_snapshots=inputs.linux_snapshots,
            linux_history=inputs.linux_history,
        ),
        # Only Spark's own variables: the process environment holds connection secrets that must not reach XCom.
        env={k: env[k] for k in SPARK_ENV if k in env},
        conf=planjob.default_conf(master),
        py_files=str(py_files),
    )


def plan_in_session(spark: SparkSession, settings: Settings, run_id: str, policy: Policy) -> None:
    """The plan job in the plan task's own session (a Spark Connect connection's): the inputs of
    `plan_submission`, and the same output folder, which `summarize` reads."""
    from mqjournal import planjob

    inputs = _plan_history(settings, run_id, policy)
    planjob.plan_in_session(
        spark,
        inputs.snapshots,
        settings.plan_dir(run_id),
        history=inputs.history,
        policy=policy,
        as_of=datetime.now(UTC),
        job=f"the plan job on Spark Connect ({settings.spark_connect_conn_id})",
        linux_snapshots=[inputs.linux_snapshots] if inputs.linux_snapshots else [],
        linux_history=inputs.linux_history,
    )


def _plan_history(settings: Settings, run_id: str, policy: Policy) -> PlanInputs:
    """The collections the plan reads: this run's, and of the earlier ones only those a rule uses, so the job's cost
    does not grow with the tool's age.

    A run folder the collect never created (a fleet without Linux hosts has no Linux one; a Linux-only fleet no IBM i
    one) is left out rather than failing the plan; with neither, the IBM i one is given, and the plan fails naming
    it, as it always did."""
    from mqjournal.linuxmq.plan import STUCK_AFTER_RUNS

    current, linux = settings.snapshot_dir(run_id), settings.linux_snapshot_dir(run_id)
    linux_collected = linux.exists()
    snapshots = current if current.exists() or not linux_collected else None
    return PlanInputs(
        snapshots=snapshots,
        history=partitions_needed(settings.snapshots, current, policy.stuck_after_runs) if snapshots else [],
        linux_snapshots=linux if linux_collected else None,
        linux_history=(
            partitions_needed(settings.linux_snapshots, linux, STUCK_AFTER_RUNS, key_of=host_of)
            if linux_collected
            else []
        ),
    )


def _dist(settings: Settings) -> Path:
    path = settings.dist_dir
    path.mkdir(parents=True, exist_ok=True)
    return path


def preflight(settings: Settings, hosts: list[str], save_library: str) -> Preflight:
    """`mqjournal doctor` for each selected host not yet collected (no snapshot of it under the data folder): read
    only (without its download probe, which writes a scratch save file: a dry run sends nothing that changes a
    partition; `mqjournal doctor` records the route). The fleet file's Linux hosts are checked too (linuxmq/doctor.py),
    those with no Linux snapshot yet. A host that is not ready fails the run before anything is collected, saved or
    deleted, with the doctor's table in the log saying what to fix; drop the host from the form's hosts to run the
    others meanwhile."""
    from mqjournal.doctor import HostReport, check_host, render
    from mqjournal.errors import MqJournalError
    from mqjournal.linuxfleet import LinuxHostConfig
    from mqjournal.linuxmq.doctor import check_linux_host

    fleet = load_fleet(settings.fleet_file)
    collected = _collected_hosts(settings.snapshots) | _collected_hosts(settings.linux_snapshots)
    every: list[HostConfig | LinuxHostConfig] = [*fleet.hosts, *fleet.linux_hosts]
    new = [h for h in every if (not hosts or h.name in hosts) and h.name not in collected]

    def check(host: HostConfig | LinuxHostConfig) -> HostReport:
        try:
            with host_session(settings, host) as session:
                if isinstance(host, LinuxHostConfig):
                    return check_linux_host(fleet, host, session=session)
                return check_host(fleet, host, session=session, save_library=save_library)
        except MqJournalError as exc:  # the connection itself refused (e.g. host-key checking disabled)
            report = HostReport(host.name)
            report.add("SSH and host key", "fail", exc.problem, exc.action)
            return report

    reports = spread(new, check, settings.tasks.hosts_in_parallel)
    text = render(reports) if reports else "every selected host was collected before: no preflight needed"
    log.info("the hosts' readiness (mqjournal doctor):\n%s", text)
    not_ready = [r.host for r in reports if not r.ready]
    if not_ready:
        raise RuntimeError(
            f"hosts not ready for mqjournal: {', '.join(not_ready)}; fix what the table above says "
            "(or leave them out of the run's hosts) and run again"
        )
    return Preflight(checked=[r.host for r in reports], ready=True)


def _collected_hosts(snapshots: DataPath) -> set[str]:
    """The hosts any run has collected: only each record's host is read. A line that is not JSON is skipped here; the
    plan job refuses it, naming it."""
    hosts: set[str] = set()
    for path in snapshots.glob("run_id=*/*.jsonl"):
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line) if line.strip() else None
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("host"), str):
                    hosts.add(record["host"])
    return hosts
