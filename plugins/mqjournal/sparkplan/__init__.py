"""The plan job's parts, in DataFrame form: imported by `spark_apps/plan_receivers.py` (its I/O and CLI).

- `schema`: the snapshot records as the job reads them, the output columns, times as microseconds.
- `checks`: the input checks (contract, identities, duplicates) and the newest snapshots of each queue manager.
- `amqjrninf`: AMQJRNINF and the recovery points as columns, mirroring `mqjournal.jrninf`.
- `rules`: docs/planning-rules.md, section by section as `mqjournal.rules`, with the same names where a function
  has a counterpart there; a property test holds the two equal.
- `linux`: the Linux queue managers' plan (`mqjournal.linuxmq.plan` in DataFrame form), its input schema and checks.

The package ships with `mqjournal` in the --py-files zip, so the driver and the executors import the same code.
"""
