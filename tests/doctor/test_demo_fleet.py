"""The doctor passes on the demo fleet (docker/fleet.example.yaml), its partitions and its Linux host, as `make demo`
serves it."""

from __future__ import annotations

from pathlib import Path

from mqjournal.doctor import render, run_doctor
from mqjournal.ibmi.audit import AuditLog
from mqjournal.ibmi.transport import ssh_connector
from mqjournal.sim.service import SimulatorService
from tests.doctor.demofleet import demo_fleet


def test_the_demo_fleet_is_ready(tmp_path: Path):
    config = demo_fleet(tmp_path)
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
            for h in [*config.hosts, *config.linux_hosts]
        }
        reports = run_doctor(config, connectors, audit=AuditLog(tmp_path / "audit.jsonl"))
    finally:
        service.stop()
    text = render(reports)
    assert all(r.ready for r in reports), text
    # The partitions and the Linux host (#32) alike.
    assert [r.host for r in reports] == [h.name for h in config.hosts] + [h.name for h in config.linux_hosts]
