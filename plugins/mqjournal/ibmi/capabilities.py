"""Which QSYS2 services and columns a partition has, read once per session, and what each mqjournal step needs.

IBM i releases and Db2 PTF group levels differ in which SQL services exist and which columns they have (a
troubleshooting guide for IBM i tooling advises looking column names up in QSYS2.SYSCOLUMNS first). So the client
asks the partition, in one round trip: QSYS2.SYSCOLUMNS for the views, QSYS2.SYSROUTINES for the table functions,
SYSIBMADM.ENV_SYS_INFO for the release. A step whose service is missing stops with `ServiceMissing`, naming the
service and the release / PTF group that brings it; a column that came later is left out of the SELECT
(`has_column`).

When each service came (the sources are in docs/ibmi-interfaces.md and sim/releases.py; "assumed" where no IBM page
was found): SAVE_FILE_OBJECTS IBM i 7.5 SF99950 Level 4 / 7.4 SF99704 Level 25 (verified); ASP_INFO on 7.3 and later
(verified); JOURNAL_INFO, MESSAGE_QUEUE_INFO, USER_SPACE on 7.3 and later (verified); JOURNAL_RECEIVER_INFO 7.5 /
7.4 SF99704 Level 18 (assumed); ASSOCIATE_JOURNAL_RECEIVER 7.5 SF99950 Level 5 / 7.4 SF99704 Level 26 (assumed);
MESSAGE_QUEUE_INFO.MESSAGE_TOKENS 7.5 SF99950 Level 3 / 7.4 SF99704 Level 23 (assumed).

Use (the collector, once per host session):

    caps = capabilities.read(session)           # cached on the session: one round trip per session
    caps.require("collect")                      # ServiceMissing names what is missing and what brings it
    tokens = caps.has_column("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS")  # False: the SELECT leaves it out
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, Db2OutputError, parse_results, value
from mqjournal.ibmi.transport import IbmiSession


class ServiceMissing(MqJournalError):
    """An IBM i SQL service (or column) a step needs is not on the partition."""


@dataclass(frozen=True)
class Service:
    name: str  # QSYS2.NAME
    kind: str  # "view" or "table function"
    brought_by: str  # what an admin installs to get it
    why: str  # what mqjournal cannot do without it


_ALL_RELEASES = "IBM i 7.3 and later"
SERVICES: dict[str, Service] = {
    s.name: s
    for s in (
        Service("QSYS2.JOURNAL_INFO", "view", _ALL_RELEASES, "the queue managers' journals cannot be found"),
        Service(
            "QSYS2.JOURNAL_RECEIVER_INFO",
            "view",
            "IBM i 7.5, or 7.4 with Db2 PTF group SF99704 Level 18",
            "the receiver chain cannot be read",
        ),
        Service(
            "QSYS2.MESSAGE_QUEUE_INFO",
            "view",
            _ALL_RELEASES,
            "the AMQ7460/AMQ7462 recovery points and CPI70E3 cannot be read",
        ),
        Service("QSYS2.USER_SPACE", "table function", _ALL_RELEASES, "AMQJRNINF cannot be read"),
        Service("QSYS2.SYSTEM_VALUE_INFO", "view", _ALL_RELEASES, "the partition's UTC offset cannot be read"),
        Service("QSYS2.OBJECT_STATISTICS", "table function", _ALL_RELEASES, "save files cannot be listed"),
        Service(
            "QSYS2.SAVE_FILE_OBJECTS",
            "table function",
            "IBM i 7.5 Db2 PTF group SF99950 Level 4, or 7.4 SF99704 Level 25 (not available on 7.3)",
            "nothing can prove that a save file holds a receiver, so no receiver may be deleted",
        ),
        Service(
            "QSYS2.ASSOCIATE_JOURNAL_RECEIVER",
            "table function",
            "IBM i 7.5 Db2 PTF group SF99950 Level 5, or 7.4 SF99704 Level 26 (not available on 7.3)",
            "restored receivers cannot be associated with their journal (use WRKJRN option 9 by hand)",
        ),
        Service("QSYS2.ASP_INFO", "view", _ALL_RELEASES, "the ASP's capacity and free space cannot be read"),
        Service(
            "QSYS2.MESSAGE_FILE_DATA",
            "view",
            "IBM i 7.4, or 7.3 with a Db2 PTF group level that brought it (ibm11128423)",
            "the messages' declared formats cannot be read: their data is read by mqjournal's own layout, checked",
        ),
    )
}

# Columns that came after their view: (view, column) -> what brings it.
LATE_COLUMNS: dict[tuple[str, str], str] = {
    ("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS"): "IBM i 7.5 Db2 PTF group SF99950 Level 3, or 7.4 SF99704 Level 23",
}

# What each step reads.
NEEDS: dict[str, tuple[str, ...]] = {
    "collect": (
        "QSYS2.JOURNAL_INFO",
        "QSYS2.JOURNAL_RECEIVER_INFO",
        "QSYS2.MESSAGE_QUEUE_INFO",
        "QSYS2.USER_SPACE",
        "QSYS2.SYSTEM_VALUE_INFO",
    ),
    "save": ("QSYS2.SAVE_FILE_OBJECTS", "QSYS2.OBJECT_STATISTICS"),
    "delete": ("QSYS2.SAVE_FILE_OBJECTS", "QSYS2.OBJECT_STATISTICS", "QSYS2.JOURNAL_RECEIVER_INFO"),
    "restore": ("QSYS2.ASSOCIATE_JOURNAL_RECEIVER", "QSYS2.SAVE_FILE_OBJECTS", "QSYS2.OBJECT_STATISTICS"),
    "asp": ("QSYS2.ASP_INFO",),
}

_VIEWS = tuple(n for n, s in SERVICES.items() if s.kind == "view")
_FUNCTIONS = tuple(n for n, s in SERVICES.items() if s.kind == "table function")


@dataclass(frozen=True)
class Missing:
    service: str
    column: str | None
    brought_by: str
    why: str

    def __str__(self) -> str:
        what = f"column {self.column} of {self.service}" if self.column else self.service
        return f"{what} is missing ({self.brought_by} brings it): {self.why}"


@dataclass(frozen=True)
class Capabilities:
    host: str
    release: str | None  # "7.5"; None when the partition did not say
    columns: dict[str, frozenset[str]]  # view -> its columns (views that exist only)
    functions: frozenset[str]  # table functions that exist

    def has(self, service: str) -> bool:
        return service in self.columns or service in self.functions

    def has_column(self, service: str, column: str) -> bool:
        return column in self.columns.get(service, frozenset())

    def missing(self, step: str) -> list[Missing]:
        out = []
        for name in NEEDS[step]:
            if not self.has(name):
                s = SERVICES[name]
                out.append(Missing(name, None, s.brought_by, s.why))
        return out

    def missing_columns(self) -> list[Missing]:
        return [
            Missing(view, column, brought_by, "it is read where present, and left out where not")
            for (view, column), brought_by in LATE_COLUMNS.items()
            if view in self.columns and column not in self.columns[view]
        ]

    def require(self, step: str) -> None:
        """Raise ServiceMissing when `step` ("collect", "save", "delete", "restore", "asp") cannot run here."""
        missing = self.missing(step)
        if missing:
            release = f"IBM i {self.release}" if self.release else "this partition"
            raise ServiceMissing(
                self.host,
                f"{release} lacks what the {step} step needs: " + "; ".join(str(m) for m in missing),
                "install the named release or Db2 PTF group (WRKPTFGRP shows the installed levels), then run again",
            )


def statements() -> list[str]:
    """The three SELECTs of `read` (one SSH round trip)."""
    views = ", ".join(f"'{n.split('.')[1]}'" for n in _VIEWS)
    functions = ", ".join(f"'{n.split('.')[1]}'" for n in _FUNCTIONS)
    return [
        "SELECT OS_VERSION, OS_RELEASE FROM SYSIBMADM.ENV_SYS_INFO",
        "SELECT TABLE_NAME, COLUMN_NAME FROM QSYS2.SYSCOLUMNS"
        f" WHERE TABLE_SCHEMA = 'QSYS2' AND TABLE_NAME IN ({views}) ORDER BY TABLE_NAME, ORDINAL_POSITION",
        "SELECT ROUTINE_NAME FROM QSYS2.SYSROUTINES"
        f" WHERE ROUTINE_SCHEMA = 'QSYS2' AND ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_NAME IN ({functions})",
    ]


class CapabilitiesUnreadable(MqJournalError):
    """The catalog could not be read (no SQL runner, or no authority to the catalog views)."""


def parse(host: str, stdout: str) -> Capabilities:
    try:
        results = parse_results(stdout)
    except Db2OutputError as exc:
        raise CapabilitiesUnreadable(
            host,
            f"the SQL catalog's answer could not be read ({exc})",
            "check that the SQL runner (qsh/db2) works for the user profile",
        ) from None
    if len(results) == 3:
        release_rows, column_rows, routine_rows = results
    # ENV_SYS_INFO may be missing on an old release (the release is then unknown); the catalog views may not.
    if len(results) != 3 or isinstance(column_rows, Db2Failure) or isinstance(routine_rows, Db2Failure):
        detail = next((f"{r.msg_id}: {r.text}" for r in results if isinstance(r, Db2Failure)), stdout.strip()[-200:])
        raise CapabilitiesUnreadable(
            host,
            f"QSYS2.SYSCOLUMNS / SYSROUTINES could not be read ({detail})",
            "check that the SQL runner works and the profile may read the Db2 catalog",
        )
    release = None
    if not isinstance(release_rows, Db2Failure) and release_rows:
        row = release_rows[0]
        version, os_release = row.get("OS_VERSION"), row.get("OS_RELEASE")
        if version and os_release:
            release = f"{version.strip()}.{os_release.strip().lstrip('0') or '0'}"
    columns: dict[str, set[str]] = {}
    for row in column_rows:
        columns.setdefault(f"QSYS2.{row['TABLE_NAME']}", set()).add(value(row, "COLUMN_NAME"))
    return Capabilities(
        host=host,
        release=release,
        columns={k: frozenset(v) for k, v in columns.items()},
        functions=frozenset(f"QSYS2.{r['ROUTINE_NAME']}" for r in routine_rows),
    )


_CACHE: weakref.WeakKeyDictionary[IbmiSession, Capabilities] = weakref.WeakKeyDictionary()


def read(session: IbmiSession) -> Capabilities:
    """The partition's services and columns: one SQL round trip, then cached for the session's life."""
    cached = _CACHE.get(session)
    if cached is None:
        cached = parse(session.host, session.run(commands.sql(*statements(), runner=session.sql_runner)).stdout)
        _CACHE[session] = cached
    return cached
