"""Tests for the simulator's IBM i / IBM MQ message catalogue."""

from __future__ import annotations

import re

import pytest

from mqjournal.sim.messages import CATALOG, MESSAGE_TYPES, Message, MessageDef, render

ID_FORM = re.compile(r"^[A-Z]{3}[0-9A-F]{4}$")


def test_render_fills_placeholders_including_star_prefix():
    msg = render("CPF2105", "AMQA000001", "QMTEST", "JRNRCV")
    assert msg == Message(
        id="CPF2105", type="ESCAPE", severity=40, text="Object AMQA000001 in QMTEST type *JRNRCV not found."
    )


def test_render_uses_token_position_not_placeholder_order():
    # CPC9801 uses &2, &3 and &5 only: tokens 1 and 4 are present but unused.
    msg = render("CPC9801", "", "MQSAVF", "QGPL", "", "FILE")
    assert msg.text == "Object MQSAVF type *FILE created in library QGPL."
    assert msg.type == "COMPLETION" and msg.severity == 0


def test_render_two_digit_placeholders_are_not_confused_with_one_digit():
    # CPF2117 has &3, &4 and &5; a naive replace of "&1" must not eat into any "&1x".
    msg = render("CPF2117", "", "", "JRNRCV", "2", "1")
    assert msg.text == "2 objects type *JRNRCV deleted. 1 objects not deleted."


def test_render_missing_tokens_become_empty_and_extra_tokens_are_ignored():
    assert render("CPA7025", "AMQA000003").text == "Receiver AMQA000003 in  never fully saved. (I C)"
    assert render("CPF0006", "unused").text == "Errors occurred in command."


def test_render_mq_message_with_asterisk_receiver():
    msg = render("AMQ7460", "", "", "2024-05-27 14:05:35", "**********", "QMTEST")
    assert "**********" in msg.text and "QMTEST" in msg.text and "&" not in msg.text


def test_render_unknown_id_raises_key_error():
    with pytest.raises(KeyError):
        render("CPF9999X")
    with pytest.raises(KeyError):
        render("XYZ0000")


@pytest.mark.parametrize("msg_id", sorted(CATALOG))
def test_catalogue_entries_are_well_formed(msg_id):
    d = CATALOG[msg_id]
    assert isinstance(d, MessageDef)
    assert d.id == msg_id
    assert ID_FORM.match(d.id), d.id
    assert d.type in MESSAGE_TYPES
    assert isinstance(d.severity, int) and 0 <= d.severity <= 99
    assert d.text.strip() and d.text == d.text.strip()
    assert isinstance(d.verified, bool)
    assert d.source.strip()


def test_catalogue_covers_the_messages_the_client_keys_off():
    for msg_id in (
        "CPF0006",
        "CPD0030",
        "CPF2105",
        "CPF9801",
        "CPF2110",
        "CPF9810",
        "CPF2189",
        "CPF9802",
        "CPA7025",
        "CPF7020",
        "CPI70E3",
        "CPF5813",
        "CPF7302",
        "CPC3722",
        "CPF3770",
        "CPF3771",
        "CPC3703",
        "CPF3773",
        "CPF707F",
        "AMQ7460",
        "AMQ7462",
        "AMQ7432",
        "AMQ7472",
        "AMQ8146",
        "AMQ8118",
    ):
        assert msg_id in CATALOG, msg_id


def test_mq_messages_use_at_most_five_inserts():
    for d in CATALOG.values():
        if d.id.startswith("AMQ"):
            assert all(1 <= int(n) <= 5 for n in re.findall(r"&(\d+)", d.text)), d.id
