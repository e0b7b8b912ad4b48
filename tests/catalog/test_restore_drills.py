"""Restore drills in the catalog (migration 0006_restore_drills): each drill kept per copy, a pass on a claimed copy
proves it (`restore_drill`), a failure leaves the copy proving nothing until a later drill passes."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import PROVING, Catalog, DrillRecord, StoredObject
from tests.backupstore.saves import SAVE_FILE_BYTES, receiver_saves, save_file_copy

AT = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


def _catalog_with_a_copy(tmp_path, proof="copied") -> tuple[Catalog, StoredObject]:
    catalog = Catalog(f"sqlite:///{tmp_path / 'catalog.db'}")
    stored = BackupStore(tmp_path / "backups").put(
        io.BytesIO(SAVE_FILE_BYTES), save_file_copy(receiver_saves("MQJ0001", 1, 3))
    )
    catalog.record_stored(stored, proof=proof)
    return catalog, stored


def _drill(stored: StoredObject, outcome: str, run_id: str = "drill1", at: datetime = AT, problem=None) -> DrillRecord:
    return DrillRecord(
        host=stored.host,
        qmgr=stored.qmgr,
        store_url=stored.store_url,
        key=stored.key,
        save_file_library=stored.save_file_library,
        save_file=stored.save_file,
        run_id=run_id,
        drilled_at=at,
        outcome=outcome,
        scratch="QGPL/DRL0000001",
        problem=problem,
    )


def test_restore_drill_is_a_proof_state():
    assert "restore_drill" in PROVING


def test_a_passed_drill_proves_a_claimed_copy(tmp_path):
    catalog, stored = _catalog_with_a_copy(tmp_path, proof="claimed_by_sidecar")
    assert catalog.stored_objects(stored.host) == []

    catalog.record_drill(_drill(stored, "passed"))

    (copy,) = catalog.stored_copies(stored.store_url)
    assert (copy.proof, copy.proves, copy.checked_at) == ("restore_drill", True, AT)
    assert catalog.stored_objects(stored.host) == [stored]
    assert [(d.key, d.outcome, d.run_id) for d in catalog.drills()] == [(stored.key, "passed", "drill1")]


def test_a_passed_drill_keeps_a_copys_own_proof(tmp_path):
    catalog, stored = _catalog_with_a_copy(tmp_path)
    catalog.record_drill(_drill(stored, "passed"))
    (copy,) = catalog.stored_copies(stored.store_url)
    assert copy.proof == "copied" and copy.proves


def test_a_failed_drill_leaves_the_copy_proving_nothing_until_a_drill_passes_a_scrub_does_not_clear_it(tmp_path):
    catalog, stored = _catalog_with_a_copy(tmp_path)

    catalog.record_drill(_drill(stored, "failed", problem="does not list QMTEST/AMQA000002"))

    (copy,) = catalog.stored_copies(stored.store_url)
    assert not copy.proves and copy.problem == "restore drill drill1: does not list QMTEST/AMQA000002"
    catalog.record_check(stored.store_url, stored.key, at=AT + timedelta(days=1), problem=None)  # bytes match
    (copy,) = catalog.stored_copies(stored.store_url)
    assert not copy.proves and copy.checked_at == AT + timedelta(days=1)

    catalog.record_drill(_drill(stored, "passed", run_id="drill2", at=AT + timedelta(days=7)))
    (copy,) = catalog.stored_copies(stored.store_url)
    assert copy.proves and copy.problem is None and copy.proof == "copied"


def test_a_drill_that_could_not_be_made_changes_nothing_about_the_copy(tmp_path):
    catalog, stored = _catalog_with_a_copy(tmp_path, proof="claimed_by_sidecar")
    catalog.record_drill(_drill(stored, "error", problem="no session to prod1"))
    (copy,) = catalog.stored_copies(stored.store_url)
    assert copy.proof == "claimed_by_sidecar" and copy.problem is None and copy.checked_at is None
    assert catalog.drill_count() == 1


def test_drills_are_read_oldest_first_per_host_and_queue_manager(tmp_path):
    catalog, stored = _catalog_with_a_copy(tmp_path)
    catalog.record_drill(_drill(stored, "passed", run_id="later", at=AT + timedelta(days=1)))
    catalog.record_drill(_drill(stored, "error", run_id="earlier", at=AT))
    assert [d.run_id for d in catalog.drills(host=stored.host, qmgr=stored.qmgr)] == ["earlier", "later"]
    assert catalog.drills(host="another") == [] and catalog.drills(qmgr="OTHER") == []
