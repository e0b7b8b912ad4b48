"""mq_journal_recovery on real Airflow for a Linux host of the simulator, over SSH (acceptance of issue #32): after
an extent restart or media recovery needs was deleted by hand, the recovery DAG puts it back from the backup store,
proven by the host's sha256sum, and strmqm starts the queue manager again, or rcrmqobj re-creates the damaged
queue."""

from __future__ import annotations

import pytest

from mqjournal.ibmi.audit import read_events
from tests.dags.harness import run_driver

pytestmark = pytest.mark.e2e

LINUX = "mq-linux1"


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("linux-recovery")
    results = run_driver("linux_recovery_driver.py", workdir, timeout=900)
    # Intents and outcomes, each its own record: what was about to be sent is known before it was.
    events = read_events(workdir / "data" / "audit.jsonl")
    return results, [r for r in events if r["at"] >= results["recovery_started_at"]]


def changed(audit: list[dict]) -> list[str]:
    """What the recovery runs sent that changes the host, in order: uploads, strmqm, rcrmqobj, rm."""
    return [
        r["command"]
        for r in audit
        if r["event"] == "intent"
        and (r.get("transfer") == "put" or any(w in r["command"] for w in ("strmqm", "rcrmqobj", "rm -f")))
    ]


def outcomes(audit: list[dict], word: str) -> list[dict]:
    return [r for r in audit if r["event"] == "outcome" and word in r.get("command", "")]


def test_the_staging_broke_what_it_meant_to_break(e2e):
    staged = e2e[0]["staged"]
    assert staged["startup"]["rm"] == 0 and staged["startup"]["strmqm_before"] != 0
    assert f"AMQ6767E: Log file {staged['startup']['deleted']}" in staged["startup"]["strmqm_before_out"]
    assert staged["startup"]["released"], "maintenance released nothing before the trouble"
    assert staged["media"]["rm"] == 0 and staged["media"]["deleted"] in staged["media"]["archived"]
    assert "AMQ6767E" in staged["media"]["rcrmqobj_before_out"]


def test_startup_recovery_puts_the_deleted_extent_back_from_the_store_and_strmqm_starts_the_queue_manager(e2e):
    results, audit = e2e
    run, deleted = results["startup"], results["staged"]["startup"]["deleted"]
    assert run["state"] == "success", run
    assert run["answered"] and run["tasks"]["approve"] == "success" and run["tasks"]["execute"] == "success"
    startup = [r for r in audit if r.get("host") == LINUX and "QMMEDIA" not in r.get("command", "")]
    sent = changed(startup)
    assert sent[0].startswith("SFTP PUT ") and sent[0].endswith(f"QMSTART/active/{deleted}")
    assert sent[1].endswith("/strmqm QMSTART") and len([c for c in sent if "strmqm" in c]) == 1
    assert [o["exit_status"] for o in outcomes(startup, "strmqm QMSTART")] == [0]
    assert "STATUS(Running)" in run["dspmq"]
    assert f"| {deleted} | 256.0 KB | scheduled__linux_1 |" in run["report"]
    assert "Approved by On-call engineer" in run["report"] and "afterwards: running: CURRLOG" in run["report"]
    assert run["again"] == [0, 0]  # down and up again: the log it replays is whole


def test_media_recovery_puts_the_deleted_extent_back_and_rcrmqobj_recreates_the_damaged_queue(e2e):
    results, audit = e2e
    run, deleted = results["media"], results["staged"]["media"]["deleted"]
    assert run["state"] == "success", run
    media = [r for r in audit if "QMMEDIA" in r.get("command", "")]
    sent = changed(media)
    assert sent[0].startswith("SFTP PUT ") and sent[0].endswith(f"QMMEDIA/active/{deleted}")
    assert sent[-1] == "/opt/mqm/bin/rcrmqobj -m QMMEDIA -t queue APP.REQUEST"
    assert [o["exit_status"] for o in outcomes(media, "rcrmqobj")] == [0]
    assert "AMQ8450I" in run["qstatus"] and "AMQ8149S" not in run["qstatus"]  # no longer damaged
    assert "AMQ8149S" in run["report"]  # the plan said why it read from the queue manager's MEDIALOG


def test_every_extent_put_back_was_proven_on_the_host_after_its_upload(e2e):
    _, audit = e2e
    puts = [r for r in audit if r.get("transfer") == "put"]
    assert [r["event"] for r in puts] == ["intent", "outcome"] * 2 and all(
        r["outcome"] == "ok" for r in puts if r["event"] == "outcome"
    )
    for put in (r for r in puts if r["event"] == "intent"):
        path = put["command"].split()[2]
        digests = [r for r in audit if r["event"] == "outcome" and r.get("command") == f"sha256sum {path}"]
        assert digests and digests[-1]["exit_status"] == 0 and digests[-1]["at"] > put["at"]
