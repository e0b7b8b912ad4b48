"""What an admin reads at the approval gate and in the run report."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mqjournal.airflow.approval import ALL_QUEUE_MANAGERS, approval_options
from mqjournal.airflow.maintenance import gate_body, outcome, report, summarize
from mqjournal.airflow.settings import Settings
from mqjournal.airflow.xcom import MaintenanceTarget, RunPlan
from mqjournal.outcomes import DeleteResult, SaveResult
from mqjournal.policy import Policy
from mqjournal.report import DETAILED_QUEUE_MANAGERS, RANGES_PER_LIST, RECOVERY_PAGE, plan_body
from tests.plan.builders import changed, planned_queue_manager
from tests.rendered import as_read
from tests.unit.test_explain import fleet_rows

COLUMNS = {
    "host": "prod1",
    "qmgr": "PAYROLL",
    "qmgr_library": "QMPAYROLL",
    "oldest_needed": "AMQA000024",
    "receivers_to_save": 3,
    "bytes_to_save": 3 * 1024**2,
    "receivers_to_delete": 2,
    "bytes_freed": 2 * 1024**2,
    "block_reason": None,
    "alerts": ["STARTUP_RECOVERY_STUCK"],
}
QM = planned_queue_manager(**COLUMNS)


def test_the_gate_body_starts_with_the_fleets_totals_and_says_how_to_choose():
    qms, rows = fleet_rows()
    body = plan_body(qms, rows)
    assert body.startswith(
        "**48 receivers to delete on 2 of 2 queue managers, 46.9 MB to free, 14.4 MB net** (70 receivers to save, "
        "68.4 MB in about 32.5 MB of save files; 0 blocked, 2 with alerts)."
    )
    assert "the gate's options are named `host/QMGR`" in body


def test_the_gate_lists_receivers_to_delete_as_ranges_with_count_bytes_and_detach_days():
    qms, rows = fleet_rows()
    body = plan_body(qms, rows)
    assert "### ibmi-prod1/PAYROLL (library QMPAYROLL)" in body
    assert (
        "- AMQA000000-AMQA000023: 24 receivers to delete, 23.4 MB, detached 20-21 Nov (saved by this run first)" in body
    )
    assert "- AMQA000000-AMQA000023: 24 receivers to delete, 23.4 MB, detached 20-21 Nov (saved before)" in body


def test_billing_and_payroll_explain_their_kept_receivers_and_alerts_at_the_gate():
    qms, rows = fleet_rows()
    body = plan_body(qms, rows)
    assert (
        "- AMQA000024-AMQA000049: 26 receivers kept: needed for media recovery, AMQ7462 point 2026-11-21 08:00:05 "
        "+01:00 (37 h ago); 25.4 MB, detached 21-22 Nov\n"
        "- AMQA000050-AMQA000060: 11 receivers to save, then keep: needed for media recovery" in body
    )
    assert (
        "- AMQA000024-AMQA000058: 35 receivers to save, then keep: needed for startup recovery, AMQ7460 point "
        "2026-11-21 08:00:09 +01:00 (37 h ago)" in body
    )
    assert "MEDIA_POINT_OLD: AMQ7462, the media recovery point, has not moved since" in body
    # CL's special values are escaped in the Markdown, so the page shows each asterisk an admin has to type.
    assert "RCRMQMOBJ OBJ(APP.REQUEST.QUEUE) OBJTYPE(*LCLQ) MQMNAME(BILLING)" in as_read(body)
    assert "WRKMQMTRN TYPE(*ALL) MQMNAME(PAYROLL)" in as_read(body) and "WHERE(*INDOUBT *EQ YES)" in as_read(body)
    assert "STARTUP_POINT_OLD: a unit of work open since 2026-11-21 08:00:09 +01:00 (37 h ago)" in body
    assert "| ibmi-prod2 | BILLING | QMBILL01 | 24 | 23.4 MB |" in body
    assert "| AMQA000024 | AMQ7462, 37 h | no | MEDIA_POINT_OLD |" in body


def test_the_gate_links_a_damaged_objects_alert_to_the_recovery_dag_and_says_what_to_enter():
    qms, rows = fleet_rows()
    body = plan_body(qms, rows)
    [line] = [line for line in body.splitlines() if line.startswith("- MEDIA_POINT_OLD: AMQ7462, the media")]
    assert (
        "the recovery DAG [mq_journal_recovery](dags/mq_journal_recovery) (its Trigger button opens the form) can do "
        'it, restoring first any receiver it needs: trigger it with host "ibmi-prod2", queue manager "BILLING", kind '
        'of recovery "media", damaged object "APP.REQUEST.QUEUE", object type "\\*LCLQ".'
    ) in line


def test_the_gates_relative_link_resolves_where_airflows_ui_is_served():
    """The UI sets <base href> to its own root, and routes dags/<dag id> to the DAG's page (whose Trigger button opens
    the form; Airflow 3.3 has no trigger route and fills no form from the URL): the link needs no [api] base_url."""
    import airflow

    ui = Path(airflow.__file__).parent / "ui" / "dist"
    assert '<base href="{{ backend_server_base_url }}"' in (ui / "index.html").read_text()
    bundle = "".join(p.read_text(errors="replace") for p in (ui / "assets").glob("index-*.js"))
    assert "path:`dags/:dagId`" in bundle
    assert RECOVERY_PAGE == "dags/mq_journal_recovery" and not RECOVERY_PAGE.startswith("/")


def test_the_gate_shows_net_space_asp_use_and_the_backup_store():
    qms, rows = fleet_rows()
    billing = next(q for q in qms if q.qmgr == "BILLING")
    billing = changed(billing, asp_number=1, asp_capacity_bytes=64 * 1024**3, asp_available_bytes=16 * 1024**3)
    body = plan_body([billing], rows, store_bytes={billing.ref.key: 5 * 1024**2})
    # DTACPR(*LOW), the policy's default: the 10.7 MB of receivers to save make about 5.1 MB of save files.
    assert (
        "- Space: frees 23.4 MB; net 18.3 MB after this run's save files (about 5.1 MB, DTACPR(*LOW)); ASP 1: 75% "
        "used, 16.0 GB free of 64.0 GB; 5.0 MB in the backup store" in body
    )
    assert "| 23.4 MB | 11 (10.7 MB) | 18.3 MB | 75% used | 5.0 MB |" in body


def test_a_plan_without_receivers_rows_still_renders_each_queue_manager():
    body = plan_body([QM])
    assert "| prod1 | PAYROLL | QMPAYROLL | 2 | 2.0 MB | 3 (3.0 MB) | 588.8 KB | - | - | AMQA000024 | - | no " in body
    assert "- 2 receivers to delete, 3 to save" in body
    assert "open unit of work" in body


def test_the_gates_net_space_follows_the_policys_data_compression():
    no_compression = plan_body([QM], policy=Policy(save_compression="*NO"))
    assert "| 3 (3.0 MB) | -1.0 MB |" in no_compression  # save files as large as their receivers
    assert "net -1.0 MB after this run's save files (about 3.0 MB, DTACPR(*NO))" in no_compression
    high = plan_body([QM], policy=Policy(save_compression="*HIGH"))
    assert "net 1.6 MB after this run's save files (about 457.7 KB, DTACPR(*HIGH))" in high
    measured = plan_body([QM], policy=Policy(save_compression="*HIGH", save_compression_ratio=0.5))
    assert "(about 1.5 MB, DTACPR(*HIGH))" in measured


def test_a_blocked_queue_manager_shows_why_in_words():
    body = plan_body([changed(QM, block_reason="SNAPSHOT_STALE", receivers_to_delete=0)])
    assert "| SNAPSHOT_STALE |" in body
    assert "**Blocked**: its snapshot is older than the policy's max_snapshot_age_hours." in body


def test_the_gate_stays_bounded_for_five_hundred_queue_managers():
    qms, rows = fleet_rows()
    fleet_qms, fleet_rows_ = [], []
    for i in range(250):
        for q in qms:
            fleet_qms.append(changed(q, host=f"ibmi-{i:03d}"))
        for r in rows:
            fleet_rows_.append(changed(r, host=f"ibmi-{i:03d}"))
    body = plan_body(fleet_qms, fleet_rows_)
    assert body.count("\n### ") == DETAILED_QUEUE_MANAGERS
    assert f"The receivers of {500 - DETAILED_QUEUE_MANAGERS} more queue managers are not shown here" in body
    assert "500 queue managers" in body
    assert len(body) < 150_000


def test_many_ranges_of_one_queue_manager_are_summed_up():
    qms, rows = fleet_rows()
    billing = next(q for q in qms if q.qmgr == "BILLING")
    # every other receiver retained: a range each
    mixed = [
        changed(r, action="keep", reason="RETAINED") if r.chain_position % 2 and r.chain_position < 24 else r
        for r in rows
        if r.qmgr == "BILLING" and r.chain_position is not None
    ]
    body = plan_body([billing], mixed)
    assert "- ... and " in body
    assert body.count("receivers to delete, ") + body.count("receiver to delete, ") == RANGES_PER_LIST


def test_the_report_says_who_decided_what():
    payroll, billing = "prod1/PAYROLL/QMPAYROLL", "prod2/BILLING/QMBILL01"
    summary = RunPlan(
        queue_managers=[
            planned_queue_manager(host="prod1", qmgr="PAYROLL", qmgr_library="QMPAYROLL"),
            planned_queue_manager(host="prod2", qmgr="BILLING", qmgr_library="QMBILL01"),
        ],
        to_delete={payroll: ["A", "B"], billing: ["C"]},
        anything_to_delete=True,
    )
    ana = {"id": "u1", "name": "Ana"}
    both = {"chosen_options": ["prod1/PAYROLL", "prod2/BILLING"], "responded_by_user": ana}
    one = {"chosen_options": ["prod1/PAYROLL"], "responded_by_user": ana}
    nothing = {"chosen_options": ["Delete nothing"], "responded_by_user": {"id": "u2", "name": "Bo"}}
    timed_out = {"chosen_options": ["Delete nothing"], "responded_by_user": None}
    deletes = [
        DeleteResult(target=payroll, deleted=["A", "B"], freed_bytes=3 * 1024 * 1024),
        DeleteResult(target=billing, deleted=["C"], freed_bytes=1024 * 1024),
    ]
    assert outcome(False, summary, both, deletes) == "approved by Ana: 3 deleted, 4.0 MB freed"
    assert (
        outcome(False, summary, one, deletes[:1])
        == "approved by Ana: 2 deleted, 3.0 MB freed; 1 queue manager declined"
    )
    assert outcome(False, summary, nothing, []) == "rejected by Bo: nothing deleted"
    assert outcome(False, summary, timed_out, []).startswith("no answer before the gate's timeout")
    assert outcome(False, summary, None, [], approve_state="failed").startswith("no answer before the gate's timeout")
    assert outcome(True, summary, None, []).startswith("dry run")
    assert outcome(False, RunPlan(anything_to_delete=False), None, []).startswith("nothing to delete")
    assert outcome(False, None, None, []).startswith("failed before a plan")


def test_the_report_says_when_the_answer_matched_no_option_or_the_gate_was_never_asked():
    payroll = "prod1/PAYROLL/QMPAYROLL"
    summary = RunPlan(
        queue_managers=[planned_queue_manager(host="prod1", qmgr="PAYROLL", qmgr_library="QMPAYROLL")],
        to_delete={payroll: ["A", "B"]},
        anything_to_delete=True,
    )
    stale = {"chosen_options": ["prod1/PAYROLL: 3 receivers, 1.0 MB"], "responded_by_user": {"name": "Ana"}}
    line = outcome(False, summary, stale, [])
    assert line.startswith("answered by Ana, but the gate's answer") and line.endswith("nothing is deleted"), line
    assert "prod1/PAYROLL: 2 receivers, 0 B" in line  # what the plan does offer
    assert outcome(False, summary, None, [], approve_state="upstream_failed").startswith("the gate was not asked")


def test_mapped_results_are_always_a_list():
    from mqjournal.airflow.maintenance import mapped_results

    assert mapped_results(None) == []
    assert mapped_results({"deleted": ["A"]}) == [{"deleted": ["A"]}]
    assert mapped_results([{"deleted": ["A"]}, None]) == [{"deleted": ["A"]}]


def test_the_gate_names_each_undecodable_message_and_the_dspmsgd_that_shows_its_format():
    qms, rows = fleet_rows()
    unread = ("AMQ7460: DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG)", "CPI70E3: DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)")
    qms = [changed(q, alerts=[*q.alerts, "MESSAGE_UNDECODABLE"], undecodable_messages=unread) for q in qms]
    body = as_read(plan_body(qms, rows))
    [line] = [line for line in body.splitlines() if "MESSAGE_UNDECODABLE: the replacement data of" in line][:1]
    assert "AMQ7460, CPI70E3 does not decode" in line
    assert "DSPMSGD RANGE(AMQ7460) MSGF(QMQM/AMQMSG); DSPMSGD RANGE(CPI70E3) MSGF(QSYS/QCPFMSG)" in line
    assert "blocks and unblocks nothing" in line


class _Store:
    """What the gate reads of the backup store: each queue manager's total, as the saves have left it."""

    def __init__(self) -> None:
        self.bytes: dict[tuple[str, str], int] = {}

    def total_bytes(self, host: str, qmgr: str) -> int:
        return self.bytes.get((host, qmgr), 0)


def _written_plan(plan_dir: Path, **columns: object) -> list[MaintenanceTarget]:
    """BILLING's and PAYROLL's plan rows as the plan job writes them (`columns` set on both); the run's targets."""
    qms, rows = fleet_rows()
    qms = [changed(q, **columns) for q in qms]
    for name, models in (("queue_managers", qms), ("receivers", rows)):
        (plan_dir / name).mkdir(parents=True)
        table = [{k: list(v) if isinstance(v, tuple) else v for k, v in m.model_dump().items()} for m in models]
        pq.write_table(pa.Table.from_pylist(table), plan_dir / name / "part-0.parquet")
    return [
        MaintenanceTarget(
            host=q.host,
            qmgr=q.qmgr,
            library=q.qmgr_library,
            journal="AMQAJRN",
            instance="A",
            journal_queue=[q.qmgr_library, "AMQAJRNMSG"],
            utc_offset_minutes=60,
        )
        for q in qms
    ]


def test_the_gate_shows_what_the_store_holds_after_this_runs_saves(tmp_path):
    store = _Store()
    targets = _written_plan(tmp_path)
    summary = summarize(tmp_path, targets)  # before the saves: the store holds nothing of them yet
    store.bytes = {(t.host, t.qmgr): 5 * 1024**2 for t in targets}  # the saves copied their save files
    body = gate_body(tmp_path, summary, store, Policy())
    table = [line for line in body.splitlines() if line.startswith("| ibmi-prod")]
    assert len(table) == 2 and all("| 5.0 MB |" in line for line in table), table
    assert "5.0 MB in the backup store" in body and "0 B in the backup store" not in body


# --- the ASP forecast in the gate ----------------------------------------------------------------------------------


def test_the_gates_table_says_when_each_queue_managers_asp_reaches_the_policys_limit():
    from datetime import UTC, datetime, timedelta

    from mqjournal.forecast import AspKey, AspSample, forecast

    day0 = datetime(2026, 11, 1, tzinfo=UTC)
    gb = 1024**3
    filling = [AspSample(day0 + timedelta(days=i), (62 + 2 * i) * gb, 100 * gb) for i in range(5)]
    f = forecast(AspKey("prod1", 1), filling, Policy())
    on_it = changed(QM, asp_number=1)
    other = changed(QM, host="prod2", asp_number=1)

    body = plan_body([on_it, other], forecasts={AspKey("prod1", 1): f})

    header, _, *rows = [line for line in body.splitlines() if line.startswith("|")]
    cells = [c.strip() for c in header.strip("|").split("|")]
    column = cells.index("ASP 90% in")
    by_host = {r.strip("|").split("|")[0].strip(): r.strip("|").split("|")[column].strip() for r in rows}
    assert by_host == {"prod1": "10 days (2026-11-15)", "prod2": "-"}


def test_summarize_adds_asp_full_soon_from_the_snapshot_history(tmp_path):
    from datetime import timedelta

    from mqjournal.forecast import limit_in
    from mqjournal.snapshot import write_snapshots
    from tests.plan.builders import chain, names, snapshot

    targets = _written_plan(tmp_path / "plan", asp_number=1)
    qms, _ = fleet_rows()
    filling = qms[0]  # its partition's ASP 1 fills; the other queue manager is on another partition
    gb = 1024**3
    for day in range(4):  # 2 GB a day, 76 GB of 100 used at the newest: 90% in 7 days
        s = snapshot(
            chain(names(0, 2), library=filling.qmgr_library),
            host=filling.host,
            qmgr=filling.qmgr,
            library=filling.qmgr_library,
            collected_at=filling.collected_at + timedelta(days=day - 3),
        ).model_copy(
            update={
                "asp_number": 1,
                "asp_capacity_bytes": 100 * gb,
                "asp_available_bytes": (100 - 70 - 2 * day) * gb,
            }
        )
        write_snapshots(tmp_path / "snapshots" / f"run_id=r{day}" / f"{s.host}__{s.qmgr_library}.jsonl", [s])
    summary = summarize(tmp_path / "plan", targets, snapshots=tmp_path / "snapshots")

    alerted = {q.qmgr: "ASP_FULL_SOON" in q.alerts for q in summary.queue_managers}
    assert alerted[filling.qmgr] and not all(alerted.values())
    assert "ASP_FULL_SOON" in summary.body
    # The gate shows the same forecast from the summary (its XCom value), without reading the history again.
    passed = RunPlan.from_xcom(summary.to_xcom())
    assert [(f.host, f.asp_number) for f in passed.asp_forecasts] == [(filling.host, 1)]
    assert passed.asp_forecasts[0].history == []
    (tmp_path / "snapshots").rename(tmp_path / "gone")
    cell = limit_in(passed.asp_forecasts[0])
    assert cell.endswith(")") and f"| {cell} |" in gate_body(tmp_path / "plan", passed, None, Policy())


UNREACHABLE = "the backup store is unreachable: connection refused"


def _store_outage(summary: RunPlan) -> list[dict]:
    """The save task's XCom value as a store outage leaves it: every queue manager saved, no copy made."""
    return [
        SaveResult(
            target=key,
            saved=names,
            save_files=[f"QGPL/S{i}"],
            not_copied=[(f"QGPL/S{i}", UNREACHABLE)],
            unproven=[
                (n, f"its save file QGPL/S{i} was not copied into the backup store: {UNREACHABLE}") for n in names
            ],
        ).to_xcom()
        for i, (key, names) in enumerate(summary.to_delete.items())
    ]


def test_the_gate_warns_above_its_table_when_the_saves_could_not_copy_and_names_what_it_will_not_delete(tmp_path):
    summary = summarize(tmp_path, _written_plan(tmp_path))

    body = gate_body(tmp_path, summary, _Store(), Policy(), saves=_store_outage(summary), run_id="manual__1")

    warning, table = body.index("**Warning: this run's saves left work undone.**"), body.index("| host |")
    assert warning < table
    assert "> - ibmi-prod1/PAYROLL: save file QGPL/S" in body and UNREACHABLE in body
    assert "> - ibmi-prod1/PAYROLL: not deleted whatever the answer: AMQA000000-AMQA000023 (24 receivers)" in body
    assert "[The run's report](mqjournal/runs/mq_journal_maintenance/manual__1/report)" in body


def test_the_gate_has_no_warning_when_every_save_was_copied(tmp_path):
    summary = summarize(tmp_path, _written_plan(tmp_path))
    copied = [SaveResult(target=key, saved=names, copied=["k"]).to_xcom() for key, names in summary.to_delete.items()]

    body = gate_body(tmp_path, summary, _Store(), Policy(), saves=copied)

    assert "Warning" not in body


def test_a_run_whose_saves_were_not_copied_ends_with_a_note_and_report_that_say_what_was_left_undone(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", spark_app=Path("unused"), schedule=None)
    run_id = "manual__2026-11-28T08:00:00+00:00"
    targets = _written_plan(Path(str(settings.plan_dir(run_id))))
    summary = summarize(settings.plan_dir(run_id), targets)
    payroll = next(k for k in summary.to_delete if "PAYROLL" in k)
    every = [o for o in approval_options(summary) if o.startswith(ALL_QUEUE_MANAGERS)]
    approval = {"chosen_options": every, "responded_by_user": {"id": "a", "name": "Ana"}}
    refused = DeleteResult(
        target=payroll,
        kept=[("AMQA000000", "no proven backup: QGPL/S0 has no verified copy in the backup store")],
        unproven=[("AMQA000000", "no proven backup: QGPL/S0 has no verified copy in the backup store")],
    )

    report(
        settings,
        run_id,
        dry_run=False,
        summary=summary.to_xcom(),
        saves=_store_outage(summary),
        deletes=[refused.to_xcom()],
        approval=approval,
        approve_state="success",
    )

    note = settings.note_file(run_id).read_text()
    assert note.startswith("approved by Ana: 0 deleted, 0 B freed; LEFT UNDONE on 2 queue managers: "), note
    assert "ibmi-prod1/PAYROLL (save file QGPL/S" in note
    html = settings.report_file(run_id).with_suffix(".html").read_text()
    assert "<h3>Left undone (the run failed on it; what to do is in each failed task&#x27;s log)</h3>" in html
    assert "not deleted, no proven backup: AMQA000000: no proven backup: QGPL/S0 has no verified copy" in html
