"""mq_journal_maintenance then mq_journal_recovery on real Airflow and the simulator over SSH (acceptance of
issue 6): the recovery DAG restores exactly what is needed, in order, from the catalog's save files, and the queue
manager starts (or recreates the damaged object); a plan with a gap changes nothing."""

from __future__ import annotations

import pytest

from mqjournal.ibmi import commands
from mqjournal.ibmi.audit import read_audit
from mqjournal.names import ReceiverName
from tests.dags.harness import run_driver

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("recovery")
    results = run_driver("recovery_driver.py", workdir, timeout=1500)
    audit = [r for r in read_audit(workdir / "data" / "audit.jsonl") if r["at"] >= results["recovery_started_at"]]
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
