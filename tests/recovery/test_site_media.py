"""Receivers a restore needs that only the site's own backup holds: named "restore from the site's backup media",
with the save the snapshots showed, instead of a gap (recovery/site_media.py)."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.recovery.site_media import NeededReceiver, site_media_restores
from tests.plan.builders import HOUR, T0, chain, names, snapshot

FIVE = names(1, 5)  # AMQA000001-5 attached an hour apart from T0; a saved one 5 minutes after its detach


def needed(*receivers: str, attached_at=None) -> list[NeededReceiver]:
    return [NeededReceiver(n, "QMTEST", attached_at or T0 + int(n[-1]) * HOUR - HOUR) for n in receivers]


def test_a_receiver_the_site_saved_is_a_restore_from_the_site_s_media():
    seen = snapshot(chain(FIVE, saved=FIVE[:2]), oldest="AMQA000004", run_id="nightly-7")
    result = site_media_restores(needed("AMQA000002"), [seen])
    (restore,) = result.restores
    assert (restore.receiver, restore.library, restore.saved_at) == (
        "AMQA000002",
        "QMTEST",
        T0 + 2 * HOUR + timedelta(minutes=5),
    )
    assert result.not_found == []
    assert restore.note() == (
        "QMTEST/AMQA000002 (attached 2026-11-20 09:00:00 +01:00): restore from the site's backup media: saved by the "
        "site's backup on 2026-11-20 10:05:00 +01:00 (collection nightly-7 of 2026-11-20 12:30:00 +01:00 showed it); "
        "not in mqjournal's store. Restore it from that save (RSTOBJ OBJ(AMQA000002) LIB(QMTEST) OBJTYPE(*JRNRCV) "
        "from the site's media, or RSTOBJBRM where BRMS saved it), then plan again"
    )


def test_the_newest_save_any_snapshot_showed_is_named():
    first = snapshot(chain(FIVE, saved=FIVE[:2]), oldest="AMQA000004", run_id="r1")
    later_save = [
        r.model_copy(update={"saved_at": T0 + 30 * HOUR}) if r.name == "AMQA000001" else r
        for r in chain(FIVE, saved=FIVE[:2])
    ]
    second = snapshot(later_save, oldest="AMQA000004", run_id="r2", collected_at=T0 + 31 * HOUR)
    (restore,) = site_media_restores(needed("AMQA000001"), [second, first]).restores
    assert (restore.saved_at, restore.run_id) == (T0 + 30 * HOUR, "r2")


def test_a_receiver_no_snapshot_shows_saved_stays_a_gap():
    seen = snapshot(chain(FIVE, saved=FIVE[:1]), oldest="AMQA000004")
    result = site_media_restores(needed("AMQA000001", "AMQA000003"), [seen])
    assert [r.receiver for r in result.restores] == ["AMQA000001"]
    assert [n.name for n in result.not_found] == ["AMQA000003"]
    assert result.not_found[0].label() == "QMTEST/AMQA000003 (attached 2026-11-20 10:00:00 +01:00)"


def test_a_save_taken_while_attached_restores_nothing_mq_can_use():
    partly = [
        r.model_copy(update={"status": "ONLINE", "saved_at": T0 + timedelta(minutes=30)})
        if r.name == "AMQA000001"
        else r
        for r in chain(FIVE)
    ]
    result = site_media_restores(needed("AMQA000001"), [snapshot(partly, oldest="AMQA000004")])
    assert result.restores == [] and [n.name for n in result.not_found] == ["AMQA000001"]


def test_a_save_of_an_earlier_receiver_of_the_same_name_does_not_count():
    seen = snapshot(chain(FIVE, saved=FIVE[:2]), oldest="AMQA000004")
    wrapped = needed("AMQA000001", attached_at=T0 + 1000 * HOUR)
    assert site_media_restores(wrapped, [seen]).not_found == wrapped


def test_a_receiver_of_that_name_in_another_library_does_not_count():
    other = snapshot(chain(FIVE, library="QMOTHER", saved=FIVE[:2]), library="QMOTHER", oldest="AMQA000004")
    assert site_media_restores(needed("AMQA000001"), [other]).restores == []
