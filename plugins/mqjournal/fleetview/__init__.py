"""The "MQ journals" fleet view in the Airflow UI: what the maintenance runs found, per host and queue manager.

It only reads what the runs wrote into the data folder (the snapshot history, the plans, the reports), the backup
catalog, and each run's state and note in Airflow's metadata DB; it decides nothing, writes nothing, and never talks
to a partition.

- `data`: the reading, as pure functions over the settings' data folder and a catalog (no Airflow import);
- `airflow_runs`: the runs' states and notes, one query of Airflow's metadata DB with the API server's ORM session;
- `charts`: inline SVG charts whose elements carry their numbers (`data-value`, `data-series`);
- `pages`: the HTML of the fleet overview and of a queue manager page (self-contained: inline CSS, a few lines of JS);
- `metrics`: the same figures for Prometheus (`ibmmq_qmgr_journal_...` gauges), served by the app at /metrics;
- `app`: the FastAPI app the Airflow API server mounts under /mqjournal, behind Airflow's login.

The Airflow plugin that registers it is `plugins/mqjournal_fleetview_plugin.py` (docs/fleet-view.md).
"""
