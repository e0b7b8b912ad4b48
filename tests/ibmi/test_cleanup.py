"""The cleanup step (issue #15): a save file leaves the partition `keep_on_host_days` after its copy in the backup store
was verified, by the partition's clock, and never while the store's copy does not verify."""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, replace
from datetime import timedelta
from hashlib import sha256
from pathlib import Path

import pytest
from sqlalchemy import text

from mqjournal.ibmi.cleanup import HostCleanup
from mqjournal.ibmi.readings import cl_messages
from mqjournal.policy import Policy
from mqjournal.sim.model import CommandFault
from tests.ibmi.executing import planned

# A quarter of an hour: the simulator's clock moves an hour in a test, not a week of workload.
KEEP = Policy(keep_on_host_days=0.01)


@pytest.fixture
def saved(executor):
    to_save, to_delete = planned(executor)
    result = executor.save(to_save, save_library="QGPL")
    (path,), (key,) = result.save_files, result.copied
    return path, key, to_delete


def cleanup_of(executor, run_id: str = "cleanup1") -> HostCleanup:
    """The cleanup step on the executor's queue manager, as the DAG builds it: the same context, its own run."""
    shared = {f.name: getattr(executor, f.name) for f in fields(HostCleanup)}
    return HostCleanup(**(shared | {"run_id": run_id}))


def on_host(sim_fleet, path: str) -> bool:
    return path in sim_fleet.host().partition.save_files


def test_a_save_file_within_keep_on_host_days_stays(sim_fleet, executor, saved):
    path, _, _ = saved

    result = cleanup_of(executor).clean_up(Policy())

    assert result.not_due == [path] and result.removed == [] and on_host(sim_fleet, path)


def test_after_keep_on_host_days_on_the_partitions_clock_the_save_file_leaves_the_host(sim_fleet, executor, saved):
    path, key, to_delete = saved
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.removed == [path] and result.kept == [] and not on_host(sim_fleet, path)
    assert executor.catalog.removed_from_host("ibmi1") == {path}
    (operation,) = [op for op in executor.catalog.operations("ibmi1") if op.kind == "clean_up"]
    assert (operation.state, operation.save_file_library, operation.save_file) == ("done", *path.split("/"))
    assert key in (operation.detail or "")
    # The receivers are still deleted against the store's copy, and the save stays offered for a restore.
    assert executor.delete(to_delete, policy=Policy()).deleted == to_delete
    assert executor.store.verify(key).ok


def test_a_second_cleanup_finds_nothing_more_to_do(sim_fleet, executor, saved):
    sim_fleet.host().advance(timedelta(hours=1))
    cleanup_of(executor).clean_up(KEEP)

    again = cleanup_of(executor, "cleanup2").clean_up(KEEP)

    assert (again.removed, again.kept, again.not_due, again.already_gone) == ([], [], [], [])


def test_a_stored_copy_that_no_longer_verifies_keeps_the_save_file_on_the_host(sim_fleet, executor, saved):
    path, key, _ = saved
    stored = Path(executor.store.root) / key
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.removed == [] and on_host(sim_fleet, path)
    ((kept, why),) = result.kept
    assert kept == path and "does not verify" in why and "SHA-256" in why


def a_copy_of_other_bytes(executor, key: str) -> None:
    """The stored copy replaced by bytes of the save file's length that are not the save file's, its sidecar and
    catalog row rewritten to match them: a copy that verifies in the store, as a corrupted download did when only
    its length was compared with the host's."""
    stored = Path(executor.store.root) / key
    data = bytearray(stored.read_bytes())
    data[len(data) // 2] ^= 0x01
    stored.write_bytes(bytes(data))
    sha = hashlib.sha256(data).hexdigest()
    sidecar = Path(f"{stored}.json")
    sidecar.write_text(json.dumps(json.loads(sidecar.read_text()) | {"sha256": sha, "host_sha256": sha}))
    with executor.catalog._session("forge the copy", write=True) as session:
        session.execute(
            text("UPDATE stored_objects SET sha256 = :sha, host_sha256 = :sha WHERE key = :key"),
            {"sha": sha, "key": key},
        )


def test_a_copy_whose_bytes_are_not_the_hosts_keeps_the_save_file_on_the_host(sim_fleet, executor, saved):
    path, key, _ = saved
    a_copy_of_other_bytes(executor, key)
    assert executor.store.verify(key).ok  # the store alone cannot tell
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.removed == [] and on_host(sim_fleet, path)
    ((kept, why),) = result.kept
    assert kept == path and "the host's SHA-256 of it is" in why


def test_a_copy_the_host_never_vouched_for_keeps_the_save_file_on_the_host(sim_fleet, executor, saved):
    path, key, _ = saved
    with executor.catalog._session("forget the host's digest", write=True) as session:
        session.execute(text("UPDATE stored_objects SET host_sha256 = NULL WHERE key = :key"), {"key": key})
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.removed == [] and on_host(sim_fleet, path)
    assert "never vouched for" in result.kept[0][1]


def test_a_failed_dltf_keeps_the_save_file_and_the_next_cleanup_removes_it(sim_fleet, executor, saved):
    path, _, _ = saved
    library, name = path.split("/")
    with sim_fleet.host().state() as partition:
        partition.faults.commands.append(CommandFault(pattern="DLTF FILE", msg_id="CPF3202", tokens=[name, library]))
    sim_fleet.host().advance(timedelta(hours=1))

    first = cleanup_of(executor).clean_up(KEEP)
    second = cleanup_of(executor, "cleanup2").clean_up(KEEP)

    assert first.removed == [] and first.kept[0][0] == path and "CPF3202" in first.kept[0][1]
    assert second.removed == [path] and not on_host(sim_fleet, path)
    states = [op.state for op in executor.catalog.operations("ibmi1") if op.kind == "clean_up"]
    assert states == ["failed", "done"]


def test_a_save_file_someone_else_deleted_is_recorded_as_gone(sim_fleet, executor, saved):
    path, _, _ = saved
    code, _, err = sim_fleet.connect().cl(f"DLTF FILE({path})")
    assert code == 0, cl_messages("", err)
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.already_gone == [path] and executor.catalog.removed_from_host("ibmi1") == {path}


def test_without_a_store_nothing_leaves_the_host(sim_fleet, executor, saved):
    path, _, _ = saved
    sim_fleet.host().advance(timedelta(hours=1))

    result = replace(cleanup_of(executor), store=None).clean_up(KEEP)

    assert (result.removed, result.not_due) == ([], []) and on_host(sim_fleet, path)


def test_a_discarded_save_file_is_not_the_cleanups_to_delete(sim_fleet, executor, saved):
    path, _, _ = saved
    executor.catalog.record_discarded("ibmi1", *path.split("/"), run_id="expiry1")
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert (result.removed, result.kept, result.not_due) == ([], [], []) and on_host(sim_fleet, path)


def test_a_stored_copy_replaced_with_its_sidecar_keeps_the_save_file_on_the_host(sim_fleet, executor, saved):
    # Zeros of the same size, the sidecar rewritten to their SHA-256: the sidecar agrees, the catalog's digest not.
    path, key, _ = saved
    stored = Path(executor.store.root) / key
    zeros = bytes(stored.stat().st_size)
    stored.write_bytes(zeros)
    sidecar = Path(f"{stored}.json")
    sidecar.write_text(
        sidecar.read_text().replace(executor.catalog.stored_objects("ibmi1")[0].sha256, sha256(zeros).hexdigest())
    )
    sim_fleet.host().advance(timedelta(hours=1))

    result = cleanup_of(executor).clean_up(KEEP)

    assert result.removed == [] and on_host(sim_fleet, path)
    ((kept, why),) = result.kept
    assert kept == path and "does not verify" in why


def test_a_library_saves_two_files_leave_the_host_by_the_partitions_clock(sim_fleet, executor):
    """SAVLIB's save file and its IFS part (SAV of the queue manager's directory): the IFS part's copy names no
    receiver, so its age is the library save's, on the partition's clock, as for the library's own file."""
    from mqjournal.recovery.library_save import save_library

    result = save_library(
        executor.session,
        executor.target,
        host=executor.host,
        tz=executor.tz,
        catalog=executor.catalog,
        save_library="QGPL",
        run_id="lib1",
        store=executor.store,
        routes=executor.routes,
    )
    (record,) = executor.catalog.library_saves(executor.host, executor.target.library)
    both = sorted([record.save_file_path, record.directory_save_file_path])
    assert result.stored is not None and all(on_host(sim_fleet, p) for p in both)
    sim_fleet.host().advance(timedelta(hours=1))

    cleaned = cleanup_of(executor).clean_up(KEEP)

    assert sorted(cleaned.removed) == both and cleaned.kept == [] and cleaned.not_due == []
    assert not any(on_host(sim_fleet, p) for p in both)
