"""Receivers read as ranges: consecutive chain members with the same action, their count, bytes and detach days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mqjournal.planrows import PlannedReceiver
from mqjournal.ranges import receiver_ranges
from tests.plan.builders import planned_receiver

MB = 1024 * 1024
DAY0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def row(
    position: int | None, action: str = "delete", *, qmgr: str = "PAYROLL", name: str | None = None, **extra
) -> PlannedReceiver:
    return planned_receiver(**{
        "host": "ibmi-prod1", "qmgr": qmgr, "qmgr_library": f"QM{qmgr}", "library": f"QM{qmgr}",
        "chain_position": position, "receiver": name or f"AMQA{position:06d}", "status": "ONLINE",
        "size_bytes": int(4.825 * MB), "action": action, "reason": "NOT_NEEDED_NOT_SAVED",
        "detached_at": DAY0 + timedelta(hours=2 * (position or 0)), **extra,
    })  # fmt: skip


def test_consecutive_members_with_one_action_read_as_one_range():
    [r] = receiver_ranges([row(i) for i in range(24)])
    assert (r.first, r.last, r.count) == ("AMQA000000", "AMQA000023", 24)
    assert r.text(60) == "AMQA000000-AMQA000023: 24 receivers, 115.8 MB, detached 20-22 Nov"


def test_a_single_receiver_reads_as_one():
    [r] = receiver_ranges([row(5)])
    assert r.text(60) == "AMQA000005: 1 receiver, 4.8 MB, detached 20 Nov"


def test_another_action_or_a_missing_position_splits_a_range():
    ranges = receiver_ranges([row(0), row(1), row(2, "keep"), row(3), row(5)])
    assert [(r.names, r.action) for r in ranges] == [
        ("AMQA000000-AMQA000001", "delete"),
        ("AMQA000002", "keep"),
        ("AMQA000003", "delete"),
        ("AMQA000005", "delete"),
    ]


def test_the_chain_order_counts_not_the_names_which_wrap():
    rows = [row(0, name="AMQA099998"), row(1, name="AMQA099999"), row(2, name="AMQA000000")]
    [r] = receiver_ranges(reversed(rows))
    assert r.names == "AMQA099998-AMQA000000"


def test_a_label_splits_ranges_of_one_action():
    rows = [row(i, "keep", reason="RETAINED" if i < 2 else "NEEDED_SAVED") for i in range(4)]
    ranges = receiver_ranges(rows, key=lambda r: r.reason)
    assert [(r.names, r.label) for r in ranges] == [
        ("AMQA000000-AMQA000001", "RETAINED"),
        ("AMQA000002-AMQA000003", "NEEDED_SAVED"),
    ]


def test_queue_managers_never_share_a_range_and_receivers_outside_the_chain_stand_alone():
    rows = [row(0), row(1), row(0, qmgr="BILLING"), row(None, name="AMQB000001"), row(None, name="AMQB000002")]
    assert [(r.qmgr, r.names) for r in receiver_ranges(rows)] == [
        ("BILLING", "AMQA000000"),
        ("PAYROLL", "AMQA000000-AMQA000001"),
        ("PAYROLL", "AMQB000001"),
        ("PAYROLL", "AMQB000002"),
    ]


def test_detach_days_are_the_partitions_and_a_naive_time_is_utc():
    late = datetime(2026, 11, 20, 23, 30)  # naive, as Parquet gives it back: 21 Nov at +01:00
    [r] = receiver_ranges([row(0, detached_at=late)])
    assert r.text(60).endswith("detached 21 Nov")
    assert r.text(-300).endswith("detached 20 Nov")


def test_the_attached_receiver_and_a_plan_without_detach_times():
    attached = row(3, "keep", status="ATTACHED", detached_at=None)
    assert receiver_ranges([attached])[0].text(60) == "AMQA000003: 1 receiver, 4.8 MB, attached"
    [r] = receiver_ranges([row(1, "keep"), row(2, "keep"), attached])
    assert r.text(60) == "AMQA000001-AMQA000003: 3 receivers, 14.5 MB, detached 20 Nov, and the attached receiver"
    bare = PlannedReceiver.model_validate({k: v for k, v in row(4).model_dump().items() if k != "detached_at"})
    assert receiver_ranges([bare])[0].text() == "AMQA000004: 1 receiver, 4.8 MB"


def test_a_range_with_a_verb_and_why():
    [r] = receiver_ranges([row(i, "keep") for i in range(24, 62)])
    assert r.text(60, verb="kept", why="needed for media recovery") == (
        "AMQA000024-AMQA000061: 38 receivers kept: needed for media recovery; 183.3 MB, detached 22-25 Nov"
    )
