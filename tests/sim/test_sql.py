"""The simulator's `db2` utility: layout, SQL behaviour and errors as the client sees them over SSH."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime

import pytest

from mqjournal.sim.sql import VIEW_COLUMNS, run_db2


class FakeCatalog:
    def __init__(self, views: Mapping[str, list[dict[str, object]]], now: datetime | None = None):
        self.views = views
        self._now = now

    def rows(self, view: str) -> Iterable[Mapping[str, object]]:
        return self.views.get(view, [])

    def now(self) -> datetime:
        return self._now or datetime(2026, 11, 22, 12, 0, 0)


def receiver(name: str, **columns: object) -> dict[str, object]:
    return {
        "JOURNAL_RECEIVER_LIBRARY": "QMTEST",
        "JOURNAL_RECEIVER_NAME": name,
        "JOURNAL_LIBRARY": "QMTEST",
        "JOURNAL_NAME": "AMQAJRN",
        **columns,
    }


RECEIVERS = [
    receiver(
        "AMQA000001",
        SIZE=102400,
        STATUS="SAVED",
        DESCRIPTIVE_TEXT="MQ receiver one",
        ATTACH_TIMESTAMP=datetime(2026, 11, 20, 8, 0),
        DETACH_TIMESTAMP=datetime(2026, 11, 21, 9, 30, 15, 123456),
    ),
    receiver("AMQA000002", SIZE=2048, STATUS="ATTACHED", ATTACH_TIMESTAMP=datetime(2026, 11, 21, 9, 30, 15, 123456)),
]
CATALOG = FakeCatalog(
    {
        "QSYS2.JOURNAL_RECEIVER_INFO": RECEIVERS,
        "QSYS2.JOURNAL_INFO": [
            {
                "JOURNAL_NAME": "AMQAJRN",
                "JOURNAL_LIBRARY": "QMTEST",
                "ATTACHED_JOURNAL_RECEIVER_NAME": "AMQA000002",
                "ATTACHED_JOURNAL_RECEIVER_LIBRARY": "QMTEST",
            }
        ],
        "QSYS2.MESSAGE_QUEUE_INFO": [
            {
                "MESSAGE_QUEUE_LIBRARY": "QMTEST",
                "MESSAGE_QUEUE_NAME": "QMQMMSG",
                "MESSAGE_ID": "AMQ7460",
                "MESSAGE_KEY": b"\x00\x00\x01\x2a",
                "MESSAGE_TEXT": "Startup recovery point",
            }
        ],
        "QSYS2.USER_SPACE": [
            {
                "USER_SPACE_LIBRARY": "QMOTHER",
                "USER_SPACE": "AMQJRNINF",
                "DATA": "AMQB000009QMOTHER   20261101000000000",
            },
            {
                "USER_SPACE_LIBRARY": "QMTEST",
                "USER_SPACE": "AMQJRNINF",
                "DATA": "AMQA000001QMTEST    20261121093015123",
                "DATA_BINARY": b"\xc1\xd4\xd8",
            },
        ],
        "QSYS2.SYSTEM_VALUE_INFO": [{"SYSTEM_VALUE_NAME": "QUTCOFFSET", "CURRENT_CHARACTER_VALUE": "+0100"}],
        "QSYS2.OBJECT_STATISTICS": [
            {"OBJNAME": "AMQA000001", "OBJLIB": "QMTEST", "OBJTYPE": "*JRNRCV"},
            {"OBJNAME": "AMQAJRN", "OBJLIB": "QMTEST", "OBJTYPE": "*JRN"},
            {"OBJNAME": "AMQB000009", "OBJLIB": "QMOTHER", "OBJTYPE": "*JRNRCV"},
        ],
    }
)

_TRAILER = re.compile(r"^ *(\d+) RECORD\(S\) SELECTED\.$")


def parse_db2(stdout: str) -> list[dict[str, str | None]]:
    """Parse a SELECT's output the robust way: the dashes line gives each column's start and width, the line above
    it the names; cells are sliced (never split on spaces) and stripped; a lone "-" is NULL; rows end at the blank
    line before the RECORD(S) SELECTED trailer."""
    lines = stdout.split("\n")
    dashes = next(i for i, line in enumerate(lines) if line.startswith("-") and set(line) <= {"-", " "})
    spans = [m.span() for m in re.finditer(r"-+", lines[dashes])]
    names = [lines[dashes - 1][start:end].strip() for start, end in spans]
    trailer = next(i for i in range(dashes + 1, len(lines)) if _TRAILER.match(lines[i]))
    rows = []
    for line in lines[dashes + 1 : trailer - 1]:
        cells = [line[start:end].strip() for start, end in spans]
        rows.append({name: (None if cell == "-" else cell) for name, cell in zip(names, cells, strict=True)})
    counted = _TRAILER.match(lines[trailer])
    assert counted is not None and int(counted.group(1)) == len(rows)
    return rows


def db2(*args: str, catalog: FakeCatalog = CATALOG):
    return run_db2(list(args), catalog)


def test_two_row_select_layout_pads_each_column_to_name_or_type_width():
    result = db2(
        "SELECT JOURNAL_RECEIVER_NAME, SIZE, STATUS FROM QSYS2.JOURNAL_RECEIVER_INFO ORDER BY JOURNAL_RECEIVER_NAME"
    )

    assert result.exit_status == 0
    assert result.stderr == ""
    assert result.stdout == (
        "\n"
        "JOURNAL_RECEIVER_NAME  SIZE                 STATUS  \n"
        "---------------------- -------------------- --------\n"
        "AMQA000001                           102400 SAVED   \n"
        "AMQA000002                             2048 ATTACHED\n"
        "\n"
        "  2 RECORD(S) SELECTED.\n"
        "\n"
    )


def test_null_is_a_dash_left_aligned_in_text_and_right_aligned_in_numbers():
    catalog = FakeCatalog({"QSYS2.JOURNAL_RECEIVER_INFO": [receiver("AMQA000003")]})

    lines = db2("SELECT DESCRIPTIVE_TEXT, SIZE FROM QSYS2.JOURNAL_RECEIVER_INFO", catalog=catalog).stdout.split("\n")

    assert lines[3] == "-" + " " * 49 + " " + " " * 19 + "-"
    assert parse_db2("\n".join(lines)) == [{"DESCRIPTIVE_TEXT": None, "SIZE": None}]


def test_timestamps_print_in_db2_format():
    result = db2("SELECT ATTACH_TIMESTAMP FROM QSYS2.JOURNAL_RECEIVER_INFO ORDER BY ATTACH_TIMESTAMP")

    assert [row["ATTACH_TIMESTAMP"] for row in parse_db2(result.stdout)] == [
        "2026-11-20-08.00.00.000000",
        "2026-11-21-09.30.15.123456",
    ]
    assert result.stdout.split("\n")[2] == "-" * 26


@pytest.mark.parametrize("literal", ["2026-11-21-09.30.15.123456", "2026-11-21 09:30:15.123456"])
def test_timestamp_compares_with_db2_or_iso_literal(literal):
    result = db2(f"SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE ATTACH_TIMESTAMP >= '{literal}'")

    assert parse_db2(result.stdout) == [{"JOURNAL_RECEIVER_NAME": "AMQA000002"}]


def test_labeled_duration_on_current_timestamp():
    catalog = FakeCatalog(CATALOG.views, now=datetime(2026, 11, 22, 9, 0))

    result = db2(
        "SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO "
        "WHERE ATTACH_TIMESTAMP < CURRENT TIMESTAMP - 1 DAY",
        catalog=catalog,
    )

    assert parse_db2(result.stdout) == [{"JOURNAL_RECEIVER_NAME": "AMQA000001"}]


def test_where_in_filters_rows():
    result = db2("SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE STATUS IN ('SAVED', 'FREED')")

    assert parse_db2(result.stdout) == [{"JOURNAL_RECEIVER_NAME": "AMQA000001"}]


def test_like_is_case_sensitive_as_in_db2():
    upper = db2("SELECT COUNT(*) AS N FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE JOURNAL_RECEIVER_NAME LIKE 'AMQA%'")
    lower = db2("SELECT COUNT(*) AS N FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE JOURNAL_RECEIVER_NAME LIKE 'amqa%'")

    assert parse_db2(upper.stdout) == [{"N": "2"}]
    assert parse_db2(lower.stdout) == [{"N": "0"}]


def test_order_by_sorts_nulls_high_as_db2_does():
    ascending = db2("SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO ORDER BY DETACH_TIMESTAMP")
    descending = db2("SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO ORDER BY DETACH_TIMESTAMP DESC")

    assert [r["JOURNAL_RECEIVER_NAME"] for r in parse_db2(ascending.stdout)] == ["AMQA000001", "AMQA000002"]
    assert [r["JOURNAL_RECEIVER_NAME"] for r in parse_db2(descending.stdout)] == ["AMQA000002", "AMQA000001"]


def test_fetch_first_n_rows_only_limits_the_result():
    result = db2(
        "SELECT JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO "
        "ORDER BY JOURNAL_RECEIVER_NAME DESC FETCH FIRST 1 ROWS ONLY"
    )

    assert parse_db2(result.stdout) == [{"JOURNAL_RECEIVER_NAME": "AMQA000002"}]


def test_union_all_of_two_views_answers_a_batched_query():
    result = db2(
        "SELECT 'RCV' AS KIND, JOURNAL_RECEIVER_NAME AS NAME FROM QSYS2.JOURNAL_RECEIVER_INFO "
        "UNION ALL SELECT 'JRN', ATTACHED_JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_INFO"
    )

    assert parse_db2(result.stdout) == [
        {"KIND": "RCV", "NAME": "AMQA000001"},
        {"KIND": "RCV", "NAME": "AMQA000002"},
        {"KIND": "JRN", "NAME": "AMQA000002"},
    ]


def test_empty_result_prints_header_and_zero_records():
    result = db2("SELECT JOURNAL_NAME FROM QSYS2.JOURNAL_INFO WHERE JOURNAL_LIBRARY = 'NOSUCH'")

    assert result.exit_status == 0
    assert result.stdout == "\nJOURNAL_NAME \n-------------\n\n  0 RECORD(S) SELECTED.\n\n"


def test_unnamed_expressions_are_numbered_and_integers_are_eleven_wide():
    result = db2("SELECT COUNT(*) FROM QSYS2.JOURNAL_RECEIVER_INFO")

    assert result.stdout.split("\n")[1:4] == ["00001      ", "-----------", "          2"]


def test_binary_columns_print_as_hex():
    result = db2("SELECT MESSAGE_KEY FROM QSYS2.MESSAGE_QUEUE_INFO WHERE MESSAGE_KEY = X'0000012A'")

    assert parse_db2(result.stdout) == [{"MESSAGE_KEY": "0000012A"}]


def test_sysdummy1_has_one_row():
    assert parse_db2(db2("SELECT IBMREQD FROM SYSIBM.SYSDUMMY1").stdout) == [{"IBMREQD": "Y"}]


def test_current_timezone_follows_qutcoffset():
    result = db2("SELECT CURRENT TIMEZONE AS TZ FROM SYSIBM.SYSDUMMY1")

    assert parse_db2(result.stdout) == [{"TZ": "10000"}]


def test_user_space_function_returns_the_named_space():
    result = db2(
        "SELECT USER_SPACE_LIBRARY, SUBSTR(DATA, 1, 10) AS RCV, DATA_BINARY FROM TABLE(QSYS2.USER_SPACE("
        "USER_SPACE => 'AMQJRNINF', USER_SPACE_LIBRARY => 'QMTEST')) AS S"
    )

    assert parse_db2(result.stdout) == [{"USER_SPACE_LIBRARY": "QMTEST", "RCV": "AMQA000001", "DATA_BINARY": "C1D4D8"}]


def test_user_space_library_defaults_to_libl_first_match():
    result = db2("SELECT USER_SPACE_LIBRARY FROM TABLE(QSYS2.USER_SPACE('AMQJRNINF')) X")

    assert parse_db2(result.stdout) == [{"USER_SPACE_LIBRARY": "QMOTHER"}]


def test_user_space_not_found_is_an_sql0443_error():
    result = db2(
        "SELECT DATA FROM TABLE(QSYS2.USER_SPACE(USER_SPACE => 'AMQJRNINF', USER_SPACE_LIBRARY => 'QMNONE')) X"
    )

    assert result.exit_status == 4
    assert result.stdout == (
        "\n **** CLI ERROR *****\n         SQLSTATE: 38501\nNATIVE ERROR CODE: -443\n"
        "Object AMQJRNINF in library QMNONE not found. \n"
    )


def test_object_statistics_filters_by_library_and_type():
    result = db2("SELECT OBJNAME FROM TABLE(QSYS2.OBJECT_STATISTICS('QMTEST', '*JRNRCV')) X")

    assert parse_db2(result.stdout) == [{"OBJNAME": "AMQA000001"}]


def test_unknown_table_is_sql0204_naming_the_schema():
    result = db2("SELECT * FROM QSYS2.JOURNAL_RECEIVERS")

    assert result.exit_status == 4
    assert result.stderr == ""
    assert result.stdout == (
        "\n **** CLI ERROR *****\n         SQLSTATE: 42704\nNATIVE ERROR CODE: -204\n"
        "JOURNAL_RECEIVERS in QSYS2 type *FILE not found. \n"
    )


def test_unqualified_view_name_is_not_found_under_sql_naming():
    result = db2("SELECT * FROM JOURNAL_INFO")

    assert result.exit_status == 4
    assert "JOURNAL_INFO in *LIBL type *FILE not found." in result.stdout


def test_unknown_column_is_sql0206():
    result = db2("SELECT RECEIVER_ATTACH_TIMESTAMP FROM QSYS2.JOURNAL_RECEIVER_INFO")

    assert result.exit_status == 4
    assert result.stdout == (
        "\n **** CLI ERROR *****\n         SQLSTATE: 42703\nNATIVE ERROR CODE: -206\n"
        "Column or global variable RECEIVER_ATTACH_TIMESTAMP not found. \n"
    )


def test_syntax_error_is_sql0104():
    result = db2("SELECT JOURNAL_NAME FROM QSYS2.JOURNAL_INFO WHERE")

    assert result.exit_status == 4
    assert "SQLSTATE: 42601\nNATIVE ERROR CODE: -104\nToken <END-OF-STATEMENT> was not valid." in result.stdout


def test_trailing_semicolon_without_terminator_option_is_sql0104():
    result = db2("SELECT IBMREQD FROM SYSIBM.SYSDUMMY1;")

    assert result.exit_status == 4
    assert "Token ; was not valid. Valid tokens: <END-OF-STATEMENT>." in result.stdout


def test_terminator_option_runs_each_statement_and_fails_if_any_failed():
    result = db2("-t", "SELECT IBMREQD FROM SYSIBM.SYSDUMMY1; SELECT NOPE FROM SYSIBM.SYSDUMMY1;")

    assert result.exit_status == 4
    assert result.stdout.count("RECORD(S) SELECTED.") == 1
    assert "Column or global variable NOPE not found." in result.stdout


def test_delete_from_a_catalog_view_is_refused_as_read_only():
    result = db2("DELETE FROM QSYS2.JOURNAL_RECEIVER_INFO WHERE STATUS = 'SAVED'")

    assert result.exit_status == 4
    assert result.stdout == (
        "\n **** CLI ERROR *****\n         SQLSTATE: 42807\nNATIVE ERROR CODE: -150\n"
        "View or logical file JOURNAL_RECEIVER_INFO in QSYS2 read-only. \n"
    )


def test_call_is_refused_as_routine_not_found():
    result = db2("CALL QSYS2.QCMDEXC('DLTJRNRCV JRNRCV(QMTEST/AMQA000001)')")

    assert result.exit_status == 4
    assert "SQLSTATE: 42884\nNATIVE ERROR CODE: -440\nRoutine QCMDEXC in QSYS2 not found" in result.stdout


def test_ddl_is_refused_as_not_authorized():
    result = db2("CREATE TABLE QSYS2.X (A INT)")

    assert result.exit_status == 4
    assert "SQLSTATE: 42501\nNATIVE ERROR CODE: -551\n" in result.stdout


def test_a_data_change_hidden_behind_with_is_refused():
    result = db2("WITH X AS (SELECT 1 AS A FROM SYSIBM.SYSDUMMY1) DELETE FROM QSYS2.JOURNAL_INFO")

    assert result.exit_status == 4
    assert "SQLSTATE: 42612" in result.stdout
    assert parse_db2(db2("SELECT JOURNAL_NAME FROM QSYS2.JOURNAL_INFO").stdout) == [{"JOURNAL_NAME": "AMQAJRN"}]


def test_parser_round_trips_values_containing_spaces():
    result = db2(
        "SELECT DESCRIPTIVE_TEXT, JOURNAL_RECEIVER_NAME FROM QSYS2.JOURNAL_RECEIVER_INFO "
        "WHERE DESCRIPTIVE_TEXT IS NOT NULL"
    )

    assert parse_db2(result.stdout) == [{"DESCRIPTIVE_TEXT": "MQ receiver one", "JOURNAL_RECEIVER_NAME": "AMQA000001"}]


def test_file_option_for_a_missing_file_fails_on_stderr():
    result = db2("-f", "/tmp/no-such.sql")

    assert result.exit_status != 0
    assert result.stdout == ""
    assert "/tmp/no-such.sql" in result.stderr


def test_view_columns_are_exported_for_reuse():
    assert VIEW_COLUMNS["QSYS2.JOURNAL_RECEIVER_INFO"][:2] == ("JOURNAL_RECEIVER_LIBRARY", "JOURNAL_RECEIVER_NAME")
    assert "DATA_BINARY" in VIEW_COLUMNS["QSYS2.USER_SPACE"]


def test_string_constants_and_comments_are_read_as_db2_reads_them():
    """'' is a quote inside a string, and -- and /* */ inside it are text; outside it they are comments."""
    result = db2(
        "SELECT 'it''s -- not /* a comment */' AS A, '''' AS Q /* 'a comment' */ FROM \"SYSIBM\".SYSDUMMY1 -- the 'end'"
    )
    assert result.exit_status == 0, result.stdout
    assert parse_db2(result.stdout) == [{"A": "it's -- not /* a comment */", "Q": "'"}]


@pytest.mark.parametrize(
    "statement, beginning",
    [
        # A quote doubled is never the string's end: the constant that starts here runs to the statement's end.
        ("SELECT 'a''b FROM SYSIBM.SYSDUMMY1", "'a''b FROM SYSIBM.SYSDUMMY1"),
        ("SELECT 'ab''', 'c FROM SYSIBM.SYSDUMMY1", "'c FROM SYSIBM.SYSDUMMY1"),
    ],
)
def test_a_string_constant_never_closed_is_sql0010_naming_where_it_begins(statement, beginning):
    result = db2(statement)
    assert result.exit_status != 0
    assert "NATIVE ERROR CODE: -10" in result.stdout + result.stderr
    assert f"String constant beginning {beginning} not delimited." in result.stdout + result.stderr
