"""Backup expiry: which save files no restore can need any more, as a pure function of the live snapshot and the
catalog ("when the backup itself can be discarded", seed "Journal management").

The rules:
- The live queue manager needs every receiver from the one holding its oldest needed entry on: the earliest of
  AMQJRNINF, AMQ7460 (startup) and AMQ7462 (media). A receiver detached before that moment holds no needed entry.
- The policy keeps the newest `keep_library_saves` library saves; restoring one needs the receivers from its own
  `oldest_needed_at` (AMQJRNINF at the save) on. Library saves beyond those may go.
- A receiver save may go when its receiver was detached before both moments. A save *file* goes only when every
  save in it may go (a receiver save file holds up to 300 receivers; a library save file holds the library's
  receivers too, recorded as receiver saves of the same file) and its newest save is older than
  `backup_retention_days`.
- Nothing is discarded when the live state is unknown or blocked (no snapshot, AMQJRNINF missing, malformed or
  disagreeing with the chain, a broken chain, a stale snapshot), or when no library save is recorded: then nothing
  older can be shown to be unneeded by a library restore. Those cases are Gaps, so the plan cannot run.

Decisions where the issue is silent:
- Saves of needed receivers are never discarded, not even a second copy (the "only save" rule is then a special
  case; kept files name the receivers that keep them, marking an only save).
- A receiver without a detach time (never fully detached, as far as the catalog knows) counts as needed.
- Steps are ordered by each file's newest save (the order the files were last written), then by file path.
- Only records of the request's host (and the queue manager library) are considered; save files are assumed to
  be per queue manager, as the executor creates them (MQJ + hash of host, library and run).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from mqjournal import timefmt
from mqjournal.catalog import CatalogedReceiver, LibrarySaveRecord, SaveRecord
from mqjournal.errors import InvalidName
from mqjournal.names import ReceiverName, is_receiver_name, journal_name, qmgr_library_for
from mqjournal.policy import Policy
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, Gap, RecoveryPlan, Request, Step, offset_of, step
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.rules import chain_is_broken, chain_of, oldest_needed
from mqjournal.sizefmt import size
from mqjournal.snapshot import Snapshot
from mqjournal.vocabulary import BlockReason

_LISTED = 6  # receiver names a step's `why` lists before it abbreviates


@dataclass(frozen=True)
class LiveNeeds:
    """What the live queue manager needs: entries from `needed_at` on, unless `blocks` says the state is unusable
    (the planner's BlockReasons, and NO_SNAPSHOT when the queue manager could not be read at all)."""

    needed_at: datetime | None
    source: str
    blocks: tuple[str, ...]


@dataclass
class SaveFile:
    """One save file and every save the catalog records in it."""

    library: str
    name: str
    receiver_saves: list[tuple[CatalogedReceiver, SaveRecord]] = field(default_factory=list)
    library_saves: list[LibrarySaveRecord] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"{self.library}/{self.name}"

    @property
    def newest_save(self) -> datetime:
        return max([s.saved_at for _, s in self.receiver_saves] + [s.saved_at for s in self.library_saves])

    @property
    def receiver_bytes(self) -> int:
        return sum(s.size_bytes for _, s in self.receiver_saves)


# --- the rules, one small function each ---------------------------------------------------------------------------


def live_needs(snapshot: Snapshot | None, policy: Policy, now: datetime) -> LiveNeeds:
    """The oldest entry the live queue manager still needs, or why it cannot be trusted.

    The same block reasons as the maintenance planner (docs/planning-rules.md, section 2): a state that is not
    safe to delete receivers from is not safe to discard their saves from either. The earliest of AMQJRNINF,
    AMQ7460 and AMQ7462 counts: AMQ7462's receivers must stay available "either present or backed-up", and a
    backup is what expiry discards.
    """
    if snapshot is None:
        return LiveNeeds(None, "", ("NO_SNAPSHOT",))
    chain = chain_of(snapshot)
    needed = oldest_needed(snapshot, chain)
    blocks: list[str] = list(needed.blocks)
    if now - snapshot.collected_at > policy.max_snapshot_age:
        blocks.append(BlockReason.SNAPSHOT_STALE)
    if chain_is_broken(chain):
        blocks.append(BlockReason.CHAIN_BROKEN)
    if blocks or needed.needed_at is None:
        return LiveNeeds(None, "", tuple(blocks) or (BlockReason.AMQJRNINF_MISSING,))
    points = [(needed.needed_at, "AMQJRNINF")]
    if snapshot.startup_recovery is not None:
        points.append((snapshot.startup_recovery.at, "AMQ7460 (startup recovery point)"))
    if snapshot.media_recovery is not None:
        points.append((snapshot.media_recovery.at, "AMQ7462 (oldest media recovery entry)"))
    at, source = min(points, key=lambda p: p[0])
    return LiveNeeds(at, source, ())


def split_library_saves(
    saves: Iterable[LibrarySaveRecord], keep: int
) -> tuple[list[LibrarySaveRecord], list[LibrarySaveRecord]]:
    """(the `keep` newest library saves, the older ones): the policy's fallback for a lost library is the kept ones."""
    ordered = sorted(saves, key=lambda s: (s.saved_at, s.save_file_path), reverse=True)
    return ordered[:keep], ordered[keep:]


def library_needs(kept: list[LibrarySaveRecord]) -> datetime | None:
    """The oldest entry any kept library save needs: restoring it replays the receivers from its AMQJRNINF on."""
    return min((s.oldest_needed_at for s in kept), default=None)


def receiver_needed(receiver: CatalogedReceiver, cutoff: datetime) -> bool:
    """A receiver is needed unless it was detached before the oldest needed entry was written.

    Detached before `cutoff` means a later receiver was attached by then, so the entry is not in this one (the
    restore planner's `holder_index` reads it the same way). MQ's times are truncated (to the second or the
    millisecond), so a receiver detached within that truncated instant counts as needed. No detach time: needed.
    """
    return receiver.detached_at is None or receiver.detached_at >= cutoff


def old_enough(saved_at: datetime, now: datetime, policy: Policy) -> bool:
    """The policy's minimum age of a backup (`backup_retention_days`), whatever MQ needs."""
    return saved_at <= now - policy.backup_retention


def save_files(cataloged: Iterable[CatalogedReceiver], library_saves: Iterable[LibrarySaveRecord]) -> list[SaveFile]:
    """Every save file the catalog knows, with the receiver and library saves in it.

    A file must be judged as a whole: DLTF removes every save in it, so one needed save keeps the file.
    """
    files: dict[str, SaveFile] = {}

    def file_of(library: str, name: str) -> SaveFile:
        return files.setdefault(f"{library}/{name}", SaveFile(library, name))

    for receiver in cataloged:
        for receiver_save in receiver.saves:
            file_of(receiver_save.save_file_library, receiver_save.save_file).receiver_saves.append(
                (receiver, receiver_save)
            )
    for library_save in library_saves:
        file_of(library_save.save_file_library, library_save.save_file).library_saves.append(library_save)
        if library_save.directory_save_file is not None:
            # Its IFS part (SAV of the queue manager's directory) is kept and discarded with it: one restore.
            file_of(library_save.save_file_library, library_save.directory_save_file).library_saves.append(library_save)
    return sorted(files.values(), key=lambda f: (f.newest_save, f.path))


def reasons_to_keep(
    file: SaveFile,
    *,
    cutoff: datetime,
    kept: list[LibrarySaveRecord],
    only_save: set[tuple[str, datetime]],
    now: datetime,
    policy: Policy,
    offset: int | None = None,
) -> list[str]:
    """Why a save file must stay; an empty list means every save in it may be discarded. `offset`: the partition's,
    in minutes east of UTC, for the times the reasons show."""
    reasons = []
    needed = sorted(
        {(r.name, r.attached_at) for r, _ in file.receiver_saves if receiver_needed(r, cutoff)}, key=lambda k: k[1]
    )
    if needed:
        only = [n for n, a in needed if (n, a) in only_save]
        text = f"it holds saves of {len(needed)} needed receiver(s) ({_names([n for n, _ in needed])})"
        if only:
            text += f", the only save of {_names(only)}"
        reasons.append(text)
    for save in file.library_saves:
        if save in kept:
            reasons.append(
                f"it holds the library save of {timefmt.local_time(save.saved_at, offset)}, one of the "
                f"{policy.keep_library_saves} newest the policy keeps"
            )
    if not old_enough(file.newest_save, now, policy):
        reasons.append(
            f"its newest save ({timefmt.local_time(file.newest_save, offset)}) is younger than the "
            f"{policy.backup_retention_days:g}-day backup retention"
        )
    return reasons


def _names(names: list[str]) -> str:
    if len(names) <= _LISTED:
        return ", ".join(names)
    return ", ".join(names[: _LISTED - 1]) + f", ... {names[-1]}"


def _why(file: SaveFile, offset: int | None) -> str:
    parts = []
    if file.receiver_saves:
        ordered = sorted(file.receiver_saves, key=lambda rs: rs[0].attached_at)
        parts.append(
            f"{len(ordered)} receiver save(s), {_names([r.name for r, _ in ordered])}: all detached before "
            "anything needed"
        )
    for save in file.library_saves:
        parts.append(
            f"library save of {timefmt.local_time(save.saved_at, offset)}: older than the ones the policy keeps"
        )
    return "; ".join(parts)


def _delete_step(file: SaveFile, offset: int | None) -> Step:
    return step(Action.DELETE_SAVE_FILE, _why(file, offset), library=file.library, name=file.name)


# --- the plan ---------------------------------------------------------------------------------------------------


def plan_expiry(
    request: Request,
    snapshot: Snapshot | None,
    cataloged: list[CatalogedReceiver],
    library_saves: list[LibrarySaveRecord],
    policy: Policy,
    now: datetime,
) -> RecoveryPlan:
    """DLTF of every save file no restore of this queue manager can need, oldest first.

    Raises RecoveryRefused when the request is not an expiry request of the snapshot's queue manager (or its
    library cannot be told at all); returns a plan with Gaps and no steps when nothing may be discarded.
    """
    qmgr_library, journal = _identify(request, snapshot, cataloged, library_saves)
    cataloged = [r for r in (_only_ours(r, request.host, qmgr_library) for r in cataloged) if r.saves]
    library_saves = [s for s in library_saves if s.host == request.host and s.qmgr_library == qmgr_library]

    def plan(*, steps: list[Step] | None = None, gaps: list[Gap] | None = None, notes: list[str]) -> RecoveryPlan:
        return RecoveryPlan(
            request=request,
            created_at=now,
            qmgr_library=qmgr_library,
            journal=journal,
            steps=steps or [],
            gaps=gaps or [],
            notes=notes,
        )

    live = live_needs(snapshot, policy, now)
    gaps = _nothing_may_go(request, qmgr_library, live, library_saves)
    if gaps or live.needed_at is None:  # needed_at is None only with a gap; the test is for the type checker
        return plan(gaps=gaps, notes=["Nothing is discarded."])

    kept, beyond = split_library_saves(library_saves, policy.keep_library_saves)
    library_at = library_needs(kept)
    # keep_library_saves is at least 1 and there is a library save, so one is kept and it needs a moment.
    assert library_at is not None
    cutoff = min(live.needed_at, library_at)
    files = save_files(cataloged, library_saves)
    # The catalog gives its times back in UTC; the snapshot's collection time (here, with live needs, there is one)
    # carries the partition's zone, which an admin compares the plan in.
    offset = offset_of(snapshot.collected_at if snapshot is not None else now)
    discard, kept_mixed = _sort_files(files, cutoff, kept, only_saves(cataloged), now, policy, offset)
    steps = [_delete_step(f, offset) for f in discard]
    notes = [
        f"The live queue manager needs entries from {timefmt.local_time(live.needed_at, offset)} ({live.source}) on.",
        f"Kept library saves ({len(kept)} of {len(library_saves)}, newest first): "
        + ", ".join(f"{s.save_file_path} of {timefmt.local_time(s.saved_at, offset)}" for s in kept)
        + f"; the oldest entry they need is of {timefmt.local_time(library_at, offset)}.",
        f"Receivers detached before {timefmt.local_time(cutoff, offset)} are needed by nothing.",
        *_discard_notes(files, discard, kept_mixed, beyond, policy),
    ]
    return plan(steps=steps, notes=notes)


def _nothing_may_go(
    request: Request, qmgr_library: str, live: LiveNeeds, library_saves: list[LibrarySaveRecord]
) -> list[Gap]:
    """Why no save file may be discarded at all: the live needs are unknown, or no library save is recorded."""
    gaps = []
    if live.needed_at is None:
        gaps.append(
            Gap(
                obj=f"{qmgr_library} on {request.host}",
                problem="the live queue manager's needs are unknown: "
                + ", ".join(live.blocks)
                + " (the oldest needed entry cannot be trusted)",
                action="collect a fresh snapshot with a readable AMQJRNINF (RCDMQMIMG rewrites it) and plan the "
                "expiry again",
            )
        )
    if not library_saves:
        gaps.append(
            Gap(
                obj=f"library saves of {qmgr_library}",
                problem="the catalog has none: without a library save to fall back on, no receiver save can be "
                "shown to be unneeded by a library restore",
                action="take and record a library save (queue manager ended, SAVLIB), then plan the expiry again",
            )
        )
    return gaps


def only_saves(cataloged: Iterable[CatalogedReceiver]) -> set[tuple[str, datetime]]:
    """The receivers (name, attach time) whose saves are all in one save file: discarding it loses them."""
    saves_per_receiver: dict[tuple[str, datetime], int] = {}
    for r in cataloged:
        saves_per_receiver[(r.name, r.attached_at)] = len({(s.save_file_library, s.save_file) for s in r.saves})
    return {k for k, n in saves_per_receiver.items() if n == 1}


def _sort_files(
    files: list[SaveFile],
    cutoff: datetime,
    kept: list[LibrarySaveRecord],
    only_save: set[tuple[str, datetime]],
    now: datetime,
    policy: Policy,
    offset: int | None,
) -> tuple[list[SaveFile], list[tuple[SaveFile, list[str]]]]:
    """(the files to discard, the files kept although some of their saves may go, with why they stay)."""
    discard: list[SaveFile] = []
    kept_mixed: list[tuple[SaveFile, list[str]]] = []
    for f in files:
        reasons = reasons_to_keep(
            f, cutoff=cutoff, kept=kept, only_save=only_save, now=now, policy=policy, offset=offset
        )
        if not reasons:
            discard.append(f)
        elif _has_discardable(f, cutoff, kept):
            kept_mixed.append((f, reasons))
    return discard, kept_mixed


def _discard_notes(
    files: list[SaveFile],
    discard: list[SaveFile],
    kept_mixed: list[tuple[SaveFile, list[str]]],
    beyond: list[LibrarySaveRecord],
    policy: Policy,
) -> list[str]:
    receiver_saves = sum(len(f.receiver_saves) for f in discard)
    notes = [
        f"Discard {len(discard)} of {len(files)} save file(s): {receiver_saves} receiver save(s) of "
        f"{size(sum(f.receiver_bytes for f in discard))} and {sum(len(f.library_saves) for f in discard)} library "
        "save(s) (their size is not recorded).",
    ]
    notes += [
        f"{f.path} is kept although some of its saves are no longer needed: {'; '.join(r)}." for f, r in kept_mixed
    ]
    if beyond and not any(f.library_saves for f in discard):
        notes.append(
            f"{len(beyond)} library save(s) beyond the {policy.keep_library_saves} newest are kept for "
            "now: their save files are still needed or too young."
        )
    if discard:
        notes.append("Record each deleted save file as discarded in the catalog, so restores no longer offer it.")
    else:
        notes.append("Nothing to discard.")
    return notes


def _has_discardable(file: SaveFile, cutoff: datetime, kept: list[LibrarySaveRecord]) -> bool:
    return any(not receiver_needed(r, cutoff) for r, _ in file.receiver_saves) or any(
        s not in kept for s in file.library_saves
    )


def _only_ours(receiver: CatalogedReceiver, host: str, qmgr_library: str) -> CatalogedReceiver:
    saves = tuple(s for s in receiver.saves if s.host == host and s.qmgr_library == qmgr_library)
    return receiver if len(saves) == len(receiver.saves) else receiver.model_copy(update={"saves": saves})


def _identify(
    request: Request,
    snapshot: Snapshot | None,
    cataloged: list[CatalogedReceiver],
    library_saves: list[LibrarySaveRecord],
) -> tuple[str, str]:
    """The queue manager library and journal the plan is about: from the snapshot, else from the catalog."""
    if request.kind is not RecoveryKind.EXPIRY:
        raise RecoveryRefused(request.kind.value, "is not a backup expiry", "use the restore or naming planners")
    if snapshot is not None:
        if (request.host, request.qmgr) != (snapshot.host, snapshot.qmgr):
            raise RecoveryRefused(
                f"{request.qmgr} on {request.host}",
                f"the snapshot is of {snapshot.qmgr} on {snapshot.host}",
                "plan from a snapshot of the queue manager the request names",
            )
        return snapshot.qmgr_library, snapshot.journal.name
    mine = [s for s in library_saves if s.host == request.host and s.qmgr == request.qmgr]
    if mine:
        return mine[0].qmgr_library, mine[0].journal
    for r in cataloged:
        for s in r.saves:
            if s.host == request.host and s.qmgr == request.qmgr and is_receiver_name(r.name):
                return s.qmgr_library, journal_name(ReceiverName.parse(r.name).instance)
    try:
        return qmgr_library_for(request.qmgr), "AMQAJRN"
    except InvalidName as exc:
        raise RecoveryRefused(
            f"{request.qmgr} on {request.host}",
            "neither a snapshot nor the catalog names its library",
            "collect the queue manager, then plan the expiry again",
        ) from exc
