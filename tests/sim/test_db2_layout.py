"""The simulated `db2` utility lays out a result table as a real IBM i does.

The expected lines are real captures: the db2Parse fixtures of codefori/vscode-ibmi (`src/testing/tools.ts` at
commit 46ddb55b; the fixtures were removed by 0c46fd25), taken from IBM i partitions. QIWS/QCUSTCDT is IBM's sample
table on every partition: CUSNUM NUMERIC(6,0), LSTNAM CHAR(8), INIT CHAR(3), STREET CHAR(13), CITY CHAR(6),
STATE CHAR(2), ZIPCOD NUMERIC(5,0), CDTLMT NUMERIC(4,0), CHGCOD NUMERIC(1,0), BALDUE and CDTDUE NUMERIC(6,2).
"""

from __future__ import annotations

from datetime import datetime

from mqjournal.ibmi.db2out import parse_single
from mqjournal.sim.db2views import DECIMAL, INTEGER, SMALLINT, Db2Type
from mqjournal.sim.sql import _render, _ResultSet, run_db2
from tests.sim.test_sql import FakeCatalog, receiver

QCUSTCDT = _ResultSet(
    names=["CUSNUM", "LSTNAM", "INIT", "STREET", "CITY", "STATE", "ZIPCOD", "CDTLMT", "CHGCOD", "BALDUE", "CDTDUE"],
    types=[
        DECIMAL(6),
        Db2Type("CHAR", 8),
        Db2Type("CHAR", 3),
        Db2Type("CHAR", 13),
        Db2Type("CHAR", 6),
        Db2Type("CHAR", 2),
        DECIMAL(5),
        DECIMAL(4),
        DECIMAL(1),
        DECIMAL(6, 2),
        DECIMAL(6, 2),
    ],
    rows=[(938472, "Henning ", "G K", "4859 Elm Ave ", "Dallas", "TX", 75217, 5000, 3, 37.0, 0.0)],
)

# "EN result set test" in the fixtures: what `SELECT * FROM QIWS.QCUSTCDT WHERE ...` printed on IBM i.
QCUSTCDT_CAPTURE = [
    "CUSNUM   LSTNAM   INIT  STREET        CITY   STATE  ZIPCOD  CDTLMT  CHGCOD  BALDUE   CDTDUE  ",
    "-------- -------- ----- ------------- ------ ------ ------- ------- ------- -------- --------",
    " 938472  Henning  G K   4859 Elm Ave  Dallas TX      75217   5000    3         37.00     0.00",
    "",
    "  1 RECORD(S) SELECTED.",
]


def receivers(count: int) -> FakeCatalog:
    return FakeCatalog(
        {
            "QSYS2.JOURNAL_RECEIVER_INFO": [
                receiver(f"AMQA{n:06d}", ATTACH_TIMESTAMP=datetime(2026, 11, 1)) for n in range(count)
            ]
        }
    )


def test_qcustcdt_prints_exactly_as_the_captured_partition_did():
    assert _render(QCUSTCDT, suppress=False).split("\n")[1:-2] == QCUSTCDT_CAPTURE


def test_a_name_longer_than_its_data_gets_one_more_position():
    # STATE over CHAR(2) is 6 wide in the capture; so is MESSAGE_ID (VARCHAR(7), 10 letters) 11.
    out = _render(
        _ResultSet(["STATE", "MESSAGE_ID"], [Db2Type("CHAR", 2), Db2Type("VARCHAR", 7)], [("TX", "AMQ7460")]),
        suppress=False,
    )

    assert out.split("\n")[1:4] == ["STATE  MESSAGE_ID ", "------ -----------", "TX     AMQ7460    "]


def test_integers_are_right_aligned_in_a_column_widened_by_its_name():
    # "Db2 results with bad character" fixture: SOURCE_LENGTH (INTEGER) right-aligned in 14, IASP_NUMBER in 12.
    out = _render(
        _ResultSet(["IS_SOURCE", "SOURCE_LENGTH", "IASP_NUMBER"], [INTEGER, INTEGER, SMALLINT], [(1, 112, 0)]),
        suppress=False,
    )

    assert out.split("\n")[1:4] == [
        "IS_SOURCE   SOURCE_LENGTH  IASP_NUMBER ",
        "----------- -------------- ------------",
        "          1            112            0",
    ]


def test_decimal_scale_zero_keeps_a_blank_for_the_decimal_point_and_is_left_aligned_when_widened():
    # The "empty columns" fixture: NUMERIC(5,0) under SOURCE_LENGTH prints "   112 " then blanks to 14.
    out = _render(
        _ResultSet(["NB_MBR", "SOURCE_LENGTH", "CCSID"], [DECIMAL(5), DECIMAL(5), DECIMAL(5)], [(3, 112, 37)]),
        suppress=False,
    )

    assert out.split("\n")[3] == "     3     112             37 "


def test_one_hundred_rows_fill_the_three_count_columns():
    out = run_db2(["SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO"], receivers(100)).stdout

    assert out.split("\n")[-3:] == ["100 RECORD(S) SELECTED.", "", ""]


def test_a_thousand_rows_print_the_count_with_no_leading_blank():
    out = run_db2(["SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO"], receivers(1000)).stdout

    assert out.split("\n")[-3:] == ["1000 RECORD(S) SELECTED.", "", ""]
    assert len(parse_single(out)) == 1000


def test_ten_rows_keep_one_leading_blank():
    out = run_db2(["SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO"], receivers(10)).stdout

    assert out.split("\n")[-3] == " 10 RECORD(S) SELECTED."


def test_sequence_numbers_print_as_decimal_fields_the_client_reads_back():
    catalog = FakeCatalog(
        {"QSYS2.JOURNAL_RECEIVER_INFO": [receiver("AMQA000001", FIRST_SEQUENCE_NUMBER=1, LAST_SEQUENCE_NUMBER=2**40)]}
    )

    out = run_db2(
        ["SELECT FIRST_SEQUENCE_NUMBER, LAST_SEQUENCE_NUMBER FROM QSYS2.JOURNAL_RECEIVER_INFO"], catalog
    ).stdout

    # DECIMAL(20,0): 22 positions, the last one the (blank) decimal point's; the name is 21 letters, so 22 wide.
    assert out.split("\n")[3] == " " * 20 + "1 " + " " + " " * 8 + str(2**40) + " "
    assert parse_single(out) == [{"FIRST_SEQUENCE_NUMBER": "1", "LAST_SEQUENCE_NUMBER": str(2**40)}]
