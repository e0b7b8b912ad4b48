"""Restore plans that bring save files back from the backup store, as pure functions of their inputs: where the save
file is created again, which copy is uploaded, and what a plan made again for an approved one keeps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mqjournal.catalog import SavedReceiver, StoredObject
from mqjournal.recovery.fromstore import StoreView
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.plan import Action
from mqjournal.recovery.restore import plan_restore
from tests.recovery.test_restore_plans import HOUR, LIVE, T0, actions, amq7432, cataloged, inputs, name, snapshot

ORIGIN = "QGPL/MQJSAVE0"
FETCH = [Action.CREATE_SAVE_FILE, Action.UPLOAD_SAVE_FILE, Action.CHECK_SAVE_FILE]


def copy(run_id: str = "maint", created: datetime = datetime(2026, 11, 2, 12, tzinfo=UTC)) -> StoredObject:
    return StoredObject(
        host="ibmi1",
        qmgr="TEST",
        qmgr_library="QMTEST",
        save_file_library="QGPL",
        save_file="MQJSAVE0",
        run_id=run_id,
        objects=tuple(SavedReceiver(receiver=name(i), library="QMTEST") for i in (2, 3)),
        store_url="file:///backups",
        key=f"ibmi1/TEST/{run_id}/QGPL.MQJSAVE0.savf",
        size_bytes=1056,
        sha256="0" * 64,
        created_at=created,
        verified_at=created,
    )


def startup(store: StoreView, on_host: set[str] | None = None):
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    return plan_restore(
        inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3, 4), save_files_on_host=on_host or set(), store=store)
    )


def view(*copies: StoredObject, **fields) -> StoreView:
    verified = frozenset(c.key for c in copies) - set(fields.get("mismatches", {}))
    return StoreView(url="file:///backups", copies={ORIGIN: copies}, verified=verified, **fields)


def test_a_save_file_gone_from_the_host_is_created_again_under_its_own_name_and_uploaded():
    plan = startup(view(copy()))
    assert plan.gaps == []
    assert actions(plan)[:5] == [*FETCH, Action.RESTORE_RECEIVER, Action.RESTORE_RECEIVER]
    assert plan.steps[1].args == {
        "origin": ORIGIN,
        "key": "ibmi1/TEST/maint/QGPL.MQJSAVE0.savf",
        "library": "QGPL",
        "name": "MQJSAVE0",
    }
    assert plan.steps[2].args["objects"] == f"QMTEST/{name(2)} QMTEST/{name(3)}"
    assert all(s.args["save_file"] == "MQJSAVE0" for s in plan.steps if s.action is Action.RESTORE_RECEIVER)


def test_a_save_file_whose_library_is_gone_comes_back_in_the_save_library_and_the_plan_says_so():
    plan = startup(view(copy(), missing_libraries=frozenset({"QGPL"}), save_library="MQBACK"))
    assert plan.steps[0].text.startswith("CRTSAVF FILE(MQBACK/MQJSAVE0)")
    assert {s.args["save_library"] for s in plan.steps if s.action is Action.RESTORE_RECEIVER} == {"MQBACK"}
    assert any("Save library QGPL is not on the host" in n and "MQBACK/MQJSAVE0" in n for n in plan.notes)


def test_a_name_taken_in_the_save_library_gives_the_first_free_name_of_the_day():
    plan = startup(
        view(copy(), missing_libraries=frozenset({"QGPL"}), save_library="MQBACK"), on_host={"MQBACK/MQJSAVE0"}
    )
    target = plan.steps[0].args["name"]
    assert target != "MQJSAVE0" and target.startswith("TEST")  # names.save_file_names of QMTEST and the day
    assert plan.steps[1].args["name"] == target


def test_a_copy_that_differs_from_its_sidecar_is_passed_over_for_an_older_one_that_matches():
    bad, good = copy("maint2"), copy("maint1", datetime(2026, 11, 2, 11, tzinfo=UTC))
    plan = startup(view(bad, good, mismatches={bad.key: "mismatch: size 1000 bytes where the sidecar records 1056"}))
    assert plan.gaps == []
    assert plan.steps[1].args["key"] == good.key
    # The damaged copy is named all the same: the store's damage must be seen, not only worked around.
    assert any(f"not from {bad.key}: mismatch: size 1000 bytes" in note for note in plan.notes)


def test_copies_that_all_differ_are_a_gap_naming_each_key_and_what_differs():
    bad = copy()
    plan = startup(view(bad, mismatches={bad.key: "mismatch: size 1000 bytes where the sidecar records 1056"}))
    assert plan.gaps and not any(s.action in FETCH for s in plan.steps)
    assert f"{bad.key}: mismatch: size 1000 bytes" in plan.gaps[0].problem


def test_without_a_store_a_save_file_gone_from_the_host_stays_a_gap():
    snap = snapshot(LIVE, [amq7432(T0 + 2 * HOUR + timedelta(minutes=30))])
    plan = plan_restore(inputs(RecoveryKind.STARTUP, snap, cataloged(0, 1, 2, 3, 4), save_files_on_host=set()))
    assert plan.gaps and "no backup store was given" in plan.gaps[0].problem


def test_made_again_for_an_approved_plan_a_target_that_lists_everything_is_read_as_it_is():
    store = view(
        copy(),
        targets={ORIGIN: ORIGIN},
        target_contents={ORIGIN: frozenset({("QMTEST", name(2)), ("QMTEST", name(3))})},
    )
    plan = startup(store, on_host={ORIGIN})
    assert actions(plan)[:2] == [Action.RESTORE_RECEIVER, Action.RESTORE_RECEIVER]


def test_made_again_for_an_approved_plan_a_target_an_upload_left_incomplete_is_deleted_and_created_again():
    store = view(copy(), targets={ORIGIN: ORIGIN}, target_contents={ORIGIN: None})
    plan = startup(store, on_host={ORIGIN})
    assert actions(plan)[:4] == [Action.DELETE_PARTIAL_UPLOAD, *FETCH]
    assert plan.steps[0].text == f"DLTF FILE({ORIGIN})"
