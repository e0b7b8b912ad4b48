"""Why a receiver has its action, and what an alert asks of an admin, in the words a person reads.

The input is the plan's rows (mqjournal.planrows): one receiver and its queue manager. A plan written before some
of its columns were added still explains itself, with less detail.

The rules themselves are rules.py's (docs/planning-rules.md); this module only says them. Every time is written by
mqjournal.timefmt: the partition's local time with its offset, as DSPJRN and QMQMMSG show it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from mqjournal import timefmt
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.restore import RCRMQMOBJ_TYPES
from mqjournal.vocabulary import Action, BlockReason, Reason, alert_text

QM = PlannedQueueManager
Receiver = PlannedReceiver

STARTUP, MEDIA, AMQJRNINF = "AMQ7460", "AMQ7462", "AMQJRNINF"  # vocabulary.HoldingPoint's values

RECOVERY_DAG = "mq_journal_recovery"
"""The recovery DAG's id, as an alert that needs a recovery names it (dags/mq_journal_recovery.py)."""

FORM_FIELDS: dict[str, str] = {
    "host": "host",
    "qmgr": "queue manager",
    "kind": "kind of recovery",
    "object": "damaged object",
    "object_type": "object type",
}
"""The recovery DAG's params as its trigger form titles them, in the form's order."""

BLOCK_WORDS: dict[str, str] = {
    BlockReason.SNAPSHOT_STALE: "its snapshot is older than the policy's max_snapshot_age_hours",
    BlockReason.AMQJRNINF_MISSING: "AMQJRNINF could not be read",
    BlockReason.AMQJRNINF_MALFORMED: "AMQJRNINF does not hold a receiver and a time",
    BlockReason.AMQJRNINF_RECEIVER_NOT_IN_CHAIN: "the receiver AMQJRNINF names is not in the journal's chain",
    BlockReason.AMQJRNINF_NAME_TIME_DISAGREE: "AMQJRNINF's receiver and time name different receivers",
    BlockReason.AMQJRNINF_TIME_IN_FUTURE: "AMQJRNINF's time is after the collection",
    BlockReason.RECOVERY_POINT_NOT_IN_CHAIN: "AMQ7460 or AMQ7462 names a receiver not in the journal's chain",
    BlockReason.RECOVERY_POINT_BEFORE_CHAIN: "AMQ7460 or AMQ7462 is older than the oldest receiver on the system",
    BlockReason.RECOVERY_POINT_IN_FUTURE: "AMQ7460 or AMQ7462 is after the collection",
    BlockReason.CHAIN_BROKEN: "the receiver chain is broken (a sequence gap, or links that disagree)",
}
"""Each block reason as a person reads it (vocabulary.BlockReason; docs/planning-rules.md, sections 2 and 2.4)."""

_HOLDERS: dict[str, str] = {
    STARTUP: "needed for startup recovery, AMQ7460 point",
    MEDIA: "needed for media recovery, AMQ7462 point",
    AMQJRNINF: "needed by MQ, AMQJRNINF's oldest needed entry",
}

_VERBS: dict[str, str] = {
    Action.KEEP: "kept",
    Action.SAVE: "saved by this run, then kept",
    Action.DELETE: "deleted once approved",
    Action.SAVE_THEN_DELETE: "saved by this run, then deleted once approved",
}


def offset_of(qm: QM | None) -> int | None:
    """The partition's UTC offset in minutes, when the plan carries it."""
    return qm.utc_offset_minutes if qm is not None else None


def when(moment: datetime | None, qm: QM, age_seconds: float | None = None) -> str:
    """`2026-11-21 14:00:05 +01:00 (46 h ago)`; the age from `age_seconds`, else measured to the collection."""
    if moment is None:
        return "-"
    text = timefmt.local_time(moment, offset_of(qm))
    if age_seconds is None:
        age_seconds = (_aware(qm.collected_at) - _aware(moment)).total_seconds()
    return f"{text} ({timefmt.age(age_seconds)} ago)" if age_seconds is not None else text


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timefmt.zone(0))


def block_words(qm: QM) -> str:
    """The queue manager's block reasons in words, in BLOCK_ORDER ("" when it is not blocked)."""
    return "; ".join(BLOCK_WORDS.get(c, c) for c in qm.block_reasons)


def needed_because(qm: QM) -> str:
    """Which of MQ's points holds the oldest needed receiver, with its time and age: what every needed receiver of
    the queue manager is kept for."""
    point = qm.holding_point
    if point in _HOLDERS:
        return f"{_HOLDERS[point]} {when(qm.holding_point_at, qm, qm.holding_point_age_seconds)}"
    oldest = qm.oldest_needed
    return f"needed by MQ: {oldest} is the oldest receiver it needs" if oldest else "needed by MQ"


def _not_needed(qm: QM) -> str:
    oldest = qm.oldest_needed
    return f"not needed by MQ (older than {oldest}, the oldest receiver it needs)" if oldest else "not needed by MQ"


def explanation(receiver: Receiver, qm: QM) -> str:
    """Why the receiver has its action, the same words for every receiver kept for the same reason (the report groups
    receivers into ranges by it): the reason, without the action's verb and without the receiver's own times."""
    reason, action = receiver.reason, receiver.action
    needed = needed_because(qm)
    texts: dict[str, str] = {
        Reason.NOT_IN_CHAIN: "not in the journal's receiver chain: mqjournal never deletes it",
        Reason.ATTACHED: "the attached receiver, which the journal writes to",
        Reason.NEEDED_FREED: f"{needed}; its storage is freed, restore it (RSTOBJ) before MQ needs it",
        Reason.NEEDED_SAVED: needed,
        Reason.NEEDED_NOT_SAVED: needed if action != Action.KEEP else f"{needed}; not saved yet",
        Reason.BLOCKED: f"the queue manager is blocked: {block_words(qm) or 'see its block reason'}",
        Reason.BLOCKED_NOT_SAVED: f"the queue manager is blocked: {block_words(qm) or 'see its block reason'}",
        Reason.RETAINED: "retention policy: recently detached, or among the newest receivers kept online",
        Reason.RETAINED_NOT_SAVED: "retention policy: recently detached, or among the newest receivers kept online",
        Reason.NOT_NEEDED_SAVED: f"{_not_needed(qm)}, saved before",
        Reason.NOT_NEEDED_NOT_SAVED: _not_needed(qm),
        Reason.SAVED_BY_SITE: f"{_not_needed(qm)}, saved by the site's backup",
        Reason.SITE_SAVE_TOO_RECENT: f"{_not_needed(qm)}; the site's backup saved it less than "
        "site_save_min_age_hours ago",
        Reason.NOT_SAVED_BY_SITE: f"{_not_needed(qm)}; not saved by the site's backup yet",
        Reason.OLDER_NOT_SAVED_BY_SITE: f"{_not_needed(qm)} and saved by the site's backup, but an older receiver "
        "waits for that backup (DLTJRNRCV deletes the oldest first)",
    }
    return texts.get(str(reason), str(reason))


def verb(receiver: Receiver) -> str:
    """What the plan does with the receiver: `kept`, `saved by this run, then kept`, ..."""
    action = str(receiver.action)
    return _VERBS.get(action, action)


def _detail(receiver: Receiver, qm: QM) -> str:
    """The receiver's own times where its reason turns on them."""
    reason = receiver.reason
    if reason in (Reason.RETAINED, Reason.RETAINED_NOT_SAVED) and receiver.detached_at is not None:
        return f" (detached {when(receiver.detached_at, qm)})"
    if reason in (Reason.SAVED_BY_SITE, Reason.SITE_SAVE_TOO_RECENT) and receiver.saved_at is not None:
        return f" (saved {when(receiver.saved_at, qm)})"
    return ""


def why(receiver: Receiver, qm: QM) -> str:
    """One sentence: what the plan does with this receiver and why, naming the point that holds it with the point's
    time and age (`AMQA000030 kept: needed for media recovery, AMQ7462 point 2026-11-21 14:00:05 +01:00 (46 h
    ago)`)."""
    return f"{receiver.receiver} {verb(receiver)}: {explanation(receiver, qm)}{_detail(receiver, qm)}"


# --- alerts ---------------------------------------------------------------------------------------------------------

_POINT_TEXT = r"(?P<receiver>\S+) (?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?"


def point_time(qm: QM, label: str) -> tuple[datetime | None, float | None]:
    """AMQ7460's or AMQ7462's time and age: the holding point's columns when it is that point, else its time as
    `recovery_points` writes it (the partition's wall clock), its age measured to the collection."""
    if qm.holding_point == label and qm.holding_point_at is not None:
        return qm.holding_point_at, qm.holding_point_age_seconds
    found = re.search(rf"{label} {_POINT_TEXT}", qm.recovery_points or "")
    offset = offset_of(qm)
    if not found or offset is None:
        return None, None
    at = datetime.fromisoformat(found["at"]).replace(tzinfo=timefmt.zone(offset))
    return at, None


def damaged_objects(qm: QM) -> list[tuple[str, str, str]]:
    """(object, RCRMQMOBJ OBJTYPE, as reported) for each object AMQ7472 reported damaged. Rows hold text such as
    `APP.REQUEST.QUEUE (QLOCAL), reported by AMQ7472 at <time>`."""
    found = []
    for text in qm.damaged_objects:
        match = re.match(r"(?P<name>[^\s(]+)\s*\((?P<kind>[^)]*)\)", text)
        name, kind = (match["name"], match["kind"]) if match else (text.split(" ")[0], "")
        # AMQ7472 prints the type as MQ names it (QLOCAL); RCRMQMOBJ takes its own values (*LCLQ).
        found.append((name, RCRMQMOBJ_TYPES.get(kind.strip().upper().lstrip("*"), "*ALL"), text))
    return found


def startup_point_old(qm: QM) -> str:
    qmgr = qm.qmgr
    at, age_seconds = point_time(qm, STARTUP)
    since = f"since {when(at, qm, age_seconds)}" if at is not None else "since the AMQ7460 time"
    return (
        f"a unit of work open {since} holds AMQ7460, the startup recovery point, so every receiver from it on is "
        f"kept. Find it: WRKMQMTRN TYPE(*ALL) MQMNAME({qmgr}) lists in-doubt transactions; in MQSC (RUNMQSC "
        f"MQMNAME({qmgr})), DISPLAY CONN(*) TYPE(CONN) WHERE(UOWLOGDA NE ' ') UOWLOGDA UOWLOGTI APPLTAG CHANNEL "
        "CONNAME USERID shows the connections whose unit of work has written to the journal, and the one whose "
        "UOWLOGDA and UOWLOGTI are that time holds it; a channel in doubt shows in WRKMQMCHST "
        f"MQMNAME({qmgr}) WHERE(*INDOUBT *EQ YES). Once it commits or backs out, the next checkpoint (RCDMQMIMG) "
        "moves AMQ7460."
    )


def media_recovery_forms(qm: QM) -> list[dict[str, str]]:
    """What to enter in the recovery DAG's trigger form for AMQ7462's damaged objects: host, queue manager, kind media,
    and each object with its RCRMQMOBJ type, one run per object; without a reported object, none is filled in (the
    DAG then reads the newest AMQ7472, and refuses when there is none)."""
    base = {"host": qm.host, "qmgr": qm.qmgr, "kind": RecoveryKind.MEDIA.value}
    objects = damaged_objects(qm)
    if not objects:
        return [base]
    return [base | {"object": name, "object_type": kind} for name, kind, _ in objects]


def form_values(values: Mapping[str, str]) -> str:
    """`host "ibmi-prod2", queue manager "BILLING", kind of recovery "media", ...`: a trigger form's values as its
    fields are titled, for a reader who types them in (Airflow 3.3's UI fills no form from a link)."""
    return ", ".join(f'{FORM_FIELDS.get(key, key)} "{value}"' for key, value in values.items())


def media_point_old(qm: QM, recovery_dag: str = RECOVERY_DAG) -> str:
    """`recovery_dag`: how the text names the recovery DAG, its id or (Markdown) a link to it."""
    qmgr, library = qm.qmgr, qm.qmgr_library
    at, age_seconds = point_time(qm, MEDIA)
    since = f" since {when(at, qm, age_seconds)}" if at is not None else ""
    objects = damaged_objects(qm)
    forms = [form_values(values) for values in media_recovery_forms(qm)]
    if not objects:
        trigger = f"trigger it with {forms[0]} and the damaged object's name (empty: the newest AMQ7472's)"
    elif len(forms) == 1:
        trigger = f"trigger it with {forms[0]}"
    else:
        trigger = "trigger it once per object, with " + "; with ".join(forms)
    recovery = f"the recovery DAG {recovery_dag} can do it, restoring first any receiver it needs: {trigger}"
    if not objects:
        return (
            f"AMQ7462, the media recovery point, has not moved{since}: an object is damaged, but no AMQ7472 in "
            f"the collection window names it (DSPMSG MSGQ({library}/QMQMMSG)). RCRMQMOBJ OBJ(*ALL) OBJTYPE(*ALL) "
            f"MQMNAME({qmgr}) re-creates every damaged object from the journal; {recovery}."
        )
    damaged = "; ".join(text for _, _, text in objects)
    commands = "; ".join(f"RCRMQMOBJ OBJ({name}) OBJTYPE({kind}) MQMNAME({qmgr})" for name, kind, _ in objects)
    return (
        f"AMQ7462, the media recovery point, has not moved{since}: damaged {damaged}. Re-create "
        f"{'it' if len(objects) == 1 else 'them'} from the journal: {commands}; {recovery}."
    )


def message_undecodable(qm: QM) -> str:
    """Which messages did not decode and the DSPMSGD that shows each one's declared format (plan column
    `undecodable_messages`); a plan written before that column says the alert's sentence only."""
    said = [text.partition(": ") for text in qm.undecodable_messages]
    if not said:
        return alert_text("MESSAGE_UNDECODABLE")
    ids = ", ".join(msg_id for msg_id, _, _ in said)
    commands = "; ".join(command for _, _, command in said)
    return (
        f"the replacement data of {ids} does not decode by the layout the partition's message description declares. "
        "Each such message was kept as it came and moves no recovery point, so it blocks and unblocks nothing; what "
        f"it says is not read until its format is. See the format its description declares with {commands}."
    )


def alert_explanations(qm: QM, *, recovery_dag: str = RECOVERY_DAG) -> list[str]:
    """One line per alert of the queue manager, `CODE: what it means and what to do`, with the evidence collected.
    Where a recovery helps, the line names the recovery DAG and what to enter in its form; `recovery_dag` is how it is
    named: its id for plain text, a link where the caller writes Markdown (report.recovery_dag_link)."""
    lines = []
    for code in qm.alerts:
        if code == "STARTUP_POINT_OLD":
            lines.append(f"{code}: {startup_point_old(qm)}")
        elif code == "MEDIA_POINT_OLD":
            lines.append(f"{code}: {media_point_old(qm, recovery_dag)}")
        elif code == "MESSAGE_UNDECODABLE":
            lines.append(f"{code}: {message_undecodable(qm)}")
        else:
            lines.append(f"{code}: {alert_text(code)}")
    return lines
