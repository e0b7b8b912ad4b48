"""The executor's results are the save, delete and cleanup tasks' XCom values as they are: each goes to XCom as plain
data and comes back equal, naming its queue manager by its key."""

from __future__ import annotations

import json

import pytest

from mqjournal.ibmi.cleanup import CleanupResult
from mqjournal.ibmi.executor import DeleteResult, SaveResult

TARGET = "ibmi1/TEST/QMTEST"


@pytest.mark.parametrize("result", [SaveResult, DeleteResult, CleanupResult])
def test_every_result_goes_to_xcom_and_back_naming_its_queue_manager_by_its_key(result):
    value = result(target=TARGET)
    pushed = value.to_xcom()
    assert pushed["target"] == TARGET
    json.dumps(pushed)  # what Airflow stores: plain data
    assert result.from_xcom(pushed) == value


def test_a_save_with_a_note_goes_to_xcom_and_back():
    # The save step of a site-backup policy saves nothing and says why.
    result = SaveResult(
        target=TARGET, note="backup: site: the site's own backup saves the receivers, mqjournal saves none"
    )
    assert SaveResult.from_xcom(result.to_xcom()) == result
    assert result.to_xcom()["note"] == result.note
