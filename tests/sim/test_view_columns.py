"""The simulator's QSYS2 views carry the real views' columns, not only the ones mqjournal reads (issue #13).

A query written against a real partition (an admin's, or a later mqjournal's) must not fail on the simulator with
SQL0206 for a column IBM i has. The names come from public selects against the real views (see sim/db2views.py).
"""

from __future__ import annotations

import pytest

REAL_COLUMNS = {
    "QSYS2.JOURNAL_RECEIVER_INFO": [
        "MAXIMUM_NULL_VALUE_INDICATORS",
        "MINIMIZE_ESD_FOR_FILES",
        "FIXED_LENGTH_DATA_INCLUDES_TRANSACTION_ID",
        "LOCAL_JOURNAL_SYSTEM",
        "LOCAL_JOURNAL_NAME",
        "LOCAL_JOURNAL_RECEIVER_LIBRARY",
        "SOURCE_JOURNAL_SYSTEM",
        "SOURCE_JOURNAL_NAME",
        "SOURCE_JOURNAL_RECEIVER_LIBRARY",
        "REDIRECTED_RECEIVER_LIBRARY",
        "FILTER_BY_OBJECT",
        "FILTER_IMAGES",
        "FILTER_PROGRAMS",
        "FILTER_PROGRAM_ARRAY",
        "FILTER_PROGRAM_JSON",
    ],
    "QSYS2.JOURNAL_INFO": [
        "REMOVE_INTERNAL_ENTRIES",
        "NUMBER_REMOTE_JOURNALS",
        "MAXIMUM_REMOTE_JOURNALS_TIME_BEHIND",
        "JOURNAL_CACHE",
        "FIXED_LENGTH_DATA_INCLUDES_PROGRAM_NAME",
    ],
    "QSYS2.MESSAGE_QUEUE_INFO": ["MESSAGE_TOKENS", "MESSAGE_SECOND_LEVEL_TEXT"],
}


@pytest.mark.parametrize("view", sorted(REAL_COLUMNS))
def test_the_real_columns_can_be_selected(sim_fleet, view):
    shell = sim_fleet.connect()
    columns = REAL_COLUMNS[view]
    rows = shell.sql(f"SELECT {', '.join(columns)} FROM {view} FETCH FIRST 1 ROWS ONLY")
    assert rows and set(rows[0]) == set(columns)


def test_a_local_journals_receivers_show_no_remote_journal_and_no_filters(sim_fleet):
    shell = sim_fleet.connect()
    (row,) = shell.sql(
        "SELECT REMOTE_JOURNAL_TYPE, SOURCE_JOURNAL_NAME, FILTER_BY_OBJECT, MAXIMUM_NULL_VALUE_INDICATORS"
        " FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE STATUS = 'ATTACHED' AND JOURNAL_LIBRARY = 'QMTEST'"
    )
    assert row["REMOTE_JOURNAL_TYPE"] is None and row["SOURCE_JOURNAL_NAME"] is None
    assert row["FILTER_BY_OBJECT"] == "NO" and row["MAXIMUM_NULL_VALUE_INDICATORS"] == "0"
