"""The Spark plan job (spark_apps/plan_receivers.py) against docs/planning-rules.md, on a hand-built fleet.

The job plans the whole fleet once, in a session on the tests' standing Spark Connect server, and each test reads
the Parquet back. The failure tests plan each bad input there too, and two of them again with spark-submit, whose
exit status and last words must be the session's.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from mqjournal import planjob
from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import format_amqjrninf, parse_amqjrninf
from mqjournal.planjob import PlanJobFailed, run_plan, run_plan_connect, spark_submit_args
from mqjournal.planrows import (
    PlannedQueueManager,
    PlannedReceiver,
    PlanTotals,
    read_queue_managers,
    read_receivers,
)
from mqjournal.policy import Policy
from mqjournal.snapshot import (
    ADDED_KEYS,
    Checkpoint,
    CommandMessage,
    JournalRef,
    QueueMessage,
    Receiver,
    ReceiverStatus,
    RecoveryPoint,
    Snapshot,
    UndecodableMessage,
    write_snapshots,
)

pytestmark = pytest.mark.e2e

UTC = UTC
CEST = timezone(timedelta(hours=2))
AS_OF = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
COLLECTED = AS_OF - timedelta(hours=1)
POLICY = Policy(max_snapshot_age_hours=24, retention_days=2, keep_min_receivers=1, stuck_after_runs=3)


def ago(days: float = 0, hours: float = 0) -> datetime:
    return AS_OF - timedelta(days=days, hours=hours)


# --- building snapshots ---------------------------------------------------------------------------------------


def chain(
    library: str,
    links: list[tuple[str, str, datetime]],
    *,
    journal: str = "AMQAJRN",
    size: int = 1000,
    deleted_before: str | None = "AMQA088888",
) -> list[Receiver]:
    """Linked receivers from (name, status, attached_at), detached when the next one is attached.

    The oldest one names `deleted_before` as its previous receiver: older receivers were deleted, which is normal.
    """
    receivers = []
    for i, (name, status, attached_at) in enumerate(links):
        last = i == len(links) - 1
        detached_at = None if last else links[i + 1][2]
        receivers.append(
            Receiver(
                name=name,
                library=library,
                status=status,
                attached_at=attached_at,
                detached_at=detached_at,
                saved_at=detached_at + timedelta(minutes=5) if status in ("SAVED", "FREED") else None,
                size_bytes=size * (i + 1),
                threshold_kb=None,
                previous=links[i - 1][0] if i else deleted_before,
                previous_library=library if i or deleted_before else None,
                next=None if last else links[i + 1][0],
                next_library=None if last else library,
                first_sequence=1 + 100 * i,
                last_sequence=100 * (i + 1),
                journal=journal,
                journal_library=library,
            )
        )
    return receivers


def plain_chain(library: str, statuses: list[str], *, first: int = 1) -> list[Receiver]:
    """Members attached a day apart from 10 days ago, named AMQA{first:06}...: all detaches older than retention."""
    return chain(library, [(f"AMQA{first + i:06d}", s, ago(days=10 - i)) for i, s in enumerate(statuses)])


def amqjrninf(receivers: list[Receiver], position: int | None, *, at: datetime | None = None, tz=UTC) -> str:
    """What MQ writes when chain member `position` holds the oldest needed entry (None: asterisks), in local time."""
    holder = receivers[position or 0]
    needed_at = at or holder.attached_at + timedelta(hours=1)
    local = needed_at.astimezone(tz).replace(tzinfo=None)
    return format_amqjrninf(None if position is None else holder.name, holder.library, local)


FORCED_OK = Checkpoint(forced=True, ok=True)


def snapshot(
    host: str,
    qmgr: str,
    library: str,
    receivers: list[Receiver],
    raw_amqjrninf: str | None,
    *,
    collected_at: datetime = COLLECTED,
    run_id: str = "R3",
    checkpoint: Checkpoint = FORCED_OK,
    startup: str | None = None,
    media: str | None = None,
) -> Snapshot:
    def point(receiver: str | None) -> RecoveryPoint | None:
        return None if receiver is None else RecoveryPoint(receiver=receiver, at=collected_at - timedelta(days=1))

    return Snapshot(
        run_id=run_id,
        collected_at=collected_at,
        host=host,
        qmgr=qmgr,
        qmgr_library=library,
        journal=JournalRef(name="AMQAJRN", library=library),
        checkpoint=checkpoint,
        amqjrninf=raw_amqjrninf,
        startup_recovery=point(startup),
        media_recovery=point(media),
        receivers=receivers,
        messages=[],
    )


def simple(host: str, qmgr: str, statuses: list[str], needed: int | None, **kw) -> Snapshot:
    library = f"QM{qmgr}"[:10]
    receivers = plain_chain(library, statuses)
    return snapshot(host, qmgr, library, receivers, amqjrninf(receivers, needed), **kw)


def edited(receivers: list[Receiver], index: int, **changes) -> list[Receiver]:
    if "status" in changes:
        changes["status"] = ReceiverStatus(changes["status"])
    return [r.model_copy(update=changes) if i == index else r for i, r in enumerate(receivers)]


# --- the fleet ------------------------------------------------------------------------------------------------

OLD4 = ["SAVED", "SAVED", "SAVED", "ATTACHED"]

# Every kind of AMQJRNINF value the parser accepts or rejects; the job must flag exactly the same ones malformed.
VALID = "AMQA000001QMJ       20261023130000000"
JRNINF_VALUES = [
    VALID,
    VALID + " \x00" * 20,
    "**********QMJ       20261023130000000",
    "*" * 20 + "20261023130000000",
    "AMQA00001\u2003QMJ       20261023130000000",  # str.rstrip() removes an em space
    "AMQA00001\u3000QMJ       20261023130000000",
    "AMQA000001QMJ\u0085      20261023130000000",
    "AMQA000001QMJ       00010101000000000",  # year 1 exists
    "AMQA000001QMJ       20240229000000999",  # a leap day
    "",
    " " * 37,
    "\x00" * 64,
    VALID[:36],
    VALID + "X",
    VALID + "\n",
    VALID + " \t",
    "amqa000001QMJ       20261023130000000",
    "AMQA000001qmj       20261023130000000",
    "AMQA00000!QMJ       20261023130000000",
    "AMQ A0000 QMJ       20261023130000000",
    " AMQA00001QMJ       20261023130000000",
    "\tAMQA0001 QMJ       20261023130000000",
    "AMQA00001\x00QMJ       20261023130000000",
    "ＡMQA000001QMJ       20261023130000000",  # noqa: RUF001 - a fullwidth A, on purpose
    "          QMJ       20261023130000000",
    "*****     QMJ       20261023130000000",
    "AMQA00001*QMJ       20261023130000000",
    "AMQA000001**********20261023130000000",
    "AMQA000001QMJ       2026102303000000X",
    "AMQA000001QMJ       2026-10-23T03:00:",
    "AMQA000001QMJ       202610230300000٠0",  # noqa: RUF001 - an Arabic-Indic zero: a digit to Unicode, not to [0-9]
    "AMQA000001QMJ       20260230030000000",  # February 30
    "AMQA000001QMJ       20230229030000000",  # not a leap year
    "AMQA000001QMJ       20261323030000000",
    "AMQA000001QMJ       00000101000000000",  # year 0
    "AMQA000001QMJ       20261023250000000",  # hour 25
    "AMQA000001QMJ       20261023240000000",
    "AMQA000001QMJ       20261023036000000",
    "AMQA000001QMJ       20261023030060000",  # second 60
    "AMQA000001QMJ       20261000030000000",  # day 0
]


def jrninf_fleet() -> list[Snapshot]:
    snapshots = []
    for i, raw in enumerate(JRNINF_VALUES):
        library = "QMJ"
        receivers = plain_chain(library, ["SAVED", "ATTACHED"])
        snapshots.append(snapshot("ibmi9", f"J{i}", library, receivers, raw))
    return snapshots


def broken_chains() -> dict[str, Snapshot]:
    """One queue manager per way a chain breaks; AMQJRNINF is consistent in each, so only CHAIN_BROKEN applies."""
    base = plain_chain("QMBRK", OLD4)
    cases = {
        "NEXTWRONG": edited(base, 0, next="AMQA000003"),
        "NEXTLIB": edited(base, 0, next_library="QMOTHER"),
        "PREVWRONG": edited(base, 2, previous="AMQA000001"),
        "GAP": edited(base, 2, first_sequence=250, last_sequence=300),
        "TWOATT": edited(base, 1, status="ATTACHED", saved_at=None),
        "ATTNOTLAST": edited(edited(base, 1, status="ATTACHED", saved_at=None), 3, status="ONLINE"),
        "NOATT": edited(base, 3, status="ONLINE"),
    }
    return {
        qmgr: snapshot("ibmi5", qmgr, "QMBRK", receivers, amqjrninf(receivers, 1)) for qmgr, receivers in cases.items()
    }


def stuck_fleet() -> tuple[list[Snapshot], list[Snapshot]]:
    """(current input, --history input) for the STARTUP/MEDIA_RECOVERY_STUCK alerts."""

    def run(qmgr: str, run_id: str, collected_at: datetime, attached: int, startup="AMQA000001", media=None):
        library = f"QM{qmgr}"[:10]
        receivers = plain_chain(library, ["SAVED"] * (attached - 1) + ["ATTACHED"])
        return snapshot(
            "ibmi4", qmgr, library, receivers, amqjrninf(receivers, 0),
            collected_at=collected_at, run_id=run_id, startup=startup, media=media,
        )  # fmt: skip

    t0, t1, t2, t3 = (COLLECTED - timedelta(hours=h) for h in (6, 4, 2, 0))
    current, history = [], []
    # Through --history: runs R1 and R2 come from the history folder, R3 from PATH.
    history += [run("STUCKH", "R1", t1, 3), run("STUCKH", "R2", t2, 4)]
    current += [run("STUCKH", "R3", t3, 5)]
    # Repeated snapshots in the same input; R3 also in the history folder (an identical duplicate).
    same = [run("STUCKS", r, t, n, media="AMQA000002") for r, t, n in (("R1", t1, 3), ("R2", t2, 4), ("R3", t3, 5))]
    current += same
    history += [same[-1]]
    # Not stuck: receivers did not change; only two runs; a point moved; a run without a receiver.
    current += [run("SAMEATT", r, t, 4) for r, t in (("R1", t1), ("R2", t2), ("R3", t3))]
    current += [run("TWORUNS", r, t, n) for r, t, n in (("R2", t2, 4), ("R3", t3, 5))]
    current += [
        run("MOVED", "R1", t1, 3, startup="AMQA000001"),
        run("MOVED", "R2", t2, 4, startup="AMQA000002"),
        run("MOVED", "R3", t3, 5, startup="AMQA000002"),
    ]
    current += [run("GONE", "R1", t1, 3), run("GONE", "R2", t2, 4, startup=None), run("GONE", "R3", t3, 5)]
    # The change happened before the window: the newest three runs all have AMQA000004 attached.
    current += [run("WINDOW", "R0", t0, 3)] + [run("WINDOW", r, t, 4) for r, t in (("R1", t1), ("R2", t2), ("R3", t3))]
    return current, history


REORDERED = "REORDER"
# Written before the keys added to v1 later (snapshot.ADDED_KEYS) existed: complete without them.
BEFORE_ADDED_KEYS = "OLDKEYS"


def reversed_keys(value):
    """The same JSON value with the keys of every object in reverse order."""
    if isinstance(value, dict):
        return {k: reversed_keys(v) for k, v in reversed(value.items())}
    if isinstance(value, list):
        return [reversed_keys(v) for v in value]
    return value


def without_added_keys(value):
    """The same JSON value as a writer from before snapshot.ADDED_KEYS wrote it."""
    if isinstance(value, dict):
        return {k: without_added_keys(v) for k, v in value.items() if k not in ADDED_KEYS}
    if isinstance(value, list):
        return [without_added_keys(v) for v in value]
    return value


ATTACK = "********************20991231235959999"  # the AMQJRNINF of issue #12: asterisks, decades ahead
OLD_POINTS = {"STARTUP_POINT_OLD", "MEDIA_POINT_OLD"}


def aside_old_points(alerts) -> list[str]:
    """The alerts but the first-run ones about old recovery points, which these days-old fleets all raise."""
    return [code for code in alerts if code not in OLD_POINTS]


def recovery_point_fleet() -> list[Snapshot]:
    """AMQJRNINF with AMQ7460/AMQ7462 (docs, section 2): AMQA000001-4 saved (attached 10 to 7 days ago), AMQA000005
    attached; AMQJRNINF names AMQA000004 unless said otherwise."""

    def qm(qmgr: str, raw: str | None = None, startup=None, media=None, needed_at: datetime | None = None):
        library = f"QM{qmgr}"[:10]
        receivers = plain_chain(library, ["SAVED"] * 4 + ["ATTACHED"])
        if raw is None:
            raw = amqjrninf(receivers, 4 if needed_at else 3, at=needed_at)
        built = snapshot("ibmi10", qmgr, library, receivers, raw)
        return built.model_copy(update={"startup_recovery": startup, "media_recovery": media})

    in_second = ago(days=9, hours=-1)  # an entry in AMQA000002
    in_fourth = ago(days=7, hours=-1)
    return [
        qm("ATTACK", ATTACK, RecoveryPoint(receiver="AMQA000002", at=in_second),
           RecoveryPoint(receiver=None, at=in_fourth)),
        qm("ATTACKS", ATTACK, RecoveryPoint(receiver=None, at=in_second)),
        qm("PTOLDER", startup=RecoveryPoint(receiver="AMQA000002", at=in_second),
           media=RecoveryPoint(receiver="AMQA000004", at=in_fourth)),
        qm("PTAGREE", startup=RecoveryPoint(receiver="AMQA000004", at=in_fourth)),
        qm("PTOUT", startup=RecoveryPoint(receiver="AMQA000777", at=in_second)),
        qm("PTEARLY", media=RecoveryPoint(receiver="AMQA000002", at=ago(days=11))),
        qm("PTFUTURE", startup=RecoveryPoint(receiver="AMQA000004", at=COLLECTED + timedelta(seconds=301))),
        qm("PTSKEW", startup=RecoveryPoint(receiver="AMQA000004", at=COLLECTED + timedelta(seconds=300))),
        qm("JRNFUTURE", needed_at=COLLECTED + timedelta(seconds=300, milliseconds=1)),
        qm("JRNSKEW", needed_at=COLLECTED + timedelta(seconds=300)),
    ]  # fmt: skip


def fleet() -> tuple[list[Snapshot], list[Snapshot]]:
    current: list[Snapshot] = []

    # The chain wraps: attach order, not name order. Collected in +02:00, and AMQJRNINF in that local time: read
    # as UTC, its time would fall after AMQA000001's attach and disagree with the name.
    wrap = chain(
        "QMWRAP",
        [
            ("AMQA099998", "SAVED", ago(days=10)),
            ("AMQA099999", "ONLINE", ago(days=8)),
            ("AMQA000000", "SAVED", datetime(2026, 10, 31, tzinfo=UTC)),
            ("AMQA000001", "ATTACHED", datetime(2026, 11, 2, 1, 0, tzinfo=UTC)),
        ],
    )
    wrap = edited(wrap, 3, threshold_kb=4, size_bytes=4 * 1024)  # exactly at the threshold: no alert
    needed = amqjrninf(wrap, 2, at=datetime(2026, 11, 2, 0, 30, 0, 250_000, tzinfo=UTC), tz=CEST)
    listed = sorted(wrap, key=lambda r: r.name)
    not_forced = Checkpoint(forced=False, ok=False)
    current.append(
        snapshot(
            "ibmi1", "WRAP", "QMWRAP", listed, needed, collected_at=COLLECTED.astimezone(CEST), checkpoint=not_forced
        )
    )

    # Identical receiver names in two libraries, planned differently.
    # Unknown links (null next/previous, null sequence) do not break a chain.
    alpha = edited(plain_chain("QMALPHA", OLD4), 1, next=None, next_library=None, previous=None, previous_library=None)
    alpha += [
        Receiver(
            name="JRNRCV0001",
            library="QMALPHA",
            status="ONLINE",
            attached_at=ago(days=3),
            size_bytes=7,
            journal="OTHERJRN",
            journal_library="QMALPHA",
        )
    ]
    beta = edited(plain_chain("QMBETA", OLD4), 2, first_sequence=None)
    beta += [
        Receiver(name="AMQA000009", library="QMBETA", status="EMPTY", size_bytes=9)  # never attached
    ]
    current.append(snapshot("ibmi1", "ALPHA", "QMALPHA", alpha, amqjrninf(alpha, 3)))
    current.append(snapshot("ibmi1", "BETA", "QMBETA", beta, amqjrninf(beta, 2)))

    # One queue manager name on two hosts; the one on ibmi2 was collected 30 hours ago.
    prod1 = plain_chain("QMPROD", ["ONLINE", "SAVED", "ONLINE", "ATTACHED"])
    prod1 = edited(prod1, 0, saved_at=ago(days=8))  # saved while attached: still ONLINE, so not saved
    prod2 = plain_chain("QMPROD", [*OLD4[:1], "ONLINE", *OLD4[2:]])
    current.append(snapshot("ibmi1", "PROD", "QMPROD", prod1, amqjrninf(prod1, 2)))
    current.append(snapshot("ibmi2", "PROD", "QMPROD", prod2, amqjrninf(prod2, 2), collected_at=ago(hours=30)))

    # A needed receiver is FREED.
    current.append(simple("ibmi3", "FREED", ["SAVED", "FREED", "SAVED", "ATTACHED"], 1))

    # Retention: detached within retention_days (or never detached) keeps a not-needed receiver online.
    keep = chain(
        "QMKEEP",
        [
            ("AMQA000001", "SAVED", ago(days=10)),
            ("AMQA000002", "SAVED", ago(days=9)),
            ("AMQA000003", "SAVED", ago(hours=36)),
            ("AMQA000004", "ONLINE", ago(hours=30)),
            ("AMQA000005", "SAVED", ago(hours=24)),
            ("AMQA000006", "ONLINE", ago(hours=12)),
            ("AMQA000007", "ATTACHED", ago(hours=6)),
        ],
    )
    current.append(snapshot("ibmi3", "KEEP", "QMKEEP", keep, amqjrninf(keep, 5)))
    nodet = edited(plain_chain("QMNODET", ["SAVED", "SAVED", "SAVED", "SAVED", "ATTACHED"]), 0, detached_at=None)
    current.append(snapshot("ibmi3", "NODET", "QMNODET", nodet, amqjrninf(nodet, 3)))

    # Each AMQJRNINF block, and asterisks.
    current.append(simple("ibmi6", "MISSING", OLD4, None).model_copy(update={"amqjrninf": None}))
    notin = plain_chain("QMNOTIN", OLD4)
    unknown = format_amqjrninf("AMQA000777", "QMNOTIN", datetime(2026, 10, 25))
    current.append(snapshot("ibmi6", "NOTIN", "QMNOTIN", notin, unknown))
    disagree = plain_chain("QMDISAG", OLD4)
    current.append(snapshot("ibmi6", "DISAG", "QMDISAG", disagree, amqjrninf(disagree, 2, at=ago(days=9, hours=-1))))
    stars = plain_chain("QMSTARS", ["SAVED", "SAVED", "ONLINE", "SAVED", "ATTACHED"])
    current.append(snapshot("ibmi6", "STARS", "QMSTARS", stars, amqjrninf(stars, None, at=ago(days=7, hours=-1))))
    early = plain_chain("QMEARLY", OLD4)
    current.append(snapshot("ibmi6", "EARLY", "QMEARLY", early, amqjrninf(early, None, at=ago(days=11))))

    current += broken_chains().values()
    # No receivers at all: an empty chain, so no ATTACHED member.
    current.append(snapshot("ibmi5", "NORCV", "QMNORCV", [], format_amqjrninf("AMQA000001", "QMNORCV", ago(days=1))))
    # Several blocks at once, in the documented order.
    many = edited(plain_chain("QMMANY", OLD4), 1, next="AMQA000009")
    current.append(snapshot("ibmi6", "MANY", "QMMANY", many, None, collected_at=ago(days=3)))

    # Alerts.
    current.append(simple("ibmi7", "CKPT", OLD4, 2, checkpoint=Checkpoint(forced=True, ok=False)))
    over = plain_chain("QMOVER", OLD4)
    over = edited(over, 3, threshold_kb=4, size_bytes=4 * 1024 + 1)
    current.append(snapshot("ibmi7", "OVER", "QMOVER", over, amqjrninf(over, 2)))
    taken = chain("QMTAKEN", [("AMQA099998", "SAVED", ago(days=3)), ("AMQA099999", "ATTACHED", ago(days=2))])
    taken += [Receiver(name="AMQA000000", library="QMTAKEN", status="EMPTY", size_bytes=5)]
    current.append(snapshot("ibmi7", "TAKEN", "QMTAKEN", taken, amqjrninf(taken, 1)))
    elsewhere = plain_chain("QMFREE", OLD4)
    elsewhere += [Receiver(name="AMQA000005", library="QMOTHER", status="EMPTY", size_bytes=5)]
    current.append(snapshot("ibmi7", "FREE", "QMFREE", elsewhere, amqjrninf(elsewhere, 2)))
    # An AMQ7460 whose replacement data did not decode by the declared layout: said, and planned as without it.
    undecodable = UndecodableMessage(
        message_id="AMQ7460",
        sent_at=ago(hours=1),
        problem="&4 (receiver) reads 'AMQ@@', not an IBM i object name",
        dspmsgd="DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)",
    )
    current.append(simple("ibmi7", "UNDEC", OLD4, 2).model_copy(update={"undecodable_messages": [undecodable]}))

    # The current state is the latest collected_at, then the greatest run_id; not the greatest run_id alone.
    tie_old = plain_chain("QMTIE", ["ONLINE", "ONLINE", "ONLINE", "ATTACHED"])
    tie_new = plain_chain("QMTIE", OLD4)
    current.append(snapshot("ibmi8", "TIE", "QMTIE", tie_old, amqjrninf(tie_old, 2), run_id="R3a"))
    current.append(snapshot("ibmi8", "TIE", "QMTIE", tie_new, amqjrninf(tie_new, 2), run_id="R3b"))
    order = plain_chain("QMORDER", OLD4)
    earlier = ago(hours=3)
    current.append(snapshot("ibmi8", "ORDER", "QMORDER", order, amqjrninf(order, 2), run_id="Z9", collected_at=earlier))
    current.append(snapshot("ibmi8", "ORDER", "QMORDER", order[:3], amqjrninf(order, 2), run_id="A1"))

    current += jrninf_fleet()
    current += recovery_point_fleet()
    # Text that looks like keys inside string values, and a record whose keys are in another order (written by
    # the fixture in reverse): both are complete records, and must be planned, not refused.
    tricky = simple("ibmi11", "TRICKY", OLD4, 2)
    lookalike = 'He said "next_library": null, {"name": "X"}, ["a", "b"], \\":'
    tricky = tricky.model_copy(
        update={
            "checkpoint": Checkpoint(forced=True, ok=True, messages=[CommandMessage(id=None, text=lookalike)]),
            "messages": [QueueMessage(id="AMQ7460", at=COLLECTED, text=lookalike, queue="QMTRICKY/QMQMMSG")],
        }
    )
    old = simple("ibmi11", BEFORE_ADDED_KEYS, OLD4, 2)
    old = old.model_copy(update={"messages": [QueueMessage(id="AMQ7460", at=COLLECTED, text="x", queue="Q/QMQMMSG")]})
    current += [tricky, simple("ibmi11", REORDERED, OLD4, 2), old]
    stuck_current, history = stuck_fleet()
    return current + stuck_current, history


# --- the run ----------------------------------------------------------------------------------------------------


@dataclass
class Plan:
    summary: PlanTotals
    receivers: pd.DataFrame
    queue_managers: pd.DataFrame
    out: Path

    def qm(self, qmgr: str, host: str | None = None) -> pd.Series:
        rows = self.queue_managers[self.queue_managers.qmgr == qmgr]
        if host is not None:
            rows = rows[rows.host == host]
        assert len(rows) == 1, rows
        return rows.iloc[0]

    def rows(self, qmgr: str, host: str | None = None) -> pd.DataFrame:
        rows = self.receivers[self.receivers.qmgr == qmgr]
        if host is not None:
            rows = rows[rows.host == host]
        return rows

    def actions(self, qmgr: str, host: str | None = None) -> dict[str, tuple[str, str]]:
        return {r.receiver: (r.action, r.reason) for r in self.rows(qmgr, host).itertuples()}

    def positions(self, qmgr: str, host: str | None = None) -> dict[str, int | None]:
        rows = self.rows(qmgr, host).itertuples()
        return {r.receiver: (None if pd.isna(r.chain_position) else int(r.chain_position)) for r in rows}

    def block(self, qmgr: str, host: str | None = None) -> str | None:
        return self.qm(qmgr, host).block_reason

    def alerts(self, qmgr: str, host: str | None = None) -> list[str]:
        return list(self.qm(qmgr, host).alerts)


@pytest.fixture(scope="module")
def plan(tmp_path_factory, spark_connect) -> Plan:
    root = tmp_path_factory.mktemp("plan")
    current, history = fleet()
    special = (REORDERED, BEFORE_ADDED_KEYS)
    write_snapshots(root / "snapshots" / "run_id=R3" / "snapshots.jsonl", [s for s in current if s.qmgr not in special])
    (root / "snapshots" / "run_id=R3" / "reordered.jsonl").write_text(
        "".join(
            json.dumps(reversed_keys(s.model_dump(mode="json", by_alias=True))) + "\n"
            for s in current
            if s.qmgr == REORDERED
        )
    )
    (root / "snapshots" / "run_id=R3" / "before_added_keys.jsonl").write_text(
        "".join(
            json.dumps(without_added_keys(s.model_dump(mode="json", by_alias=True))) + "\n"
            for s in current
            if s.qmgr == BEFORE_ADDED_KEYS
        )
    )
    for run_id in ("R1", "R2", "R3"):
        write_snapshots(
            root / "history" / f"run_id={run_id}" / "snapshots.jsonl", [s for s in history if s.run_id == run_id]
        )
    # A collector's half-written file must not be read from a folder.
    (root / "history" / "run_id=R9").mkdir()
    (root / "history" / "run_id=R9" / "snapshots.jsonl.tmp").write_text('{"schema": "mqjournal.snap')
    policy_file = root / "policy.json"
    policy_file.write_text(POLICY.model_dump_json())
    out = root / "out"
    # On the tests' standing Spark Connect server: these tests check the rules on a hand-built fleet. The launch by
    # spark-submit is checked by test_spark_submit_fails_on_bad_input_... here, tests/plan/test_plan_from_a_url_
    # data_folder.py and the demo; executors in JVMs of their own by `make cluster-test` (a standalone cluster).
    summary = run_plan_connect(
        spark_connect, root / "snapshots", out, history=root / "history", policy_file=policy_file, as_of=AS_OF
    )
    return Plan(summary, pd.read_parquet(out / "receivers"), pd.read_parquet(out / "queue_managers"), out)


# --- the chain ----------------------------------------------------------------------------------------------------


def test_the_chain_wraps_and_is_ordered_by_attach_time_not_name(plan):
    assert plan.positions("WRAP") == {"AMQA099998": 0, "AMQA099999": 1, "AMQA000000": 2, "AMQA000001": 3}
    assert plan.qm("WRAP").chain_length == 4


def test_wrapped_chain_is_planned_from_the_local_time_of_amqjrninf(plan):
    qm = plan.qm("WRAP")
    assert qm.block_reason is None
    assert qm.oldest_needed == "AMQA000000"
    assert plan.actions("WRAP") == {
        "AMQA099998": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA099999": ("save", "RETAINED_NOT_SAVED"),  # keep_min_receivers=1
        "AMQA000000": ("keep", "NEEDED_SAVED"),
        "AMQA000001": ("keep", "ATTACHED"),
    }


def test_identical_receiver_names_in_two_libraries_are_two_chains(plan):
    assert plan.actions("ALPHA") == {
        "AMQA000001": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000002": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000003": ("keep", "RETAINED"),
        "AMQA000004": ("keep", "ATTACHED"),
        "JRNRCV0001": ("keep", "NOT_IN_CHAIN"),
    }
    assert plan.actions("BETA") == {
        "AMQA000001": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000002": ("keep", "RETAINED"),
        "AMQA000003": ("keep", "NEEDED_SAVED"),
        "AMQA000004": ("keep", "ATTACHED"),
        "AMQA000009": ("keep", "NOT_IN_CHAIN"),
    }
    assert set(plan.rows("ALPHA").library) == {"QMALPHA"} and set(plan.rows("BETA").library) == {"QMBETA"}
    assert (plan.qm("ALPHA").oldest_needed, plan.qm("BETA").oldest_needed) == ("AMQA000004", "AMQA000003")


def test_receivers_outside_the_chain_have_no_position(plan):
    assert plan.positions("ALPHA")["JRNRCV0001"] is None
    assert plan.positions("BETA")["AMQA000009"] is None
    assert plan.qm("ALPHA").chain_length == 4


def test_one_queue_manager_name_on_two_hosts_is_two_queue_managers(plan):
    assert plan.actions("PROD", "ibmi1") == {
        "AMQA000001": ("save_then_delete", "NOT_NEEDED_NOT_SAVED"),  # saved while attached: still ONLINE
        "AMQA000002": ("keep", "RETAINED"),
        "AMQA000003": ("save", "NEEDED_NOT_SAVED"),
        "AMQA000004": ("keep", "ATTACHED"),
    }
    assert plan.actions("PROD", "ibmi2") == {
        "AMQA000001": ("keep", "BLOCKED"),
        "AMQA000002": ("save", "BLOCKED_NOT_SAVED"),
        "AMQA000003": ("keep", "NEEDED_SAVED"),
        "AMQA000004": ("keep", "ATTACHED"),
    }
    assert plan.block("PROD", "ibmi1") is None
    assert plan.block("PROD", "ibmi2") == "SNAPSHOT_STALE"


@pytest.mark.parametrize("qmgr", ["NEXTWRONG", "NEXTLIB", "PREVWRONG", "GAP", "TWOATT", "ATTNOTLAST", "NOATT"])
def test_each_way_a_chain_breaks_blocks_the_queue_manager(plan, qmgr):
    assert plan.block(qmgr) == "CHAIN_BROKEN"
    assert plan.qm(qmgr).receivers_to_delete == 0


def test_a_queue_manager_without_receivers_is_planned_with_an_empty_chain(plan):
    qm = plan.qm("NORCV")
    assert qm.block_reason == "AMQJRNINF_RECEIVER_NOT_IN_CHAIN,CHAIN_BROKEN"
    assert (qm.chain_length, qm.oldest_needed, qm.receivers_to_save, qm.bytes_to_delete) == (0, None, 0, 0)
    assert plan.rows("NORCV").empty


def test_unknown_links_and_a_deleted_predecessor_do_not_break_a_chain(plan):
    # plain chains name a deleted AMQA088888 before their oldest member; an attached receiver has no next.
    assert plan.block("ALPHA") is None
    assert plan.block("KEEP") is None


# --- the oldest needed receiver, and blocks -----------------------------------------------------------------------


def test_missing_amqjrninf_treats_every_receiver_as_needed(plan):
    qm = plan.qm("MISSING")
    assert (qm.block_reason, qm.oldest_needed) == ("AMQJRNINF_MISSING", None)
    assert pd.isna(qm.oldest_needed_age_seconds)
    assert {reason for _, reason in plan.actions("MISSING").values()} == {"NEEDED_SAVED", "ATTACHED"}


def test_a_named_receiver_outside_the_chain_blocks(plan):
    qm = plan.qm("NOTIN")
    assert qm.block_reason == "AMQJRNINF_RECEIVER_NOT_IN_CHAIN"
    assert qm.oldest_needed == "AMQA000001"  # position 0: everything is needed
    assert qm.receivers_to_delete == 0


def test_a_name_that_disagrees_with_the_time_blocks(plan):
    qm = plan.qm("DISAG")
    assert qm.block_reason == "AMQJRNINF_NAME_TIME_DISAGREE"
    assert qm.oldest_needed == "AMQA000001"
    assert plan.actions("DISAG")["AMQA000001"] == ("keep", "NEEDED_SAVED")


def test_asterisks_take_the_oldest_needed_from_the_time(plan):
    qm = plan.qm("STARS")
    assert qm.block_reason is None
    assert qm.oldest_needed == "AMQA000004"
    assert "OLDEST_NEEDED_NOT_ON_SYSTEM" in qm.alerts
    assert plan.actions("STARS") == {
        "AMQA000001": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000002": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000003": ("save", "RETAINED_NOT_SAVED"),
        "AMQA000004": ("keep", "NEEDED_SAVED"),
        "AMQA000005": ("keep", "ATTACHED"),
    }


def test_asterisks_with_a_time_before_the_chain_keep_everything(plan):
    qm = plan.qm("EARLY")
    assert (qm.block_reason, qm.oldest_needed, qm.receivers_to_delete) == (None, "AMQA000001", 0)
    assert plan.alerts("EARLY") == ["OLDEST_NEEDED_NOT_ON_SYSTEM"]


def test_block_reasons_are_listed_in_the_documented_order(plan):
    assert plan.block("MANY") == "SNAPSHOT_STALE,AMQJRNINF_MISSING,CHAIN_BROKEN"
    assert plan.qm("MANY").blocked


def test_the_amqjrninf_record_of_issue_12_blocks_and_deletes_nothing(plan):
    for qmgr in ("ATTACK", "ATTACKS"):
        qm = plan.qm(qmgr)
        assert (qm.block_reason, qm.receivers_to_delete, qm.oldest_needed) == (
            "AMQJRNINF_TIME_IN_FUTURE",
            0,
            "AMQA000001",
        ), qmgr
        assert aside_old_points(qm.alerts) == ["OLDEST_NEEDED_NOT_ON_SYSTEM", "RECOVERY_POINTS_DISAGREE"], qmgr
    # Points a week and more old right after a forced checkpoint: the first-run alerts of issue #16.
    assert set(plan.qm("ATTACK").alerts) >= OLD_POINTS
    assert "STARTUP_POINT_OLD" in plan.qm("ATTACKS").alerts and "MEDIA_POINT_OLD" not in plan.qm("ATTACKS").alerts
    assert plan.qm("ATTACK").recovery_points == (
        "AMQJRNINF ********** 2099-12-31T23:59:59.999, AMQ7460 AMQA000002 2026-10-24T13:00:00.000, "
        "AMQ7462 ********** 2026-10-26T13:00:00.000"
    )


def test_a_recovery_point_older_than_amqjrninf_is_the_oldest_needed(plan):
    qm = plan.qm("PTOLDER")
    assert (qm.blocked, qm.oldest_needed, qm.receivers_to_delete) == (False, "AMQA000002", 0)
    assert plan.actions("PTOLDER")["AMQA000002"] == ("keep", "NEEDED_SAVED")
    assert plan.actions("PTOLDER")["AMQA000001"] == ("keep", "RETAINED")  # keep_min_receivers=1
    assert aside_old_points(qm.alerts) == ["RECOVERY_POINTS_DISAGREE"]
    assert qm.holding_point == "AMQ7460"
    agree = plan.qm("PTAGREE")
    assert (agree.oldest_needed, agree.receivers_to_delete, aside_old_points(agree.alerts)) == ("AMQA000004", 2, [])
    assert (
        agree.recovery_points == "AMQJRNINF AMQA000004 2026-10-26T13:00:00.000, AMQ7460 AMQA000004 "
        "2026-10-26T13:00:00.000, AMQ7462 -"
    )


@pytest.mark.parametrize(
    "qmgr, reason",
    [
        ("PTOUT", "RECOVERY_POINT_NOT_IN_CHAIN"),
        ("PTEARLY", "RECOVERY_POINT_BEFORE_CHAIN"),
        ("PTFUTURE", "RECOVERY_POINT_IN_FUTURE"),
        ("PTSKEW", None),
        ("JRNFUTURE", "AMQJRNINF_TIME_IN_FUTURE"),
        ("JRNSKEW", None),
    ],
)
def test_recovery_points_and_times_that_cannot_be_true_block(plan, qmgr, reason):
    assert plan.block(qmgr) == reason
    if reason:
        assert plan.qm(qmgr).receivers_to_delete == 0 and plan.qm(qmgr).oldest_needed == "AMQA000001"


def test_complete_records_are_planned_whatever_their_key_order_and_text(plan):
    # Key lookalikes inside string values, keys in reverse order, a record from before the keys added to v1 later:
    # nothing is missing, nothing refused.
    for qmgr in ("TRICKY", REORDERED, BEFORE_ADDED_KEYS):
        assert plan.qm(qmgr).block_reason is None and plan.qm(qmgr).receivers_to_delete == 1, qmgr


def test_amqjrninf_is_malformed_exactly_when_parse_amqjrninf_rejects_it(plan):
    for i, raw in enumerate(JRNINF_VALUES):
        try:
            parse_amqjrninf(raw, qmgr="J")
            expected = False
        except MalformedAmqjrninf:
            expected = True
        qm = plan.qm(f"J{i}")
        malformed = "AMQJRNINF_MALFORMED" in (qm.block_reason or "")
        assert malformed == expected, f"J{i}: {raw!r}"
        assert pd.isna(qm.oldest_needed_age_seconds) == expected, f"J{i}: {raw!r}"


def test_a_valid_amqjrninf_names_its_receiver_after_trimming_python_whitespace(plan):
    # "AMQA00001\u2003" is AMQA00001, which is not in the chain; VALID names the oldest member and its time.
    assert plan.block(f"J{JRNINF_VALUES.index(VALID)}") is None
    assert plan.block("J4") == "AMQJRNINF_RECEIVER_NOT_IN_CHAIN"


# --- action and reason ------------------------------------------------------------------------------------------------


def test_every_row_of_the_action_table_occurs(plan):
    reasons = set(zip(plan.receivers.action, plan.receivers.reason, strict=True))
    assert reasons == {
        ("keep", "NOT_IN_CHAIN"),
        ("keep", "ATTACHED"),
        ("keep", "NEEDED_FREED"),
        ("keep", "NEEDED_SAVED"),
        ("save", "NEEDED_NOT_SAVED"),
        ("keep", "BLOCKED"),
        ("save", "BLOCKED_NOT_SAVED"),
        ("keep", "RETAINED"),
        ("save", "RETAINED_NOT_SAVED"),
        ("delete", "NOT_NEEDED_SAVED"),
        ("save_then_delete", "NOT_NEEDED_NOT_SAVED"),
    }


def test_a_freed_receiver_that_is_needed_is_kept_and_alerted(plan):
    assert plan.actions("FREED")["AMQA000002"] == ("keep", "NEEDED_FREED")
    assert plan.alerts("FREED") == ["NEEDED_RECEIVER_NOT_ONLINE"]


def test_retention_keeps_recently_detached_and_the_newest_not_needed_receivers(plan):
    assert plan.actions("KEEP") == {
        "AMQA000001": ("delete", "NOT_NEEDED_SAVED"),
        "AMQA000002": ("keep", "RETAINED"),  # detached 36 hours ago
        "AMQA000003": ("keep", "RETAINED"),
        "AMQA000004": ("save", "RETAINED_NOT_SAVED"),
        "AMQA000005": ("keep", "RETAINED"),
        "AMQA000006": ("save", "NEEDED_NOT_SAVED"),
        "AMQA000007": ("keep", "ATTACHED"),
    }


def test_a_receiver_never_detached_is_retained(plan):
    assert plan.actions("NODET")["AMQA000001"] == ("keep", "RETAINED")
    assert plan.actions("NODET")["AMQA000002"] == ("delete", "NOT_NEEDED_SAVED")


# --- alerts --------------------------------------------------------------------------------------------------------


def test_alerts_are_raised_each_for_its_own_cause(plan):
    assert plan.alerts("CKPT") == ["CHECKPOINT_FAILED"]
    assert plan.alerts("WRAP") == []  # not forced, at the threshold exactly
    assert plan.alerts("OVER") == ["RECEIVER_OVER_THRESHOLD"]
    assert plan.alerts("TAKEN") == ["NEXT_RECEIVER_NAME_TAKEN"]  # AMQA099999 -> AMQA000000
    assert plan.alerts("FREE") == []  # AMQA000005 exists, but in another library
    assert plan.alerts("STARS") == ["OLDEST_NEEDED_NOT_ON_SYSTEM"]


def test_recovery_stuck_over_a_history_given_with_history(plan):
    assert plan.alerts("STUCKH") == ["STARTUP_RECOVERY_STUCK"]  # no media recovery point


def test_recovery_stuck_over_repeated_snapshots_in_the_same_input(plan):
    assert plan.alerts("STUCKS") == ["MEDIA_RECOVERY_STUCK", "STARTUP_RECOVERY_STUCK"]


@pytest.mark.parametrize("qmgr", ["SAMEATT", "TWORUNS", "MOVED", "GONE", "WINDOW"])
def test_recovery_is_not_stuck(plan, qmgr):
    assert plan.alerts(qmgr) == []


def test_every_alert_code_occurs(plan):
    assert set(plan.summary.alerts) == {
        "CHECKPOINT_FAILED",
        "OLDEST_NEEDED_NOT_ON_SYSTEM",
        "NEEDED_RECEIVER_NOT_ONLINE",
        "RECEIVER_OVER_THRESHOLD",
        "NEXT_RECEIVER_NAME_TAKEN",
        "STARTUP_RECOVERY_STUCK",
        "MEDIA_RECOVERY_STUCK",
        "RECOVERY_POINTS_DISAGREE",
        "STARTUP_POINT_OLD",
        "MEDIA_POINT_OLD",
        "MESSAGE_UNDECODABLE",
    }


def test_an_undecodable_message_is_named_with_its_dspmsgd_and_changes_no_action(plan):
    assert "MESSAGE_UNDECODABLE" in plan.alerts("UNDEC")
    assert list(plan.qm("UNDEC").undecodable_messages) == ["AMQ7460: DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)"]
    # REORDER is the same chain and AMQJRNINF without the message.
    assert plan.actions("UNDEC") == plan.actions(REORDERED)
    assert plan.qm("UNDEC").blocked == plan.qm(REORDERED).blocked
    assert list(plan.qm(BEFORE_ADDED_KEYS).undecodable_messages) == []


# --- current state and history --------------------------------------------------------------------------------------


def test_the_current_state_is_the_latest_snapshot_and_only_it_is_planned(plan):
    assert plan.qm("STUCKS").run_id == "R3"
    assert len(plan.rows("STUCKS")) == 5  # R3's receivers once, although R3 was given twice
    assert plan.qm("ORDER").run_id == "A1"  # collected later than Z9
    assert len(plan.rows("ORDER")) == 3


def test_a_tie_on_collected_at_goes_to_the_greatest_run_id(plan):
    assert plan.qm("TIE").run_id == "R3b"
    assert sorted(plan.rows("TIE").receiver) == ["AMQA000001", "AMQA000002", "AMQA000003", "AMQA000004"]
    assert list(plan.rows("TIE").sort_values("receiver").status) == ["SAVED", "SAVED", "SAVED", "ATTACHED"]


def test_one_row_per_queue_manager_key_and_per_receiver(plan):
    keys = plan.queue_managers[["host", "qmgr", "qmgr_library"]]
    assert not keys.duplicated().any()
    assert not plan.receivers[["host", "qmgr", "qmgr_library", "receiver", "library"]].duplicated().any()


# --- figures and output ---------------------------------------------------------------------------------------------


def test_figures_of_one_queue_manager(plan):
    qm = plan.qm("PROD", "ibmi1")
    sizes = dict(zip(plan.rows("PROD", "ibmi1").receiver, plan.rows("PROD", "ibmi1").size_bytes, strict=True))
    assert (qm.receivers_to_save, qm.bytes_to_save) == (2, sizes["AMQA000001"] + sizes["AMQA000003"])
    assert (qm.receivers_to_delete, qm.bytes_to_delete, qm.bytes_freed) == (1, sizes["AMQA000001"], sizes["AMQA000001"])
    assert qm.chain_length == 4


def test_figures_add_up_the_receiver_rows_of_every_queue_manager(plan):
    rows = plan.receivers.assign(
        saves=plan.receivers.action.isin(["save", "save_then_delete"]),
        deletes=plan.receivers.action.isin(["delete", "save_then_delete"]),
    )
    for qm in plan.queue_managers.itertuples():
        mine = rows[(rows.host == qm.host) & (rows.qmgr == qm.qmgr) & (rows.qmgr_library == qm.qmgr_library)]
        assert qm.receivers_to_save == mine.saves.sum()
        assert qm.bytes_to_save == mine.size_bytes[mine.saves].sum()
        assert qm.receivers_to_delete == mine.deletes.sum()
        assert qm.bytes_to_delete == qm.bytes_freed == mine.size_bytes[mine.deletes].sum()
        assert qm.chain_length == mine.chain_position.notna().sum()
        if qm.blocked:
            assert qm.receivers_to_delete == 0


def test_oldest_needed_age_is_floored_whole_seconds(plan):
    # needed at 00:30:00.250 UTC (written as 02:30:00.250 local +02:00); as_of 12:00:00 -> 41399.75 s.
    assert plan.qm("WRAP").oldest_needed_age_seconds == 41399


def test_collected_at_is_a_utc_timestamp(plan):
    assert str(plan.queue_managers.collected_at.dtype) == "datetime64[us, UTC]"
    assert plan.qm("WRAP").collected_at == pd.Timestamp(COLLECTED)


def test_output_columns_are_exactly_the_plan_rows_fields(plan):
    assert list(plan.receivers.columns) == list(PlannedReceiver.model_fields)
    assert list(plan.queue_managers.columns) == list(PlannedQueueManager.model_fields)


def test_every_output_row_reads_as_a_plan_row(plan):
    receivers = read_receivers(plan.out)
    queue_managers = read_queue_managers(plan.out)
    assert len(receivers) == len(plan.receivers) and len(queue_managers) == len(plan.queue_managers)


def test_summary_json_holds_the_aggregates(plan):
    # The file as written, read as the contract reads it, and as JSON: times with their offset, the policy whole.
    text = (plan.out / "summary.json").read_text()
    summary = PlanTotals.model_validate_json(text)
    assert summary == plan.summary
    assert datetime.fromisoformat(json.loads(text)["as_of"]) == AS_OF
    current, _ = fleet()
    keys = {(s.host, s.qmgr, s.qmgr_library) for s in current}
    assert summary.as_of == AS_OF
    assert summary.policy == POLICY
    assert summary.queue_managers == len(keys) == len(plan.queue_managers)
    assert summary.blocked_queue_managers == int(plan.queue_managers.blocked.sum())
    assert summary.receivers == len(plan.receivers)
    assert summary.actions == plan.receivers.action.value_counts().sort_index().to_dict()
    assert list(summary.actions) == sorted(summary.actions)
    alerts = pd.Series([code for codes in plan.queue_managers.alerts for code in codes]).value_counts()
    assert summary.alerts == alerts.sort_index().to_dict()
    assert summary.alerts["STARTUP_RECOVERY_STUCK"] == 2
    for total in ("bytes_to_save", "bytes_to_delete", "bytes_freed"):
        assert getattr(summary, total) == int(plan.queue_managers[total].sum())


# --- the launcher, and failures --------------------------------------------------------------------------------------


def test_spark_submit_args_ship_the_package_and_pass_policy_and_as_of(tmp_path, monkeypatch):
    monkeypatch.setenv(planjob.MASTER_ENV, "spark://example:7077")
    args = spark_submit_args(
        tmp_path / "in", tmp_path / "out", py_files=tmp_path / "mqjournal.zip", policy=POLICY, as_of=AS_OF
    )
    assert args[args.index("--master") + 1] == "spark://example:7077"
    assert args[args.index("--py-files") + 1] == str(tmp_path / "mqjournal.zip")
    app = args.index(str(planjob.application_path()))
    assert args[app + 1 :] == planjob.application_args(tmp_path / "in", tmp_path / "out", policy=POLICY, as_of=AS_OF)
    assert Policy.model_validate_json(args[args.index("--policy-json") + 1]) == POLICY
    assert datetime.fromisoformat(args[args.index("--as-of") + 1]) == AS_OF
    assert "--history" not in args
    assert spark_submit_args("in", "out", py_files="z.zip", master="yarn")[1] == "yarn"
    monkeypatch.delenv(planjob.MASTER_ENV)
    assert spark_submit_args("in", "out", py_files="z.zip")[1] == "local[*]"


def test_the_package_zip_holds_the_domain_modules(tmp_path):
    import zipfile

    names = zipfile.ZipFile(planjob.build_py_files(tmp_path)).namelist()
    assert {f"mqjournal/{module}.py" for module in ("__init__", "jrninf", "policy", "snapshot")} <= set(names)
    assert not any("__pycache__" in name for name in names)


def _failed_run(folder: Path, lines: list[str], spark_connect: str | None) -> tuple[PlanJobFailed | None, bool]:
    """The plan of `lines` on the Spark Connect server, or with spark-submit when there is none."""
    (folder / "out").mkdir(parents=True)
    (folder / "out" / "summary.json").write_text("{}")  # from an earlier plan: must not survive a failed one
    (folder / "snapshots.jsonl").write_text("".join(line + "\n" for line in lines))
    try:
        if spark_connect:
            run_plan_connect(
                spark_connect, folder / "snapshots.jsonl", folder / "out", history=None, policy_file=None, as_of=AS_OF
            )
        else:
            run_plan(
                folder / "snapshots.jsonl",
                folder / "out",
                history=None,
                policy_file=None,
                as_of=AS_OF,
                master="local[1]",
            )
    except PlanJobFailed as failure:
        return failure, (folder / "out" / "summary.json").exists()
    return None, (folder / "out" / "summary.json").exists()


@pytest.fixture(scope="module")
def bad_inputs() -> dict[str, list[str]]:
    """Inputs the job must refuse, by what is wrong with them."""
    good = simple("ibmi1", "GOOD", OLD4, 2).model_dump_json()
    half = json.loads(simple("ibmi1", "HALF", OLD4, 2).model_dump_json())
    del half["receivers"][0]["size_bytes"]
    leap = json.loads(simple("ibmi1", "LEAP", OLD4, 2).model_dump_json())
    # The shape of an ISO 8601 time, but no such day: 2026 is not a leap year.
    leap["receivers"][0]["detached_at"] = "2026-02-29T10:00:00Z"
    # A key of the contract left out (issue #12): its value may be null, but the key must be there.
    keyless = json.loads(simple("ibmi1", "KEYLESS", OLD4, 2).model_dump_json())
    del keyless["receivers"][1]["next_library"]

    def hist(run_id: str, hours: int) -> dict:
        earlier = COLLECTED - timedelta(hours=hours)
        return json.loads(simple("ibmi1", "HIST", OLD4, 2, run_id=run_id, collected_at=earlier).model_dump_json())

    keyless_r2 = hist("R2", 1)
    del keyless_r2["media_recovery"]
    colour = json.loads(simple("ibmi1", "COLOUR", OLD4, 2).model_dump_json())
    colour["receivers"][0]["colour"] = "blue"
    inputs = {
        "truncated": [good, good[: len(good) // 2]],
        "missing_field": [good, json.dumps(half)],
        "no_such_day": [good, json.dumps(leap)],
        "missing_key": [good, "", json.dumps(keyless)],
        # The newest stuck_after_runs (3) runs feed the plan: a key missing in the middle one stops the job too.
        "history_key": [json.dumps(hist("R1", 2)), json.dumps(keyless_r2), json.dumps(hist("R3", 0))],
        "unknown_key": [json.dumps(colour), good],
    }
    return inputs


@pytest.fixture(scope="module")
def failures(tmp_path_factory, bad_inputs, spark_connect) -> dict[str, tuple[PlanJobFailed | None, bool]]:
    """Each bad input planned once, in a session on the standing Spark Connect server: the job's own checks."""
    root = tmp_path_factory.mktemp("failures")
    return {name: _failed_run(root / name, lines, spark_connect) for name, lines in bad_inputs.items()}


def test_spark_submit_fails_on_bad_input_as_a_session_does_with_the_job_s_own_words(
    tmp_path_factory, bad_inputs, failures
):
    """The launcher's part: spark-submit's exit status and the job's last words on stderr. One failure of the JSON
    reader (FAILFAST) and one of the job's checks, side by side, as they stop at their first read."""
    root = tmp_path_factory.mktemp("submitted")
    cases = ("truncated", "missing_key")
    with ThreadPoolExecutor(len(cases)) as pool:
        runs = {name: pool.submit(_failed_run, root / name, bad_inputs[name], None) for name in cases}
        submitted = {name: run.result() for name, run in runs.items()}
    for name in cases:
        by_submit, wrote_summary = submitted[name]
        in_session, _ = failures[name]
        assert by_submit is not None and in_session is not None and not wrote_summary
        assert by_submit.returncode == in_session.returncode == 2
        assert "spark-submit plan_receivers.py" in str(by_submit) and "Spark Connect" in str(in_session)
        assert _last_words(by_submit) == _last_words(in_session)


def _last_words(failure: PlanJobFailed) -> str:
    """The job's last line, with the input's folder left out (each run has its own)."""
    return re.sub(r"/\S*/(snapshots\.jsonl)", r"\1", failure.stderr_tail.splitlines()[-1])


def test_a_malformed_line_fails_the_job_rather_than_dropping_a_queue_manager(failures):
    failure, wrote_summary = failures["truncated"]
    assert failure is not None and not wrote_summary
    assert failure.returncode != 0
    assert "exited with status" in str(failure)
    assert "is not a valid JSON mqjournal.snapshot/v1 record" in failure.stderr_tail
    assert "snapshots.jsonl" in failure.stderr_tail


def test_a_record_missing_a_required_field_fails_the_job(failures):
    failure, wrote_summary = failures["missing_field"]
    assert failure is not None and not wrote_summary
    assert "not valid mqjournal.snapshot/v1" in failure.stderr_tail
    assert "HALF" in failure.stderr_tail


def test_a_receiver_time_on_a_day_that_does_not_exist_fails_the_job(failures):
    failure, wrote_summary = failures["no_such_day"]
    assert failure is not None and not wrote_summary
    assert "not valid mqjournal.snapshot/v1" in failure.stderr_tail
    assert "LEAP" in failure.stderr_tail and "bad time" in failure.stderr_tail


def test_a_record_missing_a_key_of_the_contract_fails_the_job_naming_file_line_and_field(failures):
    failure, wrote_summary = failures["missing_key"]
    assert failure is not None and not wrote_summary
    assert "not valid mqjournal.snapshot/v1" in failure.stderr_tail
    assert "snapshots.jsonl:3 (run R3, ibmi1/KEYLESS)" in failure.stderr_tail  # line 2 is blank
    assert "receivers[1].next_library missing" in failure.stderr_tail


def test_a_record_with_a_key_the_contract_does_not_know_fails_the_job(failures):
    failure, wrote_summary = failures["unknown_key"]
    assert failure is not None and not wrote_summary
    assert "snapshots.jsonl:1 (run R3, ibmi1/COLOUR)" in failure.stderr_tail
    assert "receivers[0].colour" in failure.stderr_tail


def test_a_key_missing_in_a_run_the_stuck_alerts_read_fails_the_job(failures):
    failure, wrote_summary = failures["history_key"]
    assert failure is not None and not wrote_summary
    assert "snapshots.jsonl:2 (run R2, ibmi1/HIST)" in failure.stderr_tail
    assert "media_recovery missing" in failure.stderr_tail
