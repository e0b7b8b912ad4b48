"""Hypothesis strategies: random fleets of queue managers with receiver chains, histories and AMQJRNINF records.

The chains are built the way IBM i builds them (attach times increase, links and sequence numbers follow), and then
damaged the ways the planner must survive: wrapped names, freed and partly saved receivers, stray receivers,
asterisks, malformed or lying AMQJRNINF records, gaps, stale snapshots; AMQJRNINF and AMQ7460/AMQ7462 times in the
future (within and beyond the clock skew), recovery points that disagree with AMQJRNINF, name receivers outside
the chain, show asterisks, lie before the chain or are missing.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta

from hypothesis import strategies as st

from mqjournal import msgformats
from mqjournal.jrninf import format_amqjrninf
from mqjournal.policy import Policy
from mqjournal.snapshot import DamagedObject, Receiver, ReceiverStatus, Snapshot, UndecodableMessage
from tests.plan.builders import HOUR, KB, T0, chain, snapshot

AMQJRNINF_KINDS = ("named", "named", "named", "asterisks", "missing", "malformed", "lying", "outside", "future")

# The strategies are made once, here: a strategy made inside a draw is validated anew at every draw, which took a
# quarter of these tests' time (measured 2026-11-28). A choice among values known only while drawing is `pick`.
FIRST_NAMES = st.sampled_from([0, 17, 99_995, 99_999])  # some chains wrap past 99999
STATUSES = st.sampled_from(["ONLINE", "SAVED", "FREED", "SAVED"])
SITE_SAVE_SHIFTS = st.sampled_from([-30, 0, 90, 600, 1500])
POINT_FUTURE_SECONDS = st.sampled_from([0, 299, 300, 301, 3600, 10**9])
BEFORE_CHAIN_SECONDS = st.sampled_from([1, 60, 86_400])
JRNINF_FUTURE_SECONDS = st.sampled_from([0, 299, 300, 301, 3600, 2_300_000_000])
MALFORMED_JRNINF = st.sampled_from(["", "AMQA000001", "AMQA000001QMTEST    20261131250000000"])
DAMAGED_OBJECTS = st.sampled_from(["APP.REQUEST.QUEUE", "APP.REPLY", "SYSTEM.DEAD.LETTER.QUEUE"])
DAMAGED_TYPES = st.sampled_from(["QLOCAL", "QALIAS"])
DAMAGE_REPORTED = st.sampled_from([-3600, -1, 0, 1, 7200])
UNDECODABLE_IDS = st.lists(st.sampled_from(sorted(msgformats.MESSAGE_FILES)), max_size=2)
ASPS = st.sampled_from([None, (1, 500 * 2**30, 120 * 2**30), (2, 2**40, 0)])


ints = functools.cache(st.integers)
"""st.integers, one strategy per pair of bounds (Hypothesis's own cache of them costs a lookup of its arguments)."""


def pick(draw, values: list):
    """One of `values`, drawn as sampled_from would, without making a strategy of them."""
    return values[draw(ints(0, len(values) - 1))]


def receiver_chain(draw, library: str) -> list[Receiver]:
    length = draw(ints(1, 12))
    first = draw(FIRST_NAMES)
    restore = draw(ints(0, 9))
    names = [f"AMQA{restore}{(first + i) % 100_000:05d}" for i in range(length)]
    status = [draw(STATUSES) for _ in range(length)]
    receivers = chain(
        names,
        library=library,
        start=T0 + timedelta(minutes=draw(ints(0, 600)), microseconds=draw(ints(0, 999_999))),
        every=timedelta(minutes=draw(ints(5, 240))),
        size=draw(ints(1, 5000)) * KB,
        saved=tuple(n for n, s in zip(names, status, strict=True) if s == "SAVED"),
        freed=tuple(n for n, s in zip(names, status, strict=True) if s == "FREED"),
    )
    if length > 1 and draw(ints(0, 9)) == 0:
        # A save taken while attached: SAVE_TIMESTAMP set, still ONLINE.
        i = draw(ints(0, length - 2))
        receivers[i] = receivers[i].model_copy(
            update={"status": ReceiverStatus.ONLINE, "saved_at": receivers[i].attached_at}
        )
    saved_ones = [i for i, r in enumerate(receivers) if r.saved_at is not None and r.status != ReceiverStatus.ONLINE]
    if saved_ones and draw(ints(0, 3)) == 0:
        # The site's save some time after the detach (hours: around site_save_min_age_hours), or, rarely, a
        # SAVE_TIMESTAMP before the detach, which no full save has (section 3.1 refuses it).
        i = pick(draw, saved_ones)
        shift = timedelta(minutes=draw(SITE_SAVE_SHIFTS))
        receivers[i] = receivers[i].model_copy(update={"saved_at": receivers[i].detached_at + shift})
    if length > 2 and draw(ints(0, 9)) == 0:
        del receivers[draw(ints(1, length - 2))]  # a receiver missing from the middle
    if draw(ints(0, 6)) == 0:
        over = receivers[-1].model_copy(update={"size_bytes": receivers[-1].threshold_kb * KB + 1})
        receivers[-1] = over
    if draw(ints(0, 5)) == 0:
        # A receiver in the library that is not in the chain, sometimes with the next name (rule 2).
        last = receivers[-1].name
        stray = pick(draw, [f"AMQA{last[4]}{(int(last[5:]) + 1) % 100_000:05d}", "AMQA977777"])
        if stray not in {r.name for r in receivers}:
            receivers.append(Receiver(name=stray, library=library, status="EMPTY", size_bytes=16 * KB))
    return receivers


# AMQ7460 / AMQ7462: absent, agreeing with AMQJRNINF's holder, naming another member, asterisks, naming a receiver
# outside the chain, in the future (within and beyond the clock skew, and decades ahead), before the chain.
POINT_KINDS = (
    ("missing",) * 3 + ("agree",) * 5 + ("named",) * 3 + ("asterisks",) * 2 + ("outside", "future", "before_chain")
)


def _whole_seconds(moment: datetime) -> datetime:
    """What the collector reads from an AMQ7460/AMQ7462 text: whole seconds."""
    return moment.replace(microsecond=0)


POINT_KIND = st.sampled_from(POINT_KINDS)


def recovery_point(draw, members: list[Receiver], holder: Receiver, needed_at: datetime, collected_at: datetime):
    """(receiver for the builder: a name, "*" or None for no message; its time)."""
    kind = draw(POINT_KIND)
    seconds = draw(st.booleans())
    at = needed_at
    if kind == "missing":
        return None, None
    if kind == "agree":
        name = holder.name
    elif kind == "named":
        named = pick(draw, members)
        name, at = named.name, named.attached_at + timedelta(minutes=draw(ints(0, 4)))
    elif kind == "asterisks":
        name, at = "*", members[0].attached_at + timedelta(minutes=draw(ints(-300, 900)))
    elif kind == "outside":
        name = "AMQA955555"
    elif kind == "future":
        name = pick(draw, ["*", holder.name])
        at = collected_at + timedelta(seconds=draw(POINT_FUTURE_SECONDS))
    else:  # before_chain
        name = pick(draw, members).name
        at = members[0].attached_at - timedelta(seconds=draw(BEFORE_CHAIN_SECONDS))
    return name, (_whole_seconds(at) if seconds else at)


AMQJRNINF_KIND = st.sampled_from(AMQJRNINF_KINDS)


def queue_manager_snapshot(draw, host: str, qmgr: str, library: str, run: int = 0) -> Snapshot:
    receivers = receiver_chain(draw, library)
    members = [r for r in receivers if r.attached_at is not None]
    collected_at = members[-1].attached_at + timedelta(minutes=draw(ints(1, 120)))
    kind = draw(AMQJRNINF_KIND)
    holder = pick(draw, members)
    needed_at = holder.attached_at + timedelta(minutes=draw(ints(0, 4)))
    if kind == "asterisks":
        needed_at = members[0].attached_at + timedelta(minutes=draw(ints(-300, 900)))
    if kind == "future":
        # The record of issue #12 (asterisks, decades ahead), or a time just within or beyond the clock skew.
        needed_at = collected_at + timedelta(seconds=draw(JRNINF_FUTURE_SECONDS))
    local = lambda moment: moment.replace(tzinfo=None)  # noqa: E731 - the builders' times are in the partition's zone
    raw = {
        "named": lambda: format_amqjrninf(holder.name, library, local(needed_at)),
        "asterisks": lambda: format_amqjrninf(None, library, local(needed_at)),
        "future": lambda: format_amqjrninf(pick(draw, [None, holder.name]), library, local(needed_at)),
        "missing": lambda: None,
        "malformed": lambda: draw(MALFORMED_JRNINF),
        "lying": lambda: format_amqjrninf(holder.name, library, local(needed_at + 3 * HOUR)),
        "outside": lambda: format_amqjrninf("AMQA955555", library, local(needed_at)),
    }[kind]()
    if draw(ints(0, 19)) == 0:
        raw = "********************20991231235959999"  # exactly the record of the issue
    startup, startup_at = recovery_point(draw, members, holder, needed_at, collected_at)
    media, media_at = recovery_point(draw, members, holder, needed_at, collected_at)
    made = snapshot(
        receivers,
        amqjrninf=raw,
        host=host,
        qmgr=qmgr,
        library=library,
        run_id=f"run{run:02d}",
        collected_at=collected_at,
        checkpoint_ok=draw(st.booleans()) or draw(st.booleans()),
        startup=startup,
        media=media,
        startup_at=startup_at,
        media_at=media_at,
    )
    # AMQ7472 reports around the media point (before it: an object re-created since), and the ASP as read.
    around = media_at or needed_at
    damaged = [
        DamagedObject(
            object=draw(DAMAGED_OBJECTS),
            object_type=draw(DAMAGED_TYPES),
            reported_at=around + timedelta(seconds=draw(DAMAGE_REPORTED)),
        )
        for _ in range(draw(ints(0, 2)))
    ]
    # Messages whose replacement data did not decode by the declared layout (the same ID twice, sometimes).
    undecodable = [
        UndecodableMessage(
            message_id=msg_id,
            sent_at=collected_at - timedelta(minutes=draw(ints(0, 600))),
            problem="&3 (at) reads 2062-01-01 00:00:00+00:00, not a time between 1990 and now",
            dspmsgd=msgformats.dspmsgd(msg_id),
        )
        for msg_id in draw(UNDECODABLE_IDS)
    ]
    asp = draw(ASPS)
    return made.model_copy(
        update={
            "damaged_objects": damaged,
            "undecodable_messages": undecodable,
            "asp_number": asp[0] if asp else None,
            "asp_capacity_bytes": asp[1] if asp else None,
            "asp_available_bytes": asp[2] if asp else None,
        }
    )


HOSTS = st.sampled_from(["prod1", "prod2", "dr1"])


@st.composite
def fleets(draw, max_queue_managers: int = 8) -> list[Snapshot]:
    """Snapshots of a fleet: some hosts share queue manager names, some libraries share receiver names, some
    queue managers have several runs of history."""
    count = draw(ints(1, max_queue_managers))
    snapshots = []
    keys = set()
    for i in range(count):
        host = draw(HOSTS)
        qmgr = pick(draw, ["ORDERS", "PAYROLL", f"QM{i}"])
        library = f"QM{qmgr}"[:10] if draw(st.booleans()) else f"QMLIB{i}"
        if (host, qmgr, library) in keys:
            # One queue manager per key: a second would bring other snapshots of the same runs, which a real
            # collection never writes (the planner refuses two different snapshots of one key and run).
            continue
        keys.add((host, qmgr, library))
        runs = draw(ints(1, 4))
        for run in range(runs):
            snapshots.append(queue_manager_snapshot(draw, host, qmgr, library, run))
    return snapshots


def _policies(backup: st.SearchStrategy[str]) -> st.SearchStrategy[Policy]:
    return st.builds(
        Policy,
        max_snapshot_age_hours=st.sampled_from([1.0, 24.0, 1000.0]),
        retention_days=st.sampled_from([0.0, 0.1, 2.0]),
        keep_min_receivers=st.integers(0, 3),
        stuck_after_runs=st.integers(2, 4),
        # Around the points' ages in these fleets (minutes to days).
        recovery_point_alert_hours=st.sampled_from([0.01, 1.0, 24.0]),
        clock_skew_seconds=st.sampled_from([0.0, 300.0, 3600.0]),
        backup=backup,
        # Around the saves' ages in these fleets (minutes to a day and more): some old enough, some not, and 0.
        site_save_min_age_hours=st.sampled_from([0.0, 0.5, 2.0, 12.0, 30.0]),
    )


policies = _policies(st.sampled_from(["mqjournal", "site"]))
site_policies = _policies(st.just("site"))
"""`backup: site` only: the site's own backup saves, mqjournal plans no save (docs/planning-rules.md, section 3.1)."""
