"""The invariant checker is not vacuous: each invariant holds after a fault-free run and catches its violation."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest

from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.sim import mq
from tests.safety import matrix
from tests.safety.scenario import HOST, LIBRARY, PATHS, QMGR, Scenario


@pytest.fixture
def s(case_root):
    scenario = Scenario(case_root)
    yield scenario
    scenario.close()


def rules(report) -> set[str]:
    return {v.rule for v in report.violations}


def maintained(s: Scenario):
    s.advance(timedelta(minutes=80))
    run = s.maintain("run1")
    assert run.unfinished() == [] and run.deleted.deleted
    return run


def test_a_fault_free_maintenance_run_holds_every_invariant(s: Scenario):
    maintained(s)
    report = s.check()
    assert report.ok, str(report)
    assert report.commands_received == report.intents > 0


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_path_sends_the_same_commands_every_time_so_cases_can_name_them(path, tmp_path):
    first = matrix.step_commands(path, tmp_path / "one")
    assert first and first == matrix.step_commands(path, tmp_path / "two")


def test_needed_receivers_deleted_behind_mqjournals_back_are_lost_and_strmqm_fails(s: Scenario):
    s.advance(timedelta(minutes=20))
    with s.host.state() as partition:
        mq.open_unit_of_work(partition, partition.queue_manager(QMGR))
    s.advance(timedelta(minutes=60))
    victims = s.chain()[:2]
    for name in victims:
        assert s.operator(f"DLTJRNRCV JRNRCV({LIBRARY}/{name}) DLTOPT(*IGNINQMSG)").exit_status == 0
    report = s.check()
    assert set(report.lost_receivers) >= {f"{LIBRARY}/{victims[-1]}"}
    assert {"receiver lost", "restart"} <= rules(report)
    # The check works on a copy: the partition itself is untouched.
    assert s.host.partition.queue_manager(QMGR).running


def test_a_damaged_object_whose_image_is_gone_cannot_be_recreated(s: Scenario):
    s.advance(timedelta(minutes=20))
    with s.host.state() as partition:
        mq.damage(partition, partition.queue_manager(QMGR), "APP.REQUEST.QUEUE")
    s.advance(timedelta(minutes=60))
    assert s.operator(f"DLTJRNRCV JRNRCV({LIBRARY}/{s.chain()[0]}) DLTOPT(*IGNINQMSG)").exit_status == 0
    report = s.check()
    assert "recreate" in rules(report) or "restart" in rules(report)
    assert report.lost_receivers


def test_a_deleted_receiver_whose_save_file_is_gone_is_backed_by_its_copy_in_the_store(s: Scenario):
    run = maintained(s)
    (save_file,) = run.saved.save_files
    assert s.operator(f"DLTF FILE({save_file})").exit_status == 0
    report = s.check()
    assert "deleted without save" not in rules(report) and "deleted without a copy off the partition" not in rules(
        report
    )


def test_a_deleted_receiver_whose_save_file_and_copy_are_gone_is_found_unless_someone_else_removed_them(s: Scenario):
    run = maintained(s)
    (save_file,), (key,) = run.saved.save_files, run.saved.copied
    assert s.operator(f"DLTF FILE({save_file})").exit_status == 0
    s.store.delete(key)
    report = s.check()
    assert {"deleted without save", "deleted without a copy off the partition", "catalog/host"} <= rules(report)
    # Had someone else deleted it (the scenario knows), only later deletions would be held against mqjournal.
    s.removed_save_files.add(save_file)
    s.excused_deletions.update((f"{LIBRARY}/{name}", save_file) for name in run.deleted.deleted)
    assert rules(s.check()) == {"deleted without a copy off the partition"}


def _rewrite_sidecar(s: Scenario, key: str, **changes) -> None:
    sidecar = s.store_path / f"{key}.json"
    sidecar.write_text(json.dumps(json.loads(sidecar.read_text()) | changes))


def test_a_deleted_receiver_whose_only_copy_the_host_never_vouched_for_is_found(s: Scenario):
    run = maintained(s)
    (save_file,), (key,) = run.saved.save_files, run.saved.copied
    assert s.operator(f"DLTF FILE({save_file})").exit_status == 0
    _rewrite_sidecar(s, key, host_sha256=None)
    assert "deleted without a copy the host vouched for" in rules(s.check())


def test_a_deleted_receiver_whose_only_copy_holds_other_bytes_is_found_though_the_store_verifies_it(s: Scenario):
    # What a corrupted download of the right length was when only its length was compared with the host's.
    run = maintained(s)
    (save_file,), (key,) = run.saved.save_files, run.saved.copied
    assert s.operator(f"DLTF FILE({save_file})").exit_status == 0
    path = s.store_path / key
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    sha = hashlib.sha256(data).hexdigest()
    _rewrite_sidecar(s, key, sha256=sha, host_sha256=sha)
    assert s.store.verify(key).ok
    found = rules(s.check())
    assert "deleted without a copy the host vouched for" in found
    assert not {"deleted without save", "deleted without a copy off the partition"} & found  # those cannot tell


def test_a_save_file_cleared_behind_the_catalogs_back_is_found(s: Scenario):
    run = maintained(s)
    (save_file,) = run.saved.save_files
    assert s.operator(f"CLRSAVF FILE({save_file})").exit_status == 0
    report = s.check()
    assert {"deleted without save", "catalog/host"} <= rules(report)
    assert any("does not hold it" in v.detail for v in report.violations)


def test_a_command_sent_without_an_audit_record_is_unrecorded(s: Scenario):
    silent = IbmiSession(HOST, s.user, s.connector(), audit=AuditLog(None))
    with silent:
        silent.run(commands.record_media_images(QMGR))
    report = s.check()
    assert report.unrecorded_commands == [f"RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME('{QMGR}') DSPJRNDTA(*YES)"]
    assert rules(report) == {"unrecorded command"}


def test_an_intent_without_outcome_needs_a_reconciled_record(s: Scenario):
    intent = {"event": "intent", "id": "abc", "host": HOST, "user": s.user, "command": "system 'STRMQM'"}
    with s.audit_path.open("a") as handle:
        handle.write(json.dumps(intent) + "\n")
    assert rules(s.check()) == {"unexplained intent"}
    with s.audit_path.open("a") as handle:
        handle.write(
            json.dumps(
                {"event": "reconciled", "id": "abc", "host": HOST, "command": intent["command"], "finding": "not run"}
            )
            + "\n"
        )
    assert s.check().ok


def test_a_killed_workers_intent_that_never_left_takes_no_command_of_the_rerun(s: Scenario):
    # A worker killed between writing an intent and sending it leaves the intent alone; the rerun then sends the same
    # text, and the host's one command is the rerun's: the rerun's answer is the host's, the old intent is unexplained.
    command = commands.record_media_images(QMGR)
    killed = {"event": "intent", "id": "k1", "at": "2026-01-01T00:00:00.000+00:00", "host": HOST, "user": s.user}
    with s.audit_path.open("a") as handle:
        handle.write(json.dumps(killed | {"command": command.text}) + "\n")
    s.session.run(command)
    report = s.check()
    assert rules(report) == {"unexplained intent"}
    assert all("never received" in v.detail for v in report.violations)


def test_an_audit_outcome_the_host_did_not_give_is_found(s: Scenario):
    with s.audit_path.open("a") as handle:
        handle.write(json.dumps({"event": "intent", "id": "x1", "host": HOST, "command": "system 'DLTF'"}) + "\n")
        handle.write(
            json.dumps(
                {
                    "event": "outcome",
                    "id": "x1",
                    "host": HOST,
                    "command": "system 'DLTF'",
                    "outcome": "ok",
                    "exit_status": 0,
                }
            )
            + "\n"
        )
    assert rules(s.check()) == {"audit disagrees"}


def test_a_deletion_the_catalog_never_recorded_is_found(s: Scenario):
    s.advance(timedelta(minutes=80))
    to_save, to_delete = s.plan("run1")
    s.executor("run1").save(to_save, save_library="QGPL")
    # mqjournal's session (audited), but around the executor: the catalog never hears of it.
    s.session.run(commands.delete_receiver(LIBRARY, to_delete[0], ignore_inquiry=False))
    report = s.check()
    assert rules(report) <= {"catalog/host", "no catalog intent"} and "catalog/host" in rules(report)
    assert any(f"deleted {LIBRARY}/{to_delete[0]}" in v.detail for v in report.violations)
