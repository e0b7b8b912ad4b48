"""The save step's copy off the partition under faults: the SFTP download and the backup store failing.

The fault matrix (test_fault_matrix.py) faults command lines; a transfer is not one, so its faults are here. Each
case runs the save step under the fault, checks that nothing was lost and that no receiver became deletable without a
verified copy in the store, then reruns the step and a whole maintenance run, and checks the invariants
(tests/safety/invariants.py, including "every deletion has a verified copy off the partition").
"""

from __future__ import annotations

import shutil
from dataclasses import fields
from datetime import timedelta

import pytest
from sqlalchemy import text

from mqjournal.ibmi.cleanup import HostCleanup
from mqjournal.ibmi.transfer import RECORD_BYTES
from mqjournal.policy import Policy
from mqjournal.sim.server import TransferFault
from tests.safety import scenario as sc


@pytest.fixture
def s(case_root):
    scenario = sc.Scenario(case_root)
    yield scenario
    scenario.close()


def _save(s: sc.Scenario):
    """The save step of the matrix's save path: (its argument, its result, the receivers the plan would delete)."""
    arg = sc.PATHS["save"].setup(s)
    return arg, sc.PATHS["save"].run(s, arg, None), arg[2]


def _held_after_rerun(s: sc.Scenario, arg) -> None:
    """The step rerun without faults copies what was missing; a whole run then finishes; the invariants hold."""
    again = sc.PATHS["save"].run(s, arg, None)
    assert again.not_copied == [], again.not_copied
    assert s.maintain("run2").unfinished() == []
    report = s.check()
    assert report.ok, str(report)
    assert s.store.unrecorded_objects() == []


def _nothing_deletable(s: sc.Scenario, to_delete) -> None:
    """Right after the fault, a delete step keeps every receiver: none has a verified copy off the partition."""
    kept = s.executor("fault-check").delete(to_delete, policy=Policy())
    assert kept.deleted == [], kept.deleted
    assert set(to_delete) <= set(s.chain())


def test_a_download_dropped_once_is_fetched_again_and_verified(s):
    s.service.faults[sc.HOST].transfers.append(TransferFault(sc.SAVE_LIBRARY, "get", after_bytes=RECORD_BYTES))

    arg, result, _ = _save(s)

    assert result.not_copied == [] and len(result.copied) == 1
    assert s.store.verify(result.copied[0]).ok
    _held_after_rerun(s, arg)


def test_a_download_dropped_on_every_attempt_leaves_the_save_on_the_host_and_nothing_deletable(s):
    attempts = s.session.retry.attempts
    s.service.faults[sc.HOST].transfers.append(
        TransferFault(sc.SAVE_LIBRARY, "get", after_bytes=RECORD_BYTES, times=attempts)
    )

    arg, result, to_delete = _save(s)

    assert result.saved and result.copied == [] and len(result.not_copied) == 1
    assert s.store.list_objects() == [] and s.store.unrecorded_objects() == []
    _nothing_deletable(s, to_delete)
    _held_after_rerun(s, arg)


def test_a_store_that_cannot_be_written_leaves_nothing_in_it_and_nothing_deletable(s):
    # A file where the host's folder must go: every write under it fails, as on a full or read-only mount.
    s.store_path.mkdir(parents=True, exist_ok=True)
    blocker = s.store_path / sc.HOST
    blocker.write_text("not a folder")

    arg, result, to_delete = _save(s)

    assert result.copied == [] and "the backup store could not be written" in result.not_copied[0][1]
    assert blocker.read_text() == "not a folder"
    _nothing_deletable(s, to_delete)
    blocker.unlink()
    _held_after_rerun(s, arg)


def test_a_copy_cut_off_by_a_killed_worker_is_no_backup_and_the_rerun_replaces_it(s):
    arg, result, to_delete = _save(s)
    (key,) = result.copied
    # What a worker SIGKILLed mid-download leaves: part of the object, no sidecar, no catalog row.
    path = s.store_path / key
    partial = path.read_bytes()[: RECORD_BYTES * 3]
    shutil.rmtree(s.store_path)
    with s.catalog._session("forget the copy", write=True) as session:
        session.execute(text("DELETE FROM stored_objects"))
    path.parent.mkdir(parents=True)
    path.write_bytes(partial)
    assert s.store.unrecorded_objects() == [key]

    _nothing_deletable(s, to_delete)
    _held_after_rerun(s, arg)
    assert s.store.verify(key).ok


# --- the host's digest (issue #28): a copy counts only when its bytes are the ones the host digested -------------


def test_a_corrupted_download_of_the_right_length_is_no_backup_and_nothing_is_deletable(s):
    # One byte changed on the way: the length is the save file's, the bytes are not.
    s.service.faults[sc.HOST].transfers.append(TransferFault(sc.SAVE_LIBRARY, "get", after_bytes=100, corrupt=True))

    arg, result, to_delete = _save(s)

    assert result.saved and result.copied == [] and "is not the host's" in result.not_copied[0][1]
    assert s.store.list_objects() == [] and s.store.unrecorded_objects() == []
    _nothing_deletable(s, to_delete)
    _held_after_rerun(s, arg)


def test_a_save_file_saved_into_between_its_content_check_and_its_download_is_no_backup(s):
    # Another job's SAVOBJ ... CLEAR(*ALL) of one receiver into our save file lands as the download starts: the copy
    # would hold that receiver alone, while the catalog says the save file holds them all.
    def other_save_on_arrival(entry, event: str) -> None:
        if event == "arrived" and entry.command.startswith("SFTP GET"):
            s.service.transfers.listeners.clear()
            savf = entry.command.removeprefix("SFTP GET /QSYS.LIB/").replace(".LIB/", "/").removesuffix(".FILE")
            out = s.operator(
                f"SAVOBJ OBJ({to_delete[-1]}) LIB({sc.LIBRARY}) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({savf}) CLEAR(*ALL)"
            )
            assert out.exit_status == 0, out.stderr

    arg = sc.PATHS["save"].setup(s)
    to_delete = arg[2]
    s.service.transfers.listeners.append(other_save_on_arrival)
    result = sc.PATHS["save"].run(s, arg, None)

    assert result.copied == [] and len(result.not_copied) == 1
    (path,) = result.save_files
    # Even once that save file is gone from the host, no receiver is deleted on account of a copy of it.
    assert s.remove_save_file(path).exit_status == 0
    _nothing_deletable(s, to_delete)
    assert s.maintain("run2").unfinished() == []
    report = s.check()
    assert report.ok, str(report)


def test_clean_up_keeps_a_save_file_whose_bytes_are_not_its_stored_copys(s):
    _, result, _ = _save(s)
    (key,), (path,) = result.copied, result.save_files
    # Someone saves the same receiver again into that save file: it lists what the copy lists, its bytes differ.
    receivers = [o.receiver for o in s.store.get(key).objects]
    out = s.operator(
        f"SAVOBJ OBJ({' '.join(receivers)}) LIB({sc.LIBRARY}) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({path}) CLEAR(*ALL)"
    )
    assert out.exit_status == 0, out.stderr
    s.advance(timedelta(hours=2))

    executor = s.executor("cleanup1")
    cleanup = HostCleanup(**{f.name: getattr(executor, f.name) for f in fields(HostCleanup)})
    cleaned = cleanup.clean_up(Policy(keep_on_host_days=0.01))

    assert cleaned.removed == [] and path in s.host.partition.save_files
    assert "the host's SHA-256 of it is" in cleaned.kept[0][1]
