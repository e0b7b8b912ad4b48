"""Properties every plan must have, whatever the fleet: no plan deletes what MQ or IBM i still needs."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.rules import DELETES, chain_of, is_saved, key_of, plan_fleet
from tests.plan.strategies import fleets, policies

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(fleet=fleets(), policy=policies, hours_later=st.integers(0, 48))
def test_no_plan_deletes_an_attached_needed_or_unsaved_receiver(fleet, policy, hours_later):
    as_of = max(s.collected_at for s in fleet) + timedelta(hours=hours_later)
    plan = plan_fleet(fleet, as_of=as_of, policy=policy)
    current = {}
    for s in fleet:
        if key_of(s) not in current or (s.collected_at, s.run_id) > (current[key_of(s)].collected_at, current[key_of(s)].run_id):
            current[key_of(s)] = s
    by_key = {(q.host, q.qmgr, q.qmgr_library): q for q in plan.queue_managers}
    for key, snap in current.items():
        chain = chain_of(snap)
        position = {(r.name, r.library): i for i, r in enumerate(chain)}
        receivers = {(r.name, r.library): r for r in snap.receivers}
        rows = [r for r in plan.receivers if (r.host, r.qmgr, r.qmgr_library) == key]
        deleted = [r for r in rows if r.action in DELETES]
        qm = by_key[key]
        if deleted:
            assert not qm.blocked
            oldest = position[(qm.oldest_needed, snap.qmgr_library)] if qm.oldest_needed else None
            assert oldest is not None
        for row in deleted:
            receiver = receivers[(row.receiver, row.library)]
            assert receiver.status != "ATTACHED"
            assert row.chain_position is not None and row.chain_position < oldest
            # Unsaved receivers are only ever deleted behind a save step.
            assert is_saved(receiver) or row.action == "save_then_delete"
        # DLTJRNRCV takes receivers oldest first: the deletable ones are the oldest members of the chain.
        assert sorted(r.chain_position for r in deleted) == list(range(len(deleted)))
        # The named receiver in a usable AMQJRNINF is never deleted.
        try:
            named = parse_amqjrninf(snap.amqjrninf, qmgr=snap.qmgr).receiver
        except MalformedAmqjrninf:
            named = None
        assert named not in {r.receiver for r in deleted}


@SETTINGS
@given(fleet=fleets(), policy=policies)
def test_every_receiver_of_every_current_snapshot_gets_exactly_one_row(fleet, policy):
    plan = plan_fleet(fleet, as_of=max(s.collected_at for s in fleet), policy=policy)
    keys = {key_of(s) for s in fleet}
    assert len(plan.queue_managers) == len(keys)
    rows = [(r.host, r.qmgr, r.qmgr_library, r.receiver, r.library) for r in plan.receivers]
    assert len(rows) == len(set(rows))
