"""The planning rules in DataFrame form: `mqjournal.rules`, section by section, under the same names.

Read the two side by side: each section here computes, per receiver or per queue manager key, the columns the
function of the same name computes there for one snapshot. docs/planning-rules.md is the text of both; a property
test holds them equal. Everything fleet-sized stays on the executors; the driver learns only the summary's totals,
observed as the plan is written.
"""

from __future__ import annotations

import operator
from datetime import datetime, timedelta
from functools import reduce
from typing import Any, NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.jrninf import DST_MARGIN
from mqjournal.names import RECEIVER_KEPT_LENGTH, RECEIVER_NAME_PATTERN, RECEIVER_NUMBER_DIGITS, SEQUENCE_SIZE
from mqjournal.planrows import PlanTotals
from mqjournal.policy import Policy
from mqjournal.sparkplan.amqjrninf import STARS, collected_offset_us, with_state_columns
from mqjournal.sparkplan.schema import KEY, MICROS, POINTS, QUEUE_MANAGERS_COLUMNS, RECEIVERS_COLUMNS, micros
from mqjournal.vocabulary import (
    BLOCK_ORDER,
    DELETES,
    SAVES,
    SITE_WAITS,
    Action,
    Alert,
    BlockReason,
    HoldingPoint,
    Reason,
    ReceiverStatus,
)

# --- 1. the chain ---------------------------------------------------------------------------------------------


def chain_of(current: DataFrame) -> DataFrame:
    """One row per receiver of each current snapshot (`current_snapshots`, whose columns each row keeps), chain
    members numbered in attach order (`chain_position`). A snapshot without receivers keeps one row without one
    (`listed_at` null), so that its queue manager is planned all the same.

    Names wrap, so they only break ties; the receiver's place in the snapshot breaks the last ties, as a stable
    sort of the snapshot's list would.
    """
    exploded = current.select("*", F.posexplode_outer("receivers").alias("listed_at", "r")).drop("receivers")
    is_member = (
        (F.col("r.journal") == F.col("journal_name"))
        & (F.col("r.journal_library") == F.col("journal_library_of_qmgr"))
        & F.col("r.attached_at").isNotNull()
    )
    receivers = exploded.select(
        "*",
        F.col("r.name").alias("receiver"),
        F.col("r.library").alias("library"),
        F.col("r.status").alias("status"),
        F.col("r.size_bytes").alias("size_bytes"),
        F.col("r.threshold_kb").alias("threshold_kb"),
        F.col("r.previous").alias("previous"),
        F.col("r.previous_library").alias("previous_library"),
        F.col("r.next").alias("next"),
        F.col("r.next_library").alias("next_library"),
        F.col("r.first_sequence").alias("first_sequence"),
        F.col("r.last_sequence").alias("last_sequence"),
        F.col("r.saved_at").isNotNull().alias("has_saved_at"),
        micros(F.col("r.saved_at")).alias("saved_us"),
        micros(F.col("r.attached_at")).alias("attached_us"),
        micros(F.col("r.detached_at")).alias("detached_us"),
        F.coalesce(is_member, F.lit(False)).alias("in_chain"),
    ).drop("r")
    # Non-members are numbered in a partition of their own, then dropped to null.
    attach_order = Window.partitionBy(*KEY, "in_chain").orderBy(
        "attached_us", F.col("first_sequence").asc_nulls_last(), "receiver", "listed_at"
    )
    before = {c: F.lag(c).over(attach_order) for c in ("receiver", "library", "next", "next_library", "last_sequence")}
    return receivers.withColumns(
        {
            "chain_position": F.when(F.col("in_chain"), F.row_number().over(attach_order) - 1),
            "link_broken": F.col("in_chain") & F.coalesce(_link_broken(before), F.lit(False)),
        }
    )


def _link_broken(a: dict[str, Column]) -> Column:
    """Member b (this row) does not follow member a (the one before it); a null link is unknown, not broken."""
    b = F.col
    has_predecessor = a["receiver"].isNotNull()
    next_disagrees = a["next"].isNotNull() & ~(
        a["next"].eqNullSafe(b("receiver")) & a["next_library"].eqNullSafe(b("library"))
    )
    previous_disagrees = b("previous").isNotNull() & ~(
        b("previous").eqNullSafe(a["receiver"]) & b("previous_library").eqNullSafe(a["library"])
    )
    sequences_known = a["last_sequence"].isNotNull() & b("first_sequence").isNotNull()
    gap = sequences_known & (b("first_sequence") != a["last_sequence"] + 1)
    return has_predecessor & (next_disagrees | previous_disagrees | gap)


def _truncated(micros: Column, unit: int) -> Column:
    """A time in microseconds truncated to whole `unit`s, in exact integer arithmetic (also before 1970)."""
    return micros - F.pmod(micros, F.lit(unit))


def chain_facts() -> dict[str, Column]:
    """Per key, what sections 1 and 2 need of the chain: its length and links, and the positions by time and name.
    Window columns over the key's rows of `chain_of`: every row of a key gets them, with no join back."""
    key = Window.partitionBy(*KEY)
    is_member = F.col("in_chain")
    is_attached_member = is_member & (F.col("status") == ReceiverStatus.ATTACHED)
    is_amqjrninf_receiver = (F.col("receiver") == F.col("amqjrninf_receiver")) & (
        F.col("library") == F.col("amqjrninf_library")
    )
    position = F.col("chain_position")
    # AMQJRNINF keeps milliseconds: compare attach times truncated to the millisecond (docs, section 2).
    attached_ms = _truncated(F.col("attached_us"), 1000)

    def by_time(moment: str | Column) -> Column:
        moment = F.col(moment) if isinstance(moment, str) else moment
        return F.max(F.when(is_member & (attached_ms <= moment), position)).over(key)

    def named(receiver: str) -> Column:
        return F.min(F.when(is_member & (F.col("receiver") == F.col(receiver)), position)).over(key)

    return {
        "chain_length": F.count(F.when(is_member, 1)).over(key),
        "links_broken": F.bool_or("link_broken").over(key),
        "attached_members": F.count(F.when(is_attached_member, 1)).over(key),
        "attached_position": F.max(F.when(is_attached_member, position)).over(key),
        "first_attached_us": F.min(F.when(is_member, F.col("attached_us"))).over(key),
        "by_time": by_time("needed_us"),
        # With asterisks, the receiver is looked up jrninf.DST_MARGIN before AMQJRNINF's time.
        "stars_by_time": by_time(F.col("needed_us") - F.lit(DST_MARGIN // timedelta(microseconds=1))),
        "named_position": F.min(F.when(is_member & is_amqjrninf_receiver, position)).over(key),
        "startup_by_time": by_time("startup_us"),
        "startup_named": named("startup_receiver"),
        "media_by_time": by_time("media_us"),
        "media_named": named("media_receiver"),
    }


def chain_is_broken() -> Column:
    """On chain_facts' columns: a link does not hold, or the one ATTACHED member is not exactly one, or not last."""
    chain_length = F.coalesce(F.col("chain_length"), F.lit(0))
    one_attached = F.coalesce(F.col("attached_members"), F.lit(0)) == 1
    attached_is_last = F.col("attached_position").eqNullSafe(chain_length - 1)
    return F.coalesce(F.col("links_broken"), F.lit(False)) | ~one_attached | ~attached_is_last


# --- 2. the oldest needed receiver ------------------------------------------------------------------------------


class OldestNeeded(NamedTuple):
    position: Column  # n: every chain member at or after it is needed
    blocks: dict[BlockReason, Column]  # those of sections 2.1 and 2.2
    points_disagree: Column
    holding_point: Column  # section 2.5
    holding_us: Column


def _wall_clock_of_amqjrninf(raw: Column) -> Column:
    """YYYY-MM-DDTHH:MM:SS.mmm of AMQJRNINF's 17 digits, as written (the partition's local time)."""
    digit = lambda start, length: F.substring(raw, 20 + start, length)  # noqa: E731 - reads as the layout below
    return F.concat(
        digit(1, 4), F.lit("-"), digit(5, 2), F.lit("-"), digit(7, 2), F.lit("T"), digit(9, 2), F.lit(":"),
        digit(11, 2), F.lit(":"), digit(13, 2), F.lit("."), digit(15, 3),
    )  # fmt: skip


def _wall_clock_of_instant(text: Column) -> Column:
    """YYYY-MM-DDTHH:MM:SS.mmm of an ISO 8601 time as written (in its own offset), microseconds truncated."""
    fraction = F.regexp_extract(text, r"^.{19}\.([0-9]{1,6})", 1)
    return F.concat(F.substring(text, 1, 19), F.lit("."), F.substring(F.rpad(fraction, 3, "0"), 1, 3))


def recovery_points_text() -> Column:
    """AMQJRNINF, AMQ7460 and AMQ7462 side by side (docs, section 2.3); on the current snapshot's columns."""
    jrninf = (
        F.when(F.col("amqjrninf_missing"), F.lit("AMQJRNINF -"))
        .when(F.col("amqjrninf_malformed"), F.lit("AMQJRNINF malformed"))
        .otherwise(
            F.concat(
                F.lit("AMQJRNINF "),
                F.when(F.col("amqjrninf_stars"), F.lit(STARS)).otherwise(F.col("amqjrninf_receiver")),
                F.lit(" "),
                _wall_clock_of_amqjrninf(F.col("amqjrninf")),
            )
        )
    )
    parts = [jrninf]
    for point, label in zip(POINTS, ("AMQ7460", "AMQ7462"), strict=True):
        shown = F.concat(
            F.lit(f"{label} "),
            F.coalesce(F.col(f"{point}.receiver"), F.lit(STARS)),
            F.lit(" "),
            _wall_clock_of_instant(F.col(f"{point}.at")),
        )
        parts.append(F.when(F.col(point).isNull(), F.lit(f"{label} -")).otherwise(shown))
    return F.concat_ws(", ", *parts)


def _amqjrninf(latest_us: Column) -> tuple[Column, dict[BlockReason, Column]]:
    """Section 2.1: the AMQJRNINF position j and AMQJRNINF's block reasons."""
    named, by_time = F.col("named_position"), F.col("by_time")
    is_usable, is_stars = F.col("amqjrninf_usable"), F.col("amqjrninf_stars")
    names_receiver = is_usable & ~is_stars
    j = F.when(is_usable & is_stars, F.coalesce(F.col("stars_by_time"), F.lit(0))).when(is_usable, named)
    # MQ names the receiver holding the oldest needed entry: it was attached at or before that entry, and it is the
    # newest such receiver. Anything else (a time before the chain too) means the chain or the record is not what we
    # think. Whatever the name field holds, an entry MQ needs cannot have been written after the collection.
    return j, {
        BlockReason.AMQJRNINF_MISSING: F.col("amqjrninf_missing"),
        BlockReason.AMQJRNINF_MALFORMED: F.col("amqjrninf_malformed"),
        BlockReason.AMQJRNINF_RECEIVER_NOT_IN_CHAIN: names_receiver & named.isNull(),
        BlockReason.AMQJRNINF_NAME_TIME_DISAGREE: names_receiver & named.isNotNull() & ~named.eqNullSafe(by_time),
        BlockReason.AMQJRNINF_TIME_IN_FUTURE: is_usable & (F.col("needed_us") > latest_us),
    }


class _Point(NamedTuple):
    present: Column
    position: Column  # null: none
    blocks: dict[BlockReason, Column]


def _point(prefix: str, latest_us: Column, first_second_us: Column) -> _Point:
    """Section 2.2: one recovery point's position (null: none) and block reasons."""
    is_present, receiver, at_us = F.col(f"{prefix}_present"), F.col(f"{prefix}_receiver"), F.col(f"{prefix}_us")
    named = F.col(f"{prefix}_named")
    is_named = is_present & receiver.isNotNull()
    is_stars = is_present & receiver.isNull()
    position = F.when(is_stars, F.coalesce(F.col(f"{prefix}_by_time"), F.lit(0))).when(is_present, named)
    return _Point(
        is_present,
        position,
        {
            BlockReason.RECOVERY_POINT_NOT_IN_CHAIN: is_named & named.isNull(),
            # AMQ7460/AMQ7462 show whole seconds: the first attach is compared at that precision.
            BlockReason.RECOVERY_POINT_BEFORE_CHAIN: (
                is_present & named.isNotNull() & F.coalesce(at_us < first_second_us, F.lit(False))
            ),
            BlockReason.RECOVERY_POINT_IN_FUTURE: is_present & (at_us > latest_us),
        },
    )


def oldest_needed(*, skew_us: int) -> OldestNeeded:
    """Section 2: n from AMQJRNINF, AMQ7460 and AMQ7462, the most conservative of them; what blocks; what disagrees.

    On the current snapshot's columns joined with chain_facts'.
    """
    # Against the partition's own clock (collected_at), never the controller's: a partition whose clock runs ahead
    # of the controller writes needed times that are plausible for it.
    latest_us = F.col("collected_us") + F.lit(skew_us)
    j, blocks = _amqjrninf(latest_us)
    first_second_us = _truncated(F.col("first_attached_us"), 1_000_000)
    startup, media = (_point(prefix, latest_us, first_second_us) for prefix in ("startup", "media"))
    blocks |= {code: startup.blocks[code] | media.blocks[code] for code in startup.blocks}
    p = F.least(startup.position, media.position)  # least skips nulls
    both_present = startup.present & media.present
    points_disagree = j.isNotNull() & p.isNotNull() & F.when(both_present, j != p).otherwise(j > p)
    is_blocked = F.coalesce(reduce(operator.or_, blocks.values(), F.lit(False)), F.lit(True))
    n = F.when(is_blocked, 0).otherwise(F.least(j, p))
    holding, holding_us = _holding_point(n, is_blocked, startup.position, media.position)
    return OldestNeeded(n, blocks, points_disagree, holding, holding_us)


def _holding_point(n: Column, is_blocked: Column, startup_at: Column, media_at: Column) -> tuple[Column, Column]:
    """Section 2.5: the recovery point at n, the earliest of them if both are (AMQ7460 on a tie); else AMQJRNINF."""
    startup_at_n = F.coalesce(startup_at == n, F.lit(False))
    media_at_n = F.coalesce(media_at == n, F.lit(False))
    startup_first = F.col("startup_us") <= F.col("media_us")
    earlier = F.when(startup_first, F.lit(HoldingPoint.STARTUP)).otherwise(HoldingPoint.MEDIA)
    holding = (
        F.when(is_blocked, F.lit(None).cast("string"))
        .when(startup_at_n & media_at_n, earlier)
        .when(startup_at_n, F.lit(HoldingPoint.STARTUP))
        .when(media_at_n, F.lit(HoldingPoint.MEDIA))
        .otherwise(F.lit(HoldingPoint.AMQJRNINF))
    )
    at_us = (
        F.when(holding == HoldingPoint.STARTUP, F.col("startup_us"))
        .when(holding == HoldingPoint.MEDIA, F.col("media_us"))
        .when(holding == HoldingPoint.AMQJRNINF, F.col("needed_us"))
    )
    return holding, at_us


# --- 3. action and reason -----------------------------------------------------------------------------------------


def is_saved() -> Column:
    """Saved after it was detached: a save taken while attached leaves it ONLINE (never fully saved)."""
    return F.col("has_saved_at") & F.col("status").isin(ReceiverStatus.SAVED, ReceiverStatus.FREED)


def _pick(action: Action, reason: Reason) -> Column:
    return F.struct(F.lit(action).alias("action"), F.lit(reason).alias("reason"))


def site_saved() -> Column:
    """Fully saved by a save taken after the detach, as IBM i shows it: SAVE_TIMESTAMP set, SAVED or FREED.

    A save of the attached receiver (a nightly SAVLIB of the queue manager library takes one) sets SAVE_TIMESTAMP
    but leaves the receiver ONLINE, never fully saved: the entries written after it are on no media.
    """
    return is_saved() & (F.col("detached_us").isNull() | (F.col("saved_us") >= F.col("detached_us")))


class SiteBackup(NamedTuple):
    """`backup: site`: the site's own backup saves the receivers, and mqjournal deletes only what it has saved."""

    as_of_us: int
    min_age_us: int  # policy.site_save_min_age


def _site_decision(site: SiteBackup) -> Column:
    """Section 3.1, the rows after `retained`: a not-needed receiver is deleted once the site's save is old enough."""
    old_enough = (F.lit(site.as_of_us) - F.col("saved_us")) >= F.lit(site.min_age_us)
    return (
        F.when(~site_saved(), _pick(Action.KEEP, Reason.NOT_SAVED_BY_SITE))
        .when(~old_enough, _pick(Action.KEEP, Reason.SITE_SAVE_TOO_RECENT))
        .otherwise(_pick(Action.DELETE, Reason.SAVED_BY_SITE))
    )


def decide(*, is_needed: Column, is_blocked: Column, is_retained: Column, site: SiteBackup | None = None) -> Column:
    """The action for one chain member, and why (docs/planning-rules.md, section 3; with `site`, section 3.1): a
    struct (action, reason)."""
    is_attached = F.col("status") == ReceiverStatus.ATTACHED
    is_freed = F.col("status") == ReceiverStatus.FREED
    saved = is_saved()
    # With the site's backup, mqjournal saves nothing: what it would save, it keeps, for the same reason.
    save = Action.KEEP if site is not None else Action.SAVE
    not_needed = (
        _site_decision(site)
        if site is not None
        else F.when(saved, _pick(Action.DELETE, Reason.NOT_NEEDED_SAVED)).otherwise(
            _pick(Action.SAVE_THEN_DELETE, Reason.NOT_NEEDED_NOT_SAVED)
        )
    )
    return (
        F.when(is_attached, _pick(Action.KEEP, Reason.ATTACHED))
        .when(is_needed & is_freed, _pick(Action.KEEP, Reason.NEEDED_FREED))
        .when(is_needed & saved, _pick(Action.KEEP, Reason.NEEDED_SAVED))
        .when(is_needed, _pick(save, Reason.NEEDED_NOT_SAVED))
        .when(is_blocked & saved, _pick(Action.KEEP, Reason.BLOCKED))
        .when(is_blocked, _pick(save, Reason.BLOCKED_NOT_SAVED))
        .when(is_retained & saved, _pick(Action.KEEP, Reason.RETAINED))
        .when(is_retained, _pick(save, Reason.RETAINED_NOT_SAVED))
        .otherwise(not_needed)
    )


def is_retained(*, policy: Policy, as_of_us: int) -> Column:
    """Not-needed members the policy keeps online: recently detached ones, and the newest `keep_min_receivers`."""
    among_newest = F.col("chain_position") >= F.col("n") - F.lit(policy.keep_min_receivers)
    if policy.retention_days <= 0:
        return among_newest
    cutoff_us = as_of_us - policy.retention // MICROS
    detached_after_cutoff = F.col("detached_us").isNull() | (F.col("detached_us") > F.lit(cutoff_us))
    return among_newest | detached_after_cutoff


# --- 4. alerts ----------------------------------------------------------------------------------------------------


def successor(name: Column) -> Column:
    """Rule 1 as names.py states it: the kept prefix, then the number + 1 modulo SEQUENCE_SIZE, zero-padded."""
    number = F.substring(name, RECEIVER_KEPT_LENGTH + 1, RECEIVER_NUMBER_DIGITS).cast("int")
    following = (number + 1) % SEQUENCE_SIZE
    return F.concat(
        F.substring(name, 1, RECEIVER_KEPT_LENGTH), F.lpad(following.cast("string"), RECEIVER_NUMBER_DIGITS, "0")
    )


def next_name_taken() -> Column:
    """Aggregated over a key's rows of `chain_of`: its ATTACHED receiver's successor name is already a receiver of
    the same library."""
    is_attached = F.col("status") == ReceiverStatus.ATTACHED
    is_receiver_name = F.col("receiver").rlike(rf"^{RECEIVER_NAME_PATTERN}\z")
    successors = F.collect_set(
        F.when(
            is_attached & is_receiver_name,
            F.struct(successor(F.col("receiver")).alias("receiver"), F.col("library").alias("library")),
        )
    )
    existing = F.collect_set(F.struct("receiver", "library"))
    return F.size(F.array_intersect(successors, existing)) > 0


def recovery_stuck(runs: int) -> dict[str, Column]:
    """Per key, over the newest `runs` snapshots: STARTUP/MEDIA recovery point unchanged while receivers changed.

    Window columns over the key's rows of `newest_records` (those snapshots, with their `startup`, `media` and sorted
    `attached_names`), so that the current one carries them.
    """
    key = Window.partitionBy(*KEY)
    runs_seen = F.count(F.lit(1)).over(key)
    newest_attached = F.first(F.when(F.col("recency") == 1, F.col("attached_names")), ignorenulls=True).over(key)
    oldest_attached = F.first(F.when(F.col("recency") == runs, F.col("attached_names")), ignorenulls=True).over(key)
    attached_changed = (runs_seen == runs) & ~oldest_attached.eqNullSafe(newest_attached)

    def stuck(point: str) -> Column:
        named_every_run = F.count(point).over(key) == runs
        # One point throughout: every run names one (count) and the least is the greatest (no distinct count, whose
        # plan expands every row once per distinct column).
        one_point = F.min(point).over(key) == F.max(point).over(key)
        return attached_changed & named_every_run & F.coalesce(one_point, F.lit(False))

    return {"startup_stuck": stuck("startup"), "media_stuck": stuck("media")}


def over_threshold() -> Column:
    # Decimal: a threshold near the top of a long times 1024 must not overflow into a wrong comparison.
    threshold_bytes = F.col("threshold_kb").cast(T.DecimalType(38, 0)) * 1024
    return F.col("threshold_kb").isNotNull() & (F.col("size_bytes").cast(T.DecimalType(38, 0)) > threshold_bytes)


def alerts_for() -> Column:
    """Section 4 on a key's joined columns (its state, figures, next_name_taken, recovery_stuck): the sorted codes."""

    def flag(name: str) -> Column:
        return F.coalesce(F.col(name), F.lit(False))

    raised = {
        Alert.CHECKPOINT_FAILED: F.col("checkpoint.forced") & ~F.col("checkpoint.ok"),
        Alert.OLDEST_NEEDED_NOT_ON_SYSTEM: F.col("amqjrninf_stars"),
        Alert.RECOVERY_POINTS_DISAGREE: F.col("points_disagree"),
        Alert.NEEDED_RECEIVER_NOT_ONLINE: flag("needed_freed"),
        Alert.RECEIVER_OVER_THRESHOLD: flag("over_threshold"),
        Alert.NEXT_RECEIVER_NAME_TAKEN: flag("next_receiver_name_taken"),
        Alert.STARTUP_RECOVERY_STUCK: flag("startup_stuck"),
        Alert.MEDIA_RECOVERY_STUCK: flag("media_stuck"),
        Alert.STARTUP_POINT_OLD: flag("startup_old"),
        Alert.MEDIA_POINT_OLD: flag("media_old"),
        Alert.MESSAGE_UNDECODABLE: F.size("undecodable_messages") > 0,
    }
    codes = F.array(*[F.when(condition, F.lit(alert)) for alert, condition in raised.items()])
    return F.array_sort(F.filter(codes, lambda code: code.isNotNull()))


# --- the plan --------------------------------------------------------------------------------------------------


def point_old(prefix: str, alert_age_us: int) -> Column:
    """Right after a forced checkpoint that worked, the point is older than the policy's limit (partition clock)."""
    checkpointed = F.col("checkpoint.forced") & F.col("checkpoint.ok")
    old = (F.col("collected_us") - F.col(f"{prefix}_us")) > F.lit(alert_age_us)
    return F.coalesce(checkpointed & F.col(f"{prefix}_present") & old, F.lit(False))


def damaged_objects() -> Column:
    """The AMQ7472 objects reported at or after the media recovery point, as "NAME (TYPE)", sorted and distinct."""
    since_point = F.filter(
        F.coalesce(F.col("damaged_objects"), F.array()),
        lambda d: ~F.col("media_present") | (micros(d["reported_at"]) >= F.col("media_us")),
    )
    named = F.transform(since_point, lambda d: F.concat(d["object"], F.lit(" ("), d["object_type"], F.lit(")")))
    return F.array_sort(F.array_distinct(named))


def undecodable_messages() -> Column:
    """`MSGID: DSPMSGD ...` of each message ID whose replacement data did not decode, sorted and distinct (a record
    written before the key has none)."""
    said = F.transform(
        F.coalesce(F.col("undecodable_messages"), F.array()),
        lambda m: F.concat(m["message_id"], F.lit(": "), m["dspmsgd"]),
    )
    return F.array_sort(F.array_distinct(said))


# What current_snapshots leaves out: only the plan's own columns of the snapshot go on with each receiver.
_RAW = ("recency", "collected_at", "journal", "amqjrninf", *POINTS, "startup", "media", "attached_names")


def current_snapshots(newest: DataFrame, *, runs: int, as_of_us: int, max_age_us: int, alert_age_us: int) -> DataFrame:
    """The current snapshot of each key (recency 1 of `newest_records`), with what sections 2 and 4 need of it that
    does not depend on its chain: computed once per snapshot, before its receivers are exploded."""
    current = with_state_columns(newest.withColumns(recovery_stuck(runs)).where(F.col("recency") == 1))
    checkpoint = F.struct(F.col("checkpoint.forced").alias("forced"), F.col("checkpoint.ok").alias("ok"))
    return current.withColumns(
        {
            "checkpoint": checkpoint,
            "journal_name": F.col("journal.name"),
            "journal_library_of_qmgr": F.col("journal.library"),
            "recovery_points": recovery_points_text(),
            "startup_old": point_old("startup", alert_age_us),
            "media_old": point_old("media", alert_age_us),
            "damaged_objects": damaged_objects(),
            "undecodable_messages": undecodable_messages(),
            "utc_offset_minutes": F.floor(collected_offset_us() / F.lit(60_000_000)).cast("long"),
            "stale": (F.lit(as_of_us) - F.col("collected_us")) > F.lit(max_age_us),
        }
    ).drop(*_RAW)


def queue_manager_states(*, skew_us: int) -> dict[str, Column]:
    """Per key: n (the oldest needed position), the block reasons, whether the queue manager is blocked, the
    holding point and whether the recovery points disagree with AMQJRNINF (docs, section 2). On the rows of
    `chain_of` with `chain_facts`: the same on every row of a key."""
    needed = oldest_needed(skew_us=skew_us)
    blocks = {**needed.blocks, BlockReason.SNAPSHOT_STALE: F.col("stale"), BlockReason.CHAIN_BROKEN: chain_is_broken()}
    block_reason = F.concat_ws(",", *[F.when(blocks[code], F.lit(code)) for code in BLOCK_ORDER])
    return {
        "n": needed.position,
        "block_reason": F.when(block_reason != "", block_reason),
        "points_disagree": needed.points_disagree,
        "holding_point": needed.holding_point,
        "holding_us": needed.holding_us,
    }


# The columns of a key that its queue manager's row shows: the same on each of the key's rows of `planned_receivers`.
_PER_KEY = (
    "run_id",
    "collected_us",
    "checkpoint",
    "amqjrninf_usable",
    "amqjrninf_stars",
    "needed_us",
    "chain_length",
    "n",
    "block_reason",
    "blocked",
    "points_disagree",
    "recovery_points",
    "holding_point",
    "holding_us",
    "startup_old",
    "media_old",
    "startup_stuck",
    "media_stuck",
    "damaged_objects",
    "undecodable_messages",
    "utc_offset_minutes",
    "asp_number",
    "asp_capacity_bytes",
    "asp_available_bytes",
)
# ... and what the plan needs of each receiver, for its row and the queue manager's figures.
_PER_RECEIVER = (
    "listed_at",
    "receiver",
    "library",
    "in_chain",
    "chain_position",
    "status",
    "size_bytes",
    "threshold_kb",
    "action",
    "reason",
    "attached_us",
    "detached_us",
    "saved_us",
    "first_sequence",
    "last_sequence",
)


def planned_receivers(receivers: DataFrame, *, policy: Policy, as_of_us: int, skew_us: int) -> DataFrame:
    """Every row of `chain_of` with its key's state (sections 1 and 2) and its action and reason (section 3): one
    pass over the rows, partitioned by key, with no join."""
    with_facts = receivers.withColumns(chain_facts())
    states = with_facts.withColumns(queue_manager_states(skew_us=skew_us)).withColumn(
        "blocked", F.col("block_reason").isNotNull()
    )
    site = SiteBackup(as_of_us, policy.site_save_min_age // MICROS) if policy.site_backup else None
    decision = F.when(~F.col("in_chain"), _pick(Action.KEEP, Reason.NOT_IN_CHAIN)).otherwise(
        decide(
            is_needed=F.col("chain_position") >= F.col("n"),
            is_blocked=F.col("blocked"),
            is_retained=is_retained(policy=policy, as_of_us=as_of_us),
            site=site,
        )
    )
    decided = states.withColumn("decision", decision)
    if site is not None:
        decided = decided.withColumn("decision", _oldest_first())
    return decided.select(
        *KEY,
        *_PER_KEY,
        *[c for c in _PER_RECEIVER if c not in ("action", "reason")],
        F.col("decision.action").alias("action"),
        F.col("decision.reason").alias("reason"),
    )


def _oldest_first() -> Column:
    """Section 3.1, the last row: behind a member that waits for the site's backup, nothing is deletable.

    With mqjournal's own backup every not-needed, not-retained member is deleted (after its save if need be), so
    the deletable ones are always the oldest. The site's saves need not come in chain order (a save of the attached
    receiver leaves it never fully saved while the next one is), and DLTJRNRCV deletes the oldest receiver only.
    """
    waits = F.col("decision.reason").isin(*SITE_WAITS)
    first_wait = F.min(F.when(waits, F.col("chain_position"))).over(Window.partitionBy(*KEY))
    behind = (F.col("decision.reason") == Reason.SAVED_BY_SITE) & (F.col("chain_position") > first_wait)
    return F.when(behind, _pick(Action.KEEP, Reason.OLDER_NOT_SAVED_BY_SITE)).otherwise(F.col("decision"))


def receivers_output(planned: DataFrame) -> DataFrame:
    times = {f"{name}_at": F.timestamp_micros(f"{name}_us") for name in ("attached", "detached", "saved")}
    receivers = planned.where(F.col("listed_at").isNotNull())
    return receivers.select(*[times[c].alias(c) if c in times else F.col(c) for c in RECEIVERS_COLUMNS])


def receiver_figures() -> dict[str, Column]:
    """Per key, aggregated over its planned receivers: the figures (docs, section 5), and what the alerts need of
    receivers."""
    action, size = F.col("action"), F.col("size_bytes")
    is_saving, is_deleting = action.isin(*SAVES), action.isin(*DELETES)
    is_attached = F.col("status") == ReceiverStatus.ATTACHED
    is_needed_member = F.col("in_chain") & (F.col("chain_position") >= F.col("n"))
    is_freed = F.col("status") == ReceiverStatus.FREED
    return {
        "receivers_to_save": F.count(F.when(is_saving, 1)),
        "bytes_to_save": F.sum(F.when(is_saving, size)),
        "receivers_to_delete": F.count(F.when(is_deleting, 1)),
        "bytes_to_delete": F.sum(F.when(is_deleting, size)),
        "member_at_n": F.max(F.when(F.col("chain_position") == F.col("n"), F.col("receiver"))),
        "needed_freed": F.bool_or(is_needed_member & is_freed),
        # Any ATTACHED receiver counts: with two (a broken chain) the alert errs on the side of telling.
        "over_threshold": F.bool_or(is_attached & over_threshold()),
    }


def queue_managers_output(planned: DataFrame, *, as_of_us: int) -> DataFrame:
    """One row per key of `planned_receivers`: its state, the figures of its receivers, and its alerts."""
    qm = planned.groupBy(*KEY).agg(
        *[F.any_value(c).alias(c) for c in _PER_KEY],
        *[column.alias(name) for name, column in receiver_figures().items()],
        next_name_taken().alias("next_receiver_name_taken"),
    )
    bytes_to_delete = F.coalesce(F.col("bytes_to_delete"), F.lit(0)).cast("long")
    columns = {
        "oldest_needed": F.when(F.col("amqjrninf_usable"), F.col("member_at_n")),
        "alerts": alerts_for(),
        "receivers_to_save": F.col("receivers_to_save").cast("long"),
        "bytes_to_save": F.coalesce(F.col("bytes_to_save"), F.lit(0)).cast("long"),
        "receivers_to_delete": F.col("receivers_to_delete").cast("long"),
        "bytes_to_delete": bytes_to_delete,
        "bytes_freed": bytes_to_delete,
        "oldest_needed_age_seconds": _floor_seconds(F.lit(as_of_us) - F.col("needed_us")),
        "holding_point_at": F.timestamp_micros("holding_us"),
        "holding_point_age_seconds": _floor_seconds(F.lit(as_of_us) - F.col("holding_us")),
        "collected_at": F.timestamp_micros("collected_us"),
    }
    return qm.select(*[columns[c].alias(c) if c in columns else F.col(c) for c in QUEUE_MANAGERS_COLUMNS])


def _floor_seconds(micros: Column) -> Column:
    """Whole seconds, floored also when negative (a needed_at after as_of), in exact integer arithmetic."""
    remainder = F.pmod(micros, F.lit(1_000_000))
    whole = micros - remainder  # an exact multiple of a second
    # Decimal, not double: a double loses microseconds beyond about 285 years and could floor one second short.
    return (whole.cast(T.DecimalType(38, 0)) / F.lit(1_000_000)).cast("long")


# --- the summary --------------------------------------------------------------------------------------------------

_BYTES = ("bytes_to_save", "bytes_to_delete", "bytes_freed")


def receiver_totals() -> list[Column]:
    """`Plan.summary`'s receivers per action, observed on the receivers as they are written (no job of its own)."""
    return [F.count(F.when(F.col("action") == action, 1)).alias(action) for action in Action]


def queue_manager_totals() -> list[Column]:
    """`Plan.summary`'s totals and queue managers per alert code, observed on the queue managers as they are
    written (no job of its own)."""
    return [
        F.count(F.lit(1)).alias("queue_managers"),
        F.count(F.when(F.col("blocked"), 1)).alias("blocked_queue_managers"),
        *[F.coalesce(F.sum(c), F.lit(0)).cast("long").alias(c) for c in _BYTES],
        *[F.count(F.when(F.array_contains("alerts", F.lit(alert)), 1)).alias(alert) for alert in Alert],
    ]


def summary(
    receivers: dict[str, Any], queue_managers: dict[str, Any], *, as_of: datetime, policy: Policy
) -> PlanTotals:
    """`Plan.summary` from what was observed as the plan was written (`receiver_totals`, `queue_manager_totals`), so
    that it cannot disagree with the Parquet. As the reference's, only the actions and alerts that occur."""
    actions = {action: int(receivers[action]) for action in sorted(Action) if receivers[action]}
    return PlanTotals(
        as_of=as_of,
        policy=policy,
        queue_managers=queue_managers["queue_managers"],
        blocked_queue_managers=queue_managers["blocked_queue_managers"],
        receivers=sum(actions.values()),
        actions=actions,
        alerts={alert: int(queue_managers[alert]) for alert in sorted(Alert) if queue_managers[alert]},
        **{total: int(queue_managers[total]) for total in _BYTES},
    )
