"""Readable snapshots for planner tests: a receiver chain as an admin would describe it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

from mqjournal.jrninf import format_amqjrninf
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from mqjournal.snapshot import Checkpoint, JournalRef, Receiver, RecoveryPoint, Snapshot

CET = timezone(timedelta(hours=1))
T0 = datetime(2026, 11, 20, 8, 0, tzinfo=CET)
HOUR = timedelta(hours=1)
KB = 1024
DERIVE = "derive"


def chain(
    names: list[str],
    *,
    library: str = "QMTEST",
    journal: str = "AMQAJRN",
    start: datetime = T0,
    every: timedelta = HOUR,
    size: int = 1000 * KB,
    threshold_kb: int = 1000,
    saved: tuple[str, ...] = (),
    freed: tuple[str, ...] = (),
    entries: int = 100,
) -> list[Receiver]:
    """Receivers attached one `every` apart, linked and numbered in that order; the last one is attached."""
    receivers = []
    for i, name in enumerate(names):
        attached_at = start + i * every
        last = i == len(names) - 1
        status = "ATTACHED" if last else "FREED" if name in freed else "SAVED" if name in saved else "ONLINE"
        receivers.append(
            Receiver(
                name=name,
                library=library,
                status=status,
                attached_at=attached_at,
                detached_at=None if last else attached_at + every,
                saved_at=attached_at + every + timedelta(minutes=5) if status in ("SAVED", "FREED") else None,
                size_bytes=size,
                threshold_kb=threshold_kb,
                previous=names[i - 1] if i else None,
                previous_library=library if i else None,
                next=None if last else names[i + 1],
                next_library=None if last else library,
                first_sequence=1 + i * entries,
                last_sequence=(i + 1) * entries,
                journal=journal,
                journal_library=library,
            )
        )
    return receivers


def snapshot(
    receivers: list[Receiver],
    *,
    oldest: str | None = None,
    needed_at: datetime | None = None,
    amqjrninf: str | None = "derive",
    host: str = "ibmi1",
    qmgr: str = "TEST",
    library: str = "QMTEST",
    collected_at: datetime | None = None,
    run_id: str = "r1",
    checkpoint_ok: bool = True,
    startup: str | None = DERIVE,
    media: str | None = DERIVE,
    startup_at: datetime | None = None,
    media_at: datetime | None = None,
) -> Snapshot:
    """`oldest` is the receiver AMQJRNINF names ("*" for asterisks); by default the attached one.

    AMQ7460 (`startup`) and AMQ7462 (`media`) name the receiver given, "*" for asterisks, None for no message; by
    default they agree with AMQJRNINF (the same receiver, none when AMQJRNINF shows asterisks). Their time is
    `startup_at` / `media_at`, by default AMQJRNINF's.
    """
    attached = next((r for r in reversed(receivers) if r.status == "ATTACHED"), None)
    oldest = oldest or (attached.name if attached else None)
    if needed_at is None:
        holder = next((r for r in receivers if r.name == oldest), attached)
        needed_at = (holder.attached_at if holder else T0) + timedelta(minutes=1)
    if amqjrninf == "derive":
        amqjrninf = format_amqjrninf(None if oldest == "*" else oldest, library, needed_at.replace(tzinfo=None))
    collected_at = collected_at or ((attached.attached_at if attached else T0) + timedelta(minutes=30))

    def point(name: str | None, at: datetime | None) -> RecoveryPoint | None:
        if name == DERIVE:
            name = None if oldest == "*" else oldest
        if name is None:
            return None
        return RecoveryPoint(receiver=None if name == "*" else name, at=at or needed_at)

    return Snapshot(
        run_id=run_id,
        collected_at=collected_at,
        host=host,
        qmgr=qmgr,
        qmgr_library=library,
        journal=JournalRef(name="AMQAJRN", library=library),
        checkpoint=Checkpoint(forced=True, ok=checkpoint_ok, at=collected_at if checkpoint_ok else None),
        amqjrninf=amqjrninf,
        startup_recovery=point(startup, startup_at),
        media_recovery=point(media, media_at),
        receivers=receivers,
        messages=[],
    )


def names(first: int, count: int, prefix: str = "AMQA0") -> list[str]:
    return [f"{prefix}{(first + i) % 100_000:05d}" for i in range(count)]


# --- plan rows, as the plan job writes them (mqjournal.planrows) ---------------------------------------------------


def planned_queue_manager(**columns: Any) -> PlannedQueueManager:
    """A queue manager's plan row: nothing to save or delete, no alerts, collected at T0; `columns` set the rest."""
    row: dict[str, Any] = {
        "host": "ibmi1", "qmgr": "TEST", "qmgr_library": "QMTEST", "oldest_needed": None, "blocked": False,
        "block_reason": None, "alerts": (), "receivers_to_save": 0, "bytes_to_save": 0, "receivers_to_delete": 0,
        "bytes_to_delete": 0, "bytes_freed": 0, "chain_length": 0, "oldest_needed_age_seconds": None,
        "collected_at": T0, "run_id": "run1",
    }  # fmt: skip
    return PlannedQueueManager.model_validate(row | columns)


def planned_receiver(**columns: Any) -> PlannedReceiver:
    """A receiver's plan row: the oldest of QMTEST's chain, kept because it is needed; `columns` set the rest."""
    row: dict[str, Any] = {
        "host": "ibmi1", "qmgr": "TEST", "qmgr_library": "QMTEST", "receiver": "AMQA000000", "library": "QMTEST",
        "chain_position": 0, "status": "ONLINE", "size_bytes": 1000 * KB, "action": "keep",
        "reason": "NEEDED_NOT_SAVED",
    }  # fmt: skip
    return PlannedReceiver.model_validate(row | columns)


Row = TypeVar("Row", PlannedQueueManager, PlannedReceiver)


def changed(row: Row, **columns: Any) -> Row:
    """The plan row with `columns` changed (validated, as the plan job would have written them)."""
    return type(row).model_validate(row.model_dump() | columns)
