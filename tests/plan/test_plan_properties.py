"""Properties every plan must have, whatever the fleet: no plan deletes what MQ or IBM i still needs."""

from __future__ import annotations

import math
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqjournal.errors import MalformedAmqjrninf
from mqjournal.jrninf import parse_amqjrninf
from mqjournal.rules import chain_of, is_saved, key_of, plan_fleet, site_saved
from mqjournal.vocabulary import DELETES, SAVES
from tests.plan.strategies import fleets, policies, site_policies

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(fleet=fleets(), policy=policies, hours_later=st.integers(0, 48))
def test_no_plan_deletes_an_attached_needed_or_unsaved_receiver(fleet, policy, hours_later):
    as_of = max(s.collected_at for s in fleet) + timedelta(hours=hours_later)
    plan = plan_fleet(fleet, as_of=as_of, policy=policy)
    current = {}
    for s in fleet:
        if key_of(s) not in current or (s.collected_at, s.run_id) > (
            current[key_of(s)].collected_at,
            current[key_of(s)].run_id,
        ):
            current[key_of(s)] = s
    by_key = {q.ref: q for q in plan.queue_managers}
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


def _current(fleet):
    current = {}
    for s in fleet:
        if key_of(s) not in current or (s.collected_at, s.run_id) > (
            current[key_of(s)].collected_at,
            current[key_of(s)].run_id,
        ):
            current[key_of(s)] = s
    return current


@SETTINGS
@given(fleet=fleets(), policy=policies, hours_later=st.integers(0, 48))
def test_no_plan_deletes_a_receiver_a_recovery_point_needs(fleet, policy, hours_later):
    """AMQ7460 and AMQ7462 hold back deletes as AMQJRNINF does: neither their receiver nor anything newer goes."""
    as_of = max(s.collected_at for s in fleet) + timedelta(hours=hours_later)
    plan = plan_fleet(fleet, as_of=as_of, policy=policy)
    for key, snap in _current(fleet).items():
        chain = chain_of(snap)
        deleted = [
            r.chain_position for r in plan.receivers if (r.host, r.qmgr, r.qmgr_library) == key and r.action in DELETES
        ]
        for point in (snap.startup_recovery, snap.media_recovery):
            if point is None or not deleted:
                continue
            if point.receiver is not None:
                named = [i for i, r in enumerate(chain) if r.name == point.receiver]
                assert named, "a point outside the chain must block"
                assert max(deleted) < min(named)
            else:
                # Asterisks: the receiver holding `at` is gone; everything attached at or before it (ms) may be the
                # newest such, so only members before the last of them may go.
                before = [
                    i
                    for i, r in enumerate(chain)
                    if r.attached_at.replace(microsecond=r.attached_at.microsecond // 1000 * 1000) <= point.at
                ]
                assert before and max(deleted) < before[-1]


@SETTINGS
@given(fleet=fleets(), policy=policies, hours_later=st.integers(0, 48))
def test_the_oldest_needed_age_is_never_below_minus_the_clock_skew_unless_blocked(fleet, policy, hours_later):
    as_of = max(s.collected_at for s in fleet) + timedelta(hours=hours_later)
    for qm in plan_fleet(fleet, as_of=as_of, policy=policy).queue_managers:
        if qm.oldest_needed_age_seconds is not None and not qm.blocked:
            assert qm.oldest_needed_age_seconds >= math.floor(-policy.clock_skew_seconds)


@SETTINGS
@given(fleet=fleets(), policy=site_policies, hours_later=st.integers(0, 48))
def test_with_the_site_s_backup_nothing_is_saved_and_only_old_enough_site_saves_are_deleted(fleet, policy, hours_later):
    as_of = max(s.collected_at for s in fleet) + timedelta(hours=hours_later)
    plan = plan_fleet(fleet, as_of=as_of, policy=policy)
    assert not [r for r in plan.receivers if r.action in SAVES]
    assert all(q.receivers_to_save == 0 and q.bytes_to_save == 0 for q in plan.queue_managers)
    current = _current(fleet)
    for row in plan.receivers:
        if row.action not in DELETES:
            continue
        assert row.action == "delete" and row.reason == "SAVED_BY_SITE"
        receiver = next(r for r in current[row.ref].receivers if (r.name, r.library) == (row.receiver, row.library))
        assert site_saved(receiver) and receiver.saved_at is not None
        assert as_of - receiver.saved_at >= policy.site_save_min_age
