"""The restore drill's pure rules: which stored copies a run drills (sampling), what a drill's object list proves
(verdict), and the scratch save files' names (scratch)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mqjournal.drill.sampling import Candidate, Rule, choose, previous_run_keys
from mqjournal.drill.scratch import is_scratch, names_from, scratch_library, scratch_name
from mqjournal.drill.verdict import judge
from mqjournal.errors import InvalidName

NOW = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
EVERY = timedelta(days=90)


def copy(key: str, *, proven: bool = True, drilled_days_ago: float | None = None, size: int = 100, outcome="passed"):
    return Candidate(
        store_url="file:///store",
        key=key,
        host="ibmi1",
        qmgr="TEST",
        size_bytes=size,
        proven=proven,
        last_drilled_at=NOW - timedelta(days=drilled_days_ago) if drilled_days_ago is not None else None,
        last_outcome=outcome if drilled_days_ago is not None else None,
    )


def keys(sample) -> list[str]:
    return [c.key for c in sample.chosen]


def test_claimed_copies_come_first_then_never_drilled_then_the_least_recently_drilled():
    copies = [
        copy("old", drilled_days_ago=200),
        copy("never"),
        copy("claimed", proven=False, drilled_days_ago=10),
        copy("older", drilled_days_ago=300),
    ]
    assert keys(choose(copies, Rule(copies_per_run=4, every=EVERY), NOW)) == ["claimed", "never", "older", "old"]


def test_copies_per_run_bounds_the_sample_and_the_rest_stay_due_for_the_next_runs():
    copies = [copy(f"c{i}") for i in range(5)]
    sample = choose(copies, Rule(copies_per_run=2, every=EVERY), NOW)
    assert keys(sample) == ["c0", "c1"] and [c.key for c in sample.due_left] == ["c2", "c3", "c4"]
    assert sample.text() == "2 copies to drill; 3 more due, left for the next runs"


def test_a_copy_drilled_within_the_period_is_not_due_and_one_past_it_is():
    copies = [copy("recent", drilled_days_ago=89.9), copy("due", drilled_days_ago=90)]
    assert keys(choose(copies, Rule(copies_per_run=5, every=EVERY), NOW)) == ["due"]


def test_a_drill_that_could_not_be_made_is_due_again_at_once():
    copies = [copy("error", drilled_days_ago=1, outcome="error"), copy("fine", drilled_days_ago=1)]
    assert keys(choose(copies, Rule(copies_per_run=5, every=EVERY), NOW)) == ["error"]


def test_a_failed_copy_counts_as_unproven_and_is_preferred():
    copies = [copy("never"), copy("failed", proven=False, drilled_days_ago=7, outcome="failed")]
    assert keys(choose(copies, Rule(copies_per_run=1, every=EVERY), NOW)) == ["failed"]


def test_the_previous_runs_copies_are_not_drilled_twice_in_a_row_while_others_are_due():
    copies = [copy("failed", proven=False, drilled_days_ago=7, outcome="failed"), copy("never")]
    sample = choose(copies, Rule(copies_per_run=1, every=EVERY), NOW, previous_run={"failed"})
    assert keys(sample) == ["never"] and sample.held_back == ("failed",)


def test_the_previous_runs_copy_is_drilled_again_when_nothing_else_is_due():
    copies = [copy("failed", proven=False, drilled_days_ago=7, outcome="failed"), copy("fresh", drilled_days_ago=1)]
    sample = choose(copies, Rule(copies_per_run=1, every=EVERY), NOW, previous_run={"failed"})
    assert keys(sample) == ["failed"] and sample.held_back == ()


def test_the_byte_budget_takes_the_first_copy_whatever_its_size_and_then_only_what_fits():
    copies = [copy("a-huge", size=1000), copy("b-big", size=600), copy("c-small", size=50)]
    sample = choose(copies, Rule(copies_per_run=5, every=EVERY, max_bytes_per_run=500), NOW)
    assert keys(sample) == ["a-huge"]
    sample = choose(copies[1:], Rule(copies_per_run=5, every=EVERY, max_bytes_per_run=700), NOW)
    assert keys(sample) == ["b-big", "c-small"]


def test_nothing_due_is_an_empty_sample():
    sample = choose([copy("recent", drilled_days_ago=1)], Rule(copies_per_run=2, every=EVERY), NOW)
    assert sample.chosen == () and sample.text() == "no stored copy is due for a restore drill"


def test_the_same_catalog_gives_the_same_sample():
    copies = [copy(k) for k in ("b", "a", "c")]
    rule = Rule(copies_per_run=2, every=EVERY)
    assert keys(choose(copies, rule, NOW)) == keys(choose(list(reversed(copies)), rule, NOW)) == ["a", "b"]


def test_the_previous_run_is_the_newest_drill_run():
    rows = [("r1", "a", NOW - timedelta(days=14)), ("r2", "b", NOW - timedelta(days=7)), ("r2", "c", NOW)]
    assert previous_run_keys(rows) == {"b", "c"} and previous_run_keys([]) == set()


# --- the verdict ---------------------------------------------------------------------------------------------------


def test_every_receiver_the_catalog_names_must_be_listed():
    expected = {("QMTEST", "AMQA000001"), ("QMTEST", "AMQA000002")}
    assert judge(expected, expected).passed
    missing = judge(expected, {("QMTEST", "AMQA000001")})
    assert not missing.passed and "does not list QMTEST/AMQA000002" in (missing.problem or "")
    assert not judge(expected, None).passed


def test_a_library_save_of_no_detached_receiver_passes_once_ibm_i_lists_it():
    """SAVLIB before any receiver was detached: the catalog names no receiver in the copy (only the attached one is
    in it). Failing the drill would mark the library's good backup as proving nothing."""
    attached = {("QMTEST", "AMQA000000")}
    verdict = judge(set(), attached)
    assert verdict.passed and verdict.note == (
        "the catalog names no receiver in this copy: IBM i took it as a save file (QMTEST/AMQA000000)"
    )
    assert judge(set(), set()).passed
    assert not judge(set(), None).passed  # the list could not be read: nothing is known


def test_receivers_listed_beyond_the_catalogs_are_noted_not_failed():
    verdict = judge({("QMTEST", "AMQA000001")}, {("QMTEST", "AMQA000001"), ("QMTEST", "AMQA000002")})
    assert verdict.passed and verdict.note == "also lists QMTEST/AMQA000002 (not in the catalog's list)"


# --- scratch names -------------------------------------------------------------------------------------------------


def test_scratch_names_are_drl_and_seven_digits_and_nothing_else_is_one():
    assert scratch_name(1) == "DRL0000001" and is_scratch("DRL0000001")
    assert not is_scratch("DRL000001") and not is_scratch("PAYRO327A") and not is_scratch("DRLX000001")
    assert list(names_from(9_999_998, 3)) == ["DRL9999998", "DRL9999999", "DRL0000001"]
    with pytest.raises(ValueError):
        scratch_name(0)


@pytest.mark.parametrize("library", ["QTEMP", "QSYS", "QSYS2", "BAD NAME", "TOOLONGNAME1"])
def test_a_scratch_library_must_be_a_user_library(library):
    with pytest.raises(InvalidName):
        scratch_library(library)


def test_qgpl_and_a_site_library_may_hold_scratch_files():
    assert scratch_library("QGPL") == "QGPL" and scratch_library("mqdrill") == "MQDRILL"
