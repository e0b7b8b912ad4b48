"""The ASP forecast against a simulated partition whose ASP fills at a known rate: the queue manager journals
500 entries of 1000 bytes a minute (720,000,000 bytes a day), the ASP is read each simulated day as the collector
reads it (QSYS2.ASP_INFO through the partition's own `db2`, in megabytes), and the days the forecast gives are then
lived on the simulator: just before them the ASP is not at the limit (not full), just after them it is.

The stated tolerance is 1% of the forecast's days (measured: its rate within 0.1% of the workload's): the
checkpoints' records and receiver switches add a little to the workload's bytes, and ASP_INFO rounds to whole
megabytes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mqjournal import forecast
from mqjournal.fleet import HostConfig, QueueManagerConfig
from mqjournal.forecast import AspKey, AspSample
from mqjournal.ibmi import asp, commands
from mqjournal.ibmi.db2out import parse_single
from mqjournal.policy import Policy
from mqjournal.sim.host import SimulatedHost

GB = 1024**3
RATE = 500 * 1000 * 1440  # bytes a day
TOLERANCE = 0.01
START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


def read_asp(host: SimulatedHost) -> AspSample:
    """The ASP as the collector reads it: the journal's ASP, its capacity and free space, one SELECT."""
    statement = commands.journal_asp_usage("QMPAYROLL", "AMQAJRN")
    out = host.run(commands.sql(statement, runner="qsh").text, "MQADMIN")
    usage = asp.from_result(parse_single(out.stdout))
    assert usage is not None and usage.capacity_bytes and usage.available_bytes is not None, out.stdout + out.stderr
    return AspSample(host.partition.now, usage.capacity_bytes - usage.available_bytes, usage.capacity_bytes)


def live(host: SimulatedHost, until: datetime) -> None:
    """Simulated time passes, the workload journalled minute by minute."""
    host.advance_to(until)


@pytest.fixture
def filling() -> SimulatedHost:
    """PAYROLL journalling 720,000,000 bytes a day into an ASP of 100 GB with 85 GB used by everything else."""
    qm = QueueManagerConfig(name="PAYROLL", threshold_kb=200_000, entries_per_minute=500, entry_bytes=1000)
    host = SimulatedHost.create(HostConfig(name="ibmi-prod1", port=0, queue_managers=[qm]), START, None)
    host.register_user("MQADMIN")
    with host.state() as partition:
        partition.asp_capacity_bytes = 100 * GB
        partition.asp_other_used_bytes = 85 * GB
    return host


def test_the_forecast_gives_the_known_rate_and_the_days_the_simulated_asp_reaches_the_limit_and_fills(filling):
    samples = []
    for day in range(4):  # four daily collections
        if day:
            live(filling, filling.partition.now + timedelta(days=1))
        samples.append(read_asp(filling))
    f = forecast.forecast(AspKey("ibmi-prod1", 1), samples, Policy())

    assert f is not None and f.growth_bytes_per_day is not None
    assert f.growth_bytes_per_day == pytest.approx(RATE, rel=TOLERANCE)
    assert f.days_to_limit is not None and f.days_to_full is not None
    assert 0 < f.days_to_limit < f.days_to_full
    live(filling, f.as_of + timedelta(days=f.days_to_limit * (1 - TOLERANCE)))
    assert read_asp(filling).used_bytes < f.limit_bytes
    live(filling, f.as_of + timedelta(days=f.days_to_limit * (1 + TOLERANCE)))
    assert read_asp(filling).used_bytes >= f.limit_bytes
    live(filling, f.as_of + timedelta(days=f.days_to_full * (1 - TOLERANCE)))
    assert read_asp(filling).used_bytes < f.capacity_bytes
    live(filling, f.as_of + timedelta(days=f.days_to_full * (1 + TOLERANCE)))
    assert read_asp(filling).used_bytes >= f.capacity_bytes  # ASP_INFO: no space left
