"""The simulator answers in the shape real IBM i answers in, as the corpus (manifest.json) shows it.

Each test runs the simulated partition in-process (`SimulatedHost.run`, what sshd runs for an exec request) and
checks one rule of the real output: the db2 table layout (empty line, header, dashes, rows, empty line, trailer),
column widths, number alignment, the CLI error block, and `system`'s `MSGID: text` lines, streams and exit status.
The source of each rule is in its docstring; "inferred" marks a rule no capture shows directly.
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC, datetime, timedelta

import pytest

from mqjournal.fleet import HostConfig, PartitionSystemConfig, QueueManagerConfig
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, parse_results
from mqjournal.ibmi.discovery import parse_mqs_ini
from mqjournal.sim.host import SimulatedHost
from mqjournal.sim.releases import PTF_GROUPS
from tests.conformance.corpus import capture_manifests, captures

START = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
MESSAGE_LINE = re.compile(r"^[A-Z]{3}[0-9A-F]{4}: \S")


def partition(language: str = "ENU", **qm: object) -> SimulatedHost:
    config = HostConfig(
        name="ibmi1",
        port=0,
        utc_offset="+01:00",
        inquiry_reply="*DFT",
        system=PartitionSystemConfig(language=language),
        queue_managers=[QueueManagerConfig(name="TEST", **qm)],
    )
    host = SimulatedHost.create(config, START, None)
    host.advance(timedelta(hours=2))
    return host


@pytest.fixture(scope="module")
def host() -> SimulatedHost:
    return partition(threshold_kb=500)


def select(host: SimulatedHost, statement: str):
    return host.run(str(commands.sql(statement, runner="qsh")), "MQADMIN")


def system(host: SimulatedHost, cl: str):
    return host.run(str(commands.cl(cl, idempotent=False)), "MQADMIN")


def table(stdout: str) -> tuple[list[str], int]:
    """The lines of the one table in `stdout` and the index of its dashes line."""
    lines = stdout.split("\n")
    (dashes,) = [i for i, line in enumerate(lines) if line.startswith("-") and set(line) <= {"-", " "}]
    return lines, dashes


def columns(lines: list[str], dashes: int) -> list[tuple[str, int, int]]:
    return [(lines[dashes - 1][a:b].strip(), a, b) for a, b in (m.span() for m in re.finditer(r"-+", lines[dashes]))]


RECEIVERS = (
    "SELECT JOURNAL_RECEIVER_NAME, STATUS, THRESHOLD, NUMBER_OF_JOURNAL_ENTRIES FROM QSYS2.JOURNAL_RECEIVER_INFO"
    " WHERE JOURNAL_LIBRARY = 'QMTEST' ORDER BY ATTACH_TIMESTAMP"
)


# --- db2 result tables ---------------------------------------------------------------------------------------


def test_a_table_is_empty_line_header_dashes_rows_empty_line_trailer(host):
    """vscode-ibmi tools.ts fixtures and issue #3243: "\\nHEADER\\n-----\\nrows\\n\\n  1 RECORD(S) SELECTED."."""
    out = select(host, RECEIVERS)
    assert (out.exit_status, out.stderr) == (0, "")
    lines, dashes = table(out.stdout)
    assert lines[dashes - 2] == ""
    end = lines.index("", dashes)
    rows = lines[dashes + 1 : end]
    assert rows and all(r.strip() for r in rows)
    assert lines[end + 1] == f"{len(rows):>3} RECORD(S) SELECTED."


def test_the_header_names_start_at_their_dashes_run_and_runs_are_one_blank_apart(host):
    """Every capture: names left-aligned and padded to the run width, runs separated by one blank."""
    lines, dashes = table(select(host, RECEIVERS).stdout)
    assert re.fullmatch(r"-+( -+)*", lines[dashes])
    runs = [m.group() for m in re.finditer(r"-+", lines[dashes])]
    names = lines[dashes - 1].split()
    assert lines[dashes - 1] == " ".join(n.ljust(len(r)) for n, r in zip(names, runs, strict=True))


def test_a_column_is_at_least_one_wider_than_its_name(host):
    """A name longer than the data gets name length + 1: STATE (CHAR(2)) 6 dashes, ATTRIBUTE 10, NB_MBR 7,
    SOURCE_LENGTH 14 (vscode-ibmi tools.ts), IASP_NUMBER (SMALLINT) 12 (vscode-ibmi issue #3243)."""
    lines, dashes = table(select(host, RECEIVERS).stdout)
    for name, start, end in columns(lines, dashes):
        assert end - start >= len(name) + 1, name


def test_an_integer_is_right_aligned_to_the_column_width(host):
    """IS_SOURCE INTEGER (11), SOURCE_LENGTH INTEGER in a 14-wide column, IASP_NUMBER in 12 (tools.ts, #3243)."""
    lines, dashes = table(select(host, RECEIVERS).stdout)
    (_, start, end) = next(c for c in columns(lines, dashes) if c[0] == "THRESHOLD")
    for row in lines[dashes + 1 : lines.index("", dashes)]:
        cell = row[start:end]
        assert cell == cell.strip().rjust(end - start)


def test_a_decimal_without_scale_prints_in_p_plus_2_with_a_trailing_blank_left_in_the_column(host):
    """NUMERIC(p,0) prints blank-digits-blank in p+2 characters (sign, digits, decimal point), placed at the left of
    a wider column: CUSNUM ' 938472 ' (8), CDTLMT ' 5000  ' in 7, CHGCOD ' 3     ' in 7, NB_MBR '     3 ' (7),
    SOURCE_LENGTH '   112        ' in 14 (vscode-ibmi tools.ts). NUMBER_OF_JOURNAL_ENTRIES is DECIMAL(20) in the
    simulator's catalog (db2views.py)."""
    lines, dashes = table(select(host, RECEIVERS).stdout)
    (_, start, end) = next(c for c in columns(lines, dashes) if c[0] == "NUMBER_OF_JOURNAL_ENTRIES")
    for row in lines[dashes + 1 : lines.index("", dashes)]:
        cell = row[start:end]
        assert cell == (cell.strip().rjust(21) + " ").ljust(end - start)


def test_a_hundred_rows_or_more_have_a_trailer_with_no_leading_blank():
    """Inferred: the count is right-aligned in 3 columns ('  1', ' 10' captured in tools.ts), so 100-999 rows have
    no leading blank, and more digits widen it. The client must read such a table whole."""
    host = partition(threshold_kb=50, entries_per_minute=100)
    out = select(host, RECEIVERS)
    lines, dashes = table(out.stdout)
    end = lines.index("", dashes)
    count = end - dashes - 1
    assert count >= 100, "the partition needs 100 receivers for this test"
    assert lines[end + 1] == f"{count} RECORD(S) SELECTED."
    (rows,) = parse_results(out.stdout)
    assert len(rows) == count


# --- db2 errors ----------------------------------------------------------------------------------------------


def test_an_sql_error_is_the_cli_error_block_on_stdout_with_exit_status_4(host):
    """vscode-ibmi issues #2607, #2658, #2573: '\\n **** CLI ERROR *****\\n         SQLSTATE: 42884\\nNATIVE ERROR CODE:
    -440\\n<text>', stderr empty, exit status 4."""
    out = select(host, "SELECT * FROM QSYS2.NO_SUCH_VIEW")
    assert (out.exit_status, out.stderr) == (4, "")
    assert re.search(
        r"(?:^|\n)\n \*\*\*\* CLI ERROR \*\*\*\*\*\n {9}SQLSTATE: 42704\nNATIVE ERROR CODE: -204\n\S", out.stdout
    )


def test_sql_runs_through_qsh_on_a_stock_partition(host):
    """db2 is a Qshell utility; /QOpenSys/usr/bin/qsh -c "db2 ..." runs it (kadler, "Calling QSH utilities from
    PASE"; vscode-ibmi issue #3008)."""
    out = host.run("/QOpenSys/usr/bin/qsh -c \"db2 'SELECT 1 FROM SYSIBM.SYSDUMMY1'\"", "MQADMIN")
    assert out.exit_status == 0 and out.stdout.rstrip().endswith("  1 RECORD(S) SELECTED.")


# --- system ---------------------------------------------------------------------------------------------------


def test_a_command_that_ends_normally_prints_its_messages_on_stdout_and_exits_0(host):
    """vscode-ibmi issue #1677: stdout 'CPC2958: All records copied ...', stderr empty, code 0."""
    out = system(host, "RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME('TEST') DSPJRNDTA(*YES)")
    assert (out.exit_status, out.stderr) == (0, "")
    assert all(MESSAGE_LINE.match(line) for line in out.stdout.splitlines() if line)


@pytest.mark.parametrize("language", ["ENU", "DEU"])
def test_a_command_that_ends_in_an_escape_prints_on_stderr_and_exits_255(language):
    """vscode-ibmi issues #490, #1735, #1559, #701: stdout empty, stderr 'CPF2111: Library ILEDITOR already exists.',
    code 255; in another language only the text changes ('CPF2111: La libreria ILEDITOR esiste già.', #701)."""
    host = partition(language=language, threshold_kb=500)
    system(host, "CRTSAVF FILE(QMTEST/SAVFTWICE)")
    out = system(host, "CRTSAVF FILE(QMTEST/SAVFTWICE)")  # CPF5813: already exists
    assert (out.exit_status, out.stdout) == (255, "")
    lines = out.stderr.splitlines()
    assert lines and all(MESSAGE_LINE.match(line) for line in lines)
    assert lines[-1].startswith("CPF")


@pytest.mark.parametrize(
    "cl",
    [
        "DLTJRNRCV JRNRCV(QMTEST/AMQA000000) NOSUCHKWD(1)",  # unknown keyword
        "DLTJRNRCV JRNRCV(QMTEST/AMQA000000",  # unbalanced parenthesis
        "DLTJRNRCV",  # required parameter missing
        "NOSUCHCMD X",  # unknown command
    ],
)
def test_a_cl_syntax_error_is_a_cpd_diagnostic_then_cpf0006(host, cl):
    """A public capture on PUB400 (IBM i 7.5, PASE `system -b`): stderr 'CPD0074: Value ... exceeds 10 characters.\\n
    CPF0006: Errors occurred in command.', stdout empty, exit 255 (manifest.json)."""
    out = system(host, cl)
    assert (out.exit_status, out.stdout) == (255, "")
    lines = out.stderr.splitlines()
    assert lines[-1] == "CPF0006: Errors occurred in command."
    assert len(lines) >= 2 and lines[-2].startswith("CPD")


def test_positional_parameters_are_valid_cl(host):
    """IBM's MQJRNMNT sample sends 'DLTJRNRCV %s/%10.10s DLTOPT(*IGNINQMSG)' (ibm-messaging/mq-ibm-i-journal-sample
    src/jrnmaint.c): JRNRCV is positional 1."""
    out = system(host, "DLTJRNRCV QMTEST/AMQA000000 DLTOPT(*IGNINQMSG)")
    assert "CPF0006" not in out.stderr and "CPD" not in out.stderr


# --- captures brought home with `mqjournal doctor --capture` (corpus.py: captures/) --------------------------------


def _replay_partition(header: dict, digest_programs: list[str]) -> SimulatedHost:
    """A simulated partition set up as the capture's header says: release, Db2 group level, job language and date
    format, the queue managers, the save library, the digest programs that answered."""
    release = header["release"] if header["release"] in ("7.3", "7.4", "7.5", "7.6") else "7.5"
    job = header["job"]
    system = PartitionSystemConfig(
        release=release,
        db2_group_level=header["ptf_groups"].get(PTF_GROUPS[release]),
        language=job["language"] if job["language"] in ("ENU", "DEU") else "ENU",
        date_format=job["date_format"] if job["date_format"] in ("*YMD", "*MDY", "*DMY", "*JUL") else "*YMD",
        date_separator=job["date_separator"] if job["date_separator"] in ("/", "-", ".", ",", " ") else "/",
        digest_programs=digest_programs,
        db2_link=header["sql_runner"] == "db2",  # a partition whose db2 runner answered has the link
        libraries=[header["save_library"]],
    )
    qms = [
        QueueManagerConfig(name=q["name"], library=q["library"], instance=q["instance"])
        for q in header["queue_managers"]
    ]
    config = HostConfig(name="replay", port=0, sql_runner=header["sql_runner"], system=system, queue_managers=qms)
    host = SimulatedHost.create(config, START, None)
    host.register_user(header["user"])
    host.advance(timedelta(hours=2))
    return host


def _shape(kind: str, exit_status: int, stdout: str, stderr: str) -> tuple:
    """What must be the same in the simulator's answer: for a table its columns, for an SQL error its SQLSTATE, for
    CL the stream its `MSGID: text` lines go to by the exit status, for a PASE command its exit status."""
    if kind in ("db2-table", "db2-error"):
        (result,) = parse_results(stdout)
        if isinstance(result, Db2Failure):
            return ("db2-error", exit_status, result.sqlstate, stderr)
        lines, dashes = table(stdout)
        return ("db2-table", exit_status, [name for name, _, _ in columns(lines, dashes)], stderr)
    if kind == "cl":
        shown = stdout if exit_status == 0 else stderr
        silent = stderr if exit_status == 0 else stdout
        return ("cl", exit_status in (0, 255), all(MESSAGE_LINE.match(x) for x in shown.splitlines() if x), silent)
    return (kind, exit_status)


def test_the_simulator_answers_each_captured_statement_in_the_captured_shape():
    """Each capture folder's commands, sent as captured to a partition set up like the captured one."""
    for manifest in capture_manifests():
        entries = [c for c in captures() if c.manifest == manifest]
        header = entries[0].header()
        digests = [
            shlex.split(c.entry["command"])[0]
            for c in entries
            if c.kind == "pase" and c.entry["reads"] == "digest" and c.entry["exit_status"] == 0
        ]
        host = _replay_partition(header, digests)
        for capture in entries:
            command = capture.entry["command"]
            named = re.search(r"SAVE_FILE => '(\w+)', SAVE_FILE_LIBRARY => '(\w+)'", command)
            if named:  # the captured save file, empty here: its object list is still a table of the same columns
                system(host, f"CRTSAVF FILE({named.group(2)}/{named.group(1)})")
            out = host.run(command, header["user"])
            expected = _shape(capture.kind, capture.entry["exit_status"], capture.stdout, capture.stderr)
            assert _shape(capture.kind, out.exit_status, out.stdout, out.stderr) == expected, capture
            if capture.entry.get("reads") == "mqs-ini" and out.exit_status == 0:
                assert parse_mqs_ini(out.stdout) == capture.entry["queue_managers"], capture
