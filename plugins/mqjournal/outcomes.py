"""What the save, delete and cleanup steps did to one queue manager: the executor's results, which the DAG's tasks
hand to the report through XCom as they are, and which the report reads.

A step's value goes to XCom as plain data (`to_xcom()`: dicts, lists, text and numbers, what Airflow has always
stored for these tasks, so the UI and the pulls of an earlier run read the same); the task that pulls it validates
it back with `from_xcom()`, so a value of the wrong shape fails at that seam, naming the field.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from mqjournal.planrows import QueueManagerRef


class StepValue(BaseModel):
    """A value one step hands the next (through XCom, between Airflow tasks)."""

    model_config = ConfigDict(extra="forbid")

    def to_xcom(self) -> dict[str, Any]:
        # Python mode, not JSON: Airflow's XCom serializer stores these values as it stored the dicts before them.
        return self.model_dump()

    @classmethod
    def from_xcom(cls, value: object) -> Self:
        return cls.model_validate(value)

    @classmethod
    def list_from_xcom(cls, value: object) -> list[Self]:
        """A task's list of these (select_targets' targets)."""
        return TypeAdapter(list[cls]).validate_python(value)  # type: ignore[valid-type]  # cls: a model class


class _HostStep(StepValue):
    target: QueueManagerRef = Field(description="the queue manager; in XCom its key, host/QMGR/LIBRARY")
    reconciled: list[str] | None = Field(
        None, description="what an interrupted earlier step turned out to have done (None: the host was not read)"
    )

    def to_xcom(self) -> dict[str, Any]:
        # Without `reconciled` when the host was not read (nothing to do): the report lists what the step returned.
        return self.model_dump(exclude={"reconciled"} if self.reconciled is None else None)


class SaveResult(_HostStep):
    """What one queue manager's save did (mqjournal.ibmi.executor.Executor.save)."""

    saved: list[str] = Field(default_factory=list, description="saved now, and proven in the save file")
    already_saved: list[str] = Field(default_factory=list, description="a catalogued save is proven on the host")
    not_saved: list[tuple[str, str]] = Field(default_factory=list, description="(receiver, why)")
    save_files: list[str] = Field(default_factory=list, description="the save files written, LIB/NAME")
    save_file_bytes: dict[str, int] = Field(
        default_factory=dict,
        description="LIB/NAME: the save file's size on the partition after the step (those whose size could not be "
        "read are left out); what net space subtracts",
    )
    copied: list[str] = Field(default_factory=list, description="backup store keys of the copies verified now")
    not_copied: list[tuple[str, str]] = Field(
        default_factory=list, description="(LIB/NAME, why): save files not copied off the partition"
    )
    unproven: list[tuple[str, str]] = Field(
        default_factory=list,
        description="(receiver, why): wanted receivers this step left without a backup off the partition (not saved, "
        "or their save file not copied into the backup store); no delete removes them until a later step proves one",
    )
    note: str | None = Field(None, description="why the step did nothing at all (backup: site)")


class DeleteResult(_HostStep):
    """What one queue manager's delete did (mqjournal.ibmi.executor.Executor.delete)."""

    deleted: list[str] = Field(default_factory=list)
    freed_bytes: int = Field(0, description="the deleted receivers' bytes: what the ASP got back")
    already_gone: list[str] = Field(default_factory=list)
    kept: list[tuple[str, str]] = Field(default_factory=list, description="(receiver, why), in chain order")
    failed: tuple[str, str] | None = Field(None, description="(receiver, message) that stopped the deletes")
    unproven: list[tuple[str, str]] = Field(
        default_factory=list,
        description="(receiver, why): approved receivers refused at the re-check for lack of a proven backup (also in "
        "`kept`): the promised delete was left undone",
    )


class CleanupResult(StepValue):
    """What one queue manager's cleanup did (mqjournal.ibmi.cleanup), and the space it leaves."""

    target: QueueManagerRef = Field(description="the queue manager; in XCom its key, host/QMGR/LIBRARY")
    removed: list[str] = Field(default_factory=list, description="save files deleted from the host now, LIB/NAME")
    kept: list[tuple[str, str]] = Field(default_factory=list, description="(LIB/NAME, why): due but kept")
    not_due: list[str] = Field(default_factory=list, description="still within keep_on_host_days")
    already_gone: list[str] = Field(
        default_factory=list, description="due, and deleted by someone else (recorded as removed)"
    )
    reconciled: list[str] = Field(default_factory=list)
    save_files_on_host_bytes: int = Field(
        0, description="this queue manager's copied save files still on the partition after the cleanup"
    )
    store_bytes: int = Field(0, description="this queue manager's save files in the backup store")


class LinuxArchiveResult(StepValue):
    """What archiving one Linux queue manager's log extents did (#32: mqjournal.linuxmq.archive): each extent copied
    off the host into the backup store, its bytes vouched for by the host's SHA-256, and catalogued."""

    host: str
    qmgr: str
    archived: list[str] = Field(default_factory=list, description="extents whose proven copy the store now holds")
    already_archived: list[str] = Field(
        default_factory=list, description="extents an earlier run copied, whose copy the store still holds"
    )
    not_archived: list[tuple[str, str]] = Field(
        default_factory=list, description="(extent, why): no proven copy was made; none of these is released"
    )

    @property
    def label(self) -> str:
        return f"{self.host}/{self.qmgr}"


class LinuxReleaseResult(StepValue):
    """What releasing one Linux queue manager's extents did (#32: mqjournal.linuxmq.release): SET LOG ARCHIVED in
    Archive mode, the file removed in Manual mode, each only when the live plan said so right before."""

    host: str
    qmgr: str
    released: list[str] = Field(default_factory=list, description="extents released now")
    released_bytes: int = Field(0, description="their sizes as collected: the log file system gets them back")
    kept: list[tuple[str, str]] = Field(default_factory=list, description="(extent, why): approved but kept")
    undone: list[str] = Field(
        default_factory=list,
        description="of `kept`, those whose release was due and did not happen (a copy that does not prove now, the "
        "host refused): the step failed on them; the others the live plan keeps",
    )

    @property
    def label(self) -> str:
        return f"{self.host}/{self.qmgr}"
