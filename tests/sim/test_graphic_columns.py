"""Graphic (UTF-16, CCSID 1200) columns in the simulator's `db2` utility, and the client's casts of them (#29).

How IBM i's db2 utility prints an uncast VARGRAPHIC CCSID 1200 column is unknown, so the simulator answers one as
its UTF-16 code units in hex: a client that forgot the cast fails loudly here instead of on a real partition. A
CAST to a character type converts as Db2 for i does, and everything else answers exactly as before.
"""

from __future__ import annotations

import ast
import inspect

import pytest

from mqjournal.ibmi import commands, db2out
from mqjournal.ibmi.readings import utc_offset
from mqjournal.sim.db2views import VIEWS
from mqjournal.sim.sql import run_db2
from tests.sim.test_sql import FakeCatalog

TEXT = "Startup recovery point #$@ é"
CATALOG = FakeCatalog(
    {
        "QSYS2.SYSTEM_VALUE_INFO": [{"SYSTEM_VALUE_NAME": "QUTCOFFSET", "CURRENT_CHARACTER_VALUE": "+0100"}],
        "SYSIBM.SYSDUMMY1": [{"IBMREQD": "Y"}],
        "QSYS2.MESSAGE_QUEUE_INFO": [
            {
                "MESSAGE_QUEUE_LIBRARY": "QMTEST",
                "MESSAGE_QUEUE_NAME": "QMQMMSG",
                "MESSAGE_ID": "AMQ7460",
                "MESSAGE_TIMESTAMP": "2026-11-22-10.15.30.000000",
                "MESSAGE_TEXT": TEXT,
                "MESSAGE_TOKENS": b"\x00\x01",
            }
        ],
    }
)
# The statements as the client sent them before #29: the graphic columns uncast.
UNCAST_HOST_CLOCK = (
    "SELECT CURRENT TIMESTAMP AS NOW, (SELECT CURRENT_CHARACTER_VALUE FROM QSYS2.SYSTEM_VALUE_INFO"
    " WHERE SYSTEM_VALUE_NAME = 'QUTCOFFSET') AS UTC_OFFSET FROM SYSIBM.SYSDUMMY1"
)


def select(statement: str, catalog: FakeCatalog = CATALOG) -> list[db2out.Row]:
    result = run_db2([statement], catalog)
    assert result.exit_status == 0, result.stdout
    rows = db2out.parse_single(result.stdout)
    assert isinstance(rows, list), rows
    return rows


def utf16_hex(text: str) -> str:
    return text.encode("utf-16-be").hex().upper()


def graphic_columns() -> dict[str, int]:
    """Every graphic column of the services the simulator serves, with its length (the simulator's view types)."""
    return {column: t.length for columns in VIEWS.values() for column, t in columns.items() if t.graphic}


# --- the simulator's model of the unknown ----------------------------------------------------------------------


def test_the_views_know_their_graphic_ccsid_1200_columns():
    assert {"MESSAGE_TEXT", "CURRENT_CHARACTER_VALUE"} <= set(graphic_columns())
    assert all(t.ccsid == 1200 for columns in VIEWS.values() for t in columns.values() if t.graphic)
    assert VIEWS["QSYS2.SYSTEM_VALUE_INFO"]["CURRENT_CHARACTER_VALUE"].length == 3840  # IBM's 7.5 page


def test_an_uncast_graphic_column_prints_as_utf16_hex_four_positions_a_character():
    result = run_db2(["SELECT MESSAGE_ID, MESSAGE_TEXT FROM QSYS2.MESSAGE_QUEUE_INFO"], CATALOG)

    (row,) = db2out.parse_single(result.stdout)
    assert row == {"MESSAGE_ID": "AMQ7460", "MESSAGE_TEXT": utf16_hex(TEXT)}
    dashes = result.stdout.split("\n")[2].split(" ")
    assert len(dashes[1]) == 4 * 1024


def test_a_graphic_value_stays_graphic_through_a_scalar_subquery():
    (row,) = select(UNCAST_HOST_CLOCK)

    assert row["UTC_OFFSET"] == "002B0030003100300030"


def test_the_client_reading_an_uncast_offset_fails_with_a_clear_error():
    (row,) = select(UNCAST_HOST_CLOCK)

    with pytest.raises(ValueError, match=r"QUTCOFFSET '002B0030003100300030' is not \+HHMM"):
        utc_offset(row["UTC_OFFSET"])


# --- CAST to character, as Db2 for i converts ------------------------------------------------------------------


def test_a_cast_to_varchar_ccsid_37_gives_the_text_and_names_its_column_by_the_alias():
    result = run_db2(
        ["SELECT CAST(MESSAGE_TEXT AS VARCHAR(40) CCSID 37) AS MESSAGE_TEXT FROM QSYS2.MESSAGE_QUEUE_INFO"], CATALOG
    )

    assert db2out.parse_single(result.stdout) == [{"MESSAGE_TEXT": TEXT}]
    assert result.stdout.split("\n")[2] == "-" * 40  # laid out as the VARCHAR(40) it was cast to


def test_a_character_the_target_ccsid_lacks_becomes_a_substitution_character():
    catalog = FakeCatalog({"QSYS2.MESSAGE_QUEUE_INFO": [{"MESSAGE_TEXT": "ジャーナル AMQA000001"}]})

    (row,) = select("SELECT CAST(MESSAGE_TEXT AS VARCHAR(30) CCSID 37) AS T FROM QSYS2.MESSAGE_QUEUE_INFO", catalog)
    (utf8,) = select("SELECT CAST(MESSAGE_TEXT AS VARCHAR(60) CCSID 1208) AS T FROM QSYS2.MESSAGE_QUEUE_INFO", catalog)

    assert row["T"] == "\ufffd" * 5 + " AMQA000001"
    assert utf8["T"] == "ジャーナル AMQA000001"


def test_a_cast_shorter_than_the_text_cuts_it_as_db2_does():
    (row,) = select("SELECT CAST(MESSAGE_TEXT AS VARCHAR(7) CCSID 37) AS T FROM QSYS2.MESSAGE_QUEUE_INFO")

    assert row["T"] == "Startup"


def test_a_ccsid_the_simulator_cannot_convert_to_fails_with_sql0189():
    result = run_db2(["SELECT CAST(MESSAGE_TEXT AS VARCHAR(10) CCSID 4242) FROM QSYS2.MESSAGE_QUEUE_INFO"], CATALOG)

    assert result.exit_status == 4
    failure = db2out.parse_single(result.stdout)
    assert isinstance(failure, db2out.Db2Failure) and failure.msg_id == "SQL0189"


def test_character_and_binary_columns_answer_as_before():
    (row,) = select("SELECT MESSAGE_ID, HEX(MESSAGE_TOKENS) AS TOKENS FROM QSYS2.MESSAGE_QUEUE_INFO")

    assert row == {"MESSAGE_ID": "AMQ7460", "TOKENS": "0001"}


def test_a_cast_of_a_character_column_to_a_shorter_varchar_cuts_it_too():
    (row,) = select("SELECT CAST(MESSAGE_ID AS VARCHAR(3)) AS ID3 FROM QSYS2.MESSAGE_QUEUE_INFO")

    assert row == {"ID3": "AMQ"}


# --- the client casts every graphic column it selects ----------------------------------------------------------


def sent_statements() -> dict[str, str]:
    """Every statement the client builds over a service with a graphic column (the guard below keeps it whole)."""
    return {
        "host_clock": commands.host_clock(),
        "messages_since": commands.messages_since("QMTEST", "AMQAJRN", ("QSYS", "QSYSOPR"), None),
        "messages_since (no tokens)": commands.messages_since(
            "QMTEST", "AMQAJRN", ("QMTEST", "JRNMSGQ"), None, with_tokens=False
        ),
        "latest_recovery_points": commands.latest_recovery_points("QMTEST"),
        "latest_recovery_points (no tokens)": commands.latest_recovery_points("QMTEST", with_tokens=False),
    }


def test_every_statement_reading_a_graphic_view_is_checked_here():
    source = inspect.getsource(commands)
    graphic_views = {view for view, columns in VIEWS.items() if any(t.graphic for t in columns.values())}
    readers = {
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef)
        and any(view in (ast.get_source_segment(source, node) or "") for view in graphic_views)
    }
    assert readers == {name.split(" ")[0] for name in sent_statements()}


@pytest.mark.parametrize("name", list(sent_statements()))
def test_each_graphic_column_the_client_selects_is_cast_to_a_character_ccsid_no_shorter_than_it(name: str):
    statement = sent_statements()[name]
    for column, length in graphic_columns().items():
        bare = statement.replace(f"CAST({column} AS VARCHAR({length}) CCSID 37)", "")
        assert column not in bare.replace(f"AS {column}", ""), f"{name}: {column} uncast"


@pytest.mark.parametrize("name", list(sent_statements()))
def test_the_simulator_answers_the_client_statements_with_text(name: str):
    rows = select(sent_statements()[name])

    texts = [r.get("MESSAGE_TEXT") or r.get("UTC_OFFSET") for r in rows]
    assert texts in ([TEXT], ["+0100"])


# --- the replacement data's width ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        commands.latest_recovery_points("QMTEST"),
        commands.messages_since("QMTEST", "AMQAJRN", ("QMTEST", "AMQAJRN"), None),
    ],
)
def test_the_client_asks_for_the_replacement_data_in_a_column_512_wide_not_8192(statement):
    # HEX of the whole VARBINARY(4096) prints 8192 wide on every row: five sixths of a collect's answer (#28).
    result = run_db2([statement], CATALOG)
    assert result.exit_status == 0, result.stdout
    header, dashes = result.stdout.split("\n")[1:3]
    widths = dict(zip(header.split(), (len(d) for d in dashes.split(" ") if d), strict=True))
    assert widths["MESSAGE_TOKENS"] == 2 * commands.MESSAGE_TOKENS_BYTES == 512
    (row,) = db2out.parse_single(result.stdout)
    assert str(row["MESSAGE_TOKENS"]).startswith("0001")
