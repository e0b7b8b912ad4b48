"""The values that cross the simulator's internal boundaries: shell, SQL engine and SSH server."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class ExecResult:
    """What one command line run over SSH gives back, as a PASE shell would."""

    exit_status: int
    stdout: str = ""
    stderr: str = ""


@dataclass(frozen=True)
class DropRule:
    """Drop the SSH connection when a command matching `pattern` (a regex searched in the command line)
    arrives, `times` times (then the rule is spent). `after_run` drops after the command ran but before its
    output is sent, which is what a real network failure mid-command looks like to the client."""

    pattern: str = ".*"
    times: int = 1
    after_run: bool = False


@dataclass
class TransportFaults:
    """Faults the SSH layer injects for one host; mutable so tests can change them while serving."""

    delay_seconds: float = 0.0
    drops: list[DropRule] = field(default_factory=list)
    refuse_connections: bool = False


class RoutineError(Exception):
    """A table function that acts on the partition (`SqlCatalog.invoke`) failed: the SQL error the CLI reports."""

    def __init__(self, sqlcode: int, sqlstate: str, text: str) -> None:
        super().__init__(f"SQL{abs(sqlcode):04d} {sqlstate}: {text}")
        self.sqlcode, self.sqlstate, self.text = sqlcode, sqlstate, text


class SqlCatalog(Protocol):
    """The rows the simulated partition exposes through its SQL services.

    `rows(view)` takes an upper-case qualified name such as "QSYS2.JOURNAL_RECEIVER_INFO" and yields one mapping
    per row, keyed by the real column names; a column missing from a mapping is NULL. Values are str, int,
    datetime (naive, the partition's local time), bytes or None.
    """

    def rows(self, view: str) -> Iterable[Mapping[str, object]]: ...

    # Optional: `invoke(function, args)` runs a table function that changes the partition (such as
    # QSYS2.ASSOCIATE_JOURNAL_RECEIVER) with its arguments by parameter name, returning its result rows or raising
    # RoutineError. A catalog without it answers such a function as not found.
