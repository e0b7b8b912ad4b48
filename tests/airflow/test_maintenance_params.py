"""The maintenance trigger form bounds its numbers as the policy does: 1e308 days is refused in the form."""

from __future__ import annotations

from pathlib import Path

import pytest
from airflow.dag_processing.dagbag import DagBag

from mqjournal.policy import Policy

DAGS = Path(__file__).resolve().parents[2] / "dags"


@pytest.fixture(scope="module")
def params():
    return DagBag(dag_folder=str(DAGS)).dags["mq_journal_maintenance"].params


def _policy_bound(field: str):
    return next(m.le for m in Policy.model_fields[field].metadata if getattr(m, "le", None) is not None)


@pytest.mark.parametrize("field", ["retention_days", "keep_min_receivers"])
def test_the_policy_fields_of_the_form_have_the_policys_maximum(params, field):
    schema = params.get_param(field).schema
    assert schema["maximum"] == _policy_bound(field)
    params.get_param(field).resolve(_policy_bound(field))  # the bound itself is fine
    with pytest.raises(Exception, match=r"maximum|less than"):
        params.get_param(field).resolve(1e308 if schema["type"] == "number" else 10**12)


def test_the_approval_wait_has_a_maximum(params):
    assert params.get_param("approval_hours").schema["maximum"] <= 24 * 7


def test_the_form_offers_the_policys_data_compression_values_and_default(params):
    schema = params.get_param("save_compression").schema
    assert schema["enum"] == ["*NO", "*YES", "*LOW", "*MEDIUM", "*HIGH"]
    assert params.get_param("save_compression").resolve() == Policy().save_compression == "*LOW"
    with pytest.raises(Exception, match="is not one of"):
        params.get_param("save_compression").resolve("*MAX")
