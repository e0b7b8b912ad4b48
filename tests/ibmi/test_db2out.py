"""Reading what the IBM i `db2` utility prints: real captures, and result sizes the captures imply.

Captures are the db2Parse fixtures of codefori/vscode-ibmi (`src/testing/tools.ts` at commit 46ddb55b, taken from
IBM i partitions; removed from that file by commit 0c46fd25).
"""

from __future__ import annotations

import pytest

from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, parse_results, parse_single

QCUSTCDT = "\n".join(
    [
        "",
        "CUSNUM   LSTNAM   INIT  STREET        CITY   STATE  ZIPCOD  CDTLMT  CHGCOD  BALDUE   CDTDUE  ",
        "-------- -------- ----- ------------- ------ ------ ------- ------- ------- -------- --------",
        " 938472  Henning  G K   4859 Elm Ave  Dallas TX      75217   5000    3         37.00     0.00",
        "",
        "  1 RECORD(S) SELECTED.",
        "",
    ]
)

TEN_FILES = "\n".join(
    [
        "",
        "NAME       TYPE  ATTRIBUTE  TEXT                                               IS_SOURCE   NB_MBR  SOURCE_LENGTH  CCSID  ",
        "---------- ----- ---------- -------------------------------------------------- ----------- ------- -------------- -------",
        *[
            f"{name:<10} *FILE *PHY       {text:<50}           1      3     112             37 "
            for name, text in [
                ("CMD", ""),
                ("EVFTEMPF01", ""),
                ("EVFTEMPF02", ""),
                ("HEBREW", ""),
                ("QCPYSRC", ""),
                ("QDDSSRC", ""),
                ("QRPGLEREF", ""),
                ("QRPGLESRC", "cool mate"),
                ("QSQDSRC", "SQL PROCEDURES"),
                ("VSCODE", ""),
            ]
        ],
        "",
        " 10 RECORD(S) SELECTED.",
        "",
    ]
)


def table(count: int) -> str:
    """`count` rows of one VARCHAR(10) column, with the trailer a real partition prints (printf "%3d")."""
    rows = [f"AMQA{n:06d}" for n in range(count)]
    return "\n".join(
        ["", "MESSAGE_ID ", "-----------", *(f"{r:<11}" for r in rows), "", f"{count:3d} RECORD(S) SELECTED.", ""]
    )


def test_the_captured_qcustcdt_row_reads_with_numeric_padding_stripped():
    assert parse_single(QCUSTCDT) == [
        {
            "CUSNUM": "938472",
            "LSTNAM": "Henning",
            "INIT": "G K",
            "STREET": "4859 Elm Ave",
            "CITY": "Dallas",
            "STATE": "TX",
            "ZIPCOD": "75217",
            "CDTLMT": "5000",
            "CHGCOD": "3",
            "BALDUE": "37.00",
            "CDTDUE": "0.00",
        }
    ]


def test_a_captured_ten_row_result_with_empty_text_cells_reads_ten_rows():
    rows = parse_single(TEN_FILES)

    assert len(rows) == 10
    assert rows[0] == {
        "NAME": "CMD",
        "TYPE": "*FILE",
        "ATTRIBUTE": "*PHY",
        "TEXT": "",
        "IS_SOURCE": "1",
        "NB_MBR": "3",
        "SOURCE_LENGTH": "112",
        "CCSID": "37",
    }
    assert rows[8]["TEXT"] == "SQL PROCEDURES"


@pytest.mark.parametrize("count", [0, 1, 99, 100, 120, 999, 1000, 1234])
def test_every_result_size_is_read_whole(count):
    assert [r["MESSAGE_ID"] for r in parse_single(table(count))] == [f"AMQA{n:06d}" for n in range(count)]


def test_a_thousand_rows_have_a_trailer_with_no_leading_blank():
    assert "\n1000 RECORD(S) SELECTED.\n" in table(1000)
    assert len(parse_single(table(1000))) == 1000


def test_a_row_of_empty_strings_is_still_a_row():
    out = "\n".join(["", "TEXT ", "-----", "     ", "abc  ", "", "  2 RECORD(S) SELECTED.", ""])

    assert parse_single(out) == [{"TEXT": ""}, {"TEXT": "abc"}]


def test_a_result_cut_off_before_its_trailer_is_an_error_not_fewer_rows():
    cut = table(120).split("\n")[:60]

    with pytest.raises(Db2OutputError, match="cut off"):
        parse_single("\n".join(cut))


def test_a_trailer_that_counts_other_rows_than_printed_is_an_error():
    out = table(3).replace("  3 RECORD(S)", "  4 RECORD(S)")

    with pytest.raises(Db2OutputError, match="counts 4 rows"):
        parse_single(out)


def test_results_of_several_statements_are_read_in_order_including_a_cli_error():
    error = (
        "\n **** CLI ERROR *****\n         SQLSTATE: 42704\nNATIVE ERROR CODE: -204\nX in Y type *FILE not found. \n"
    )

    first, failure, last = parse_results(table(100) + error + table(1000))

    assert len(first) == 100 and len(last) == 1000
    assert failure == Db2Failure("42704", -204, "X in Y type *FILE not found.")
