"""The queue manager page's one sentence on why AMQJRNINF, AMQ7460, AMQ7462 and the oldest needed receiver shown
name different receivers (pointwords.py)."""

from __future__ import annotations

from datetime import timedelta

from mqjournal.pointwords import points_sentence
from tests.plan.builders import HOUR, T0, chain, names, snapshot

ALL = names(24, 7)


def test_nothing_is_said_when_all_name_the_same_receiver():
    assert points_sentence(snapshot(chain(ALL), oldest="AMQA000027"), "AMQA000027") is None


def test_amqjrninf_naming_a_receiver_gone_from_the_host_explains_the_oldest_shown():
    s = snapshot(chain(ALL)[3:], oldest="AMQA000024", needed_at=T0 + timedelta(minutes=1))
    assert points_sentence(s, "AMQA000027") == (
        "AMQJRNINF names AMQA000024, the oldest receiver MQ needs, but AMQA000024 is no longer on the host, so the "
        "AMQA000027 shown as the oldest needed is only the oldest receiver left on the host: the recovery pass that "
        "needs it (STRMQM, or RCRMQMOBJ) ends with AMQ7432 until AMQA000024 is restored."
    )


def test_asterisks_are_explained_as_mq_finding_its_receiver_deleted():
    s = snapshot(chain(ALL)[3:], oldest="*", needed_at=T0 + timedelta(minutes=1))
    sentence = points_sentence(s, "AMQA000027")
    assert sentence is not None and sentence.startswith(
        "AMQJRNINF shows asterisks because MQ found the receiver holding its oldest needed entry "
        "(2026-11-20 08:01:00 +01:00) deleted"
    )


def test_the_two_recovery_points_apart_are_told_apart_by_what_holds_each():
    s = snapshot(chain(ALL), oldest="AMQA000025", startup="AMQA000029", media="AMQA000025", startup_at=T0 + 5 * HOUR)
    assert points_sentence(s, "AMQA000025") == (
        "AMQJRNINF names the older of MQ's two recovery points: AMQ7460 (AMQA000029) is where a restart replays "
        "from, held back only by a unit of work still open, and AMQ7462 (AMQA000025) is the oldest media image an "
        "object still needs, held back by a damaged object (AMQ7472) or one not imaged since."
    )


def test_amqjrninf_from_another_checkpoint_than_the_messages_read():
    s = snapshot(chain(ALL), oldest="AMQA000026", startup="AMQA000028", media="AMQA000028")
    sentence = points_sentence(s, "AMQA000026")
    assert sentence is not None and sentence.startswith("AMQJRNINF (AMQA000026) and the newest AMQ7460/AMQ7462 read")


def test_a_blocked_plan_keeping_from_an_older_receiver_than_mq_needs_says_so():
    s = snapshot(chain(ALL), oldest="AMQA000027")
    assert points_sentence(s, "AMQA000024") == (
        "The plan is blocked, so it keeps every receiver from AMQA000024, the oldest on the host, although MQ needs "
        "only those from AMQA000027 on (AMQJRNINF)."
    )
