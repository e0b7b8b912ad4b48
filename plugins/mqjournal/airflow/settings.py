"""Where the maintenance DAG finds its fleet, data, catalog and Spark job: environment, with working defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Settings:
    fleet_file: Path
    data_dir: Path
    catalog_url: str
    spark_app: Path
    spark_conn_id: str
    schedule: str | None
    sessions_per_host: int = 2

    @property
    def snapshots(self) -> Path:
        return self.data_dir / "snapshots"

    def snapshot_dir(self, run_id: str) -> Path:
        return self.snapshots / f"run_id={safe(run_id)}"

    def plan_dir(self, run_id: str) -> Path:
        return self.data_dir / "plans" / f"run_id={safe(run_id)}"

    def report_file(self, run_id: str) -> Path:
        return self.data_dir / "reports" / f"{safe(run_id)}.md"

    @property
    def audit_log(self) -> Path:
        return self.data_dir / "audit.jsonl"


def safe(run_id: str) -> str:
    """Run ids carry ':' and '+' (manual__2026-11-22T05:00:00+00:00): keep paths portable."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in run_id)


def settings() -> Settings:
    home = Path(os.environ.get("AIRFLOW_HOME", Path.home() / "airflow"))
    data = Path(os.environ.get("MQJOURNAL_DATA_DIR", home / "mqjournal"))
    return Settings(
        fleet_file=Path(os.environ.get("MQJOURNAL_FLEET", REPO / "docker" / "fleet.example.yaml")),
        data_dir=data,
        catalog_url=os.environ.get("MQJOURNAL_CATALOG_URL", f"sqlite:///{data / 'catalog.db'}"),
        spark_app=Path(os.environ.get("MQJOURNAL_SPARK_APP", REPO / "spark_apps" / "plan_receivers.py")),
        spark_conn_id=os.environ.get("MQJOURNAL_SPARK_CONN_ID", "spark_default"),
        # Weekly maintenance window by default: Sunday 02:00 (the scheduler's time zone, UTC unless configured).
        schedule=os.environ.get("MQJOURNAL_SCHEDULE", "0 2 * * 0") or None,
        sessions_per_host=int(os.environ.get("MQJOURNAL_SSH_SESSIONS_PER_HOST", "2")),
    )
