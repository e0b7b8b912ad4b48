"""The delete-time re-check with `backup: site` (docs/planning-rules.md, section 6.1): the live receiver's own save
history, by the partition's clock at the fresh collection, is the proof; mqjournal's catalog plays no part."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.policy import Policy
from mqjournal.rules import delete_decisions
from tests.plan.builders import HOUR, T0, chain, snapshot
from tests.plan.test_delete_decisions import evidence_for, table
from tests.plan.test_rules import FIVE

SITE = Policy(backup="site", site_save_min_age_hours=12)
# chain(FIVE): AMQA000001-3 saved 5 minutes after their detach, at T0 + 1 h 05, 2 h 05 and 3 h 05 (CET);
# AMQA000004 needed (AMQJRNINF), AMQA000005 attached at T0 + 4 h.
LAST_SAVE = T0 + 3 * HOUR + timedelta(minutes=5)


def live_at(collected_at, receivers=None, **kw):
    return snapshot(receivers or chain(FIVE, saved=FIVE[:3]), oldest="AMQA000004", collected_at=collected_at, **kw)


def decide(approved, live, evidence=None, policy=SITE):
    return delete_decisions(approved, live, evidence or {}, policy=policy)


def test_receivers_the_site_saved_long_enough_ago_are_deleted_without_any_catalogued_save():
    decisions = decide(FIVE[:3], live_at(LAST_SAVE + 12 * HOUR))
    assert table(decisions) == [(n, True, "DELETE") for n in FIVE[:3]]
    assert decisions[0].detail == "saved by the site's backup on 2026-11-20 09:05:00+01:00; not in mqjournal's store"
    assert not any(d.ignore_inquiry for d in decisions)


def test_a_site_save_too_recent_by_the_live_clock_is_kept_and_stops_the_later_ones():
    # 11.5 h after AMQA000003's save, 12.5 h after AMQA000002's and 13.5 h after AMQA000001's.
    decisions = decide(FIVE[:3], live_at(LAST_SAVE + 11.5 * HOUR))
    assert table(decisions) == [
        ("AMQA000001", True, "DELETE"), ("AMQA000002", True, "DELETE"), ("AMQA000003", False, "NOT_SAVED_BY_SITE"),
    ]  # fmt: skip
    assert decisions[2].detail == "saved by the site's backup 11.5 h ago; deletable after 12 h"


def test_the_age_is_measured_by_the_live_collection_not_by_the_plan():
    too_early = decide(["AMQA000001"], live_at(T0 + HOUR + timedelta(minutes=5) + 11 * HOUR))
    assert table(too_early) == [("AMQA000001", False, "NOT_SAVED_BY_SITE")]
    assert too_early[0].detail == "saved by the site's backup 11 h ago; deletable after 12 h"
    assert table(decide(["AMQA000001"], live_at(T0 + HOUR + timedelta(minutes=5) + 12 * HOUR)))[0][1]


def test_a_receiver_the_site_never_saved_is_kept_whatever_the_catalog_holds():
    live = live_at(LAST_SAVE + 48 * HOUR, chain(FIVE))
    # A proven save of mqjournal's own (from before the switch to the site's backup) is not what this policy trusts.
    decisions = decide(["AMQA000001", "AMQA000002"], live, evidence_for(live, "AMQA000001", "AMQA000002"))
    assert table(decisions) == [("AMQA000001", False, "NOT_SAVED_BY_SITE"), ("AMQA000002", False, "OLDER_NOT_DELETED")]
    assert decisions[0].detail == "not saved by the site's backup yet (IBM i shows no save of it)"


def test_a_save_taken_while_attached_does_not_allow_the_delete():
    receivers = [
        r.model_copy(update={"status": "ONLINE", "saved_at": T0 + timedelta(minutes=30)})
        if r.name == "AMQA000001"
        else r
        for r in chain(FIVE, saved=FIVE[:3])
    ]
    (decision,) = decide(["AMQA000001"], live_at(LAST_SAVE + 48 * HOUR, receivers))
    assert (decision.delete, decision.reason) == (False, "NOT_SAVED_BY_SITE")
    assert decision.detail == (
        "not saved by the site's backup yet: its last save, on 2026-11-20 08:30:00+01:00, does not cover all of it "
        "(IBM i shows it ONLINE, not SAVED or FREED: a save taken while it was attached is never a full one)"
    )


def test_a_needed_receiver_is_never_deleted_however_old_its_save():
    decisions = decide(FIVE, live_at(LAST_SAVE + 48 * HOUR, chain(FIVE, saved=FIVE[:4])))
    assert table(decisions)[2:] == [
        ("AMQA000003", True, "DELETE"),
        ("AMQA000004", False, "NOT_DELETABLE_NOW"),
        ("AMQA000005", False, "OLDER_NOT_DELETED"),
    ]
    assert decisions[3].detail == "not deletable now (NEEDED_SAVED)"


def test_the_attached_receiver_is_never_deleted():
    live = snapshot(chain(FIVE, saved=FIVE[:4]), collected_at=LAST_SAVE + 48 * HOUR)  # AMQJRNINF: AMQA000005
    decisions = decide(FIVE, live)
    assert table(decisions)[3:] == [("AMQA000004", True, "DELETE"), ("AMQA000005", False, "ATTACHED")]


def test_a_blocked_queue_manager_deletes_nothing():
    live = snapshot(chain(FIVE, saved=FIVE[:3]), oldest="AMQA000077", collected_at=LAST_SAVE + 48 * HOUR)
    decisions = decide(FIVE[:3], live)
    assert table(decisions) == [(n, False, "BLOCKED") for n in FIVE[:3]]
    assert decisions[0].detail.startswith("blocked on the live host: AMQJRNINF_RECEIVER_NOT_IN_CHAIN")


def test_an_approval_that_skips_the_oldest_receiver_deletes_nothing():
    decisions = decide(["AMQA000002"], live_at(LAST_SAVE + 48 * HOUR))
    assert table(decisions) == [("AMQA000002", False, "OLDER_NOT_DELETED")]


def test_a_site_save_later_than_the_partition_s_clock_is_not_old_enough():
    receivers = [
        r.model_copy(update={"saved_at": LAST_SAVE + 2 * HOUR}) if r.name == "AMQA000001" else r
        for r in chain(FIVE, saved=FIVE[:3])
    ]
    (decision,) = decide(["AMQA000001"], live_at(LAST_SAVE + HOUR, receivers), policy=Policy(backup="site"))
    assert decision.detail == (
        "saved by the site's backup on 2026-11-20 13:05:00+01:00, later than the partition's clock at this "
        "collection (2026-11-20 12:05:00+01:00); deletable 12 h after that save"
    )
