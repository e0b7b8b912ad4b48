"""The logger's rules on a linear log (linuxsim/logger.py; docs/linux-interfaces.md sections 2, 3, 5, 6)."""

from __future__ import annotations

import pytest

from mqjournal.linuxmq.extents import EXTENT_NUMBERS, Extent, LogManagement
from mqjournal.linuxsim import logger
from mqjournal.linuxsim.model import LogExtent

from .conftest import EXTENT, T0, make_qm


def names(qm):
    return sorted(qm.extents)


def fill(qm, extents: int) -> None:
    logger.write(qm, extents * EXTENT, at=T0)


def near_the_wrap(management=LogManagement.MANUAL):
    """A queue manager whose log has reached S9999998.LOG."""
    qm = make_qm(management)
    first = EXTENT_NUMBERS - 2
    qm.extents = {Extent(first).name: LogExtent(number=first, modified=T0)}
    qm.current = qm.restart = qm.media = first
    for obj in qm.objects:
        obj.image_extent = first
    return qm


def test_a_full_extent_makes_the_next_one_current_and_9999999_is_followed_by_zero():
    qm = near_the_wrap()
    fill(qm, 3)
    assert names(qm) == ["S0000000.LOG", "S0000001.LOG", "S9999998.LOG", "S9999999.LOG"]
    assert qm.current == 1 and qm.extent(9_999_999).written == EXTENT and qm.extent(1).written == 0


def test_a_checkpoint_across_the_wrap_keeps_reclog_at_the_unit_of_works_extent_before_it():
    qm = near_the_wrap()
    logger.open_unit_of_work(qm, "uow-1")  # begins in S9999998
    fill(qm, 3)
    logger.checkpoint(qm)
    assert (qm.restart, qm.current) == (9_999_998, 1)
    logger.end_unit_of_work(qm, "uow-1")
    logger.checkpoint(qm)
    assert qm.restart == 1


def test_start_replays_across_the_wrap_and_names_the_first_missing_extent():
    qm = near_the_wrap()
    logger.open_unit_of_work(qm, "uow-1")
    fill(qm, 3)
    logger.checkpoint(qm)
    logger.crash(qm)
    logger.remove_extent(qm, "S9999999.LOG")
    with pytest.raises(logger.ExtentMissing, match=r"S9999999\.LOG"):
        logger.start(qm, at=T0)
    logger.restore_extent(qm, "S9999999.LOG", logger.content("QM1", 9_999_999, EXTENT), at=T0)
    logger.start(qm, at=T0)
    assert qm.running


def test_manual_mode_never_reuses_nor_deletes_an_extent(manual):
    fill(manual, 6)
    logger.checkpoint(manual)
    logger.record_media_images(manual, at=T0)
    fill(manual, 2)
    assert names(manual) == [Extent(n).name for n in range(9)]
    assert (manual.reused, manual.deleted) == (0, 0)


def test_automatic_mode_renames_to_r_only_what_neither_restart_nor_media_recovery_needs(automatic):
    fill(automatic, 5)
    logger.checkpoint(automatic)  # RECLOG S0000005, MEDIALOG still S0000000 (imaged at creation)
    assert not any(e.reusable for e in automatic.extents.values())
    channel = next(o for o in automatic.objects if o.name == "TO.PARTNER")
    channel.image_extent = 3  # the channel was last imaged in S0000003
    logger.record_media_images(automatic, "APP.QUEUE", "queue", at=T0)
    logger.record_media_images(automatic, automatic.name, "qmgr", at=T0)
    assert automatic.media == 3
    assert names(automatic) == ["R0000000.LOG", "R0000001.LOG", "R0000002.LOG", "S0000003.LOG", "S0000004.LOG",
                                "S0000005.LOG"]  # fmt: skip


def test_automatic_mode_reuses_an_r_extent_for_the_next_number(automatic):
    fill(automatic, 2)
    logger.checkpoint(automatic)
    logger.record_media_images(automatic, at=T0)
    assert names(automatic) == ["R0000000.LOG", "R0000001.LOG", "S0000002.LOG"]
    fill(automatic, 1)
    assert names(automatic) == ["R0000001.LOG", "S0000002.LOG", "S0000003.LOG"]
    assert automatic.reused == 1


def test_archive_mode_also_waits_for_set_log_archived(archive):
    fill(archive, 3)
    logger.checkpoint(archive)
    logger.record_media_images(archive, at=T0)
    assert not any(e.reusable for e in archive.extents.values())  # unneeded, but not notified
    assert logger.set_log_archived(archive, "S0000001.LOG") is False
    assert names(archive) == ["R0000001.LOG", "S0000000.LOG", "S0000002.LOG", "S0000003.LOG"]
    logger.reset_archlog(archive, "S0000002.LOG")
    assert names(archive) == ["R0000000.LOG", "R0000001.LOG", "R0000002.LOG", "S0000003.LOG"]


def test_an_archive_notification_before_the_extent_is_unneeded_waits_for_the_checkpoint(archive):
    fill(archive, 2)
    logger.set_log_archived(archive, "S0000000.LOG")
    assert "S0000000.LOG" in archive.extents  # RECLOG and MEDIALOG still need it
    logger.checkpoint(archive)
    logger.record_media_images(archive, at=T0)
    assert "R0000000.LOG" in archive.extents


def test_set_log_archived_refusals_are_ibms(archive, automatic):
    fill(archive, 2)
    with pytest.raises(logger.NotArchiveMode):
        logger.set_log_archived(automatic, "S0000000.LOG")
    with pytest.raises(logger.CurrentExtent):
        logger.set_log_archived(archive, "S0000002.LOG")
    with pytest.raises(logger.ExtentNotFound):
        logger.set_log_archived(archive, "S0000042.LOG")
    with pytest.raises(logger.ExtentNotFound):
        logger.set_log_archived(archive, "amqhlctl.lfh")
    assert logger.set_log_archived(archive, "S0000001.LOG") is False  # still needed: notified, kept
    assert logger.set_log_archived(archive, "S0000001.LOG") is True  # a repeat succeeds
    logger.checkpoint(archive)
    logger.record_media_images(archive, at=T0)
    with pytest.raises(logger.ReusableExtent):
        logger.set_log_archived(archive, "R0000001.LOG")
    with pytest.raises(logger.ExtentNotFound):
        logger.set_log_archived(archive, "S0000001.LOG")  # renamed R0000001.LOG: no S extent of that name


def test_a_unit_of_work_that_never_ends_holds_reclog(automatic):
    fill(automatic, 1)
    logger.open_unit_of_work(automatic, "stuck")
    for _ in range(5):
        fill(automatic, 2)
        logger.checkpoint(automatic)
        logger.record_media_images(automatic, at=T0)
    assert (automatic.restart, automatic.media, automatic.current) == (1, 11, 11)
    assert all(automatic.extent(n) is not None for n in range(1, 12))


def test_a_damaged_object_holds_medialog(automatic):
    fill(automatic, 1)
    logger.record_media_images(automatic, at=T0)
    logger.damage(automatic, "APP.QUEUE")
    fill(automatic, 4)
    logger.checkpoint(automatic)
    images = logger.record_media_images(automatic, at=T0)
    assert images.damaged == ("APP.QUEUE",) and automatic.media == 1 and automatic.restart == 5
    assert automatic.extent(1) is not None and "R0000000.LOG" in automatic.extents


def test_start_fails_without_an_extent_from_reclog_on_and_succeeds_with_it_restored(manual):
    fill(manual, 4)
    logger.checkpoint(manual)  # RECLOG S0000004 = CURRLOG
    logger.open_unit_of_work(manual, "uow")
    fill(manual, 2)
    logger.checkpoint(manual)  # RECLOG held at S0000004
    logger.crash(manual)
    logger.remove_extent(manual, "S0000003.LOG")  # older than RECLOG: not needed to start
    logger.remove_extent(manual, "S0000005.LOG")
    with pytest.raises(logger.ExtentMissing) as failed:
        logger.start(manual, at=T0)
    assert failed.value.subject == "S0000005.LOG" and failed.value.msg_id == "AMQ6767E"
    logger.restore_extent(manual, "S0000005.LOG", [b"not the log"], at=T0)
    with pytest.raises(logger.ExtentMissing):
        logger.start(manual, at=T0)  # other bytes than the queue manager wrote cannot be replayed
    logger.restore_extent(manual, "S0000005.LOG", logger.content("QM1", 5, EXTENT), at=T0)
    logger.start(manual, at=T0)
    assert manual.running and manual.units_of_work == []


def test_rcrmqobj_needs_every_extent_from_the_objects_image_on(manual):
    fill(manual, 2)
    logger.record_media_images(manual, "APP.QUEUE", "queue", at=T0)  # APP.QUEUE imaged in S0000002
    fill(manual, 2)
    logger.damage(manual, "APP.QUEUE")
    logger.remove_extent(manual, "S0000001.LOG")  # before its image: not needed
    logger.remove_extent(manual, "S0000003.LOG")
    with pytest.raises(logger.ExtentMissing, match=r"S0000003\.LOG"):
        logger.recreate_objects(manual, "queue", "APP.QUEUE")
    assert manual.objects[1].damaged
    logger.restore_extent(manual, "S0000003.LOG", logger.content("QM1", 3, EXTENT), at=T0)
    assert logger.recreate_objects(manual, "queue", "APP.QUEUE") == ["APP.QUEUE"]
    assert not manual.objects[1].damaged


def test_the_current_extent_of_a_running_queue_manager_is_not_removed(manual):
    with pytest.raises(logger.ExtentBusy):
        logger.remove_extent(manual, "S0000000.LOG")
