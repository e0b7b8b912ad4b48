"""Hypothesis strategies: random fleets of queue managers with receiver chains, histories and AMQJRNINF records.

The chains are built the way IBM i builds them (attach times increase, links and sequence numbers follow), and then
damaged the ways the planner must survive: wrapped names, freed and partly saved receivers, stray receivers,
asterisks, malformed or lying AMQJRNINF records, gaps, stale snapshots.
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import strategies as st

from mqjournal.jrninf import format_amqjrninf
from mqjournal.policy import Policy
from mqjournal.snapshot import Receiver, ReceiverStatus, Snapshot
from tests.plan.builders import HOUR, KB, T0, chain, snapshot

AMQJRNINF_KINDS = ("named", "named", "named", "asterisks", "missing", "malformed", "lying", "outside")


@st.composite
def receiver_chain(draw, library: str) -> list[Receiver]:
    length = draw(st.integers(1, 12))
    first = draw(st.sampled_from([0, 17, 99_995, 99_999]))  # some chains wrap past 99999
    restore = draw(st.integers(0, 9))
    names = [f"AMQA{restore}{(first + i) % 100_000:05d}" for i in range(length)]
    status = draw(st.lists(st.sampled_from(["ONLINE", "SAVED", "FREED", "SAVED"]), min_size=length, max_size=length))
    receivers = chain(
        names,
        library=library,
        start=T0 + timedelta(minutes=draw(st.integers(0, 600)), microseconds=draw(st.integers(0, 999_999))),
        every=timedelta(minutes=draw(st.integers(5, 240))),
        size=draw(st.integers(1, 5000)) * KB,
        saved=tuple(n for n, s in zip(names, status) if s == "SAVED"),
        freed=tuple(n for n, s in zip(names, status) if s == "FREED"),
    )
    if length > 1 and draw(st.integers(0, 9)) == 0:
        # A save taken while attached: SAVE_TIMESTAMP set, still ONLINE.
        i = draw(st.integers(0, length - 2))
        receivers[i] = receivers[i].model_copy(update={"status": ReceiverStatus.ONLINE, "saved_at": receivers[i].attached_at})
    if length > 2 and draw(st.integers(0, 9)) == 0:
        del receivers[draw(st.integers(1, length - 2))]  # a receiver missing from the middle
    if draw(st.integers(0, 6)) == 0:
        over = receivers[-1].model_copy(update={"size_bytes": receivers[-1].threshold_kb * KB + 1})
        receivers[-1] = over
    if draw(st.integers(0, 5)) == 0:
        # A receiver in the library that is not in the chain, sometimes with the next name (rule 2).
        last = receivers[-1].name
        stray = draw(st.sampled_from([f"AMQA{last[4]}{(int(last[5:]) + 1) % 100_000:05d}", "AMQA977777"]))
        if stray not in {r.name for r in receivers}:
            receivers.append(Receiver(name=stray, library=library, status="EMPTY", size_bytes=16 * KB))
    return receivers


@st.composite
def queue_manager_snapshot(draw, host: str, qmgr: str, library: str, run: int = 0) -> Snapshot:
    receivers = draw(receiver_chain(library))
    members = [r for r in receivers if r.attached_at is not None]
    kind = draw(st.sampled_from(AMQJRNINF_KINDS))
    holder = draw(st.sampled_from(members))
    needed_at = holder.attached_at + timedelta(minutes=draw(st.integers(0, 4)))
    if kind == "asterisks":
        needed_at = members[0].attached_at + timedelta(minutes=draw(st.integers(-300, 900)))
    raw = {
        "named": lambda: format_amqjrninf(holder.name, library, needed_at.replace(tzinfo=None)),
        "asterisks": lambda: format_amqjrninf(None, library, needed_at.replace(tzinfo=None)),
        "missing": lambda: None,
        "malformed": lambda: draw(st.sampled_from(["", "AMQA000001", "AMQA000001QMTEST    20261131250000000"])),
        "lying": lambda: format_amqjrninf(holder.name, library, (needed_at + 3 * HOUR).replace(tzinfo=None)),
        "outside": lambda: format_amqjrninf("AMQA955555", library, needed_at.replace(tzinfo=None)),
    }[kind]()
    point = draw(st.sampled_from([holder.name, members[0].name, None]))
    return snapshot(
        receivers,
        amqjrninf=raw,
        host=host,
        qmgr=qmgr,
        library=library,
        run_id=f"run{run:02d}",
        collected_at=members[-1].attached_at + timedelta(minutes=draw(st.integers(1, 120))),
        checkpoint_ok=draw(st.booleans()) or draw(st.booleans()),
        startup=point,
        media=point,
    )


@st.composite
def fleets(draw, max_queue_managers: int = 8) -> list[Snapshot]:
    """Snapshots of a fleet: some hosts share queue manager names, some libraries share receiver names, some
    queue managers have several runs of history."""
    count = draw(st.integers(1, max_queue_managers))
    snapshots = []
    for i in range(count):
        host = draw(st.sampled_from(["prod1", "prod2", "dr1"]))
        qmgr = draw(st.sampled_from(["ORDERS", "PAYROLL", f"QM{i}"]))
        library = f"QM{qmgr}"[:10] if draw(st.booleans()) else f"QMLIB{i}"
        runs = draw(st.integers(1, 4))
        for run in range(runs):
            snapshots.append(draw(queue_manager_snapshot(host, qmgr, library, run)))
    return snapshots


policies = st.builds(
    Policy,
    max_snapshot_age_hours=st.sampled_from([1.0, 24.0, 1000.0]),
    retention_days=st.sampled_from([0.0, 0.1, 2.0]),
    keep_min_receivers=st.integers(0, 3),
    stuck_after_runs=st.integers(2, 4),
)
