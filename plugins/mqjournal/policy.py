"""The planning policy: how long to keep what MQ no longer needs, when to distrust a snapshot, when to alert.

Loaded from YAML or JSON; every field has a documented default, so an empty file is a valid policy.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mqjournal.space import DataCompression, estimated_save_file_bytes
from mqjournal.yamlfile import read_yaml


class Policy(BaseModel):
    # Finite numbers only (no inf or NaN), each within a bound that is documented in its description: a value past
    # it is a mistake, and refused here rather than failing deep in the Spark job (date overflow) or meaning "never".
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_snapshot_age_hours: float = Field(
        24,
        gt=0,
        le=8760,
        description="a snapshot older than this at planning time blocks deletes for its queue manager (hours, above 0, "
        "at most 8760: a year)",
    )
    retention_days: float = Field(
        0,
        ge=0,
        le=3660,
        description="keep receivers MQ no longer needs online until this long after their detach (days, 0 to at most "
        "3660: 10 years)",
    )
    keep_min_receivers: int = Field(
        0,
        ge=0,
        le=100_000,
        description="keep at least this many of the newest not-needed receivers online (0 to at most 100000: a "
        "journal's receiver names run AMQxr00000-99999)",
    )
    stuck_after_runs: int = Field(
        3,
        ge=2,
        le=1000,
        description="alert when AMQ7460/AMQ7462 has not moved over this many runs while receivers changed (2 to at "
        "most 1000)",
    )
    recovery_point_alert_hours: float = Field(
        24,
        gt=0,
        le=8760,
        description="alert on the first run when AMQ7460 or AMQ7462 is older than this right after a forced "
        "checkpoint: RCDMQMIMG moves both unless a unit of work stays open or an object is damaged (hours, at most "
        "8760: a year)",
    )
    keep_library_saves: int = Field(
        2,
        ge=1,
        le=1000,
        description="backup expiry keeps the newest this many library saves, and every receiver save they need (1 to "
        "at most 1000)",
    )
    backup_retention_days: float = Field(
        0,
        ge=0,
        le=3660,
        description="backup expiry discards no save file holding a save younger than this (days, 0 to at most 3660: "
        "10 years)",
    )
    keep_on_host_days: float = Field(
        7,
        ge=0,
        le=3660,
        description="a save file stays on the partition this long after its copy in the backup store was verified, "
        "then the cleanup step deletes it from the host; never one the store does not hold verified (days, 0 to at "
        "most 3660: 10 years)",
    )
    backup: Literal["mqjournal", "site"] = Field(
        "mqjournal",
        description="who saves the receivers: 'mqjournal' saves each one into a save file, copies it to the backup "
        "store and deletes only against that verified copy; 'site' leaves saving to the site's own backup (BRMS or "
        "its own CL): mqjournal saves nothing and deletes only receivers IBM i shows fully saved (SAVE_TIMESTAMP set, "
        "status SAVED or FREED) by a save at least site_save_min_age_hours old (docs/site-backup.md)",
    )
    site_save_min_age_hours: float = Field(
        12,
        ge=0,
        le=8760,
        description="with backup 'site': how old the site's save of a receiver must be, by the partition's clock, "
        "before mqjournal deletes the receiver, so that the site's backup had time to finish, verify and move its "
        "media off site (hours, 0 to at most 8760: a year)",
    )
    save_compression: DataCompression = Field(
        "*LOW",
        description="SAVOBJ's data compression (DTACPR) for the receivers' save files: *NO, *YES (to a save file the "
        "same as *LOW), *LOW, *MEDIUM or *HIGH. IBM: *LOW is usually faster and its data larger than *MEDIUM's or "
        "*HIGH's, *HIGH the slowest and usually the smallest; software compression takes the partition's CPU. The "
        "default *LOW about halves the save file (and its copy over the network) for about twice the save's time "
        "(docs/ibmi-interfaces.md, mqjournal/space.py)",
    )
    save_compression_ratio: float | None = Field(
        None,
        gt=0,
        le=2,
        description="bytes of save file per byte of receiver saved, as measured on the site's own partitions; the "
        "approval gate estimates the save files' size with it before the save. Default: the ratio expected for "
        "save_compression (space.EXPECTED_RATIO: 1.0 *NO, 0.475 *YES and *LOW, 0.221 *MEDIUM, 0.149 *HIGH; above 0, "
        "at most 2)",
    )
    asp_limit_percent: float = Field(
        90,
        gt=0,
        le=100,
        description="how full the ASP holding the receivers may get before it is a problem: the ASP forecast counts "
        "the days until this use, and ASP_FULL_SOON is raised before it. The default is IBM i's default storage "
        "threshold of an ASP, 90%, at which the system warns QSYSOPR (CPF0907) (percent, above 0, at most 100)",
    )
    asp_forecast_alert_days: float = Field(
        14,
        ge=0,
        le=3660,
        description="raise ASP_FULL_SOON when the ASP forecast (mqjournal/forecast.py) says the ASP reaches "
        "asp_limit_percent within this many days if nothing is deleted (days, 0 to at most 3660: 10 years)",
    )
    asp_forecast_window_days: float = Field(
        28,
        gt=0,
        le=3660,
        description="the ASP forecast fits the growth of the collections of this many days before the newest: four "
        "weekly runs, or many more daily ones (days, above 0, at most 3660: 10 years)",
    )
    clock_skew_seconds: float = Field(
        300,
        ge=0,
        le=86_400,
        description="a needed time (AMQJRNINF, AMQ7460, AMQ7462) later than the collection or the planning time by "
        "more than this is implausible and blocks deletes (seconds, 0 to at most 86400: a day)",
    )

    @property
    def max_snapshot_age(self) -> timedelta:
        return timedelta(hours=self.max_snapshot_age_hours)

    @property
    def recovery_point_alert_age(self) -> timedelta:
        return timedelta(hours=self.recovery_point_alert_hours)

    @property
    def retention(self) -> timedelta:
        return timedelta(days=self.retention_days)

    @property
    def backup_retention(self) -> timedelta:
        return timedelta(days=self.backup_retention_days)

    @property
    def keep_on_host(self) -> timedelta:
        return timedelta(days=self.keep_on_host_days)

    @property
    def site_save_min_age(self) -> timedelta:
        return timedelta(hours=self.site_save_min_age_hours)

    @property
    def site_backup(self) -> bool:
        """The site's own backup saves the receivers; mqjournal saves nothing (docs/site-backup.md)."""
        return self.backup == "site"

    def estimated_save_file_bytes(self, receiver_bytes: int) -> int:
        """What the save files of receivers of `receiver_bytes` are expected to take on the partition."""
        return estimated_save_file_bytes(receiver_bytes, self.save_compression, self.save_compression_ratio)

    @property
    def asp_forecast_window(self) -> timedelta:
        return timedelta(days=self.asp_forecast_window_days)

    @property
    def clock_skew(self) -> timedelta:
        return timedelta(seconds=self.clock_skew_seconds)


def load_policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    data = read_yaml(path, "policy file") or {}
    return Policy.model_validate(data)
