"""Gather what a recovery planner needs: the live journal state (read only), the catalog, the save files on the host.

Nothing here changes the host. In particular no RCDMQMIMG: a recovery must not checkpoint a queue manager that is
broken, and RCDMQMIMG on one that will not start only fails (AMQ8146). A lost library or journal is told apart
from an unreadable one by asking QSYS2.JOURNAL_INFO: no row is "gone", a SQL error is an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.backups import save_file_contents
from mqjournal.ibmi.collector import Target, read_state
from mqjournal.ibmi.db2out import Db2Failure, Row, check_sql_runner, parse_results, value
from mqjournal.ibmi.discovery import survey
from mqjournal.ibmi.readings import PartitionZone, db2_time
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.names import journal_name
from mqjournal.recovery import restore
from mqjournal.recovery.fromstore import StoreView
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Request
from mqjournal.recovery.restore import Inputs, RecoveryRefused
from mqjournal.snapshot import Snapshot

log = logging.getLogger(__name__)

# QSYS2.USER_SPACE on a missing object or library: SQLSTATE 38501 (native -443), the CPF message's text.
_OBJECT_MISSING_STATE = "38501"
_RESTORES = (RecoveryKind.STARTUP, RecoveryKind.MEDIA, RecoveryKind.LIBRARY)
DEFAULT_SAVE_LIBRARY = "QGPL"  # where a save file brought back from the store goes when its own library is gone


class GatherFailed(MqJournalError):
    """The host could not be read well enough to plan a recovery; nothing was changed."""


@dataclass(frozen=True)
class HostProbe:
    """What a recovery asks first: the host's clock, and whether the journal and the library are there."""

    now: datetime
    tz: PartitionZone
    journal_exists: bool
    library_exists: bool  # judged by its AMQJRNINF user space, which every MQ queue manager library holds


def probe(session: IbmiSession, target: Target, tz: PartitionZone) -> HostProbe:
    """One round trip: the clock, the journal's row in JOURNAL_INFO, the library's AMQJRNINF. `tz`: the host's zone
    as discovered."""
    out = session.run(
        commands.sql(
            commands.host_clock(),
            commands.mq_journals([target.library]),
            commands.amqjrninf_binary(target.library),
            runner=session.sql_runner,
        )
    )
    check_sql_runner(session, out)
    results = parse_results(out.stdout)
    where = f"{target.qmgr} ({target.library}) on {session.host}"
    if len(results) != 3:
        raise GatherFailed(
            where,
            f"expected 3 SQL results, got {len(results)}: {out.stderr.strip() or out.stdout[-200:]}",
            "check that the db2 utility and the QSYS2 services are available to the user profile",
        )
    clock = _rows(results[0], "the partition clock", where)
    journals = _rows(results[1], "QSYS2.JOURNAL_INFO", where)
    jrninf = results[2]
    if isinstance(jrninf, Db2Failure) and jrninf.sqlstate != _OBJECT_MISSING_STATE:
        raise GatherFailed(
            where,
            f"reading {target.library}/AMQJRNINF failed with {jrninf.msg_id} (SQLSTATE "
            f"{jrninf.sqlstate}): {jrninf.text}",
            "check the user profile's authority to the library",
            msg_id=jrninf.msg_id,
        )
    tz = tz.again(clock[0], where)
    return HostProbe(
        now=db2_time(value(clock[0], "NOW"), tz),
        tz=tz,
        journal_exists=any(r["JOURNAL_NAME"] == target.journal for r in journals),
        library_exists=not isinstance(jrninf, Db2Failure),
    )


def _rows(result: list[Row] | Db2Failure, what: str, where: str) -> list[Row]:
    if isinstance(result, Db2Failure):
        raise GatherFailed(
            where,
            f"reading {what} failed with {result.msg_id} (SQLSTATE {result.sqlstate}): {result.text}",
            "check the SQL services and the user profile's authority",
            msg_id=result.msg_id,
        )
    return result


def save_files_on_host(session: IbmiSession, libraries: Iterable[str]) -> set[str]:
    """LIB/NAME of every save file in `libraries`, in one round trip. A library that is gone holds none."""
    return save_files_and_missing_libraries(session, libraries)[0]


def save_files_and_missing_libraries(session: IbmiSession, libraries: Iterable[str]) -> tuple[set[str], set[str]]:
    """(LIB/NAME of every save file in `libraries`, the libraries that are not on the host), in one round trip."""
    libraries = sorted(set(libraries))
    if not libraries:
        return set(), set()
    out = session.run(commands.sql(*(commands.save_files(lib) for lib in libraries), runner=session.sql_runner))
    check_sql_runner(session, out)
    results = parse_results(out.stdout)
    if len(results) != len(libraries):
        raise GatherFailed(
            f"save files in {', '.join(libraries)} on {session.host}",
            f"expected {len(libraries)} SQL results, got {len(results)}",
            "check that QSYS2.OBJECT_STATISTICS is available to the user profile",
        )
    found: set[str] = set()
    missing: set[str] = set()
    for library, result in zip(libraries, results, strict=True):  # one result per library, checked above
        if isinstance(result, Db2Failure):
            if result.sqlstate == _OBJECT_MISSING_STATE:
                missing.add(library)  # the save library itself is gone: so are its save files
                continue
            raise GatherFailed(
                f"save files in {library} on {session.host}",
                f"OBJECT_STATISTICS failed with {result.msg_id} (SQLSTATE {result.sqlstate}): {result.text}",
                "check the user profile's authority to the save library",
                msg_id=result.msg_id,
            )
        found |= {f"{library}/{row['OBJNAME']}" for row in result}
    return found, missing


def gather(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    tz: PartitionZone,
    catalog: Catalog,
    request: Request,
    clusters: Iterable = (),
    now: datetime | None = None,
    run_id: str = "recovery",
    store: BackupStore | None = None,
    save_library: str = DEFAULT_SAVE_LIBRARY,
    upload_targets: Mapping[str, str] | None = None,
    earlier: Iterable[Snapshot] = (),
) -> Inputs:
    """The planner's inputs, read now. `now` defaults to the host's clock (the plan's times are the host's).

    With a backup store, a restore may bring back save files the host no longer has: their copies in the store are
    listed from the catalog, and each copy the plan would upload is re-read and compared with its sidecar here, so
    the plan never uploads one that no longer matches (`save_library`: where a save file goes when its own library
    is not on the host). `upload_targets` are an approved plan's ({origin: target}), for the plan made again before
    it runs: what each target on the host lists is read, so an upload that went in whole is not made again and an
    interrupted one is."""
    if (request.host, request.qmgr) != (host, target.qmgr):
        raise GatherFailed(
            f"{request.qmgr} on {request.host}",
            f"the request does not match the target {target.qmgr} on {host}",
            "plan for the queue manager the request names",
        )
    found = probe(session, target, tz)
    snapshot = read_state(session, target, host=host, run_id=run_id, tz=tz) if found.journal_exists else None
    cataloged = catalog.receivers(host, target.library)
    library_saves = catalog.library_saves(host, target.library)
    libraries = {s.save_file_library for r in cataloged for s in r.saves} | {s.save_file_library for s in library_saves}
    from_store = store is not None and request.kind in _RESTORES
    if from_store:
        targets = dict(upload_targets or {})
        libraries |= {save_library} | {path.split("/")[0] for path in targets.values()}
    on_host, missing = save_files_and_missing_libraries(session, libraries)
    inputs = Inputs(
        request=request,
        qmgr_library=target.library,
        journal=target.journal,
        now=now or found.now,
        snapshot=snapshot,
        cataloged=cataloged,
        library_saves=library_saves,
        save_files_on_host=on_host,
        clusters=list(clusters),
        earlier=list(earlier),
    )
    if not from_store or store is None:
        return inputs
    inputs.store = StoreView(
        url=store.url,
        copies=_copies(catalog, store, host, target.qmgr),
        missing_libraries=frozenset(missing),
        save_library=save_library,
        known_save_files=frozenset(catalog.known_save_files(host)),
        targets=targets,
        target_contents=_target_contents(session, [t for t in targets.values() if t in on_host]),
    )
    return _read_what_the_plan_uploads(inputs, store)


def _copies(catalog: Catalog, store: BackupStore, host: str, qmgr: str) -> dict[str, tuple[StoredObject, ...]]:
    """The catalog's copies of each save file ("LIB/NAME") in this backup store, newest first (another store cannot
    be read from here)."""
    copies: dict[str, list[StoredObject]] = {}
    # Claimed copies too (a catalog rebuilt from the store has only those): a restore re-reads each copy it uploads
    # against its sidecar, and reads the save file's object list on the host before RSTOBJ.
    for stored in reversed(catalog.stored_objects(host, qmgr, unproven=True)):
        if stored.store_url == store.url:
            copies.setdefault(stored.save_file_path, []).append(stored)
    return {path: tuple(found) for path, found in copies.items()}


def _target_contents(session: IbmiSession, targets: list[str]) -> dict[str, frozenset[tuple[str, str]] | None]:
    """What each upload target on the host lists (None: it cannot be read, as a save file an upload left
    incomplete cannot)."""
    if not targets:
        return {}
    return {path: content.receivers for path, content in save_file_contents(session, targets).items()}


def _read_what_the_plan_uploads(inputs: Inputs, store: BackupStore) -> Inputs:
    """Re-read, and compare with its sidecar, every stored copy the plan would upload, then plan again, until the
    plan uploads only copies that matched: one that differs is left out, and the planner falls back to another save
    of the same receivers, or names the gap. Ends: each round reads at least one copy not read before."""
    assert inputs.store is not None
    while True:
        try:
            plan = restore.plan_restore(inputs)
        except RecoveryRefused:
            return inputs  # the caller's plan says why
        unread = inputs.store.unread(plan)
        if not unread:
            return inputs
        reads = {key: store.verify(key).problem for key in sorted(unread)}
        for key, problem in reads.items():
            if problem is not None:
                log.warning(
                    "%s: the backup store's copy %s may not be restored from: %s", inputs.request.host, key, problem
                )
        inputs.store = inputs.store.with_reads(reads)


def locate(
    session: IbmiSession, host: str, qm_config, *, time_zone_rules: str | None = None
) -> tuple[Target, PartitionZone]:
    """The target of a queue manager of the fleet file, and the host's time zone, even if its journal is lost.

    Discovery finds the journal's message queue when the journal is there; when it is not (a lost library), the
    target is built from the fleet file's library and instance alone.
    """
    found = survey(session, host, [qm_config], time_zone_rules=time_zone_rules)
    for target in found.targets:
        if target.qmgr == qm_config.name:
            return target, found.tz
    return target_of(qm_config), found.tz


def target_of(qm_config) -> Target:
    """A target from the fleet file alone (QueueManagerConfig): name, library, instance."""
    instance = qm_config.instance
    return Target(
        qmgr=qm_config.name, library=qm_config.qmgr_library, journal=journal_name(instance), instance=instance
    )


def clusters_of(qm_config) -> list:
    """The clusters the fleet file puts the queue manager in (none when the fleet file does not say)."""
    return list(getattr(qm_config, "clusters", None) or [])
