"""The save step's copy off the partition under faults: the SFTP download and the backup store failing.

The fault matrix (test_fault_matrix.py) faults command lines; a transfer is not one, so its faults are here. Each
case runs the save step under the fault, checks that nothing was lost and that no receiver became deletable without a
verified copy in the store, then reruns the step and a whole maintenance run, and checks the invariants
(tests/safety/invariants.py, including "every deletion has a verified copy off the partition").
"""

from __future__ import annotations

import shutil

import pytest
from sqlalchemy import text

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
