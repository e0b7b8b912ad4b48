"""The plan job's parts: imported by `spark_apps/plan_receivers.py` (its I/O and CLI).

- `schema`: the snapshot records as the job reads them, the output columns (derived from the plan rows' models).
- `checks`: the input checks (contract, identities, duplicates) and the newest snapshots of each queue manager.
- `grouped`: each queue manager's plan from the lines of its window, by the reference planner (`mqjournal.rules`),
  in an Arrow function over sorted partitions (`mapInArrow`); no pyspark import, so Python workers import it cheaply.
- `outputs`: the summary's totals, observed as the plan is written.
- `linux`: the Linux queue managers' plan (`mqjournal.linuxmq.plan` in DataFrame form), its input schema and checks.

The package ships with `mqjournal` in the --py-files zip (and to a Spark Connect session as an artifact), so the
driver and the executors import the same code.
"""
