"""What IBM i does with a journal and its receivers: entries, threshold switching, the receiver chain, deletion,
creating a journal (CRTJRN) and associating restored receivers with it.

Nothing MQ-specific lives here; MQ reacts to what this module reports (see `mq.py`).

Association and sequence numbers (the simulator's model; IBM i's internals are not published):
- A journal's receiver directory is the set of receivers with ``associated`` set and the journal's name/library.
  Attaching a receiver puts it there. A restored receiver joins it only if the journal there has the identity the
  receiver was attached to (`restored_receiver_joins`); otherwise QSYS2.ASSOCIATE_JOURNAL_RECEIVER must do it
  (`associate_receivers`), and that works for any journal of the receiver's journal name and library.
- Whenever receivers join, the directory is rebuilt (`rebuild_directory`): ordered by original attach time with the
  attached receiver last, attach orders renumbered, and the previous/next links set between neighbours whose
  sequence numbers are contiguous (or that were already linked). A true gap stays a chain break.
- Sequence numbers are the journal's: the journal's last sequence number becomes at least that of every receiver
  joining it, so numbering continues after them. CRTJRN writes no entry on the new, empty receiver: the first entry
  written to the journal takes the number after the highest of the receivers associated by then. A restored journal
  keeps the numbering of its save and writes one entry to the receiver the system attaches to it.
"""

from __future__ import annotations

import math
from datetime import datetime
from itertools import pairwise

from mqjournal.errors import NextReceiverNameTaken, NoReceiverNameFree
from mqjournal.names import next_free_receiver_name, next_receiver_name
from mqjournal.sim.joblog import CommandError, JobLog, escape, post
from mqjournal.sim.model import Journal, JournalReceiver, Partition, Segment, Status, qualified

SYSTEM_ENTRY_BYTES = 160  # the J/PR entry IBM i writes at the start of each receiver


def create_receiver(
    partition: Partition, library: str, name: str, *, threshold_kb: int, text: str = ""
) -> JournalReceiver:
    if library not in partition.libraries:
        raise escape("CPF9810", library)
    if qualified(library, name) in partition.receivers:
        raise escape("CPF7010", name, library, "JRNRCV")
    if partition.faults.asp_full:
        raise escape("CPF9898", "Auxiliary storage pool 1 is full; the receiver was not created")
    receiver = JournalReceiver(
        name=name, library=library, threshold_kb=threshold_kb, text=text, created_at=partition.tick()
    )
    partition.receivers[receiver.key] = receiver
    return receiver


def attach(
    partition: Partition, journal: Journal, receiver: JournalReceiver, *, first_entry: bool = True
) -> JournalReceiver | None:
    """Make `receiver` the attached one; return the receiver that was detached, if any.

    `first_entry` writes the entry IBM i starts a receiver with when it follows another one (CRTJRN writes none).
    """
    if receiver.status is not Status.EMPTY:
        # Only a receiver that has never been attached can be attached.
        raise escape("CPF7013", receiver.name, receiver.library, journal.name)
    at = partition.tick()
    old = attached_receiver(partition, journal)
    if old is not None:
        old.detached_at = at
        old.status = Status.SAVED if old.fully_saved else Status.ONLINE
        old.next, old.next_library = receiver.name, receiver.library
        receiver.previous, receiver.previous_library = old.name, old.library
        if (segment := _segment(old)) is not None:
            journal.history.append(segment)
    journal.attach_counter += 1
    receiver.attach_order = journal.attach_counter
    receiver.status = Status.ATTACHED
    receiver.journal, receiver.journal_library, receiver.journal_id = journal.name, journal.library, journal.id
    receiver.associated = True
    receiver.attached_at = at
    journal.attached, journal.attached_library = receiver.name, receiver.library
    if first_entry:
        _append(partition, journal, receiver, 1, SYSTEM_ENTRY_BYTES, at)
    return old


def _segment(receiver: JournalReceiver) -> Segment | None:
    """The receiver's span of the journal, once it holds an entry (the first entry sets all four bounds at once)."""
    if (
        receiver.first_sequence is None
        or receiver.last_sequence is None
        or receiver.first_entry_at is None
        or receiver.last_entry_at is None
    ):
        return None
    return Segment(
        receiver=receiver.name,
        library=receiver.library,
        first_sequence=receiver.first_sequence,
        last_sequence=receiver.last_sequence,
        first_entry_at=receiver.first_entry_at,
        last_entry_at=receiver.last_entry_at,
    )


def attached_receiver(partition: Partition, journal: Journal) -> JournalReceiver | None:
    if journal.attached is None or journal.attached_library is None:
        return None
    return partition.receivers.get(qualified(journal.attached_library, journal.attached))


def _append(
    partition: Partition, journal: Journal, receiver: JournalReceiver, count: int, entry_bytes: int, at: datetime
) -> None:
    first = journal.last_sequence + 1
    journal.last_sequence += count
    if receiver.first_sequence is None:
        receiver.first_sequence, receiver.first_entry_at = first, at
    receiver.last_sequence, receiver.last_entry_at = journal.last_sequence, at
    receiver.entries += count
    receiver.size_bytes += count * entry_bytes


def write_entries(
    partition: Partition, journal: Journal, count: int, entry_bytes: int, at: datetime
) -> list[tuple[JournalReceiver, JournalReceiver]]:
    """Append `count` entries; switch receivers at the threshold as MNGRCV(*SYSTEM) does.

    Returns the (detached, attached) pairs of every switch, for MQ to react to.
    """
    switches: list[tuple[JournalReceiver, JournalReceiver]] = []
    remaining = count
    while remaining > 0:
        receiver = attached_receiver(partition, journal)
        if receiver is None:
            raise escape("CPF9898", f"Journal {journal.name} in {journal.library} has no receiver attached")
        room = receiver.threshold_kb * 1024 - receiver.size_bytes
        chunk = (
            remaining
            if journal.switching_stopped or room <= 0
            else min(remaining, max(1, math.ceil(room / entry_bytes)))
        )
        _append(partition, journal, receiver, chunk, entry_bytes, at)
        remaining -= chunk
        if (
            receiver.size_bytes >= receiver.threshold_kb * 1024
            and journal.system_managed
            and not journal.switching_stopped
        ):
            new = system_change(partition, journal, receiver)
            if new is not None:
                switches.append((receiver, new))
    return switches


def system_change(partition: Partition, journal: Journal, receiver: JournalReceiver) -> JournalReceiver | None:
    """The system-managed change at the threshold, under the seeds' naming rules 1 and 2."""
    existing = {r.name for r in partition.receivers_in(receiver.library)}
    try:
        name = str(next_receiver_name(receiver.name, existing))
    except NextReceiverNameTaken:
        # Rule 2: CPI70E3, switching stops, the attached receiver keeps growing past its threshold.
        journal.switching_stopped = True
        post(partition, "QSYS", "QSYSOPR", "CPI70E3", journal.name, journal.library)
        if (journal.message_queue_library, journal.message_queue) != ("QSYS", "QSYSOPR"):
            post(
                partition,
                journal.message_queue_library,
                journal.message_queue,
                "CPI70E3",
                journal.name,
                journal.library,
            )
        return None
    try:
        new = create_receiver(partition, receiver.library, name, threshold_kb=receiver.threshold_kb, text=receiver.text)
    except CommandError:
        journal.switching_stopped = True
        post(partition, "QSYS", "QSYSOPR", "CPI70E3", journal.name, journal.library)
        return None
    new.owner = receiver.owner
    attach(partition, journal, new)
    post(partition, journal.message_queue_library, journal.message_queue, "CPF7020", receiver.name, receiver.library)
    return new


def change_journal(partition: Partition, journal: Journal, receiver_spec: str, log: JobLog) -> JournalReceiver:
    """CHGJRN JRNRCV(*GEN | LIB/NAME): attach a new receiver by hand; this also resumes system switching."""
    current = attached_receiver(partition, journal)
    if receiver_spec == "*GEN":
        if current is None:
            raise escape("CPF9898", f"Journal {journal.name} in {journal.library} has no receiver attached")
        existing = {r.name for r in partition.receivers_in(current.library)}
        try:
            name = str(next_receiver_name(current.name, existing))
        except NextReceiverNameTaken as exc:
            raise escape("CPF7010", exc.obj, current.library, "JRNRCV") from None
        new = create_receiver(partition, current.library, name, threshold_kb=current.threshold_kb, text=current.text)
        new.owner = current.owner
    else:
        library, _, name = receiver_spec.rpartition("/")
        library = library or journal.library
        named = partition.receivers.get(qualified(library, name))
        if named is None:
            raise escape("CPF2105", name, library, "JRNRCV")
        new = named
    attach(partition, journal, new)
    journal.switching_stopped = False
    if current is not None:
        log.send("CPC7011", new.name, new.library, journal.name, journal.library)
    return new


def is_oldest_in_chain(partition: Partition, receiver: JournalReceiver) -> bool:
    """DLTJRNRCV deletes receivers in the order they were attached: none older may still be in the directory."""
    if not receiver.associated or receiver.journal is None or receiver.attach_order is None:
        return True
    return not any(
        other.associated
        and other.journal == receiver.journal
        and other.journal_library == receiver.journal_library
        and other.attach_order is not None
        and other.attach_order < receiver.attach_order
        for other in partition.receivers.values()
    )


def delete_receiver(partition: Partition, receiver: JournalReceiver) -> None:
    del partition.receivers[receiver.key]


# --- journals made by hand, restored journals, association ---------------------------------------------------


def create_journal(
    partition: Partition,
    library: str,
    name: str,
    receiver: JournalReceiver,
    *,
    system_managed: bool = True,
    delete_receivers: bool = False,
    message_queue: tuple[str, str] = ("QSYS", "QSYSOPR"),
    text: str = "",
) -> Journal:
    """CRTJRN: a new journal, with a new identity, on an empty receiver (checks are the caller's)."""
    journal = Journal(
        name=name,
        library=library,
        id=partition.new_journal_id(),
        text=text,
        system_managed=system_managed,
        delete_receivers=delete_receivers,
        message_queue_library=message_queue[0],
        message_queue=message_queue[1],
    )
    partition.journals[journal.key] = journal
    attach(partition, journal, receiver, first_entry=False)
    return journal


def restore_journal(
    partition: Partition, saved: Journal, threshold_kb: int, text: str
) -> tuple[Journal, JournalReceiver | None]:
    """A journal restored from a save: same identity and numbering; the system attaches a new receiver to it.

    The new receiver's name is the successor, by seed rule 1, of the receiver attached when the journal was saved
    (the next free one if that is taken) -- the name a later save of the receivers usually holds (MQ's restore
    pitfall). Returns the journal and the receiver attached, if a name was free.
    """
    journal = saved.model_copy(deep=True)
    journal.attached = journal.attached_library = None
    journal.switching_stopped = False
    partition.journals[journal.key] = journal
    previous = saved.attached or f"AMQ{_instance(saved.name)}000000"
    existing = {r.name for r in partition.receivers_in(journal.library)}
    try:
        name = str(next_free_receiver_name(previous, existing))
    except (NoReceiverNameFree, ValueError):
        return journal, None
    receiver = create_receiver(partition, journal.library, name, threshold_kb=threshold_kb, text=text)
    attach(partition, journal, receiver)
    return journal, receiver


def _instance(journal_name: str) -> str:
    return journal_name[3] if len(journal_name) == 7 and journal_name.startswith("AMQ") else "A"


def restored_receiver_joins(partition: Partition, receiver: JournalReceiver) -> Journal | None:
    """The journal a restored receiver rejoins by itself: its own journal, with the same identity, if present."""
    if receiver.journal is None or receiver.journal_library is None:
        return None
    journal = partition.journals.get(qualified(receiver.journal_library, receiver.journal))
    if journal is None or not receiver.journal_id or journal.id != receiver.journal_id:
        return None
    return journal


def associate(partition: Partition, journal: Journal, receivers: list[JournalReceiver]) -> None:
    """Put `receivers` in `journal`'s directory, in their original attach order, and continue its numbering."""
    for receiver in receivers:
        receiver.associated = True
        receiver.journal, receiver.journal_library, receiver.journal_id = journal.name, journal.library, journal.id
        if receiver.last_sequence is not None:
            journal.last_sequence = max(journal.last_sequence, receiver.last_sequence)
    rebuild_directory(partition, journal)


def rebuild_directory(partition: Partition, journal: Journal) -> None:
    """Order the directory by original attach time (the attached receiver last) and relink contiguous neighbours."""
    members = [
        r
        for r in partition.receivers.values()
        if r.associated and r.journal == journal.name and r.journal_library == journal.library
    ]
    members.sort(
        key=lambda r: (
            r.name == journal.attached and r.library == journal.attached_library,
            r.attached_at or r.created_at,
            r.attach_order or 0,
        )
    )
    for order, receiver in enumerate(members, start=1):
        receiver.attach_order = order
    journal.attach_counter = max(journal.attach_counter, len(members))
    for older, newer in pairwise(members):
        contiguous = older.last_sequence is not None and (
            newer.first_sequence is None or newer.first_sequence == older.last_sequence + 1
        )
        linked = (older.next, older.next_library) == (newer.name, newer.library) or (
            newer.previous,
            newer.previous_library,
        ) == (older.name, older.library)
        if contiguous or linked:
            older.next, older.next_library = newer.name, newer.library
            newer.previous, newer.previous_library = older.name, older.library
    known = {(s.receiver, s.library, s.first_sequence) for s in journal.history}
    for receiver in members:
        if receiver.status is Status.ATTACHED or receiver.first_sequence is None:
            continue
        segment = _segment(receiver)
        if (receiver.name, receiver.library, receiver.first_sequence) not in known and segment is not None:
            journal.history.append(segment)
    journal.history.sort(key=lambda s: s.first_sequence)


def generic_match(pattern: str, name: str) -> bool:
    """IBM i generic names: *ALL, PREFIX*, or an exact name."""
    if pattern == "*ALL":
        return True
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


def associate_receivers(
    partition: Partition, journal: Journal, receiver_library: str | list[str], receiver_name: str
) -> list[JournalReceiver]:
    """QSYS2.ASSOCIATE_JOURNAL_RECEIVER: every receiver of `receiver_library` matching `receiver_name` that was
    attached to a journal of this name and library (whatever its identity) and is not in its directory yet.

    `receiver_library` may be the libraries of the library list: IBM allows a generic receiver name with *LIBL
    (only *ALL with *LIBL is refused; https://www.ibm.com/support/knowledgecenter/ssw_ibm_i_75/rzajq/rzajqudfassocjrn.htm).
    Returns the receivers associated, in directory order.
    """
    libraries = [receiver_library] if isinstance(receiver_library, str) else list(receiver_library)
    chosen = [
        r
        for library in libraries
        for r in partition.receivers_in(library)
        if generic_match(receiver_name, r.name)
        and not r.associated
        and r.journal == journal.name
        and r.journal_library == journal.library
        and r.status is not Status.EMPTY
    ]
    if chosen:
        associate(partition, journal, chosen)
    return sorted(chosen, key=lambda r: r.attach_order or 0)
