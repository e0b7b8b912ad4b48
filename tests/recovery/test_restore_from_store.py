"""Restores from the backup store on a simulated partition over SSH: save files the host no longer has are created
again (CRTSAVF), uploaded from their verified copies, checked (QSYS2.SAVE_FILE_OBJECTS) and restored from; a copy
that no longer matches its sidecar is a named gap and nothing is uploaded; an interrupted upload is made again on
the rerun; a library save is copied into the store after it is verified."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal import rules
from mqjournal.catalog import SavedReceiver, SaveFileCopy
from mqjournal.ibmi.audit import read_audit
from mqjournal.ibmi.collector import collect
from mqjournal.ibmi.executor import Executor
from mqjournal.ibmi.transfer import download_save_file
from mqjournal.policy import Policy
from mqjournal.recovery.execute import PlanHasGaps, RecoveryExecutor, StepFailed
from mqjournal.recovery.gather import gather
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.library_save import save_library
from mqjournal.recovery.plan import Action, RecoveryPlan
from mqjournal.recovery.planner import plan_recovery
from mqjournal.sim.server import TransferFault
from tests.conftest import SimFleet
from tests.recovery.test_recovery_on_simulator import Rig, hold_startup_point, make_rig

FETCH = [Action.CREATE_SAVE_FILE, Action.UPLOAD_SAVE_FILE, Action.CHECK_SAVE_FILE]


@pytest.fixture
def rig(sim_fleet: SimFleet, tmp_path: Path):
    made = make_rig(sim_fleet, tmp_path)
    yield made
    made.session.close()


def save_receivers(rig: Rig, run_id: str) -> list[str]:
    """The maintenance save step alone, without a store (so nothing is copied or deleted by it): the save files
    of this test are copied by `copy_into_store`."""
    executor = Executor(rig.session, rig.target, "ibmi1", rig.tz, rig.catalog, run_id, None)
    snap = collect(rig.session, rig.target, host="ibmi1", run_id=run_id, tz=rig.tz)
    _, rows = rules.plan_queue_manager(snap, [snap], as_of=snap.collected_at, policy=Policy())
    return executor.save([r.receiver for r in rows if r.action in rules.SAVES], save_library="QGPL").save_files


def copy_into_store(rig: Rig, paths: list[str]) -> None:
    """Each save file downloaded into the backup store and recorded, described by the receiver saves in it."""
    assert rig.store is not None
    saves = rig.catalog.saves_for("ibmi1", "QMTEST")
    for path in paths:
        library, name = path.split("/")
        in_file = [s for s in saves if (s.save_file_library, s.save_file) == (library, name)]
        meta = SaveFileCopy(
            host="ibmi1",
            qmgr="TEST",
            qmgr_library="QMTEST",
            save_file_library=library,
            save_file=name,
            run_id=in_file[0].run_id if in_file else "lib",
            objects=tuple(SavedReceiver.from_save(s) for s in in_file),
        )
        rig.catalog.record_stored(download_save_file(rig.session, library, name, rig.store, meta, via="direct"))


def remove_from_host(rig: Rig, paths: list[str]) -> None:
    """The host cleanup (keep_on_host_days) deleted the save files: only the store has them now."""
    for path in paths:
        assert rig.cl(f"DLTF FILE({path})")[0] == 0


def plan(rig: Rig, kind: RecoveryKind) -> RecoveryPlan:
    inputs = gather(
        rig.session,
        rig.target,
        host="ibmi1",
        tz=rig.tz,
        catalog=rig.catalog,
        request=rig.request(kind),
        store=rig.store,
    )
    return plan_recovery(inputs)


def executor(rig: Rig, run_id: str = "recovery1") -> RecoveryExecutor:
    return RecoveryExecutor(rig.session, rig.target, "ibmi1", rig.tz, rig.catalog, run_id, rig.store)


def puts(rig: Rig) -> list[str]:
    return [e.command for e in rig.fleet.service.transfers.entries() if e.command.startswith("SFTP PUT ")]


def receivers_gone_with_their_save_files(rig: Rig) -> tuple[list[str], list[str]]:
    """Saved and copied into the store; then the host cleanup removes the save files, someone deletes two needed
    receivers, and the partition crashes: STRMQM fails with AMQ7432. Returns (victims, save files removed)."""
    rig.fleet.host().advance(timedelta(hours=1))
    hold_startup_point(rig)
    rig.fleet.host().advance(timedelta(hours=2))
    save_files = save_receivers(rig, "maint1")
    copy_into_store(rig, save_files)
    needed = collect(rig.session, rig.target, host="ibmi1", run_id="c", tz=rig.tz).startup_recovery.receiver
    chain = rig.chain()
    victims = chain[chain.index(needed) : chain.index(needed) + 2]
    rig.delete_out_of_band(*chain[: chain.index(needed) + 2])  # oldest first, as IBM i deletes them
    remove_from_host(rig, save_files)
    rig.crash()
    assert "AMQ7432" in rig.cl("STRMQM MQMNAME(TEST)")[2]
    return victims, save_files


def test_receivers_whose_save_files_left_the_host_are_restored_from_the_store(rig: Rig):
    victims, save_files = receivers_gone_with_their_save_files(rig)
    attached = {r.name: r.attached_at for r in rig.partition.receivers_in("QMTEST")}
    (save_file,) = save_files
    saved_at = {s.receiver: s.attached_at for s in rig.catalog.saves_for("ibmi1", "QMTEST")}

    approved = plan(rig, RecoveryKind.STARTUP)
    assert approved.gaps == [], approved.markdown()
    assert [s.action for s in approved.steps] == [
        *FETCH,
        Action.RESTORE_RECEIVER,
        Action.RESTORE_RECEIVER,
        Action.ASSOCIATE_RECEIVERS,
        Action.START_QMGR,
    ]
    crtsavf, upload, check = approved.steps[:3]
    assert crtsavf.text.startswith(f"CRTSAVF FILE({save_file}) TEXT('mqjournal TEST from store {save_file}')")
    assert upload.text.startswith(f"SFTP PUT /QSYS.LIB/QGPL.LIB/{save_file.split('/')[1]}.FILE from the backup")
    assert check.args["objects"] == " ".join(f"QMTEST/{v}" for v in victims)
    assert approved.restored_receivers == victims[::-1]
    assert puts(rig) == []  # planning reads the store and the host, and sends nothing

    result = executor(rig).execute(approved)
    assert [d.command for d in result.done] == [s.text for s in approved.steps]
    assert [d.outcome for d in result.done] == ["done"] * len(approved.steps)
    back = {r.name: r.attached_at for r in rig.partition.receivers_in("QMTEST")}
    assert all(back[v] == saved_at[v] == attached.get(v, saved_at[v]) for v in victims)
    assert rig.partition.queue_manager("TEST").running
    assert len(puts(rig)) == 1


def test_a_rerun_after_a_restore_from_the_store_uploads_nothing_again(rig: Rig):
    receivers_gone_with_their_save_files(rig)
    approved = plan(rig, RecoveryKind.STARTUP)
    executor(rig).execute(approved)
    again = executor(rig, "recovery2").execute(approved)
    assert [d.outcome for d in again.done] == ["already done"]  # STRMQM: the queue manager runs
    assert len(puts(rig)) == 1


def test_a_store_copy_with_one_byte_flipped_is_a_named_gap_and_nothing_is_uploaded(rig: Rig):
    receivers_gone_with_their_save_files(rig)
    (stored,) = rig.catalog.stored_objects("ibmi1", "TEST")
    assert rig.store is not None
    path = f"{rig.store.root}/{stored.key}"
    data = bytearray(rig.store.fs.cat_file(path))
    data[len(data) // 2] ^= 0x01
    rig.store.fs.pipe_file(path, bytes(data))
    before, audited = rig.host_state(), rig.audited()

    refused = plan(rig, RecoveryKind.STARTUP)
    assert not refused.executable
    assert any(
        stored.key in g.problem and "SHA-256" in g.problem and "bytes changed" in g.problem for g in refused.gaps
    )
    assert all(s.action not in FETCH for s in refused.steps)
    with pytest.raises(PlanHasGaps):
        executor(rig).execute(refused)
    assert puts(rig) == []
    assert not any(r["command"].startswith("SFTP PUT") for r in read_audit(rig.audit)[audited:])
    assert rig.host_state() == before and rig.changing_commands(audited) == []


def test_an_interrupted_upload_is_made_again_on_the_rerun_after_dltf_and_crtsavf(rig: Rig):
    victims, (save_file,) = receivers_gone_with_their_save_files(rig)
    approved = plan(rig, RecoveryKind.STARTUP)
    (stored,) = rig.catalog.stored_objects("ibmi1", "TEST")
    rig.fleet.service.faults["ibmi1"].transfers.append(
        TransferFault(save_file.split("/")[1], "put", after_bytes=stored.size_bytes // 2)
    )
    with pytest.raises(StepFailed) as failed:
        executor(rig).execute(approved)
    assert failed.value.step is not None and failed.value.step.action is Action.UPLOAD_SAVE_FILE
    assert "DLTF" in failed.value.action and "CRTSAVF" in failed.value.action
    assert [d.action for d in failed.value.done] == [Action.CREATE_SAVE_FILE]
    assert not set(victims) & set(rig.chain())  # nothing was restored from a save file the upload left incomplete

    rerun = executor(rig, "recovery2").execute(approved)
    assert [d.action for d in rerun.done[:4]] == [Action.DELETE_PARTIAL_UPLOAD, *FETCH]
    assert rerun.done[0].command == f"DLTF FILE({save_file})"
    assert set(victims) <= set(rig.chain())
    assert rig.partition.queue_manager("TEST").running


def test_a_library_save_is_copied_into_the_store_and_recorded(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=2))
    result = save_library(
        rig.session,
        rig.target,
        host="ibmi1",
        tz=rig.tz,
        catalog=rig.catalog,
        save_library="QGPL",
        run_id="lib1",
        store=rig.store,
        routes=None,
    )
    assert result.stored is not None and result.not_copied == ""
    # Both parts of the library save: the SAVLIB's save file and the SAV of the IFS directory (no receivers in it).
    assert result.directory_stored is not None and result.directory_stored.objects == ()
    assert sorted(rig.catalog.stored_objects("ibmi1", "TEST"), key=lambda o: o.save_file) == [
        result.stored,
        result.directory_stored,
    ]
    assert result.stored.save_file_path == result.record.save_file_path
    assert [o.receiver for o in result.stored.objects] == result.receivers
    assert rig.store is not None and rig.store.verify(result.stored.key).ok


def test_a_library_save_whose_copy_fails_stands_on_the_host_and_says_it_is_not_backed_up(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=2))
    rig.fleet.service.faults["ibmi1"].transfers.append(TransferFault("TEST", "get", after_bytes=528, times=10))
    result = save_library(
        rig.session,
        rig.target,
        host="ibmi1",
        tz=rig.tz,
        catalog=rig.catalog,
        save_library="QGPL",
        run_id="lib1",
        store=rig.store,
        routes=None,
    )
    assert result.stored is None
    assert "NOT backed up off the partition" in result.not_copied and result.record.save_file_path in result.not_copied
    assert rig.catalog.library_saves("ibmi1", "QMTEST") == [result.record]
    assert rig.catalog.stored_objects("ibmi1", "TEST") == []
    assert rig.partition.queue_manager("TEST").running


def test_a_lost_library_comes_back_from_the_store_alone_and_starts(rig: Rig):
    rig.fleet.host().advance(timedelta(hours=2))
    copy_into_store(rig, save_receivers(rig, "maint1"))
    library_save = save_library(
        rig.session,
        rig.target,
        host="ibmi1",
        tz=rig.tz,
        catalog=rig.catalog,
        save_library="QGPL",
        run_id="lib1",
        store=rig.store,
        routes=None,
    )
    assert library_save.stored is not None
    rig.fleet.host().advance(timedelta(hours=2))
    copy_into_store(rig, save_receivers(rig, "maint2"))
    assert rig.cl("DLTLIB LIB(QMTEST)")[0] == 0
    everything = sorted({s.save_file_path for s in rig.catalog.stored_objects("ibmi1", "TEST")})
    remove_from_host(rig, everything)

    approved = plan(rig, RecoveryKind.LIBRARY)
    assert approved.gaps == [], approved.markdown()
    assert [s.action for s in approved.steps[:4]] == [*FETCH, Action.RESTORE_LIBRARY]
    assert approved.steps[3].args["save_file"] == library_save.record.save_file
    uploaded = {s.args["origin"] for s in approved.steps if s.action is Action.UPLOAD_SAVE_FILE}
    restored_from = {
        f"{s.args['save_library']}/{s.args['save_file']}" for s in approved.steps if s.action is Action.RESTORE_RECEIVER
    }
    assert restored_from <= uploaded  # every save file read is brought back first

    result = executor(rig).execute(approved)
    assert [d.command for d in result.done] == [s.text for s in approved.steps]
    assert rig.partition.queue_manager("TEST").running
    assert set(approved.restored_receivers) <= set(rig.chain())
