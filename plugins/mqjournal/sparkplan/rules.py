"""The planning rules in DataFrame form: `mqjournal.rules`, section by section, under the same names.

Read the two side by side: each section here computes, per receiver or per queue manager key, the columns the
function of the same name computes there for one snapshot. docs/planning-rules.md is the text of both; a property
test holds them equal. Everything fleet-sized stays on the executors; only `summary` collects, a few rows.
"""

from __future__ import annotations

import operator
from datetime import datetime
from functools import reduce
from typing import NamedTuple

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqjournal.names import RECEIVER_KEPT_LENGTH, RECEIVER_NAME_PATTERN, RECEIVER_NUMBER_DIGITS, SEQUENCE_SIZE
from mqjournal.planrows import PlanTotals
from mqjournal.policy import Policy
from mqjournal.sparkplan.amqjrninf import STARS, collected_offset_us
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

# What chain_facts needs of the recovery points, carried on each exploded receiver as AMQJRNINF's columns are.
_POINT_FACTS = ("startup_receiver", "startup_us", "media_receiver", "media_us")


def chain_of(current: DataFrame) -> DataFrame:
    """One row per receiver of each current snapshot, chain members numbered in attach order (`chain_position`).

    Names wrap, so they only break ties; the receiver's place in the snapshot breaks the last ties, as a stable
    sort of the snapshot's list would.
    """
    exploded = current.select(
        *KEY,
        "amqjrninf_receiver",
        "amqjrninf_library",
        "needed_us",
        *_POINT_FACTS,
        F.col("journal.name").alias("journal_name"),
        F.col("journal.library").alias("journal_library_of_qmgr"),
        F.posexplode("receivers").alias("listed_at", "r"),
    )
    is_member = (
        (F.col("r.journal") == F.col("journal_name"))
        & (F.col("r.journal_library") == F.col("journal_library_of_qmgr"))
        & F.col("r.attached_at").isNotNull()
    )
    receivers = exploded.select(
        *KEY,
        "amqjrninf_receiver",
        "amqjrninf_library",
        "needed_us",
        *_POINT_FACTS,
        "listed_at",
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
        is_member.alias("in_chain"),
    )
    in_chain = F.coalesce(F.col("in_chain"), F.lit(False))
    # Non-members are numbered in a partition of their own, then dropped to null.
    attach_order = Window.partitionBy(*KEY, "in_chain").orderBy(
        "attached_us", F.col("first_sequence").asc_nulls_last(), "receiver", "listed_at"
    )
    numbered = receivers.withColumn("in_chain", in_chain).withColumn(
        "chain_position", F.when(in_chain, F.row_number().over(attach_order) - 1)
    )
    before = {c: F.lag(c).over(attach_order) for c in ("receiver", "library", "next", "next_library", "last_sequence")}
    return numbered.withColumn("link_broken", F.col("in_chain") & F.coalesce(_link_broken(before), F.lit(False)))


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


def chain_facts(receivers: DataFrame) -> DataFrame:
    """Per key, what sections 1 and 2 need of the chain: its length and links, and the positions by time and name."""
    is_member = F.col("in_chain")
    is_attached_member = is_member & (F.col("status") == ReceiverStatus.ATTACHED)
    is_amqjrninf_receiver = (F.col("receiver") == F.col("amqjrninf_receiver")) & (
        F.col("library") == F.col("amqjrninf_library")
    )
    position = F.col("chain_position")
    # AMQJRNINF keeps milliseconds: compare attach times truncated to the millisecond (docs, section 2).
    attached_ms = _truncated(F.col("attached_us"), 1000)

    def by_time(moment: str) -> Column:
        return F.max(F.when(is_member & (attached_ms <= F.col(moment)), position))

    def named(receiver: str) -> Column:
        return F.min(F.when(is_member & (F.col("receiver") == F.col(receiver)), position))

    return receivers.groupBy(*KEY).agg(
        F.count(F.when(is_member, 1)).alias("chain_length"),
        F.bool_or("link_broken").alias("link_broken"),
        F.count(F.when(is_attached_member, 1)).alias("attached_members"),
        F.max(F.when(is_attached_member, position)).alias("attached_position"),
        F.min(F.when(is_member, F.col("attached_us"))).alias("first_attached_us"),
        by_time("needed_us").alias("by_time"),
        F.min(F.when(is_member & is_amqjrninf_receiver, position)).alias("named_position"),
        by_time("startup_us").alias("startup_by_time"),
        named("startup_receiver").alias("startup_named"),
        by_time("media_us").alias("media_by_time"),
        named("media_receiver").alias("media_named"),
    )


def chain_is_broken() -> Column:
    """On chain_facts' columns: a link does not hold, or the one ATTACHED member is not exactly one, or not last."""
    chain_length = F.coalesce(F.col("chain_length"), F.lit(0))
    one_attached = F.coalesce(F.col("attached_members"), F.lit(0)) == 1
    attached_is_last = F.col("attached_position").eqNullSafe(chain_length - 1)
    return F.coalesce(F.col("link_broken"), F.lit(False)) | ~one_attached | ~attached_is_last


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
    j = F.when(is_usable & is_stars, F.coalesce(by_time, F.lit(0))).when(is_usable, named)
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


def next_name_taken(receivers: DataFrame) -> DataFrame:
    """Keys whose ATTACHED receiver's successor name is already a receiver of the same library."""
    is_attached = F.col("status") == ReceiverStatus.ATTACHED
    is_receiver_name = F.col("receiver").rlike(rf"^{RECEIVER_NAME_PATTERN}\z")
    attached = receivers.where(is_attached & is_receiver_name).select(
        *KEY, successor(F.col("receiver")).alias("receiver"), "library"
    )
    existing = receivers.select(*KEY, "receiver", "library")
    return (
        attached.join(existing, [*KEY, "receiver", "library"], "left_semi")
        .select(*KEY)
        .distinct()
        .withColumn("next_receiver_name_taken", F.lit(True))
    )


def recovery_stuck(newest: DataFrame, runs: int) -> DataFrame:
    """Per key, over the newest `runs` snapshots: STARTUP/MEDIA recovery point unchanged while receivers changed.

    `newest` holds at least those snapshots, with their `startup`, `media` and sorted `attached_names`.
    """
    window = newest.where(F.col("recency") <= runs).select(*KEY, "recency", "startup", "media", "attached_names")
    facts = window.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("runs_seen"),
        # One point throughout: every run names one (count) and the least is the greatest (no distinct count, whose
        # plan expands every row once per distinct column).
        F.count("startup").alias("startup_named"),
        (F.min("startup") == F.max("startup")).alias("startup_one_point"),
        F.count("media").alias("media_named"),
        (F.min("media") == F.max("media")).alias("media_one_point"),
        F.first(F.when(F.col("recency") == 1, F.col("attached_names")), ignorenulls=True).alias("newest_attached"),
        F.first(F.when(F.col("recency") == runs, F.col("attached_names")), ignorenulls=True).alias("oldest_attached"),
    )
    attached_changed = (F.col("runs_seen") == runs) & ~F.col("oldest_attached").eqNullSafe(F.col("newest_attached"))

    def stuck(point: str) -> Column:
        named_every_run = F.col(f"{point}_named") == runs
        return attached_changed & named_every_run & F.coalesce(F.col(f"{point}_one_point"), F.lit(False))

    return facts.select(*KEY, stuck("startup").alias("startup_stuck"), stuck("media").alias("media_stuck"))


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


def queue_manager_states(
    current: DataFrame, facts: DataFrame, *, as_of_us: int, skew_us: int, max_age_us: int, alert_age_us: int
) -> DataFrame:
    """Per key: n (the oldest needed position), the block reasons, whether the queue manager is blocked, the
    recovery points and whether they disagree with AMQJRNINF (docs, section 2)."""
    joined = current.join(facts, KEY, "left")
    needed = oldest_needed(skew_us=skew_us)
    blocks = {
        **needed.blocks,
        BlockReason.SNAPSHOT_STALE: (F.lit(as_of_us) - F.col("collected_us")) > F.lit(max_age_us),
        BlockReason.CHAIN_BROKEN: chain_is_broken(),
    }
    block_reason = F.concat_ws(",", *[F.when(blocks[code], F.lit(code)) for code in BLOCK_ORDER])
    return joined.select(
        *KEY,
        "run_id",
        "collected_us",
        "checkpoint",
        "amqjrninf_usable",
        "amqjrninf_stars",
        "needed_us",
        F.coalesce(F.col("chain_length"), F.lit(0)).cast("long").alias("chain_length"),
        needed.position.alias("n"),
        F.when(block_reason != "", block_reason).alias("block_reason"),
        (block_reason != "").alias("blocked"),
        needed.points_disagree.alias("points_disagree"),
        recovery_points_text().alias("recovery_points"),
        needed.holding_point.alias("holding_point"),
        needed.holding_us.alias("holding_us"),
        point_old("startup", alert_age_us).alias("startup_old"),
        point_old("media", alert_age_us).alias("media_old"),
        damaged_objects().alias("damaged_objects"),
        F.floor(collected_offset_us() / F.lit(60_000_000)).cast("long").alias("utc_offset_minutes"),
        "asp_number",
        "asp_capacity_bytes",
        "asp_available_bytes",
    )


def planned_receivers(receivers: DataFrame, states: DataFrame, *, policy: Policy, as_of_us: int) -> DataFrame:
    """Every receiver of `chain_of` with its action and reason (docs, section 3)."""
    rows = receivers.join(states.select(*KEY, "n", "blocked"), KEY)
    site = SiteBackup(as_of_us, policy.site_save_min_age // MICROS) if policy.site_backup else None
    decision = F.when(~F.col("in_chain"), _pick(Action.KEEP, Reason.NOT_IN_CHAIN)).otherwise(
        decide(
            is_needed=F.col("chain_position") >= F.col("n"),
            is_blocked=F.col("blocked"),
            is_retained=is_retained(policy=policy, as_of_us=as_of_us),
            site=site,
        )
    )
    decided = rows.withColumn("decision", decision)
    if site is not None:
        decided = decided.withColumn("decision", _oldest_first())
    return decided.select("*", F.col("decision.action").alias("action"), F.col("decision.reason").alias("reason"))


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
    return planned.select(*[times[c].alias(c) if c in times else F.col(c) for c in RECEIVERS_COLUMNS])


def receiver_figures(planned: DataFrame) -> DataFrame:
    """Per key, over the planned receivers: the figures (docs, section 5), and what the alerts need of receivers."""
    action, size = F.col("action"), F.col("size_bytes")
    is_saving, is_deleting = action.isin(*SAVES), action.isin(*DELETES)
    is_attached = F.col("status") == ReceiverStatus.ATTACHED
    is_needed_member = F.col("in_chain") & (F.col("chain_position") >= F.col("n"))
    is_freed = F.col("status") == ReceiverStatus.FREED
    return planned.groupBy(*KEY).agg(
        F.count(F.when(is_saving, 1)).alias("receivers_to_save"),
        F.sum(F.when(is_saving, size)).alias("bytes_to_save"),
        F.count(F.when(is_deleting, 1)).alias("receivers_to_delete"),
        F.sum(F.when(is_deleting, size)).alias("bytes_to_delete"),
        F.max(F.when(F.col("chain_position") == F.col("n"), F.col("receiver"))).alias("member_at_n"),
        F.bool_or(is_needed_member & is_freed).alias("needed_freed"),
        # Any ATTACHED receiver counts: with two (a broken chain) the alert errs on the side of telling.
        F.bool_or(is_attached & over_threshold()).alias("over_threshold"),
    )


def queue_managers_output(
    states: DataFrame, figures: DataFrame, taken: DataFrame, stuck: DataFrame, *, as_of_us: int
) -> DataFrame:
    qm = states.join(figures, KEY, "left").join(taken, KEY, "left").join(stuck, KEY, "left")
    bytes_to_delete = F.coalesce(F.col("bytes_to_delete"), F.lit(0)).cast("long")
    columns = {
        "oldest_needed": F.when(F.col("amqjrninf_usable"), F.col("member_at_n")),
        "alerts": alerts_for(),
        "receivers_to_save": F.coalesce(F.col("receivers_to_save"), F.lit(0)).cast("long"),
        "bytes_to_save": F.coalesce(F.col("bytes_to_save"), F.lit(0)).cast("long"),
        "receivers_to_delete": F.coalesce(F.col("receivers_to_delete"), F.lit(0)).cast("long"),
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


def summary(receivers: DataFrame, queue_managers: DataFrame, *, as_of: datetime, policy: Policy) -> PlanTotals:
    """`Plan.summary`: small aggregates only, in one job whose few rows (totals, one per action, one per alert code)
    reach the driver."""
    sums = queue_managers.agg(
        F.count(F.lit(1)).alias("queue_managers"),
        F.count(F.when(F.col("blocked"), 1)).alias("blocked_queue_managers"),
        *[F.coalesce(F.sum(c), F.lit(0)).alias(c) for c in ("bytes_to_save", "bytes_to_delete", "bytes_freed")],
    )
    # One row per total, so that totals, actions and alerts come back in a single job.
    names, values = [F.lit(c) for c in sums.columns], [F.col(c).cast("long") for c in sums.columns]
    as_map = F.map_from_arrays(F.array(*names), F.array(*values))
    totals = sums.select(F.lit("total").alias("kind"), F.explode(as_map).alias("name", "count"))
    actions = (
        receivers.groupBy(F.col("action").alias("name")).count().select(F.lit("action").alias("kind"), "name", "count")
    )
    alerts = (
        queue_managers.select(F.explode("alerts").alias("name"))
        .groupBy("name")
        .count()
        .select(F.lit("alert").alias("kind"), "name", "count")
    )
    found: dict[str, dict[str, int]] = {"total": {}, "action": {}, "alert": {}}
    for row in totals.unionByName(actions).unionByName(alerts).collect():
        found[row.kind][row.name] = row["count"]
    return PlanTotals(
        as_of=as_of,
        policy=policy,
        queue_managers=found["total"]["queue_managers"],
        blocked_queue_managers=found["total"]["blocked_queue_managers"],
        receivers=sum(found["action"].values()),
        actions={Action(name): count for name, count in sorted(found["action"].items())},
        alerts={Alert[name]: count for name, count in sorted(found["alert"].items())},
        bytes_to_save=found["total"]["bytes_to_save"],
        bytes_to_delete=found["total"]["bytes_to_delete"],
        bytes_freed=found["total"]["bytes_freed"],
    )
