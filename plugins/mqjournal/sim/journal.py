"""What IBM i does with a journal and its receivers: entries, threshold switching, the receiver chain, deletion.

Nothing MQ-specific lives here; MQ reacts to what this module reports (see `mq.py`).
"""

from __future__ import annotations

import math
from datetime import datetime

from mqjournal.errors import NextReceiverNameTaken
from mqjournal.names import next_receiver_name
from mqjournal.sim.joblog import CommandError, JobLog, escape, post
from mqjournal.sim.model import Journal, JournalReceiver, Partition, Segment, Status, qualified

SYSTEM_ENTRY_BYTES = 160  # the J/PR entry IBM i writes at the start of each receiver


def create_receiver(partition: Partition, library: str, name: str, *, threshold_kb: int, text: str = "") -> JournalReceiver:
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


def attach(partition: Partition, journal: Journal, receiver: JournalReceiver) -> JournalReceiver | None:
    """Make `receiver` the attached one; return the receiver that was detached, if any."""
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
        if old.first_sequence is not None:
            journal.history.append(
                Segment(
                    receiver=old.name,
                    library=old.library,
                    first_sequence=old.first_sequence,
                    last_sequence=old.last_sequence,
                    first_entry_at=old.first_entry_at,
                    last_entry_at=old.last_entry_at,
                )
            )
    journal.attach_counter += 1
    receiver.attach_order = journal.attach_counter
    receiver.status = Status.ATTACHED
    receiver.journal, receiver.journal_library = journal.name, journal.library
    receiver.attached_at = at
    journal.attached, journal.attached_library = receiver.name, receiver.library
    _append(partition, journal, receiver, 1, SYSTEM_ENTRY_BYTES, at)
    return old


def attached_receiver(partition: Partition, journal: Journal) -> JournalReceiver | None:
    if journal.attached is None:
        return None
    return partition.receivers.get(qualified(journal.attached_library, journal.attached))


def _append(partition: Partition, journal: Journal, receiver: JournalReceiver, count: int, entry_bytes: int, at: datetime) -> None:
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
        chunk = remaining if journal.switching_stopped or room <= 0 else min(remaining, max(1, math.ceil(room / entry_bytes)))
        _append(partition, journal, receiver, chunk, entry_bytes, at)
        remaining -= chunk
        if receiver.size_bytes >= receiver.threshold_kb * 1024 and journal.system_managed and not journal.switching_stopped:
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
            post(partition, journal.message_queue_library, journal.message_queue, "CPI70E3", journal.name, journal.library)
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
        new = partition.receivers.get(qualified(library, name))
        if new is None:
            raise escape("CPF2105", name, library, "JRNRCV")
    attach(partition, journal, new)
    journal.switching_stopped = False
    if current is not None:
        log.send("CPC7011", new.name, new.library, journal.name, journal.library)
    return new


def is_oldest_in_chain(partition: Partition, receiver: JournalReceiver) -> bool:
    """DLTJRNRCV deletes receivers in the order they were attached: none older may still be on the system."""
    if receiver.journal is None or receiver.attach_order is None:
        return True
    return not any(
        other.journal == receiver.journal
        and other.journal_library == receiver.journal_library
        and other.attach_order is not None
        and other.attach_order < receiver.attach_order
        for other in partition.receivers.values()
    )


def delete_receiver(partition: Partition, receiver: JournalReceiver) -> None:
    del partition.receivers[receiver.key]
