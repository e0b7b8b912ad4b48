"""What the DAGs' tasks hand each other through XCom, as models: one place says what each value holds.

A step returns a model; its task pushes `to_xcom()` (plain dicts and lists, what Airflow has always stored for these
tasks, so the UI, the templates such as `xcom_pull(task_ids='summarize')['body']` and the pulls of an earlier run
read the same); the next step's task validates what it pulls with `from_xcom()`, so a value of the wrong shape
fails at that seam, naming the field. The save, delete and cleanup steps' values are the executor's own results
(mqjournal.outcomes), and a plan's rows are mqjournal.planrows'.
"""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any, Literal, Self, TypeAlias
from zoneinfo import ZoneInfo

from pydantic import ConfigDict, Field

from mqjournal.forecast import AspForecast, AspKey
from mqjournal.ibmi import collector
from mqjournal.ibmi.readings import PartitionZone
from mqjournal.linuxmq.planned import LinuxPlanned
from mqjournal.linuxmq.recovery import LinuxRecoveryPlan
from mqjournal.outcomes import StepValue
from mqjournal.planrows import PlannedQueueManager, QueueManagerRef
from mqjournal.recovery.plan import RecoveryPlan

Pulled: TypeAlias = object
"""A task argument another task returned: an XComArg while the DAG is wired, its pushed value once the task runs;
the task validates it with `from_xcom()` before use."""


class XComValue(StepValue):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PartitionTimeZone(XComValue):
    """The partition's time zone as discovered (mqjournal.ibmi.readings.PartitionZone): a later task reads the
    partition's local times, and writes the ones it sends (a messages window, a save file's day), in the offset in
    force at each time, not in the offset of the moment the zone was discovered (a run may wait hours at its gate)."""

    description: str = Field(description="QTIMZON's time zone description, such as QN0500EST3")
    rules: str | None = Field(None, description="the Olson zone whose DST rules it follows; None: a fixed offset")
    fixed_offset_minutes: int | None = Field(None, description="without rules: minutes east of UTC, all year")
    from_fleet: bool = Field(False, description="the rules are the fleet file's time_zone_rules for the host")

    @classmethod
    def of(cls, zone: PartitionZone) -> Self:
        fixed = zone.fixed.utcoffset(None) if zone.fixed is not None else None
        return cls(
            description=zone.description,
            rules=zone.olson,
            fixed_offset_minutes=None if fixed is None else int(fixed.total_seconds() // 60),
            from_fleet=zone.from_fleet,
        )

    @property
    def zone(self) -> PartitionZone:
        if self.rules is not None:
            return PartitionZone(self.description, rules=ZoneInfo(self.rules), from_fleet=self.from_fleet)
        return PartitionZone(self.description, fixed=timezone(timedelta(minutes=self.fixed_offset_minutes or 0)))


def _zone(time_zone: PartitionTimeZone | None, utc_offset_minutes: int) -> PartitionZone:
    # A value pushed before the zone travelled (a run started on the release before) has only the offset.
    if time_zone is not None:
        return time_zone.zone
    return PartitionZone("", fixed=timezone(timedelta(minutes=utc_offset_minutes)))


# --- the maintenance DAG --------------------------------------------------------------------------------------------


class JournalTarget(XComValue):
    """A queue manager's journal as located on the host (mqjournal.ibmi.collector.Target)."""

    qmgr: str = Field(description="the queue manager's name")
    library: str = Field(description="its library (QMxxx), where its journal and receivers live")
    journal: str = Field(description="its journal, AMQxJRN")
    instance: str = Field(description="the journal's instance letter, x in AMQxJRN")
    journal_queue: list[str] = Field(description="the journal's message queue: [library, name]")

    @classmethod
    def of(cls, target: collector.Target) -> Self:
        return cls(
            qmgr=target.qmgr,
            library=target.library,
            journal=target.journal,
            instance=target.instance,
            journal_queue=list(target.journal_queue),
        )

    @property
    def target(self) -> collector.Target:
        return collector.Target(
            qmgr=self.qmgr,
            library=self.library,
            journal=self.journal,
            instance=self.instance,
            journal_queue=(self.journal_queue[0], self.journal_queue[1]),
        )


class MaintenanceTarget(JournalTarget):
    """One queue manager a maintenance run works on: select_targets finds it; collect, save and delete map over it."""

    host: str = Field(description="the partition, as named in the fleet file")
    utc_offset_minutes: int = Field(description="the partition's UTC offset when discovered, for the report")
    time_zone: PartitionTimeZone | None = Field(
        None, description="the partition's time zone: the offset in force at each time (None: utc_offset_minutes)"
    )

    @property
    def ref(self) -> QueueManagerRef:
        return QueueManagerRef(host=self.host, qmgr=self.qmgr, library=self.library)

    @property
    def key(self) -> str:
        """host/QMGR/LIBRARY: how the run's plan (RunPlan) lists this queue manager's receivers."""
        return self.ref.key

    @property
    def label(self) -> str:
        """host/QMGR: how the grid (map_index_template), the gate's options and the logs name it."""
        return self.ref.label

    @property
    def tz(self) -> PartitionZone:
        return _zone(self.time_zone, self.utc_offset_minutes)


class NotFound(XComValue):
    """A queue manager the fleet file names whose journal discovery did not find on its host: the run's first step
    on its host fails it by name (as `mqjournal collect` does), and the report lists it."""

    host: str = Field(description="the partition, as named in the fleet file")
    qmgr: str = Field(description="the queue manager's name, as the fleet file names it")
    why: str = Field(description="what discovery found missing: `journal QMxxx/AMQAJRN not found on <host>`")

    @property
    def label(self) -> str:
        """host/QMGR, as MaintenanceTarget.label."""
        return f"{self.host}/{self.qmgr}"

    @property
    def error(self) -> str:
        return (
            f"{self.why}: correct the queue manager's library or instance in the fleet file, or take it out of the "
            "fleet file if the queue manager is gone; nothing of it was collected, saved or deleted"
        )


class HostBatch(XComValue):
    """The queue managers of one or more hosts that one mapped task instance works on (mqjournal.airflow.hostwork)."""

    targets: list[MaintenanceTarget] = Field(description="the hosts' queue managers, host by host")
    not_found: list[NotFound] = Field(
        default_factory=list, description="the hosts' configured queue managers whose journal was not found"
    )

    def by_host(self) -> dict[str, list[MaintenanceTarget]]:
        hosts: dict[str, list[MaintenanceTarget]] = {}
        for t in self.targets:
            hosts.setdefault(t.host, []).append(t)
        return hosts

    @property
    def label(self) -> str:
        """How the grid (map_index_template) and the logs name the batch: `ibmi-prod1`, or
        `ibmi-prod1 .. ibmi-prod4 (4 hosts)`."""
        hosts = list(dict.fromkeys([*self.by_host(), *(n.host for n in self.not_found)]))
        if len(hosts) == 1:
            return hosts[0]
        return f"{hosts[0]} .. {hosts[-1]} ({len(hosts)} hosts)" if hosts else "no hosts"


class LinuxTarget(XComValue):
    """A queue manager of a Linux host of the fleet file that this run works on (#32)."""

    host: str
    qmgr: str

    @property
    def key(self) -> str:
        """`host/QMGR`: a Linux queue manager has no library; an IBM i key has three parts, so the two never meet."""
        return f"{self.host}/{self.qmgr}"


class RunPlan(XComValue):
    """The plan of this run's targets (the `summarize` task's value): what the approval gate shows and what save and
    delete act on."""

    queue_managers: list[PlannedQueueManager] = Field(
        default_factory=list, description="the plan's queue managers of this run's targets"
    )
    to_save: dict[str, list[str]] = Field(
        default_factory=dict, description="receivers to save, oldest first, by QueueManagerRef.key"
    )
    to_delete: dict[str, list[str]] = Field(
        default_factory=dict, description="receivers to delete once approved, oldest first, by QueueManagerRef.key"
    )
    save_file_bytes_estimate: dict[str, int] = Field(
        default_factory=dict,
        description="by QueueManagerRef.key: the save files the run is expected to write, in bytes, as the gate "
        "estimated them (the run report sets them beside the real sizes)",
    )
    store_bytes: dict[str, int] = Field(
        default_factory=dict,
        description="no longer filled (the gate reads the store when it opens, after the saves); kept so that the "
        "value of a run summarized before still validates",
    )
    linux: list[LinuxPlanned] = Field(
        default_factory=list, description="the plan of this run's Linux queue managers (#32), by host then name"
    )
    anything_to_delete: bool = Field(
        False, description="whether the run needs the approval gate at all: receivers to delete or extents to release"
    )
    body: str = Field("", description="the approval gate's Markdown")
    asp_forecasts: list[AspForecast] = Field(
        default_factory=list,
        description="the forecasts (without their collections) of the ASPs of this run's queue managers, as summarize "
        "made them from the snapshot history: the gate's table shows them without reading that history again",
    )

    def to_xcom(self) -> dict[str, Any]:
        # The rows hold datetimes and enums: JSON for them, as the recovery DAG's plan task pushes its plan.
        return {
            **self.model_dump(),
            "queue_managers": [q.model_dump(mode="json") for q in self.queue_managers],
            "asp_forecasts": [f.model_dump(mode="json") for f in self.asp_forecasts],
        }

    def forecasts(self) -> dict[AspKey, AspForecast]:
        return {f.key: f for f in self.asp_forecasts}


class SparkSubmission(XComValue):
    """SparkSubmitOperator's templated inputs for the plan job (the DAG's templates read them by key)."""

    args: list[str] = Field(description="application_args")
    env: dict[str, str] = Field(description="env_vars: Spark's own variables only, never the worker's secrets")
    conf: dict[str, str] = Field(description="conf")
    py_files: str = Field(description="the zip of the mqjournal package the job imports")


class Preflight(XComValue):
    """The hosts `mqjournal doctor` checked before this run (those never collected before)."""

    checked: list[str]
    ready: bool


# --- the recovery DAG -----------------------------------------------------------------------------------------------


class RecoveryPlanMade(XComValue):
    """The plan task's value: the plan, its Markdown for the gate, and where it runs."""

    plan: RecoveryPlan
    body: str = Field(description="the plan's Markdown: the approval gate's body")
    executable: bool = Field(description="no gaps and at least one step: it needs approval")
    target: JournalTarget
    utc_offset_minutes: int
    time_zone: PartitionTimeZone | None = Field(
        None, description="the partition's time zone: the offset in force at each time (None: utc_offset_minutes)"
    )

    def to_xcom(self) -> dict[str, Any]:
        # The plan holds datetimes and enums: JSON for it, as the plan task has always pushed.
        return {**self.model_dump(), "plan": self.plan.model_dump(mode="json")}

    @property
    def tz(self) -> PartitionZone:
        return _zone(self.time_zone, self.utc_offset_minutes)


class LinuxRecoveryPlanMade(XComValue):
    """The plan task's value for a Linux host (#32): the plan, its Markdown for the gate. `platform` tells it from
    an IBM i partition's (RecoveryPlanMade), whose value has no such key."""

    platform: Literal["linux"] = "linux"
    plan: LinuxRecoveryPlan
    body: str = Field(description="the plan's Markdown: the approval gate's body")
    executable: bool = Field(description="no gaps and at least one step: it needs approval")

    def to_xcom(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def recovery_plan_made(value: object) -> RecoveryPlanMade | LinuxRecoveryPlanMade:
    """The plan task's value, of whichever platform made it."""
    if isinstance(value, dict) and value.get("platform") == "linux":
        return LinuxRecoveryPlanMade.from_xcom(value)
    return RecoveryPlanMade.from_xcom(value)


# --- the backup expiry DAG ------------------------------------------------------------------------------------------


class StoreCopy(XComValue):
    """A save file's verified copy in the backup store (mqjournal.catalog.StoredObject), as the gate lists it."""

    save_file: str = Field(description="the save file it copies, LIB/NAME")
    key: str = Field(description="its key in the store")
    store_url: str
    size_bytes: int = Field(description="the copy's bytes: what the store gets back when it is deleted")


class ExpiringSaveFile(XComValue):
    """One save file the expiry planner proposes to delete, and what goes with it."""

    path: str = Field(description="LIB/NAME")
    why: str = Field(description="the planner's reason no restore can need it (the DLTF step's why)")
    on_host: bool = Field(description="still on the partition when planned (False: only its copies are left)")
    receiver_saves: int = Field(description="receiver saves the catalog records in it")
    library_saves: int = Field(description="library saves the catalog records in it")
    receiver_bytes: int = Field(description="the saved receivers' bytes, as the catalog records them")
    copies: list[StoreCopy] = Field(default_factory=list, description="its copies in this run's backup store")


class ExpiryProposal(XComValue):
    """One queue manager's expiry plan (the same planner as `mqjournal recover --kind expiry`), for the gate and the
    execute step."""

    target: MaintenanceTarget
    plan: RecoveryPlan = Field(description="the expiry plan: DLTF steps, or the gaps that keep everything")
    save_files: list[ExpiringSaveFile] = Field(default_factory=list, description="one per DLTF step, in plan order")
    leftover_copies: list[StoreCopy] = Field(
        default_factory=list, description="copies still in the store of save files discarded by an earlier run"
    )
    store_keeps_versions: bool = Field(
        False,
        description="the store keeps a deleted copy's bytes as an older version (S3 versioning or object lock): "
        "deleting hides the copy, the bucket's lifecycle rule or retention frees its bytes",
    )

    def to_xcom(self) -> dict[str, Any]:
        # The plan holds datetimes and enums: JSON for it, as the recovery DAG's plan task pushes it.
        return {**self.model_dump(), "plan": self.plan.model_dump(mode="json")}

    @property
    def anything_to_delete(self) -> bool:
        return bool(self.plan.steps and not self.plan.gaps) or bool(self.leftover_copies)

    @property
    def approved_keys(self) -> set[str]:
        """Every store key the gate shows for this queue manager."""
        return {c.key for f in self.save_files for c in f.copies} | {c.key for c in self.leftover_copies}


class ExpirySummary(XComValue):
    """The proposal of every queue manager of the run: the gate's body and whether a gate is needed at all."""

    anything_to_delete: bool = Field(description="whether the run needs the approval gate at all")
    save_files: int = Field(0, description="save files proposed for deletion, fleet-wide")
    store_bytes: int = Field(0, description="bytes of their copies (and of leftover copies) in the backup store")
    body: str = Field("", description="the approval gate's Markdown")


class ExpiryOutcome(XComValue):
    """What one queue manager's expiry did, on the host and in the store, for the report."""

    target: str = Field(description="MaintenanceTarget.key")
    discarded: list[str] = Field(
        default_factory=list, description="save files (LIB/NAME) the catalog records discarded by this run"
    )
    steps: list[str] = Field(default_factory=list, description="each step run on the host, with its outcome")
    skipped: list[str] = Field(default_factory=list, description="approved steps the live host no longer needed")
    reconciled: list[str] = Field(default_factory=list)
    store_deleted: list[str] = Field(default_factory=list, description="copies deleted from the store now (keys)")
    store_freed_bytes: int = 0
    store_kept_as_versions: list[str] = Field(
        default_factory=list,
        description="copies deleted from the store's view whose bytes it keeps as older versions (versioning, object "
        "lock): freed by its lifecycle rule or retention, not counted in store_freed_bytes",
    )
    store_already_gone: list[str] = Field(default_factory=list)
    store_failed: list[tuple[str, str]] = Field(default_factory=list, description="(key, why): still in the store")
    store_not_approved: list[str] = Field(
        default_factory=list, description="copies of discarded save files the gate did not show: the next run's"
    )
    store_elsewhere: list[str] = Field(default_factory=list, description="copies in another backup store, left there")
    failure: str | None = Field(None, description="why the expiry on the host stopped (nothing after it was run)")

    @property
    def failed(self) -> bool:
        return self.failure is not None or bool(self.store_failed)
