"""Which QSYS2 SQL services and columns exist on each IBM i release, as the simulator answers them.

A simulated partition runs one release (`Partition.release`, from the fleet file's `system.release`) with the
latest Db2 PTF group of that release, or the level `system.db2_group_level` names. What the release lacks is
absent from QSYS2.SYSCOLUMNS / QSYS2.SYSROUTINES and fails when queried as Db2 for i fails: a view with SQL0204
"X in QSYS2 type *FILE not found.", a table function with SQL0204 "X in QSYS2 type *N not found." (sql.py), a
column with SQL0206.

Sources (stored copies of IBM pages, searched for this module); "verified" when the page says it, else "assumed":
- SAVE_FILE_OBJECTS: IBM support page "QSYS2.SAVE_FILE_OBJECTS()" (ibm16982053): "Enhanced with IBM i 7.5 SF99950
  Level 4 & IBM i 7.4 SF99704 Level 25: Add the QSYS2.SAVE_FILE_OBJECTS UDTF", version "7.4.0 and future
  releases" -> absent on 7.3. Verified.
- ASP_INFO: IBM support page "QSYS2.ASP_INFO" (ibm11136014): "Enhanced with IBM i 7.4 base release and IBM i 7.3
  SF99703 Level 15: Add RDB_NAME ..." -> it exists on 7.3. Verified. TOTAL_CAPACITY and TOTAL_CAPACITY_AVAILABLE are
  in megabytes (Scott Forstie's gist 2110dd70 "Capacity numbers are in MB units", IBM Db2 for i team). Verified.
  The 7.6 page adds: the caller needs *IOSYSCFG or the QIBM_IOSYSCFG_VIEW function usage (7.4 page: "None
  required"). Verified.
- JOURNAL_INFO: documented on the 7.3 pages (ssw_ibm_i_73 rzajqviewjournalinfo). Verified present on 7.3+.
- JOURNAL_RECEIVER_INFO: the 7.5 page carries a "Start of change" marker (new within 7.5) and IBM's support page
  was created in May 2022 (7.5 GA, 7.4 TR6). Assumed: 7.5 base, 7.4 SF99704 Level 18, absent on 7.3.
- ASSOCIATE_JOURNAL_RECEIVER: the 7.5 page carries a "Start of change" marker; the support page (ibm16573047) does
  not name the level. Assumed: 7.5 SF99950 Level 5, 7.4 SF99704 Level 26, absent on 7.3.
- MESSAGE_QUEUE_INFO view: documented on the 7.2 pages (ssw_ibm_i_72). Verified present on 7.3+. Its MESSAGE_TOKENS
  column: no IBM page retrieved says when it came. Assumed: 7.5 SF99950 Level 3 / 7.4 SF99704 Level 23, absent on 7.3.
- USER_SPACE: IBM support page "QSYS2.USER_SPACE" says IBM i 7.3 and later (reference notes 1.3). Verified.
- SYSTEM_VALUE_INFO, OBJECT_STATISTICS, USER_INFO, SYSCOLUMNS, SYSROUTINES: in every release named here (they
  predate 7.3). Assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

RELEASES = ("7.3", "7.4", "7.5", "7.6")

# The Db2 PTF group of each release (IBM's "Db2 for IBM i group PTF schedule").
PTF_GROUPS = {"7.3": "SF99703", "7.4": "SF99704", "7.5": "SF99950", "7.6": "SF99960"}


@dataclass(frozen=True)
class Since:
    """When a service or column came: per release, the PTF group level (0: the base release); absent: not there."""

    levels: dict[str, int]
    verified: bool
    source: str

    def available(self, release: str, level: int | None = None) -> bool:
        """On `release` with Db2 PTF group `level` installed (None: the latest)."""
        return release in self.levels and (level is None or level >= self.levels[release])

    def text(self) -> str:
        """How an admin reads it: 'IBM i 7.5 SF99950 Level 4, 7.4 SF99704 Level 25'."""
        parts = []
        for release in sorted(self.levels, reverse=True):
            level = self.levels[release]
            parts.append(f"IBM i {release}" + (f" {PTF_GROUPS[release]} Level {level}" if level else " (base release)"))
        return ", ".join(parts)


_EVERY = {"7.3": 0, "7.4": 0, "7.5": 0, "7.6": 0}

# Views and table functions (as `VIEWS` / `TABLE_FUNCTIONS` of db2views.py name them).
SERVICES: dict[str, Since] = {
    "QSYS2.JOURNAL_INFO": Since(_EVERY, True, "ssw_ibm_i_73 rzajqviewjournalinfo"),
    "QSYS2.JOURNAL_RECEIVER_INFO": Since(
        {"7.4": 18, "7.5": 0, "7.6": 0}, False, "7.5 page marked new; support page ibm16573045 (May 2022)"
    ),
    "QSYS2.MESSAGE_QUEUE_INFO": Since(_EVERY, True, "ssw_ibm_i_72 rzajqviewmessagequeueinfo"),
    "QSYS2.USER_SPACE": Since(_EVERY, True, "IBM support page QSYS2.USER_SPACE: 7.3 and later"),
    "QSYS2.SYSTEM_VALUE_INFO": Since(_EVERY, False, "predates 7.3"),
    "QSYS2.OBJECT_STATISTICS": Since(_EVERY, False, "predates 7.3"),
    "QSYS2.SAVE_FILE_OBJECTS": Since({"7.4": 25, "7.5": 4, "7.6": 0}, True, "IBM support page ibm16982053"),
    "QSYS2.ASSOCIATE_JOURNAL_RECEIVER": Since(
        {"7.4": 26, "7.5": 5, "7.6": 0}, False, "7.5 page marked new; support page ibm16573047 names no level"
    ),
    "QSYS2.ASP_INFO": Since(_EVERY, True, "IBM support page ibm11136014 (7.3 SF99703 Level 15 enhanced it)"),
    "QSYS2.USER_INFO": Since(_EVERY, False, "predates 7.3"),
    "QSYS2.SYSCOLUMNS": Since(_EVERY, True, "Db2 for i catalog"),
    "QSYS2.SYSROUTINES": Since(_EVERY, True, "Db2 for i catalog (ssw_ibm_i_72 rbafzcatsysrout)"),
    "SYSIBM.SYSDUMMY1": Since(_EVERY, True, "Db2 for i catalog"),
    "QSYS2.GROUP_PTF_INFO": Since(_EVERY, False, "predates 7.3"),
    # IBM's technology-update page (ibm11128423) lists 7.4 and 7.3; the 7.3 PTF level is not named there.
    "QSYS2.MESSAGE_FILE_DATA": Since(_EVERY, False, "IBM support page ibm11128423 (IBM i 7.4; 7.3)"),
}

# The Db2 group level a simulated partition has when the fleet file names none ("the latest"). Assumed: any level at
# or after the newest one this module names for the release; the simulator needs one number to show in
# QSYS2.GROUP_PTF_INFO, and nothing mqjournal decides depends on it beyond `Since`.
LATEST_DB2_LEVEL = {"7.3": 29, "7.4": 28, "7.5": 7, "7.6": 1}

# Columns that came later than their view: (view, column) -> when.
COLUMNS: dict[tuple[str, str], Since] = {
    ("QSYS2.MESSAGE_QUEUE_INFO", "MESSAGE_TOKENS"): Since(
        {"7.4": 23, "7.5": 3, "7.6": 0}, False, "no IBM page retrieved names the level"
    ),
}

TABLE_FUNCTION_NAMES = frozenset(
    {
        "QSYS2.USER_SPACE",
        "QSYS2.OBJECT_STATISTICS",
        "QSYS2.SAVE_FILE_OBJECTS",
        "QSYS2.ASSOCIATE_JOURNAL_RECEIVER",
    }
)


def service_available(release: str, service: str, level: int | None = None) -> bool:
    """Unknown services (ones this table does not list) are taken as present: the table lists what varies. `level`:
    the Db2 PTF group level installed (None: the latest)."""
    since = SERVICES.get(service)
    return since is None or since.available(release, level)


def columns_on(
    release: str, service: str, columns: tuple[str, ...], level: int | None = None
) -> tuple[str, ...] | None:
    """The columns of `service` that `release` at Db2 group `level` has, in order; None when the service is absent."""
    if not service_available(release, service, level):
        return None
    return tuple(c for c in columns if (since := COLUMNS.get((service, c))) is None or since.available(release, level))
