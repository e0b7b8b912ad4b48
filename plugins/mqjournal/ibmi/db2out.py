"""Read what the IBM i `db2` utility prints: a fixed-width table, or a CLI error block (both on stdout).

Columns are sliced at the runs of the dashes line, never split on blanks, so values with spaces survive. A lone
``-`` is NULL; the trailer's record count is checked so that a truncated stream is an error, not fewer rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TRAILER = re.compile(r"^\s+(\d+) RECORD\(S\) SELECTED\.\s*$")
_ERROR = re.compile(
    r"\*\*\*\* CLI ERROR \*\*\*\*\*\s*\n\s*SQLSTATE: (?P<state>\w+)\s*\n\s*NATIVE ERROR CODE: (?P<code>-?\d+)\s*\n(?P<text>[^\n]*)"
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


def parse_single(stdout: str) -> list[Row] | Db2Failure:
    results = parse_results(stdout)
    if len(results) != 1:
        raise Db2OutputError(f"expected one result, found {len(results)}")
    return results[0]


def _table(lines: list[str], dashes: int) -> tuple[list[Row], int]:
    spans = [m.span() for m in re.finditer(r"-+", lines[dashes])]
    header = lines[dashes - 1]
    names = [header[start:end].strip() for start, end in spans]
    rows: list[Row] = []
    i = dashes + 1
    while i < len(lines):
        line = lines[i]
        trailer = _TRAILER.match(line)
        if trailer:
            if int(trailer.group(1)) != len(rows):
                raise Db2OutputError(f"the trailer counts {trailer.group(1)} rows, the output has {len(rows)}")
            return rows, i + 1
        if line.strip():
            cells = [line[start:end].strip() for start, end in spans]
            rows.append({name: (None if cell == "-" else cell) for name, cell in zip(names, cells)})
        i += 1
    raise Db2OutputError("the result table has no RECORD(S) SELECTED trailer: the output was cut off")
