"""The planning words are stored (Parquet, summary.json, snapshots, catalog notes): their values never change, and
each one is documented where a reader of a plan looks it up."""

from __future__ import annotations

from pathlib import Path

from mqjournal.vocabulary import (
    BLOCK_ORDER,
    DELETES,
    SAVES,
    Action,
    Alert,
    BlockReason,
    Reason,
    ReceiverStatus,
    alert_text,
)

RULES_DOC = (Path(__file__).resolve().parents[2] / "docs" / "planning-rules.md").read_text(encoding="utf-8")


def test_the_stored_values_are_the_released_ones():
    assert [str(a) for a in Action] == ["keep", "save", "delete", "save_then_delete"]
    assert SAVES == ("save", "save_then_delete")
    assert DELETES == ("delete", "save_then_delete")
    assert [str(s) for s in ReceiverStatus] == ["ATTACHED", "ONLINE", "SAVED", "FREED", "PARTIAL", "EMPTY"]
    assert all(str(member) == member.name for enum in (Reason, BlockReason, Alert) for member in enum)


def test_block_reasons_are_listed_in_the_documented_order():
    assert ", ".join(BLOCK_ORDER) in " ".join(RULES_DOC.split())
    assert BLOCK_ORDER[0] == BlockReason.SNAPSHOT_STALE and BLOCK_ORDER[-1] == BlockReason.CHAIN_BROKEN


def test_every_alert_has_its_text_and_is_documented():
    for alert in Alert:
        assert alert.text and alert_text(alert) == alert.text
        assert f"`{alert}`" in RULES_DOC, f"{alert} is not described in docs/planning-rules.md, section 4"


def test_an_alert_code_from_a_newer_planner_reads_as_itself():
    assert alert_text("SOMETHING_NEW") == "SOMETHING_NEW"


def test_every_reason_is_a_row_of_the_documented_table():
    for reason in Reason:
        assert f"| {reason} |" in RULES_DOC
