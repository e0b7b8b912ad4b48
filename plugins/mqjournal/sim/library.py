"""Whole libraries on the simulated partition: SAVLIB to a save file, RSTLIB from it, DLTLIB, and the restore of
single objects (receivers, the journal) that RSTOBJ shares with RSTLIB.

What a library save holds (`model.LibraryImage` plus the receivers as `SaveFile.objects`):
- the journal: its definition, its identity, its numbering and the name of the receiver attached at save time;
- every receiver, deep-copied as SAVOBJ copies it (the attached one as saved while attached; detached ones become
  SAVED and fully saved when UPDHST(*YES), the default);
- user spaces (AMQJRNINF) and message queue descriptions (QMQMMSG; IBM i does not save the messages).
Save files that live in the library are not saved, and neither is the queue manager's IFS directory (its object
definitions and their messages): that is not in the library, SAV saves it (sim/qmgrdir.py).

RSTLIB restores in IBM i's order: the journal, then the other objects, then the receivers. A journal restored where
none exists keeps its saved identity, and the system creates and attaches a new receiver named by seed rule 1 after
the one attached at save time (journal.restore_journal) -- the name that a later save usually holds, so a later
RSTOBJ of that receiver is refused with CPF2112 (the documented MQ restore pitfall). An existing journal, and
existing receivers that are not FREED, are not replaced (diagnostic CPF2112, the command ends with CPF3773).

DLTLIB deletes the library and every object in it. A queue manager whose library it is ends at once, as if the
partition had lost power (`mq.crash`), and stays defined: STRMQM then fails naming the missing library.

Refused commands raise before changing anything; a partial restore is IBM i's own partial success (CPF3773).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from mqjournal.sim import journal as jrn
from mqjournal.sim import mq
from mqjournal.sim.joblog import CommandError, JobLog, escape
from mqjournal.sim.model import (
    Journal,
    JournalReceiver,
    LibraryImage,
    MessageQueue,
    Partition,
    SavedObject,
    SaveFile,
    Status,
    qualified,
)

# Libraries of the operating system and the job's library list: DLTLIB cannot get them.
SYSTEM_LIBRARIES = frozenset({"QSYS", "QSYS2", "QGPL", "QUSRSYS", "QHLPSYS", "QTEMP", "QRECOVERY", "QSPL", "QMQM"})
OBJECT_TYPES = frozenset({"*ALL", "*JRN", "*JRNRCV", "*USRSPC", "*MSGQ", "*FILE"})


@dataclass(frozen=True)
class Omit:
    """One OMITOBJ element: (library/name type), names generic or *ALL."""

    library: str
    name: str
    objtype: str

    def covers(self, library: str, name: str, objtype: str) -> bool:
        return (
            self.library in ("*ALL", library)
            and jrn.generic_match(self.name, name)
            and self.objtype in ("*ALL", objtype)
        )


def omitted(omits: list[Omit], library: str, name: str, objtype: str) -> bool:
    return any(o.covers(library, name, objtype) for o in omits)


# --- saving an attached receiver ---------------------------------------------------------------------------------

# IBM i sends a diagnostic when a save takes the attached receiver ("If you save a journal receiver that is currently
# attached, you receive a diagnostic message", IBM i "Saving journals and journal receivers", rzaiu; mirrored at
# http://setgetweb.com/p/i5/rzaiurzaiu135.htm). The save still completes: the diagnostic goes to the job log (stdout
# with `system`) before the completion message. Its message ID was not found in any public source, so the ID here is
# the simulator's assumption (messages.py says so); clients must not key off it.
ATTACHED_SAVE_DIAGNOSTIC = "CPF3758"


def attached_receiver_saved(receiver: JournalReceiver, log: JobLog) -> None:
    log.send(
        ATTACHED_SAVE_DIAGNOSTIC,
        receiver.name,
        receiver.library,
        receiver.journal or "",
        receiver.journal_library or "",
    )


# --- SAVLIB -----------------------------------------------------------------------------------------------------


def save_library(
    partition: Partition, library: str, save_file: SaveFile, omits: list[Omit], *, update_history: bool, log: JobLog
) -> int:
    """SAVLIB LIB(library) DEV(*SAVF): every object of the library not omitted. Returns the number saved."""
    journals = [
        j.model_copy(deep=True)
        for j in partition.journals.values()
        if j.library == library and not omitted(omits, library, j.name, "*JRN")
    ]
    spaces = [
        u.model_copy(deep=True)
        for u in partition.user_spaces.values()
        if u.library == library and not omitted(omits, library, u.name, "*USRSPC")
    ]
    queues = [
        MessageQueue(name=q.name, library=q.library)
        for q in partition.message_queues.values()
        if q.library == library and not omitted(omits, library, q.name, "*MSGQ")
    ]
    chosen = [
        r
        for r in sorted(partition.receivers_in(library), key=lambda r: r.name)
        if not omitted(omits, library, r.name, "*JRNRCV")
    ]
    count = len(journals) + len(spaces) + len(queues) + len(chosen)
    if count == 0:
        raise escape("CPF3770", library)
    at = partition.tick()
    image = LibraryImage(saved_at=at, journals=journals, user_spaces=spaces, message_queues=queues)
    receivers = [
        SavedObject(receiver=r.model_copy(deep=True), saved_at=at, saved_while_attached=r.status is Status.ATTACHED)
        for r in chosen
    ]
    # Nothing is refused past this point: update the receivers' save history and fill the save file.
    for saved in receivers:
        if saved.saved_while_attached:
            # A queue manager library always holds its journal's attached receiver, even with MQ ended.
            attached_receiver_saved(saved.receiver, log)
    if update_history:
        for saved in receivers:
            receiver = partition.receivers[saved.receiver.key]
            receiver.saved_at = at
            if not saved.saved_while_attached and receiver.status is not Status.EMPTY:
                receiver.fully_saved = True
                if receiver.status is not Status.FREED:
                    receiver.status = Status.SAVED
    save_file.clear()
    save_file.kind = "LIB"
    save_file.saved_library = library
    save_file.objects = receivers
    save_file.library_image = image
    log.send("CPC3722", str(count), library)
    return count


# --- restoring single objects -------------------------------------------------------------------------------------


def restore_receiver(partition: Partition, saved: SavedObject, target: str, log: JobLog) -> bool:
    """Restore one receiver into `target`; False (with its diagnostic in `log`) when IBM i refuses it."""
    name = saved.receiver.name
    if target != saved.receiver.library:
        log.send("CPF707F", name, saved.receiver.library)
        return False
    existing = partition.receivers.get(qualified(target, name))
    if existing is not None and existing.status is not Status.FREED:
        log.send("CPF2112", name, target, "JRNRCV")
        return False
    receiver = saved.receiver.model_copy(deep=True)
    if receiver.status is Status.FREED:
        pass  # a receiver saved after its storage was freed: only its description was saved, it comes back freed
    elif receiver.status is not Status.EMPTY:
        receiver.status = Status.PARTIAL if saved.saved_while_attached else Status.SAVED
    receiver.saved_at = saved.saved_at
    receiver.fully_saved = not saved.saved_while_attached
    receiver.locked_by_job = None
    receiver.associated = False
    partition.receivers[receiver.key] = receiver
    # A restored receiver rejoins its journal's directory only if that very journal (same identity) is there.
    journal = jrn.restored_receiver_joins(partition, receiver)
    if journal is not None:
        jrn.associate(partition, journal, [receiver])
    return True


def restore_journal(partition: Partition, saved: Journal, save_file: SaveFile, log: JobLog) -> bool:
    """Restore a journal from a library save; an existing journal is not replaced."""
    if saved.key in partition.journals:
        log.send("CPF2112", saved.name, saved.library, "JRN")
        return False
    attached_at_save = (saved.attached, saved.attached_library)
    template = next(
        (s.receiver for s in save_file.objects if (s.receiver.name, s.receiver.library) == attached_at_save), None
    )
    threshold = template.threshold_kb if template is not None else 100_000
    text = template.text if template is not None else "MQM LOCAL JOURNAL RECEIVER"
    journal, created = jrn.restore_journal(partition, saved, threshold, text)
    if created is not None and template is not None:
        created.owner = template.owner
    # Receivers restored earlier (RSTOBJ before the journal) that belong to this very journal join it now.
    waiting = [
        r
        for r in partition.receivers_in(journal.library)
        if not r.associated and jrn.restored_receiver_joins(partition, r) is journal
    ]
    if waiting:
        jrn.associate(partition, journal, waiting)
    return True


# --- RSTLIB -------------------------------------------------------------------------------------------------------


def restore_library(partition: Partition, save_file: SaveFile, library: str, omits: list[Omit], log: JobLog) -> int:
    """RSTLIB SAVLIB(library) DEV(*SAVF): recreate the library if need be and restore what is not omitted."""
    image = save_file.library_image
    if image is None or save_file.saved_library != library:
        raise escape("CPF3780", library)
    qm = next((q for q in partition.queue_managers if q.library == library), None)
    if qm is not None and qm.running:
        # MQ's jobs hold the journal and the queue manager's files: the restore cannot allocate them.
        raise escape("CPF9803", "", qm.journal_name, library)
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the library cannot be restored")
    if library not in partition.libraries:
        partition.libraries.append(library)
    restored = refused = 0
    for journal in image.journals:
        if omitted(omits, library, journal.name, "*JRN"):
            continue
        if restore_journal(partition, journal, save_file, log):
            restored += 1
        else:
            refused += 1
    for space in image.user_spaces:
        if not omitted(omits, library, space.name, "*USRSPC"):
            partition.user_spaces[space.key] = space.model_copy(deep=True)
            restored += 1
    for queue in image.message_queues:
        if not omitted(omits, library, queue.name, "*MSGQ"):
            partition.message_queue(queue.library, queue.name)  # restored empty, or kept with its messages
            restored += 1
    for saved in save_file.objects:
        if omitted(omits, library, saved.receiver.name, "*JRNRCV"):
            continue
        if restore_receiver(partition, saved, library, log):
            restored += 1
        else:
            refused += 1
    if refused:
        raise CommandError(log.send("CPF3773", str(restored), str(refused), library), log.messages)
    log.send("CPC3703", str(restored), library, library)
    return restored


# --- RSTOBJ from a save file ----------------------------------------------------------------------------------------


def restore_objects(
    partition: Partition,
    save_file: SaveFile,
    saved_library: str,
    target: str,
    patterns: list[str],
    objtype: str,
    log: JobLog,
) -> int:
    """RSTOBJ: receivers (and, from a library save, the journal) matching `patterns`, journal first."""
    if save_file.saved_library != saved_library or save_file.empty:
        raise escape("CPF3780", saved_library)
    journals: list[Journal] = []
    if objtype in ("*ALL", "*JRN") and save_file.library_image is not None:
        journals = [
            j for j in save_file.library_image.journals if any(fnmatch.fnmatchcase(j.name, p) for p in patterns)
        ]
    receivers: list[SavedObject] = []
    if objtype in ("*ALL", "*JRNRCV"):
        receivers = [s for s in save_file.objects if any(fnmatch.fnmatchcase(s.receiver.name, p) for p in patterns)]
    if not journals and not receivers:
        raise escape("CPF3780", saved_library)
    if target not in partition.libraries:
        raise escape("CPF9810", target)
    restored = refused = 0
    for journal in journals:
        if target != journal.library:
            log.send("CPF707F", journal.name, journal.library)
            refused += 1
        elif restore_journal(partition, journal, save_file, log):
            restored += 1
        else:
            refused += 1
    for saved in receivers:
        if restore_receiver(partition, saved, target, log):
            restored += 1
        else:
            refused += 1
    if refused:
        raise CommandError(log.send("CPF3773", str(restored), str(refused), target), log.messages)
    log.send("CPC3703", str(restored), saved_library, target)
    return restored


# --- DLTLIB -------------------------------------------------------------------------------------------------------


def delete_library(partition: Partition, library: str, log: JobLog) -> None:
    """DLTLIB: the library and every object in it; a queue manager whose library it is ends abruptly."""
    if library in SYSTEM_LIBRARIES:
        raise escape("CPF2113", library)
    if library not in partition.libraries:
        raise escape("CPF2110", library)
    locked: list[JournalReceiver] = [r for r in partition.receivers_in(library) if r.locked_by_job is not None]
    if locked:
        # A job waiting on an inquiry holds one of its receivers.
        raise escape("CPF2114", locked[0].name, library, "JRNRCV")
    for qm in partition.queue_managers:
        if qm.library == library and qm.running:
            mq.crash(partition, qm)
    for table in (
        partition.journals,
        partition.receivers,
        partition.user_spaces,
        partition.message_queues,
        partition.save_files,
    ):
        for key in [k for k, v in table.items() if v.library == library]:
            del table[key]
    partition.libraries.remove(library)
    log.send("CPC2194", library)
