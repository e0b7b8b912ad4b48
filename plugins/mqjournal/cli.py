"""`mqjournal ...`: the command line. Each subcommand is a thin adapter over the package's functions."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from mqjournal import __version__
from mqjournal.recovery.kinds import RecoveryKind

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mqjournal.backupstore import BackupStore
    from mqjournal.ibmi.readings import PartitionZone
    from mqjournal.ibmi.transport import IbmiSession
    from mqjournal.planrows import PlanTotals
    from mqjournal.recovery.connect import Setup
    from mqjournal.recovery.execute import RecoveryExecutor
    from mqjournal.recovery.plan import RecoveryPlan, Request
    from mqjournal.settings import Settings

    # What add_subparsers returns: argparse names that class only privately.
    _Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def _schema(args: argparse.Namespace) -> int:
    from mqjournal import snapshot
    from mqjournal.linuxmq import snapshot as linux_snapshot

    contract = linux_snapshot if args.contract == "linux-snapshot" else snapshot
    text = contract.json_schema_text()
    if args.write:
        target = Path(str(resources.files("mqjournal").joinpath("schemas", contract.SCHEMA_FILE)))
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    else:
        sys.stdout.write(text)
    return 0


def _sim(args: argparse.Namespace) -> int:
    from mqjournal.fleet import load_fleet
    from mqjournal.sim.service import SimulatorService

    if args.fleet is None:
        return _bad_input("give the fleet file with --fleet FILE")
    config = load_fleet(args.fleet)
    if args.state:
        config = config.model_copy(update={"state_dir": args.state.resolve()})
    service = SimulatorService(config)
    ports = service.start(follow_wall_clock=not args.frozen_clock, listen=args.listen)
    for name, port in ports.items():
        host = service.hosts[name].partition
        qms = ", ".join(q.name for q in host.queue_managers) or "no queue managers"
        where = f"{config.user}@{args.listen} -p {port}"
        print(f"{name}: ssh {where}  ({qms}; receivers: {len(host.receivers)})", flush=True)
    print(f"known_hosts: {config.known_hosts}\nclient key: {config.client_key}\nstate: {config.state_dir}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    service.stop()
    return 0


def _sim_drill(args: argparse.Namespace) -> int:
    from mqjournal.fleet import load_fleet
    from mqjournal.sim.drills import Drill, stage

    config = load_fleet(args.fleet)
    state = args.state.resolve() if args.state else config.state_dir
    drill = Drill(
        kind=args.drill,
        host=args.host,
        qmgr=args.qmgr,
        receiver=getattr(args, "receiver", None),
        object=getattr(args, "object", None),
    )
    ok, text = stage(state, drill)
    print(text, file=sys.stdout if ok else sys.stderr, flush=True)
    return 0 if ok else 2


def _spark_connect(args: argparse.Namespace) -> int:
    from mqjournal.planjob import submit_environment
    from mqjournal.sparkconnect import server_command

    address, _, port = args.listen.rpartition(":")
    command = server_command(address=address or "127.0.0.1", port=int(port), master=args.master)
    # Spark's own process in this one's place: signals and the exit status are the server's.
    os.execve(command[0], command, submit_environment(args.master))


def _collect(args: argparse.Namespace) -> int:
    from mqjournal.collection import collect_fleet, linux_run_dir
    from mqjournal.fleet import load_fleet

    config = load_fleet(args.fleet)
    names = [h.name for h in config.hosts] + [h.name for h in config.linux_hosts]
    unknown = sorted(set(args.hosts or []) - set(names))
    if unknown:
        return _bad_input(
            f"hosts not in the fleet file {args.fleet}: {', '.join(unknown)}; its hosts are "
            f"{', '.join(names) or 'none'}"
        )
    run_dir, results = collect_fleet(
        config,
        args.out,
        run_id=args.run_id,
        hosts=args.hosts,
        change_receiver=args.change_receiver,
        audit_log=_audit_path(args),
    )
    _print_collection(results)
    print(f"snapshots: {run_dir / 'snapshots.jsonl'}")
    if config.linux_hosts:
        # The run's id is the name of its folder, run_id=<id>.
        linux_dir = linux_run_dir(args.out, run_dir.name.removeprefix("run_id="))
        print(f"Linux snapshots: {linux_dir / 'snapshots.jsonl'}")
    return 0 if all(not r.failures for r in results) else 3


def _print_collection(results) -> None:
    from mqjournal.errors import MalformedAmqjrninf
    from mqjournal.jrninf import parse_amqjrninf

    for result in results:
        for s in result.snapshots:
            attached = next((r.name for r in s.receivers if r.status == "ATTACHED"), "-")
            try:
                oldest = parse_amqjrninf(s.amqjrninf, qmgr=s.qmgr).receiver or "********** (not on the system)"
            except MalformedAmqjrninf:
                oldest = "unreadable AMQJRNINF"
            state = "checkpoint ok" if s.checkpoint.ok else "CHECKPOINT FAILED"
            print(
                f"{s.host:<12} {s.qmgr:<10} {s.qmgr_library:<10} receivers {len(s.receivers):>4}  attached {attached}"
                f"  oldest needed {oldest}  {state}"
            )
        for ls in result.linux_snapshots:
            images = "images ok" if ls.media_images.ok else ("IMAGES FAILED" if ls.media_images.forced else "")
            print(
                f"{ls.host:<12} {ls.qmgr:<10} {ls.log_management.value:<10} extents {len(ls.extents):>4}  current "
                f"{ls.current_extent or '-'}  restart {ls.restart_extent or '-'}  media {ls.media_extent or '-'}"
                f"  {images}".rstrip()
            )
        for f in result.failures:
            print(f"{f.host:<12} {f.qmgr or '(host)':<10} NOT COLLECTED: {f.error}")


def _plan(args: argparse.Namespace) -> int:
    from mqjournal.planjob import run_plan, run_plan_connect

    if args.snapshots is None and args.linux_snapshots is None:
        return _bad_input("nothing to plan: give --snapshots (IBM i), --linux-snapshots, or both")
    given = (("snapshots", args.snapshots), ("history", args.history), ("Linux snapshots", args.linux_snapshots))
    for what, path in given:
        if path is not None and not path.exists():
            return _bad_input(
                f"the {what} {path} does not exist: give a snapshot file or folder (JSON Lines) that "
                "`mqjournal collect` wrote"
            )
    if args.spark_connect:
        summary = run_plan_connect(
            args.spark_connect,
            args.snapshots,
            args.out,
            history=args.history,
            policy_file=args.policy,
            as_of=args.as_of,
            linux_snapshots=args.linux_snapshots,
        )
    else:
        summary = run_plan(
            args.snapshots,
            args.out,
            history=args.history,
            policy_file=args.policy,
            as_of=args.as_of,
            linux_snapshots=args.linux_snapshots,
        )
    print(_plan_summary(summary))
    print(f"plan: {args.out / 'receivers'}, {args.out / 'queue_managers'}, {args.out / 'summary.json'}")
    if args.linux_snapshots is not None:
        print(f"Linux plan: {args.out / 'linux_extents'}, {args.out / 'linux_queue_managers'}")
    return 0


def _plan_summary(summary: PlanTotals) -> str:
    """summary.json as a person reads it: what the plan does, in counts and bytes, as of when."""
    from mqjournal.sizefmt import size as _size
    from mqjournal.timefmt import local_time

    def counts(found: Iterable[tuple[str, int]]) -> str:
        return ", ".join(f"{name} {count}" for name, count in found) or "none"

    return "\n".join(
        [
            f"plan as of {local_time(summary.as_of)}: {summary.queue_managers} queue manager(s), "
            f"{summary.blocked_queue_managers} blocked; {summary.receivers} receiver(s)",
            f"  actions: {counts(summary.actions.items())}",
            f"  alerts: {counts(summary.alerts.items())}",
            f"  to save {_size(summary.bytes_to_save)}, to delete {_size(summary.bytes_to_delete)}"
            f", freed {_size(summary.bytes_freed)}",
        ]
    )


def _demo(args: argparse.Namespace) -> int:
    """The main job end to end: the simulated fleet, a local Airflow, the maintenance DAG run and its approval."""
    from mqjournal.demo import REPO, run_demo

    return run_demo(
        args.fleet or REPO / "docker" / "fleet.example.yaml",
        home=args.home or REPO / ".airflow",
        port=args.port,
        answer="Approve" if args.approve else "Reject" if args.reject else None,
        keep_running=args.keep_running,
        timeout_minutes=args.timeout,
        spark_connect=args.spark_connect,
    )


def _recover(args: argparse.Namespace) -> int:
    """Plan a recovery of one queue manager on the live host (read only); with --execute --yes, run it."""
    from mqjournal.errors import MqJournalError
    from mqjournal.ibmi.downloadroutes import DownloadRoutes
    from mqjournal.recovery import connect
    from mqjournal.recovery.execute import RecoveryExecutor
    from mqjournal.recovery.gather import clusters_of, gather, locate
    from mqjournal.recovery.planner import plan_recovery
    from mqjournal.recovery.restore import RecoveryRefused
    from mqjournal.settings import Settings
    from mqjournal.snapshot import snapshots_of

    if args.execute and not args.yes:
        return _bad_input("--execute changes the host: look at the plan (--plan-only), then add --yes to run it")
    settings = Settings.from_env()
    try:
        setup = _setup(args)
        store = _backup_store()
    except ValueError as exc:
        return _bad_input(_describe(exc, args))
    with setup.session() as session:
        try:
            # A mistyped name must not be planned as a queue manager whose library is lost.
            setup = connect.confirm_queue_manager(setup, session, settings.snapshots)
            target, tz = locate(session, setup.host.name, setup.qmgr, time_zone_rules=setup.host.time_zone_rules)
            request = _recovery_request(args, setup.host.name, setup.qmgr.name, tz)
        except ValueError as exc:
            return _bad_input(str(exc))
        try:
            clusters = clusters_of(setup.qmgr)
            inputs = gather(
                session,
                target,
                host=setup.host.name,
                tz=tz,
                catalog=setup.catalog,
                request=request,
                clusters=clusters,
                store=store,
                earlier=snapshots_of(settings.snapshots, setup.host.name, target.library),
            )
            plan = plan_recovery(inputs)
        except RecoveryRefused as exc:
            return _bad_input(str(exc))
        except MqJournalError as exc:
            print(f"mqjournal recover: {exc}", file=sys.stderr)
            return 1
        print(plan.model_dump_json(indent=2) if args.json else plan.markdown())
        if plan.gaps:
            return 3
        if not args.execute or not plan.steps:
            return 0
        executor = RecoveryExecutor(
            session,
            target,
            setup.host.name,
            tz,
            setup.catalog,
            args.run_id or _run_id("recover"),
            store,
            routes=DownloadRoutes(settings.data_folder),
            clusters=tuple(clusters),
        )
        return _execute_recovery(executor, plan, as_json=args.json)


def _setup(args: argparse.Namespace, *, new_catalog_hint: bool = False) -> Setup:
    """--fleet, --host, --qmgr and --catalog as a recovery's setup. The queue manager is checked against the fleet file
    before the catalog is opened, so a typo is answered at once with the names the file lists; one typed in another
    case than the file's only name of that spelling is taken as that one, and the command says so first. Raises
    ValueError."""
    from mqjournal.recovery import connect

    config, host, qm = connect.named(args.fleet, args.host, args.qmgr, listed_only=True)
    if qm.name != args.qmgr:
        print(
            f"{_prog}: --qmgr {args.qmgr}: using {qm.name}, the queue manager of that name the fleet file "
            f"{args.fleet} lists for {host.name} (library {qm.qmgr_library})",
            file=sys.stderr,
        )
    return connect.with_catalog(config, host, qm, args.catalog, _audit_path(args), new_catalog_hint=new_catalog_hint)


def _backup_store() -> BackupStore:
    """The backup store the settings name (MQJOURNAL_BACKUP_STORE, else the data folder's backups/), as the DAGs
    open it: a restore brings back from it the save files the host no longer has. Raises ValueError (StoreUnavailable)
    when its URL does not open."""
    from mqjournal.backupstore import BackupStore, StoreUnavailable
    from mqjournal.settings import Settings

    try:
        return BackupStore.from_settings(Settings.from_env())
    except StoreUnavailable as exc:
        raise ValueError(str(exc)) from None


def _recovery_request(args: argparse.Namespace, host: str, qmgr: str, tz: PartitionZone) -> Request:
    """The request the options make; --timestamp without an offset is the host's time. Raises ValueError."""
    from mqjournal.recovery.plan import Request

    return Request(
        host=host,
        qmgr=qmgr,
        kind=RecoveryKind(args.kind),
        needed_at=_host_time(args.timestamp, tz) if args.timestamp else None,
        object=args.object,
        object_type=args.object_type,
        threshold_kb=args.threshold_kb,
    )


def _execute_recovery(executor: RecoveryExecutor, plan: RecoveryPlan, *, as_json: bool) -> int:
    """Run an approved (--yes) plan; exit 3 when it has gaps or went stale, 1 when a step failed."""
    from mqjournal.errors import MqJournalError
    from mqjournal.recovery.execute import PlanHasGaps, PlanWentStale

    try:
        result = executor.execute(plan)
    except (PlanHasGaps, PlanWentStale) as exc:
        print(f"mqjournal recover: {exc}", file=sys.stderr)
        return 3
    except MqJournalError as exc:
        print(f"mqjournal recover: {exc}", file=sys.stderr)
        return 1
    print(result.model_dump_json(indent=2) if as_json else result.markdown())
    return 0


def _save_library(args: argparse.Namespace) -> int:
    """SAVLIB of a queue manager library with the queue manager ended, verified, recorded in the catalog and copied
    into the backup store: exit 0, or 3 when the save stands on the host but its copy into the store failed."""
    from mqjournal.errors import MqJournalError
    from mqjournal.ibmi.downloadroutes import DownloadRoutes
    from mqjournal.names import save_library_for
    from mqjournal.recovery import connect
    from mqjournal.recovery.gather import locate
    from mqjournal.recovery.library_save import save_library
    from mqjournal.settings import Settings
    from mqjournal.timefmt import local_time

    try:
        setup = _setup(args, new_catalog_hint=True)
        # Checked again against the library found on the host, before anything is sent.
        library = save_library_for(args.save_library, setup.qmgr.qmgr_library)
        store = _backup_store()
    except ValueError as exc:
        return _bad_input(_describe(exc, args))
    with setup.session() as session:
        try:
            setup = connect.confirm_queue_manager(setup, session, Settings.from_env().snapshots)
            library = save_library_for(args.save_library, setup.qmgr.qmgr_library)
        except ValueError as exc:
            return _bad_input(str(exc))
        try:
            target, tz = locate(session, setup.host.name, setup.qmgr, time_zone_rules=setup.host.time_zone_rules)
            result = save_library(
                session,
                target,
                host=setup.host.name,
                tz=tz,
                catalog=setup.catalog,
                save_library=library,
                run_id=args.run_id or _run_id("savlib"),
                store=store,
                # How `mqjournal doctor` found this host downloads: the same record the DAGs' copy step reads.
                routes=DownloadRoutes(Settings.from_env().data_folder),
            )
        except MqJournalError as exc:
            print(f"mqjournal save-library: {exc}", file=sys.stderr)
            return 1
    r = result.record
    print(
        f"{r.host} {r.qmgr} library {r.qmgr_library} saved in {r.save_file_path} at "
        f"{local_time(tz.at(r.saved_at))}; "
        f"attached {r.attached_receiver}, oldest needed {r.oldest_needed_receiver or '(asterisks)'}; "
        f"{len(result.receivers)} detached receiver save(s) recorded; {result.restart}"
    )
    if result.stored is None:
        # The save stands on the partition it saves: no backup against losing that partition or its ASP.
        print(f"mqjournal save-library: NOT COPIED: {result.not_copied}", file=sys.stderr)
        return 3
    print(
        f"copied into the backup store {result.stored.store_url} as {result.stored.key} "
        f"({result.stored.size_bytes} bytes, SHA-256 {result.stored.sha256})"
    )
    return 0


def _doctor(args: argparse.Namespace) -> int:
    """Read-only preflight of every host (or one): exit 0 when all are ready, 3 when one is not."""
    from mqjournal.collection import fleet_connector
    from mqjournal.doctor import render, run_doctor
    from mqjournal.fleet import HostConfig, load_fleet
    from mqjournal.ibmi.audit import AuditLog
    from mqjournal.ibmi.downloadroutes import DownloadRoutes
    from mqjournal.linuxfleet import LinuxHostConfig
    from mqjournal.names import object_name
    from mqjournal.policy import load_policy
    from mqjournal.settings import Settings

    object_name(args.save_library, what="save library")  # InvalidName before any host is reached
    config = load_fleet(args.fleet)
    names = [h.name for h in config.hosts] + [h.name for h in config.linux_hosts]
    if args.host and args.host not in names:
        return _bad_input(
            f"host {args.host!r} is not in the fleet file {args.fleet} ({', '.join(names) or 'no hosts'})"
        )
    selected = [h for h in config.hosts if not args.host or h.name == args.host]
    linux = [h for h in config.linux_hosts if not args.host or h.name == args.host]
    if args.capture:
        if args.host and linux:
            return _bad_input(f"--capture reads partitions only: {args.host} is a Linux host")
        return _doctor_capture(args, config, selected)
    chosen: list[HostConfig | LinuxHostConfig] = [*selected, *linux]
    reports = run_doctor(
        config,
        {h.name: fleet_connector(config, h) for h in chosen},
        hosts=[h.name for h in chosen],
        audit=AuditLog(_audit_path(args)),
        save_library=args.save_library,
        policy=load_policy(args.policy),
        routes=DownloadRoutes(Settings.from_env().data_folder),
    )
    print(render(reports))
    return 0 if all(r.ready for r in reports) else 3


def _doctor_capture(args: argparse.Namespace, config, selected) -> int:
    """Read every host, show the files it would write, and write them only with --yes (or a yes at the terminal)."""
    from mqjournal.capture import capture_fleet, write
    from mqjournal.collection import fleet_connector
    from mqjournal.ibmi.audit import AuditLog

    directory: Path = args.capture
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        return _bad_input(f"{directory} exists and is not an empty folder: give a new folder for the capture")
    folder = capture_fleet(
        config,
        {h.name: fleet_connector(config, h) for h in selected},
        hosts=[h.name for h in selected],
        audit=AuditLog(_audit_path(args)),
        save_library=args.save_library,
    )
    print(f"mqjournal doctor --capture: {len(folder.files)} files for {directory} (names replaced by placeholders):")
    for path in folder.paths():
        print(f"  {path}")
    if not args.yes:
        if not sys.stdin.isatty():
            return _bad_input("nothing written: look at the files above, then add --yes to write them")
        if input(f"write these {len(folder.files)} files? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing written")
            return 0
    write(folder, directory)
    print(f"written to {directory}: send the folder back as it is; nothing in it is secret")
    return 0


def _catalog_rebuild(args: argparse.Namespace) -> int:
    """Record every verified object of a backup store (as a claim), and the receiver saves it lists, in the catalog:
    exit 0 when every sidecar read and every object verified, 3 when some did not (named, and not recorded)."""
    import os

    from mqjournal.backupstore import BackupStore, StoreUnavailable, rebuild_catalog
    from mqjournal.catalog import Catalog, display_url
    from mqjournal.settings import CATALOG_URL_ENV

    url = args.catalog or os.environ.get(CATALOG_URL_ENV)
    if not url:
        return _bad_input(f"give the catalog to rebuild with --catalog URL (or {CATALOG_URL_ENV})")
    if "://" not in args.from_store and Path(args.from_store).is_file():
        return _bad_input(
            f"the backup store {args.from_store} is a file; give the folder (or URL) the save files were copied into"
        )
    try:
        store = BackupStore(args.from_store, conn_id=args.conn_id)
        if not store.exists():
            return _bad_input(
                f"the backup store {display_url(args.from_store)} does not exist or cannot be read; give the URL (or "
                "folder) the save files were copied into"
            )
    except StoreUnavailable as exc:
        return _bad_input(str(exc))
    summary = rebuild_catalog(store, Catalog(url))
    print(summary.text())
    return 0 if summary.clean else 3


def _existing_store(args: argparse.Namespace, settings: Settings) -> BackupStore | str:
    """The backup store --store (with --conn-id) names, else the settings'; or why it cannot be used."""
    from mqjournal.backupstore import BackupStore, StoreUnavailable
    from mqjournal.catalog import display_url

    location = args.store or settings.backup_store
    try:
        store = BackupStore(location, conn_id=args.conn_id if args.store else settings.backup_store_conn_id)
    except StoreUnavailable as exc:
        return str(exc)
    if not store.exists():
        return f"the backup store {display_url(str(location))} does not exist or cannot be read"
    return store


def _store_scrub(args: argparse.Namespace) -> int:
    """Read again the copies of a backup store that are due, and record the outcome: exit 0 when every copy read
    matched, 3 when some did not (named: they no longer count as backups), 2 bad input."""
    from mqjournal.catalog import Catalog
    from mqjournal.scrub import scrub
    from mqjournal.settings import Settings

    settings = Settings.from_env()
    store = _existing_store(args, settings)
    if isinstance(store, str):
        return _bad_input(store)
    every = timedelta(days=args.every_days) if args.every_days is not None else settings.scrub.every
    max_bytes = int(args.max_gib * 1024**3) if args.max_gib is not None else settings.scrub.max_bytes
    result = scrub(store, Catalog(args.catalog or settings.catalog_url), every=every, max_bytes=max_bytes)
    print(result.model_dump_json(indent=2) if args.json else result.text())
    return 0 if result.clean else 3


def _store_drill(args: argparse.Namespace) -> int:
    """Print the restore drill's sample; with --execute --yes, drill it: exit 0 when nothing is due, only the sample
    was printed, or every copy passed; 3 when a copy failed, could not be drilled, or left its scratch save file."""
    from pydantic import ValidationError

    from mqjournal.catalog import Catalog
    from mqjournal.drill import run as drill_run
    from mqjournal.drill.run import HostNotInFleet
    from mqjournal.drill.sampling import Rule
    from mqjournal.fleet import load_fleet
    from mqjournal.recovery.connect import existing_catalog, fleet_session
    from mqjournal.settings import DrillSettings, Settings

    if args.execute and not args.yes:
        return _bad_input("--execute writes scratch save files on the partitions: confirm it with --yes")
    settings = Settings.from_env()
    overrides = {"copies_per_run": args.copies, "max_gib_per_run": args.max_gib, "library": args.library}
    try:
        config = load_fleet(args.fleet)
        drill = DrillSettings(**(settings.drill.model_dump() | {k: v for k, v in overrides.items() if v is not None}))
    except ValidationError as exc:
        return _bad_input(_describe(exc, args))
    except OSError as exc:
        return _bad_input(f"cannot read the fleet file {args.fleet}: {exc.strerror}")
    store = _existing_store(args, settings)
    if isinstance(store, str):
        return _bad_input(store)
    try:
        catalog = Catalog(existing_catalog(args.catalog or settings.catalog_url))
    except ValueError as exc:  # CatalogMissing too: an empty catalog would drill nothing and say so wrongly
        return _bad_input(str(exc))
    rule = Rule(copies_per_run=drill.copies_per_run, every=drill.every, max_bytes_per_run=drill.max_bytes)
    sample = drill_run.sample(catalog, store.url, rule)
    chosen = [c.key for c in sample.chosen]
    if not args.execute or not chosen:
        if args.json:
            print(json.dumps({"sample": [dataclasses.asdict(c) for c in sample.chosen], "drilled": []}, default=str))
        else:
            print(drill_run.proposal_text(sample, store.url, drill.library), end="")
            if chosen:
                print("Nothing was drilled: add --execute --yes to drill these copies.")
        return 0
    audit = _audit_path(args)

    def session_for(host: str) -> IbmiSession:
        try:
            return fleet_session(config, config.host(host), audit)
        except KeyError:
            raise HostNotInFleet(
                f"host {host}",
                f"the catalog has copies of its saves, but the fleet file {args.fleet} does not name it",
                "add the host to the fleet file (or give the fleet file that names it) and drill again",
            ) from None

    results = drill_run.drill_keys(
        catalog, store, chosen, run_id=args.run_id or _run_id("drill"), library=drill.library, session_for=session_for
    )
    bad = [r for r in results if r.outcome != "passed" or r.scratch_left]
    if args.json:
        drilled = [dataclasses.asdict(r) for r in results]
        print(json.dumps({"sample": [dataclasses.asdict(c) for c in sample.chosen], "drilled": drilled}, default=str))
    else:
        passed = sum(r.outcome == "passed" for r in results)
        print(f"{len(results)} cop{'y' if len(results) == 1 else 'ies'} drilled, {passed} passed")
        for r in results:
            print(f"- {r.line()}")
    return 3 if bad else 0


def _bad_input(message: str) -> int:
    print(f"{_prog}: {message}", file=sys.stderr)
    return 2


_prog = "mqjournal"
"""`mqjournal <command>`, as every message of the command starts (set by main)."""


def _describe(exc: BaseException, args: argparse.Namespace) -> str:
    """A ValueError as an admin should read it: a pydantic error as the file (or option) and fields at fault."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError):
        return str(exc)
    what = {
        "FleetConfig": f"the fleet file {getattr(args, 'fleet', None)}",
        "Policy": f"the policy file {getattr(args, 'policy', None)}",
        "QueueManagerConfig": f"--qmgr {getattr(args, 'qmgr', '')!r}",
    }.get(exc.title, exc.title)
    errors = exc.errors(include_url=False)
    lines = [f"{'.'.join(map(str, e['loc'])) or '(the whole file)'}: {e['msg']}" for e in errors[:10]]
    if len(errors) > 10:
        lines.append(f"... and {len(errors) - 10} more")
    # One line, as every other refusal: a log or a terminal shows it whole, and a wrapper script reads it as one.
    return f"{what} is not valid: {'; '.join(lines)}; fix it and run the command again"


def _user_error(exc: BaseException, args: argparse.Namespace) -> tuple[str, int] | None:
    """(message, exit status) for an error the user can fix or must know about; None for a bug (a traceback)."""
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    from mqjournal.errors import InvalidName, MqJournalError
    from mqjournal.yamlfile import NotValidYaml

    if isinstance(exc, (InvalidName, NotValidYaml)):
        return str(exc), 2
    if isinstance(exc, ArgumentError):  # NoSuchModuleError too: an unknown dialect
        return (
            f"the catalog URL {getattr(args, 'catalog', None) or '(from MQJOURNAL_CATALOG_URL)'} is not usable "
            f"({exc}); give an SQLAlchemy URL such as sqlite:////var/lib/mqjournal/catalog.db"
        ), 2
    if isinstance(exc, SQLAlchemyError):
        return f"the catalog database failed: {' '.join(str(exc).split())[:500]}; check it is reachable and writable", 1
    if isinstance(exc, MqJournalError):  # the host, the transport, the catalog: named, with what to do
        return str(exc), 1
    if isinstance(exc, (FileExistsError, NotADirectoryError)) and exc.filename is not None:
        return f"cannot use {exc.filename}: it (or a folder above it) is a file, not a folder; give a folder", 2
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"cannot use {exc.filename}: {exc.strerror}; check the path and its permissions", 2
    if isinstance(exc, ValueError):  # validation: a fleet or policy file, a name, an option's value
        return _describe(exc, args), 2
    if isinstance(exc, OSError):
        return f"{exc}", 1
    return None


def _run_id(prefix: str) -> str:
    return datetime.now(UTC).strftime(f"{prefix}_%Y%m%dT%H%M%SZ")


def _host_time(text: str, tz: PartitionZone) -> datetime:
    """An ISO time as AMQ7432 gives it: without an offset it is the partition's local time, in the offset then in
    force."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--timestamp {text!r} is not an ISO 8601 date and time (e.g. 2026-11-02T10:15:00)") from None
    return moment if moment.tzinfo else tz.aware(moment)


def _run_id_arg(text: str) -> str:
    """--run-id: it names folders, files and catalog records, so no path of its own."""
    if not text.strip() or any(c in text for c in "/\\") or ".." in text or text != text.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot be a run id: give a name without '/', '\\' or '..' (e.g. manual_2026-11-22)"
        )
    return text


def _aware(text: str) -> datetime:
    """--as-of: an ISO 8601 time, UTC unless it gives an offset."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 date and time (e.g. 2026-11-22T05:00:00+01:00)"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _queue_manager_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
    parser.add_argument("--host", required=True, help="the host's name in the fleet file")
    parser.add_argument(
        "--qmgr",
        required=True,
        help="the queue manager: one the fleet file lists for the host (in any case, when only one name matches), "
        "or, for a host it lists none for, one the host has",
    )
    parser.add_argument(
        "--catalog",
        help="catalog database URL or SQLite file (default: $MQJOURNAL_CATALOG_URL, else the data folder's catalog.db)",
    )
    _audit_option(parser)


def _audit_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--audit",
        type=Path,
        help="audit log every command sent is appended to (default: audit.jsonl in the data folder, "
        "$MQJOURNAL_DATA_DIR or $AIRFLOW_HOME/mqjournal, the one the DAGs write)",
    )


def _audit_path(args: argparse.Namespace) -> Path:
    """--audit, else the data folder's audit.jsonl: one audit log for the DAGs and the command line, never one left
    in whatever folder the command was run from."""
    from mqjournal.settings import Settings

    return args.audit or Settings.from_env().audit_log


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mqjournal",
        description="Backup and recovery planning for the journal receivers of IBM MQ queue managers on IBM i.",
    )
    parser.add_argument("--version", action="version", version=f"mqjournal {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_sim(commands)
    _add_collect(commands)
    _add_plan(commands)
    _add_spark_connect(commands)
    _add_demo(commands)
    _add_recover(commands)
    _add_save_library(commands)
    _add_doctor(commands)
    _add_catalog(commands)
    _add_store(commands)
    _add_schema(commands)
    return parser


def _add_sim(commands: _Commands) -> None:
    sim = commands.add_parser(
        "sim",
        help="serve a simulated fleet of IBM i partitions over SSH",
        description="Serve the simulated IBM i partitions of a fleet file over SSH on 127.0.0.1 until interrupted. "
        "State persists in the fleet's state folder, so a restarted simulator is the same fleet.",
    )
    sim.add_argument("--fleet", type=Path, help="fleet file (YAML or JSON); required")
    sim.add_argument("--state", type=Path, help="state folder (default: the fleet file's state_dir)")
    sim.add_argument(
        "--listen",
        default="127.0.0.1",
        help="address the SSH listeners bind (default 127.0.0.1; 0.0.0.0 in a container other containers reach)",
    )
    sim.add_argument(
        "--frozen-clock", action="store_true", help="do not let simulated time follow the wall clock while serving"
    )
    sim.set_defaults(run=_sim)
    drills = sim.add_subparsers(
        dest="drill",
        metavar="DRILL",
        title="on-call drills",
        description="Stage trouble on a simulated partition, to rehearse recovery from the UI: on the running "
        "simulator that serves the state folder (mqjournal sim, the demo), or on its saved state when none does.",
    )
    for name, help_text, extra in (
        ("power-off", "the queue manager ends abnormally: its next STRMQM runs a startup recovery pass", None),
        (
            "delete-receiver",
            "another job deletes receivers outside mqjournal (DLTJRNRCV DLTOPT(*IGNINQMSG)), oldest first, through "
            "RECEIVER: a recovery pass that needs them ends with AMQ7432",
            ("receiver", "the newest receiver to delete, e.g. AMQA000024"),
        ),
        (
            "damage-object",
            "an MQ object is damaged (AMQ7472): AMQ7462 stops moving until RCRMQMOBJ (a media recovery)",
            ("object", "the MQ object, e.g. APP.REQUEST.QUEUE"),
        ),
        ("open-unit-of-work", "an application opens a unit of work and never ends it: AMQ7460 stops moving", None),
    ):
        drill = drills.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        drill.add_argument("host", help="the host, as named in the fleet file")
        drill.add_argument("qmgr", help="the queue manager (any case)")
        if extra is not None:
            drill.add_argument(extra[0], help=extra[1])
        drill.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
        drill.add_argument("--state", type=Path, help="state folder (default: the fleet file's state_dir)")
        drill.set_defaults(run=_sim_drill, drill=name)


def _add_spark_connect(commands: _Commands) -> None:
    server = commands.add_parser(
        "spark-connect",
        help="run a standing Spark Connect server for the plan job (pyspark's own Spark)",
        description="Run Spark's Connect server from this environment's pyspark, in the foreground, for the plan "
        "(mqjournal plan --spark-connect, or the DAG's MQJOURNAL_SPARK_CONNECT_CONN_ID): each plan is then a session "
        "on a warm JVM instead of a spark-submit. The server reads and writes the data folder itself: run it where "
        "the data folder is at the same path as on the workers. It runs whatever a client sends: listen on loopback, "
        "or on a network only the workers reach.",
    )
    server.add_argument(
        "--listen", default="127.0.0.1:15002", metavar="ADDRESS:PORT", help="default 127.0.0.1:15002 (Spark's port)"
    )
    server.add_argument("--master", default="local[*]", help="the server's Spark master (default local[*])")
    server.set_defaults(run=_spark_connect)


def _add_collect(commands: _Commands) -> None:
    collect = commands.add_parser(
        "collect",
        help="force checkpoints and collect journal state from IBM i over SSH",
        description="For every queue manager of the fleet: RCDMQMIMG, then AMQJRNINF, the receiver chain and the "
        "recovery messages, written as mqjournal.snapshot/v1 records under OUT/run_id=<id>/. Every command sent "
        "is appended to the data folder's audit log, with every other command's and the DAGs' (see --audit).",
    )
    collect.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
    collect.add_argument("--out", type=Path, required=True, help="output folder")
    collect.add_argument("--hosts", nargs="+", metavar="HOST", help="only these hosts of the fleet")
    collect.add_argument("--run-id", type=_run_id_arg, help="default: collect_<UTC time>")
    collect.add_argument(
        "--change-receiver", action="store_true", help="attach a new receiver first (CHGJRN JRNRCV(*GEN))"
    )
    _audit_option(collect)
    collect.set_defaults(run=_collect)


def _add_plan(commands: _Commands) -> None:
    plan = commands.add_parser(
        "plan",
        help="decide per receiver: keep, save or delete, and flag trouble (a Spark job)",
        description="Run the plan job on snapshots with spark-submit (master from MQJOURNAL_SPARK_MASTER, "
        "default local[*]), or on a standing Spark Connect server (--spark-connect). Writes Parquet datasets "
        "OUT/receivers and OUT/queue_managers and OUT/summary.json, and with --linux-snapshots OUT/linux_extents "
        "and OUT/linux_queue_managers. The rules are in docs/planning-rules.md (IBM i) and docs/linux-interfaces.md "
        "(Linux).",
    )
    plan.add_argument("--snapshots", type=Path, help="IBM i snapshot file or folder (JSON Lines)")
    plan.add_argument("--history", type=Path, help="earlier snapshots (file or folder), for the stuck alerts")
    plan.add_argument(
        "--linux-snapshots",
        type=Path,
        metavar="PATH",
        help="Linux queue managers' snapshots (mqjournal.linux-snapshot/v1), file or folder (JSON Lines); the newest "
        "of each queue manager is planned, the earlier ones give the stuck alerts",
    )
    plan.add_argument("--policy", type=Path, help="policy file (YAML or JSON); default: the documented defaults")
    plan.add_argument("--as-of", type=_aware, help="planning time, ISO 8601 (default: now)")
    plan.add_argument("--out", type=Path, required=True, help="output folder")
    plan.add_argument(
        "--spark-connect",
        metavar="URL",
        default=os.environ.get("MQJOURNAL_SPARK_CONNECT"),
        help="plan on this Spark Connect server (sc://HOST:PORT; default: MQJOURNAL_SPARK_CONNECT, else spark-submit);"
        " it must see the snapshots and the output folder at the same paths",
    )
    plan.set_defaults(run=_plan)


def _add_demo(commands: _Commands) -> None:
    demo = commands.add_parser(
        "demo",
        help="run the main job end to end on a simulated fleet, in a local Airflow",
        description="Set up a local Airflow (SQLite, Spark local[*]) in HOME, serve the simulated fleet over SSH, "
        "import its Airflow connections, start `airflow standalone`, trigger mq_journal_maintenance and follow it "
        "to the end. It shows where to approve the deletes in the UI, or answers the gate itself with --approve / "
        "--reject. Airflow and the simulator stop at the end (or on Ctrl-C) unless --keep-running.",
    )
    demo.add_argument("--fleet", type=Path, help="fleet file (default: docker/fleet.example.yaml of the repository)")
    answer = demo.add_mutually_exclusive_group()
    answer.add_argument("--approve", action="store_true", help="approve the deletes through the REST API (unattended)")
    answer.add_argument("--reject", action="store_true", help="reject the deletes through the REST API (unattended)")
    demo.add_argument(
        "--keep-running", action="store_true", help="after the run, keep Airflow and the simulator up until Ctrl-C"
    )
    demo.add_argument("--port", type=int, default=8080, help="Airflow API server and UI port (default 8080)")
    demo.add_argument(
        "--spark-connect",
        metavar="URL",
        default=os.environ.get("MQJOURNAL_SPARK_CONNECT"),
        help="plan on this Spark Connect server (sc://HOST:PORT, e.g. `mqjournal spark-connect`'s; default: "
        "MQJOURNAL_SPARK_CONNECT, else a spark-submit per run)",
    )
    demo.add_argument("--home", type=Path, help="AIRFLOW_HOME for the demo (default: .airflow of the repository)")
    demo.add_argument(
        "--timeout", type=float, default=60, metavar="MINUTES", help="give up on the run after this long (default 60)"
    )
    demo.set_defaults(run=_demo)


def _add_recover(commands: _Commands) -> None:
    recover = commands.add_parser(
        "recover",
        help="plan (and on request run) a recovery of one queue manager: restore, naming repair, backup expiry",
        description="Reads the live host (without a checkpoint) and the catalog, and prints the recovery plan. "
        "Exit status: 0 plan printed (or run), 2 bad input or a request that cannot be planned, 3 the plan has "
        "gaps (or went stale before it ran), 1 a failure while reading or running.",
    )
    mode = recover.add_mutually_exclusive_group(required=True)
    mode.add_argument("--plan-only", action="store_true", help="print the plan and change nothing")
    mode.add_argument(
        "--execute", action="store_true", help="run the plan after re-checking it on the host (needs --yes)"
    )
    recover.add_argument("--yes", action="store_true", help="confirm --execute")
    _queue_manager_options(recover)
    recover.add_argument(
        "--kind", required=True, choices=[kind.value for kind in RecoveryKind], help=RecoveryKind.described()
    )
    recover.add_argument(
        "--timestamp",
        help="startup: the entry time AMQ7432 reports, ISO 8601 (host time unless an "
        "offset is given; default: the time in the latest AMQ7432's replacement data)",
    )
    recover.add_argument("--object", help="media: the damaged MQ object (default: the latest AMQ7472)")
    recover.add_argument("--object-type", default="*ALL", help="media: RCRMQMOBJ OBJTYPE, e.g. *LCLQ (default *ALL)")
    recover.add_argument("--threshold-kb", type=int, help="naming: the new receiver's threshold")
    recover.add_argument("--json", action="store_true", help="print the plan (and result) as JSON")
    recover.add_argument(
        "--run-id", type=_run_id_arg, help="the run id recorded in the catalog (default: recover_<UTC time>)"
    )
    recover.set_defaults(run=_recover)


def _add_save_library(commands: _Commands) -> None:
    savlib = commands.add_parser(
        "save-library",
        help="save a queue manager (SAVLIB of its library and SAV of its IFS directory, queue manager ended) and "
        "record it for library recoveries",
        description="RCDMQMIMG, ENDMQM, CRTSAVF, SAVLIB, CRTSAVF, SAV of the queue manager's IFS directory "
        "(/QIBM/UserData/mqm/qmgrs/<name>: MQ's object definitions and the messages they hold), verify, STRMQM "
        "(always, even after a failed save), then record the library save, its IFS part and its detached receivers "
        "in the catalog, and copy both save files into the backup store ($MQJOURNAL_BACKUP_STORE, else the data "
        "folder's backups/) and record the copies. Exit status: 0 saved "
        "and copied, 3 saved but NOT copied into the store (the save is only on the partition it saves: copy it "
        "before relying on it), 2 bad input, 1 the save failed.",
    )
    _queue_manager_options(savlib)
    savlib.add_argument("--save-library", required=True, help="the library to create the save file in")
    savlib.add_argument("--run-id", type=_run_id_arg, help="names the save file (default: savlib_<UTC time>)")
    savlib.set_defaults(run=_save_library)


def _add_doctor(commands: _Commands) -> None:
    doctor = commands.add_parser(
        "doctor",
        help="check, read only, that each host is ready: SSH, SQL, release, authorities, MQ, save library, log",
        description="Connects to each host of the fleet (or --host) and only reads: SSH and the pinned host key, "
        "the SQL runner, the clock, the IBM i release and the QSYS2 services mqjournal uses, the user profile and "
        "the authorities each step needs (CHKOBJ), MQ and each queue manager's journal, the save library, ASP "
        "usage. On a Linux or AIX host: group mqm, a SHA-256 program (sha256sum; AIX: openssl), dspmq from mq_bin, "
        "each queue manager running, its qm.ini "
        "(LogType, LogManagement), DISPLAY QMSTATUS, the log path, media images, the log file system's room. On a "
        "Windows host first: cmd.exe as the SSH shell (ver), no AutoRun and no DelayedExpansion (reg query), MQ "
        "authority by SID (whoami), certutil; then the same MQ checks. "
        "Prints a table per host with how to fix what failed. Exit status: 0 every host ready, 3 a host is not "
        "ready, 2 bad input.",
    )
    doctor.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON)")
    doctor.add_argument("--host", help="only this host of the fleet")
    doctor.add_argument("--save-library", default="QGPL", help="the library save files go in (default QGPL)")
    doctor.add_argument("--policy", type=Path, help="policy file (its clock_skew_seconds); default: the defaults")
    doctor.add_argument(
        "--capture",
        type=Path,
        metavar="DIR",
        help="instead of the checks, write each host's answers to every read-only statement mqjournal sends into "
        "DIR (a new folder), in the format of tests/conformance/, names replaced by placeholders; lists the files "
        "first",
    )
    doctor.add_argument("--yes", action="store_true", help="with --capture: write the files without asking")
    _audit_option(doctor)
    doctor.set_defaults(run=_doctor)


def _add_catalog(commands: _Commands) -> None:
    catalog = commands.add_parser(
        "catalog",
        help="maintain the backup catalog: rebuild it from a backup store",
        description="Work on the backup catalog itself rather than on a host.",
    )
    actions = catalog.add_subparsers(dest="action", required=True, metavar="ACTION")
    rebuild = actions.add_parser(
        "rebuild",
        help="record every verified object of a backup store, and the receiver saves it holds, in the catalog",
        description="Reads every sidecar of the backup store, re-reads each object and compares its size and "
        "SHA-256, and records the ones that match (the stored object and the receiver saves of its object list) in "
        "the catalog, empty or not, as claims: restores may use them, but no receiver is deleted on their account "
        "until the save step has matched each with the host's save file (docs/backup-store.md); running it again "
        "records nothing twice. Objects that do not match, unreadable sidecars and objects without one are named "
        "and not recorded. Exit status: 0 everything recorded, 3 some "
        "objects or sidecars named as not recorded, 2 bad input (no such store, no catalog), 1 the catalog failed.",
    )
    rebuild.add_argument(
        "--from-store",
        required=True,
        metavar="URL",
        help="the backup store: a folder, a file:// URL or an fsspec URL such as s3://bucket/mqjournal",
    )
    rebuild.add_argument(
        "--conn-id", help="an Airflow connection with the store's credentials (needs Airflow on this machine)"
    )
    rebuild.add_argument("--catalog", help="catalog database URL (default: $MQJOURNAL_CATALOG_URL)")
    rebuild.set_defaults(run=_catalog_rebuild)


def _add_store(commands: _Commands) -> None:
    store = commands.add_parser(
        "store",
        help="maintain the backup store: scrub it",
        description="Work on the backup store's copies themselves rather than on a host.",
    )
    actions = store.add_subparsers(dest="action", required=True, metavar="ACTION")
    scrub = actions.add_parser(
        "scrub",
        help="read again the stored copies due (oldest verification first) and compare them with the catalog",
        description="Reads every copy of the backup store whose last verification is --every-days old or older, "
        "oldest first, up to --max-gib GB, compares its size and SHA-256 with the digest the catalog recorded, and "
        "records the time of the read; a copy that does not match is flagged in the catalog and no longer counts as "
        "a backup (docs/backup-store.md). Exit status: 0 every copy read matched, 3 some did not (named), 2 bad "
        "input, 1 the catalog failed.",
    )
    _store_and_catalog_options(scrub)
    scrub.add_argument(
        "--every-days",
        type=float,
        help="read copies last verified this many days ago or more (default: 30, $MQJOURNAL_SCRUB_EVERY_DAYS)",
    )
    scrub.add_argument(
        "--max-gib",
        type=float,
        help="GB to read at most, of 1024 MB as every size mqjournal writes (default: 4096, "
        "$MQJOURNAL_SCRUB_MAX_GIB_PER_RUN)",
    )
    scrub.add_argument("--json", action="store_true", help="print the result as JSON")
    scrub.set_defaults(run=_store_scrub)

    drill = actions.add_parser(
        "drill",
        help="restore drill: a sample of stored copies uploaded into scratch save files on their partitions",
        description="Samples the stored copies due for a restore drill (unproven ones first, then never drilled, "
        "then the least recently drilled) and prints what the drill would do, changing nothing. With --execute "
        "--yes it drills them, as the mq_journal_restore_drill DAG does: per copy, CRTSAVF of a scratch save file "
        "DRLnnnnnnn in the drill library on the copy's partition (reached as the fleet file says), the copy uploaded "
        "into it, IBM i's object list (QSYS2.SAVE_FILE_OBJECTS) compared with the catalog, and the scratch save "
        "file deleted; each outcome recorded in the catalog (docs/backup-store.md). Exit status: 0 nothing due, the "
        "sample printed, or every copy passed; 3 a copy failed, could not be drilled or left its scratch save file "
        "(named); 2 bad input; 1 the catalog failed.",
    )
    drill.add_argument("--fleet", type=Path, required=True, help="fleet file (YAML or JSON): how to reach each host")
    drill.add_argument(
        "--execute", action="store_true", help="drill the sample (needs --yes); without it, print it only"
    )
    drill.add_argument("--yes", action="store_true", help="confirm --execute")
    _store_and_catalog_options(drill)
    drill.add_argument(
        "--copies", type=int, help="copies to drill at most (default: 2, $MQJOURNAL_DRILL_COPIES_PER_RUN)"
    )
    drill.add_argument(
        "--max-gib",
        type=float,
        help="GB to upload at most, of 1024 MB as every size mqjournal writes (default: 8, "
        "$MQJOURNAL_DRILL_MAX_GIB_PER_RUN)",
    )
    drill.add_argument(
        "--library", help="the library of the scratch save files (default: QGPL, $MQJOURNAL_DRILL_LIBRARY)"
    )
    drill.add_argument(
        "--run-id", type=_run_id_arg, help="the run id recorded in the catalog (default: drill_<UTC time>)"
    )
    drill.add_argument("--json", action="store_true", help="print the sample (and the drills) as JSON")
    _audit_option(drill)
    drill.set_defaults(run=_store_drill)


def _store_and_catalog_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", metavar="URL", help="the backup store (default: the settings', $MQJOURNAL_BACKUP_STORE)"
    )
    parser.add_argument(
        "--conn-id", help="with --store: an Airflow connection with the store's credentials (needs Airflow here)"
    )
    parser.add_argument(
        "--catalog", help="catalog database URL (default: $MQJOURNAL_CATALOG_URL, else the data folder's catalog.db)"
    )


def _add_schema(commands: _Commands) -> None:
    schema = commands.add_parser("schema", help="print the JSON Schema of mqjournal.snapshot/v1")
    schema.add_argument(
        "--contract",
        choices=("snapshot", "linux-snapshot"),
        default="snapshot",
        help="mqjournal.snapshot/v1 (IBM i, the default) or mqjournal.linux-snapshot/v1 (Linux queue managers)",
    )
    schema.add_argument("--write", action="store_true", help="rewrite the schema file published in the package")
    schema.set_defaults(run=_schema)


class _LocalTimeFormatter(logging.Formatter):
    """Log lines stamped like every other time mqjournal prints: local time with its UTC offset (timefmt)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        from mqjournal.timefmt import local_time

        return local_time(datetime.fromtimestamp(record.created).astimezone())


def _changes_hosts(args: argparse.Namespace) -> bool:
    """Commands that change a partition: their log shows each CL command sent and what IBM i answered."""
    return (
        args.command == "save-library"
        or (args.command == "recover" and args.execute)
        or (args.command == "store" and args.action == "drill" and args.execute)
    )


def _set_up_logging(args: argparse.Namespace) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(_LocalTimeFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    level = logging.DEBUG if args.verbose else logging.INFO
    logging.basicConfig(level=level, handlers=[handler])
    # Set each time, both ways: main() may run more than once in a process (tests, a wrapper).
    # paramiko narrates every connection at INFO; only its warnings matter to an operator. The commands a read-only
    # command sends (the transport's INFO lines) are in the audit log; -v shows them.
    quiet = logging.WARNING if not args.verbose else level
    logging.getLogger("paramiko").setLevel(quiet)
    logging.getLogger("mqjournal.sim.server").setLevel(quiet)
    # Alembic names its plugins and each revision it runs at INFO, on every catalog opened; mqjournal.migrations says
    # in one line which revision a migrated catalog went to.
    logging.getLogger("alembic").setLevel(quiet)
    logging.getLogger("mqjournal.ibmi.transport").setLevel(level if _changes_hosts(args) else quiet)


def main(argv: list[str] | None = None) -> int:
    global _prog
    args = build_parser().parse_args(argv)
    _prog = f"mqjournal {args.command}"
    _set_up_logging(args)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        print(f"mqjournal {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        known = _user_error(exc, args)
        if known is None:
            raise  # a bug: the traceback is what a developer needs
        message, status = known
        logging.getLogger(__name__).debug("the error in full", exc_info=True)  # with -v
        print(f"mqjournal {args.command}: {message}", file=sys.stderr)
        return status


if __name__ == "__main__":
    raise SystemExit(main())
