"""The planning vocabulary: actions, reasons, block reasons, alerts and receiver statuses, one StrEnum each.

Every word here is written as is into the plan's Parquet, summary.json, the snapshots and the approval body, so a
value never changes once released: add members, never rename them. Members are `str`, so a member and the text
read back from a stored plan compare equal. rules.py decides with these words, the Spark job writes them with
`F.lit(...)`, and the report and the gate read them back; docs/planning-rules.md says when each applies.
"""

from __future__ import annotations

from enum import StrEnum


class ReceiverStatus(StrEnum):
    """STATUS of QSYS2.JOURNAL_RECEIVER_INFO."""

    ATTACHED = "ATTACHED"
    ONLINE = "ONLINE"  # detached, not saved
    SAVED = "SAVED"  # detached and saved
    FREED = "FREED"  # saved, storage freed: its entries are not readable until it is restored
    PARTIAL = "PARTIAL"  # restored from a save taken while attached, or a damaged dual
    EMPTY = "EMPTY"  # never attached


class Action(StrEnum):
    """What the plan does with one receiver (docs/planning-rules.md, section 3)."""

    KEEP = "keep"
    SAVE = "save"
    DELETE = "delete"
    SAVE_THEN_DELETE = "save_then_delete"


SAVES = (Action.SAVE, Action.SAVE_THEN_DELETE)
"""The actions that save the receiver first: what the save step is given."""

DELETES = (Action.DELETE, Action.SAVE_THEN_DELETE)
"""The actions that delete the receiver (once its save is proven): what the approval gate asks about."""


class Reason(StrEnum):
    """Why a receiver has its action: one per row of docs/planning-rules.md, section 3, in the rows' order.

    With `backup: site` (section 3.1) the rows that would save keep instead, under the same reason, and the last
    rows are the site's: SAVED_BY_SITE, SITE_SAVE_TOO_RECENT, NOT_SAVED_BY_SITE, OLDER_NOT_SAVED_BY_SITE.
    """

    NOT_IN_CHAIN = "NOT_IN_CHAIN"
    ATTACHED = "ATTACHED"
    NEEDED_FREED = "NEEDED_FREED"
    NEEDED_SAVED = "NEEDED_SAVED"
    NEEDED_NOT_SAVED = "NEEDED_NOT_SAVED"
    BLOCKED = "BLOCKED"
    BLOCKED_NOT_SAVED = "BLOCKED_NOT_SAVED"
    RETAINED = "RETAINED"
    RETAINED_NOT_SAVED = "RETAINED_NOT_SAVED"
    NOT_NEEDED_SAVED = "NOT_NEEDED_SAVED"
    NOT_NEEDED_NOT_SAVED = "NOT_NEEDED_NOT_SAVED"
    # backup: site (section 3.1)
    SAVED_BY_SITE = "SAVED_BY_SITE"  # saved by the site's backup long enough ago; not in mqjournal's store
    SITE_SAVE_TOO_RECENT = "SITE_SAVE_TOO_RECENT"  # saved by the site's backup, less than the minimum age ago
    NOT_SAVED_BY_SITE = "NOT_SAVED_BY_SITE"  # not (fully) saved by the site's backup yet
    # saved by the site long enough ago, but an older chain member waits (one of the two above): DLTJRNRCV deletes
    # the oldest receiver only, so this one waits with it
    OLDER_NOT_SAVED_BY_SITE = "OLDER_NOT_SAVED_BY_SITE"


SITE_WAITS = (Reason.SITE_SAVE_TOO_RECENT, Reason.NOT_SAVED_BY_SITE)
"""With `backup: site`, the not-needed receivers kept only until the site's backup has saved them long enough ago."""


class BlockReason(StrEnum):
    """Why nothing of a queue manager may be deleted (docs, section 2). The definition order is the order in which
    `block_reason` lists them (BLOCK_ORDER): add a new reason where it belongs in that list."""

    SNAPSHOT_STALE = "SNAPSHOT_STALE"
    AMQJRNINF_MISSING = "AMQJRNINF_MISSING"
    AMQJRNINF_MALFORMED = "AMQJRNINF_MALFORMED"
    AMQJRNINF_RECEIVER_NOT_IN_CHAIN = "AMQJRNINF_RECEIVER_NOT_IN_CHAIN"
    AMQJRNINF_NAME_TIME_DISAGREE = "AMQJRNINF_NAME_TIME_DISAGREE"
    AMQJRNINF_TIME_IN_FUTURE = "AMQJRNINF_TIME_IN_FUTURE"
    RECOVERY_POINT_NOT_IN_CHAIN = "RECOVERY_POINT_NOT_IN_CHAIN"
    RECOVERY_POINT_BEFORE_CHAIN = "RECOVERY_POINT_BEFORE_CHAIN"
    RECOVERY_POINT_IN_FUTURE = "RECOVERY_POINT_IN_FUTURE"
    CHAIN_BROKEN = "CHAIN_BROKEN"


BLOCK_ORDER: tuple[BlockReason, ...] = tuple(BlockReason)

IMPLAUSIBLE_NEEDS = frozenset(
    {
        BlockReason.AMQJRNINF_TIME_IN_FUTURE,
        BlockReason.RECOVERY_POINT_NOT_IN_CHAIN,
        BlockReason.RECOVERY_POINT_BEFORE_CHAIN,
        BlockReason.RECOVERY_POINT_IN_FUTURE,
    }
)
"""The block reasons that say what MQ needs cannot be true: the report then shows AMQJRNINF, AMQ7460 and AMQ7462."""


class Alert(StrEnum):
    """Something a person should look at; the queue manager is planned as usual (docs, section 4).

    Each member is its code and `text`, the sentence the approval body and the run report show next to it.
    """

    text: str

    def __new__(cls, code: str, text: str) -> Alert:
        member = str.__new__(cls, code)
        member._value_ = code
        member.text = text
        return member

    CHECKPOINT_FAILED = "CHECKPOINT_FAILED", "the forced checkpoint (RCDMQMIMG) failed"
    OLDEST_NEEDED_NOT_ON_SYSTEM = (
        "OLDEST_NEEDED_NOT_ON_SYSTEM",
        "AMQJRNINF shows asterisks: the oldest needed receiver is not on the system",
    )
    RECOVERY_POINTS_DISAGREE = (
        "RECOVERY_POINTS_DISAGREE",
        "AMQJRNINF and AMQ7460/AMQ7462 name different oldest needed receivers: the oldest of them is kept",
    )
    NEEDED_RECEIVER_NOT_ONLINE = "NEEDED_RECEIVER_NOT_ONLINE", "a receiver MQ needs is freed (restore it)"
    RECEIVER_OVER_THRESHOLD = (
        "RECEIVER_OVER_THRESHOLD",
        "the attached receiver is past its threshold (switching stopped?)",
    )
    NEXT_RECEIVER_NAME_TAKEN = (
        "NEXT_RECEIVER_NAME_TAKEN",
        "the next receiver name exists: switching will stop (CPI70E3)",
    )
    STARTUP_RECOVERY_STUCK = (
        "STARTUP_RECOVERY_STUCK",
        "AMQ7460 has not moved while receivers changed: an open unit of work or in-doubt channel",
    )
    MEDIA_RECOVERY_STUCK = (
        "MEDIA_RECOVERY_STUCK",
        "AMQ7462 has not moved while receivers changed: a damaged object (RCRMQMOBJ it)",
    )
    # The first-run counterparts of the two above: a forced RCDMQMIMG moves both points to about now, so a point
    # older than the policy's limit right after one is held by something only an admin can end.
    STARTUP_POINT_OLD = (
        "STARTUP_POINT_OLD",
        "AMQ7460 is older than the policy's limit right after a forced checkpoint: a unit of work has been open "
        "since its time (an uncommitted application, or a channel in doubt)",
    )
    MEDIA_POINT_OLD = (
        "MEDIA_POINT_OLD",
        "AMQ7462 is older than the policy's limit right after RCDMQMIMG: an object is damaged (AMQ7472) and needs "
        "RCRMQMOBJ",
    )
    # Raised after the plan job, from the run's own snapshot (mqjournal/cannotstart.py), as the on-call step does.
    QMGR_CANNOT_START = (
        "QMGR_CANNOT_START",
        "a receiver MQ needs to start (or to re-create a damaged object) is not on the partition: STRMQM will end "
        "with AMQ7432; run the recovery DAG with the values the queue manager's page gives (the maintenance run "
        "triggered it)",
    )
    # Raised after the plan job, from the ASP history (mqjournal/forecast.py): the Spark job reads no ASP history.
    ASP_FULL_SOON = (
        "ASP_FULL_SOON",
        "the ASP holding the receivers reaches the policy's limit (asp_limit_percent) within asp_forecast_alert_days "
        "at its growth of the last weeks if nothing is deleted: approve deletes, or add storage",
    )
    # Raised on its own: the message is kept and moves no recovery point, so it neither blocks nor unblocks anything.
    MESSAGE_UNDECODABLE = (
        "MESSAGE_UNDECODABLE",
        "a message's replacement data does not decode by the layout its message description declares: it was kept "
        "and moves no recovery point; check its format with DSPMSGD",
    )


class HoldingPoint(StrEnum):
    """Which of MQ's three statements holds the oldest needed receiver (docs/planning-rules.md, section 2.5): the
    explanation of every needed receiver names it."""

    AMQJRNINF = "AMQJRNINF"
    STARTUP = "AMQ7460"  # the startup (restart) recovery point: the oldest open unit of work, or the checkpoint
    MEDIA = "AMQ7462"  # the media recovery point: the oldest media image an object still needs


def alert_text(code: str) -> str:
    """The sentence for an alert code read back from a plan; an unknown code (a newer planner's) as itself."""
    return next((alert.text for alert in Alert if alert == code), code)


class DeleteReason(StrEnum):
    """Why an approved receiver is deleted or kept at the re-check on the live host (docs, section 6)."""

    DELETE = "DELETE"
    ALREADY_GONE = "ALREADY_GONE"
    NOT_IN_CHAIN = "NOT_IN_CHAIN"
    BLOCKED = "BLOCKED"
    OLDER_NOT_DELETED = "OLDER_NOT_DELETED"
    ATTACHED = "ATTACHED"
    NOT_DELETABLE_NOW = "NOT_DELETABLE_NOW"
    NO_PROVEN_BACKUP = "NO_PROVEN_BACKUP"
    NOT_SAVED_BY_SITE = "NOT_SAVED_BY_SITE"  # backup: site; the live receiver shows no full site save old enough
