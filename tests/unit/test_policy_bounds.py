"""The planning policy takes finite numbers within documented bounds only: `inf` or 1e308 is refused on load,
naming the field, instead of failing later deep in the Spark job."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from mqjournal.policy import Policy, load_policy

NUMBER_FIELDS = [
    "max_snapshot_age_hours",
    "retention_days",
    "keep_min_receivers",
    "stuck_after_runs",
    "keep_library_saves",
    "backup_retention_days",
    "keep_on_host_days",
    "site_save_min_age_hours",
]


@pytest.mark.parametrize("field", NUMBER_FIELDS)
@pytest.mark.parametrize("value", [math.inf, 1e308, 10**12], ids=["inf", "1e308", "10^12"])
def test_a_huge_or_infinite_value_is_refused_naming_the_field(field, value):
    with pytest.raises(ValidationError) as caught:
        Policy.model_validate({field: value})
    assert field in str(caught.value)


@pytest.mark.parametrize("field", ["max_snapshot_age_hours", "retention_days", "backup_retention_days"])
def test_nan_is_refused(field):
    with pytest.raises(ValidationError, match=field):
        Policy.model_validate({field: math.nan})


@pytest.mark.parametrize("text", [".inf", "1e308", ".nan"])
def test_a_policy_file_with_inf_is_refused_when_loaded(tmp_path, text):
    path = tmp_path / "policy.yaml"
    path.write_text(f"retention_days: {text}\n")
    with pytest.raises(ValidationError, match="retention_days"):
        load_policy(path)


def test_every_bound_is_documented_in_the_field_description():
    for name in NUMBER_FIELDS:
        field = Policy.model_fields[name]
        maximum = next(m.le for m in field.metadata if getattr(m, "le", None) is not None)
        assert f"at most {maximum:g}" in field.description, name


def test_the_bounds_themselves_are_accepted_and_usable():
    at_most = {}
    for name in NUMBER_FIELDS:
        field = Policy.model_fields[name]
        at_most[name] = next(m.le for m in field.metadata if getattr(m, "le", None) is not None)
    policy = Policy.model_validate(at_most)
    assert policy.retention.days > 0 and policy.backup_retention.days > 0 and policy.max_snapshot_age.days > 0


ASP_FORECAST_FIELDS = {"asp_limit_percent": 100, "asp_forecast_alert_days": 3660, "asp_forecast_window_days": 3660}


def test_the_asp_forecasts_limits_have_documented_defaults_and_bounds_and_refuse_infinity():
    policy = Policy()

    assert (policy.asp_limit_percent, policy.asp_forecast_alert_days, policy.asp_forecast_window_days) == (90, 14, 28)
    for name, maximum in ASP_FORECAST_FIELDS.items():
        assert f"at most {maximum:g}" in Policy.model_fields[name].description, name
        Policy.model_validate({name: maximum})
        with pytest.raises(ValidationError, match=name):
            Policy.model_validate({name: math.inf})
