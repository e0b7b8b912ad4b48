"""How fast each ASP fills, and in how many days it reaches the policy's limit and is full: pure functions over the
collections (no I/O but `read_forecasts`, which reads the snapshot history).

The numbers come from what every collection already records: the ASP that holds the queue manager's journal, its
capacity and its free space (QSYS2.ASP_INFO, in whole megabytes; `snapshot.asp_*`), at the collection's time. One
partition's queue managers on the same ASP give one series: the ASP is the partition's, whichever queue manager's
collection read it.

The method: **growth between drops, by least squares.** Receivers grow with MQ's traffic, which is steady from week
to week, so used bytes are fitted as a straight line of time. But mqjournal's own deletes (and the cleanup of save
files) make the series a sawtooth: a line through the teeth would read the deletes as slower growth, and say "months"
for an ASP that fills in days the moment maintenance stops. So the series is cut wherever used space drops by more
than ASP_INFO's rounding (DROP_BYTES), and one slope is fitted to all the pieces at once, each piece with its own
intercept (ordinary least squares with a fixed effect per piece: slope = sum over pieces of S_ty / sum of S_tt,
around each piece's own means). The slope is the ASP's growth when nothing is freed; the days to the limit and to
full are counted from the newest collection's measured use at that slope: "if nothing is deleted from now on".

Only the collections of the last `policy.asp_forecast_window_days` before the newest count, so that last quarter's
traffic does not speak for this week's. Fewer than MIN_SAMPLES fitted points (a piece of one point fits nothing), or
fitted points spanning under MIN_SPAN, give no rate; a flat or shrinking ASP gives a rate but no date: it is not
filling. An ASP already at or past the limit is 0 days from it, whatever its rate.

`days_until_full` is the entry point for other readers (the metrics exporter): days until full per (host, ASP
number), None where there is no date.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from mqjournal.datafolder import DataPath, modified
from mqjournal.planrows import PlannedQueueManager
from mqjournal.policy import Policy
from mqjournal.snapshot import Snapshot, read_snapshots
from mqjournal.vocabulary import Alert

log = logging.getLogger(__name__)

DAY = 86_400.0
MIN_SAMPLES = 3
"""Fitted points below which no rate is given: two points make a line whatever the noise."""
MIN_SPAN = timedelta(hours=12)
"""Fitted points closer in time than this give no rate: minutes apart, ASP_INFO's 1 MB rounding is the slope."""
DROP_BYTES = 2 * 1024 * 1024
"""A fall in used space larger than this (twice ASP_INFO's 1 MB resolution) starts a new piece: space was freed."""
HISTORY_RUNS = 400
"""Run folders `read_forecasts` looks at, newest first, before the window cuts them: a window of hourly runs."""


class AspKey(NamedTuple):
    """One ASP of one partition: its host as the fleet file names it, and its number (1: the system ASP)."""

    host: str
    asp_number: int


class AspSample(NamedTuple):
    """The ASP as one collection read it."""

    at: datetime
    used_bytes: int
    capacity_bytes: int


class AspForecast(BaseModel):
    """One ASP's growth and when it reaches the policy's limit and is full, counted from its newest collection."""

    model_config = ConfigDict(frozen=True)

    host: str
    asp_number: int
    as_of: datetime
    """The newest collection's time (the partition's clock, with its offset): the days count from it."""
    capacity_bytes: int
    used_bytes: int
    """Used at `as_of`: capacity minus ASP_INFO's available."""
    limit_percent: float
    """The policy's asp_limit_percent."""
    samples: int
    """The collections the fit used (within the window, in pieces of at least two)."""
    window_days: float
    growth_bytes_per_day: float | None
    """The fitted growth when nothing is freed; None: too few collections to say."""
    days_to_limit: float | None
    """Days from `as_of` until used reaches limit_percent of capacity; 0 when it has; None: no date (too few
    collections, or not growing)."""
    days_to_full: float | None
    """Days from `as_of` until no space is left; 0 when none is; None as for days_to_limit."""
    history: list[AspSample] = []
    """The window's collections, oldest first (the chart draws them)."""

    @property
    def key(self) -> AspKey:
        return AspKey(self.host, self.asp_number)

    @property
    def used_percent(self) -> float:
        return 100.0 * self.used_bytes / self.capacity_bytes if self.capacity_bytes else 0.0

    @property
    def limit_bytes(self) -> int:
        return int(self.capacity_bytes * self.limit_percent / 100)

    @property
    def limit_at(self) -> datetime | None:
        return None if self.days_to_limit is None else self.as_of + timedelta(days=self.days_to_limit)

    @property
    def full_at(self) -> datetime | None:
        return None if self.days_to_full is None else self.as_of + timedelta(days=self.days_to_full)

    def fitted_used(self, at: datetime) -> float | None:
        """The projection's used bytes at `at`: the newest use plus the growth since `as_of` (for the chart)."""
        if self.growth_bytes_per_day is None:
            return None
        return self.used_bytes + self.growth_bytes_per_day * (at - self.as_of).total_seconds() / DAY


# --- the samples -------------------------------------------------------------------------------------------------


def samples_of(snapshots: Iterable[Snapshot]) -> dict[AspKey, list[AspSample]]:
    """Each ASP's readings, oldest first; a collection that could not read ASP_INFO gives none. Two queue managers
    collected at the same moment give one reading."""
    found: dict[AspKey, dict[datetime, AspSample]] = defaultdict(dict)
    for s in snapshots:
        if s.asp_number is None or not s.asp_capacity_bytes or s.asp_available_bytes is None:
            continue
        used = max(0, s.asp_capacity_bytes - s.asp_available_bytes)
        found[AspKey(s.host, s.asp_number)][s.collected_at] = AspSample(s.collected_at, used, s.asp_capacity_bytes)
    return {key: sorted(by_time.values(), key=lambda x: x.at) for key, by_time in found.items()}


def pieces(samples: Sequence[AspSample]) -> list[list[AspSample]]:
    """The series cut wherever used space fell by more than DROP_BYTES: between two cuts, nothing was freed."""
    out: list[list[AspSample]] = []
    for sample in samples:
        if out and out[-1][-1].used_bytes - sample.used_bytes <= DROP_BYTES:
            out[-1].append(sample)
        else:
            out.append([sample])
    return out


def growth_per_day(samples: Sequence[AspSample]) -> tuple[float | None, int]:
    """The least-squares slope (bytes a day) common to the pieces, each around its own means, and how many points
    it used; None when fewer than MIN_SAMPLES points in pieces of two or more, or they span under MIN_SPAN."""
    fitted = [p for p in pieces(samples) if len(p) >= 2]
    points = sum(len(p) for p in fitted)
    if points < MIN_SAMPLES:
        return None, points
    span = max(s.at for p in fitted for s in p) - min(s.at for p in fitted for s in p)
    if span < MIN_SPAN:
        return None, points
    s_ty = s_tt = 0.0
    for piece in fitted:
        days = [(s.at - piece[0].at).total_seconds() / DAY for s in piece]
        used = [float(s.used_bytes) for s in piece]
        mean_t, mean_u = sum(days) / len(days), sum(used) / len(used)
        s_ty += sum((t - mean_t) * (u - mean_u) for t, u in zip(days, used, strict=True))
        s_tt += sum((t - mean_t) ** 2 for t in days)
    if s_tt == 0:
        return None, points
    return s_ty / s_tt, points


# --- the forecast ------------------------------------------------------------------------------------------------


def _days_until(target: float, used: int, growth: float | None) -> float | None:
    if used >= target:
        return 0.0
    if growth is None or growth <= 0:
        return None
    return (target - used) / growth


def forecast(key: AspKey, samples: Sequence[AspSample], policy: Policy) -> AspForecast | None:
    """The ASP's forecast from its readings (any order), None without any."""
    if not samples:
        return None
    ordered = sorted(samples, key=lambda s: s.at)
    newest = ordered[-1]
    window = [s for s in ordered if newest.at - s.at <= policy.asp_forecast_window]
    growth, used_points = growth_per_day(window)
    limit = newest.capacity_bytes * policy.asp_limit_percent / 100
    return AspForecast(
        host=key.host,
        asp_number=key.asp_number,
        as_of=newest.at,
        capacity_bytes=newest.capacity_bytes,
        used_bytes=newest.used_bytes,
        limit_percent=policy.asp_limit_percent,
        samples=used_points,
        window_days=policy.asp_forecast_window_days,
        growth_bytes_per_day=growth,
        days_to_limit=_days_until(limit, newest.used_bytes, growth),
        days_to_full=_days_until(newest.capacity_bytes, newest.used_bytes, growth),
        history=window,
    )


def forecasts(snapshots: Iterable[Snapshot], policy: Policy) -> dict[AspKey, AspForecast]:
    """A forecast per ASP the collections read."""
    found = {}
    for key, samples in samples_of(snapshots).items():
        f = forecast(key, samples, policy)
        if f is not None:
            found[key] = f
    return found


def read_forecasts(snapshots_root: DataPath, policy: Policy, *, runs: int = HISTORY_RUNS) -> dict[AspKey, AspForecast]:
    """The forecasts from the data folder's snapshot history (`snapshots/run_id=.../*.jsonl`: of the newest `runs`
    run folders, those written within the window, and a day's slack, of the newest). A file that cannot be read is
    left out with a warning: a forecast must not stop a run."""
    try:
        written = {p: modified(p) for p in snapshots_root.glob("run_id=*") if p.is_dir()}
    except OSError as exc:
        log.warning("no ASP forecasts: %s cannot be listed: %s", snapshots_root, exc)
        return {}
    newest = max(written.values(), default=0.0)
    reach = (policy.asp_forecast_window + timedelta(days=1)).total_seconds()
    folders = [p for p in sorted(written, key=lambda p: written[p])[-runs:] if newest - written[p] <= reach]
    found: list[Snapshot] = []
    for folder in folders:
        for path in folder.glob("*.jsonl"):
            try:
                found += list(read_snapshots(path))
            except (OSError, ValueError) as exc:
                log.warning("%s left out of the ASP forecasts: %s", path, exc)
    return forecasts(found, policy)


def days_until_full(snapshots_root: DataPath, policy: Policy | None = None) -> dict[AspKey, float | None]:
    """Days from each ASP's newest collection until it is full at its fitted growth, by (host, ASP number); None
    where there is no date (too few collections, or not growing). For the metrics exporter."""
    return {key: f.days_to_full for key, f in read_forecasts(snapshots_root, policy or Policy()).items()}


# --- in words ----------------------------------------------------------------------------------------------------


def days_text(days: float | None) -> str:
    """`now`, `12 h`, `3.5 days`, `41 days`; "-" for no date."""
    if days is None:
        return "-"
    if days <= 0:
        return "now"
    if days < 1:
        return f"{days * 24:.0f} h"
    return f"{days:.1f} days" if days < 10 else f"{days:.0f} days"


def limit_in(f: AspForecast | None) -> str:
    """The gate's cell: how long until the ASP reaches the policy's limit, with its date in the partition's time
    (`3.5 days (2026-12-02)`), `reached` when it has, "-" with no date (too few collections, or not growing)."""
    if f is None or f.days_to_limit is None:
        return "-"
    if f.days_to_limit <= 0:
        return "reached"
    return f"{days_text(f.days_to_limit)} ({f.limit_at:%Y-%m-%d})" if f.limit_at else days_text(f.days_to_limit)


# --- the alert ---------------------------------------------------------------------------------------------------


def fills_soon(f: AspForecast | None, policy: Policy) -> bool:
    """ASP_FULL_SOON: the ASP reaches the policy's limit within asp_forecast_alert_days (or is past it)."""
    return f is not None and f.days_to_limit is not None and f.days_to_limit <= policy.asp_forecast_alert_days


def forecast_of(q: PlannedQueueManager, found: Mapping[AspKey, AspForecast]) -> AspForecast | None:
    """The forecast of the ASP that holds the queue manager's receivers."""
    return None if q.asp_number is None else found.get(AspKey(q.host, q.asp_number))


def with_forecast_alerts(
    qms: Iterable[PlannedQueueManager], found: Mapping[AspKey, AspForecast], policy: Policy
) -> list[PlannedQueueManager]:
    """The plan's queue managers with ASP_FULL_SOON added where their ASP fills soon. The Spark job plans one
    collection per queue manager and reads no ASP history, so this alert is added after it, where the gate, the
    report and the fleet view read the plan's alerts."""
    out = []
    for q in qms:
        if fills_soon(forecast_of(q, found), policy) and Alert.ASP_FULL_SOON not in q.alerts:
            q = q.model_copy(update={"alerts": tuple(sorted({*q.alerts, Alert.ASP_FULL_SOON}))})
        out.append(q)
    return out
