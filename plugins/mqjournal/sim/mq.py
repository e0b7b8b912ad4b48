"""What IBM MQ for IBM i does with its journal: workload, checkpoints, recovery points, AMQJRNINF, recovery passes.

The rules come from the seeds: a checkpoint's startup recovery point is held back by the oldest open unit of work;
the media recovery point is the oldest media image of any object and only moves when images are recorded, so a
damaged object (which cannot be imaged) holds it back. AMQ7460/AMQ7462 and AMQJRNINF are written at start, at each
receiver change MQ makes, and on RCDMQMIMG. A recovery pass that needs an entry whose receiver is not readable
(deleted, freed, or restored but not in the journal's receiver directory) sends AMQ7432.

A queue manager whose library was deleted stays defined (its IFS data and mqs.ini entry remain): STRMQM then ends
with CPF9810 naming the library, or CPF9801 naming the journal when the library is back without it. Which messages
a real STRMQM sends in those cases is not documented; these are the simulator's guesses (unverified). A queue
manager whose IFS directory is lost (sim/qmgrdir.py) has no queues left, and STRMQM ends with AMQ6235 naming the
directory (also a guess).

Clusters: RFRMQMCL (REFRESH CLUSTER) needs a running queue manager and a cluster it belongs to; REPOS(*YES) is refused
with AMQ9406 on a queue manager that is a full repository for that cluster. CHGMQM REPOS(name | ' ') promotes or
demotes it (REPOSNL namelists are not modelled: REPOS(' ') demotes it for every cluster).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from mqjournal.jrninf import format_amqjrninf
from mqjournal.names import qmgr_directory
from mqjournal.sim import journal as jrn
from mqjournal.sim.joblog import JobLog, escape, post
from mqjournal.sim.model import (
    ClusterMembership,
    Journal,
    JournalReceiver,
    MqObject,
    Partition,
    QueueManager,
    RecoveryPoint,
    UnitOfWork,
    UserSpace,
    Workload,
    qualified,
)

CHECKPOINT_ENTRIES = 3
IMAGE_ENTRIES_PER_OBJECT = 2
# AMQALMPX takes a checkpoint after 10,000 records, or after 30 minutes when at least 100 were written.
CHECKPOINT_RECORDS = 10_000
CHECKPOINT_MINUTES = 30
CHECKPOINT_MIN_RECORDS = 100
DEFAULT_OBJECTS = ("SYSTEM.DEFAULT.LOCAL.QUEUE", "SYSTEM.DEAD.LETTER.QUEUE", "SYSTEM.ADMIN.COMMAND.QUEUE")
STARS = "*" * 10


def journal_of(partition: Partition, qm: QueueManager) -> Journal:
    if qm.library not in partition.libraries:
        raise escape("CPF9810", qm.library)
    journal = partition.journals.get(qualified(qm.library, qm.journal_name))
    if journal is None:
        raise escape("CPF9801", "", qm.journal_name, qm.library)
    return journal


def find_queue_manager(partition: Partition, name: str) -> QueueManager:
    qm = partition.queue_manager(name)
    if qm is None:
        raise escape("AMQ8118", name)
    return qm


def create_queue_manager(
    partition: Partition,
    name: str,
    library: str,
    *,
    threshold_kb: int = 100_000,
    objects: tuple[str, ...] = DEFAULT_OBJECTS,
    workload: Workload | None = None,
    instance: str = "A",
    clusters: tuple[ClusterMembership, ...] = (),
) -> QueueManager:
    """CRTMQM + STRMQM: the library, QMQMMSG, the journal on its first receiver AMQ{x}000000, the objects."""
    if library not in partition.libraries:
        partition.libraries.append(library)
    partition.message_queue(library, "QMQMMSG")
    qm = QueueManager(
        name=name,
        library=library,
        instance=instance,
        workload=workload or Workload(),
        clusters=[c.model_copy() for c in clusters],
    )
    journal = Journal(name=qm.journal_name, library=library, id=partition.new_journal_id(), text="MQM LOCAL JOURNAL")
    partition.journals[journal.key] = journal
    first = jrn.create_receiver(
        partition, library, f"AMQ{instance}000000", threshold_kb=threshold_kb, text="MQM LOCAL JOURNAL RECEIVER"
    )
    jrn.attach(partition, journal, first)
    partition.queue_managers.append(qm)
    at = partition.tick()
    for object_name in ("QMGR", *objects):
        qm.objects.append(MqObject(name=object_name, type="*MQM" if object_name == "QMGR" else "*LCLQ"))
    _record_images(partition, qm, qm.objects, at)
    checkpoint(partition, qm, announce=True)
    return qm


def _write(partition: Partition, qm: QueueManager, count: int, entry_bytes: int, at: datetime) -> int:
    """Journal `count` entries for `qm`; returns the sequence number of the first. Reacts to receiver switches."""
    journal = journal_of(partition, qm)
    first = journal.last_sequence + 1
    switches = jrn.write_entries(partition, journal, count, entry_bytes, at)
    qm.records_since_checkpoint += count
    if switches:
        # The threshold was crossed: AMQALMPX takes a checkpoint, and MQ logs AMQ7460/7462 for the new receiver.
        checkpoint(partition, qm, announce=True)
    return first


def run_workload(partition: Partition, qm: QueueManager, minutes: int, at: datetime) -> None:
    if not qm.running or minutes <= 0:
        return
    _write(partition, qm, qm.workload.entries_per_minute * minutes, qm.workload.entry_bytes, at)
    since = qm.last_checkpoint_at or at
    if qm.records_since_checkpoint >= CHECKPOINT_RECORDS or (
        qm.records_since_checkpoint >= CHECKPOINT_MIN_RECORDS and at - since >= timedelta(minutes=CHECKPOINT_MINUTES)
    ):
        checkpoint(partition, qm, announce=False)


def advance(partition: Partition, until: datetime, step: timedelta = timedelta(minutes=1)) -> None:
    """Let simulated time pass: every running queue manager journals its workload, minute by minute."""
    minutes = max(1, int(step.total_seconds() // 60))
    # The partition keeps its own UTC offset whatever zone the caller counts in (its timestamps are local time).
    until = until.astimezone(partition.now.tzinfo)
    while partition.now + step <= until:
        partition.now += step
        for qm in partition.queue_managers:
            run_workload(partition, qm, minutes, partition.now)
    if partition.now < until:
        partition.now = until


def checkpoint(partition: Partition, qm: QueueManager, *, announce: bool) -> None:
    """Write a checkpoint; the startup recovery point is the older of its first record and the oldest open unit of
    work's first record.

    Why it only moves forward: MQ writes a unit of work's first log record when the unit of work begins, at the then
    end of the journal (`open_unit_of_work`), and a checkpoint records the units of work active at it, from which
    restart must replay (IBM support "Checkpoints in WebSphere MQ logging",
    https://ibm.com/support/pages/checkpoints-websphere-mq-logging; seeds "WebSphere MQ for iSeries journal usage": the
    checkpoint holds "the state of all transactions (that is, units of work) active at the time of the checkpoint", and
    "If the journal receiver named in AMQ7460 is not advanced, this indicates that there is an incomplete unit of
    work"). A unit of work open at this checkpoint was either open at the previous one (so it began no earlier than
    that checkpoint's point) or began after it. So the point can stall behind a long unit of work, never go back
    (tests/sim/test_mq_recovery_point.py). Only `impossible_old_unit_of_work`, a test device, moves it back.
    """
    at = partition.tick()
    journal = journal_of(partition, qm)
    first = journal.last_sequence + 1
    jrn.write_entries(partition, journal, CHECKPOINT_ENTRIES, 300, at)
    point = RecoveryPoint(sequence=first, at=at)
    if qm.open_units_of_work:
        oldest = min(qm.open_units_of_work, key=lambda u: u.started_sequence)
        if oldest.started_sequence < point.sequence:
            point = RecoveryPoint(sequence=oldest.started_sequence, at=oldest.started_at)
    qm.startup_point = point
    qm.records_since_checkpoint = 0
    qm.last_checkpoint_at = at
    if announce:
        announce_recovery_points(partition, qm)


def media_point(qm: QueueManager) -> RecoveryPoint:
    # While CRTMQM records the first images, a small threshold can switch receivers and so checkpoint before every
    # object has one: only imaged objects count, and with none yet the media point is the startup point.
    imaged = [(o.image_sequence, o.image_at) for o in qm.objects if o.image_at is not None]
    if not imaged:
        return startup_point(qm)
    sequence, at = min(imaged, key=lambda image: image[0])
    return RecoveryPoint(sequence=sequence, at=at)


def startup_point(qm: QueueManager) -> RecoveryPoint:
    # CRTMQM takes the first checkpoint, so every queue manager the model holds has one.
    if qm.startup_point is None:
        raise RuntimeError(f"simulator: queue manager {qm.name} has no checkpoint yet")
    return qm.startup_point


def oldest_needed(qm: QueueManager) -> RecoveryPoint:
    media, startup = media_point(qm), startup_point(qm)
    return media if media.sequence < startup.sequence else startup


def receiver_holding(partition: Partition, journal: Journal, sequence: int) -> JournalReceiver | None:
    """The receiver, still on the system, that holds entry `sequence`."""
    for receiver in partition.journal_receivers(journal):
        first, last = receiver.first_sequence, receiver.last_sequence
        if first is not None and last is not None and first <= sequence <= last:
            return receiver
    return None


def announce_recovery_points(partition: Partition, qm: QueueManager, log: JobLog | None = None) -> None:
    """AMQ7460 and AMQ7462 to QMQMMSG (and to the caller for DSPJRNDTA(*YES)), then AMQJRNINF."""
    journal = journal_of(partition, qm)
    for msg_id, point in (("AMQ7460", startup_point(qm)), ("AMQ7462", media_point(qm))):
        holder = receiver_holding(partition, journal, point.sequence)
        tokens = _point_tokens(qm, point, holder)
        post(partition, qm.library, "QMQMMSG", msg_id, *tokens, from_program="AMQALMPX", from_user="QMQM")
        if log is not None:
            log.send(msg_id, *tokens)
    needed = oldest_needed(qm)
    holder = receiver_holding(partition, journal, needed.sequence)
    data = format_amqjrninf(
        holder.name if holder else None, holder.library if holder else qm.library, needed.at.replace(tzinfo=None)
    )
    partition.user_spaces[qualified(qm.library, "AMQJRNINF")] = UserSpace(
        name="AMQJRNINF", library=qm.library, data=data
    )


def _point_tokens(qm: QueueManager, point: RecoveryPoint, holder: JournalReceiver | None) -> tuple[object, ...]:
    # MQ inserts 1-2 are numbers and 3-5 strings: the time, the receiver (asterisks once deleted), its library.
    return ("", "", _stamp(point.at), holder.name if holder else STARS, holder.library if holder else qm.library)


def _stamp(moment: datetime) -> datetime:
    # A *DTS field of the replacement data (mqmessages.py): the job shows it in its own date format.
    return moment


def _record_images(partition: Partition, qm: QueueManager, objects: list[MqObject], at: datetime) -> None:
    for obj in objects:
        obj.image_sequence = _write(partition, qm, IMAGE_ENTRIES_PER_OBJECT, 1_000, at)
        obj.image_at = at


def record_images(partition: Partition, qm: QueueManager, pattern: str, objtype: str, log: JobLog) -> int:
    """RCDMQMIMG: image every matching object that is not damaged, then checkpoint."""
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    selected = [o for o in qm.objects if _matches(o, pattern, objtype)]
    if not selected:
        raise escape("AMQ8147", "", "", "", "", pattern)
    at = partition.tick()
    damaged = [o for o in selected if o.damaged]
    for obj in damaged:
        # A damaged object cannot be imaged, so its media recovery record (and AMQ7462) stays where it was.
        log.send("AMQ7472", "", "", obj.name, obj.type.lstrip("*"))
    imaged = [o for o in selected if not o.damaged]
    _record_images(partition, qm, imaged, at)
    for obj in imaged:
        log.send("AMQ7086", "", "", obj.name, obj.type.lstrip("*"))
    checkpoint(partition, qm, announce=False)
    return len(imaged)


def _matches(obj: MqObject, pattern: str, objtype: str) -> bool:
    if objtype not in ("*ALL", obj.type) and not (objtype == "*Q" and obj.type.endswith("Q")):
        return False
    if pattern == "*ALL":
        return True
    if pattern.endswith("*"):
        return obj.name.startswith(pattern[:-1])
    return obj.name == pattern


def first_missing(partition: Partition, qm: QueueManager, from_sequence: int) -> int | None:
    """The first sequence number from `from_sequence` on whose receiver cannot be read, or None if all can."""
    journal = journal_of(partition, qm)
    covered = sorted(
        (r.first_sequence, r.last_sequence)
        for r in partition.journal_receivers(journal)
        if r.readable and r.first_sequence is not None and r.last_sequence is not None
    )
    if from_sequence > journal.last_sequence:
        # The journal has not reached the entry (a journal made anew, its old receivers not associated): missing.
        return from_sequence
    needed = from_sequence
    for first, last in covered:
        if last < needed:
            continue
        if first > needed:
            return needed
        needed = last + 1
    return needed if needed <= journal.last_sequence else None


def entry_time(partition: Partition, qm: QueueManager, sequence: int, fallback: datetime) -> datetime:
    journal = journal_of(partition, qm)
    for segment in journal.history:
        if segment.first_sequence <= sequence <= segment.last_sequence:
            return segment.first_entry_at if sequence == segment.first_sequence else fallback
    return fallback


def _recovery_pass(partition: Partition, qm: QueueManager, point: RecoveryPoint) -> None:
    missing = first_missing(partition, qm, point.sequence)
    if missing is None:
        return
    needed_at = point.at if missing == point.sequence else entry_time(partition, qm, missing, point.at)
    tokens = ("", "", _stamp(needed_at), qm.name)
    post(partition, qm.library, "QMQMMSG", "AMQ7432", *tokens, from_program="AMQZXMA0", from_user="QMQM")
    raise escape("AMQ7432", *tokens)


def start(partition: Partition, qm: QueueManager, log: JobLog) -> None:
    """STRMQM: a startup recovery pass from the startup recovery point, then a checkpoint and AMQ7460/7462."""
    if qm.running:
        raise escape("AMQ8042")
    if not qm.directory_present:
        # Its object definitions and their messages are in no library: without the directory MQ has nothing to run.
        raise escape("AMQ6235", "", "", qmgr_directory(qm.name))
    journal_of(partition, qm)  # the library and the journal must be there
    _recovery_pass(partition, qm, startup_point(qm))
    # Units of work in flight at the failure are backed out by the recovery pass.
    qm.open_units_of_work.clear()
    qm.running = True
    checkpoint(partition, qm, announce=True)
    log.send("AMQ8003", "", "", "9.4.0.0", "", qm.name)


def end(partition: Partition, qm: QueueManager, log: JobLog, *, record_images: bool) -> None:
    """ENDMQM: applications are disconnected (their units of work back out), images optionally, a checkpoint."""
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    qm.open_units_of_work.clear()
    if record_images:
        _record_images(partition, qm, [o for o in qm.objects if not o.damaged], partition.tick())
    checkpoint(partition, qm, announce=False)
    qm.running = False
    log.send("AMQ8004", "", "", "", "", qm.name)


def crash(partition: Partition, qm: QueueManager) -> None:
    """The partition lost power: no checkpoint, units of work left in flight for the next STRMQM to resolve."""
    qm.running = False


def recreate_object(partition: Partition, qm: QueueManager, pattern: str, objtype: str, log: JobLog) -> int:
    """RCRMQMOBJ: replay from each damaged object's media image; nothing to do for objects not damaged."""
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    selected = [o for o in qm.objects if _matches(o, pattern, objtype)]
    if not selected:
        raise escape("AMQ8147", "", "", "", "", pattern)
    recreated = 0
    for obj in selected:
        if not obj.damaged:
            continue
        if obj.image_at is None:
            raise RuntimeError(f"simulator: damaged object {obj.name} of {qm.name} has no media image")
        _recovery_pass(partition, qm, RecoveryPoint(sequence=obj.image_sequence, at=obj.image_at))
        obj.damaged = False
        recreated += 1
        log.send("AMQ7081", "", "", obj.name, obj.type.lstrip("*"))
    return recreated


def open_unit_of_work(partition: Partition, qm: QueueManager) -> UnitOfWork:
    """A unit of work begins now: its first record is written at the current end of the journal.

    It is open before that record is written: the write can cross the receiver's threshold, and the checkpoint that
    the switch sets off must count it, or the startup point would move past its first record."""
    at = partition.tick()
    qm.uow_counter += 1
    first = journal_of(partition, qm).last_sequence + 1
    uow = UnitOfWork(id=f"UOW{qm.uow_counter:06d}", started_sequence=first, started_at=at)
    qm.open_units_of_work.append(uow)
    _write(partition, qm, 1, qm.workload.entry_bytes, at)
    return uow


def impossible_old_unit_of_work(partition: Partition, qm: QueueManager, receiver: JournalReceiver) -> UnitOfWork:
    """A test device, not MQ: an open unit of work whose first record is in `receiver`, as if every checkpoint since
    had missed it. MQ cannot be in this state (a checkpoint records every active unit of work, see `checkpoint`) and
    the model never makes it; tests use it to move the recovery point back and prove that the executor trusts the
    live partition, not its plan, when a receiver is needed again."""
    if receiver.first_sequence is None or receiver.first_entry_at is None:
        raise ValueError(f"receiver {receiver.name} holds no entry to start a unit of work in")
    uow = open_unit_of_work(partition, qm)
    uow.started_sequence, uow.started_at = receiver.first_sequence, receiver.first_entry_at
    return uow


def put_messages(partition: Partition, qm: QueueManager, queue: str, count: int) -> None:
    """An application puts `count` persistent messages on a local queue: journalled, then held in its queue file."""
    obj = qm.object(queue)
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    if obj is None:
        raise escape("AMQ8147", "", "", "", "", queue)
    _write(partition, qm, count, qm.workload.entry_bytes, partition.tick())
    obj.messages += count


def end_unit_of_work(partition: Partition, qm: QueueManager, uow_id: str) -> None:
    qm.open_units_of_work = [u for u in qm.open_units_of_work if u.id != uow_id]
    _write(partition, qm, 1, 200, partition.tick())


def damage(partition: Partition, qm: QueueManager, object_name: str) -> None:
    obj = qm.object(object_name)
    if obj is None:
        raise KeyError(object_name)
    obj.damaged = True
    post(partition, qm.library, "QMQMMSG", "AMQ7472", "", "", obj.name, obj.type.lstrip("*"), from_program="AMQZLAA0")


# --- clusters ---------------------------------------------------------------------------------------------------


def refresh_cluster(partition: Partition, qm: QueueManager, cluster: str, repos: bool, log: JobLog) -> list[str]:
    """RFRMQMCL: refresh one cluster or, for '*', every cluster the queue manager belongs to."""
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    if cluster == "*":
        selected = list(qm.clusters)
    else:
        membership = qm.cluster(cluster)
        if membership is None:
            raise escape("AMQ9420", "", "", cluster)
        selected = [membership]
    if repos:
        full = [c for c in selected if c.full_repository]
        if full:
            raise escape("AMQ9406", "", "", full[0].name, qm.name)
    at = partition.tick()
    for membership in selected:
        membership.refresh_count += 1
        membership.last_refreshed_at = at
        membership.last_refresh_repos = repos
    log.send("AMQ8559")
    return [c.name for c in selected]


def set_repository(partition: Partition, qm: QueueManager, cluster: str | None, log: JobLog) -> None:
    """CHGMQM REPOS(name): full repository for that cluster (joining it if need be); REPOS(' '): for none."""
    if not qm.running:
        raise escape("AMQ8146", qm.name)
    for membership in qm.clusters:
        membership.full_repository = membership.name == cluster
    if cluster is not None and qm.cluster(cluster) is None:
        qm.clusters.append(ClusterMembership(name=cluster, full_repository=True))
    log.send("AMQ8005", "", "", "", "", qm.name)
