"""The demo's partitions (docker/fleet.example.yaml), as the doctor tests serve them: free ports, a fresh state, a
short warm-up ending now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from mqjournal.fleet import FleetConfig, load_fleet

DEMO = Path(__file__).resolve().parents[2] / "docker" / "fleet.example.yaml"


def demo_fleet(tmp_path: Path) -> FleetConfig:
    demo = load_fleet(DEMO)
    return demo.model_copy(
        update={
            "state_dir": tmp_path / "state",
            "client_key": tmp_path / "state" / "client_key",
            "known_hosts": tmp_path / "state" / "known_hosts",
            "warmup_hours": 2,
            "start": datetime.now(UTC) - timedelta(hours=2),
            "hosts": [h.model_copy(update={"port": 0}) for h in demo.hosts],
            "linux_hosts": [h.model_copy(update={"port": 0}) for h in demo.linux_hosts],
        }
    )
