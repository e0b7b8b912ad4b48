"""Saves that leave the partition (issue #15): the save step copies each save file into the backup store, and a
receiver is deleted only against a save whose copy the store holds verified."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sqlalchemy import text

from mqjournal.backupstore import BackupStore, key_for
from mqjournal.ibmi.transfer import RECORD_BYTES
from mqjournal.policy import Policy
from mqjournal.sim.server import TransferFault
from tests.ibmi.executing import planned, receivers_on_host

ONLY_ON_THE_PARTITION = "has no verified copy in the backup store (it is only on the partition it saves)"


def store_file(executor, key: str) -> Path:
    return Path(executor.store.root) / key


def test_the_save_step_copies_each_new_save_file_into_the_store_verified(executor):
    to_save, _ = planned(executor)

    result = executor.save(to_save, save_library="QGPL")

    (save_file,) = result.save_files
    (key,) = result.copied
    assert result.not_copied == []
    assert executor.store.verify(key).ok
    (stored,) = executor.catalog.stored_objects("ibmi1", "TEST")
    assert (stored.save_file_path, stored.key, stored.run_id) == (save_file, key, "run1")
    assert [o.receiver for o in stored.objects] == result.saved
    assert all(
        executor.catalog.is_backed_up_off_partition("ibmi1", "QMTEST", r.name, r.attached_at)
        for r in receivers_on_host_now(executor, result.saved)
    )


def receivers_on_host_now(executor, names):
    live = executor.live()
    return [r for r in live.receivers if r.name in names]


def test_receivers_are_deleted_against_their_stored_copy(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    (key,) = executor.save(to_save, save_library="QGPL").copied
    live = executor.live()
    on_host = {r.name: r for r in live.receivers}

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == to_delete
    assert not set(to_delete) & set(receivers_on_host(sim_fleet))
    assert all(
        executor.catalog.off_partition_copies("ibmi1", "QMTEST", name, on_host[name].attached_at)[0].key == key
        for name in to_delete
    )


def test_without_a_store_nothing_is_copied_and_nothing_is_deleted(sim_fleet, executor):
    no_store = replace(executor, store=None)
    to_save, to_delete = planned(no_store)

    saved = no_store.save(to_save, save_library="QGPL")
    result = no_store.delete(to_delete, policy=Policy())

    (save_file,) = saved.save_files
    assert saved.saved and saved.copied == []
    assert saved.not_copied == [(save_file, saved.not_copied[0][1])]
    assert "no backup store is configured" in saved.not_copied[0][1]
    assert result.deleted == []
    assert result.kept[0] == (to_delete[0], f"no proven backup: {save_file} {ONLY_ON_THE_PARTITION}")
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_download_that_keeps_failing_leaves_the_receivers_and_the_next_save_step_copies_it(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("QGPL.LIB", "get", after_bytes=RECORD_BYTES, times=executor.session.retry.attempts)
    )

    first = executor.save(to_save, save_library="QGPL")
    kept = executor.delete(to_delete, policy=Policy())

    (save_file,) = first.save_files
    assert first.copied == [] and [path for path, _ in first.not_copied] == [save_file]
    assert "failed on all" in first.not_copied[0][1]
    assert executor.store.list_objects() == [] and executor.store.unrecorded_objects() == []
    assert kept.deleted == [] and ONLY_ON_THE_PARTITION in kept.kept[0][1]

    # The rerun saves nothing again (the save file on the host proves the save) and finishes the copy.
    again = executor.save(to_save, save_library="QGPL")
    assert again.saved == [] and set(again.already_saved) == set(first.saved)
    assert len(again.copied) == 1 and again.save_files == []
    assert executor.delete(to_delete, policy=Policy()).deleted == to_delete


def test_a_copy_verified_before_the_catalog_row_was_written_is_adopted_by_the_rerun(executor):
    to_save, _ = planned(executor)
    first = executor.save(to_save, save_library="QGPL")
    (stored,) = executor.catalog.stored_objects("ibmi1")
    # As if the worker died between the store's sidecar and the catalog's row: a fresh catalog keeps the saves only.
    with executor.catalog._session("drop the stored row", write=True) as session:
        session.execute(text("DELETE FROM stored_objects"))

    again = executor.save(to_save, save_library="QGPL")

    assert again.copied == [stored.key] and again.not_copied == []
    assert executor.catalog.stored_objects("ibmi1") == [stored]
    assert first.copied == [stored.key]


def test_a_save_file_removed_from_the_host_still_proves_the_save_through_its_stored_copy(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    (save_file,) = executor.save(to_save, save_library="QGPL").save_files
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == to_delete


def test_a_stored_copy_gone_from_the_store_proves_nothing(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (save_file,), (key,) = saved.save_files, saved.copied
    store_file(executor, key).unlink()

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert result.kept[0] == (to_delete[0], f"no proven backup: {save_file} {ONLY_ON_THE_PARTITION}")
    assert set(to_delete) <= set(receivers_on_host(sim_fleet))


def test_a_stored_copy_cut_short_in_the_store_proves_nothing_even_with_the_host_copy_gone(sim_fleet, executor):
    to_save, to_delete = planned(executor)
    saved = executor.save(to_save, save_library="QGPL")
    (save_file,), (key,) = saved.save_files, saved.copied
    path = store_file(executor, key)
    path.write_bytes(path.read_bytes()[:RECORD_BYTES])
    assert sim_fleet.connect().cl(f"DLTF FILE({save_file})")[0] == 0

    result = executor.delete(to_delete, policy=Policy())

    assert result.deleted == []
    assert result.kept[0] == (
        to_delete[0],
        f"no proven backup: {save_file} no longer exists and has no verified copy in the backup store",
    )


def test_a_copy_in_another_store_does_not_count(tmp_path, sim_fleet, executor):
    to_save, to_delete = planned(executor)
    executor.save(to_save, save_library="QGPL")
    elsewhere = replace(executor, store=BackupStore(tmp_path / "another-store"))

    result = elsewhere.delete(to_delete, policy=Policy())

    assert result.deleted == [] and ONLY_ON_THE_PARTITION in result.kept[0][1]


def test_the_copy_is_filed_under_the_run_that_made_the_save(executor):
    to_save, _ = planned(executor)
    first = replace(executor, store=None).save(to_save, save_library="QGPL")
    later = replace(executor, run_id="run2")

    again = later.save(to_save, save_library="QGPL")

    (stored,) = executor.catalog.stored_objects("ibmi1")
    assert stored.run_id == "run1" and again.copied == [stored.key]
    assert stored.key == key_for(stored) and "/run1/" in stored.key
    assert first.save_files == [stored.save_file_path]


def test_a_copy_that_failed_leaves_the_saved_receivers_unproven_by_name(sim_fleet, executor):
    to_save, _ = planned(executor)
    sim_fleet.service.faults["ibmi1"].transfers.append(
        TransferFault("QGPL.LIB", "get", after_bytes=RECORD_BYTES, times=executor.session.retry.attempts)
    )

    result = executor.save(to_save, save_library="QGPL")

    (save_file,) = result.save_files
    assert result.saved and [name for name, _ in result.unproven] == result.saved
    assert all(
        why.startswith(f"its save file {save_file} was not copied into the backup store: ")
        for _, why in result.unproven
    )


def test_a_save_copied_into_the_store_leaves_nothing_unproven(executor):
    to_save, _ = planned(executor)

    result = executor.save(to_save, save_library="QGPL")

    assert result.saved and result.copied and result.unproven == []


def test_a_delete_refused_for_lack_of_a_copy_names_the_receiver_unproven_and_not_those_behind_it(sim_fleet, executor):
    no_store = replace(executor, store=None)
    to_save, to_delete = planned(no_store)
    no_store.save(to_save, save_library="QGPL")

    result = no_store.delete(to_delete, policy=Policy())

    assert result.deleted == [] and result.unproven[0] == result.kept[0]
    assert result.unproven[0][0] == to_delete[0] and ONLY_ON_THE_PARTITION in result.unproven[0][1]
    # The receivers behind it in the chain are kept for its sake, not for their own lack of proof.
    assert [name for name, _ in result.unproven] == [to_delete[0]]
