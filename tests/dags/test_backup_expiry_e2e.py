"""mq_journal_backup_expiry on real Airflow and the simulator over SSH (issue 15, "Lifecycle"): with approval it
deletes exactly what the recovery rules no longer need, on the partition and in the backup store, and a restore plan
of every queue manager is gap-free before and after; rejected, it deletes nothing. Then mq_journal_restore_drill on
the same fleet (issue 28): rejected, it drills nothing; approved, it drills the sample on the partitions, every copy
passes, and no scratch save file is left."""

from __future__ import annotations

import re

import pytest

from mqjournal.airflow.settings import safe
from tests.dags.harness import run_driver

pytestmark = pytest.mark.e2e

EXPIRED = ("approved/TEST", "approved/PAYROLL", "offpartition/TEST")


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("expiry")
    return workdir, run_driver("expiry_driver.py", workdir, timeout=1500)


def test_the_approved_run_succeeds_through_the_gate(e2e):
    workdir, results = e2e
    run = results["approved"]
    assert run["state"] == "success" and run["answered"], run
    assert run["tasks"]["approve[-1]"] == "success" and run["tasks"]["report[-1]"] == "success"
    # One task instance per host (a batch), not per queue manager: approved has TEST and PAYROLL.
    for step in ("plan", "execute"):
        assert {k: v for k, v in run["tasks"].items() if k.startswith(f"{step}[")} == {
            f"{step}[{i}]": "success" for i in range(2)
        }
        assert sorted(v for k, v in run["labels"].items() if k.startswith(f"{step}[")) == ["approved", "offpartition"]
    report = (workdir / "data" / "reports" / f"expiry_{safe(run['run_id'])}.md").read_text()
    discarded = sum(len(results["before"][qm]["proposed"]) for qm in EXPIRED)
    assert "save file(s) discarded" in report and f": {discarded} save file(s) discarded" in report


@pytest.mark.parametrize("qm", EXPIRED)
def test_every_restore_of_every_queue_manager_is_gap_free_before_and_after_expiry(e2e, qm):
    _, results = e2e
    for when in ("before", "after"):
        state = results[when][qm]
        assert state["restore_gaps"] == {}, (when, state["restore_gaps"])
        # A startup recovery and a library restore from each library save the policy keeps (two).
        assert [r.split()[0] for r in state["restores"]] == ["library", "library", "startup"]


@pytest.mark.parametrize("qm", EXPIRED)
def test_the_approved_run_deletes_exactly_what_the_planner_no_longer_needs(e2e, qm):
    _, results = e2e
    before, after = results["before"][qm], results["after"][qm]
    host = qm.split("/")[0]
    proposed = set(before["proposed"])
    assert before["gaps_in_expiry_plan"] == []
    # Discarded in the catalog: exactly the proposal (the host's other queue managers' files aside).
    newly = set(after["discarded"]) - set(before["discarded"])
    mine = {path for path in newly if path in set(before["copies"].values()) | proposed}
    assert mine == proposed
    # On the partition: the proposed save files of the host's queue managers are gone, every other one is there.
    of_host = set().union(*(set(results["before"][k]["proposed"]) for k in EXPIRED if k.startswith(f"{host}/")))
    assert set(after["save_files_on_host"]) == set(before["save_files_on_host"]) - of_host
    # In the store: the copies of the proposed save files are gone, every other copy is still there.
    doomed = {key for key, path in before["copies"].items() if path in proposed}
    assert set(after["copies_in_store"]) == set(before["copies_in_store"]) - doomed
    # Nothing more to discard now.
    assert after["proposed"] == []
    if host == "offpartition":
        assert not set(before["save_files_on_host"]) & proposed  # only in the store: still deleted there


def test_the_plain_queue_manager_had_save_files_to_expire_and_the_offpartition_one_only_copies(e2e):
    _, results = e2e
    assert results["before"]["approved/TEST"]["proposed"]
    offpartition = results["before"]["offpartition/TEST"]
    assert offpartition["proposed"] and not set(offpartition["proposed"]) & set(offpartition["save_files_on_host"])


def test_a_rejected_run_deletes_nothing(e2e):
    workdir, results = e2e
    run = results["rejected"]
    assert run["answered"] and run["tasks"]["approve[-1]"] == "success"
    executes = {state for task, state in run["tasks"].items() if task.startswith("execute[")}
    assert executes == {"skipped"}
    before, after = results["before"]["rejected/TEST"], results["after"]["rejected/TEST"]
    assert before["proposed"] and after["proposed"] == before["proposed"]
    assert after["save_files_on_host"] == before["save_files_on_host"]
    assert after["copies_in_store"] == before["copies_in_store"] and after["discarded"] == before["discarded"] == []
    report = (workdir / "data" / "reports" / f"expiry_{safe(run['run_id'])}.md").read_text()
    assert re.search(r"Outcome: rejected by \S.*: nothing was deleted", report), report


# --- mq_journal_restore_drill on the same fleet, after the expiry ---------------------------------------------------


def test_a_rejected_restore_drill_drills_nothing(e2e):
    _, results = e2e
    run = results["drill_rejected"]
    assert run["answered"] and run["tasks"]["approve[-1]"] == "success", run
    assert run["tasks"]["drill[-1]"] == "skipped" and run["drills"] == []
    assert run["note"].startswith("rejected") and run["note"].endswith("nothing was drilled"), run["note"]


def test_an_approved_restore_drill_drills_the_sample_on_the_partitions_and_every_copy_passes(e2e):
    workdir, results = e2e
    run = results["drill_approved"]
    assert run["state"] == "success" and run["answered"], run
    assert {t: run["tasks"][f"{t}[-1]"] for t in ("propose", "approve", "drill", "report")} == dict.fromkeys(
        ("propose", "approve", "drill", "report"), "success"
    )
    # The default sample: two copies, neither discarded by the expiry that ran before; each passed, and its
    # scratch save file was deleted.
    drilled = run["drills"]
    assert len(drilled) == 2 and {d["outcome"] for d in drilled} == {"passed"}, drilled
    assert all(d["key"] in results["stored_copies"] and d["scratch"].split("/")[1].startswith("DRL") for d in drilled)
    assert run["scratch_left_on_hosts"] == []
    assert re.fullmatch(r"approved by [^:]+: 2 copies drilled, 2 passed", run["note"]), run["note"]
    report = (workdir / "data" / "reports" / f"drill_{safe(run['run_id'])}.md").read_text()
    assert all(f"PASSED: {d['key']}" in report for d in drilled)
    # The rejected run drilled nothing, so this run's sample is the first drill of each of its copies.
    assert all(results["stored_copies"][d["key"]]["proves"] for d in drilled)
