"""The maintenance DAG end to end on the deployment's topology, natively (issue #17): PostgreSQL, Redis, a Spark
standalone master and worker, and Airflow's api-server, scheduler, dag-processor, triggerer and one Celery worker as
separate processes, on the simulated fleet. docs/cluster-test.md says what maps to which compose service."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psycopg
import pyarrow.parquet as pq
import pytest

from mqjournal import demo
from mqjournal.airflow.settings import safe
from mqjournal.catalog import Catalog
from mqjournal.report import DELETE_NOTHING
from mqjournal.reportlinks import report_link_markdown, without_report_link
from tests.cluster import helpers

pytestmark = pytest.mark.cluster

RUN_TIMEOUT = 420.0
DELETING = ("delete", "save_then_delete")


def say(text: str) -> None:
    print(text, flush=True)


def test_maintenance_runs_on_celery_postgres_and_spark_standalone_and_leaves_no_process():
    began = time.monotonic()
    with helpers.running_cluster(say) as cluster:
        assert cluster.airflow is not None and cluster.spark is not None and cluster.data_dir is not None
        airflow, api = cluster.airflow, cluster.airflow.api
        before = helpers.receivers(cluster.simulator)

        run_id = demo.trigger_run(api, conf={})
        say(f"triggered {demo.DAG_ID}: {run_id}")
        port = int(airflow.env["AIRFLOW__API__PORT"])
        # answer="Approve": every option the gate offers but "Delete nothing", as `mqjournal demo --approve`.
        state = demo.follow_run(api, airflow, run_id, port=port, answer="Approve", timeout=RUN_TIMEOUT, say=say)  # type: ignore[arg-type]
        home = demo.DemoHome(Path(airflow.env["AIRFLOW_HOME"]))
        if state != "success":
            demo.show_outcome(api, home, run_id, state, say)
        assert state == "success"
        tis = demo.task_states(api, run_id)
        states = demo.summarize_states(tis)
        say(f"task states: {states}")
        for task_id in ("plan", "approve", "report"):
            assert states.get(task_id) == "success", states
        assert any(t["task_id"] == "delete" and t["state"] == "success" for t in tis), states

        # The gate was answered with every queue manager it offered.
        gate = demo.gate_detail(api, run_id)
        assert gate is not None and gate["response_received"], gate
        offered = [o for o in gate["options"] if o != DELETE_NOTHING]
        assert offered and sorted(gate["chosen_options"]) == sorted(offered), gate

        # Receivers left the simulated partitions exactly where the plan said to delete them: its Parquet, written
        # into the shared data folder by the executor on the Spark worker.
        plan = pq.read_table(cluster.data_dir / "plans" / f"run_id={safe(run_id)}" / "receivers").to_pylist()
        planned = {(r["host"], f"{r['qmgr_library']}/{r['receiver']}") for r in plan if r["action"] in DELETING}
        after = helpers.receivers(cluster.simulator)
        known = {(h, r) for h, names in before.items() for r in names}
        known |= {(r["host"], f"{r['qmgr_library']}/{r['receiver']}") for r in plan}
        gone = {(h, r) for h, r in known if r not in after[h]}
        assert planned, "the plan of the example fleet should delete receivers"
        assert gone == planned, {"deleted but not planned": gone - planned, "planned but still there": planned - gone}

        # The scheduler read the same folder: the report task's one-line outcome there became the run's note, with
        # the link to the run's report that the plugin serves (mqjournal.reportlinks).
        note = (cluster.data_dir / "reports" / f"{safe(run_id)}.note").read_text(encoding="utf-8").strip()
        shown = api.call("GET", demo._run_path(run_id))["note"]
        assert note.startswith("approved by admin") and without_report_link(shown) == note, (note, shown)
        assert shown.endswith(f"({report_link_markdown(demo.DAG_ID, run_id)})"), shown

        # The catalog is in the PostgreSQL database `catalog`, not a SQLite file in the data folder.
        catalog = Catalog(cluster.url("catalog"))
        recorded = set()
        for host, library in {(h, r.split("/")[0]) for h, r in planned}:
            recorded |= {(host, f"{library}/{d.receiver}") for d in catalog.deletions_for(host, library)}
        assert recorded == planned
        assert not (cluster.data_dir / "catalog.db").exists()
        with psycopg.connect(cluster.url("catalog", "postgresql")) as conn:
            tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert tables, "no catalog tables in PostgreSQL"

        # The plan ran as an application of the standalone master, its executor on the worker.
        spark = cluster.spark.state()
        apps = [a for a in spark["completedapps"] if a["name"] == helpers.SPARK_APP_NAME]
        assert [a["state"] for a in apps] == ["FINISHED"], json.dumps(spark, indent=1)[:3000]
        assert (cluster.root / "spark" / "work" / apps[0]["id"]).is_dir()
        plan_ti = next(t for t in tis if t["task_id"] == "plan")
        plan_log = demo.task_log(home, run_id, plan_ti)
        assert plan_log is not None and cluster.spark.url in plan_log.read_text(errors="replace")

        # Every task instance that ran, ran on the Celery worker: it logged each one's workload (the instance's id),
        # and the Celery results are in Airflow's PostgreSQL database.
        worker_log = airflow.components["celery worker"].log.read_text(errors="replace")
        given = "\n".join(line for line in worker_log.splitlines() if "Executing workload in Celery" in line)
        ran = [t for t in tis if t["state"] == "success"]  # skipped ones, by a branch or a trigger rule, never run
        not_given = [(t["task_id"], t["map_index"]) for t in ran if f"id=UUID('{t['id']}')" not in given]
        assert not_given == [], f"task instances the Celery worker was not given: {not_given}"
        statuses: dict[str, int] = {}

        def stored() -> bool:
            with psycopg.connect(cluster.url("airflow", "postgresql")) as conn:
                statuses.update(conn.execute("SELECT status, count(*) FROM celery_taskmeta GROUP BY status").fetchall())
            return statuses.get("SUCCESS", 0) >= len(ran)

        # The worker stores a task's result after its task runner has told Airflow the state: the last one may lag.
        worker = airflow.components["celery worker"]
        helpers.wait_until(stored, f"Celery SUCCESS result for each of the {len(ran)} task instances", worker, 60)
        assert statuses["SUCCESS"] >= len(ran), statuses

        services = list(cluster.services)
        say(f"run checked after {time.monotonic() - began:.0f} s; stopping the cluster")

    helpers.assert_nothing_left(cluster, services)
    say(f"cluster test: {time.monotonic() - began:.0f} s")
