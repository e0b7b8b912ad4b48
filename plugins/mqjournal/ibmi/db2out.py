"""Read what the IBM i `db2` utility prints: a fixed-width table, or a CLI error block (both on stdout).

Columns are sliced at the runs of the dashes line, never split on blanks, so values with spaces survive. A lone
``-`` is NULL; the trailer's record count is checked so that a truncated stream is an error, not fewer rows.

The layout, as real partitions print it (codefori/vscode-ibmi `src/testing/tools.ts` at commit 46ddb55b, the
db2Parse fixtures captured from IBM i; QIWS/QCUSTCDT among them):

    <empty line>
    CUSNUM   LSTNAM   ... STATE  ZIPCOD  ...     header: each name padded to its column width
    -------- -------- ... ------ ------- ...     dashes: one run per column, single-space separated
     938472  Henning  ... TX      75217  ...     rows (a cell may be all blanks: an empty string)
    <empty line>
      1 RECORD(S) SELECTED.                      the count right-aligned in 3 columns (" 10 ...", "100 ...")

A count of 1000 or more has no leading blank ("1000 RECORD(S) SELECTED."), so the trailer is found by its text,
not by its indentation: the demo's PAYROLL has 120 QMQMMSG rows, which a leading-blank rule took as cut off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from mqjournal.errors import MqJournalError

_TRAILER = re.compile(r"^ *(\d+) RECORD\(S\) SELECTED\.\s*$")
_ERROR = re.compile(
    r"\*\*\*\* CLI ERROR \*\*\*\*\*\s*\n"
    r"\s*SQLSTATE: (?P<state>\w+)\s*\n"
    r"\s*NATIVE ERROR CODE: (?P<code>-?\d+)\s*\n"
    r"(?P<text>[^\n]*)"
)


@dataclass(frozen=True)
class Db2Failure:
    sqlstate: str
    sqlcode: int
    text: str

    @property
    def msg_id(self) -> str:
        return f"SQL{abs(self.sqlcode):04d}"


class Db2OutputError(ValueError):
    """The output is neither a result table nor a CLI error: a cut-off stream or not the db2 utility."""


Row = dict[str, str | None]


def parse_results(stdout: str) -> list[list[Row] | Db2Failure]:
    """Every result in the output, in order (a `db2 -t` run of several statements prints one per statement)."""
    lines = stdout.split("\n")
    results: list[list[Row] | Db2Failure] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "**** CLI ERROR *****" in line:
            match = _ERROR.search("\n".join(lines[i : i + 4]))
            if not match:
                raise Db2OutputError("a CLI error block is cut off")
            results.append(Db2Failure(match["state"], int(match["code"]), match["text"].strip()))
            i += 4
            continue
        if line.startswith("-") and set(line) <= {"-", " "} and i > 0:
            rows, i = _table(lines, i)
            results.append(rows)
            continue
        i += 1
    return results


def tables(results: list[list[Row] | Db2Failure]) -> list[list[Row]] | None:
    """The rows of every statement, or None when any of them failed."""
    rows = [r for r in results if not isinstance(r, Db2Failure)]
    return rows if len(rows) == len(results) else None


def value(row: Row, column: str) -> str:
    """A column the partition always fills (a name, a number): a null there means the output was misread."""
    found = row.get(column)
    if found is None:
        raise Db2OutputError(f"{column} is null (-) where IBM i always gives a value")
    return found


def parse_single(stdout: str) -> list[Row] | Db2Failure:
    results = parse_results(stdout)
    if len(results) != 1:
        raise Db2OutputError(f"expected one result, found {len(results)}")
    return results[0]


def _table(lines: list[str], dashes: int) -> tuple[list[Row], int]:
    spans = [m.span() for m in re.finditer(r"-+", lines[dashes])]
    header = lines[dashes - 1]
    names = [header[start:end].strip() for start, end in spans]
    # The rows end at the empty line before the trailer. Every row line is padded to its columns' widths, so only
    # that separator is truly empty; a row of empty strings is blanks, and still a row.
    end = next((i for i in range(dashes + 2, len(lines)) if _TRAILER.match(lines[i]) and lines[i - 1] == ""), None)
    if end is None:
        raise Db2OutputError("the result table has no RECORD(S) SELECTED trailer: the output was cut off")
    rows: list[Row] = []
    for line in lines[dashes + 1 : end - 1]:
        cells = _cells(line, spans)
        rows.append({name: (None if cell == "-" else cell) for name, cell in zip(names, cells, strict=True)})
    trailer = _TRAILER.match(lines[end])
    assert trailer is not None  # `end` was found by this expression
    counted = int(trailer.group(1))
    if counted != len(rows):
        raise Db2OutputError(f"the trailer counts {counted} rows, the output has {len(rows)}")
    return rows, end + 1


def _width(char: str) -> int:
    # db2 pads by display columns, and a double-byte (DBCS) character fills two: with the job's text in UTF-8, any
    # character of three or more bytes is one, except U+FFFD (a character that did not convert). The rule of
    # vscode-ibmi's db2Parse (src/api/Tools.ts at 6adea4a5), which reads Japanese result tables this way.
    return 2 if char != "\ufffd" and len(char.encode("utf-8")) >= 3 else 1


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """The cells of one row line, sliced at the dashes' display columns (not character positions)."""
    if line.isascii():
        return [line[start:stop].strip() for start, stop in spans]
    starts, column = [], 0
    for char in line:
        starts.append(column)
        column += _width(char)
    return [
        "".join(c for c, at in zip(line, starts, strict=True) if start <= at < stop).strip() for start, stop in spans
    ]


# --- the runner itself missing ----------------------------------------------------------------------------------


class _Answer(Protocol):
    @property
    def exit_status(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


class _Session(Protocol):
    @property
    def host(self) -> str: ...
    @property
    def sql_runner(self) -> str: ...


class SqlRunnerMissing(MqJournalError):
    """The host has no way to run the db2 utility the way the fleet file says (its `sql_runner`)."""


_NOT_FOUND = ("not found", "no such path", "cannot execute")


def runner_missing(out: _Answer) -> bool:
    """The shell could not start the runner: no db2 output at all, and the shell's "not found" (exit status 127, or
    126 found but not runnable, or the words). A missing command is 127 in POSIX shells and in Qshell ("qsh: 001-0019
    Error found searching for command system. No such path or directory.", exit 127, vscode-ibmi issue #3008);
    older Bourne shells exit 1, so the words count too."""
    if "RECORD(S) SELECTED" in out.stdout or "CLI ERROR" in out.stdout:
        return False
    return out.exit_status in (126, 127) or any(words in out.stderr.lower() for words in _NOT_FOUND)


def check_sql_runner(session: _Session, out: _Answer) -> None:
    """Raise SqlRunnerMissing, naming the host, the runner and the fix, when the runner itself did not start."""
    if not runner_missing(out):
        return
    said = out.stderr.strip()[-300:] or f"exit status {out.exit_status}, no output"
    if session.sql_runner == "db2":
        raise SqlRunnerMissing(
            session.host,
            f"the SQL runner `db2` (a bare db2 in the PASE shell) is not on this partition ({said})",
            "set `sql_runner: qsh` for this host in the fleet file (db2 is a Qshell utility; mqjournal then runs "
            "/QOpenSys/usr/bin/qsh -c 'db2 ...'), or have an admin create the link: "
            "ln -s /QOpenSys/usr/bin/qsh /QOpenSys/usr/bin/db2",
        )
    raise SqlRunnerMissing(
        session.host,
        f"the SQL runner `qsh` (/QOpenSys/usr/bin/qsh -c 'db2 ...') could not run db2 on this partition ({said})",
        "check that /QOpenSys/usr/bin/qsh exists and the Qshell option of the operating system (5770-SS1 option 30) "
        "is installed; where an admin linked /QOpenSys/usr/bin/db2 to qsh, `sql_runner: db2` for this host works too",
    )
