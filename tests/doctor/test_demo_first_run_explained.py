"""Issue #16's acceptance on the demo fleet: its first run explains BILLING's and PAYROLL's kept receivers in the
plan, the gate's body and the run report, with no history needed (the stuck alerts need several runs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mqjournal.collection import collect_fleet
from mqjournal.fleet import load_fleet
from mqjournal.report import plan_body
from mqjournal.rules import plan_fleet
from mqjournal.runreport import RunFacts, render_html, render_markdown
from mqjournal.sim.service import SimulatorService
from mqjournal.snapshot import read_snapshots
from mqjournal.vocabulary import Alert, HoldingPoint

DEMO = Path(__file__).resolve().parents[2] / "docker" / "fleet.example.yaml"


def test_the_demos_first_run_says_why_billing_and_payroll_keep_their_receivers(tmp_path: Path):
    demo = load_fleet(DEMO)
    hours = demo.warmup_hours  # the demo's own warm-up: the unit of work at hour 30, the damage at hour 48
    config = demo.model_copy(
        update={
            "state_dir": tmp_path / "state",
            "client_key": tmp_path / "state" / "client_key",
            "known_hosts": tmp_path / "state" / "known_hosts",
            "start": datetime.now(UTC) - timedelta(hours=hours),
            "hosts": [h.model_copy(update={"port": 0}) for h in demo.hosts],
        }
    )
    service = SimulatorService(config)
    ports = service.start()
    try:
        live = config.model_copy(update={"hosts": [h.model_copy(update={"port": ports[h.name]}) for h in config.hosts]})
        run_dir, _ = collect_fleet(live, tmp_path / "out", run_id="first")
    finally:
        service.stop()
    plan = plan_fleet(list(read_snapshots(run_dir / "snapshots.jsonl")))
    qms = {q.qmgr: q for q in plan.queue_managers if q.qmgr in ("BILLING", "PAYROLL")}

    billing, payroll = qms["BILLING"], qms["PAYROLL"]
    assert billing.holding_point == HoldingPoint.MEDIA and Alert.MEDIA_POINT_OLD in billing.alerts
    assert billing.damaged_objects == ("APP.REQUEST.QUEUE (LCLQ)",)
    assert payroll.holding_point == HoldingPoint.STARTUP and Alert.STARTUP_POINT_OLD in payroll.alerts
    assert payroll.holding_point_age_seconds and payroll.holding_point_age_seconds > 40 * 3600

    qm_rows, receiver_rows = plan.queue_managers, plan.receivers
    body = plan_body(qm_rows, receiver_rows)
    facts = RunFacts(run_id="first", outcome="dry run", dry_run=True, queue_managers=qm_rows, receivers=receiver_rows)
    for text in (body, render_markdown(facts), render_html(facts)):
        assert "AMQ7462" in text and "APP.REQUEST.QUEUE" in text and "RCRMQMOBJ" in text
        assert "AMQ7460" in text and "unit of work" in text and "WRKMQMTRN" in text
