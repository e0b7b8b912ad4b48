"""Backup expiry plans: which save files no restore can need, from snapshots and catalog records built by hand.

The scene: AMQA000001..AMQA000010, attached one hour apart from T0 (AMQA00000i attached at T0+(i-1)h, detached an
hour later), AMQA000010 attached. Library saves LS1-LS3, each needing the receivers from the one it names.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mqjournal.catalog import CatalogedReceiver, LibrarySaveRecord, SaveRecord
from mqjournal.policy import Policy
from mqjournal.recovery.expiry import plan_expiry
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action, RecoveryPlan, Request
from mqjournal.recovery.restore import RecoveryRefused
from mqjournal.sizefmt import size
from mqjournal.snapshot import Receiver, RecoveryPoint
from tests.plan.builders import HOUR, KB, T0, chain, names, snapshot

MIN = timedelta(minutes=1)
RECEIVERS = chain(names(1, 10))
BY_NAME = {r.name: r for r in RECEIVERS}
NOW = T0 + 10 * HOUR


def rcv(n: int) -> Receiver:
    return BY_NAME[f"AMQA{n:06d}"]


def request(kind: RecoveryKind = RecoveryKind.EXPIRY, host: str = "ibmi1") -> Request:
    return Request(host=host, qmgr="TEST", kind=kind)


def live(oldest: str = "AMQA000008", **kw):
    """The live host: every receiver still on it, AMQJRNINF (and AMQ7460/7462) naming `oldest`."""
    return snapshot(RECEIVERS, oldest=oldest, collected_at=NOW - 10 * MIN, **kw)


def save(n: int, file: str, saved_at: datetime, *, host: str = "ibmi1", library: str = "MQSAVES") -> SaveRecord:
    r = rcv(n)
    return SaveRecord(
        host=host,
        qmgr="TEST",
        qmgr_library="QMTEST",
        receiver=r.name,
        library=r.library,
        attached_at=r.attached_at,
        detached_at=r.detached_at,
        first_sequence=r.first_sequence,
        last_sequence=r.last_sequence,
        previous=r.previous,
        next=r.next,
        size_bytes=r.size_bytes,
        save_file_library=library,
        save_file=file,
        saved_at=saved_at,
        verified_at=saved_at,
        run_id="r",
    )


def catalog(*saves: SaveRecord) -> list[CatalogedReceiver]:
    """Catalog.receivers(): one entry per receiver incarnation, its saves newest first."""
    grouped: dict[tuple, list[SaveRecord]] = {}
    for s in saves:
        grouped.setdefault((s.library, s.receiver, s.attached_at), []).append(s)
    out = []
    for (library, name, attached_at), group in grouped.items():
        group.sort(key=lambda s: s.saved_at, reverse=True)
        last = group[0]
        out.append(
            CatalogedReceiver(
                name=name,
                library=library,
                attached_at=attached_at,
                detached_at=last.detached_at,
                first_sequence=last.first_sequence,
                last_sequence=last.last_sequence,
                previous=last.previous,
                next=last.next,
                size_bytes=last.size_bytes,
                saves=tuple(group),
            )
        )
    return sorted(out, key=lambda r: r.attached_at)


def library_save(file: str, saved_at: datetime, needs: int, *, host: str = "ibmi1") -> LibrarySaveRecord:
    """A library save whose AMQJRNINF named AMQA00000`needs` (entry one minute after its attach)."""
    return LibrarySaveRecord(
        host=host,
        qmgr="TEST",
        qmgr_library="QMTEST",
        journal="AMQAJRN",
        save_file_library="MQLIBSAV",
        save_file=file,
        saved_at=saved_at,
        verified_at=saved_at,
        attached_receiver="AMQA000010",
        attached_at=T0,
        oldest_needed_receiver=rcv(needs).name,
        oldest_needed_at=rcv(needs).attached_at + MIN,
        run_id="r",
    )


# Library saves: LS1 needs AMQA000002 on, LS2 AMQA000004 on, LS3 AMQA000006 on. Each library save file also holds
# the receivers in the library at the time, recorded as receiver saves of the same file.
LS1 = library_save("LS1", T0 + 2 * HOUR + 30 * MIN, needs=2)
LS2 = library_save("LS2", T0 + 4 * HOUR + 30 * MIN, needs=4)
LS3 = library_save("LS3", T0 + 6 * HOUR + 30 * MIN, needs=6)
LIBRARY_SAVES = [LS3, LS2, LS1]  # newest first, as the catalog returns them


def lib_receiver_saves(ls: LibrarySaveRecord, *ns: int) -> list[SaveRecord]:
    return [save(n, ls.save_file, ls.saved_at, library=ls.save_file_library) for n in ns]


def scene() -> list[CatalogedReceiver]:
    """Receiver save files F1 = {1, 2}, F2 = {3, 4}, F3 = {5, 6, 7}; library save files with their receivers."""
    return catalog(
        save(1, "F1", T0 + 2 * HOUR + 5 * MIN),
        save(2, "F1", T0 + 2 * HOUR + 5 * MIN),
        save(3, "F2", T0 + 4 * HOUR + 5 * MIN),
        save(4, "F2", T0 + 4 * HOUR + 5 * MIN),
        *(save(n, "F3", T0 + 7 * HOUR + 5 * MIN) for n in (5, 6, 7)),
        *lib_receiver_saves(LS1, 1, 2),
        *lib_receiver_saves(LS2, 3),
        *lib_receiver_saves(LS3, 5),
    )


def plan_for(snap=None, cataloged=None, library_saves=None, *, now=NOW, **policy) -> RecoveryPlan:
    return plan_expiry(
        request(),
        live() if snap is None else snap,
        scene() if cataloged is None else cataloged,
        LIBRARY_SAVES if library_saves is None else library_saves,
        Policy(**policy),
        now,
    )


def deleted(plan: RecoveryPlan) -> list[str]:
    assert all(s.action is Action.DELETE_SAVE_FILE for s in plan.steps)
    return [f"{s.args['library']}/{s.args['name']}" for s in plan.steps]


# --- what goes, what stays -------------------------------------------------------------------------------------


def test_keeps_what_the_two_newest_library_saves_need_and_discards_the_rest_oldest_first():
    plan = plan_for()
    # cutoff: LS2 (the older kept one) needs AMQA000004 on; the live host needs AMQA000008 on.
    assert deleted(plan) == ["MQSAVES/F1", "MQLIBSAV/LS1"]
    assert [s.text for s in plan.steps] == ["DLTF FILE(MQSAVES/F1)", "DLTF FILE(MQLIBSAV/LS1)"]
    assert plan.gaps == [] and plan.executable
    assert plan.request.kind is RecoveryKind.EXPIRY
    assert "AMQA000001, AMQA000002" in plan.steps[0].why
    assert "library save of" in plan.steps[1].why


def test_a_library_saves_ifs_part_is_kept_and_discarded_with_it():
    """SAV of the queue manager's directory beside each SAVLIB: one restore, so its save file stays while its library
    save is one the policy keeps, and goes with it."""
    with_ifs = [ls.model_copy(update={"directory_save_file": f"{ls.save_file}D"}) for ls in LIBRARY_SAVES]
    plan = plan_for(library_saves=with_ifs)
    assert deleted(plan) == ["MQSAVES/F1", "MQLIBSAV/LS1", "MQLIBSAV/LS1D"]
    assert "library save of" in plan.steps[2].why


def test_a_save_file_holding_a_needed_receiver_is_kept_even_with_discardable_saves_in_it():
    plan = plan_for()
    assert "MQSAVES/F2" not in deleted(plan)  # AMQA000003 may go, AMQA000004 is needed by LS2
    (note,) = [n for n in plan.notes if n.startswith("MQSAVES/F2")]
    assert "AMQA000004" in note and "AMQA000003" not in note


def test_totals_count_files_and_receiver_bytes():
    plan = plan_for()
    total = [n for n in plan.notes if n.startswith("Discard")]
    assert total == [
        f"Discard 2 of 6 save file(s): 4 receiver save(s) of {size(4 * 1000 * KB)} and 1 library save(s)"
        " (their size is not recorded)."
    ]


def test_keeping_one_library_save_moves_the_cutoff_to_what_it_needs():
    plan = plan_for(keep_library_saves=1)
    # LS3 needs AMQA000006 on: F1, F2 (1-4) and LS1, LS2 (receivers 1-3) go; F3 holds 6 and 7, LS3 is kept.
    assert deleted(plan) == ["MQSAVES/F1", "MQLIBSAV/LS1", "MQSAVES/F2", "MQLIBSAV/LS2"]


def test_keeping_every_library_save_keeps_what_the_oldest_needs():
    plan = plan_for(keep_library_saves=3)
    # LS1 needs AMQA000002 on: only AMQA000001 is needed by nothing, and it shares F1 and LS1 with AMQA000002.
    assert deleted(plan) == []
    assert "Nothing to discard." in plan.notes


def test_library_saves_beyond_the_kept_ones_go_when_nothing_in_their_file_is_needed():
    plan = plan_for(keep_library_saves=2)
    assert "MQLIBSAV/LS1" in deleted(plan)
    assert "MQLIBSAV/LS2" not in deleted(plan) and "MQLIBSAV/LS3" not in deleted(plan)


def test_the_live_host_needing_older_entries_than_the_library_saves_keeps_them():
    plan = plan_for(live(oldest="AMQA000002"), keep_library_saves=1)
    assert deleted(plan) == []  # everything from AMQA000002 on is needed, and each file holds one of them
    assert any("AMQA000002" in n and "only save" not in n for n in plan.notes if n.startswith("MQSAVES/F1"))


def test_an_older_media_recovery_point_counts_even_when_amqjrninf_is_newer():
    snap = live().model_copy(
        update={"media_recovery": RecoveryPoint(receiver="AMQA000001", at=rcv(1).attached_at + MIN)}
    )
    plan = plan_for(snap)
    assert deleted(plan) == []
    assert any("AMQ7462" in n for n in plan.notes)


def test_the_only_save_of_a_needed_receiver_keeps_a_library_save_beyond_the_kept_ones():
    # AMQA000004 is needed (LS2 is kept) and saved only inside LS1's file, which is beyond the two newest.
    only = catalog(save(1, "F1", T0 + 2 * HOUR), save(4, "LS1", LS1.saved_at, library="MQLIBSAV"))
    plan = plan_for(cataloged=only)
    assert deleted(plan) == ["MQSAVES/F1"]
    (note,) = [n for n in plan.notes if n.startswith("MQLIBSAV/LS1")]
    assert "the only save of AMQA000004" in note


def test_a_second_copy_of_a_needed_receiver_is_not_discarded_either():
    copies = catalog(save(5, "F5A", T0 + 5 * HOUR), save(5, "F5B", T0 + 6 * HOUR))
    plan = plan_for(cataloged=copies)
    assert [d for d in deleted(plan) if d.startswith("MQSAVES/")] == []


def test_a_receiver_detached_exactly_at_the_needed_entry_is_needed():
    # LS2 needs the entry of T0+3h+1m; a receiver detached at that very instant may hold it.
    r3 = rcv(3)
    edge = save(3, "FE", T0 + 5 * HOUR).model_copy(update={"detached_at": LS2.oldest_needed_at})
    before = save(3, "FB", T0 + 5 * HOUR).model_copy(
        update={"detached_at": LS2.oldest_needed_at - timedelta(milliseconds=1), "attached_at": r3.attached_at + MIN}
    )
    plan = plan_for(cataloged=catalog(edge, before))
    assert deleted(plan) == ["MQLIBSAV/LS1", "MQSAVES/FB"]  # oldest first: LS1 was written before FB


def test_a_receiver_without_a_detach_time_counts_as_needed():
    undetached = save(1, "FU", T0 + 2 * HOUR).model_copy(update={"detached_at": None})
    assert "MQSAVES/FU" not in deleted(plan_for(cataloged=catalog(undetached)))


def test_backup_retention_keeps_young_save_files():
    # F1's newest save is 7h55m old at NOW, LS1 7h30m.
    assert deleted(plan_for(backup_retention_days=7.7 / 24)) == ["MQSAVES/F1"]
    assert deleted(plan_for(backup_retention_days=1)) == []
    kept = plan_for(backup_retention_days=1)
    assert any("backup retention" in n for n in kept.notes)


def test_saves_of_another_host_are_ignored():
    other = catalog(save(1, "F1", T0 + 2 * HOUR, host="ibmi2"), save(2, "F1", T0 + 2 * HOUR, host="ibmi2"))
    mine = catalog(save(1, "F9", T0 + 2 * HOUR))
    plan = plan_for(cataloged=mine + other, library_saves=[*LIBRARY_SAVES, library_save("LSX", T0, 1, host="ibmi2")])
    assert deleted(plan) == ["MQSAVES/F9", "MQLIBSAV/LS1"]


# --- nothing is discarded ---------------------------------------------------------------------------------------


def nothing(plan: RecoveryPlan) -> None:
    assert plan.steps == [] and plan.gaps and not plan.executable
    assert "Nothing is discarded." in plan.notes


def test_without_a_library_save_nothing_expires():
    plan = plan_for(library_saves=[])
    nothing(plan)
    (gap,) = plan.gaps
    assert "library save" in gap.obj and "library save" in gap.action


def test_without_a_snapshot_nothing_expires():
    plan = plan_expiry(request(), None, scene(), LIBRARY_SAVES, Policy(), NOW)
    nothing(plan)
    assert "NO_SNAPSHOT" in plan.gaps[0].problem
    assert plan.qmgr_library == "QMTEST" and plan.journal == "AMQAJRN"


@pytest.mark.parametrize(
    ("snap", "reason"),
    [
        pytest.param(live(amqjrninf=None), "AMQJRNINF_MISSING", id="amqjrninf-missing"),
        pytest.param(live(amqjrninf="garbage"), "AMQJRNINF_MALFORMED", id="amqjrninf-malformed"),
        pytest.param(
            live(oldest="AMQA000008", needed_at=T0 + 2 * HOUR),
            "AMQJRNINF_NAME_TIME_DISAGREE",
            id="name-and-time-disagree",
        ),
        pytest.param(
            snapshot(RECEIVERS, oldest="AMQA000008", collected_at=NOW - 3 * 24 * HOUR), "SNAPSHOT_STALE", id="stale"
        ),
        pytest.param(
            snapshot([r for r in RECEIVERS if r.name != "AMQA000009"], oldest="AMQA000008", collected_at=NOW - HOUR),
            "CHAIN_BROKEN",
            id="chain-broken",
        ),
    ],
)
def test_a_blocked_snapshot_discards_nothing(snap, reason):
    plan = plan_for(snap)
    nothing(plan)
    assert reason in plan.gaps[0].problem


# --- refusals --------------------------------------------------------------------------------------------------


def test_another_kind_of_request_is_refused():
    with pytest.raises(RecoveryRefused):
        plan_expiry(request(RecoveryKind.NAMING), live(), scene(), LIBRARY_SAVES, Policy(), NOW)


def test_a_snapshot_of_another_host_is_refused():
    with pytest.raises(RecoveryRefused, match="ibmi1"):
        plan_expiry(request(host="ibmi2"), live(), scene(), LIBRARY_SAVES, Policy(), NOW)


def test_the_policy_keeps_at_least_one_library_save_and_defaults_to_two():
    assert Policy().keep_library_saves == 2 and Policy().backup_retention_days == 0
    with pytest.raises(ValueError):
        Policy(keep_library_saves=0)


def test_the_plan_round_trips_through_json():
    plan = plan_for()
    assert RecoveryPlan.model_validate_json(plan.model_dump_json()) == plan
    assert "DLTF FILE(MQSAVES/F1)" in plan.markdown()
