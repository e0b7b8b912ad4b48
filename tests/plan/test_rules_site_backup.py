"""`backup: site`: the site's own backup saves the receivers, and the plan deletes only what it saved long enough
ago (docs/planning-rules.md, section 3.1)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from mqjournal.policy import Policy
from mqjournal.vocabulary import SAVES
from tests.plan.builders import HOUR, T0, chain, snapshot
from tests.plan.test_rules import FIVE, actions, only_qm, plan

# chain(FIVE): AMQA000001 attached at T0, each one an hour after the one before, AMQA000005 attached at T0 + 4 h;
# a saved receiver's save is 5 minutes after its detach. AMQA000004 is the oldest needed below.
SAVED_1_TO_3 = chain(FIVE, saved=FIVE[:3])


def site_plan(receivers, *, hours_after_last_save: float, oldest="AMQA000004", **policy):
    """A plan with `backup: site`, made `hours_after_last_save` after the save of AMQA000003 (T0 + 3 h 05 min)."""
    as_of = T0 + 3 * HOUR + timedelta(minutes=5) + timedelta(hours=hours_after_last_save)
    state = snapshot(receivers, oldest=oldest, collected_at=as_of - timedelta(minutes=1))
    return plan(state, as_of=as_of, backup="site", **policy)


def with_save(receivers, name, **changes):
    return [r.model_copy(update=changes) if r.name == name else r for r in receivers]


def test_receivers_the_site_saved_long_enough_ago_are_deleted():
    result = site_plan(SAVED_1_TO_3, hours_after_last_save=12)
    assert [actions(result)[n] for n in FIVE[:3]] == [("delete", "SAVED_BY_SITE")] * 3
    assert only_qm(result).receivers_to_delete == 3


def test_a_site_save_younger_than_the_minimum_age_keeps_the_receiver():
    # AMQA000001 was saved 2 h before AMQA000003: 12.5 h and 12 h ago are old enough, 10.5 h is not.
    result = site_plan(SAVED_1_TO_3, hours_after_last_save=10.5)
    assert actions(result)["AMQA000001"] == ("delete", "SAVED_BY_SITE")
    assert actions(result)["AMQA000002"] == ("keep", "SITE_SAVE_TOO_RECENT")
    assert actions(result)["AMQA000003"] == ("keep", "SITE_SAVE_TOO_RECENT")


def test_the_minimum_age_is_a_policy_setting():
    assert actions(site_plan(SAVED_1_TO_3, hours_after_last_save=1, site_save_min_age_hours=1))["AMQA000003"] == (
        "delete",
        "SAVED_BY_SITE",
    )
    assert actions(site_plan(SAVED_1_TO_3, hours_after_last_save=1, site_save_min_age_hours=2))["AMQA000003"] == (
        "keep",
        "SITE_SAVE_TOO_RECENT",
    )


def test_a_receiver_the_site_has_not_saved_is_kept_and_never_saved_by_mqjournal():
    result = site_plan(chain(FIVE), hours_after_last_save=48)
    assert [actions(result)[n] for n in FIVE[:3]] == [("keep", "NOT_SAVED_BY_SITE")] * 3
    assert actions(result)["AMQA000004"] == ("keep", "NEEDED_NOT_SAVED")
    assert not [r for r in result.receivers if r.action in SAVES]
    assert (only_qm(result).receivers_to_save, only_qm(result).bytes_to_save) == (0, 0)


def test_a_save_taken_while_attached_is_not_a_site_save():
    # The nightly SAVLIB ran while AMQA000002 was attached: SAVE_TIMESTAMP set, the receiver stays ONLINE.
    attached_save = with_save(SAVED_1_TO_3, "AMQA000002", status="ONLINE", saved_at=T0 + 90 * timedelta(minutes=1))
    result = site_plan(attached_save, hours_after_last_save=48)
    assert actions(result)["AMQA000001"] == ("delete", "SAVED_BY_SITE")
    assert actions(result)["AMQA000002"] == ("keep", "NOT_SAVED_BY_SITE")


def test_behind_a_receiver_the_site_has_not_saved_nothing_is_deletable():
    # DLTJRNRCV deletes the oldest receiver only: AMQA000003, saved, waits for AMQA000002.
    attached_save = with_save(SAVED_1_TO_3, "AMQA000002", status="ONLINE", saved_at=T0 + 90 * timedelta(minutes=1))
    result = site_plan(attached_save, hours_after_last_save=48)
    assert actions(result)["AMQA000003"] == ("keep", "OLDER_NOT_SAVED_BY_SITE")
    assert only_qm(result).receivers_to_delete == 1


def test_behind_a_site_save_too_recent_nothing_is_deletable():
    late = with_save(SAVED_1_TO_3, "AMQA000001", saved_at=T0 + 3 * HOUR + timedelta(minutes=10))
    result = site_plan(late, hours_after_last_save=12)
    assert [actions(result)[n] for n in FIVE[:3]] == [
        ("keep", "SITE_SAVE_TOO_RECENT"),
        ("keep", "OLDER_NOT_SAVED_BY_SITE"),
        ("keep", "OLDER_NOT_SAVED_BY_SITE"),
    ]


def test_a_save_older_than_the_detach_is_not_a_site_save():
    early = with_save(SAVED_1_TO_3, "AMQA000001", saved_at=T0 + timedelta(minutes=30))
    assert actions(site_plan(early, hours_after_last_save=48))["AMQA000001"] == ("keep", "NOT_SAVED_BY_SITE")


def test_a_freed_receiver_the_site_saved_is_deleted():
    freed = chain(FIVE, saved=FIVE[1:3], freed=FIVE[:1])
    assert actions(site_plan(freed, hours_after_last_save=12))["AMQA000001"] == ("delete", "SAVED_BY_SITE")


def test_retained_and_needed_receivers_are_kept_saved_or_not():
    result = site_plan(chain(FIVE, saved=FIVE[:2]), hours_after_last_save=48, keep_min_receivers=2)
    assert actions(result)["AMQA000001"] == ("delete", "SAVED_BY_SITE")
    assert actions(result)["AMQA000002"] == ("keep", "RETAINED")
    assert actions(result)["AMQA000003"] == ("keep", "RETAINED_NOT_SAVED")
    assert actions(result)["AMQA000004"] == ("keep", "NEEDED_NOT_SAVED")
    assert actions(result)["AMQA000005"] == ("keep", "ATTACHED")


def test_a_blocked_queue_manager_deletes_nothing_and_saves_nothing():
    stale = snapshot(chain(FIVE, saved=FIVE[:1]), oldest="AMQA000004")
    result = plan(stale, as_of=stale.collected_at + 48 * HOUR, backup="site")
    assert only_qm(result).block_reason == "SNAPSHOT_STALE"
    assert actions(result)["AMQA000001"] == ("keep", "BLOCKED")
    assert actions(result)["AMQA000002"] == ("keep", "BLOCKED_NOT_SAVED")


def test_the_default_is_mqjournal_s_own_backup():
    assert Policy().backup == "mqjournal" and not Policy().site_backup
    result = plan(snapshot(chain(FIVE, saved=FIVE[:1]), oldest="AMQA000004"))
    assert actions(result)["AMQA000001"] == ("delete", "NOT_NEEDED_SAVED")
    assert actions(result)["AMQA000002"] == ("save_then_delete", "NOT_NEEDED_NOT_SAVED")


@pytest.mark.parametrize(
    "fields",
    [{"backup": "brms"}, {"site_save_min_age_hours": -1}, {"site_save_min_age_hours": 8761}, {"backup": None}],
)
def test_a_backup_policy_out_of_its_documented_range_is_refused(fields):
    with pytest.raises(ValidationError):
        Policy(**fields)


def test_the_site_policy_reads_from_a_file(tmp_path):
    from mqjournal.policy import load_policy

    path = tmp_path / "policy.yaml"
    path.write_text("backup: site\nsite_save_min_age_hours: 30\n")
    policy = load_policy(path)
    assert policy.site_backup and policy.site_save_min_age == timedelta(hours=30)
