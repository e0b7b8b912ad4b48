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


class SqlCatalog(Protocol):
    """The rows the simulated partition exposes through its SQL services.

    `rows(view)` takes an upper-case qualified name such as "QSYS2.JOURNAL_RECEIVER_INFO" and yields one mapping
    per row, keyed by the real column names; a column missing from a mapping is NULL. Values are str, int,
    datetime (naive, the partition's local time), bytes or None.
    """

    def rows(self, view: str) -> Iterable[Mapping[str, object]]: ...
