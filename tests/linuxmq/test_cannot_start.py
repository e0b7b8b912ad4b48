"""The on-call alert of a Linux queue manager (linuxmq/cannotstart.py): raised from what a collection listed."""

from __future__ import annotations

from mqjournal.linuxmq.cannotstart import cannot_start, rcrmqobj_type
from mqjournal.linuxmq.collector import damaged_objects
from mqjournal.linuxmq.snapshot import LinuxSnapshot
from tests.linuxmq.test_snapshot import record


def snapshot(**changes: object) -> LinuxSnapshot:
    return LinuxSnapshot.model_validate(record(**changes))


def test_restart_reads_from_reclog_across_the_wrap_and_many_missing_extents_read_as_a_range():
    names = ["S9999990.LOG", "S0000003.LOG"]
    snap = snapshot(
        restart_extent="S9999990.LOG",
        current_extent="S0000003.LOG",
        media_extent="S9999990.LOG",
        archive_extent=None,
        extents=[{"name": n, "size_bytes": 1, "modified_at": None} for n in names],
    )

    alert = cannot_start(snap)

    assert alert is not None and alert.missing[0] == "S9999991.LOG" and len(alert.missing) == 12
    assert "S9999991.LOG through S0000002.LOG (12) are missing" in alert.text
    assert alert.incident == "S9999991.LOG"


def test_nothing_is_raised_for_a_complete_log_or_one_without_log_points():
    assert cannot_start(snapshot()) is None
    assert cannot_start(snapshot(log_type="CIRCULAR", current_extent=None, extents=[])) is None


def damaged(*objects: tuple[str, str]) -> dict:
    return {"forced": True, "ok": False, "at": None, "messages": ["AMQ7472E"] * len(objects)} | {
        "damaged": [{"name": n, "type": t} for n, t in objects]
    }


def test_a_media_extent_gone_with_an_object_damaged_asks_for_its_media_recovery():
    # RECLOG S0000011 to CURRLOG S0000012 are there; S0000005, which media recovery reads from MEDIALOG S0000003 on,
    # is not, and rcdmqimg reported two objects damaged: the newest report is the one re-created.
    snap = snapshot(
        extents=[{"name": f"S{n:07d}.LOG", "size_bytes": 1, "modified_at": None} for n in range(13) if n != 5],
        media_images=damaged(("APP.OLD.Q", "queue"), ("APP.IN.Q", "queue")),
    )

    alert = cannot_start(snap)

    assert alert is not None and alert.kind.value == "media" and alert.missing == ("S0000005.LOG",)
    assert alert.recovery_conf() == {
        "host": "mq-linux1",
        "qmgr": "QM.ORDERS",
        "kind": "media",
        "object": "APP.IN.Q",
        "object_type": "queue",
    }
    assert alert.text.startswith(
        "QMGR_CANNOT_START: rcrmqobj of the damaged queue APP.IN.Q (AMQ7472) will fail with AMQ6767: needed extent "
        "S0000005.LOG is missing"
    )
    assert "MEDIALOG S0000003.LOG through CURRLOG S0000012.LOG" in alert.text


def test_a_media_extent_gone_with_nothing_damaged_raises_nothing_and_a_restart_gap_comes_first():
    gone_5 = [{"name": f"S{n:07d}.LOG", "size_bytes": 1, "modified_at": None} for n in range(13) if n != 5]
    assert cannot_start(snapshot(extents=gone_5)) is None
    gone_11 = [{"name": f"S{n:07d}.LOG", "size_bytes": 1, "modified_at": None} for n in range(13) if n != 11]
    alert = cannot_start(snapshot(extents=gone_11, media_images=damaged(("APP.IN.Q", "queue"))))
    assert alert is not None and alert.kind.value == "startup" and alert.missing == ("S0000011.LOG",)


def test_a_type_rcrmqobj_does_not_take_asks_it_for_every_object_of_the_name():
    assert rcrmqobj_type("qlocal") == "qlocal" and rcrmqobj_type("QUEUE") == "queue"
    assert rcrmqobj_type("subscription") == "all"


def test_rcdmqimgs_damaged_objects_are_read_once_each_and_a_name_mq_would_not_take_is_left_out():
    said = (
        "AMQ7467I: The oldest log file required to start queue manager QM1 is S0000004.LOG.\n"
        "AMQ7472E: Object APP.IN.Q, type queue damaged.\n"
        "AMQ7472E: Object APP.IN.Q, type queue damaged.\n"
        "AMQ7472: Object TO.QM2, type channel damaged.\n"
        "AMQ7472E: Object BAD;NAME, type queue damaged.\n"
    )
    assert [(d.name, d.type) for d in damaged_objects(said)] == [("APP.IN.Q", "queue"), ("TO.QM2", "channel")]
