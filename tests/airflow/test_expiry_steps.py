"""The backup expiry DAG's steps on a simulated partition over SSH: the proposal is the `recover --kind expiry`
planner's, an approved one deletes exactly that on the host and the copies in the store, and every restore the
recovery rules promise stays gap-free."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from mqjournal.airflow import expiry as steps
from mqjournal.airflow import hostwork, maintenance
from mqjournal.airflow.hostwork import QueueManagersFailed, finish
from mqjournal.airflow.sessions import host_session
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import ExpiryProposal, HostBatch, MaintenanceTarget
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi.audit import read_audit
from mqjournal.policy import Policy
from mqjournal.recovery.gather import gather
from mqjournal.recovery.kinds import RecoveryKind
from mqjournal.recovery.library_save import save_library
from mqjournal.recovery.plan import Request
from mqjournal.recovery.planner import plan_recovery
from tests.airflow.conftest import ibmi1_settings
from tests.conftest import SimFleet, fleet_config, serve
from tests.recovery import expiry_scene

POLICY = Policy()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """TEST on ibmi1 after three rounds of maintenance and library saves (the first round's save files may go),
    made once for the module's tests: (the folder the tests run in, a copy of it as the history left it). The
    catalog and the store's sidecars name the folder, so each test gets the copy back in that very folder."""
    root = tmp_path_factory.mktemp("expiry-steps")
    with serve(fleet_config(root)) as fleet, pytest.MonkeyPatch.context() as patch:
        made = ibmi1_settings(fleet, root, patch)
        (found,) = maintenance.select_targets(made, [], []).targets
        with host_session(made, "ibmi1") as session:
            expiry_scene.build_history(
                session,
                found.target,
                host="ibmi1",
                tz=found.tz,
                catalog=catalog(made),
                store=store(made),
                advance=lambda: fleet.host().advance(timedelta(hours=2)),
            )
    kept = root.with_name(f"{root.name}-as-built")
    shutil.copytree(root, kept, symlinks=True)  # once the simulator stopped: its partition is in its state file
    return root, kept


@pytest.fixture
def sim_fleet(history: tuple[Path, Path]) -> Iterator[SimFleet]:
    """The partition as the history left it, served again (conftest's sim_fleet starts from nothing)."""
    root, kept = history
    shutil.rmtree(root)
    shutil.copytree(kept, root, symlinks=True)
    with serve(fleet_config(root)) as fleet:
        yield fleet


@pytest.fixture
def settings(sim_fleet: SimFleet, history: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Settings:
    return ibmi1_settings(sim_fleet, history[0], monkeypatch)


@pytest.fixture
def target(settings: Settings, sim_fleet: SimFleet) -> MaintenanceTarget:
    (found,) = maintenance.select_targets(settings, [], []).targets
    return found


@pytest.fixture
def bare_fleet(tmp_path: Path) -> Iterator[SimFleet]:
    """ibmi1 with no history at all."""
    with serve(fleet_config(tmp_path)) as fleet:
        yield fleet


@pytest.fixture
def bare_settings(bare_fleet: SimFleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    return ibmi1_settings(bare_fleet, tmp_path, monkeypatch)


def catalog(settings: Settings) -> Catalog:
    return Catalog(settings.catalog_url)


def store(settings: Settings) -> BackupStore:
    return BackupStore.from_settings(settings)


def restore_gaps(settings: Settings, target: MaintenanceTarget) -> dict[str, list[str]]:
    with host_session(settings, target.host) as session:
        plans = expiry_scene.restore_plans(
            session,
            target.target,
            host=target.host,
            tz=target.tz,
            catalog=catalog(settings),
            store=store(settings),
            policy=POLICY,
        )
    assert {name.split()[0] for name in plans} == {"startup", "library"}
    return expiry_scene.gaps(plans)


def planned_files(proposal: ExpiryProposal) -> set[str]:
    return {f"{s.args['library']}/{s.args['name']}" for s in proposal.plan.steps}


def in_store(settings: Settings, keys: set[str]) -> set[str]:
    return {key for key in keys if store(settings).get(key) is not None}


def refuse_store_delete(monkeypatch, stuck: str):
    """The backup store refuses to delete the copy `stuck` (and only it); returns the real delete."""
    real_delete = BackupStore.delete

    def failing_delete(self, key):
        if key == stuck:
            raise OSError("the store refused the delete")
        real_delete(self, key)

    monkeypatch.setattr(BackupStore, "delete", failing_delete)
    return real_delete


def test_the_proposal_is_the_recover_expiry_planners_plan_with_each_save_files_copies(settings, target):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    with host_session(settings, "ibmi1") as session:
        request = Request(host="ibmi1", qmgr="TEST", kind=RecoveryKind.EXPIRY)
        inputs = gather(session, target.target, host="ibmi1", tz=target.tz, catalog=catalog(settings), request=request)
    cli_plan = plan_recovery(inputs, policy=POLICY)
    assert [s.text for s in proposal.plan.steps] == [s.text for s in cli_plan.steps] and cli_plan.steps
    assert {f.path for f in proposal.save_files} == planned_files(proposal)
    oldest_library_save = min(catalog(settings).library_saves("ibmi1", "QMTEST"), key=lambda s: s.saved_at)
    expiring = {f.path: f for f in proposal.save_files}
    assert expiring[oldest_library_save.save_file_path].library_saves == 1
    # Every proposed save file was copied into the store by its save, and the gate lists the copy with its size.
    for f in proposal.save_files:
        assert f.on_host and f.why
        (copy,) = f.copies
        assert copy.size_bytes > 0 and store(settings).get(copy.key) is not None
    assert proposal.anything_to_delete and proposal.leftover_copies == []
    assert settings.expiry_plan_file("expiry1", "ibmi1", "TEST").exists()


def test_an_approved_expiry_deletes_exactly_the_proposal_on_the_host_and_in_the_store_and_no_restore_gets_a_gap(
    settings, target, sim_fleet
):
    assert restore_gaps(settings, target) == {}
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    doomed = planned_files(proposal)
    keys = proposal.approved_keys
    kept_before = set(sim_fleet.host().partition.save_files) - doomed

    outcome = steps.execute_one(settings, proposal, "expiry1", POLICY)

    assert not outcome.failed, outcome
    assert set(outcome.discarded) == doomed and catalog(settings).discarded_save_files("ibmi1") == doomed
    assert set(sim_fleet.host().partition.save_files) == kept_before
    assert set(outcome.store_deleted) == keys and in_store(settings, keys) == set()
    assert outcome.store_freed_bytes == sum(c.size_bytes for f in proposal.save_files for c in f.copies)
    # The copies of what stays are untouched.
    remaining = {s.key for s in catalog(settings).stored_objects("ibmi1", "TEST")} - keys
    assert remaining and in_store(settings, remaining) == remaining
    assert restore_gaps(settings, target) == {}
    # Each deletion from the store is audited: an intent before, its outcome after.
    audited = [r["command"] for r in read_audit(settings.store_audit_log) if r["outcome"] == "ok"]
    assert sorted(audited) == sorted(f"DELETE {store(settings).url}/{key}" for key in keys)
    # Nothing more may go now.
    again = steps.plan_one(settings, target, "expiry2", POLICY)
    assert again.plan.steps == [] and not again.anything_to_delete


def test_a_save_file_already_gone_from_the_partition_is_discarded_and_its_copy_deleted(settings, target, sim_fleet):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    gone = proposal.save_files[0]
    status, _, err = sim_fleet.connect().cl(f"DLTF FILE({gone.path})")  # as the cleanup step would have, or an admin
    assert status == 0, err

    outcome = steps.execute_one(settings, proposal, "expiry1", POLICY)

    assert not outcome.failed, outcome
    assert gone.path in outcome.discarded
    assert {c.key for c in gone.copies} <= set(outcome.store_deleted)
    assert in_store(settings, {c.key for c in gone.copies}) == set()


def test_the_proposal_marks_a_save_file_the_partition_no_longer_has(settings, target, sim_fleet):
    first = steps.plan_one(settings, target, "expiry1", POLICY).save_files[0]
    assert sim_fleet.connect().cl(f"DLTF FILE({first.path})")[0] == 0
    again = {f.path: f for f in steps.plan_one(settings, target, "expiry2", POLICY).save_files}
    assert again[first.path].on_host is False and again[first.path].copies


def test_copies_left_by_an_expiry_on_the_host_only_are_proposed_and_deleted_by_the_next_run(settings, target):
    # `mqjournal recover --kind expiry --execute` deletes on the host and records the discard; the store keeps the
    # copies until the DAG's next run.
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    keys = proposal.approved_keys
    host_only = proposal.model_copy(update={"leftover_copies": [], "save_files": []})
    outcome = steps.execute_one(settings, host_only, "expiry1", POLICY)
    assert outcome.store_deleted == [] and set(outcome.store_not_approved) == keys
    assert in_store(settings, keys) == keys

    later = steps.plan_one(settings, target, "expiry2", POLICY)
    assert later.plan.steps == [] and {c.key for c in later.leftover_copies} == keys and later.anything_to_delete
    assert steps.summarize([later]).anything_to_delete
    done = steps.execute_one(settings, later, "expiry2", POLICY)
    assert set(done.store_deleted) == keys and in_store(settings, keys) == set()
    assert steps.plan_one(settings, target, "expiry3", POLICY).leftover_copies == []


def test_a_store_that_fails_leaves_the_catalog_discarded_reports_the_copy_and_the_rerun_deletes_it(
    settings, target, monkeypatch
):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    keys = sorted(proposal.approved_keys)
    stuck = keys[0]
    real_delete = refuse_store_delete(monkeypatch, stuck)
    outcome = steps.execute_one(settings, proposal, "expiry1", POLICY)
    assert [key for key, _ in outcome.store_failed] == [stuck] and outcome.failed
    assert set(outcome.store_deleted) == set(keys) - {stuck}
    assert catalog(settings).discarded_save_files("ibmi1") == planned_files(proposal)
    assert "still in the backup store" in (steps.outcome_problems(outcome) or "")
    failed = [r for r in read_audit(settings.store_audit_log) if r["outcome"] == "failed"]
    assert [r["command"] for r in failed] == [f"DELETE {store(settings).url}/{stuck}"]

    monkeypatch.setattr(BackupStore, "delete", real_delete)
    rerun = steps.execute_one(settings, proposal, "expiry1", POLICY)
    assert rerun.store_deleted == [stuck] and set(rerun.store_already_gone) == set(keys) - {stuck}
    assert rerun.discarded == [] and not rerun.failed


def test_a_plan_that_went_stale_before_approval_deletes_nothing(settings, target, sim_fleet):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    # A new library save before the approval: the second one's receivers may go now too, a step not approved.
    with host_session(settings, "ibmi1") as session:
        save_library(
            session,
            target.target,
            host="ibmi1",
            tz=target.tz,
            catalog=catalog(settings),
            save_library="QGPL",
            run_id="lib-late",
            store=store(settings),
            routes=None,
        )
    files = set(sim_fleet.host().partition.save_files)

    outcome = steps.execute_one(settings, proposal, "expiry1", POLICY)

    assert outcome.failure and "PlanWentStale" in outcome.failure
    assert set(sim_fleet.host().partition.save_files) == files
    assert outcome.discarded == [] and outcome.store_deleted == []
    assert catalog(settings).discarded_save_files("ibmi1") == set()


def test_the_gate_body_names_each_save_file_its_copies_and_why_and_a_dry_run_skips_the_gate(settings, target):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    summary = steps.summarize([proposal])
    assert summary.anything_to_delete and summary.save_files == len(proposal.save_files)
    for f in proposal.save_files:
        assert f.path in summary.body and f.why in summary.body
        assert all(c.key in summary.body for c in f.copies)
    assert steps.next_after_summary(summary, dry_run=False) == "approve"
    assert steps.next_after_summary(summary, dry_run=True) is None
    # A folder store frees what it deletes; a bucket that keeps older versions does not, and the gate says so.
    assert not proposal.store_keeps_versions and "older versions" not in summary.body
    versioned = steps.summarize([proposal.model_copy(update={"store_keeps_versions": True})])
    assert "keeps older versions" in versioned.body and "not freed by this run" in versioned.body


def test_a_queue_manager_without_a_library_save_keeps_everything_and_needs_no_gate(bare_settings, bare_fleet):
    settings, sim_fleet = bare_settings, bare_fleet
    (found,) = maintenance.select_targets(settings, [], []).targets
    sim_fleet.host().advance(timedelta(hours=2))
    with host_session(settings, "ibmi1") as session:
        expiry_scene.maintain(
            session,
            found.target,
            host="ibmi1",
            tz=found.tz,
            catalog=catalog(settings),
            store=store(settings),
            run_id="maint1",
        )
    proposal = steps.plan_one(settings, found, "expiry1", POLICY)
    assert proposal.plan.gaps and proposal.plan.steps == []
    summary = steps.summarize([proposal])
    assert not summary.anything_to_delete and "Nothing is discarded" in summary.body
    assert steps.next_after_summary(summary, dry_run=False) is None
    outcome = steps.execute_one(settings, proposal, "expiry1", POLICY)
    assert outcome.discarded == [] and outcome.store_deleted == [] and not outcome.failed


def rejected_report(settings, target, answer: dict | None = None) -> str:
    """The report of run expiry1 whose gate was rejected (its task succeeded, no value); `answer`: what the gate
    left under ANSWER_KEY."""
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    return steps.report(
        settings,
        "expiry1",
        dry_run=False,
        summary=steps.summarize([proposal]).to_xcom(),
        outcomes=None,
        approval=None,
        approve_state="success",
        answer=answer,
    )


def test_the_report_says_a_rejected_run_deleted_nothing(settings, target):
    text = rejected_report(settings, target)
    assert "Outcome: rejected at the approval gate: nothing was deleted" in text
    assert settings.expiry_report_file("expiry1").read_text() == text


def test_the_report_names_who_rejected_from_the_answer_the_gate_left(settings, target):
    text = rejected_report(
        settings, target, {"chosen_options": ["Reject"], "responded_by_user": {"id": "7", "name": "Ana"}}
    )
    assert "Outcome: rejected by Ana: nothing was deleted" in text
    assert settings.expiry_note_file("expiry1").read_text(encoding="utf-8") == "rejected by Ana: nothing was deleted"


# --- per batch of hosts: what the DAG's mapped tasks run ----------------------------------------------------------


def test_a_batch_plans_and_expires_like_the_one_queue_manager_steps(settings, target, sim_fleet):
    (proposal,) = steps.plan_batch(settings, HostBatch(targets=[target]), "expiry1", POLICY).outcomes
    assert [s.text for s in proposal.plan.steps] == [
        s.text for s in steps.plan_one(settings, target, "expiry0", POLICY).plan.steps
    ]
    done = steps.execute_batch(settings, [proposal], "expiry1", POLICY)
    assert done.failures == {}
    (outcome,) = done.outcomes
    assert set(outcome.discarded) == planned_files(proposal)
    assert not set(sim_fleet.host().partition.save_files) & planned_files(proposal)


def test_a_batch_names_a_queue_manager_whose_copy_stayed_in_the_store_and_still_reports_what_it_did(
    settings, target, monkeypatch
):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    stuck = sorted(proposal.approved_keys)[0]
    refuse_store_delete(monkeypatch, stuck)
    done = steps.execute_batch(settings, [proposal], "expiry1", POLICY)
    (outcome,) = done.outcomes
    assert outcome.discarded and [k for k, _ in outcome.store_failed] == [stuck]
    assert list(done.failures) == ["ibmi1/TEST"] and stuck in done.failures["ibmi1/TEST"]
    pushed = []
    with pytest.raises(QueueManagersFailed, match=r"ibmi1/TEST.*still in the backup store"):
        finish(done, HostBatch(targets=[target]), pushed.append, doing="expiry")
    assert pushed == [[outcome.to_xcom()]]


def test_a_batch_whose_plans_run_nothing_on_the_partition_opens_no_session(settings, target, monkeypatch):
    proposal = steps.plan_one(settings, target, "expiry1", POLICY)
    host_only = proposal.model_copy(update={"leftover_copies": [], "save_files": []})
    steps.execute_one(settings, host_only, "expiry1", POLICY)  # the host's part only: its copies stay behind
    later = steps.plan_one(settings, target, "expiry2", POLICY)
    assert not steps.runs_on_host(later) and later.leftover_copies

    def no_session(*args, **kwargs):
        raise AssertionError("a session was opened for a plan that runs nothing on the partition")

    monkeypatch.setattr(hostwork, "host_session", no_session)
    done = steps.execute_batch(settings, [later], "expiry2", POLICY)
    assert done.failures == {}
    (outcome,) = done.outcomes
    assert set(outcome.store_deleted) == proposal.approved_keys
