"""The plan's contract: the rows the plan job writes (Parquet `receivers/` and `queue_managers/`) and every reader
reads, and the one way to name a queue manager.

The reference planner (`rules.plan_queue_manager`) makes these rows, in the Spark job too (per queue manager, in an
Arrow function over sorted partitions, `mapInArrow`), whose Spark schema is derived from these models
(`mqjournal.sparkplan.schema.spark_schema`); `read_plan` gives them back typed to the gate, the reports and the fleet
view. A column added after plans were first written has a default (None, or empty), so a plan written by an older
planner still reads: its reader says less, never fails.

Parquet keeps no UTC offset: its times come back in UTC (naive ones are taken as UTC here); the partition's offset
is `utc_offset_minutes`, and mqjournal.timefmt writes every time in it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, model_serializer, model_validator

from mqjournal.policy import Policy
from mqjournal.vocabulary import Action, Alert, HoldingPoint, Reason

if TYPE_CHECKING:
    from mqjournal.datafolder import DataPath


def _utc_if_naive(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


Time = Annotated[datetime, AfterValidator(_utc_if_naive)]
"""A moment; Parquet gives it back without an offset, in UTC."""


class QueueManagerRef(BaseModel):
    """One queue manager of the fleet: its partition, its name, its library. Its name alone can live on two hosts,
    and two queue managers of one host have different libraries.

    In XCom and JSON it is its `key` text, `host/QMGR/LIBRARY`, as the steps' values always named it."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    host: str
    """The partition, as the fleet file names it."""
    qmgr: str
    """The queue manager's name."""
    library: str
    """The queue manager's library (QMxxx): its journal, receivers and QMQMMSG live there."""

    @model_validator(mode="before")
    @classmethod
    def _from_key(cls, value: Any) -> Any:
        if isinstance(value, str):
            host, qmgr, library = [*value.split("/"), "", "", ""][:3]
            return {"host": host, "qmgr": qmgr, "library": library}
        return value

    @model_serializer
    def _as_key(self) -> str:
        return self.key

    @classmethod
    def parse(cls, key: str) -> Self:
        """The queue manager a `key` names (the parts it lacks are empty)."""
        return cls.model_validate(key)

    @property
    def key(self) -> str:
        """`host/QMGR/LIBRARY`: how the run's plan (RunPlan), the save, delete and cleanup steps and the report key
        it."""
        return f"{self.host}/{self.qmgr}/{self.library}"

    @property
    def label(self) -> str:
        """`host/QMGR`: how people see it named: the gate's options, the grid, the logs."""
        return f"{self.host}/{self.qmgr}"

    @property
    def order(self) -> tuple[str, str, str]:
        """The plan's order of queue managers: host, queue manager, library."""
        return (self.host, self.qmgr, self.library)


REF_COLUMNS = ("host", "qmgr", "qmgr_library")
"""The columns that name the queue manager of a plan row (a QueueManagerRef's host, qmgr and library)."""


class _PlanRow(BaseModel):
    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    host: str
    """The partition, as the fleet file names it."""
    qmgr: str
    """The queue manager's name."""
    qmgr_library: str
    """The queue manager's library (QMxxx)."""

    @property
    def ref(self) -> QueueManagerRef:
        return QueueManagerRef(host=self.host, qmgr=self.qmgr, library=self.qmgr_library)


class PlannedReceiver(_PlanRow):
    """One receiver of the plan: what the run does with it and why, and what WRKJRNRCV shows of it."""

    receiver: str
    """The receiver's name (AMQxnnnnnn); names wrap, so the chain position orders them, never the name."""
    library: str
    """The receiver's library (the queue manager's, QMxxx)."""
    chain_position: int | None
    """Its place in the journal's chain, 0 for the oldest attached; None: not a chain member (never deleted)."""
    status: str
    """Its status as IBM i shows it: ATTACHED, ONLINE, SAVED, FREED, PARTIAL, EMPTY."""
    size_bytes: int
    """Its size on the ASP, in bytes (what deleting it frees)."""
    action: Action
    """What the run does with it: keep, save, delete, save_then_delete (docs/planning-rules.md, section 3)."""
    reason: Reason
    """Why (vocabulary.Reason): the one rule that decided the action."""
    # What WRKJRNRCV shows of it, for the people reading the plan: the rules decide without these.
    attached_at: Time | None = None
    """When it was attached (UTC); None when never attached, or in a plan written before this column."""
    detached_at: Time | None = None
    """When it was detached (UTC); None while attached, or in a plan written before this column."""
    saved_at: Time | None = None
    """Its last save as IBM i records it (SAVE_TIMESTAMP, UTC); None when never saved."""
    first_sequence: int | None = None
    """Its first journal sequence number (up to 20 digits with *MAXOPT3); None when not known."""
    last_sequence: int | None = None
    """Its last journal sequence number; None when not known."""


class PlannedQueueManager(_PlanRow):
    """One queue manager of the plan: what MQ needs of its journal, what the run saves and deletes, what looks
    wrong, and the space its ASP has."""

    oldest_needed: str | None
    """The oldest receiver MQ needs (AMQJRNINF, AMQ7460, AMQ7462, the most conservative); None: not known."""
    blocked: bool
    """Nothing of it is deleted: a block reason applies (docs/planning-rules.md, sections 2 and 2.4)."""
    block_reason: str | None
    """The block reasons (vocabulary.BlockReason) that apply, comma-separated in BLOCK_ORDER; None when not blocked."""
    alerts: tuple[Alert, ...]
    """What an admin should look at (vocabulary.Alert), sorted; empty when nothing."""
    recovery_points: str = ""
    """AMQJRNINF, AMQ7460 and AMQ7462 side by side, as the partition recorded them (its wall clock); empty in a plan
    written before this column."""
    receivers_to_save: int
    """Receivers this run saves (action save or save_then_delete)."""
    bytes_to_save: int
    """Their bytes on the ASP."""
    receivers_to_delete: int
    """Receivers this run deletes once approved (action delete or save_then_delete)."""
    bytes_to_delete: int
    """Their bytes on the ASP."""
    bytes_freed: int
    """What the deletes give the ASP back, in bytes (before the save files this run writes, see net space)."""
    chain_length: int
    """Receivers in the journal's chain."""
    oldest_needed_age_seconds: int | None
    """Seconds from AMQJRNINF's oldest needed entry to the planning time; None when AMQJRNINF is unusable."""
    collected_at: Time
    """When its snapshot was collected (UTC; the partition's offset is `utc_offset_minutes`)."""
    run_id: str
    """The run whose collection the plan used."""
    utc_offset_minutes: int | None = None
    """The partition's UTC offset at the collection, in minutes east: every time shown to people is in it."""
    holding_point: HoldingPoint | None = None
    """Which of MQ's points holds the oldest needed receiver (AMQ7460, AMQ7462, AMQJRNINF); None when blocked."""
    holding_point_at: Time | None = None
    """That point's time (UTC)."""
    holding_point_age_seconds: int | None = None
    """Seconds from that point to the planning time."""
    damaged_objects: tuple[str, ...] = ()
    """`NAME (TYPE)` of each object AMQ7472 reported damaged since the media recovery point."""
    undecodable_messages: tuple[str, ...] = ()
    """`MSGID: DSPMSGD RANGE(MSGID) MSGF(LIB/FILE)` of each message ID whose replacement data did not decode by the
    layout the partition declares (alert MESSAGE_UNDECODABLE), sorted; empty in a plan written before this column."""
    asp_number: int | None = None
    """The ASP holding the queue manager's library; None when the collector could not read it."""
    asp_capacity_bytes: int | None = None
    """That ASP's capacity, in bytes."""
    asp_available_bytes: int | None = None
    """That ASP's free space, in bytes, at the collection."""

    @property
    def block_reasons(self) -> list[str]:
        """The block reasons, in BLOCK_ORDER (empty when not blocked)."""
        return [code for code in (self.block_reason or "").split(",") if code]


class PlanTotals(BaseModel):
    """The plan's totals, `summary.json` next to its Parquet: what the plan does, in counts and bytes. The Spark job
    sums what it wrote; the reference planner sums its rows; a property test holds the two equal."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    as_of: Time
    """The moment the plan was made for: ages and the snapshot's staleness are measured to it."""
    policy: Policy
    """The policy the plan applied (retention, what counts as saved, the safety margins)."""
    queue_managers: int
    """Queue managers planned: each with a current snapshot in the input."""
    blocked_queue_managers: int
    """Of those, the ones whose receivers are all kept: a block reason says why (docs/planning-rules.md)."""
    receivers: int
    """Receivers planned, over every queue manager: one row each in `receivers/`."""
    actions: dict[Action, int]
    """Receivers per action (keep, save, delete), in the actions' alphabetical order."""
    alerts: dict[Alert, int]
    """Queue managers per alert code, in the codes' alphabetical order; an alert that no queue manager has is absent."""
    bytes_to_save: int
    """Bytes of the receivers to save, before the save's compression."""
    bytes_to_delete: int
    """Bytes of the receivers to delete once the deletes are approved."""
    bytes_freed: int
    """Bytes the deletes free on the partition's ASP."""


class PlanRows(NamedTuple):
    """A written plan's rows: its queue managers, and their receivers in chain order."""

    queue_managers: list[PlannedQueueManager]
    receivers: list[PlannedReceiver]


def read_plan(plan_dir: DataPath, refs: Collection[QueueManagerRef] | None = None) -> PlanRows:
    """The plan the job wrote to `plan_dir` (only the queue managers `refs`, when given: only their hosts' rows are
    read), as typed rows."""
    return PlanRows(read_queue_managers(plan_dir, refs), read_receivers(plan_dir, refs))


def read_queue_managers(
    plan_dir: DataPath, refs: Collection[QueueManagerRef] | None = None
) -> list[PlannedQueueManager]:
    """The plan's queue managers (only `refs`, when given), as written."""
    rows = read_rows(plan_dir / "queue_managers", hosts=None if refs is None else {r.host for r in refs})
    planned = [PlannedQueueManager.model_validate(row) for row in rows]
    return planned if refs is None else [q for q in planned if q.ref in refs]


def read_receivers(plan_dir: DataPath, refs: Collection[QueueManagerRef] | None = None) -> list[PlannedReceiver]:
    """The plan's receivers (of `refs`, when given: only their hosts' rows are read), in chain order per queue
    manager, non-members last."""
    rows = read_rows(plan_dir / "receivers", hosts=None if refs is None else {r.host for r in refs})
    planned = [PlannedReceiver.model_validate(row) for row in rows]
    return in_chain_order(planned if refs is None else [r for r in planned if r.ref in refs])


def in_chain_order(receivers: Iterable[PlannedReceiver]) -> list[PlannedReceiver]:
    """By queue manager, then chain position, the receivers outside the chain last."""
    return sorted(receivers, key=lambda r: (*r.ref.order, r.chain_position is None, r.chain_position or 0))


def read_rows(dataset: DataPath, *, hosts: Collection[str] | None) -> list[dict[str, Any]]:
    """A Parquet dataset of the plan as dicts (of `hosts` only, when given: pyarrow skips the others' row groups)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # pyarrow ships no type information

    from mqjournal.datafolder import arrow_source

    source, filesystem = arrow_source(dataset)
    filters = None if hosts is None else [("host", "in", sorted(hosts))]
    rows: list[dict[str, Any]] = pq.read_table(source, filesystem=filesystem, filters=filters).to_pylist()
    return rows
