"""A data folder as two maintenance runs leave it, for the fleet view's tests: BILLING on ibmi-prod2 (a damaged queue
holds the AMQ7462 point) and PAYROLL on ibmi-prod1 (an open unit of work holds AMQ7460), with snapshots, plans,
reports and a backup catalog; and an Airflow metadata DB to hold the runs' states and notes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mqjournal.catalog import Catalog, DeletionRecord, SavedReceiver, SaveRecord, StoredObject
from mqjournal.settings import Settings
from mqjournal.snapshot import Snapshot, write_snapshots
from tests.plan.builders import CET, chain, names, snapshot

MB = 1024 * 1024
RUN1, RUN2 = "scheduled__2026-11-15T01:00:00+00:00", "manual__2026-11-22T05:00:00+00:00"
COLLECTED1 = datetime(2026, 11, 15, 2, 5, tzinfo=CET)
COLLECTED2 = datetime(2026, 11, 22, 6, 5, tzinfo=CET)


@dataclass
class Fleet:
    settings: Settings
    catalog: Catalog


def write_plan(settings: Settings, run_id: str, as_of: datetime, qms: list[dict], receivers: list[dict]) -> Path:
    """A plan folder as the Spark job writes it (its columns as given: a test leaves out the newer ones)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = settings.plan_dir(run_id)
    for name, rows in (("queue_managers", qms), ("receivers", receivers)):
        (folder / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), folder / name / "part-00000.snappy.parquet")
    (folder / "summary.json").write_text(json.dumps({"as_of": as_of.isoformat()}), encoding="utf-8")
    return folder


def narrow_plan(settings: Settings, run_id: str, qmgr: str) -> None:
    """Leave `qmgr` out of the run's plan, as a run narrowed to other queue managers plans: its row then comes from
    an older run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = settings.plan_dir(run_id) / "queue_managers"
    rows = [q for q in pq.read_table(folder).to_pylist() if q["qmgr"] != qmgr]
    for part in folder.iterdir():
        part.unlink()
    pq.write_table(pa.Table.from_pylist(rows), folder / "part-00000.snappy.parquet")


def qm_row(s: Snapshot, run_id: str, **columns: Any) -> dict:
    """A queue_managers row with the columns every plan has; `columns` adds or overrides."""
    row = {
        "host": s.host,
        "qmgr": s.qmgr,
        "qmgr_library": s.qmgr_library,
        "oldest_needed": s.receivers[0].name,
        "blocked": False,
        "block_reason": None,
        "alerts": [],
        "recovery_points": f"AMQJRNINF {s.receivers[-1].name} 2026-11-22T06:00:00.000",
        "receivers_to_save": 0,
        "bytes_to_save": 0,
        "receivers_to_delete": 0,
        "bytes_to_delete": 0,
        "bytes_freed": 0,
        "chain_length": len(s.receivers),
        "oldest_needed_age_seconds": 3600,
        "collected_at": s.collected_at.astimezone(UTC),
        "run_id": run_id,
    }
    return row | columns


def receiver_rows(s: Snapshot, action: str = "keep", reason: str = "NEEDED_NOT_SAVED", **extra: Any) -> list[dict]:
    return [
        {
            "host": s.host,
            "qmgr": s.qmgr,
            "qmgr_library": s.qmgr_library,
            "receiver": r.name,
            "library": r.library,
            "chain_position": i,
            "status": str(r.status),
            "size_bytes": r.size_bytes,
            "action": "keep" if r.status == "ATTACHED" else action,
            "reason": "ATTACHED" if r.status == "ATTACHED" else reason,
        }
        | extra
        for i, r in enumerate(s.receivers)
    ]


def billing(run_id: str, count: int, collected_at: datetime) -> Snapshot:
    return snapshot(
        chain(names(0, count), library="QMBILL01", size=2 * MB, start=collected_at - timedelta(hours=count)),
        host="ibmi-prod2",
        qmgr="BILLING",
        library="QMBILL01",
        oldest="AMQA000000",
        collected_at=collected_at,
        run_id=run_id,
    )


def payroll(run_id: str, count: int, collected_at: datetime, freed: tuple[str, ...] = ()) -> Snapshot:
    return snapshot(
        chain(
            names(0, count), library="QMPAYROLL", size=3 * MB, start=collected_at - timedelta(hours=count), freed=freed
        ),
        host="ibmi-prod1",
        qmgr="PAYROLL",
        library="QMPAYROLL",
        collected_at=collected_at,
        run_id=run_id,
    ).model_copy(update={"asp_number": 1, "asp_capacity_bytes": 100 * MB * 1024, "asp_available_bytes": 20 * MB * 1024})


def lost_payroll(fleet: Fleet) -> Snapshot:
    """Run 2's PAYROLL as collected after AMQA000000 and AMQA000001 were deleted outside mqjournal and the queue
    manager lost power: AMQJRNINF and AMQ7460 still name AMQA000000 (its entry of 21 Nov 22:06), which is gone."""
    start = COLLECTED2 - timedelta(hours=8)
    s = snapshot(
        chain(names(0, 8), library="QMPAYROLL", size=3 * MB, start=start)[2:],
        host="ibmi-prod1",
        qmgr="PAYROLL",
        library="QMPAYROLL",
        oldest="AMQA000000",
        needed_at=start + timedelta(minutes=1),
        collected_at=COLLECTED2,
        run_id=RUN2,
        checkpoint_ok=False,
    )
    write_snapshots(fleet.settings.snapshot_dir(RUN2) / f"{s.host}__{s.qmgr_library}.jsonl", [s])
    return s


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    """Run 1 (15 Nov): BILLING 10 receivers, PAYROLL 6, plans without the newer columns. Run 2 (22 Nov): BILLING 12
    receivers held by AMQ7462 (damaged APP.REQUEST.QUEUE, alert MEDIA_POINT_OLD), PAYROLL 8 (two freed) held by
    AMQ7460 (STARTUP_POINT_OLD); the catalog has run 1's saves of BILLING's first 4 receivers, one copy of them in
    the backup store, and run 2's deletion of PAYROLL's AMQA000000."""
    settings = Settings.from_env({"MQJOURNAL_DATA_DIR": str(tmp_path / "data")})
    b1, p1 = billing(RUN1, 10, COLLECTED1), payroll(RUN1, 6, COLLECTED1)
    b2, p2 = billing(RUN2, 12, COLLECTED2), payroll(RUN2, 8, COLLECTED2, freed=("AMQA000000", "AMQA000001"))
    for s in (b1, p1, b2, p2):
        write_snapshots(settings.snapshot_dir(s.run_id) / f"{s.host}__{s.qmgr_library}.jsonl", [s])
    write_plan(
        settings,
        RUN1,
        COLLECTED1 + timedelta(minutes=2),
        [qm_row(b1, RUN1), qm_row(p1, RUN1, oldest_needed_age_seconds=7200)],
        receiver_rows(b1, "save") + receiver_rows(p1, "save_then_delete", "NOT_NEEDED_NOT_SAVED"),
    )
    newer = {
        "utc_offset_minutes": 60,
        "asp_number": 2,
        "asp_capacity_bytes": 1000 * MB,
        "asp_available_bytes": 500 * MB,
    }
    write_plan(
        settings,
        RUN2,
        COLLECTED2 + timedelta(minutes=2),
        [
            qm_row(
                b2,
                RUN2,
                alerts=["MEDIA_POINT_OLD"],
                oldest_needed_age_seconds=46 * 3600,
                holding_point="AMQ7462",
                holding_point_at=(COLLECTED2 - timedelta(hours=46)).astimezone(UTC),
                holding_point_age_seconds=46 * 3600,
                damaged_objects=["APP.REQUEST.QUEUE (QLOCAL), reported by AMQ7472"],
                **newer,
            ),
            qm_row(
                p2,
                RUN2,
                alerts=["STARTUP_POINT_OLD"],
                oldest_needed_age_seconds=42 * 3600,
                holding_point="AMQ7460",
                holding_point_at=(COLLECTED2 - timedelta(hours=42)).astimezone(UTC),
                holding_point_age_seconds=42 * 3600,
                damaged_objects=[],
                **newer,
            ),
        ],
        receiver_rows(b2) + receiver_rows(p2, "keep", "NEEDED_FREED"),
    )
    reports = settings.report_file(RUN2).parent
    reports.mkdir(parents=True, exist_ok=True)
    settings.report_file(RUN1).write_text(
        "# mq_journal_maintenance\n\nOutcome: approved by admin: 1 receivers deleted\n"
    )
    settings.report_file(RUN2).write_text(
        "# mq_journal_maintenance\n\nOutcome: dry run: plan only, nothing saved or deleted\n"
    )

    catalog = Catalog(settings.catalog_url)
    saved_at = COLLECTED1 + timedelta(minutes=10)
    for r in b1.receivers[:4]:
        catalog.record_save(
            SaveRecord(
                host=b1.host, qmgr=b1.qmgr, qmgr_library=b1.qmgr_library, receiver=r.name, library=r.library,
                attached_at=r.attached_at, detached_at=r.detached_at, first_sequence=r.first_sequence,
                last_sequence=r.last_sequence, previous=r.previous, next=r.next, size_bytes=r.size_bytes,
                save_file_library="QGPL", save_file="MQJAAAAAA0", saved_at=saved_at, verified_at=saved_at, run_id=RUN1,
            )
        )  # fmt: skip
    catalog.record_stored(
        StoredObject(
            host=b1.host, qmgr=b1.qmgr, qmgr_library=b1.qmgr_library, save_file_library="QGPL",
            save_file="MQJAAAAAA0", run_id=RUN1, store_url=str(tmp_path / "store"),
            key="ibmi-prod2/BILLING/QGPL/MQJAAAAAA0.savf", size_bytes=8 * MB, sha256="0" * 64,
            created_at=saved_at + timedelta(minutes=1), verified_at=saved_at + timedelta(minutes=2),
            objects=tuple(SavedReceiver(receiver=r.name, library=r.library, attached_at=r.attached_at) for r in b1.receivers[:4]),
        )
    )  # fmt: skip
    first = p1.receivers[0]
    catalog.record_deletion(
        DeletionRecord(
            host=p1.host, qmgr=p1.qmgr, receiver=first.name, library=first.library, attached_at=first.attached_at,
            deleted_at=COLLECTED2, delete_option="*IGNINQMSG", run_id=RUN2,
        )
    )  # fmt: skip
    return Fleet(settings, catalog)


# --- Airflow's metadata DB ---------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def airflow_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite metadata DB made by `airflow db migrate` in an Airflow home of its own, once per session (about 3 s).
    In a subprocess: this process's Airflow read its configuration when it was imported. The environment's other
    AIRFLOW* variables are left out, so that nothing points it at another Airflow's DB."""
    home = tmp_path_factory.mktemp("airflow-home")
    url = f"sqlite:///{home / 'airflow.db'}"
    env = {k: v for k, v in os.environ.items() if not k.lstrip("_").startswith("AIRFLOW")}
    env |= {"AIRFLOW_HOME": str(home), "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url}
    env |= {"AIRFLOW__CORE__LOAD_EXAMPLES": "False"}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "airflow"), "db", "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return url


@pytest.fixture
def airflow_orm(airflow_db_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Airflow's ORM (`airflow.settings.engine`, `Session`, what `create_session` uses) on that DB for one test, as
    the API server's is on its DB; its runs are removed afterwards. Yields the engine."""
    from airflow import settings as airflow_settings
    from sqlalchemy import create_engine, text
    from sqlalchemy.orm import scoped_session, sessionmaker

    # The TestClient serves sync endpoints from other threads.
    engine = create_engine(airflow_db_url, connect_args={"check_same_thread": False})
    factory = sessionmaker(engine, autoflush=False, expire_on_commit=False)
    monkeypatch.setattr(airflow_settings, "engine", engine)
    monkeypatch.setattr(airflow_settings, "NonScopedSession", factory)
    monkeypatch.setattr(airflow_settings, "Session", scoped_session(factory))
    yield engine
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM dag_run_note"))
        connection.execute(text("DELETE FROM dag_run"))
    engine.dispose()


def add_dag_run(
    run_id: str,
    state: str,
    note: str | None = None,
    *,
    dag_id: str = "mq_journal_maintenance",
    conf: dict | None = None,
) -> None:
    """A run as the scheduler leaves it in the metadata DB, with its note (the run-notes listener's outcome line); it
    was to run at the time its id says, as Airflow's run ids do."""
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState

    with create_session() as session:
        session.add(
            DagRun(
                dag_id=dag_id,
                run_id=run_id,
                run_type="manual",
                run_after=datetime.fromisoformat(run_id.split("__", 1)[1]),
                state=DagRunState(state),
                note=note,
                conf=conf or {},
            )
        )
