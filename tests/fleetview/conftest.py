"""A data folder as two maintenance runs leave it, for the fleet view's tests: BILLING on ibmi-prod2 (a damaged queue
holds the AMQ7462 point) and PAYROLL on ibmi-prod1 (an open unit of work holds AMQ7460), with snapshots, plans,
reports and a backup catalog (`fleet`); the same with three Linux queue managers beside them (`mixed`); and an
Airflow metadata DB to hold the runs' states and notes."""

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

from mqjournal.catalog import Catalog, DeletionRecord, SavedReceiver, SaveRecord, StoredExtent, StoredObject
from mqjournal.linuxmq.plan import QueueManagerLogPlan, plan_queue_manager
from mqjournal.linuxmq.planrows import EXTENT_COLUMNS, EXTENTS, QUEUE_MANAGER_COLUMNS, QUEUE_MANAGERS
from mqjournal.linuxmq.snapshot import LinuxSnapshot, write_linux_snapshots
from mqjournal.settings import Settings
from mqjournal.snapshot import Snapshot, write_snapshots
from tests.linuxmq.test_snapshot import record
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


# --- Linux queue managers (#32) -----------------------------------------------------------------------------------

MIB = 1024 * 1024
LINUX_HOSTS = ("app-linux1", "mq-linux1")  # one sorts before the partitions, one after
SHA = "c" * 64
COPIED_AT = (COLLECTED2 + timedelta(minutes=10)).astimezone(UTC)
AUDIT_HISTORY_RUNS = ("collect_h1", "collect_h2", "collect_h3")


def linux_snapshot(**changes: Any) -> LinuxSnapshot:
    """A Linux queue manager's collection (tests/linuxmq's record: QM.ORDERS on mq-linux1, Archive mode, CURRLOG 12,
    RECLOG 11, MEDIALOG 3, ARCHLOG 1, extents S0000000-S0000012 of 16 MiB) with `changes`."""
    return LinuxSnapshot.model_validate(record(**changes))


def extents(*numbers: int, size: int = 16 * MIB) -> list[dict]:
    return [{"name": f"S{n:07d}.LOG", "size_bytes": size, "modified_at": None} for n in numbers]


def orders(run_id: str, collected_at: datetime, current: int = 12) -> LinuxSnapshot:
    """QM.ORDERS on mq-linux1, Archive mode: RECLOG one behind CURRLOG, MEDIALOG at S0000003, ARCHLOG S0000001."""
    return linux_snapshot(
        run_id=run_id,
        collected_at=collected_at.isoformat(),
        log_path="/var/mqm/log/QM!ORDERS/active/",
        current_extent=f"S{current:07d}.LOG",
        restart_extent=f"S{current - 1:07d}.LOG",
        extents=extents(*range(current + 1)),
    )


def audit(run_id: str, collected_at: datetime, current: int, media: int) -> LinuxSnapshot:
    """QM.AUDIT on mq-linux1, Manual mode, its log across the 9,999,999 wrap: RECLOG stays on S9999998."""
    return linux_snapshot(
        run_id=run_id,
        collected_at=collected_at.isoformat(),
        qmgr="QM.AUDIT",
        log_management="Manual",
        log_path="/var/mqm/log/QM!AUDIT/active/",
        extent_bytes=4 * MIB,
        current_extent=f"S{current % 10_000_000:07d}.LOG",
        restart_extent="S9999998.LOG",
        media_extent=f"S{media:07d}.LOG",
        archive_extent=None,
        extents=extents(*(n % 10_000_000 for n in range(9_999_996, current + 1)), size=4 * MIB),
    )


def audit_history() -> list[LinuxSnapshot]:
    """Three collections before run 2's: CURRLOG S9999999, S0000000, S0000001; MEDIALOG moves, RECLOG does not."""
    return [
        audit(run_id, COLLECTED2 - timedelta(hours=3 - n), 9_999_999 + n, 9_999_994 + n)
        for n, run_id in enumerate(AUDIT_HISTORY_RUNS)
    ]


def edge(run_id: str, collected_at: datetime) -> LinuxSnapshot:
    """QM.EDGE on app-linux1: a circular log, which MQ manages and mqjournal does not plan."""
    return linux_snapshot(
        run_id=run_id,
        collected_at=collected_at.isoformat(),
        host="app-linux1",
        qmgr="QM.EDGE",
        log_type="CIRCULAR",
        log_management="Automatic",
        log_path="/var/mqm/log/QM!EDGE/active/",
        current_extent="S0000002.LOG",
        restart_extent=None,
        media_extent=None,
        archive_extent=None,
        extents=extents(0, 1, 2),
    )


LINUX_EXTENTS_SCHEMA = [
    ("host", "string"), ("qmgr", "string"), ("extent", "string"), ("action", "string"), ("reason", "string"),
    ("size_bytes", "int64"),
]  # fmt: skip


def write_linux_plan(settings: Settings, run_id: str, plans: list[QueueManagerLogPlan]) -> Path:
    """The Linux datasets of a plan folder as the plan job writes them: linuxmq.planrows' columns in their order, with
    the Spark job's types (long sizes, UTC timestamps, alerts as an array of kind and text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = settings.plan_dir(run_id)
    extent_rows = [
        {"host": p.host, "qmgr": p.qmgr, "extent": d.extent, "action": d.action.value, "reason": d.reason,
         "size_bytes": d.size_bytes}
        for p in plans
        for d in p.decisions
    ]  # fmt: skip
    qm_rows = [
        {
            "host": p.host, "qmgr": p.qmgr, "run_id": p.run_id, "collected_at": p.collected_at.astimezone(UTC),
            "log_type": p.log_type, "log_management": p.log_management.value, "current_extent": p.current_extent,
            "restart_extent": p.restart_extent, "media_extent": p.media_extent, "archive_extent": p.archive_extent,
            "alerts": [{"kind": kind.value, "text": text} for kind, text in p.alerts],
        }
        for p in plans
    ]  # fmt: skip
    text, alert = pa.string(), pa.struct([("kind", pa.string()), ("text", pa.string())])
    schemas = {
        EXTENTS: pa.schema([(name, getattr(pa, kind)()) for name, kind in LINUX_EXTENTS_SCHEMA]),
        QUEUE_MANAGERS: pa.schema(
            [("host", text), ("qmgr", text), ("run_id", text), ("collected_at", pa.timestamp("us", tz="UTC"))]
            + [(name, text) for name in QUEUE_MANAGER_COLUMNS[4:-1]]
            + [("alerts", pa.list_(alert))]
        ),
    }
    assert schemas[EXTENTS].names == list(EXTENT_COLUMNS) and schemas[QUEUE_MANAGERS].names == list(
        QUEUE_MANAGER_COLUMNS
    )
    for name, rows in ((EXTENTS, extent_rows), (QUEUE_MANAGERS, qm_rows)):
        (folder / name).mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rows, schema=schemas[name])
        pq.write_table(table, folder / name / "part-00000.snappy.parquet")
    return folder


def write_linux_snapshots_of(settings: Settings, *snapshots: LinuxSnapshot) -> None:
    """Each run's snapshots, a file per host, as `mqjournal collect` writes them."""
    by_file: dict[Path, list[LinuxSnapshot]] = {}
    for s in snapshots:
        by_file.setdefault(settings.linux_snapshot_dir(s.run_id) / f"{s.host}.jsonl", []).append(s)
    for path, found in by_file.items():
        write_linux_snapshots(path, sorted(found, key=lambda s: s.qmgr))


def extent_copy(extent: str, *, qmgr: str = "QM.ORDERS", verified_at: datetime = COPIED_AT) -> StoredExtent:
    return StoredExtent(
        host="mq-linux1", qmgr=qmgr, extent=extent, run_id=RUN2, host_sha256=SHA, store_url="file:///backup",
        key=f"linux/mq-linux1/{qmgr}/{RUN2}/{extent}", size_bytes=16 * MIB, sha256=SHA,
        created_at=verified_at - timedelta(seconds=5), verified_at=verified_at,
    )  # fmt: skip


@pytest.fixture
def mixed(fleet: Fleet) -> Fleet:
    """`fleet` with three Linux queue managers, planned by the reference planner as the plan job plans (no catalog:
    nothing proven to it) and written as the job writes its rows:
    - app-linux1 QM.EDGE, a circular log, in run 1's plan only: not planned (alert not_planned);
    - mq-linux1 QM.ORDERS, Archive mode, in both runs' plans (run 2's: CURRLOG S0000012, RECLOG S0000011, MEDIALOG
      S0000003, ARCHLOG S0000001, 13 extents of 16 MiB; S0000001-S0000011 to archive, S0000001-S0000002 to release),
      every extent it archives copied into the backup store 10 minutes after run 2's collection;
    - mq-linux1 QM.AUDIT, Manual mode across the wrap, in run 2's plan: CURRLOG S0000002, RECLOG S9999998 (stuck for
      four collections: restart_stuck), MEDIALOG S9999997; no copy of any of its extents."""
    settings = fleet.settings
    orders1, edge1 = orders(RUN1, COLLECTED1, current=10), edge(RUN1, COLLECTED1.astimezone(UTC))
    history = audit_history()
    orders2, audit2 = orders(RUN2, COLLECTED2), audit(RUN2, COLLECTED2, 10_000_002, 9_999_997)
    write_linux_snapshots_of(settings, orders1, edge1, *history, orders2, audit2)
    write_linux_plan(settings, RUN1, [plan_queue_manager(edge1, ()), plan_queue_manager(orders1, ())])
    write_linux_plan(settings, RUN2, [plan_queue_manager(audit2, (), history), plan_queue_manager(orders2, ())])
    for n in range(1, 12):
        fleet.catalog.record_extent_copy(extent_copy(f"S{n:07d}.LOG"))
    return fleet
