"""How full the ASP holding a queue manager's receivers is (QSYS2.ASP_INFO): a full ASP is why admins delete
receivers, and IBM i stops when the system ASP fills.

ASP_INFO gives TOTAL_CAPACITY and TOTAL_CAPACITY_AVAILABLE in megabytes (IBM's Db2 for i team: "Capacity numbers are
in MB units", gist forstie/2110dd70); they are returned here in bytes. On IBM i 7.6 the view needs *IOSYSCFG or the
QIBM_IOSYSCFG_VIEW function usage (7.4: no authority): without it no row comes back, and the usage is unknown (None).

For the collector (the integrator adds it to a collection's batched SELECTs):

    statement = commands.journal_asp_usage(target.library, target.journal)   # one more SELECT in the batch
    usage = asp.from_result(result)            # AspUsage(asp_number, capacity_bytes, available_bytes) or None
    snapshot fields: asp_number, asp_capacity_bytes, asp_available_bytes = usage or (None, None, None)
"""

from __future__ import annotations

from typing import NamedTuple

from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, Row, parse_single, value
from mqjournal.ibmi.transport import IbmiSession

MEGABYTE = 1024 * 1024


class AspUsage(NamedTuple):
    asp_number: int
    capacity_bytes: int | None
    available_bytes: int | None

    @property
    def used_fraction(self) -> float | None:
        if not self.capacity_bytes or self.available_bytes is None:
            return None
        return 1 - self.available_bytes / self.capacity_bytes


def _bytes(value: str | None) -> int | None:
    return None if value is None else int(value.strip()) * MEGABYTE


def from_result(result: list[Row] | Db2Failure) -> AspUsage | None:
    """The first row of an ASP_INFO query built by `commands.journal_asp_usage`; None when the
    partition gave none (no authority on 7.6, or the query failed)."""
    if isinstance(result, Db2Failure) or not result:
        return None
    row = result[0]
    return AspUsage(
        int(value(row, "ASP_NUMBER")), _bytes(row["TOTAL_CAPACITY"]), _bytes(row["TOTAL_CAPACITY_AVAILABLE"])
    )


def read_journal_asp(session: IbmiSession, library: str, journal: str) -> AspUsage | None:
    """One round trip: the usage of the ASP that holds LIBRARY/JOURNAL."""
    command = commands.sql(commands.journal_asp_usage(library, journal), runner=session.sql_runner)
    return from_result(parse_single(session.run(command).stdout))
