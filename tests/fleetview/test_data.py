"""The fleet view's data: per queue manager its newest plan, snapshot, run outcome and backups; its history per run."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta

import pytest

from mqjournal.fleetview import data
from mqjournal.fleetview.data import AirflowRun, LastRun
from tests.fleetview.conftest import COLLECTED1, COLLECTED2, MB, RUN1, RUN2, lost_payroll, narrow_plan

NOW = COLLECTED2 + timedelta(hours=1)


def rows_by_qmgr(fleet, airflow: data.RunLookup = data.no_airflow) -> dict[str, data.QueueManagerRow]:
    return {r.qmgr: r for r in data.fleet(fleet.settings, fleet.catalog, now=NOW, airflow=airflow)}


class StandInAirflow:
    """A RunLookup that knows `runs` and records what it was asked."""

    def __init__(self, *runs: AirflowRun) -> None:
        self.runs = {r.run_id: r for r in runs}
        self.asked: list[list[str]] = []

    def __call__(self, run_ids: Collection[str]) -> dict[str, AirflowRun]:
        self.asked.append(sorted(run_ids))
        return {i: self.runs[i] for i in run_ids if i in self.runs}


def test_one_row_per_host_and_queue_manager_from_its_newest_plan(fleet):
    rows = data.fleet(fleet.settings, fleet.catalog, now=NOW)

    assert [(r.host, r.qmgr, r.library, r.run_id) for r in rows] == [
        ("ibmi-prod1", "PAYROLL", "QMPAYROLL", RUN2),
        ("ibmi-prod2", "BILLING", "QMBILL01", RUN2),
    ]


def test_billing_row_names_the_media_point_holding_its_oldest_needed_receiver_and_the_damaged_object(fleet):
    billing = rows_by_qmgr(fleet)["BILLING"]

    assert billing.oldest_needed == "AMQA000000"
    assert billing.oldest_needed_age_seconds == 46 * 3600
    assert billing.holding_point == "AMQ7462"
    assert billing.holding_point_at == COLLECTED2 - timedelta(hours=46)
    assert billing.damaged_objects == ["APP.REQUEST.QUEUE (QLOCAL), reported by AMQ7472"]
    assert billing.alerts == ["MEDIA_POINT_OLD"]


def test_receivers_online_leave_out_freed_receivers(fleet):
    payroll = rows_by_qmgr(fleet)["PAYROLL"]

    assert (payroll.receivers_online, payroll.bytes_online) == (6, 6 * 3 * MB)


def test_the_outcome_is_the_run_reports_outcome_line(fleet):
    billing = rows_by_qmgr(fleet)["BILLING"]

    assert (billing.outcome, billing.outcome_from) == ("dry run: plan only, nothing saved or deleted", "report")
    assert billing.run_state is None  # no Airflow DB read


# --- the run as Airflow knows it ---------------------------------------------------------------------------------

REPORTED = "approved by admin: 1 receivers deleted"
NOTED = "rejected by admin: nothing deleted"


@pytest.mark.parametrize(
    ("report", "run", "expected"),
    [
        (REPORTED, AirflowRun(run_id=RUN1, state="success", note=NOTED), LastRun(state="success", outcome=NOTED, outcome_from="note")),
        (None, AirflowRun(run_id=RUN1, state="success", note=NOTED), LastRun(state="success", outcome=NOTED, outcome_from="note")),
        (REPORTED, AirflowRun(run_id=RUN1, state="failed"), LastRun(state="failed", outcome=REPORTED, outcome_from="report")),
        (REPORTED, AirflowRun(run_id=RUN1, state="success", note="  "), LastRun(state="success", outcome=REPORTED, outcome_from="report")),
        (None, AirflowRun(run_id=RUN1, state="running"), LastRun(state="running")),
        (REPORTED, None, LastRun(outcome=REPORTED, outcome_from="report")),
        (None, None, LastRun()),
    ],
    ids=["note-beats-report", "note-without-report", "report-without-note", "blank-note", "running", "not-in-airflow", "nothing"],
)  # fmt: skip
def test_the_outcome_is_the_note_else_the_reports_line_and_the_state_is_airflows(report, run, expected):
    assert data.last_run(report, run) == expected


def test_rows_carry_the_runs_state_and_note_from_airflow(fleet):
    airflow = StandInAirflow(AirflowRun(run_id=RUN2, state="success", note=NOTED))

    rows = rows_by_qmgr(fleet, airflow)

    assert {(r.qmgr, r.run_state, r.outcome, r.outcome_from) for r in rows.values()} == {
        ("BILLING", "success", NOTED, "note"),
        ("PAYROLL", "success", NOTED, "note"),
    }


def test_airflow_is_asked_once_for_every_run_the_rows_show(fleet):
    narrow_plan(fleet.settings, RUN2, "PAYROLL")  # PAYROLL's row is run 1's now
    airflow = StandInAirflow(AirflowRun(run_id=RUN1, state="failed"))

    rows = rows_by_qmgr(fleet, airflow)

    assert airflow.asked == [sorted([RUN1, RUN2])]
    assert (rows["PAYROLL"].run_id, rows["PAYROLL"].run_state, rows["PAYROLL"].outcome) == (RUN1, "failed", REPORTED)
    # Run 2 is not in Airflow's DB (a data folder from elsewhere): its report says.
    assert (rows["BILLING"].run_state, rows["BILLING"].outcome_from) == (None, "report")


def test_the_queue_manager_page_carries_the_runs_state_and_note(fleet):
    airflow = StandInAirflow(AirflowRun(run_id=RUN2, state="failed", note=NOTED))

    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod1", "QMPAYROLL", now=NOW, airflow=airflow)

    assert (page.row.run_state, page.row.outcome, page.row.outcome_from) == ("failed", NOTED, "note")
    assert airflow.asked == [[RUN2]]


def test_the_last_verified_backup_is_the_newest_copy_in_the_backup_store(fleet):
    backup = rows_by_qmgr(fleet)["BILLING"].last_backup

    assert backup is not None
    assert backup.where == "backup store"
    assert backup.at == COLLECTED1 + timedelta(minutes=12)
    assert "MQJAAAAAA0" in backup.detail


def test_a_queue_manager_without_any_backup_has_none(fleet):
    assert rows_by_qmgr(fleet)["PAYROLL"].last_backup is None


def test_asp_use_comes_from_the_plan(fleet):
    billing = rows_by_qmgr(fleet)["BILLING"]

    assert (billing.asp_number, billing.asp_used_percent) == (2, 50.0)


def test_a_plan_without_the_newer_columns_reads_them_as_unknown_and_takes_asp_and_offset_from_the_snapshot(fleet):
    # Only run 1's plan, written before holding_point, utc_offset_minutes and the ASP columns existed.
    import shutil

    shutil.rmtree(fleet.settings.plan_dir(RUN2))

    rows = rows_by_qmgr(fleet)

    assert rows["BILLING"].holding_point is None
    assert rows["BILLING"].damaged_objects == []
    assert rows["BILLING"].utc_offset_minutes == 60  # the offset of the snapshot's collected_at
    assert rows["PAYROLL"].asp_number == 1  # from the snapshot (QSYS2.ASP_INFO)
    assert rows["PAYROLL"].asp_used_percent == 80.0


def test_no_plan_no_rows(tmp_path):
    from mqjournal.settings import Settings

    settings = Settings.from_env({"MQJOURNAL_DATA_DIR": str(tmp_path)})

    assert data.fleet(settings, data.open_catalog(settings.catalog_url)) == []


def test_opening_a_catalog_no_run_has_written_does_not_create_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'catalog.db'}"

    assert data.open_catalog(url) is None
    assert not (tmp_path / "catalog.db").exists()


# --- the traffic light -------------------------------------------------------------------------------------------


def test_a_damaged_object_is_red_and_an_open_unit_of_work_amber(fleet):
    rows = rows_by_qmgr(fleet)

    assert rows["BILLING"].light.color == "red"
    assert any(reason.startswith("MEDIA_POINT_OLD") for reason in rows["BILLING"].light.reasons)
    assert rows["PAYROLL"].light.color == "amber"
    assert [reason.split(":")[0] for reason in rows["PAYROLL"].light.reasons] == ["STARTUP_POINT_OLD"]


def test_a_queue_manager_with_nothing_to_look_at_is_green(fleet):
    row = rows_by_qmgr(fleet)["PAYROLL"].model_copy(update={"alerts": []})

    assert data.traffic_light(row, NOW) == data.Light(color="green", reasons=[])


def test_blocked_or_a_full_asp_is_red(fleet):
    row = rows_by_qmgr(fleet)["PAYROLL"].model_copy(update={"alerts": [], "holding_point": None})

    assert (
        data.traffic_light(row.model_copy(update={"blocked": True, "block_reason": "CHAIN_BROKEN"}), NOW).color == "red"
    )
    full = row.model_copy(update={"asp_available_bytes": 50 * MB})
    assert data.traffic_light(full, NOW).reasons == ["ASP 2 is 95% full"]


def test_a_queue_manager_not_collected_for_over_eight_days_is_amber(fleet):
    row = rows_by_qmgr(fleet)["PAYROLL"].model_copy(update={"alerts": [], "holding_point": None})

    light = data.traffic_light(row, COLLECTED2 + timedelta(days=9))

    assert (light.color, light.reasons) == ("amber", ["not collected since 2026-11-22"])


def test_a_run_without_its_report_is_amber(fleet):
    fleet.settings.report_file(RUN2).unlink()

    assert "the last run has no report: still running, or it failed" in rows_by_qmgr(fleet)["BILLING"].light.reasons


def test_a_failed_last_run_is_amber_with_its_outcome(fleet):
    rows = rows_by_qmgr(
        fleet, StandInAirflow(AirflowRun(run_id=RUN2, state="failed", note="approved by admin: 2 of 3 deleted"))
    )
    calm = rows["PAYROLL"].model_copy(update={"alerts": []})

    assert data.traffic_light(calm, NOW) == data.Light(
        color="amber", reasons=["the last run failed: approved by admin: 2 of 3 deleted"]
    )
    assert rows["BILLING"].light.color == "red"  # a failed run does not lessen a red reason
    assert "the last run failed: approved by admin: 2 of 3 deleted" in rows["BILLING"].light.reasons


@pytest.mark.parametrize("state", ["queued", "running", "success"])
def test_a_run_airflow_knows_is_no_reason_without_a_report_unless_it_failed(fleet, state):
    fleet.settings.report_file(RUN2).unlink()
    rows = rows_by_qmgr(fleet, StandInAirflow(AirflowRun(run_id=RUN2, state=state)))

    assert data.traffic_light(rows["PAYROLL"].model_copy(update={"alerts": []}), NOW).color == "green"


# --- a queue manager page ----------------------------------------------------------------------------------------


def test_history_has_one_point_per_run_with_bytes_online_age_and_saves_and_deletes(fleet):
    billing = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMBILL01", now=NOW)
    payroll = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod1", "QMPAYROLL", now=NOW)

    assert [(p.run_id, p.receivers_online, p.bytes_online, p.oldest_needed_age_seconds, p.saved, p.deleted) for p in billing.history] == [
        (RUN1, 10, 10 * 2 * MB, 3600, 4, 0),
        (RUN2, 12, 12 * 2 * MB, 46 * 3600, 0, 0),
    ]  # fmt: skip
    assert [(p.bytes_online, p.deleted) for p in payroll.history] == [(6 * 3 * MB, 0), (6 * 3 * MB, 1)]
    assert [p.at for p in billing.history] == [COLLECTED1, COLLECTED2]


def test_receiver_table_has_the_snapshots_times_and_sequences_and_where_each_backup_is(fleet):
    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMBILL01", now=NOW)
    first, attached = page.receivers[0], page.receivers[-1]

    assert [r.name for r in page.receivers][:3] == ["AMQA000000", "AMQA000001", "AMQA000002"]
    assert (first.first_sequence, first.last_sequence) == (1, 100)
    assert first.attached_at == COLLECTED2 - timedelta(hours=12)
    assert first.detached_at == COLLECTED2 - timedelta(hours=11)
    assert (attached.status, attached.action, attached.reason, attached.detached_at) == (
        "ATTACHED",
        "keep",
        "ATTACHED",
        None,
    )


def test_a_receiver_name_that_came_back_does_not_borrow_the_backups_of_its_earlier_incarnation(fleet):
    # Run 1's AMQA000000 of BILLING (attached 15 Nov) is saved and stored; run 2's AMQA000000 was attached on 22 Nov.
    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMBILL01", now=NOW)

    assert page.receivers[0].backups == []


def test_backups_of_a_receiver_list_its_save_file_and_its_copy_in_the_store(fleet):
    from mqjournal.catalog import Catalog

    backups = data.backups_of(Catalog(fleet.settings.catalog_url), "ibmi-prod2", "BILLING", "QMBILL01")
    attached_at = COLLECTED1 - timedelta(hours=10)

    assert backups.of_receiver("AMQA000000", "QMBILL01", attached_at) == [
        "save file QGPL/MQJAAAAAA0",
        "backup store: ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf",
    ]


def test_alert_lines_and_recovery_values_for_a_damaged_object(fleet):
    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMBILL01", now=NOW)

    assert page.alert_lines[0].startswith("MEDIA_POINT_OLD: ")
    assert "APP.REQUEST.QUEUE" in page.alert_lines[0]
    assert page.recovery_conf["kind"] == "media"
    assert page.recovery_conf["object"] == "APP.REQUEST.QUEUE"
    assert (page.recovery_conf["host"], page.recovery_conf["qmgr"]) == ("ibmi-prod2", "BILLING")


def test_a_queue_manager_that_cannot_start_has_its_alert_first_and_its_values_in_the_recovery_form(fleet):
    lost_payroll(fleet)
    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod1", "QMPAYROLL", now=NOW)

    assert page.alert_lines[0].startswith(
        "QMGR_CANNOT_START: STRMQM will fail with AMQ7432: needed receivers AMQA000000, AMQA000001 are missing"
    )
    assert page.alert_lines[1].startswith("STARTUP_POINT_OLD: ")
    assert page.recovery_conf == {
        "host": "ibmi-prod1",
        "qmgr": "PAYROLL",
        "kind": "startup",
        "timestamp": "2026-11-21T22:06:00+01:00",
    }
    # The plan's row names AMQA000000 as the oldest needed, as AMQJRNINF does: the page says why it is not there.
    assert page.points_explained == (
        "AMQJRNINF names AMQA000000, the oldest receiver MQ needs, but AMQA000000 is no longer on the host: the "
        "recovery pass that needs it (STRMQM, or RCRMQMOBJ) ends with AMQ7432 until AMQA000000 is restored."
    )


def test_an_unknown_queue_manager_has_no_page(fleet):
    assert data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMNONE") is None


def test_plan_runs_are_ordered_by_when_they_planned(fleet):
    runs = data.plan_runs(fleet.settings)

    assert [r.run_id for r in runs] == [RUN1, RUN2]
    assert runs[0].at == COLLECTED1.astimezone(UTC) + timedelta(minutes=2)
    assert runs[1].at < datetime.now(UTC)


# --- a later run that planned nothing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conf", "selected"),
    [
        ({}, True),
        ({"hosts": [], "queue_managers": []}, True),
        ({"hosts": ["ibmi-prod1"]}, True),
        ({"hosts": ["ibmi-prod2"]}, False),
        ({"queue_managers": ["PAYROLL"]}, True),
        ({"queue_managers": ["ibmi-prod1/PAYROLL"]}, True),
        ({"queue_managers": ["ibmi-prod2/PAYROLL"]}, False),
        ({"hosts": ["ibmi-prod1"], "queue_managers": ["ORDERS"]}, False),
    ],
)
def test_which_queue_managers_a_runs_form_selected(conf, selected):
    assert data.selects(conf, "ibmi-prod1", "PAYROLL") is selected


def test_the_newest_later_run_that_selected_it_is_its_last_run():
    planned = AirflowRun(run_id=RUN1, state="success", at=datetime(2026, 11, 15, tzinfo=UTC))
    other_host = AirflowRun(run_id="r4", state="failed", at=datetime(2026, 11, 24, tzinfo=UTC), conf={"hosts": ["x"]})
    failed = AirflowRun(run_id="r3", state="failed", at=datetime(2026, 11, 23, tzinfo=UTC))
    older = AirflowRun(run_id="r0", state="failed", at=datetime(2026, 11, 1, tzinfo=UTC))

    assert data.newer_run("ibmi-prod1", "PAYROLL", planned, [other_host, failed, planned, older]) == failed
    assert data.newer_run("ibmi-prod1", "PAYROLL", planned, [other_host, planned, older]) is None
    assert data.newer_run("ibmi-prod1", "PAYROLL", None, [failed]) is None  # the plan's run unknown to Airflow


# --- the last restore drill --------------------------------------------------------------------------------------


def _drilled(fleet, outcome: str, run_id: str, at: datetime, problem: str | None = None) -> None:
    from mqjournal.catalog import DrillRecord

    (copy,) = fleet.catalog.stored_copies(fleet.catalog.stored_objects("ibmi-prod2", unproven=True)[0].store_url)
    s = copy.stored
    fleet.catalog.record_drill(
        DrillRecord(
            host=s.host, qmgr=s.qmgr, store_url=s.store_url, key=s.key, save_file_library=s.save_file_library,
            save_file=s.save_file, run_id=run_id, drilled_at=at, outcome=outcome, scratch="QGPL/DRL0000001",
            problem=problem,
        )
    )  # fmt: skip


def test_a_queue_manager_never_drilled_has_no_last_drill(fleet):
    assert rows_by_qmgr(fleet)["BILLING"].last_drill is None


def test_the_last_drill_is_the_newest_drill_run_of_the_queue_managers_copies(fleet):
    _drilled(fleet, "failed", "drill-1", COLLECTED1, problem="does not list QMBILL01/AMQA000003")
    _drilled(fleet, "passed", "drill-2", COLLECTED2)

    row = rows_by_qmgr(fleet)["BILLING"]

    assert row.last_drill is not None
    assert (row.last_drill.run_id, row.last_drill.at, row.last_drill.copies, row.last_drill.passed) == (
        "drill-2",
        COLLECTED2,
        1,
        1,
    )
    assert row.last_drill.outcome == "passed" and not any("restore drill" in r for r in row.light.reasons)
    assert rows_by_qmgr(fleet)["PAYROLL"].last_drill is None  # another queue manager's copies


def test_a_failed_last_drill_turns_the_light_red_naming_the_copy(fleet):
    _drilled(fleet, "failed", "drill-1", COLLECTED2, problem="does not list QMBILL01/AMQA000003")

    row = rows_by_qmgr(fleet)["BILLING"]

    assert row.last_drill is not None and row.last_drill.outcome == "failed"
    assert row.last_drill.failed == ["ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf"]
    assert row.light.color == "red"
    assert any("last restore drill" in r and "MQJAAAAAA0" in r for r in row.light.reasons), row.light.reasons


def test_a_drill_that_could_not_be_made_is_shown_but_is_no_reason_for_the_light(fleet):
    _drilled(fleet, "error", "drill-1", COLLECTED2, problem="no session to ibmi-prod2")

    row = rows_by_qmgr(fleet)["BILLING"]

    assert row.last_drill is not None and row.last_drill.outcome == "not made"
    assert row.last_drill.not_made == ["ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf"]
    assert not any("restore drill" in r for r in row.light.reasons)


def test_the_fleet_page_shows_the_last_drill_and_a_failed_one_stands_out(fleet):
    from mqjournal.fleetview import pages

    _drilled(fleet, "failed", "drill-1", COLLECTED2, problem="does not list QMBILL01/AMQA000003")
    rows = data.fleet(fleet.settings, fleet.catalog, now=NOW)
    html = pages.fleet_page(rows, pages.Links(base="/mqjournal", airflow="/"), sort=None, order=None)

    assert 'data-col="drill"' in html and "last restore drill" in html
    assert 'class="drill drill-failed" data-drill="failed"' in html
    assert "failed: 0 of 1 passed; FAILED: ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf" in html
    assert "never drilled" in html  # PAYROLL


# --- what the catalog records since the plan ---------------------------------------------------------------------


def _delete(fleet, s, receivers, at: datetime) -> None:
    from mqjournal.catalog import DeletionRecord

    for r in receivers:
        fleet.catalog.record_deletion(
            DeletionRecord(
                host=s.host, qmgr=s.qmgr, receiver=r.name, library=r.library, attached_at=r.attached_at,
                deleted_at=at, delete_option="*IGNINQMSG", run_id=RUN2,
            )
        )  # fmt: skip


def test_receivers_the_catalog_records_deleted_since_the_plan_are_not_online(fleet):
    from tests.fleetview.conftest import billing

    b2 = billing(RUN2, 12, COLLECTED2)
    _delete(fleet, b2, b2.receivers[:4], COLLECTED2 + timedelta(minutes=40))  # this run's delete step, after its plan

    row = rows_by_qmgr(fleet)["BILLING"]
    page = data.queue_manager(fleet.settings, fleet.catalog, "ibmi-prod2", "QMBILL01", now=NOW)

    assert (row.receivers_online, row.bytes_online) == (8, 8 * 2 * MB)
    assert (row.deleted_since_plan, row.bytes_deleted_since_plan) == (4, 4 * 2 * MB)
    assert row.last_deleted_at == COLLECTED2 + timedelta(minutes=40)
    assert page is not None and (page.row.receivers_online, page.row.deleted_since_plan) == (8, 4)
    assert [r.deleted_at is not None for r in page.receivers][:5] == [True, True, True, True, False]


def test_a_deletion_recorded_before_the_plans_collection_is_the_plans_business(fleet):
    from tests.fleetview.conftest import billing

    b2 = billing(RUN2, 12, COLLECTED2)
    _delete(fleet, b2, b2.receivers[:4], COLLECTED2 - timedelta(minutes=1))  # the plan already saw what followed

    row = rows_by_qmgr(fleet)["BILLING"]

    assert (row.receivers_online, row.deleted_since_plan) == (12, 0)


# --- each queue manager's own outcome ----------------------------------------------------------------------------


def _approved_one_declined_the_other(fleet) -> str:
    """Run 2's report as the report task writes it: PAYROLL approved (2 receivers deleted), BILLING declined."""
    from mqjournal.outcomes import DeleteResult
    from mqjournal.planrows import QueueManagerRef
    from mqjournal.runreport import RunFacts, render_markdown

    qms = [row.plan for row in data.fleet(fleet.settings, fleet.catalog, now=NOW)]
    payroll = QueueManagerRef(host="ibmi-prod1", qmgr="PAYROLL", library="QMPAYROLL")
    billing = QueueManagerRef(host="ibmi-prod2", qmgr="BILLING", library="QMBILL01")
    facts = RunFacts(
        run_id=RUN2,
        outcome="approved by admin: 2 receivers deleted, 6.0 MB freed",
        approved_by="admin",
        chosen=[payroll.key],
        declined=[billing.key],
        queue_managers=[q.model_copy(update={"receivers_to_delete": 2}) for q in qms if q is not None],
        deletes=[DeleteResult(target=payroll, deleted=["AMQA000002", "AMQA000003"], freed_bytes=6 * MB)],
    )
    fleet.settings.report_file(RUN2).write_text(render_markdown(facts), encoding="utf-8")
    return facts.outcome


def test_each_row_shows_its_own_outcome_not_the_whole_runs_note(fleet):
    outcome = _approved_one_declined_the_other(fleet)
    note = "approved by admin: 2 receivers deleted"

    rows = rows_by_qmgr(fleet, StandInAirflow(AirflowRun(run_id=RUN2, state="success", note=note)))

    billing, payroll = rows["BILLING"], rows["PAYROLL"]
    assert (billing.outcome, billing.outcome_from) == (
        "declined at the approval gate: nothing was deleted",
        "queue manager",
    )
    assert (payroll.outcome, payroll.outcome_from) == ("2 receivers deleted, 6.0 MB freed", "queue manager")
    assert billing.run_note == note  # the whole run's, kept for the run's link
    assert outcome != billing.outcome


def test_the_report_names_each_queue_managers_status_and_those_with_nothing_to_do(fleet):
    fleet.settings.report_file(RUN2).write_text(
        "# mq_journal_maintenance r\n\n**Outcome: dry run**\n\n## ibmi-prod2/BILLING (library QMBILL01)\n\n"
        "dry run: 3 receivers would be deleted, nothing was saved or deleted\n\n## Nothing to do\n\n"
        "Nothing saved, deleted or alerted on 2 queue managers: ibmi-prod1/PAYROLL/QMPAYROLL, ibmi-prod3/X/QMX.\n",
        encoding="utf-8",
    )

    assert data.report_statuses(fleet.settings, RUN2) == {
        "ibmi-prod2/BILLING/QMBILL01": "dry run: 3 receivers would be deleted, nothing was saved or deleted",
        "ibmi-prod1/PAYROLL/QMPAYROLL": data.QUIET,
        "ibmi-prod3/X/QMX": data.QUIET,
    }


# --- the ASP forecast --------------------------------------------------------------------------------------------


def fill_payrolls_asp(fleet, used_mb: list[int]) -> None:
    """Collections of PAYROLL after run 2, a day apart, its ASP 2 (1000 MB, as run 2's plan has it) filling."""
    from mqjournal.snapshot import write_snapshots
    from tests.fleetview.conftest import payroll

    for day, used in enumerate(used_mb, start=1):
        run_id = f"manual__2026-11-{22 + day}T05:00:00+00:00"
        s = payroll(run_id, 8, COLLECTED2 + timedelta(days=day)).model_copy(
            update={"asp_number": 2, "asp_capacity_bytes": 1000 * MB, "asp_available_bytes": (1000 - used) * MB}
        )
        write_snapshots(fleet.settings.snapshot_dir(run_id) / "ibmi-prod1__QMPAYROLL.jsonl", [s])


def test_a_row_carries_its_asps_forecast_and_asp_full_soon_when_the_limit_is_near(fleet):
    fill_payrolls_asp(fleet, [500, 540, 580, 620])  # 40 MB a day: 900 MB (90%) in 7 days, full in 9.5

    rows = rows_by_qmgr(fleet)

    f = rows["PAYROLL"].asp_forecast
    assert f is not None and (f.host, f.asp_number) == ("ibmi-prod1", 2)
    assert f.growth_bytes_per_day == pytest.approx(40 * MB)
    assert (f.days_to_limit, f.days_to_full) == (pytest.approx(7), pytest.approx(9.5))
    assert "ASP_FULL_SOON" in rows["PAYROLL"].alerts
    assert any(r.startswith("ASP_FULL_SOON") for r in rows["PAYROLL"].light.reasons)
    assert rows["BILLING"].asp_forecast is None  # its collections did not read ASP_INFO
    assert "ASP_FULL_SOON" not in rows["BILLING"].alerts


def test_an_asp_far_from_its_limit_has_a_forecast_and_no_alert(fleet):
    fill_payrolls_asp(fleet, [500, 510, 520, 530])  # 10 MB a day: 90% in 37 days

    payroll = rows_by_qmgr(fleet)["PAYROLL"]

    assert payroll.asp_forecast is not None and payroll.asp_forecast.days_to_limit == pytest.approx(37)
    assert "ASP_FULL_SOON" not in payroll.alerts
