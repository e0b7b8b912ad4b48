"""What the executor tests ask of a simulated partition: the plan for its queue manager, its receivers."""

from __future__ import annotations

from mqjournal import rules
from mqjournal.ibmi.collector import collect
from mqjournal.ibmi.executor import Executor
from mqjournal.policy import Policy
from tests.conftest import SimFleet


def planned(executor: Executor, with_uow: bool = False):
    snap = collect(executor.session, executor.target, host="ibmi1", run_id="run1", tz=executor.tz)
    _qm, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=Policy())
    to_save = [r.receiver for r in rows if r.action in rules.SAVES]
    to_delete = [r.receiver for r in sorted(rows, key=lambda r: r.chain_position or 0) if r.action in rules.DELETES]
    return to_save, to_delete


def receivers_on_host(sim_fleet: SimFleet) -> dict:
    return {r.name: r for r in sim_fleet.host().partition.receivers_in("QMTEST")}
