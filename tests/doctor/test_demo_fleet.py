"""The doctor passes on the demo fleet (docker/fleet.example.yaml), as `make demo` serves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mqjournal.doctor import render, run_doctor
from mqjournal.fleet import load_fleet
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import ssh_connector
from mqjournal.sim.service import SimulatorService

DEMO = Path(__file__).resolve().parents[2] / "docker" / "fleet.example.yaml"


def test_the_demo_fleet_is_ready(tmp_path: Path):
    demo = load_fleet(DEMO)
    # The demo's partitions, served on free ports from a fresh state, with a short warm-up ending now.
    config = demo.model_copy(
        update={
            "state_dir": tmp_path / "state",
            "client_key": tmp_path / "state" / "client_key",
            "known_hosts": tmp_path / "state" / "known_hosts",
            "warmup_hours": 2,
            "start": datetime.now(UTC) - timedelta(hours=2),
            "hosts": [h.model_copy(update={"port": 0}) for h in demo.hosts],
        }
    )
    service = SimulatorService(config)
    ports = service.start()
    try:
        connectors = {
            h.name: ssh_connector(
                address="127.0.0.1",
                port=ports[h.name],
                user=config.user_for(h),
                key=service.client_key,
                known_hosts=config.known_hosts,
            )
            for h in config.hosts
        }
        reports = run_doctor(config, connectors, audit=AuditLog(tmp_path / "audit.jsonl"))
    finally:
        service.stop()
    text = render(reports)
    assert all(r.ready for r in reports), text
    assert len(reports) == len(demo.hosts)
