"""The ASP forecast (mqjournal.forecast): the growth of used space between the drops deletes make, fitted by least
squares, and the days until the policy's limit and until full, counted from the newest collection."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mqjournal import forecast
from mqjournal.forecast import AspKey, AspSample
from mqjournal.policy import Policy
from mqjournal.snapshot import write_snapshots
from mqjournal.vocabulary import Alert
from tests.plan.builders import chain, names, planned_queue_manager, snapshot

GB = 1024**3
T0 = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)
KEY = AspKey("ibmi-prod1", 1)
POLICY = Policy()


def readings(
    used_gb: list[float], *, capacity_gb: float = 100, every: timedelta = timedelta(days=1)
) -> list[AspSample]:
    return [AspSample(T0 + i * every, int(u * GB), int(capacity_gb * GB)) for i, u in enumerate(used_gb)]


def test_a_steady_fill_gives_its_rate_and_the_days_to_the_limit_and_to_full():
    # 2 GB a day, 70 GB used at the newest of 5 daily collections: 90 GB in 10 days, 100 GB in 15.
    f = forecast.forecast(KEY, readings([62, 64, 66, 68, 70]), POLICY)

    assert f is not None
    assert f.growth_bytes_per_day == pytest.approx(2 * GB)
    assert f.days_to_limit == pytest.approx(10)
    assert f.days_to_full == pytest.approx(15)
    assert f.limit_at == T0 + timedelta(days=4 + 10)
    assert (f.samples, f.used_bytes, f.limit_bytes) == (5, 70 * GB, 90 * GB)


def test_deletes_do_not_read_as_slower_growth():
    # 3 GB a day, with 10 GB freed by the deletes after day 2 and after day 5: between the drops it grows as before.
    f = forecast.forecast(KEY, readings([60, 63, 66, 59, 62, 65, 58, 61]), POLICY)

    assert f is not None
    assert f.growth_bytes_per_day == pytest.approx(3 * GB)
    assert f.days_to_limit == pytest.approx((90 - 61) / 3)


def test_the_newest_use_is_where_the_days_count_from_not_the_fitted_line():
    noisy = readings([60, 62.5, 63.5, 66])  # about 2 GB a day

    f = forecast.forecast(KEY, noisy, POLICY)

    assert f is not None and f.growth_bytes_per_day is not None
    assert f.days_to_full == pytest.approx((100 - 66) * GB / f.growth_bytes_per_day)


@pytest.mark.parametrize(
    "used",
    [[60, 61], [60], [60, 70, 62]],  # two points; one; a drop leaves pieces of one and two points
    ids=["two", "one", "pieces-of-one-and-two"],
)
def test_too_few_collections_give_no_rate_and_no_date(used):
    f = forecast.forecast(KEY, readings(used), POLICY)

    assert f is not None
    assert (f.growth_bytes_per_day, f.days_to_limit, f.days_to_full) == (None, None, None)


def test_collections_minutes_apart_give_no_rate():
    f = forecast.forecast(KEY, readings([60, 60.001, 60.002, 60.003], every=timedelta(minutes=5)), POLICY)

    assert f is not None and f.growth_bytes_per_day is None


@pytest.mark.parametrize("used", [[60, 60, 60, 60], [60, 59.999, 59.998, 59.997]], ids=["flat", "shrinking"])
def test_a_flat_or_shrinking_asp_has_no_date(used):
    f = forecast.forecast(KEY, readings(used), POLICY)

    assert f is not None and f.growth_bytes_per_day is not None and f.growth_bytes_per_day <= 0
    assert (f.days_to_limit, f.days_to_full) == (None, None)


def test_an_asp_past_the_limit_is_zero_days_from_it_whatever_its_rate():
    f = forecast.forecast(KEY, readings([93, 93, 93]), POLICY)

    assert f is not None and (f.days_to_limit, f.days_to_full) == (0.0, None)


def test_only_the_window_counts():
    # Fast growth 40 days ago, then a month of 1 GB a day: the window (28 days) sees only the month.
    old = readings([10, 30, 50], every=timedelta(days=1))
    recent = [AspSample(T0 + timedelta(days=10 + i), int((60 + i) * GB), 100 * GB) for i in range(0, 30, 3)]

    f = forecast.forecast(KEY, old + recent, POLICY)

    assert f is not None and f.growth_bytes_per_day == pytest.approx(1 * GB)
    assert all(h.at >= recent[-1].at - POLICY.asp_forecast_window for h in f.history)


def test_the_limit_and_the_window_are_the_policys():
    policy = Policy(asp_limit_percent=80, asp_forecast_window_days=2)

    f = forecast.forecast(KEY, readings([0, 0, 0, 62, 64, 66, 68, 70]), policy)

    assert f is not None and f.limit_percent == 80
    assert f.days_to_limit == pytest.approx(5)  # 80 GB at 2 GB a day from 70 GB
    assert f.samples == 3


# --- from collections --------------------------------------------------------------------------------------------


def collected(host: str, qmgr: str, library: str, at: datetime, used_gb: float, *, asp: int | None = 1):
    s = snapshot(chain(names(0, 2), library=library), host=host, qmgr=qmgr, library=library, collected_at=at)
    if asp is None:
        return s
    return s.model_copy(
        update={"asp_number": asp, "asp_capacity_bytes": 100 * GB, "asp_available_bytes": int((100 - used_gb) * GB)}
    )


def test_one_series_per_host_and_asp_whichever_queue_manager_read_it():
    snapshots = [
        collected("ibmi-prod1", "PAYROLL", "QMPAYROLL", T0, 60),
        collected("ibmi-prod1", "ORDERS", "QMORDERS", T0 + timedelta(days=1), 62),
        collected("ibmi-prod1", "PAYROLL", "QMPAYROLL", T0 + timedelta(days=2), 64),
        collected("ibmi-prod1", "ORDERS", "QMORDERS", T0 + timedelta(days=2), 64),  # the same moment: one reading
        collected("ibmi-prod2", "BILLING", "QMBILL01", T0, 10),
        collected("ibmi-prod2", "BILLING", "QMBILL01", T0 + timedelta(days=1), 10, asp=None),  # no ASP_INFO
    ]

    found = forecast.samples_of(snapshots)

    assert [s.used_bytes for s in found[AspKey("ibmi-prod1", 1)]] == [60 * GB, 62 * GB, 64 * GB]
    assert len(found[AspKey("ibmi-prod2", 1)]) == 1


def test_days_until_full_reads_the_data_folders_snapshot_history(tmp_path):
    root = tmp_path / "snapshots"
    for day, used in enumerate([70, 72, 74, 76]):
        s = collected("ibmi-prod1", "PAYROLL", "QMPAYROLL", T0 + timedelta(days=day), used)
        write_snapshots(root / f"run_id=r{day}" / "ibmi-prod1__QMPAYROLL.jsonl", [s])

    assert forecast.days_until_full(root) == {AspKey("ibmi-prod1", 1): pytest.approx(12)}


# --- the alert ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("used", "raised"), [([62, 64, 66, 68, 70], True), ([52, 53, 54, 55, 56], False)])
def test_asp_full_soon_is_raised_on_the_queue_managers_of_an_asp_reaching_the_limit_within_the_policys_days(
    used, raised
):
    # 2 GB a day from 70 GB: 90% in 10 days, under the default 14; 1 GB a day from 56 GB: 34 days.
    found = {KEY: forecast.forecast(KEY, readings(used), POLICY)}
    on_it = planned_queue_manager(host="ibmi-prod1", asp_number=1, alerts=("STARTUP_POINT_OLD",))
    elsewhere = planned_queue_manager(host="ibmi-prod2", asp_number=1)

    alerted, other = forecast.with_forecast_alerts([on_it, elsewhere], found, POLICY)

    assert (Alert.ASP_FULL_SOON in alerted.alerts) is raised
    assert Alert.STARTUP_POINT_OLD in alerted.alerts
    assert Alert.ASP_FULL_SOON not in other.alerts


def test_the_gates_cell_says_when_the_limit_is_reached():
    f = forecast.forecast(KEY, readings([62, 64, 66, 68, 70]), POLICY)

    assert forecast.limit_in(f) == "10 days (2026-11-15)"
    assert forecast.limit_in(forecast.forecast(KEY, readings([93, 93, 93]), POLICY)) == "reached"
    assert forecast.limit_in(forecast.forecast(KEY, readings([60]), POLICY)) == "-"
