"""The run report a person reads: per queue manager what was saved, deleted, kept and why, declined, alerts, space."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from mqjournal.outcomes import CleanupResult, DeleteResult, SaveResult
from mqjournal.runreport import RunFacts, render_html, render_markdown
from tests.plan.builders import changed, names
from tests.rendered import as_read
from tests.unit.test_explain import fleet_rows

PAYROLL = "ibmi-prod1/PAYROLL/QMPAYROLL"
BILLING = "ibmi-prod2/BILLING/QMBILL01"
KB = 1024


def approved_run(**changes) -> RunFacts:
    """An approved run where the approver chose PAYROLL and declined BILLING."""
    qms, rows = fleet_rows()
    facts = {
        "run_id": "scheduled__2026-11-22T20:30:00+00:00",
        "outcome": "approved by admin: 24 receivers deleted",
        "approved_by": "admin",
        "approved_at": datetime(2026, 11, 22, 21, 5, tzinfo=UTC),
        "chosen": [PAYROLL],
        "declined": [BILLING],
        "queue_managers": qms,
        "receivers": rows,
        "saves": [
            SaveResult(
                target=PAYROLL, saved=names(0, 59), save_files=["MQJSAVE/PAY0001"],
                save_file_bytes={"MQJSAVE/PAY0001": 28_000 * KB}, copied=["ibmi-prod1/PAYROLL/MQJSAVE/PAY0001.savf"],
            ),
            SaveResult(
                target=BILLING, saved=names(50, 11), already_saved=names(0, 24), save_files=["MQJSAVE/BIL0001"],
                save_file_bytes={"MQJSAVE/BIL0001": 5_200 * KB},
            ),
        ],
        "deletes": [
            DeleteResult(
                target=PAYROLL, deleted=names(0, 22), freed_bytes=22 * 1000 * KB,
                kept=[("AMQA000022", "no proven backup: MQJSAVE/PAY0001 has no verified copy in the backup store"),
                      ("AMQA000023", "AMQA000022, older in the chain, was not deleted")],
            )
        ],
        "cleanups": [CleanupResult(target=PAYROLL, save_files_on_host_bytes=60 * 1000 * KB, store_bytes=60 * 1000 * KB)],
    }  # fmt: skip
    return RunFacts(**{**facts, **changes})


def test_the_report_says_the_outcome_and_who_approved_when():
    md = render_markdown(approved_run())
    assert md.startswith("# mq_journal_maintenance scheduled__2026-11-22T20:30:00+00:00\n\n")
    assert "**Outcome: approved by admin: 24 receivers deleted**" in md
    assert "Approved by admin at 2026-11-22 21:05:00 +00:00." in md
    assert f"Declined at the gate (nothing of them deleted): {BILLING}." in md


def test_what_was_saved_where_as_ranges():
    md = render_markdown(approved_run())
    assert "- AMQA000000-AMQA000058: 59 receivers saved now, 57.6 MB, detached 20-22 Nov" in md
    assert "  - in the save files MQJSAVE/PAY0001" in md
    assert "  - copied to the backup store as ibmi-prod1/PAYROLL/MQJSAVE/PAY0001.savf" in md
    assert "- AMQA000000-AMQA000023: 24 receivers already saved by an earlier run, 23.4 MB" in md


def test_what_was_deleted_and_what_the_recheck_kept():
    md = render_markdown(approved_run())
    assert "- AMQA000000-AMQA000021: 22 receivers deleted, 21.5 MB, detached 20-21 Nov" in md
    assert "- 21.5 MB freed on the ASP" in md
    assert "- not deleted at the re-check: AMQA000022: no proven backup: MQJSAVE/PAY0001 has no verified copy" in md


def test_a_declined_queue_manager_says_so_and_deletes_nothing():
    md = render_markdown(approved_run())
    billing = md[md.index("## ibmi-prod2/BILLING") :]
    assert billing.startswith("## ibmi-prod2/BILLING (library QMBILL01)\n\ndeclined at the approval gate: nothing")
    assert "Declined at the approval gate:\n\n- AMQA000000-AMQA000023: 24 receivers kept, 23.4 MB" in billing


def test_billing_and_payroll_explain_their_kept_receivers_and_alerts_in_both_formats():
    facts = approved_run()
    for text in (as_read(render_markdown(facts)), render_html(facts)):
        assert (
            "AMQA000024-AMQA000060: 37 receivers kept: needed for media recovery, AMQ7462 point 2026-11-21 08:00:05 "
            "+01:00 (37 h ago)" in text
        )
        assert (
            "AMQA000024-AMQA000058: 35 receivers kept: needed for startup recovery, AMQ7460 point 2026-11-21 "
            "08:00:09 +01:00 (37 h ago)" in text
        )
        assert "RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*LCLQ) MQMNAME(BILLING)" in text
        # No link in the files (the HTML escapes Markdown): the DAG's id and what to enter in its form.
        assert "the recovery DAG mq_journal_recovery can do it" in text
        assert "damaged object " in text and "APP.REQUEST.QUEUE" in text and "](" not in text
        assert "a unit of work open since 2026-11-21 08:00:09 +01:00 (37 h ago) holds AMQ7460" in text


def test_cl_commands_keep_their_asterisks_when_the_markdown_is_rendered():
    # Two special values on one line (TYPE(*ALL) ... WHERE(*INDOUBT) once rendered as emphasis, eating both asterisks.
    read = as_read(render_markdown(approved_run()))
    assert "WRKMQMTRN TYPE(*ALL) MQMNAME(PAYROLL)" in read
    assert "WHERE(*INDOUBT *EQ YES)" in read
    assert "OBJTYPE(*LCLQ)" in read


def test_net_space_per_queue_manager_is_the_receivers_freed_less_the_save_files_this_run_wrote():
    md = render_markdown(approved_run())
    assert f"| {PAYROLL} | 21.5 MB | 27.3 MB | -5.9 MB | 58.6 MB | 58.6 MB |" in md
    assert "- receivers freed 21.5 MB, save files written 27.3 MB: net -5.9 MB" in md
    assert "- save files still on the partition, of this run and earlier ones: 58.6 MB" in md
    # Declined at the gate, BILLING deleted nothing: its save file only took space.
    assert f"| {BILLING} | 0 B | 5.1 MB | -5.1 MB | - | - |" in md


def test_a_save_file_whose_size_was_not_read_is_named_and_left_out_of_the_net():
    facts = approved_run()
    saves = [facts.saves[0].model_copy(update={"save_file_bytes": {}}), facts.saves[1]]
    md = render_markdown(approved_run(saves=saves))
    assert "- receivers freed 21.5 MB, save files written 0 B: net 21.5 MB" in md
    assert "- size not known of MQJSAVE/PAY0001: not in the net" in md


def test_a_dry_run_says_what_would_happen_and_nothing_about_approval():
    facts = approved_run(
        dry_run=True, outcome="dry run: plan only, nothing saved or deleted", approved_by=None, approved_at=None,
        chosen=[], declined=[], saves=[], deletes=[], cleanups=[],
    )  # fmt: skip
    for text in (render_markdown(facts), render_html(facts)):
        assert "approv" not in text.lower()
        assert "gate" not in text.lower()
    md = render_markdown(facts)
    assert "dry run: 24 receivers would be deleted, nothing was saved or deleted" in md
    assert "Would be deleted:\n\n- AMQA000000-AMQA000023: 24 receivers, 23.4 MB, detached 20-21 Nov" in md
    assert "Would be saved:\n\n- AMQA000000-AMQA000058: 59 receivers, 57.6 MB, detached 20-22 Nov\n" in md


def test_no_json_anywhere():
    facts = approved_run()
    assert not re.search(r"[{}\[\]]", render_markdown(facts))


def test_the_html_page_is_self_contained_and_escapes_every_value():
    hostile = '<script>alert("x")</script>'
    facts = approved_run(
        approved_by=hostile,
        saves=[SaveResult(target=PAYROLL, note=f'<img src="http://evil.example/x.png">{hostile}')],
        outcome=f"approved by {hostile}",
    )
    page = render_html(facts)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<style>" in page
    assert not re.search(r"<(link|script|iframe|img)\b", page)
    assert not re.search(r"(src|href)=\"", page)


def test_queue_managers_with_nothing_to_say_are_named_in_one_line():
    qms, _ = fleet_rows()
    quiet = [
        changed(q, host=f"ibmi-q{i}", receivers_to_delete=0, receivers_to_save=0, alerts=[], block_reason=None)
        for i, q in enumerate(qms * 30)
    ]
    md = render_markdown(approved_run(queue_managers=qms + quiet))
    assert "Nothing saved, deleted or alerted on 60 queue managers: ibmi-q0/" in md
    assert "and 10 more." in md


def test_an_undecodable_message_is_named_with_its_dspmsgd_in_both_formats():
    qms, _ = fleet_rows()
    unread = ("AMQ7472: DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)",)
    qms = [changed(q, alerts=[*q.alerts, "MESSAGE_UNDECODABLE"], undecodable_messages=unread) for q in qms]
    facts = approved_run(queue_managers=qms)
    for text in (as_read(render_markdown(facts)), render_html(facts)):
        assert "MESSAGE_UNDECODABLE: the replacement data of AMQ7472 does not decode" in text
        assert "DSPMSGD RANGE(AMQ7472) MSGF(QMQM/AMQMSG)" in text
