"""The plan's totals (`summary.json`), observed on the rows as the job writes them: no job of their own, and they
cannot disagree with the Parquet."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mqjournal.planrows import PlanTotals
from mqjournal.policy import Policy
from mqjournal.vocabulary import Action, Alert

_BYTES = ("bytes_to_save", "bytes_to_delete", "bytes_freed")


def receiver_totals() -> list[Column]:
    """`FleetPlan.summary`'s receivers per action, observed on the receivers as they are written."""
    return [F.count(F.when(F.col("action") == action, 1)).alias(action) for action in Action]


def queue_manager_totals() -> list[Column]:
    """`FleetPlan.summary`'s totals and queue managers per alert code, observed on the queue managers as they are
    written."""
    return [
        F.count(F.lit(1)).alias("queue_managers"),
        F.count(F.when(F.col("blocked"), 1)).alias("blocked_queue_managers"),
        *[F.coalesce(F.sum(c), F.lit(0)).cast("long").alias(c) for c in _BYTES],
        *[F.count(F.when(F.array_contains("alerts", F.lit(alert)), 1)).alias(alert) for alert in Alert],
    ]


def summary(
    receivers: dict[str, Any], queue_managers: dict[str, Any], *, as_of: datetime, policy: Policy
) -> PlanTotals:
    """`FleetPlan.summary` from what was observed as the plan was written (`receiver_totals`,
    `queue_manager_totals`). As the reference's, only the actions and alerts that occur."""
    actions = {action: int(receivers[action]) for action in sorted(Action) if receivers[action]}
    return PlanTotals(
        as_of=as_of,
        policy=policy,
        queue_managers=queue_managers["queue_managers"],
        blocked_queue_managers=queue_managers["blocked_queue_managers"],
        receivers=sum(actions.values()),
        actions=actions,
        alerts={alert: int(queue_managers[alert]) for alert in sorted(Alert) if queue_managers[alert]},
        **{total: int(queue_managers[total]) for total in _BYTES},
    )
