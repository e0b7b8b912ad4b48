"""mq_journal_maintenance on real Airflow, the real Spark job and the simulator over SSH (acceptance of issue 5)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from mqjournal.airflow.settings import safe
from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.cli import main
from mqjournal.ibmi import hostdigest
from mqjournal.ibmi.audit import read_audit, read_events
from mqjournal.linuxmq.extentstore import ExtentStore
from mqjournal.linuxsim.host import LinuxSimulatedHost
from mqjournal.reportlinks import report_link_markdown, without_report_link
from mqjournal.sim.host import SimulatedHost
from tests.dags.harness import run_driver

pytestmark = pytest.mark.e2e

# The scenarios one approval serves, in one run (tests/dags/maintenance_driver.py).
RUN_OF_THREE = ("approved", "needed-again", "partial")

# The host's SHA-256 programs, as the preflight finds the one a partition has (on /dev/null: ibmi/hostdigest.py).
DIGESTS = tuple(f"{tool.program} " for tool in hostdigest.TOOLS)


@pytest.fixture(scope="module")
def e2e(tmp_path_factory, spark_connect):
    workdir = tmp_path_factory.mktemp("maintenance")
    return workdir, run_driver("maintenance_driver.py", workdir, timeout=1200, spark_connect=spark_connect)


def partition(workdir: Path, host: str) -> SimulatedHost:
    return SimulatedHost.load(workdir / "state" / f"{host}.json")


def mapped(run: dict, task_id: str) -> dict[str, str]:
    """The states of a mapped task's instances, by their label (the host each works on)."""
    return {run["labels"][key]: state for key, state in run["tasks"].items() if key.startswith(f"{task_id}[")}


def planned_deletes(workdir: Path, run_id: str, host: str) -> list[str]:
    rows = pq.read_table(workdir / "data" / "plans" / f"run_id={safe(run_id)}" / "receivers").to_pylist()
    return sorted(r["receiver"] for r in rows if r["host"] == host and r["action"] in ("delete", "save_then_delete"))


def test_approved_run_deletes_exactly_the_planned_receivers_and_nothing_needed_is_lost(e2e):
    workdir, results = e2e
    run = results["approved"]
    assert run["state"] == "success" and run["answered"]
    assert run["tasks"]["approve[-1]"] == "success" and mapped(run, "delete")["approved"] == "success"
    host = partition(workdir, "approved")
    planned = planned_deletes(workdir, run["run_id"], "approved")
    assert planned, "the plan should have had receivers to delete"
    catalog = Catalog(f"sqlite:///{workdir / 'data' / 'catalog.db'}")
    # The grid tells the outcome without opening anything: the note (the run's deletes on its three partitions), and
    # each mapped task named for its host: the work is mapped per host, each queue manager named in its log.
    deleted = sum(len(catalog.deletions_for(h, lib)) for h in RUN_OF_THREE for lib in ("QMTEST", "QMOTHER"))
    assert run["note"].startswith(f"approved by On-call engineer: {deleted} deleted, "), run["note"]
    assert set(mapped(run, "delete")) == set(mapped(run, "checkpoint_and_collect")) == set(RUN_OF_THREE)
    report = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.md").read_text()
    html = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.html").read_text()
    assert "On-call engineer" in report and "On-call engineer" in html and "{" not in report
    assert not set(planned) & {r.name for r in host.partition.receivers_in("QMTEST")}
    assert sorted(d.receiver for d in catalog.deletions_for("approved", "QMTEST")) == planned
    # Every deleted receiver's save file is in the backup store, its checksum matching.
    store = BackupStore(workdir / "data" / "backups")
    live = {r.name: r for r in SimulatedHost.load(workdir / "state" / "approved.json").partition.receivers_in("QMTEST")}
    for d in catalog.deletions_for("approved", "QMTEST"):
        (copy, *_) = catalog.off_partition_copies("approved", "QMTEST", d.receiver, d.attached_at)
        assert store.verify(copy.key).ok and copy.store_url == store.url
    assert not set(planned) & set(live)
    # Every deleted receiver is in the catalog and restores from its save file.
    for name in planned:
        (save,) = catalog.saves_of("approved", "QMTEST", name)
        result = host.run(
            f"system 'RSTOBJ OBJ({name}) SAVLIB(QMTEST) DEV(*SAVF) OBJTYPE(*JRNRCV) SAVF({save.save_file_library}/{save.save_file})'",
            "MQADMIN",
        )
        assert result.exit_status == 0, result.stderr
    # Nothing needed was lost: a crash and STRMQM, and RCRMQMOBJ of every object, still succeed.
    for name in planned:
        host.run(f"system 'DLTJRNRCV JRNRCV(QMTEST/{name})'", "MQADMIN")
    with host.state() as p:
        from mqjournal.sim import mq

        mq.crash(p, p.queue_manager("TEST"))
        objects = [o.name for o in p.queue_manager("TEST").objects if o.name != "QMGR"]
        for name in objects:
            p.queue_manager("TEST").object(name).damaged = True
    assert host.run("system 'STRMQM MQMNAME(TEST)'", "MQADMIN").exit_status == 0
    for name in objects:
        result = host.run(f"system 'RCRMQMOBJ OBJ({name}) OBJTYPE(*Q) MQMNAME(TEST)'", "MQADMIN")
        assert result.exit_status == 0, result.stderr


def test_rejected_run_deletes_nothing(e2e):
    workdir, results = e2e
    run = results["rejected"]
    assert run["answered"] and run["tasks"]["delete[0]"] == "skipped" and run["state"] == "success"
    report = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.md").read_text()
    assert "rejected by On-call engineer: nothing deleted" in report
    assert without_report_link(run["note"]) == "rejected by On-call engineer: nothing deleted"
    # The note ends with the link to the run's report page, which the plugin serves.
    assert run["note"].endswith(f" ({report_link_markdown('mq_journal_maintenance', run['run_id'])})"), run["note"]
    assert run["note"] != results["approved"]["note"]
    host = partition(workdir, "rejected")
    rows = pq.read_table(workdir / "data" / "plans" / f"run_id={safe(run['run_id'])}" / "receivers").to_pylist()
    planned = {r["receiver"] for r in rows if r["host"] == "rejected"}
    assert any(r["action"] != "keep" for r in rows if r["host"] == "rejected")
    assert {r.name for r in host.partition.receivers_in("QMTEST")} == planned


def test_a_receiver_needed_again_before_approval_survives(e2e):
    workdir, results = e2e
    run = results["needed-again"]
    assert mapped(run, "delete")["needed-again"] == "success"
    host = partition(workdir, "needed-again")
    names = [r.name for r in host.partition.journal_receivers(host.partition.journals["QMTEST/AMQAJRN"])]
    # The second receiver of the chain became needed between plan and approval: it and every later one stay.
    assert "AMQA000000" not in names
    assert names[0] == "AMQA000001"


def test_a_partition_not_ready_fails_the_run_at_the_preflight_and_only_reads(e2e):
    workdir, results = e2e
    run = results["not-ready"]
    # Failed, not green: the failed_steps leaf fails the run although the report (ALL_DONE) ran.
    assert run["state"] == "failed", run
    assert run["tasks"]["preflight[-1]"] == "failed" and run["tasks"]["failed_steps[-1]"] == "failed"
    assert run["tasks"]["checkpoint_and_collect[-1]"] == "upstream_failed"
    assert not run["answered"]
    sent = [r["command"] for r in read_audit(workdir / "data" / "audit.jsonl") if r["host"] == "not-ready"]
    # Only reads: the login check, SQL SELECTs, mqs.ini, and CHKOBJ (which changes nothing).
    reads = ("true", "/QOpenSys/usr/bin/qsh -c 'db2 ", "cat /QIBM/UserData/mqm/mqs.ini", "system 'CHKOBJ ", *DIGESTS)
    assert sent and [c for c in sent if not c.startswith(reads)] == []


def test_approving_one_of_two_queue_managers_deletes_only_its_receivers_and_the_report_names_the_other(e2e):
    workdir, results = e2e
    run = results["partial"]
    # One task for the host: it deletes for the chosen queue manager only (the receivers below prove which).
    assert mapped(run, "delete")["partial"] == "success", run
    rows = pq.read_table(workdir / "data" / "plans" / f"run_id={safe(run['run_id'])}" / "receivers").to_pylist()
    host = partition(workdir, "partial")
    for library, deleted in (("QMTEST", True), ("QMOTHER", False)):
        planned = {
            r["receiver"]
            for r in rows
            if r["qmgr_library"] == library and r["action"] in ("delete", "save_then_delete")
        }
        assert planned, library
        live = {r.name for r in host.partition.receivers_in(library)}
        assert planned.isdisjoint(live) if deleted else planned <= live, library
    # partial/OTHER, and the Linux host's QM.MAN (the same run and gate): two declined.
    assert "2 queue managers declined" in run["note"], run["note"]
    report = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.md").read_text()
    assert "partial/OTHER" in report and "declined" in report.lower()


def test_a_linux_queue_managers_extents_go_through_the_same_run_and_gate_with_proven_copies(e2e):
    """#32: the Linux host shares the approved run. Both of its queue managers' extents behind RECLOG and MEDIALOG
    are archived before the gate (into the same backup store, vouched for by the host's sha256sum); only the chosen
    one's are released (SET LOG ARCHIVED in Archive mode); the declined one's stay; both restart."""
    workdir, results = e2e
    run = results["linux"]
    assert run["state"] == "success", run
    assert run["tasks"]["linux_collect[-1]"] == run["tasks"]["linux_archive[-1]"] == "success", run["tasks"]
    assert run["tasks"]["linux_release[-1]"] == "success", run["tasks"]
    catalog = Catalog(f"sqlite:///{workdir / 'data' / 'catalog.db'}")
    store = ExtentStore(workdir / "data" / "backups")
    linux = LinuxSimulatedHost.load(workdir / "state" / "linux.linux.json")
    assert linux is not None
    # Every extent a command of the run could have let go: each command is in the audit log before it is sent.
    audit = [r for r in read_events(workdir / "data" / "audit.jsonl") if r.get("host") == "linux"]
    let_go = {
        name
        for r in audit
        if r.get("event") == "intent" and "ARCHIVED" in (r.get("input") or "")
        for name in r["input"].split("'")
        if name.endswith(".LOG")
    }
    for qmgr in ("QM.ARCH", "QM.MAN"):
        copies = catalog.extent_copies("linux", qmgr)
        assert copies, qmgr
        for c in copies:
            assert c.sha256 == c.host_sha256 and store.still_holds(c, reread=True) is None, c
    arch = {c.extent for c in catalog.extent_copies("linux", "QM.ARCH")}
    assert let_go and let_go <= arch, (let_go, arch)  # only the chosen queue manager's, each with a proven copy
    with linux.state() as host:
        manual = host.queue_managers["QM.MAN"]
        kept = {c.extent for c in catalog.extent_copies("linux", "QM.MAN")} & set(manual.extents)
        assert kept == {c.extent for c in catalog.extent_copies("linux", "QM.MAN")}, "the declined one keeps all"
    report = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.md").read_text()
    assert "linux/QM.ARCH" in report and "released (told to MQ with SET LOG ARCHIVED)" in report
    assert "linux/QM.MAN" in report and "declined at the approval gate" in report
    for qmgr in ("QM.ARCH", "QM.MAN"):
        for command in (f"/opt/mqm/bin/endmqm -i {qmgr}", f"/opt/mqm/bin/strmqm {qmgr}"):
            result = linux.run(command, "mqjournal")
            assert result.exit_status == 0, (command, result.stdout, result.stderr)


def test_a_dry_run_sends_no_command_that_changes_the_partition(e2e):
    workdir, results = e2e
    run = results["dry-run"]
    assert run["state"] == "success" and run["tasks"]["approve[-1]"] == "skipped" and not run["answered"]
    assert without_report_link(run["note"]) == "dry run: plan only, nothing saved or deleted"
    sent = [r["command"] for r in read_audit(workdir / "data" / "audit.jsonl") if r["host"] == "dry-run"]
    reads = ("true", "/QOpenSys/usr/bin/qsh -c 'db2 ", "cat /QIBM/UserData/mqm/mqs.ini", "system 'CHKOBJ ", *DIGESTS)
    assert sent and [c for c in sent if not c.startswith(reads)] == []
    report = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.md").read_text()
    assert "approv" not in report.lower()


def test_a_gate_nobody_answers_deletes_nothing_and_fails_the_run(e2e):
    workdir, results = e2e
    run = results["timeout"]
    assert run["state"] == "failed" and run["tasks"]["approve[-1]"] == "failed", run
    deletes = [state for task, state in run["tasks"].items() if task.startswith("delete[")]
    assert deletes and set(deletes) <= {"upstream_failed", "skipped"}, run
    assert run["note"].startswith("no answer before the gate's timeout"), run["note"]
    rows = pq.read_table(workdir / "data" / "plans" / f"run_id={safe(run['run_id'])}" / "receivers").to_pylist()
    planned = {r["receiver"] for r in rows if r["host"] == "timeout"}
    assert {r.name for r in partition(workdir, "timeout").partition.receivers_in("QMTEST")} == planned


def test_a_queue_manager_that_cannot_start_has_its_recovery_triggered_with_the_alerts_values(e2e):
    workdir, results = e2e
    run = results["cannot-start"]
    assert run["tasks"]["on_call[-1]"] == "success", run
    assert [s for t, s in run["tasks"].items() if t.startswith("trigger_recovery[")] == ["success"], run
    # One recovery, of the queue manager that cannot start, with the alert's values: its plan waits at its gate.
    (recovery,) = results["recovery_runs"]
    assert recovery["run_id"].startswith("oncall__cannot-start__TEST__startup__"), recovery
    conf = recovery["conf"]
    assert (conf["host"], conf["qmgr"], conf["kind"]) == ("cannot-start", "TEST", "startup") and conf["timestamp"]
    assert "QMGR_CANNOT_START: STRMQM will fail with AMQ7432: needed receiver" in recovery["note"], recovery
    # The alert told the truth: STRMQM on the partition ends with AMQ7432.
    strmqm = partition(workdir, "cannot-start").run("system 'STRMQM MQMNAME(TEST)'", "MQADMIN")
    assert strmqm.exit_status != 0 and "AMQ7432" in strmqm.stderr


def test_copies_that_failed_fail_the_save_yet_the_gate_opens_warning_and_the_note_says_what_was_left_undone(e2e):
    """The timeout partition's save files could not be copied into the backup store (every download dropped)."""
    workdir, results = e2e
    run = results["timeout"]
    assert mapped(run, "save")["timeout"] == "failed", run
    # The gate was asked all the same (it failed by its timeout, not for the save), warning above its table.
    assert run["gate_body"] is not None and run["tasks"]["approve[-1]"] == "failed"
    body = run["gate_body"]
    assert body.index("**Warning: this run's saves left work undone.**") < body.index("| host |")
    assert "> - timeout/TEST: not deleted whatever the answer: AMQA" in body
    assert "was not copied into the backup store" in body
    note = without_report_link(run["note"]) or ""
    assert "; LEFT UNDONE on 1 queue manager: timeout/TEST (save file QGPL/" in note, note
    html = (workdir / "data" / "reports" / f"{safe(run['run_id'])}.html").read_text()
    assert "Left undone (the run failed on it" in html
    assert BackupStore(workdir / "data" / "backups").list_objects(host="timeout") == []


def test_a_ready_run_is_not_failed_by_the_watcher(e2e):
    _, results = e2e
    assert results["approved"]["tasks"]["failed_steps[-1]"] == "skipped"


def test_a_catalog_rebuilt_from_the_runs_store_has_its_stored_objects_and_saves(e2e, tmp_path):
    """The catalog database lost: `mqjournal catalog rebuild --from-store` on an empty one brings back every copy the
    real maintenance run made, and the receiver saves each proves, as the run recorded them."""
    workdir, _ = e2e
    store = BackupStore(workdir / "data" / "backups")
    original = Catalog(f"sqlite:///{workdir / 'data' / 'catalog.db'}")
    url = f"sqlite:///{tmp_path / 'rebuilt.db'}"

    assert main(["catalog", "rebuild", "--from-store", store.url, "--catalog", url]) == 0

    rebuilt = Catalog(url)
    hosts = {s.host for s in store.list_objects()}
    assert hosts, "the approved run should have copied save files into the store"
    for host in hosts:
        # A rebuilt catalog holds its copies as claims (their sidecars), not as proof, until matched with the host.
        assert rebuilt.stored_objects(host) == []
        assert rebuilt.stored_objects(host, unproven=True) == original.stored_objects(host)
        for stored in original.stored_objects(host):
            for o in stored.objects:
                keep = ("receiver", "library", "attached_at", "save_file_library", "save_file", "last_sequence")
                before = [s.model_dump(include=set(keep)) for s in original.saves_of(host, o.library, o.receiver)]
                after = [s.model_dump(include=set(keep)) for s in rebuilt.saves_of(host, o.library, o.receiver)]
                assert after == before
