"""The "queue manager cannot start" alert (cannotstart.py): raised from what a collection read, before anyone tries
STRMQM, when a receiver MQ needs is gone from the host or an AMQ7432 went unanswered; it names the missing
receivers, the time to restore from, and the recovery DAG's values, kind included."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.cannotstart import cannot_start
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.snapshot import DamagedObject, QueueMessage, Snapshot
from tests.plan.builders import HOUR, T0, chain, names, snapshot

# AMQA000024 .. AMQA000030 as they were; the oldest three deleted outside mqjournal.
ALL = names(24, 7)
LEFT = chain(ALL, start=T0)[3:]


def message(msg_id: str, at) -> QueueMessage:
    return QueueMessage(id=msg_id, at=at, text=f"{msg_id} ...", queue="QMTEST/QMQMMSG")


def with_messages(s: Snapshot, *messages: QueueMessage, **fields) -> Snapshot:
    return s.model_copy(update={"messages": list(messages), **fields})


def test_every_receiver_mq_needs_on_the_host_raises_nothing():
    assert cannot_start(snapshot(chain(ALL), oldest="AMQA000024")) is None


def test_the_receiver_of_the_startup_point_gone_means_strmqm_will_fail_and_names_the_missing_receivers():
    needed = T0 + timedelta(minutes=1)
    s = snapshot(LEFT, oldest="AMQA000024", needed_at=needed, startup="AMQA000024", media="AMQA000024")
    alert = cannot_start(s)
    assert alert is not None
    assert alert.kind is RecoveryKind.STARTUP and alert.evidence == "AMQ7460"
    assert alert.missing == ("AMQA000024", "AMQA000025", "AMQA000026")
    assert alert.needed_at == needed
    assert alert.recovery_conf() == {
        "host": "ibmi1",
        "qmgr": "TEST",
        "kind": "startup",
        "timestamp": "2026-11-20T08:01:00+01:00",
    }
    assert alert.text.startswith(
        "QMGR_CANNOT_START: STRMQM will fail with AMQ7432: needed receivers AMQA000024, AMQA000025, AMQA000026 are "
        "missing (AMQ7460); restore the receivers holding entries from 2026-11-20 08:01:00 +01:00 on"
    )
    assert "run mq_journal_recovery with host=ibmi1, qmgr=TEST, kind=startup, timestamp=2026-11-20T08:01:00+01:00" in (
        alert.text
    )


def test_an_amq7432_no_start_answered_raises_it_with_the_entry_it_reports():
    wanted = T0 + 3 * HOUR + timedelta(minutes=7)
    s = snapshot(chain(ALL), oldest="AMQA000027")
    failed = with_messages(s, message("AMQ7460", T0), message("AMQ7432", T0 + 6 * HOUR), entry_needed_at=wanted)
    alert = cannot_start(failed)
    assert alert is not None and alert.evidence == "AMQ7432" and alert.kind is RecoveryKind.STARTUP
    assert alert.needed_at == wanted and alert.text.startswith("QMGR_CANNOT_START: STRMQM failed with AMQ7432")
    # A start (or checkpoint) that worked since wrote a newer AMQ7460: the AMQ7432 is answered.
    started = with_messages(s, message("AMQ7432", T0 + 6 * HOUR), message("AMQ7460", T0 + 7 * HOUR))
    assert cannot_start(started) is None


def media_point_lost(*damaged: DamagedObject) -> Snapshot:
    """AMQ7462 (and AMQJRNINF) in AMQA000025, gone; AMQ7460 in AMQA000029, on the host."""
    s = snapshot(
        LEFT,
        oldest="AMQA000025",
        needed_at=T0 + HOUR + timedelta(minutes=1),
        startup="AMQA000029",
        media="AMQA000025",
        startup_at=T0 + 5 * HOUR,
    )
    return s.model_copy(update={"damaged_objects": list(damaged)})


def test_only_the_media_point_lost_its_receiver_so_the_kind_is_media_for_the_damaged_object():
    damaged = DamagedObject(object="APP.REQUEST.QUEUE", object_type="QLOCAL", reported_at=T0 + 2 * HOUR)
    alert = cannot_start(media_point_lost(damaged))
    assert alert is not None and alert.kind is RecoveryKind.MEDIA and alert.evidence == "AMQ7462"
    assert alert.missing == ("AMQA000025", "AMQA000026")
    assert alert.recovery_conf() == {"host": "ibmi1", "qmgr": "TEST", "kind": "media", "object": "APP.REQUEST.QUEUE"}
    assert "RCRMQMOBJ of its damaged object will fail with AMQ7432" in alert.text


def test_the_media_point_lost_with_no_object_damaged_since_raises_nothing_as_mq_still_starts():
    assert cannot_start(media_point_lost()) is None
    repaired = DamagedObject(object="APP.REQUEST.QUEUE", object_type="QLOCAL", reported_at=T0)
    assert cannot_start(media_point_lost(repaired)) is None


def test_a_needed_receiver_whose_storage_is_freed_counts_as_missing():
    s = snapshot(chain(ALL, freed=("AMQA000024",)), oldest="AMQA000024")
    alert = cannot_start(s)
    assert alert is not None and alert.missing == ("AMQA000024",) and alert.freed == ("AMQA000024",)
    assert "(freed: AMQA000024)" in alert.text


def test_asterisks_say_mq_found_its_oldest_needed_receiver_gone_without_naming_it():
    s = snapshot(LEFT, oldest="*", needed_at=T0 + timedelta(minutes=1))
    alert = cannot_start(s)
    assert alert is not None and alert.kind is RecoveryKind.STARTUP and alert.missing == ()
    assert "the receiver holding its oldest needed entry is gone" in alert.text
    assert alert.recovery_conf()["timestamp"] == "2026-11-20T08:01:00+01:00"


def test_a_long_run_of_missing_receivers_is_written_as_a_range():
    every = names(10, 21)
    s = snapshot(chain(every)[20:], oldest="AMQA000010", startup="AMQA000010")
    alert = cannot_start(s)
    assert alert is not None and len(alert.missing) == 20
    assert "needed receivers AMQA000010 through AMQA000029 (20) are missing" in alert.text


def test_the_plans_queue_managers_get_the_alert_from_their_newest_snapshot_only():
    from mqjournal.cannotstart import newest_by_queue_manager, with_cannot_start_alerts
    from mqjournal.planrows import PlannedQueueManager

    fine = snapshot(chain(ALL), oldest="AMQA000024")
    lost = snapshot(LEFT, oldest="AMQA000024", startup="AMQA000024", media="AMQA000024")
    assert cannot_start(fine) is None and cannot_start(lost) is not None
    row = PlannedQueueManager.model_construct(host=fine.host, qmgr=fine.qmgr, qmgr_library=fine.qmgr_library, alerts=())

    # The newest snapshot decides: lost after fine raises it, fine after lost (restored since) does not.
    later = lost.model_copy(update={"collected_at": fine.collected_at + HOUR})
    [alerted] = with_cannot_start_alerts([row], newest_by_queue_manager([fine, later]))
    restored = fine.model_copy(update={"collected_at": lost.collected_at + HOUR})
    [quiet] = with_cannot_start_alerts([row], newest_by_queue_manager([lost, restored]))

    assert alerted.alerts == ("QMGR_CANNOT_START",) and quiet.alerts == ()
