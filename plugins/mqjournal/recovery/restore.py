"""Restore plans, as pure functions of (live snapshot, catalog, request): which receivers to bring back, from which
save, in which order, and what to run afterwards.

The rules (docs/recovery.md):
- A recovery pass needs the receiver holding its first entry and every receiver after it, readable and associated
  with the journal. What the host lacks is restored from its newest verified save whose save file still exists on
  the host or as a verified copy in the backup store (brought back first: `fromstore`), newest receiver first (the
  order IBM's MQ documentation recommends), then associated with the journal.
- startup: from the entry AMQ7432 reports, then STRMQM. media: from the AMQ7462 media recovery point, then
  RCRMQMOBJ of the object. library: the latest library save (without its journal and receivers), a receiver with
  the next free name of a new restore generation and a journal on it (the restore pitfall), the receivers from
  the library save's AMQJRNINF on, STRMQM, and the cluster refresh a point-in-time restore calls for.
- Anything needed that is neither on the host nor restorable is a named gap: the plan does not run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from mqjournal import timefmt
from mqjournal.catalog import CatalogedReceiver, LibrarySaveRecord, SaveRecord
from mqjournal.errors import MqJournalError
from mqjournal.names import ReceiverName, journal_instance, next_free_receiver_name, qmgr_directory
from mqjournal.recovery.fromstore import Resolved, Sources, StoreView
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, Gap, RecoveryPlan, Request, Step, offset_of, step
from mqjournal.recovery.site_media import NeededReceiver, site_media_restores
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot, UndecodableMessage, receivers_by_name

if TYPE_CHECKING:
    from mqjournal.fleet import ClusterConfig

READABLE = (ReceiverStatus.ATTACHED, ReceiverStatus.ONLINE, ReceiverStatus.SAVED, ReceiverStatus.PARTIAL)
CLUSTER_EXPIRY = timedelta(days=90)  # a queue manager away longer than this has left its clusters
DEFAULT_THRESHOLD_KB = 100_000  # MQ's documented default receiver threshold
# AMQ7432 and AMQ7460/7462 print the time to the second; AMQJRNINF to the millisecond.
SECOND = timedelta(seconds=1)
# AMQ7472 names the type as MQ prints it; RCRMQMOBJ wants its own OBJTYPE values.
RCRMQMOBJ_TYPES = {
    "LCLQ": "*LCLQ",
    "QLOCAL": "*LCLQ",
    "ALSQ": "*ALSQ",
    "QALIAS": "*ALSQ",
    "RMTQ": "*RMTQ",
    "QREMOTE": "*RMTQ",
    "MDLQ": "*MDLQ",
    "QMODEL": "*MDLQ",
    "CHL": "*CHL",
    "CHANNEL": "*CHL",
    "PRC": "*PRC",
    "PROCESS": "*PRC",
    "NMLIST": "*NMLIST",
    "NAMELIST": "*NMLIST",
    "TOPIC": "*TOPIC",
    "MQM": "*MQM",
    "QMGR": "*MQM",
    "AUTHINFO": "*AUTHINFO",
    "LSR": "*LSR",
    "LISTENER": "*LSR",
    "SVC": "*SVC",
    "SERVICE": "*SVC",
}


class RecoveryRefused(MqJournalError):
    """The request cannot be planned at all (as opposed to a plan with gaps, which shows what is missing)."""


@dataclass(frozen=True)
class Known:
    """One receiver incarnation, as the host and/or the catalog know it."""

    name: str
    library: str
    attached_at: datetime
    detached_at: datetime | None
    first_sequence: int | None
    last_sequence: int | None
    on_host: Receiver | None = None
    saves: tuple[SaveRecord, ...] = ()

    def label(self, offset: int | None) -> str:
        return f"{self.library}/{self.name} (attached {timefmt.local_time(self.attached_at, offset)})"


@dataclass
class Inputs:
    """Everything a restore plan is a function of, gathered by the caller (DAG task or CLI)."""

    request: Request
    qmgr_library: str
    journal: str
    now: datetime
    snapshot: Snapshot | None  # None when the library cannot be read (lost)
    cataloged: list[CatalogedReceiver]
    library_saves: list[LibrarySaveRecord] = field(default_factory=list)
    save_files_on_host: set[str] | None = None  # LIB/NAME; None when not checked
    store: StoreView | None = None  # the backup store, for save files the host no longer has; None: none given
    clusters: list[ClusterConfig] = field(default_factory=list)
    # The queue manager's snapshots from earlier maintenance runs: they show receivers deleted after the site's own
    # backup saved them (backup: site), which neither the host nor the catalog know any more.
    earlier: list[Snapshot] = field(default_factory=list)

    @property
    def offset(self) -> int | None:
        """The partition's UTC offset in minutes, for the times a plan shows: the catalog gives its times back in
        UTC, while an admin compares the plan with DSPJRN and QMQMMSG. The snapshot's collection time carries the
        partition's zone; without a snapshot (a lost library), `now` does, read from the host's clock by gather."""
        return offset_of(self.snapshot.collected_at if self.snapshot is not None else self.now)


# --- the receiver history ---------------------------------------------------------------------------------------


def history(
    snapshot: Snapshot | None,
    cataloged: Iterable[CatalogedReceiver],
    qmgr_library: str,
    seen_before: Iterable[Snapshot] = (),
) -> list[Known]:
    """Every receiver incarnation of the journal the host, the catalog or an earlier snapshot knows, in attach
    order (the live host first, then the catalog, then the earlier snapshots)."""
    known: dict[tuple[str, datetime], Known] = {}
    for old in seen_before:
        for r in old.receivers:
            if r.library == qmgr_library and r.attached_at is not None and r.detached_at is not None:
                known[(r.name, r.attached_at)] = Known(
                    r.name, r.library, r.attached_at, r.detached_at, r.first_sequence, r.last_sequence
                )
    for c in cataloged:
        known[(c.name, c.attached_at)] = Known(
            c.name, c.library, c.attached_at, c.detached_at, c.first_sequence, c.last_sequence, saves=c.saves
        )
    for r in snapshot.receivers if snapshot else []:
        if r.library != qmgr_library or r.attached_at is None:
            continue  # receivers never attached (made by hand) hold no entries
        earlier = known.get((r.name, r.attached_at))
        known[(r.name, r.attached_at)] = Known(
            r.name,
            r.library,
            r.attached_at,
            r.detached_at or (earlier.detached_at if earlier else None),
            r.first_sequence if r.first_sequence is not None else (earlier.first_sequence if earlier else None),
            r.last_sequence if r.last_sequence is not None else (earlier.last_sequence if earlier else None),
            on_host=r,
            saves=earlier.saves if earlier else (),
        )
    return sorted(known.values(), key=lambda k: (k.attached_at, k.first_sequence or 0))


def holder_index(chain: list[Known], at: datetime, precision: timedelta) -> int | None:
    """The first receiver that can hold an entry written at `at` (known to `precision`), or None if none can."""
    for i, k in enumerate(chain):
        if k.detached_at is None or k.detached_at >= at:
            return i if k.attached_at < at + precision else None
    return None


def _unknown_holder(chain: list[Known], at: datetime, offset: int | None) -> str:
    """Why no known receiver can hold an entry of `at`: older than all of them, or between two of them."""
    before = [k for k in chain if k.detached_at is not None and k.detached_at < at]
    if not before:
        oldest = chain[0].label(offset) if chain else "none"
        return f"it is older than every receiver the host or the catalog knows (oldest: {oldest})"
    after = chain[len(before)].label(offset) if len(before) < len(chain) else "the attached one"
    return (
        f"the receiver that held it, between {before[-1].label(offset)} and {after}, "
        "is neither on the host nor in the catalog"
    )


def _continuity_gaps(required: list[Known]) -> list[Gap]:
    gaps = []
    for a, b in pairwise(required):
        if a.last_sequence is not None and b.first_sequence is not None and b.first_sequence != a.last_sequence + 1:
            gaps.append(
                Gap(
                    obj=f"entries {a.last_sequence + 1}-{b.first_sequence - 1} between {a.name} and {b.name}",
                    problem="they were in a receiver that is neither on the host nor in the catalog",
                    action="find the save of the missing receiver (outside mqjournal's catalog) and record or restore "
                    "it by hand; without it the queue manager cannot be recovered past this point",
                )
            )
    return gaps


def _associated(r: Receiver, journal: str) -> bool:
    return r.journal == journal and r.status in READABLE


# --- choosing what to restore -----------------------------------------------------------------------------------


@dataclass
class _Restores:
    picks: list[tuple[Known, SaveRecord]] = field(default_factory=list)  # (receiver, the save to restore), oldest first
    gaps: list[Gap] = field(default_factory=list)
    associate: bool = False
    steps: list[Step] = field(default_factory=list)  # set by `_finish`: fetches from the store, then RSTOBJ
    notes: list[str] = field(default_factory=list)
    site_media: list[str] = field(default_factory=list)  # to restore from the site's backup media first


def _save_path(save: SaveRecord) -> str:
    return f"{save.save_file_library}/{save.save_file}"


def _sources(inputs: Inputs) -> Sources:
    return Sources(
        inputs.request.host,
        inputs.save_files_on_host,
        inputs.store,
        inputs.request.qmgr,
        inputs.qmgr_library,
        inputs.now.date(),
    )


def _restores(required: list[Known], inputs: Inputs, names_on_host: dict[str, Receiver]) -> _Restores:
    """Which save each needed receiver is restored from (its newest one that the host or the store still has)."""
    out = _Restores()
    sources = _sources(inputs)
    offset = inputs.offset
    only_site: list[Known] = []  # no save of it anywhere mqjournal looks: perhaps the site's backup has it
    for k in required:
        live = k.on_host
        if live is not None and live.status is not ReceiverStatus.FREED:
            if not _associated(live, inputs.journal):
                out.associate = True  # restored earlier but not yet in the journal's receiver directory
            continue
        other = names_on_host.get(k.name)
        if other is not None and live is None:
            out.gaps.append(
                Gap(
                    obj=f"{k.library}/{k.name}",
                    problem="the host has another receiver of that name ("
                    + (
                        f"attached {timefmt.local_time(other.attached_at, offset)}"
                        if other.attached_at
                        else "never attached"
                    )
                    + "), so the one "
                    f"attached {timefmt.local_time(k.attached_at, offset)} cannot be restored over it (CPF2112)",
                    action="save and delete the receiver on the host if it is not needed, then plan again",
                )
            )
            continue
        usable = [s for s in k.saves if sources.available(_save_path(s))]
        if not usable and not k.saves and inputs.earlier:
            only_site.append(k)
        elif not usable:
            out.gaps.append(_unrestorable(k, sources, offset))
        else:
            out.picks.append((k, usable[0]))
            out.notes += _bad_copies_passed_over(k, usable[0], sources, offset)
        out.associate = out.associate or bool(usable)
    found = site_media_restores([NeededReceiver(k.name, k.library, k.attached_at) for k in only_site], inputs.earlier)
    out.site_media = [r.note(offset) for r in found.restores]
    missing = {(n.library, n.name, n.attached_at) for n in found.not_found}
    out.gaps += [_unrestorable(k, sources, offset) for k in only_site if (k.library, k.name, k.attached_at) in missing]
    return out


def _bad_copies_passed_over(k: Known, picked: SaveRecord, sources: Sources, offset: int | None) -> list[str]:
    """A stored copy that no longer verifies is never restored from: said in the plan even when another save
    brings the receiver back, so the store's damage is seen."""
    if sources.store is None:
        return []
    bad = [problem for s in k.saves for problem in sources.store.problems(_save_path(s))]
    if not bad:
        return []
    return [f"{k.label(offset)}: restored from {_save_path(picked)}; not from {'; '.join(bad)}"]


def _finish(restores: _Restores, inputs: Inputs, library_save: LibrarySaveRecord | None = None) -> Resolved:
    """The save files the picks (and the library save) are read from, the steps bringing back from the store those
    the host no longer has, and the RSTOBJ steps, newest receiver first (as IBM's MQ documentation restores a
    series). The library save's own fetch steps are left for its RSTLIB (Resolved.fetch)."""
    needs: dict[str, set[tuple[str, str]]] = {}
    if library_save is not None:
        # SAVLIB always takes the attached receiver: listing it proves the save file is this library's save.
        needs[library_save.save_file_path] = {(library_save.qmgr_library, library_save.attached_receiver)}
        directory = library_save.directory_save_file_path
        if directory is not None and _sources(inputs).available(directory):  # else a gap says why
            # SAV of an IFS directory: SAVE_FILE_OBJECTS returns no IFS object, so nothing is listed to check; the
            # upload's own size check and the store copy's digest are what vouch for it (fromstore: never reused).
            needs[directory] = set()
    for k, save in restores.picks:
        needs.setdefault(_save_path(save), set()).add((k.library, k.name))
    resolved = _sources(inputs).resolve({origin: frozenset(objects) for origin, objects in needs.items()})
    newest_first = restores.picks[::-1]
    skip = {library_save.save_file_path, library_save.directory_save_file_path} if library_save is not None else set()
    restores.steps = resolved.steps(_save_path(save) for _, save in newest_first if _save_path(save) not in skip)
    for k, save in newest_first:
        path = resolved.path[_save_path(save)]
        library, name = path.split("/")
        restores.steps.append(
            step(
                Action.RESTORE_RECEIVER,
                f"needed by the recovery pass; saved {timefmt.local_time(save.saved_at, inputs.offset)} in "
                f"{_save_path(save)}" + ("" if path == _save_path(save) else f", brought back as {path}"),
                about=k.name,
                attached_at=k.attached_at,
                qmgr_library=k.library,
                receiver=k.name,
                save_library=library,
                save_file=name,
            )
        )
    restores.notes += resolved.notes
    return resolved


def _unrestorable(k: Known, sources: Sources, offset: int | None) -> Gap:
    """A needed receiver neither on the host nor in a save file the host or the backup store still has."""
    if k.saves:
        problem = sources.why_not(_save_path(s) for s in k.saves)
        action = (
            "bring the save file back from backup media (or restore from tape by hand), or give the backup store "
            "that holds a verified copy of it, then plan again"
        )
    else:
        problem = "it is not on the host and the catalog has no verified save of it"
        action = (
            "restore it by hand from a backup taken outside mqjournal, or accept the loss: a recovery "
            "pass that needs it fails with AMQ7432"
        )
    return Gap(obj=k.label(offset), problem=problem, action=action)


def _associate_step(inputs: Inputs, instance: str) -> Step:
    return step(
        Action.ASSOCIATE_RECEIVERS,
        "put the restored receivers back in the journal's receiver directory (WRKJRN option 9)",
        library=inputs.qmgr_library,
        journal=inputs.journal,
        instance=instance,
    )


# --- the three restore kinds ------------------------------------------------------------------------------------


def plan_restore(inputs: Inputs) -> RecoveryPlan:
    kind = inputs.request.kind
    if kind is RecoveryKind.STARTUP:
        return plan_startup(inputs)
    if kind is RecoveryKind.MEDIA:
        return plan_media(inputs)
    if kind is RecoveryKind.LIBRARY:
        return plan_library(inputs)
    raise RecoveryRefused(kind.value, "is not a restore", "use the naming or expiry planners")


def _needs_snapshot(inputs: Inputs) -> Snapshot:
    if inputs.snapshot is None:
        raise RecoveryRefused(
            f"{inputs.qmgr_library} on {inputs.request.host}",
            "the queue manager's journal could not be read",
            "if the library is lost, plan a library recovery instead",
        )
    return inputs.snapshot


def _from_point(
    inputs: Inputs, snapshot: Snapshot, at: datetime, what: str, precision: timedelta
) -> tuple[list[Known], list[Gap], _Restores]:
    chain = history(snapshot, inputs.cataloged, inputs.qmgr_library, inputs.earlier)
    start = holder_index(chain, at, precision)
    if start is None:
        gap = Gap(
            obj=f"the receiver holding {what} {timefmt.local_time(at, inputs.offset)}",
            problem=_unknown_holder(chain, at, inputs.offset),
            action="restore it by hand from a backup taken outside mqjournal, then plan again",
        )
        return [], [gap], _Restores()
    required = chain[start:]
    restores = _restores(required, inputs, receivers_by_name(snapshot, inputs.qmgr_library))
    _finish(restores, inputs)
    return required, _continuity_gaps(required) + restores.gaps, restores


def plan_startup(inputs: Inputs) -> RecoveryPlan:
    snapshot = _needs_snapshot(inputs)
    needed_at = inputs.request.needed_at or latest_amq7432(snapshot)
    if needed_at is None:
        raise RecoveryRefused(
            f"{inputs.request.qmgr} on {inputs.request.host}",
            amq7432_unread(snapshot),
            "give the date and time AMQ7432 reports (the timestamp parameter)",
        )
    instance = journal_instance(inputs.journal)
    required, gaps, restores = _from_point(inputs, snapshot, needed_at, "the entry of", SECOND)
    steps = list(restores.steps)
    if restores.associate:
        steps.append(_associate_step(inputs, instance))
    steps.append(
        step(
            Action.START_QMGR, "the startup recovery pass replays from the restored receivers", qmgr=inputs.request.qmgr
        )
    )
    notes = [
        f"AMQ7432 needs the entry of {timefmt.local_time(needed_at, inputs.offset)}: {len(restores.picks)} "
        "receiver(s) to restore."
    ]
    if required:
        notes.append(f"The recovery pass reads {required[0].name} through {required[-1].name}.")
    notes += restores.notes
    return _plan(inputs, steps=steps, gaps=gaps, notes=notes, site_media=restores.site_media)


def plan_media(inputs: Inputs) -> RecoveryPlan:
    snapshot = _needs_snapshot(inputs)
    obj, objtype = inputs.request.object, inputs.request.object_type
    if obj is None:
        found = latest_damaged_object(snapshot)
        unread = undecodable(snapshot, "AMQ7472")
        if found is None:
            raise RecoveryRefused(
                f"{inputs.request.qmgr} on {inputs.request.host}",
                "no object was given and QMQMMSG has no AMQ7472 (object damaged)"
                if not unread
                else f"no object was given and no AMQ7472 in QMQMMSG decodes by the layout its message description "
                f"declares (the newest: {unread[-1].problem})",
                "give the damaged object's name (and type)"
                + (f"; check AMQ7472's format with {unread[-1].dspmsgd}" if unread else ""),
            )
        obj, objtype = found if inputs.request.object_type == "*ALL" else (found[0], inputs.request.object_type)
    if snapshot.media_recovery is None:
        raise RecoveryRefused(
            f"{inputs.request.qmgr} on {inputs.request.host}",
            "no AMQ7462 (oldest media recovery entry) was found",
            "run RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) ... DSPJRNDTA(*YES) so MQ reports it, then plan again",
        )
    point = snapshot.media_recovery.at
    instance = journal_instance(inputs.journal)
    _, gaps, restores = _from_point(inputs, snapshot, point, "the media recovery entry of", SECOND)
    steps = list(restores.steps)
    if restores.associate:
        steps.append(_associate_step(inputs, instance))
    steps.append(
        step(
            Action.RECREATE_OBJECT,
            "replay the object's media image and every later entry",
            qmgr=inputs.request.qmgr,
            obj=obj,
            objtype=objtype,
        )
    )
    notes = [
        f"Media recovery of {obj} ({objtype}) reads from the AMQ7462 point {timefmt.local_time(point, inputs.offset)}: "
        f"{len(restores.picks)} receiver(s) to restore.",
        *_newer_unread_amq7472(inputs, snapshot),
        *restores.notes,
    ]
    return _plan(
        inputs,
        request=inputs.request.model_copy(update={"object": obj, "object_type": objtype}),
        steps=steps,
        gaps=gaps,
        notes=notes,
        site_media=restores.site_media,
    )


def _newer_unread_amq7472(inputs: Inputs, snapshot: Snapshot) -> list[str]:
    """A note when the object was read from an AMQ7472 and a newer one did not decode: that one may name another
    object, which this plan does not re-create."""
    if inputs.request.object is not None:
        return []
    newest_read = max((d.reported_at for d in snapshot.damaged_objects), default=None)
    newer = [m for m in undecodable(snapshot, "AMQ7472") if newest_read is None or m.sent_at > newest_read]
    if not newer:
        return []
    return [
        f"{len(newer)} newer AMQ7472 did not decode by the layout its message description declares, and may name "
        f"another damaged object: check its format with {newer[-1].dspmsgd} and read it in QMQMMSG."
    ]


def plan_library(inputs: Inputs) -> RecoveryPlan:
    """The library is lost: its latest usable library save, a receiver of a new restore generation and a journal
    on it, the receivers the library save needs, STRMQM, and the cluster refresh a point-in-time restore calls for.
    """
    if inputs.snapshot is not None:
        return _plan(inputs, gaps=[_library_still_on_host(inputs)])
    saved = _latest_usable_library_save(inputs)
    if isinstance(saved, Gap):
        return _plan(inputs, gaps=[saved])
    chain, copy = with_receiver_attached_at_save(
        history(None, inputs.cataloged, inputs.qmgr_library, inputs.earlier), saved, inputs.request.qmgr
    )
    required, gaps = _receivers_after_library_save(chain, saved, copy, inputs.offset)
    gaps += _directory_part_gaps(inputs, saved)
    restores = _restores(required, inputs, {})
    gaps += _continuity_gaps(required) + restores.gaps
    resolved = _finish(restores, inputs, library_save=saved)
    first_new = _first_receiver_of_new_generation(chain, saved, journal_instance(inputs.journal))
    steps = _library_restore_steps(inputs, saved, str(first_new), restores, resolved)
    restore_point = _library_restore_point(required, saved)
    notes = _library_notes(saved, restores, restore_point, first_new, inputs.offset)
    cluster_steps, cluster_notes = cluster_follow_up(inputs.request.qmgr, inputs.clusters, restore_point, inputs.now)
    return _plan(
        inputs,
        steps=steps + cluster_steps,
        gaps=gaps,
        notes=notes + cluster_notes,
        restore_point=restore_point,
        site_media=restores.site_media,
    )


def _directory_part_gaps(inputs: Inputs, saved: LibrarySaveRecord) -> list[Gap]:
    """Why the library save cannot bring back the queue manager's IFS directory (MQ's object definitions and the
    messages they hold, which are in no library), or nothing. Without it RSTLIB brings back a journal and
    receivers for queues that are not there: the recovery is not complete, so it is not planned as one."""
    obj = f"IFS directory {qmgr_directory(inputs.request.qmgr)} of {inputs.request.qmgr}"
    path = saved.directory_save_file_path
    if path is None:
        return [
            Gap(
                obj=obj,
                problem=f"library save {saved.save_file_path} of {timefmt.local_time(saved.saved_at, inputs.offset)}"
                " was taken without its IFS part (SAV of the queue manager's directory): restoring the library alone "
                "brings back no queue definitions and none of their messages",
                action="restore the directory by hand from a backup of the IFS (RST OBJ('"
                f"{qmgr_directory(inputs.request.qmgr)}')) taken with this library save, then finish the library "
                "recovery by hand; take a new library save with `mqjournal save-library`, which saves both parts",
            )
        ]
    sources = _sources(inputs)
    if not sources.available(path):
        return [
            Gap(
                obj=obj,
                problem=f"its save file {path} (the IFS part of library save {saved.save_file_path}): "
                + sources.why_not([path]),
                action=f"bring {path} back onto the partition from the backup store or other media (SFTP PUT into a "
                "new save file of that name), then plan again",
            )
        ]
    return []


def _plan(inputs: Inputs, *, request: Request | None = None, **fields: Any) -> RecoveryPlan:
    """A plan of `inputs`' queue manager, made now: its steps, gaps, notes and the rest as given."""
    return RecoveryPlan(
        request=request or inputs.request,
        created_at=inputs.now,
        qmgr_library=inputs.qmgr_library,
        journal=inputs.journal,
        **fields,
    )


def _library_still_on_host(inputs: Inputs) -> Gap:
    return Gap(
        obj=f"{inputs.qmgr_library} on {inputs.request.host}",
        problem="the library and its journal are on the host: a library restore would restore over a live "
        "queue manager",
        action="use a startup or media recovery; if the library is damaged beyond that, delete it first",
    )


def _latest_usable_library_save(inputs: Inputs) -> LibrarySaveRecord | Gap:
    """The newest library save whose save file the host or the backup store still has, or the gap saying why there
    is none."""
    sources = _sources(inputs)
    usable = [s for s in inputs.library_saves if sources.available(s.save_file_path)]
    if usable:
        return usable[0]
    problem = (
        "the catalog has no library save of it"
        if not inputs.library_saves
        else sources.why_not(s.save_file_path for s in inputs.library_saves)
    )
    return Gap(
        obj=f"library {inputs.qmgr_library} of {inputs.request.qmgr}",
        problem=problem,
        action="restore the library by hand from other backup media, give the backup store that holds a verified "
        "copy of a library save, or record a library save in the catalog",
    )


def _receivers_after_library_save(
    chain: list[Known], saved: LibrarySaveRecord, copy: Known | None, offset: int | None
) -> tuple[list[Known], list[Gap]]:
    """The receivers the restored library needs, from the one holding the oldest entry AMQJRNINF named at the
    library save on, and what stands in the way of trusting them."""
    start = holder_index(chain, saved.oldest_needed_at, timedelta(milliseconds=1))
    oldest_needed = timefmt.local_time(saved.oldest_needed_at, offset)
    gaps: list[Gap] = []
    if start is None:
        required: list[Known] = []
        gaps.append(
            Gap(
                obj=f"receiver {saved.oldest_needed_receiver or '(asterisks)'} needed by the library save "
                f"{saved.save_file_path}",
                problem=f"no save of the receiver holding {oldest_needed} is in the catalog",
                action="run the maintenance DAG so the receivers since the library save are saved (or restore them "
                "by hand from other backup media), then plan again",
            )
        )
    else:
        required = list(chain[start:])
        if saved.oldest_needed_receiver and required and required[0].name != saved.oldest_needed_receiver:
            gaps.append(
                Gap(
                    obj=f"receiver {saved.oldest_needed_receiver} named by AMQJRNINF at the library save",
                    problem=f"the catalog's receiver holding {oldest_needed} is {required[0].name}",
                    action="check the catalog against the host's history before restoring",
                )
            )
    if copy in required and required[-1] is not copy:
        gaps.append(
            Gap(
                obj=f"receiver {copy.name} (attached {timefmt.local_time(copy.attached_at, offset)})",
                problem="only the library save's copy of it is catalogued, taken while it was attached: the entries "
                "written to it after the library save, before the later receivers, are in no save",
                action="restore it by hand from a later backup if one exists; otherwise the queue manager can only "
                "come back as it was at the library save (restore the library save alone, by hand)",
            )
        )
    return required, gaps


def _first_receiver_of_new_generation(chain: list[Known], saved: LibrarySaveRecord, instance: str) -> ReceiverName:
    """The first free name of the restore generation after the latest receiver's: restoring the journal would
    attach one named like a receiver still to be restored."""
    everything = {k.name for k in chain} | {saved.attached_receiver}
    latest = max(chain, key=lambda k: k.attached_at).name if chain else saved.attached_receiver
    generation = ReceiverName.parse(latest)
    return next_free_receiver_name(
        str(ReceiverName(instance, (generation.restore + 1) % 10, generation.number)), everything
    )


def _library_restore_steps(
    inputs: Inputs, saved: LibrarySaveRecord, fresh: str, restores: _Restores, resolved: Resolved
) -> list[Step]:
    lib = inputs.qmgr_library
    instance = journal_instance(inputs.journal)
    save_library, save_file = resolved.path[saved.save_file_path].split("/")
    steps = [
        *resolved.fetch.get(saved.save_file_path, []),
        step(
            Action.RESTORE_LIBRARY,
            f"the latest library save ({timefmt.local_time(saved.saved_at, inputs.offset)}), without its journal and "
            "receivers",
            qmgr_library=lib,
            journal=inputs.journal,
            instance=instance,
            save_library=save_library,
            save_file=save_file,
        ),
        *_directory_restore_steps(inputs, saved, resolved),
        step(
            Action.CREATE_RECEIVER,
            "a receiver of a new restore generation first: restoring the journal would "
            "attach one named like a receiver still to be restored",
            about=fresh,
            library=lib,
            receiver=fresh,
            threshold_kb=saved.threshold_kb or DEFAULT_THRESHOLD_KB,
        ),
        step(Action.GIVE_RECEIVER_TO_QMQM, "MQ owns its receivers", about=fresh, library=lib, receiver=fresh),
        step(
            Action.CREATE_JOURNAL,
            "the journal on the new receiver, as MQ creates it",
            about=fresh,
            library=lib,
            journal=inputs.journal,
            receiver=fresh,
        ),
        *restores.steps,
    ]
    if restores.picks:
        steps.append(_associate_step(inputs, instance))
    steps.append(
        step(Action.START_QMGR, "the startup recovery pass replays the restored receivers", qmgr=inputs.request.qmgr)
    )
    return steps


def _directory_restore_steps(inputs: Inputs, saved: LibrarySaveRecord, resolved: Resolved) -> list[Step]:
    """RST of the queue manager's IFS directory from the library save's second save file, brought back from the
    store first when the host no longer has it (none: a gap says why)."""
    origin = saved.directory_save_file_path
    if origin is None or origin not in resolved.path:
        return []
    save_library, save_file = resolved.path[origin].split("/")
    return [
        *resolved.fetch.get(origin, []),
        step(
            Action.RESTORE_QMGR_DIRECTORY,
            "the queue manager's IFS directory as saved with the library: its object definitions and their messages",
            qmgr=inputs.request.qmgr,
            save_library=save_library,
            save_file=save_file,
        ),
    ]


def _library_restore_point(required: list[Known], saved: LibrarySaveRecord) -> datetime:
    """The latest moment the restored queue manager reflects: the last detach among the restored receivers, and
    never before the library save itself."""
    restore_point = max((k.detached_at for k in required if k.detached_at), default=saved.saved_at)
    return max(restore_point, saved.saved_at)


def _library_notes(
    saved: LibrarySaveRecord, restores: _Restores, restore_point: datetime, first_new: ReceiverName, offset: int | None
) -> list[str]:
    return [
        f"Library save {saved.save_file_path} of {timefmt.local_time(saved.saved_at, offset)}; it needs "
        f"{saved.oldest_needed_receiver or '(asterisks)'} and later receivers: {len(restores.picks)} to restore.",
        f"Journal entries after {timefmt.local_time(restore_point, offset)} were in no save: the queue manager "
        "comes back as it was then.",
        f"New receivers are named from {first_new} on (restore generation {first_new.restore}).",
        f"The queue manager's IFS directory comes back from {saved.directory_save_file_path or '(no IFS part)'}, "
        "saved with the library: what the queues held at the library save replaces what is there.",
        "Afterwards: run the maintenance DAG (checkpoint, save) and take a new library save.",
        *restores.notes,
    ]


def with_receiver_attached_at_save(
    chain: list[Known], saved: LibrarySaveRecord, qmgr: str
) -> tuple[list[Known], Known | None]:
    """The chain, with the receiver attached during the library save taken from the library save itself when the
    catalog has no full save of it (the queue manager is ended for the save, so the copy holds every entry up to
    the save, the library save's last checkpoint included). Returns the chain and that copy, if it was added."""
    if any((k.name, k.attached_at) == (saved.attached_receiver, saved.attached_at) for k in chain):
        return chain, None
    copy = Known(
        saved.attached_receiver,
        saved.qmgr_library,
        saved.attached_at,
        saved.saved_at,
        None,
        None,
        saves=(
            SaveRecord(
                host=saved.host,
                qmgr=qmgr,
                qmgr_library=saved.qmgr_library,
                receiver=saved.attached_receiver,
                library=saved.qmgr_library,
                attached_at=saved.attached_at,
                detached_at=None,
                first_sequence=None,
                last_sequence=None,
                previous=None,
                next=None,
                size_bytes=0,
                device=saved.device,
                save_file_library=saved.save_file_library,
                save_file=saved.save_file,
                saved_at=saved.saved_at,
                verified_at=saved.verified_at,
                run_id=saved.run_id,
            ),
        ),
    )
    return sorted([*chain, copy], key=lambda k: (k.attached_at, k.first_sequence or 0)), copy


# --- clusters -------------------------------------------------------------------------------------------------


def cluster_follow_up(
    qmgr: str, clusters: list[ClusterConfig], restore_point: datetime, now: datetime
) -> tuple[list[Step], list[str]]:
    """After a restore to an earlier point: REFRESH CLUSTER on this queue manager only, for each of its clusters.

    Within the 90-day repository expiry, REPOS(*NO) is enough. Beyond it the queue manager has left the cluster
    and rejoins when it reconnects; REPOS(*YES) also drops its stale view of the full repositories, and is refused
    on a full repository (AMQ9406), which is demoted first and promoted again afterwards.
    """
    steps: list[Step] = []
    notes: list[str] = []
    away = now - restore_point
    for cluster in clusters:
        if away <= CLUSTER_EXPIRY:
            steps.append(
                step(
                    Action.REFRESH_CLUSTER,
                    f"the restore point is {away.days} day(s) old: rebuild this "
                    f"queue manager's view of cluster {cluster.name}",
                    qmgr=qmgr,
                    cluster=cluster.name,
                    repos=False,
                )
            )
            continue
        notes.append(
            f"The restore point is {away.days} days old, beyond the 90-day repository expiry: {qmgr} will have left "
            f"cluster {cluster.name}; it rejoins when its cluster channels reconnect (check they start)."
        )
        steps += _rejoin_cluster(qmgr, cluster)
    if clusters:
        notes.append("REFRESH CLUSTER runs on the restored queue manager only; it is disruptive while it runs.")
    return steps, notes


def _rejoin_cluster(qmgr: str, cluster: ClusterConfig) -> list[Step]:
    """REFRESH CLUSTER REPOS(YES), with a full repository demoted around it (AMQ9406 refuses it there)."""
    refresh = step(
        Action.REFRESH_CLUSTER,
        f"rejoin cluster {cluster.name} with fresh repository information",
        qmgr=qmgr,
        cluster=cluster.name,
        repos=True,
    )
    if not cluster.full_repository:
        return [refresh]
    return [
        step(
            Action.SET_FULL_REPOSITORY,
            "demote first: REFRESH CLUSTER REPOS(YES) is refused on a full repository (AMQ9406)",
            qmgr=qmgr,
            cluster=None,
        ),
        refresh,
        step(
            Action.SET_FULL_REPOSITORY,
            f"promote back to full repository of {cluster.name}",
            qmgr=qmgr,
            cluster=cluster.name,
        ),
    ]


# --- reading MQ's messages --------------------------------------------------------------------------------------


def latest_amq7432(snapshot: Snapshot) -> datetime | None:
    """The entry time the newest AMQ7432 reports, in the partition's time zone, as the collector read it from the
    replacement data by the layout the partition declares (`entry_needed_at`).

    Its text shows the time in the job's language and date format, so it is never parsed: an AMQ7432 without
    replacement data, or whose data does not decode, says no time, and the caller asks for one.
    """
    needed = snapshot.entry_needed_at
    return None if needed is None else needed.astimezone(snapshot.collected_at.tzinfo)


def amq7432_unread(snapshot: Snapshot) -> str:
    """Why no AMQ7432 gives the entry time, as an admin reads it: none was sent in the window, or the newest one's
    data does not decode (named with the DSPMSGD that shows its declared format)."""
    found = undecodable(snapshot, "AMQ7432")
    sent = sorted((m for m in snapshot.messages if m.id == "AMQ7432"), key=lambda m: m.at)
    if found and sent and found[-1].sent_at == sent[-1].at:
        newest = found[-1]
        return (
            f"the newest AMQ7432 in QMQMMSG ({timefmt.local_time(newest.sent_at)}) does not "
            f"decode by the layout its message description declares ({newest.problem}); check its format with "
            f"{newest.dspmsgd}"
        )
    if sent and sent[-1].tokens is None:
        return "the newest AMQ7432 in QMQMMSG has no replacement data (this partition does not show MESSAGE_TOKENS)"
    if sent:
        return "the newest AMQ7432 in QMQMMSG was not read (a snapshot written before mqjournal read its entry time)"
    return "no AMQ7432 in QMQMMSG says which journal entry the startup recovery pass needs"


def undecodable(snapshot: Snapshot, msg_id: str) -> list[UndecodableMessage]:
    """The collection's `msg_id` messages whose replacement data did not decode, oldest first."""
    return [m for m in snapshot.undecodable_messages if m.message_id == msg_id]


def latest_damaged_object(snapshot: Snapshot) -> tuple[str, str] | None:
    """(object, RCRMQMOBJ OBJTYPE) of the newest AMQ7472, as the collector read it from the replacement data by the
    layout the partition declares (`damaged_objects`: the newest report per object)."""
    if not snapshot.damaged_objects:
        return None
    newest = max(snapshot.damaged_objects, key=lambda d: d.reported_at)
    return newest.object, RCRMQMOBJ_TYPES.get(newest.object_type.upper().lstrip("*"), "*ALL")
