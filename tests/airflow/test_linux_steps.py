"""The Linux queue managers in the maintenance run's gate, summary and report (#32: mqjournal.airflow.linuxwork)."""

from __future__ import annotations

from mqjournal.airflow import linuxwork
from mqjournal.airflow.approval import DELETE_NOTHING, approval_options, read_answer
from mqjournal.airflow.xcom import RunPlan
from mqjournal.linuxmq.planned import LinuxPlanned
from mqjournal.outcomes import LinuxArchiveResult, LinuxReleaseResult
from mqjournal.runreport import RunFacts, render_markdown
from tests.plan.builders import planned_queue_manager

MB = 1024**2

PAYMENTS = LinuxPlanned(
    host="mq-linux1",
    qmgr="QM.PAYMENTS",
    log_management="Archive",
    log_path="/var/mqm/log/QM!PAYMENTS/active/",
    current_extent="S0000012.LOG",
    restart_extent="S0000010.LOG",
    media_extent="S0000009.LOG",
    to_archive=["S0000007.LOG", "S0000008.LOG", "S0000009.LOG"],
    to_release=["S0000007.LOG", "S0000008.LOG"],
    bytes_to_release=2 * MB,
    kept=3,
)
AUDIT = LinuxPlanned(
    host="mq-linux1",
    qmgr="QM.AUDIT",
    log_management="Manual",
    log_path="/var/mqm/log/QM!AUDIT/active/",
    current_extent="S0000030.LOG",
    restart_extent="S0000021.LOG",
    media_extent="S0000029.LOG",
    to_archive=["S0000020.LOG"],
    to_release=["S0000020.LOG"],
    bytes_to_release=MB,
    alerts=["restart_stuck: RECLOG S0000021.LOG has not moved in 4 collections while CURRLOG did"],
)
IBMI = planned_queue_manager(
    host="ibmi-prod1", qmgr="ORDERS", qmgr_library="QMORDERS", receivers_to_delete=2, bytes_to_delete=4 * MB
)


def mixed(*linux: LinuxPlanned) -> RunPlan:
    ibmi = RunPlan(
        queue_managers=[IBMI],
        to_delete={"ibmi-prod1/ORDERS/QMORDERS": ["AMQA000001", "AMQA000002"]},
        anything_to_delete=True,
    )
    return linuxwork.with_linux(ibmi, list(linux))


def test_one_gate_offers_each_platforms_queue_managers_in_its_own_terms_and_all_of_them():
    assert approval_options(mixed(PAYMENTS, AUDIT)) == [
        "ibmi-prod1/ORDERS: 2 receivers, 4.0 MB",
        "mq-linux1/QM.AUDIT: 1 log extent, 1.0 MB",
        "mq-linux1/QM.PAYMENTS: 2 log extents, 2.0 MB",
        "All queue managers above: 2 receivers and 3 log extents, 7.0 MB",
        DELETE_NOTHING,
    ]


def test_choosing_a_linux_queue_manager_approves_its_key_only():
    summary = mixed(PAYMENTS, AUDIT)
    assert read_answer(summary, ["mq-linux1/QM.PAYMENTS: 2 log extents, 2.0 MB"]).keys == {"mq-linux1/QM.PAYMENTS"}
    every = read_answer(summary, ["All queue managers above: 2 receivers and 3 log extents, 7.0 MB"]).keys
    assert every == {"ibmi-prod1/ORDERS/QMORDERS", "mq-linux1/QM.PAYMENTS", "mq-linux1/QM.AUDIT"}


def test_a_linux_release_alone_needs_the_gate_and_shows_in_the_plan_text():
    summary = linuxwork.with_linux(RunPlan(), [PAYMENTS])
    assert summary.anything_to_delete
    assert (
        "mq-linux1/QM.PAYMENTS | Archive | S0000012.LOG | S0000010.LOG | S0000009.LOG | 3 | 2 (SET LOG ARCHIVED)"
        in (summary.body)
    )
    nothing = PAYMENTS.model_copy(update={"to_release": [], "bytes_to_release": 0})
    assert not linuxwork.with_linux(RunPlan(), [nothing]).anything_to_delete


def test_an_extent_offered_for_release_but_not_archived_is_named_above_the_gate_and_left_undone():
    summary = mixed(PAYMENTS)
    archived = LinuxArchiveResult(
        host="mq-linux1",
        qmgr="QM.PAYMENTS",
        archived=["S0000007.LOG", "S0000009.LOG"],
        not_archived=[("S0000008.LOG", "the host gave no SHA-256")],
    )
    warning = linuxwork.gate_warning(summary, [archived])
    assert "mq-linux1/QM.PAYMENTS S0000008.LOG: the host gave no SHA-256" in warning
    left = linuxwork.left_undone(summary, [archived], [])
    assert left == {"mq-linux1/QM.PAYMENTS": ["S0000008.LOG not archived, so not released: the host gave no SHA-256"]}
    # An extent only archived (needed by media recovery, not offered for release) is no promise broken.
    only_kept = archived.model_copy(update={"not_archived": [("S0000009.LOG", "dropped")], "archived": []})
    assert linuxwork.gate_warning(summary, [only_kept]) == "" and linuxwork.left_undone(summary, [only_kept], []) == {}


def test_a_release_the_live_plan_keeps_is_no_failure_but_one_the_host_refused_is():
    summary = mixed(PAYMENTS)
    kept = LinuxReleaseResult(
        host="mq-linux1",
        qmgr="QM.PAYMENTS",
        released=["S0000007.LOG"],
        kept=[("S0000008.LOG", "the live plan says mq: behind ARCHLOG: MQ was told it is archived")],
    )
    assert linuxwork.left_undone(summary, [], [kept]) == {}
    refused = kept.model_copy(update={"kept": [("S0000008.LOG", "the host refused it")], "undone": ["S0000008.LOG"]})
    assert linuxwork.left_undone(summary, [], [refused]) == {
        "mq-linux1/QM.PAYMENTS": ["S0000008.LOG not released: the host refused it"]
    }


def test_the_run_report_shows_the_linux_queue_managers_in_mqs_terms():
    summary = mixed(PAYMENTS, AUDIT)
    facts = RunFacts(
        run_id="manual__1",
        outcome="approved by admin",
        approved_by="admin",
        chosen=["mq-linux1/QM.PAYMENTS"],
        declined=["ibmi-prod1/ORDERS/QMORDERS", "mq-linux1/QM.AUDIT"],
        linux=summary.linux,
        linux_archives=[
            LinuxArchiveResult(host="mq-linux1", qmgr="QM.PAYMENTS", archived=PAYMENTS.to_archive),
            LinuxArchiveResult(host="mq-linux1", qmgr="QM.AUDIT", archived=AUDIT.to_archive),
        ],
        linux_releases=[
            LinuxReleaseResult(
                host="mq-linux1", qmgr="QM.PAYMENTS", released=PAYMENTS.to_release, released_bytes=2 * MB
            )
        ],
    )
    text = render_markdown(facts)
    assert "## Linux queue managers (linear logs)" in text
    assert "| mq-linux1/QM.PAYMENTS | Archive | S0000012.LOG | S0000010.LOG | S0000009.LOG | 3 | 2 | 2.0 MB |" in text
    assert "released (told to MQ with SET LOG ARCHIVED): S0000007.LOG-S0000008.LOG (2)" in text
    assert "1 extents to release: declined at the approval gate, nothing released" in text
    assert "alert: restart_stuck: RECLOG S0000021.LOG has not moved" in text
