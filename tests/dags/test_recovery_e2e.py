"""mq_journal_maintenance then mq_journal_recovery on real Airflow and the simulator over SSH (acceptance of
issue 6): the recovery DAG restores exactly what is needed, in order, from the catalog's save files, and the queue
manager starts (or recreates the damaged object); a plan with a gap changes nothing. Acceptance of issue 15 (the
store scenario): every deleted receiver's save file is in the backup store with a matching checksum, the cleanup
removes the save files from the host after keep_on_host_days by the partition's clock, and a lost queue manager
library is restored from the store alone."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import read_audit
from mqjournal.ibmi.commands import save_file_path
from mqjournal.ibmi.routeprobe import PROBE_FILE
from mqjournal.names import ReceiverName
from tests.dags.harness import run_driver

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def e2e(tmp_path_factory, spark_connect):
    workdir = tmp_path_factory.mktemp("recovery")
    results = run_driver("recovery_driver.py", workdir, timeout=1500, spark_connect=spark_connect)
    audit = [r for r in read_audit(workdir / "data" / "audit.jsonl") if r["at"] >= results["recovery_started_at"]]
    results["workdir"] = str(workdir)
    return results, audit


def sent(audit: list[dict], host: str, verb: str) -> list[str]:
    return [r["command"] for r in audit if r["host"] == host and r["outcome"] == "ok" and verb in r["command"]]


def restored(audit: list[dict], host: str) -> list[str]:
    return [c.split("RSTOBJ OBJ(")[1].split(")")[0] for c in sent(audit, host, "RSTOBJ OBJ(")]


def names(chain: list) -> list[str]:
    return [name for name, _ in chain]


def test_the_maintenance_run_saved_and_deleted_before_the_trouble(e2e):
    results, _ = e2e
    run = results["maintenance"]
    assert run["state"] == "success" and run["answered"], run
    assert run["tasks"]["delete[0]"] == "success"


def test_startup_recovery_restores_the_deleted_receiver_and_strmqm_succeeds(e2e):
    results, audit = e2e
    staged, run = results["staged"]["startup"], results["startup"]
    assert staged["delete_status"] == 0 and staged["strmqm_before"] != 0 and "AMQ7432" in staged["strmqm_before_out"]
    assert run["state"] == "success", run
    assert run["tasks"]["approve"] == "success" and run["tasks"]["execute"] == "success"
    assert run["tasks"]["report"] == "success"
    assert restored(audit, "startup") == staged["deleted"]
    assert sent(audit, "startup", "STRMQM")
    assert run["running"] is True
    assert set(staged["deleted"]) <= set(names(run["chain_after"]))


def test_media_recovery_restores_newest_first_and_rcrmqmobj_recreates_the_queue(e2e):
    results, audit = e2e
    staged, run = results["staged"]["media"], results["media"]
    assert staged["rcrmqmobj_before"] != 0 and "AMQ7432" in staged["out"]
    assert run["state"] == "success", run
    # Exactly the receivers deleted out of band, newest first.
    assert restored(audit, "media") == list(reversed(staged["deleted"]))
    assert sent(audit, "media", "RCRMQMOBJ")
    assert run["damaged"] == [] and run["running"] is True


def test_library_recovery_restores_the_lost_library_and_refreshes_the_cluster(e2e):
    results, audit = e2e
    run = results["library"]
    assert results["staged"]["library"]["dltlib"] == 0
    assert run["state"] == "success", run
    commands = sent(audit, "library", "")
    rstlib = [c for c in commands if "RSTLIB" in c]
    assert rstlib and results["library_save"] in rstlib[0] and "OMITOBJ" in rstlib[0]
    # The pitfall: a receiver of a new restore generation and a journal on it, before any receiver is restored.
    crtjrnrcv = [i for i, c in enumerate(commands) if "CRTJRNRCV" in c]
    crtjrn = [i for i, c in enumerate(commands) if "CRTJRN JRN(" in c]
    first_rstobj = next(i for i, c in enumerate(commands) if "RSTOBJ" in c)
    assert crtjrnrcv and crtjrn and crtjrnrcv[0] < crtjrn[0] < first_rstobj
    assert "AMQA1" in commands[crtjrnrcv[0]]
    assert run["running"] is True
    refresh = sent(audit, "library", "RFRMQMCL")
    assert refresh and all("REPOS(*NO)" in c for c in refresh)
    assert restored(audit, "library"), "receivers saved after the library save are restored"


def test_naming_repair_resumes_switching_by_rule_1(e2e):
    results, audit = e2e
    staged, run = results["staged"]["naming"], results["naming"]
    assert run["state"] == "success", run
    chain = names(run["chain_after"])
    new = chain[-1]
    assert new != staged["attached"] and new != staged["taken"]
    assert sent(audit, "naming", f"CHGJRN JRN(QMTEST/AMQAJRN) JRNRCV(QMTEST/{new})")
    # Later receivers follow rule 1 from the new one.
    later = names(run["chain_later"])
    following = later[later.index(new) + 1 :]
    assert following, "the simulator should have switched receivers again after an hour"
    expected = new
    for name in following:
        expected = str(ReceiverName.parse(expected).successor())
        assert name == expected


def test_a_plan_with_nothing_to_do_needs_no_approval(e2e):
    results, _audit = e2e
    again = results["naming-again"]
    assert again["state"] == "success", again
    assert again["tasks"]["approve"] == "skipped" and again["tasks"]["execute"] == "skipped"
    assert again["tasks"]["report"] == "success"


def test_a_plan_with_a_gap_fails_before_the_gate_and_changes_nothing(e2e):
    results, audit = e2e
    staged, run = results["gap"], results["staged"]["gap"]
    assert staged["state"] == "failed"
    assert staged["tasks"]["blocked"] == "failed"
    assert staged["tasks"]["approve"] == "skipped" and staged["tasks"]["execute"] == "skipped"
    assert staged["tasks"]["report"] == "success"
    assert staged["chain_after"] == run["chain_before"]
    changing = [
        r["command"]
        for r in audit
        if r["host"] == "gap"
        and not r["command"].startswith("cat ")
        and not (commands.sql_statements(r["command"]) or [""])[0].startswith("SELECT")
    ]
    assert changing == []
    assert staged["running"] is False


# --- store: issue 15's acceptance ----------------------------------------------------------------------------------


def catalog_and_store(results: dict) -> tuple[Catalog, BackupStore]:
    data = Path(results["workdir"]) / "data"
    return Catalog(f"sqlite:///{data / 'catalog.db'}"), BackupStore(data / "backups")


def made_before_the_recovery(results: dict) -> list[str]:
    """Every save file mqjournal created on the store scenario's partition before the recovery (CRTSAVF) to save
    into; not the preflight's download probe, which it deletes itself (routeprobe)."""
    audit = read_audit(Path(results["workdir"]) / "data" / "audit.jsonl")
    created = [
        r["command"]
        for r in audit
        if r["host"] == "store" and r["outcome"] == "ok" and r["at"] < results["recovery_started_at"]
    ]
    made = {c.split("CRTSAVF FILE(")[1].split(")")[0] for c in created if "CRTSAVF FILE(" in c}
    return sorted(path for path in made if path.split("/")[1] != PROBE_FILE)


def test_store_every_deleted_receivers_save_file_is_in_the_store_with_a_matching_checksum(e2e):
    results, _ = e2e
    assert results["maintenance"]["state"] == "success"
    catalog, store = catalog_and_store(results)
    deletions = catalog.deletions_for("store", "QMTEST")
    assert deletions, "maintenance should have deleted receivers on the store scenario's partition"
    for d in deletions:
        copies = catalog.off_partition_copies("store", "QMTEST", d.receiver, d.attached_at)
        assert copies, f"{d.receiver} was deleted without a copy of its save in the store"
        for copy in copies:
            check = store.verify(copy.key)
            assert check.ok, check.problem
            assert check.sha256 == copy.sha256 and check.size_bytes == copy.size_bytes
            assert copy.store_url == store.url


def test_store_the_library_save_is_copied_into_the_store(e2e):
    results, _ = e2e
    saved = results["store_library_save"]
    assert saved["not_copied"] == "" and saved["stored_key"]
    catalog, store = catalog_and_store(results)
    (stored,) = [s for s in catalog.stored_objects("store", "TEST") if s.key == saved["stored_key"]]
    assert stored.save_file_path == saved["save_file"] and store.verify(stored.key).ok


def test_store_the_cleanup_removes_every_save_file_from_the_host_after_keep_on_host_days(e2e):
    results, _ = e2e
    run, staged = results["store-cleanup"], results["staged"]["store"]
    assert run["quiet"] == [0, 0], "ENDMQM and STRMQM around the quiet spell"
    assert run["state"] == "success", run
    assert run["tasks"]["clean_up[0]"] == "success"
    catalog, store = catalog_and_store(results)
    made = made_before_the_recovery(results)
    # The library save and the maintenance run's receiver saves.
    assert results["store_library_save"]["save_file"] in made and len(made) >= 2, made
    # Gone from the host (nothing else on this partition has a save file), each removed by the cleanup.
    assert staged["save_files_on_host"] == []
    assert set(made) <= catalog.removed_from_host("store")
    # Each is in the store, verifying, and its copy is what the catalog recorded.
    copies = {s.save_file_path: s for s in catalog.stored_objects("store", "TEST")}
    assert set(made) <= set(copies)
    for path in made:
        check = store.verify(copies[path].key)
        assert check.ok and check.sha256 == copies[path].sha256, (path, check.problem)
    # Removed by that maintenance run's cleanup (DLTF), each once, and by nothing before it.
    audit = read_audit(Path(results["workdir"]) / "data" / "audit.jsonl")
    dltf = [
        (datetime.fromisoformat(r["at"]), r["command"].split("DLTF FILE(")[1].split(")")[0])
        for r in audit
        if r["host"] == "store"
        and r["outcome"] == "ok"
        and "DLTF FILE(" in r["command"]
        and f"/{PROBE_FILE})" not in r["command"]
    ]
    during = (datetime.fromisoformat(run["started_at"]), datetime.fromisoformat(run["ended_at"]))
    assert all(during[0] <= at <= during[1] for at, _ in dltf), dltf
    assert sorted(path for _, path in dltf) == made


def test_store_a_lost_library_is_restored_from_the_store_alone_and_strmqm_succeeds(e2e):
    results, audit = e2e
    staged, run = results["staged"]["store"], results["store"]
    assert staged["dltlib"] == 0
    # From the store alone: no save file of any kind was on the partition when the recovery started.
    assert staged["save_files_on_host_after_dltlib"] == []
    assert run["state"] == "success", run
    assert run["tasks"]["approve"] == "success" and run["tasks"]["execute"] == "success"
    steps = run["plan"]["steps"]
    at = {a: [i for i, s in enumerate(steps) if s["action"] == a] for a in {s["action"] for s in steps}}

    def path(step: dict, lib: str = "library", name: str = "name") -> str:
        return f"{step['args'][lib]}/{step['args'][name]}"

    reading = at["restore_library"] + at["restore_qmgr_directory"] + at["restore_receiver"]
    reads = [(i, path(steps[i], "save_library", "save_file")) for i in reading]
    assert len(at["restore_library"]) == 1 and at["restore_receiver"]
    uploads = {path(steps[i]): i for i in at["upload_save_file"]}
    created = {path(steps[i]): i for i in at["create_save_file"]}
    checked = {path(steps[i]): i for i in at["check_save_file"]}
    # Every save file a restore reads is created, uploaded from the store and checked before its first read.
    for read_at, read in reads:
        assert created[read] < uploads[read] < checked[read] < read_at, read
    assert set(uploads) == {read for _, read in reads}
    # The uploads are of save files mqjournal made and the cleanup removed, the library save among them, each from
    # its verified copy.
    _, store = catalog_and_store(results)
    origins = {steps[i]["args"]["origin"] for i in at["upload_save_file"]}
    assert results["store_library_save"]["save_file"] in origins
    assert origins <= set(made_before_the_recovery(results))
    assert all(store.verify(str(steps[i]["args"]["key"])).ok for i in at["upload_save_file"])
    # Run: the uploads went over SFTP, each save file is back on the host, and STRMQM succeeded afterwards.
    put = {
        r["command"].removeprefix("SFTP PUT "): r
        for r in audit
        if r["host"] == "store" and r["outcome"] == "ok" and r["command"].startswith("SFTP PUT ")
    }
    assert len(put) == len(uploads)
    for i in at["upload_save_file"]:
        a = steps[i]["args"]
        sent_bytes = put[save_file_path(a["library"], a["name"])]
        assert sent_bytes["sha256"] == store.verify(a["key"]).sha256, a
    assert sorted(run["save_files_on_host"]) == sorted(uploads)
    (library_upload,) = [
        i for i in at["upload_save_file"] if steps[i]["args"]["origin"] == results["store_library_save"]["save_file"]
    ]
    (rstlib,) = sent(audit, "store", "RSTLIB")
    assert f"SAVF({path(steps[library_upload])})" in rstlib
    assert sent(audit, "store", "STRMQM") and run["running"] is True
    # The receivers needed are back: each from the library save's oldest needed one up to the one before the
    # receiver attached at the loss (never saved: lost with the library), and only those.
    back = restored(audit, "store")
    assert back == [steps[i]["args"]["receiver"] for i in at["restore_receiver"]]
    (attached,) = [name for name, status in staged["chain_before"] if status == "ATTACHED"]
    needed = [results["store_library_save"]["oldest_needed"]]
    while (following := str(ReceiverName.parse(needed[-1]).successor())) != attached:
        needed.append(following)
        assert len(needed) < 1000, "the attached receiver does not follow the library save's oldest needed one"
    assert sorted(back) == sorted(needed)
    assert set(needed) <= set(names(run["chain_after"]))
