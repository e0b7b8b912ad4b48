"""One Linux queue manager's plan as a maintenance run carries it (#32): what its approval gate shows, what its
archive and release steps act on, and what its report says; made from the plan job's rows (linuxmq.planrows) and
the run's snapshot of the queue manager."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from mqjournal.outcomes import StepValue


class LinuxPlanned(StepValue):
    """One Linux queue manager's plan as the gate shows it and the archive and release steps act on it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str
    qmgr: str
    log_management: str = Field(description="qm.ini's LogManagement: Manual, Automatic or Archive")
    log_path: str = Field(description="the log's active directory, as the run collected it")
    current_extent: str | None = Field(None, description="CURRLOG when collected")
    restart_extent: str | None = Field(None, description="RECLOG when collected")
    media_extent: str | None = Field(None, description="MEDIALOG when collected")
    to_archive: list[str] = Field(
        default_factory=list, description="extents to copy into the backup store before the gate, oldest first"
    )
    to_release: list[str] = Field(
        default_factory=list,
        description="extents to release once approved (SET LOG ARCHIVED in Archive mode, deleted in Manual mode), "
        "each only with a proven copy and only if the live plan still says so",
    )
    bytes_to_release: int = Field(0, description="the sizes of `to_release` as collected")
    kept: int = Field(0, description="extents kept: needed for restart or media recovery, or MQ's own")
    alerts: list[str] = Field(default_factory=list, description="the planner's alerts, each with what to do")

    @property
    def key(self) -> str:
        return f"{self.host}/{self.qmgr}"
