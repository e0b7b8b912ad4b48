"""Naming repair plans: attach a receiver by hand when automatic switching has stopped, or to change the threshold.

The seed "Queue manager journals on IBM i" gives three naming rules:
1. AMQArnnnnn goes to AMQAr(nnnnn+1), wrapping 99999 to 00000 with r kept.
2. If that name already exists, CPI70E3 goes to QSYSOPR and automatic switching stops: the attached receiver keeps
   growing until someone attaches a new receiver by hand.
3. If every name of the sequence is on the system: delete receivers no longer needed, RCDMQMIMG, delete again.

A repair is CRTJRNRCV of the next *free* name by rule 1 (over every receiver name in the library, in the journal or
not), CHGOBJOWN NEWOWN(QMQM) and CHGJRN JRNRCV(..); the system then names later receivers by rule 1 from the new one.
The same three commands change the threshold, because a system-made receiver inherits the attached one's.

Decisions where the issue is silent:
- Nothing wrong and no threshold asked: a plan with no steps (so not executable) whose note says switching works;
  it is not an error, so no RecoveryRefused.
- Rule 3: no CRTJRNRCV. The plan holds the RCDMQMIMG step and a Gap for what no command can do (running the
  maintenance DAG, before and after the checkpoint, then planning again), so it can never run or claim success.
- A snapshot older than `max_snapshot_age` is a Gap: the names it shows may have changed since.
- The request and snapshot must be of the same host and queue manager, the attached receiver must be the only one
  and carry an MQ receiver name in the journal's library; otherwise RecoveryRefused.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from mqjournal import timefmt
from mqjournal.errors import NoReceiverNameFree
from mqjournal.ibmi import commands
from mqjournal.names import (
    SEQUENCE_SIZE,
    ReceiverName,
    is_receiver_name,
    journal_instance,
    next_free_receiver_name,
)
from mqjournal.policy import Policy
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, Gap, RecoveryPlan, Request, Step, offset_of, step
from mqjournal.recovery.restore import DEFAULT_THRESHOLD_KB, RecoveryRefused, undecodable
from mqjournal.rules import chain_of, oldest_needed
from mqjournal.snapshot import QueueMessage, Receiver, ReceiverStatus, Snapshot

SWITCH_STOPPED = "CPI70E3"
_SHOWN = 3  # how many rule 1 names after the new receiver a note lists


# --- the rules, one small function each ---------------------------------------------------------------------------


def attached_receiver(snapshot: Snapshot) -> Receiver:
    """The journal's one attached receiver: rule 1 counts from its name, and the new receiver replaces it.

    Refused when there is none or more than one (a broken chain: which name would rule 1 count from?), when its
    name is not an MQ receiver name (rule 1 is only defined for AMQxrnnnnn), or when it is not in the journal's
    library (CHGJRN here attaches a receiver of the journal's library, where MQ keeps them).
    """
    where = f"journal {snapshot.journal.library}/{snapshot.journal.name} of {snapshot.qmgr} on {snapshot.host}"
    attached = [
        r
        for r in snapshot.receivers
        if r.status == ReceiverStatus.ATTACHED
        and r.journal == snapshot.journal.name
        and r.journal_library == snapshot.journal.library
    ]
    if len(attached) != 1:
        raise RecoveryRefused(
            where,
            f"it has {len(attached)} attached receivers ({', '.join(r.name for r in attached) or 'none'}), not one",
            "check the journal with WRKJRNA and collect again; a naming repair counts from the one attached receiver",
        )
    receiver = attached[0]
    if not is_receiver_name(receiver.name):
        raise RecoveryRefused(
            f"{receiver.library}/{receiver.name}",
            "the attached receiver's name is not an MQ receiver name (AMQxrnnnnn), so rule 1 does not name its "
            "successor",
            "attach a receiver named AMQ" + journal_instance(snapshot.journal.name) + "0nnnnn by hand",
        )
    if receiver.library != snapshot.journal.library:
        raise RecoveryRefused(
            f"{receiver.library}/{receiver.name}",
            f"the attached receiver is not in the journal's library {snapshot.journal.library}",
            "repair by hand: mqjournal only attaches receivers in the queue manager library",
        )
    return receiver


def names_in_library(snapshot: Snapshot, library: str) -> set[str]:
    """Every receiver name in the library, attached or not, in the journal or not.

    Rule 2 is about names: a receiver made by hand or restored and never associated blocks a name exactly as a
    receiver of the chain does, so all of them count.
    """
    return {r.name for r in snapshot.receivers if r.library == library}


def rule1_successor(attached: str) -> str:
    """The name the system would give the next receiver (rule 1), free or not."""
    return str(ReceiverName.parse(attached).successor())


def stop_messages(snapshot: Snapshot, attached: Receiver) -> list[QueueMessage]:
    """CPI70E3 sent since the attached receiver was attached: switching stopped and stays stopped.

    Once stopped, the system does not retry even if the blocking receiver is deleted later (rule 2: "until you
    manually attach a new receiver"), so the message counts even when the rule 1 name is free again. A CPI70E3
    older than the attached receiver was about an earlier receiver and was repaired by attaching this one.

    CPI70E3 reaches QSYSOPR for every journal on the partition and its text names none: the collector read each
    one's replacement data by the layout the partition declares and kept only those naming this journal, and those it
    could not tell apart (`unconfirmed`). Reading the data again here by mqjournal's own guess of the layout could drop
    one the declared layout kept, and "switching stopped" would never be seen.
    """
    return [
        m
        for m in snapshot.messages
        if m.id == SWITCH_STOPPED and (attached.attached_at is None or m.at >= attached.attached_at)
    ]


def unconfirmed(message: QueueMessage, snapshot: Snapshot) -> str:
    """Why a kept CPI70E3 may be about another journal (empty when its data named this one), and what shows it."""
    if message.tokens is None:
        return " (its replacement data is not shown, so it may be about another journal: check it with DSPMSG)"
    for m in undecodable(snapshot, SWITCH_STOPPED):
        if m.sent_at == message.at:
            return f" (its replacement data does not decode, so it may be about another journal: see {m.dspmsgd})"
    return ""


def switching_stopped(snapshot: Snapshot, attached: Receiver, existing: set[str]) -> list[str]:
    """Why automatic switching has stopped (rule 2), one reason per line; empty when it works."""
    reasons = []
    following = rule1_successor(attached.name)
    if following in existing:
        holder = next(r for r in snapshot.receivers if r.name == following and r.library == attached.library)
        reasons.append(
            f"The name rule 1 gives after the attached receiver {attached.name}, {following}, is taken by "
            f"{describe(holder, snapshot)}: the system cannot create it, sends CPI70E3 and stops switching (rule 2)."
        )
    for m in stop_messages(snapshot, attached):
        reasons.append(
            f"{m.queue} has {SWITCH_STOPPED} of {_shown(m.at, snapshot)}{unconfirmed(m, snapshot)}: automatic receiver "
            f"switching stopped while {attached.name} was attached, and only a receiver attached by hand "
            "resumes it."
        )
    return reasons


def _shown(moment: datetime, snapshot: Snapshot) -> str:
    """`moment` as the partition's clock shows it: the snapshot's collection time carries the partition's zone."""
    return timefmt.local_time(moment, offset_of(snapshot.collected_at))


def describe(receiver: Receiver, snapshot: Snapshot) -> str:
    """A receiver as an admin looks it up: where it is, whether it is in the journal, when it was attached."""
    in_chain = receiver.journal == snapshot.journal.name and receiver.journal_library == snapshot.journal.library
    where = (
        "in the journal's receiver chain"
        if in_chain and receiver.attached_at
        else ("not in the journal (made by hand, or restored and not associated)")
    )
    attached = f", attached {_shown(receiver.attached_at, snapshot)}" if receiver.attached_at else ", never attached"
    return f"{receiver.library}/{receiver.name} (status {receiver.status}{attached}, {where})"


def threshold_for(request: Request, attached: Receiver) -> tuple[int, str]:
    """The new receiver's THRESHOLD in KB, and where it comes from.

    The admin's value first (validated 1..MAX by the Request); else the attached receiver's, so a repair changes
    nothing but the name; else MQ's documented default, 100000 KB. An attached threshold CRTJRNRCV cannot take here
    (above commands.MAX_THRESHOLD_KB, i.e. a journal with *MAXOPTn) is capped, and the note says so.
    """
    if request.threshold_kb is not None:
        return request.threshold_kb, f"the threshold asked for, {request.threshold_kb} KB"
    if not attached.threshold_kb:
        return (
            DEFAULT_THRESHOLD_KB,
            f"the attached receiver's threshold is unknown: MQ's default, {DEFAULT_THRESHOLD_KB} KB",
        )
    if attached.threshold_kb > commands.MAX_THRESHOLD_KB:
        return commands.MAX_THRESHOLD_KB, (
            f"the attached receiver's threshold {attached.threshold_kb} KB is above what CRTJRNRCV takes here: "
            f"capped to {commands.MAX_THRESHOLD_KB} KB (give threshold_kb to choose another)"
        )
    return attached.threshold_kb, f"the attached receiver's threshold, {attached.threshold_kb} KB (unchanged)"


def generation_notes(attached: str, journal: str) -> list[str]:
    """What the attached name's restore generation (r) and instance letter mean for the names that follow."""
    name = ReceiverName.parse(attached)
    notes = []
    if name.restore:
        notes.append(
            f"The attached receiver {attached} is of restore generation {name.restore} (receivers were restored into "
            f"this library): rule 1 keeps r, so the new name stays in generation {name.restore}; names of other "
            "generations neither block it nor are used."
        )
    if name.instance != journal_instance(journal):
        notes.append(
            f"The attached receiver's instance letter {name.instance} differs from the journal {journal}'s: "
            "rule 1 keeps the receiver's letter."
        )
    return notes


def following_names(new: ReceiverName, existing: set[str]) -> tuple[list[str], str | None]:
    """The names rule 1 gives after the new receiver, and the first of them already taken (switching stops there)."""
    shown, taken, candidate = [], None, new
    for _ in range(_SHOWN):
        candidate = candidate.successor()
        shown.append(str(candidate))
    if str(new.successor()) in existing:
        taken = str(new.successor())
    return shown, taken


def repair_steps(library: str, journal: str, new: str, threshold_kb: int, why_create: str) -> list[Step]:
    """The seed's three commands: CRTJRNRCV, CHGOBJOWN NEWOWN(QMQM) (MQ must own its receivers), CHGJRN."""
    return [
        step(Action.CREATE_RECEIVER, why_create, about=new, library=library, receiver=new, threshold_kb=threshold_kb),
        step(
            Action.GIVE_RECEIVER_TO_QMQM,
            "MQ owns the receivers of its journal",
            about=new,
            library=library,
            receiver=new,
        ),
        step(
            Action.ATTACH_RECEIVER,
            "attach it: this detaches the full receiver and resumes system-managed switching",
            about=new,
            library=library,
            journal=journal,
            receiver=new,
        ),
    ]


def stale_gap(snapshot: Snapshot, now: datetime, max_age: timedelta) -> Gap | None:
    """A snapshot older than the policy's limit may show names that have changed since: collect again first."""
    if now - snapshot.collected_at <= max_age:
        return None
    return Gap(
        obj=f"snapshot {snapshot.run_id} of {snapshot.qmgr} on {snapshot.host}",
        problem=(
            f"collected {_shown(snapshot.collected_at, snapshot)}, more than {timefmt.age(max_age)} before planning"
        ),
        action="collect the queue manager again and plan the naming repair from the fresh snapshot",
    )


# --- the plan ---------------------------------------------------------------------------------------------------


# The documented default, read once when the module loads, as the default argument was before.
_MAX_SNAPSHOT_AGE = Policy().max_snapshot_age


def plan_naming(
    request: Request, snapshot: Snapshot, now: datetime, *, max_snapshot_age: timedelta = _MAX_SNAPSHOT_AGE
) -> RecoveryPlan:
    """The repair for stopped receiver switching (rule 2, CPI70E3), or for a new threshold, from a live snapshot.

    Raises RecoveryRefused when the request is not a naming request for this snapshot's queue manager, or when the
    journal does not have exactly one attached receiver with an MQ name in its library.
    """
    _check(request, snapshot)
    library, journal = snapshot.journal.library, snapshot.journal.name
    attached = attached_receiver(snapshot)
    existing = names_in_library(snapshot, library)
    stopped = switching_stopped(snapshot, attached, existing)
    gaps = [g for g in [stale_gap(snapshot, now, max_snapshot_age)] if g]
    notes = generation_notes(attached.name, journal)

    if not stopped and request.threshold_kb is None:
        notes = _switching_works_notes(attached) + notes + _over_threshold_notes(attached)
        return _plan(request, snapshot, now, gaps=gaps, notes=notes)

    try:
        new = next_free_receiver_name(attached.name, existing)
    except NoReceiverNameFree:
        return _rule3(request, snapshot, now, attached, stopped, gaps, notes)

    threshold, threshold_why = threshold_for(request, attached)
    why_create = (
        f"{new} is the first free name after {attached.name} by rule 1"
        if stopped
        else f"a receiver with THRESHOLD({threshold}) under the next name {new}"
    )
    notes = _repair_notes(snapshot, attached, new, existing, stopped, (threshold, threshold_why), notes)
    steps = repair_steps(library, journal, str(new), threshold, why_create)
    return _plan(request, snapshot, now, steps=steps, gaps=gaps, notes=notes)


def _plan(
    request: Request,
    snapshot: Snapshot,
    now: datetime,
    *,
    steps: list[Step] | None = None,
    gaps: list[Gap],
    notes: list[str],
) -> RecoveryPlan:
    return RecoveryPlan(
        request=request,
        created_at=now,
        qmgr_library=snapshot.qmgr_library,
        journal=snapshot.journal.name,
        steps=steps or [],
        gaps=gaps,
        notes=notes,
    )


def _switching_works_notes(attached: Receiver) -> list[str]:
    return [
        f"Receiver switching works: the next name by rule 1, {rule1_successor(attached.name)}, is "
        f"free and no CPI70E3 was sent since {attached.name} was attached. Nothing to repair."
    ]


def _over_threshold_notes(attached: Receiver) -> list[str]:
    """A receiver past its threshold without a CPI70E3 collected: the message went somewhere nobody looked."""
    if attached.threshold_kb and attached.size_bytes > attached.threshold_kb * 1024:
        return [
            f"{attached.name} is over its threshold ({attached.size_bytes} bytes, THRESHOLD "
            f"{attached.threshold_kb} KB) yet no CPI70E3 was collected: check QSYSOPR and the journal's "
            "message queue."
        ]
    return []


def _repair_notes(
    snapshot: Snapshot,
    attached: Receiver,
    new: ReceiverName,
    existing: set[str],
    stopped: list[str],
    threshold: tuple[int, str],
    generation: list[str],
) -> list[str]:
    """What the repair does and what follows it: the new receiver, the names the system gives after it, and a
    warning when the name after the new one is taken too (switching would stop again)."""
    library = snapshot.journal.library
    kb, why = threshold
    shown, taken_next = following_names(new, existing)
    notes = [
        *stopped,
        *(
            []
            if stopped
            else [
                "Switching works; this plan changes the threshold: the system gives every later "
                "receiver the attributes of the attached one, so the new receiver's THRESHOLD carries on."
            ]
        ),
        f"New receiver {library}/{new}, THRESHOLD({kb}): {why}.",
        f"After CHGJRN the system switches again at the threshold and names the next receivers by rule 1 from "
        f"{new}: {', '.join(shown)}, ...",
        *generation,
        f"{attached.name} is detached by CHGJRN: the maintenance DAG saves it, and deletes it once MQ no longer "
        "needs it.",
    ]
    if taken_next:
        holder = next(r for r in snapshot.receivers if r.name == taken_next and r.library == library)
        notes.append(
            f"Warning: {taken_next}, the name after {new}, is taken too by {describe(holder, snapshot)}: "
            f"switching will stop again when {new} fills unless it is deleted first."
        )
    return notes


def _rule3(
    request: Request,
    snapshot: Snapshot,
    now: datetime,
    attached: Receiver,
    stopped: list[str],
    gaps: list[Gap],
    notes: list[str],
) -> RecoveryPlan:
    """Rule 3: no name is free. Delete what is not needed, RCDMQMIMG, delete again, then plan the repair again."""
    name = ReceiverName.parse(attached.name)
    first, last = (
        ReceiverName(name.instance, name.restore, 0),
        ReceiverName(name.instance, name.restore, SEQUENCE_SIZE - 1),
    )
    sequence = f"{first}-{last}"
    gaps = [
        *gaps,
        Gap(
            obj=f"receiver names {sequence} in {snapshot.journal.library}",
            problem="every name of the sequence is on the system (rule 3): no receiver can be created, so switching "
            "cannot resume",
            action=f"run the maintenance DAG for {request.qmgr} and approve the deletion of the receivers MQ no "
            "longer needs; then RCDMQMIMG (the step of this plan); then run the maintenance DAG again; then plan "
            "the naming repair again",
        ),
    ]
    steps = [
        step(
            Action.RECORD_MEDIA_IMAGES,
            "rule 3: record media images so AMQ7460/AMQ7462 move forward and more "
            "receivers become unnecessary; run it after the first deletion",
            qmgr=request.qmgr,
        )
    ]
    notes = [
        *stopped,
        f"No receiver name is free: all 100000 names {sequence} exist in {snapshot.journal.library} (rule 3).",
        "1. Run the maintenance DAG: save and delete the receivers no longer needed.",
        "2. RCDMQMIMG (the step of this plan) so MQ needs fewer receivers.",
        "3. Run the maintenance DAG again, so the old names are free to be reused.",
        "4. Plan the naming repair again: it then attaches the first free name by rule 1.",
        *_what_maintenance_frees(snapshot),
        *notes,
    ]
    return _plan(request, snapshot, now, steps=steps, gaps=gaps, notes=notes)


def _what_maintenance_frees(snapshot: Snapshot) -> list[str]:
    """Which names the maintenance DAG can free under rule 3: the chain's receivers older than the oldest MQ needs
    (none while AMQJRNINF is unusable), never the strays outside the chain."""
    chain = chain_of(snapshot)
    needed = oldest_needed(snapshot, chain)
    in_chain = {(r.name, r.library) for r in chain}
    strays = [
        r for r in snapshot.receivers if r.library == snapshot.journal.library and (r.name, r.library) not in in_chain
    ]
    if needed.blocks:
        deletable = (
            f"AMQJRNINF is unusable ({', '.join(needed.blocks)}): the maintenance DAG deletes nothing until "
            "RCDMQMIMG rewrites it, so run RCDMQMIMG first."
        )
    else:
        deletable = (
            f"{needed.position} of the {len(chain)} receivers of the journal are older than the oldest one MQ "
            f"needs ({chain[needed.position].name if chain else 'none'}): the maintenance DAG saves and "
            "deletes them."
        )
    if not strays:
        return [deletable]
    return [
        deletable,
        f"{len(strays)} receiver(s) in the library are not in the journal's chain (made by hand, or restored and "
        "not associated) and hold names too; the maintenance DAG keeps them: delete them by hand once saved if "
        "they are not needed.",
    ]


def _check(request: Request, snapshot: Snapshot) -> None:
    if request.kind is not RecoveryKind.NAMING:
        raise RecoveryRefused(request.kind.value, "is not a naming repair", "use the restore or expiry planners")
    if (request.host, request.qmgr) != (snapshot.host, snapshot.qmgr):
        raise RecoveryRefused(
            f"{request.qmgr} on {request.host}",
            f"the snapshot is of {snapshot.qmgr} on {snapshot.host}",
            "plan from a snapshot of the queue manager the request names",
        )
