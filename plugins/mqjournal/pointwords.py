"""One sentence on why AMQJRNINF, AMQ7460, AMQ7462 and the oldest needed receiver shown name different receivers.

An admin reads "oldest needed receiver AMQA000027" above "AMQJRNINF AMQA000024, AMQ7460 AMQA000030, ..." and needs to
know which to believe. The seeds say what each is: AMQ7460 the startup recovery point (held back only by an open unit
of work), AMQ7462 the oldest media recovery entry (held back by a damaged object), AMQJRNINF the oldest receiver MQ
still needs, written with them at each checkpoint, with asterisks once that receiver is deleted. The receiver shown
as the oldest needed is the plan's: it is AMQJRNINF's when the plan can use it, else the oldest on the host.
"""

from __future__ import annotations

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.snapshot import Snapshot
from mqjournal.timefmt import local_time


def points_sentence(snapshot: Snapshot, shown: str | None) -> str | None:
    """Why the names differ, in one sentence; None when AMQJRNINF, both points and `shown` name one receiver."""
    try:
        record = parse_amqjrninf(snapshot.amqjrninf, qmgr=snapshot.qmgr)
    except MalformedAmqjrninf:
        return None  # the block reason says so already
    jrninf = record.receiver
    on_host = {r.name for r in snapshot.receivers if r.library == snapshot.qmgr_library}
    left = ""
    if shown and shown != jrninf:
        left = f", so the {shown} shown as the oldest needed is only the oldest receiver left on the host"
    if jrninf is None:
        return (
            f"AMQJRNINF shows asterisks because MQ found the receiver holding its oldest needed entry "
            f"({local_time(record.needed_at.replace(tzinfo=snapshot.collected_at.tzinfo))}) deleted{left}: "
            "a restart needs that receiver restored from the backup first."
        )
    if jrninf not in on_host:
        return (
            f"AMQJRNINF names {jrninf}, the oldest receiver MQ needs, but {jrninf} is no longer on the host{left}: "
            f"the recovery pass that needs it (STRMQM, or RCRMQMOBJ) ends with AMQ7432 until {jrninf} is restored."
        )
    startup = snapshot.startup_recovery.receiver if snapshot.startup_recovery else None
    media = snapshot.media_recovery.receiver if snapshot.media_recovery else None
    if startup and media and startup != media:
        return (
            f"AMQJRNINF names the older of MQ's two recovery points: AMQ7460 ({startup}) is where a restart replays "
            f"from, held back only by a unit of work still open, and AMQ7462 ({media}) is the oldest media image an "
            "object still needs, held back by a damaged object (AMQ7472) or one not imaged since."
        )
    named = {p for p in (startup, media) if p}
    if named and jrninf not in named:
        return (
            f"AMQJRNINF ({jrninf}) and the newest AMQ7460/AMQ7462 read ({'/'.join(sorted(named))}) come from "
            "different checkpoints (a message older than the collection window, or one not decoded), so mqjournal "
            "keeps every receiver from the oldest of them."
        )
    if shown and shown != jrninf:
        return (
            f"The plan is blocked, so it keeps every receiver from {shown}, the oldest on the host, although MQ needs "
            f"only those from {jrninf} on (AMQJRNINF)."
        )
    return None
