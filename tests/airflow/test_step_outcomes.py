"""The Airflow steps hand each executor result to XCom as its outcome model (`Outcome(target=..., **asdict(result))`):
every field a result has must be a field of its model, or the step fails after it did its work on the host."""

from __future__ import annotations

from dataclasses import asdict, fields

import pytest

from mqjournal.airflow.xcom import CleanupOutcome, DeleteOutcome, SaveOutcome
from mqjournal.ibmi.cleanup import CleanupResult
from mqjournal.ibmi.executor import DeleteResult, SaveResult


@pytest.mark.parametrize(
    "result, outcome", [(SaveResult, SaveOutcome), (DeleteResult, DeleteOutcome), (CleanupResult, CleanupOutcome)]
)
def test_every_field_of_a_result_is_a_field_of_its_outcome(result, outcome):
    assert {f.name for f in fields(result)} - set(outcome.model_fields) == set()


def test_a_save_with_a_note_goes_to_xcom_and_back():
    # The save step of a site-backup policy saves nothing and says why.
    result = SaveResult(note="backup: site: the site's own backup saves the receivers, mqjournal saves none")
    outcome = SaveOutcome(target="ibmi1/TEST/QMTEST", **asdict(result))
    assert SaveOutcome.from_xcom(outcome.to_xcom()) == outcome
    assert outcome.to_xcom()["note"] == result.note
