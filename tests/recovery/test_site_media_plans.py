"""Restore plans with the site's own backup (backup: site, issue #15): a needed receiver that only an earlier
snapshot knows, saved by the site, is named "restore from the site's backup media", not a gap, and the plan does
not run until it is back."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.restore import plan_restore
from tests.recovery.test_restore_plans import HOUR, LIVE, T0, amq7432, cataloged, inputs, name, receiver, snapshot

NEEDED_AT = T0 + 2 * HOUR + timedelta(minutes=30)  # in receiver 2


def before_the_delete(*indexes: int, status: str = "SAVED"):
    """The maintenance run's snapshot that showed these receivers, saved by the site, before it deleted them."""
    return snapshot([receiver(i, status) for i in indexes] + LIVE).model_copy(update={"run_id": "maint7"})


def test_a_receiver_only_the_sites_backup_saved_is_named_for_the_sites_media_and_the_plan_does_not_run():
    live = snapshot(LIVE, [amq7432(NEEDED_AT)])

    plan = plan_restore(inputs(RecoveryKind.STARTUP, live, [], earlier=[before_the_delete(0, 1, 2, 3)]))

    assert plan.gaps == [] and not plan.executable
    assert [note.split(": restore")[0] for note in plan.site_media] == [
        f"QMTEST/{name(2)} (attached 2026-11-02 10:00:00 +01:00)",
        f"QMTEST/{name(3)} (attached 2026-11-02 11:00:00 +01:00)",
    ]
    assert "restore from the site's backup media: saved by the site's backup on" in plan.site_media[0]
    assert "collection maint7" in plan.site_media[0]
    assert "Restore these from the site's backup media first, then plan again" in plan.markdown()


def test_receivers_in_mqjournals_catalog_are_still_restored_from_it_beside_the_sites_media():
    live = snapshot(LIVE, [amq7432(NEEDED_AT)])

    plan = plan_restore(inputs(RecoveryKind.STARTUP, live, cataloged(3), earlier=[before_the_delete(0, 1, 2)]))

    assert plan.restored_receivers == [name(3)]
    assert len(plan.site_media) == 1 and name(2) in plan.site_media[0] and not plan.executable


def test_a_save_taken_while_attached_is_no_site_backup_and_stays_a_gap():
    live = snapshot(LIVE, [amq7432(NEEDED_AT)])
    partial = before_the_delete(2, 3, status="ONLINE")

    plan = plan_restore(inputs(RecoveryKind.STARTUP, live, [], earlier=[partial]))

    assert plan.site_media == [] and {g.obj.split(" ")[0] for g in plan.gaps} >= {f"QMTEST/{name(2)}"}


def test_without_earlier_snapshots_the_missing_receiver_is_a_gap_as_before():
    live = snapshot(LIVE, [amq7432(NEEDED_AT)])

    plan = plan_restore(inputs(RecoveryKind.STARTUP, live, []))

    assert plan.site_media == [] and plan.gaps and not plan.executable
