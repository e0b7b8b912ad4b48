"""Issue #16: a recovery plan shows every time as the partition's local time with its offset (mqjournal.timefmt),
"2026-11-02 13:00:00 +01:00", never ISO 8601 with its 'T'. The catalog gives its times back in UTC; the plan shows
them in the partition's zone, the one DSPJRN, WRKJRNRCV and QMQMMSG show."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel

from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.naming import plan_naming
from mqjournal.recovery.plan import RecoveryPlan
from mqjournal.recovery.restore import plan_restore
from tests.plan.builders import chain, names
from tests.plan.builders import snapshot as naming_snapshot
from tests.recovery import test_expiry as expiry
from tests.recovery.test_naming import cpi70e3
from tests.recovery.test_naming import request as naming_request
from tests.recovery.test_restore_plans import (
    HOUR,
    LIVE,
    T0,
    amq7432,
    cataloged,
    inputs,
    library_save,
    name,
    receiver,
    snapshot,
)

LOCAL_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} ([+-]\d{2}:\d{2})")
A_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
ISO_T = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}")


def in_utc(record: Any) -> Any:
    """A catalog record as the catalog gives it back: every time in UTC (the same instants)."""
    update: dict[str, Any] = {}
    for field, value in record:
        if isinstance(value, datetime):
            update[field] = value.astimezone(UTC)
        elif isinstance(value, tuple) and value and isinstance(value[0], BaseModel):
            update[field] = tuple(in_utc(v) for v in value)
    return record.model_copy(update=update)


def shown(plan: RecoveryPlan) -> str:
    """Everything of the plan a person reads: the gate's markdown and each step's reason."""
    return "\n".join([plan.markdown(), *(s.why for s in plan.steps), *(str(g) for g in plan.gaps)])


def offsets_shown(text: str) -> list[str]:
    """The offset of every time in `text`, after checking that each date there starts a local time."""
    assert not ISO_T.search(text), text
    times = LOCAL_TIME.findall(text)
    assert times and len(times) == len(A_DATE.findall(text)), text
    return times


@pytest.mark.parametrize(
    ("zone", "offset", "restore_point", "saved"),
    [
        (timezone(timedelta(hours=1)), "+01:00", "2026-11-02 13:00:00", "2026-11-02 11:30:00"),
        (timezone(timedelta(hours=-5)), "-05:00", "2026-11-02 07:00:00", "2026-11-02 05:30:00"),
        (timezone(timedelta(hours=5, minutes=30)), "+05:30", "2026-11-02 17:30:00", "2026-11-02 16:00:00"),
    ],
)
def test_a_library_plan_shows_the_catalogs_utc_times_in_the_partitions_zone(zone, offset, restore_point, saved):
    # No snapshot (the library is lost): the host's clock, read by gather, carries the partition's zone.
    plan = plan_restore(
        inputs(
            RecoveryKind.LIBRARY,
            None,
            [in_utc(r) for r in cataloged(0, 1, 2, 3, 4)],
            library_saves=[in_utc(library_save())],
            save_files_on_host={"QGPL/MQJSAVE0", "QGPL/MQLSAVE0", "QGPL/MQLSAVE0D"},
            now=(T0 + 6 * HOUR).astimezone(zone),
        )
    )

    text = shown(plan)
    assert set(offsets_shown(text)) == {offset}
    assert f"Restore point: {restore_point} {offset}\n" in plan.markdown()
    assert f"Library save QGPL/MQLSAVE0 of {saved} {offset}; it needs AMQA000002" in plan.notes[0]
    assert f"Journal entries after {restore_point} {offset} were in no save" in plan.notes[1]
    assert plan.steps[0].why == f"the latest library save ({saved} {offset}), without its journal and receivers"
    # The plan's data keeps the instants, whatever zone the text shows.
    assert plan.restore_point == T0 + 5 * HOUR


def test_a_startup_plan_shows_the_amq7432_entry_and_the_saves_in_the_partitions_zone():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, [in_utc(r) for r in cataloged(0, 1, 2, 3, 4)]))

    assert set(offsets_shown(shown(plan))) == {"+01:00"}
    assert plan.notes[0] == "AMQ7432 needs the entry of 2026-11-02 10:30:00 +01:00: 2 receiver(s) to restore."
    assert plan.steps[0].why == "needed by the recovery pass; saved 2026-11-02 12:05:00 +01:00 in QGPL/MQJSAVE0"


def test_a_media_plan_shows_the_amq7462_point_in_the_partitions_zone():
    # The point given in UTC: the plan shows it in the zone of the snapshot's collection time.
    snap = snapshot(LIVE, media=(T0 + 2 * HOUR + timedelta(minutes=15)).astimezone(UTC))
    plan = plan_restore(
        inputs(RecoveryKind.MEDIA, snap, [in_utc(r) for r in cataloged(0, 1, 2, 3)], request={"object": "APP.Q"})
    )

    assert set(offsets_shown(shown(plan))) == {"+01:00"}
    assert plan.notes[0] == (
        "Media recovery of APP.Q (*ALL) reads from the AMQ7462 point 2026-11-02 10:15:00 +01:00: 2 receiver(s) to "
        "restore."
    )


def test_a_gap_names_both_receivers_of_a_name_by_their_local_attach_times():
    # An older receiver of the same name was restored and not associated: RSTOBJ of 3 would fail CPF2112.
    older = (T0 - timedelta(days=30)).astimezone(UTC)
    squatter = receiver(3).model_copy(
        update={"attached_at": older, "detached_at": older + HOUR, "journal": None, "journal_library": None}
    )
    snap = snapshot([squatter, *LIVE], [amq7432(T0 + 3 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, [in_utc(r) for r in cataloged(3)]))

    (gap,) = plan.gaps
    assert gap.problem == (
        "the host has another receiver of that name (attached 2026-10-03 08:00:00 +01:00), so the one attached "
        "2026-11-02 11:00:00 +01:00 cannot be restored over it (CPF2112)"
    )
    assert set(offsets_shown(shown(plan))) == {"+01:00"}


def test_an_entry_older_than_every_receiver_is_named_with_local_times():
    snap = snapshot(LIVE, [amq7432(T0 - HOUR)])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, [in_utc(r) for r in cataloged(0, 1, 2, 3)]))

    (gap,) = plan.gaps
    assert gap.obj == "the receiver holding the entry of 2026-11-02 07:00:00 +01:00"
    assert gap.problem.endswith(f"(oldest: QMTEST/{name(0)} (attached 2026-11-02 08:00:00 +01:00))")
    assert set(offsets_shown(shown(plan))) == {"+01:00"}


def test_an_expiry_plan_shows_the_catalogs_times_in_the_partitions_zone():
    plan = expiry.plan_for(
        cataloged=[in_utc(r) for r in expiry.scene()],
        library_saves=[in_utc(s) for s in expiry.LIBRARY_SAVES],
    )

    assert set(offsets_shown(shown(plan))) == {"+01:00"}
    assert any(n.startswith("The live queue manager needs entries from 2026-11-20 ") for n in plan.notes)


def test_a_naming_plan_shows_qsysopr_messages_and_a_stale_collection_in_the_partitions_zone():
    receivers = chain(names(10, 4))
    stopped = cpi70e3((receivers[-1].attached_at + timedelta(minutes=10)).astimezone(UTC))
    snap = naming_snapshot(receivers).model_copy(update={"messages": [stopped]})
    plan = plan_naming(naming_request(), snap, snap.collected_at + timedelta(days=2))

    assert set(offsets_shown(shown(plan))) == {"+01:00"}
    assert any("QSYS/QSYSOPR has CPI70E3 of 2026-11-20 11:10:00 +01:00" in n for n in plan.notes), plan.notes
    assert plan.gaps[0].problem.startswith("collected 2026-11-20 11:30:00 +01:00, more than ")
