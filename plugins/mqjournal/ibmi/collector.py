"""Collect one queue manager's journal state into a `mqjournal.snapshot/v1` record.

Order matters: the checkpoint first (so AMQJRNINF and AMQ7460/7462 are fresh), then everything else in one SSH
round trip of batched SELECTs; a second only if AMQJRNINF must be read as bytes. The collector reports what the
partition says; it decides nothing about which receivers may go (that is the planner's job).
"""

from __future__ import annotations

import binascii
import codecs
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from mqjournal import msgformats
from mqjournal.errors import MqJournalError
from mqjournal.ibmi import asp, capabilities, commands
from mqjournal.ibmi.db2out import Db2Failure, Row, check_sql_runner, parse_results, value
from mqjournal.ibmi.readings import PartitionZone, cl_messages, db2_time
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.snapshot import (
    Checkpoint,
    CommandMessage,
    DamagedObject,
    JournalRef,
    QueueMessage,
    Receiver,
    RecoveryPoint,
    Snapshot,
    UndecodableMessage,
)

# JOURNAL_RECEIVER_INFO.SIZE is read as kilobytes, like THRESHOLD (IBM's column text was not retrievable).
SIZE_UNIT_BYTES = 1024
DEFAULT_LOOKBACK_DAYS = 7

log = logging.getLogger(__name__)


class CollectionFailed(MqJournalError):
    """A queue manager's state could not be read completely; no snapshot was written for it."""


@dataclass(frozen=True)
class Target:
    """One queue manager journal to collect."""

    qmgr: str
    library: str
    journal: str
    instance: str
    journal_queue: tuple[str, str] = ("QSYS", "QSYSOPR")


def collect(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    run_id: str,
    tz: PartitionZone,
    since: datetime | None = None,
    change_receiver: bool = False,
    checkpoint: bool = True,
) -> Snapshot:
    """Checkpoint, then read. `tz` is the partition's zone as discovered; `since` the previous collection (default: a
    week).

    Without `checkpoint` (a dry run) nothing on the partition changes: no CHGJRN, no RCDMQMIMG; AMQJRNINF and the
    recovery points are then as MQ last wrote them.
    """
    if not checkpoint:
        return read_state(session, target, host=host, run_id=run_id, tz=tz, since=since)
    messages: list[CommandMessage] = []
    if change_receiver:
        out = session.run(commands.change_receiver(target.library, target.journal))
        messages.extend(cl_messages(out.stdout, out.stderr))

    out = session.run(commands.record_media_images(target.qmgr))
    messages.extend(cl_messages(out.stdout, out.stderr))
    forced = Checkpoint(forced=True, ok=out.exit_status == 0, messages=messages)
    return read_state(session, target, host=host, run_id=run_id, tz=tz, since=since, checkpoint=forced)


def read_state(
    session: IbmiSession,
    target: Target,
    *,
    host: str,
    run_id: str,
    tz: PartitionZone,
    since: datetime | None = None,
    checkpoint: Checkpoint | None = None,
) -> Snapshot:
    """The journal's state as it is now, in one round trip (two if AMQJRNINF must be read as bytes).

    Without `checkpoint` nothing is changed on the host: the executor re-reads this way right before deleting.
    """
    # MESSAGE_TIMESTAMP is local time: `since` is written in the offset in force at `since`, not today's, so a window
    # across the start of DST does not lose its first hour (one across its end reads the repeated hour whole).
    window = tz.earliest_local(since, datetime.now(UTC)) if since else None
    # What this partition's release has: read once per session (one round trip), then cached.
    caps = capabilities.read(session)
    caps.require("collect")
    tokens = caps.has_column("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS")
    statements = [
        commands.host_clock(),
        commands.amqjrninf_text(target.library),
        commands.receivers(target.library, target.journal, target.instance),
        commands.latest_recovery_points(target.library, with_tokens=tokens),
        commands.messages_since(
            target.library, target.journal, target.journal_queue, window, DEFAULT_LOOKBACK_DAYS, with_tokens=tokens
        ),
    ]
    formats = caps.has("QSYS2.MESSAGE_FILE_DATA")
    if formats:
        statements.append(commands.message_formats(msgformats.MESSAGE_FILES))
    if caps.has("QSYS2.ASP_INFO"):
        statements.append(commands.journal_asp_usage(target.library, target.journal))
    clock, jrninf, chain, points, recent, *more = _results(session, target, statements, expect=len(statements))
    declared = _declared(more.pop(0) if formats else None)
    usage = asp.from_result(more[0]) if more else None
    clock_row = _rows(target, clock, "the partition clock")[0]
    zone = tz.again(clock_row, f"{target.qmgr} ({target.library})")
    collected_at = db2_time(value(clock_row, "NOW"), zone)
    checkpoint = checkpoint or Checkpoint(forced=False, ok=False)
    if checkpoint.ok:
        checkpoint = checkpoint.model_copy(update={"at": collected_at})

    raw = _amqjrninf(session, target, jrninf)
    readings = Readings(target, declared, collected_at)
    point_rows = _rows(target, points, "AMQ7460/AMQ7462")
    latest = _latest_points(point_rows, zone, readings)
    recent_rows = _rows(target, recent, "MESSAGE_QUEUE_INFO")
    # An undecodable newest point is kept with the messages even when older than the window: it is what was not read.
    shown = {(r["MESSAGE_ID"], r["MESSAGE_TIMESTAMP"]) for r in recent_rows}
    kept = [r for r in point_rows if readings.undecodable(r) and (r["MESSAGE_ID"], r["MESSAGE_TIMESTAMP"]) not in shown]
    messages = [_message(row, zone) for row in kept + recent_rows if _about_journal(row, target, readings)]
    messages.sort(key=lambda m: m.at)
    try:
        # What the partition returned is validated by the contract, which refuses a missing value with its name.
        return Snapshot.model_validate(
            {
                "run_id": run_id,
                "collected_at": collected_at,
                "host": host,
                "qmgr": target.qmgr,
                "qmgr_library": target.library,
                "journal": JournalRef(name=target.journal, library=target.library),
                "checkpoint": checkpoint,
                "amqjrninf": raw,
                "startup_recovery": latest.get("AMQ7460"),
                "media_recovery": latest.get("AMQ7462"),
                "receivers": [_receiver(row, zone) for row in _rows(target, chain, "JOURNAL_RECEIVER_INFO")],
                "messages": messages,
                "damaged_objects": _damaged_objects(messages, readings),
                "entry_needed_at": _entry_needed(messages, zone, readings),
                "undecodable_messages": _undecodable(messages, readings),
                "asp_number": usage.asp_number if usage else None,
                "asp_capacity_bytes": usage.capacity_bytes if usage else None,
                "asp_available_bytes": usage.available_bytes if usage else None,
            }
        )
    except ValueError as exc:
        raise CollectionFailed(
            f"{target.qmgr} ({target.library})",
            f"the partition returned data that is not a valid snapshot: {exc}",
            "check the receivers and messages on the host; nothing was written for this queue manager",
        ) from None


def read_receivers(session: IbmiSession, target: Target, *, tz: PartitionZone) -> list[Receiver]:
    """The journal's receivers as the host shows them now, in one round trip: what a step reads again after a command
    that changes them (SAVOBJ sets their save time and status), where `read_state` would also read the messages,
    AMQJRNINF and the recovery points it does not look at. Nothing is changed on the host."""
    caps = capabilities.read(session)
    caps.require("collect")
    statements = [commands.host_clock(), commands.receivers(target.library, target.journal, target.instance)]
    clock, chain = _results(session, target, statements, expect=len(statements))
    zone = tz.again(_rows(target, clock, "the partition clock")[0], f"{target.qmgr} ({target.library})")
    try:
        return [_receiver(row, zone) for row in _rows(target, chain, "JOURNAL_RECEIVER_INFO")]
    except ValueError as exc:
        raise CollectionFailed(
            f"{target.qmgr} ({target.library})",
            f"the partition returned receivers that are not valid: {exc}",
            "check the receivers on the host (WRKJRNA); nothing was recorded for them",
        ) from None


def _results(session: IbmiSession, target: Target, statements: list[str], *, expect: int) -> list:
    out = session.run(commands.sql(*statements, runner=session.sql_runner))
    check_sql_runner(session, out)
    results = parse_results(out.stdout)
    if len(results) != expect:
        raise CollectionFailed(
            f"{target.qmgr} ({target.library})",
            f"expected {expect} SQL results, got {len(results)}: {out.stderr.strip() or out.stdout[-200:]}",
            "check that the db2 utility and the QSYS2 services are available to the user profile",
        )
    return results


def _rows(target: Target, result: list[Row] | Db2Failure, what: str) -> list[Row]:
    if isinstance(result, Db2Failure):
        raise CollectionFailed(
            f"{target.qmgr} ({target.library})",
            f"reading {what} failed with {result.msg_id} (SQLSTATE {result.sqlstate}): {result.text}",
            "check the SQL services and the user profile's authority; nothing was written for this queue manager",
            msg_id=result.msg_id,
        )
    return result


def _amqjrninf(session: IbmiSession, target: Target, result: list[Row] | Db2Failure) -> str | None:
    """The 37 characters, from the character column or else from the bytes decoded as EBCDIC; None if unreadable."""
    if not isinstance(result, Db2Failure) and result and result[0].get("AMQJRNINF") is not None:
        return result[0]["AMQJRNINF"]
    (binary,) = _results(session, target, [commands.amqjrninf_binary(target.library)], expect=1)
    if isinstance(binary, Db2Failure) or not binary or binary[0].get("AMQJRNINF_HEX") is None:
        return None  # the planner blocks a queue manager whose AMQJRNINF cannot be read
    try:
        return codecs.decode(binascii.unhexlify(binary[0]["AMQJRNINF_HEX"]), "cp037")
    except (binascii.Error, UnicodeDecodeError):
        return None


class Readings:
    """The messages of one collection read by the layouts the partition declares (msgformats.py), each once.

    A message that does not decode is said in the log with the DSPMSGD that shows its format, and kept as it came;
    it moves no recovery point and hides no CPI70E3 (the callers decide what "not read" means, always toward keeping).
    """

    def __init__(self, target: Target, declared: dict[str, msgformats.Declared], collected_at: datetime) -> None:
        self.target = target
        self.declared = declared
        self.collected_at = collected_at
        self._seen: dict[tuple[str, str], msgformats.Reading] = {}

    def read(self, row: Row) -> msgformats.Reading:
        msg_id, tokens = str(row["MESSAGE_ID"]), row.get("MESSAGE_TOKENS") or None
        key = (msg_id, tokens or "")
        if key not in self._seen:
            layout = self.declared[msg_id].layout
            reading = msgformats.read(msg_id, tokens, layout, not_after=self.collected_at)
            self._seen[key] = reading
            if tokens and not reading.decoded:
                log.warning(
                    "%s (%s): MESSAGE_UNDECODABLE %s of %s: its replacement data does not decode (%s; declared: %s);"
                    " kept as it came, it moves no recovery point. Check its format with %s",
                    self.target.qmgr,
                    self.target.library,
                    msg_id,
                    row.get("MESSAGE_TIMESTAMP"),
                    reading.problem,
                    self.declared[msg_id].shown(),
                    msgformats.dspmsgd(msg_id),
                )
        return self._seen[key]

    def undecodable(self, row: Row) -> bool:
        return bool(row.get("MESSAGE_TOKENS")) and not self.read(row).decoded

    def of(self, message: QueueMessage) -> msgformats.Reading:
        """A message of the snapshot read again: its reading is the one its row got (each data once)."""
        return self.read(
            {"MESSAGE_ID": message.id, "MESSAGE_TOKENS": message.tokens, "MESSAGE_TIMESTAMP": str(message.at)}
        )


def _declared(result: list[Row] | Db2Failure | None) -> dict[str, msgformats.Declared]:
    if result is None:
        return msgformats.declarations(None, "QSYS2.MESSAGE_FILE_DATA is not on this partition")
    if isinstance(result, Db2Failure):
        return msgformats.declarations(None, f"{result.msg_id}: {result.text}")
    return msgformats.declarations(result)


def _latest_points(rows: list[Row], tz: PartitionZone, readings: Readings) -> dict[str, RecoveryPoint]:
    """The newest AMQ7460 and AMQ7462 that decode, read from their replacement data.

    Without it (null MESSAGE_TOKENS: a partition that does not show them) nothing language-independent says the
    entry's time (the text has it in the job's language and date format, MESSAGE_TIMESTAMP is when MQ sent the
    message), so the point stays unread and the planner blocks the queue manager (rules.py: a missing recovery
    point blocks every delete). A newer message whose data does not decode is passed over for the newest one that
    does: MQ's points only move forward, so the older point keeps at least the receivers the newer one would, and
    the undecodable one neither moves the point forward nor, on its own, blocks the queue manager.
    """
    latest: dict[str, RecoveryPoint] = {}
    for row in rows:  # newest first
        msg_id = row["MESSAGE_ID"]
        if msg_id in latest or msg_id not in ("AMQ7460", "AMQ7462") or not row.get("MESSAGE_TOKENS"):
            continue
        reading = readings.read(row)
        if reading.values is None:
            continue
        at, receiver = reading.values["at"], reading.values["receiver"]
        assert isinstance(at, datetime) and isinstance(receiver, str)
        name = None if set(receiver) == {"*"} else receiver
        latest[msg_id] = RecoveryPoint(receiver=name, at=tz.at(at))
    return latest


def _about_journal(row: Row, target: Target, readings: Readings) -> bool:
    """Whether a message belongs in this journal's snapshot: CPI70E3 only when its replacement data names this journal.

    CPI70E3 reaches QSYSOPR and the journal's message queue for every journal on the partition, and its text names
    none. Without replacement data, or with data that does not decode, it cannot be told apart, so it is kept:
    switching may have stopped (naming.py says it is unconfirmed), which is the cautious reading.
    """
    if row["MESSAGE_ID"] != "CPI70E3" or not row.get("MESSAGE_TOKENS"):
        return True
    reading = readings.read(row)
    if reading.values is None:
        return True
    return (reading.values["journal"], reading.values["library"]) == (target.journal, target.library)


def _int(text: str | None) -> int | None:
    return None if text is None else int(text)


def _receiver(row: Row, tz: PartitionZone) -> Receiver:
    # A null where the contract needs a value (a name, a status) is refused by the model, naming the field.
    return Receiver.model_validate(
        {
            "name": row["JOURNAL_RECEIVER_NAME"],
            "library": row["JOURNAL_RECEIVER_LIBRARY"],
            "status": row["STATUS"],
            "attached_at": db2_time(row["ATTACH_TIMESTAMP"], tz),
            "detached_at": db2_time(row["DETACH_TIMESTAMP"], tz),
            "saved_at": db2_time(row["SAVE_TIMESTAMP"], tz),
            "size_bytes": (_int(row["SIZE"]) or 0) * SIZE_UNIT_BYTES,
            "threshold_kb": _int(row["THRESHOLD"]),
            "previous": row["PREVIOUS_JOURNAL_RECEIVER"],
            "previous_library": row["PREVIOUS_JOURNAL_RECEIVER_LIBRARY"],
            "next": row["NEXT_JOURNAL_RECEIVER"],
            "next_library": row["NEXT_JOURNAL_RECEIVER_LIBRARY"],
            "first_sequence": _int(row["FIRST_SEQUENCE_NUMBER"]),
            "last_sequence": _int(row["LAST_SEQUENCE_NUMBER"]),
            "journal": row["JOURNAL_NAME"],
            "journal_library": row["JOURNAL_LIBRARY"],
        }
    )


def _damaged_objects(messages: list[QueueMessage], readings: Readings) -> list[DamagedObject]:
    """The newest AMQ7472 per object, oldest report first."""
    newest: dict[tuple[str, str], datetime] = {}
    for m in messages:
        if m.id != "AMQ7472" or not m.tokens:
            continue
        values = readings.of(m).values
        found = None if values is None else (str(values["object"]), str(values["object_type"]))
        if found is not None and (found not in newest or m.at > newest[found]):
            newest[found] = m.at
    return [
        DamagedObject(object=name, object_type=kind, reported_at=at)
        for (name, kind), at in sorted(newest.items(), key=lambda item: (item[1], item[0]))
    ]


def _entry_needed(messages: list[QueueMessage], tz: PartitionZone, readings: Readings) -> datetime | None:
    """The entry the newest AMQ7432 says the startup recovery pass could not read, in the partition's time zone.

    Only the newest counts: it is what STRMQM failed with last, and an older one may need a later entry than the one
    now missing, so restoring from it could leave the recovery pass short. When the newest says no time (no data, or
    data that does not decode), None: the recovery planner asks for the time rather than guessing one.
    """
    newest = next((m for m in reversed(messages) if m.id == "AMQ7432"), None)
    if newest is None or not newest.tokens:
        return None
    values = readings.of(newest).values
    if values is None:
        return None
    entry = values["at"]
    assert isinstance(entry, datetime)
    return tz.at(entry)


def _undecodable(messages: list[QueueMessage], readings: Readings) -> list[UndecodableMessage]:
    """The collection's messages whose replacement data does not decode, oldest first, each with what shows its
    format: a message without data (a partition that does not show MESSAGE_TOKENS) is not among them."""
    found = []
    for m in messages:
        if m.id is None or m.id not in msgformats.MESSAGE_FILES or not m.tokens:
            continue
        reading = readings.of(m)
        if reading.problem is not None:
            found.append(
                UndecodableMessage(
                    message_id=m.id, sent_at=m.at, problem=reading.problem, dspmsgd=msgformats.dspmsgd(m.id)
                )
            )
    return found


def _message(row: Row, tz: PartitionZone) -> QueueMessage:
    return QueueMessage.model_validate(
        {
            "id": row["MESSAGE_ID"],
            "at": db2_time(row["MESSAGE_TIMESTAMP"], tz),
            "text": row["MESSAGE_TEXT"] or "",
            "queue": f"{row['MESSAGE_QUEUE_LIBRARY']}/{row['MESSAGE_QUEUE_NAME']}",
            "tokens": row.get("MESSAGE_TOKENS") or None,
        }
    )
