"""The IBM i SQL services the simulated partition exposes, with their real column names and Db2 types.

Types come from the IBM documentation pages named in /work/shared/reference/ibmi-mq-facts.md sections 1.1-1.4
where the stored excerpts show them (marked "doc"); the rest are plausible guesses (marked "assumed"). The type
matters to the `db2` utility only through the column's display width and alignment, so a wrong guess changes
padding, never values.
"""

from __future__ import annotations

from dataclasses import dataclass

_NUMERIC = frozenset({"SMALLINT", "INTEGER", "BIGINT", "DECIMAL"})
_FIXED_WIDTH = {"SMALLINT": 6, "INTEGER": 11, "BIGINT": 20, "DATE": 10, "TIME": 8, "TIMESTAMP": 26}


@dataclass(frozen=True)
class Db2Type:
    """A Db2 for i column type, reduced to what the `db2` utility's layout and SQLite's affinity need."""

    name: str
    length: int = 0  # characters, bytes or decimal precision
    scale: int = 0
    ccsid: int | None = None  # None: the job's (character) or none (numbers, dates, binary)

    @property
    def graphic(self) -> bool:
        return self.name in ("GRAPHIC", "VARGRAPHIC")

    @property
    def numeric(self) -> bool:
        return self.name in _NUMERIC

    @property
    def binary(self) -> bool:
        return self.name in ("BINARY", "VARBINARY", "BLOB")

    @property
    def display_width(self) -> int | None:
        """CLI display size, which the utility pads each cell to; None for LOBs, whose width is unknown (sql.py)."""
        if self.name in _FIXED_WIDTH:
            return _FIXED_WIDTH[self.name]
        if self.name == "DECIMAL":
            return self.length + 2  # sign and decimal point
        if self.name in ("BINARY", "VARBINARY"):
            return 2 * self.length  # binary is shown as hex
        if self.graphic:
            return 4 * self.length  # the simulator's model of an uncast graphic column: its UTF-16 as hex (sql.py)
        if self.name in ("CLOB", "BLOB"):
            return None
        return self.length

    @property
    def affinity(self) -> str:
        if self.name in ("SMALLINT", "INTEGER", "BIGINT"):
            return "INTEGER"
        if self.name == "DECIMAL":
            return "NUMERIC"
        return "BLOB" if self.binary else "TEXT"


def VARCHAR(n: int) -> Db2Type:
    return Db2Type("VARCHAR", n)


def VARGRAPHIC(n: int) -> Db2Type:
    """UTF-16 text, as the QSYS2 services declare their free-text columns (VARGRAPHIC(n) CCSID 1200)."""
    return Db2Type("VARGRAPHIC", n, ccsid=1200)


def DECIMAL(p: int, s: int = 0) -> Db2Type:
    return Db2Type("DECIMAL", p, s)


def BINARY(n: int) -> Db2Type:
    return Db2Type("BINARY", n)


CHAR1 = Db2Type("CHAR", 1)
SMALLINT = Db2Type("SMALLINT")
INTEGER = Db2Type("INTEGER")
BIGINT = Db2Type("BIGINT")
TIMESTAMP = Db2Type("TIMESTAMP")
CLOB = Db2Type("CLOB", 16 * 1024 * 1024)
BLOB = Db2Type("BLOB", 16 * 1024 * 1024)

NAME = VARCHAR(10)  # an IBM i object or library name

# Views and table functions, in their documented column order. Keys are the names `SqlCatalog.rows` takes.
VIEWS: dict[str, dict[str, Db2Type]] = {
    "QSYS2.JOURNAL_RECEIVER_INFO": {
        "JOURNAL_RECEIVER_LIBRARY": NAME,  # doc
        "JOURNAL_RECEIVER_NAME": NAME,  # doc
        "DESCRIPTIVE_TEXT": VARCHAR(50),  # doc
        "JOURNAL_RECEIVER_ASP_NUMBER": INTEGER,  # doc
        "JOURNAL_RECEIVER_ASP_NAME": NAME,  # doc
        "JOURNAL_LIBRARY": NAME,  # doc
        "JOURNAL_NAME": NAME,  # doc
        "THRESHOLD": INTEGER,  # doc (kilobytes)
        "SIZE": BIGINT,  # assumed; unit unverified, see the report
        "STATUS": VARCHAR(8),  # assumed; longest value is ATTACHED
        "NUMBER_OF_JOURNAL_ENTRIES": DECIMAL(20),  # assumed; the API returns up to 20 digits
        "FIRST_SEQUENCE_NUMBER": DECIMAL(20),  # assumed, as above
        "LAST_SEQUENCE_NUMBER": DECIMAL(20),  # assumed, as above
        "MAXIMUM_ENTRY_SPECIFIC_DATA_LENGTH": BIGINT,  # assumed
        "MAXIMUM_NULL_VALUE_INDICATORS": INTEGER,  # named as above; type assumed
        "ATTACH_TIMESTAMP": TIMESTAMP,  # assumed
        "DETACH_TIMESTAMP": TIMESTAMP,  # assumed
        "SAVE_TIMESTAMP": TIMESTAMP,  # assumed
        "PREVIOUS_JOURNAL_RECEIVER": NAME,  # assumed
        "PREVIOUS_JOURNAL_RECEIVER_LIBRARY": NAME,  # assumed
        "NEXT_JOURNAL_RECEIVER": NAME,  # assumed
        "NEXT_JOURNAL_RECEIVER_LIBRARY": NAME,  # assumed
        "RECEIVER_MAXIMUM_SIZE": VARCHAR(8),  # assumed; *MAXOPTn
        # The columns from here on are named as a public IBM i tool selects them from the real view (a VS Code
        # extension's journal receiver page, found by its MAXIMUM_NULL_VALUE_INDICATORS select); types assumed.
        "MINIMIZE_ESD_FOR_DATA_AREAS": VARCHAR(3),
        "MINIMIZE_ESD_FOR_FILES": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_JOB_NAME": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_USER_NAME": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_PROGRAM_NAME": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_PROGRAM_LIBRARY": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_SYSTEM_SEQUENCE_NUMBER": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_REMOTE_ADDRESS": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_THREAD_ID": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_LOGICAL_UNIT_OF_WORK_ID": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_TRANSACTION_ID": VARCHAR(3),
        "PENDING_TRANSACTIONS": VARCHAR(3),  # assumed; YES/NO
        "REMOTE_JOURNAL_TYPE": VARCHAR(6),  # assumed; *TYPE1/*TYPE2
        "LOCAL_JOURNAL_SYSTEM": VARCHAR(8),
        "LOCAL_JOURNAL_NAME": NAME,
        "LOCAL_JOURNAL_LIBRARY": NAME,
        "LOCAL_JOURNAL_ASP_GROUP": NAME,
        "LOCAL_JOURNAL_RECEIVER_LIBRARY": NAME,
        "SOURCE_JOURNAL_SYSTEM": VARCHAR(8),
        "SOURCE_JOURNAL_NAME": NAME,
        "SOURCE_JOURNAL_LIBRARY": NAME,
        "SOURCE_JOURNAL_ASP_GROUP": NAME,
        "SOURCE_JOURNAL_RECEIVER_LIBRARY": NAME,
        "REDIRECTED_RECEIVER_LIBRARY": NAME,
        "FILTER_BY_OBJECT": VARCHAR(3),
        "FILTER_IMAGES": VARCHAR(3),
        "FILTER_PROGRAMS": VARCHAR(3),
        "FILTER_PROGRAM_ARRAY": VARCHAR(2559),
        "FILTER_PROGRAM_JSON": VARCHAR(4096),
    },
    "QSYS2.JOURNAL_INFO": {
        "JOURNAL_NAME": NAME,  # doc
        "JOURNAL_LIBRARY": NAME,  # doc
        "ASP_NUMBER": INTEGER,  # doc
        "JOURNAL_ASPGRP": NAME,  # doc
        "ATTACHED_JOURNAL_RECEIVER_NAME": NAME,  # doc
        "ATTACHED_JOURNAL_RECEIVER_LIBRARY": NAME,  # doc
        "MESSAGE_QUEUE": NAME,  # doc
        "MESSAGE_QUEUE_LIBRARY": NAME,  # doc
        "DELETE_RECEIVER_OPTION": VARCHAR(3),  # doc
        "DELETE_RECEIVER_DELAY": INTEGER,  # doc
        "MANAGE_RECEIVER_OPTION": VARCHAR(6),  # assumed; *SYSTEM/*USER
        "MANAGE_RECEIVER_DELAY": INTEGER,  # assumed
        "RECEIVER_MAXIMUM_SIZE": VARCHAR(8),  # assumed
        "JOURNAL_TYPE": VARCHAR(6),  # assumed; LOCAL/REMOTE
        "JOURNAL_STATE": VARCHAR(8),  # assumed; ACTIVE/INACTIVE/STANDBY
        "NUMBER_JOURNAL_RECEIVERS": INTEGER,  # assumed
        "TOTAL_SIZE_JOURNAL_RECEIVERS": BIGINT,  # assumed
        "JOURNAL_TEXT": VARCHAR(50),  # assumed
        # Further columns of the real view, named as IBM's Db2 for i team selects them (gist forstie/ee877df1,
        # "Search for journals that can be easily improved"); types assumed.
        "REMOVE_INTERNAL_ENTRIES": VARCHAR(3),
        "NUMBER_REMOTE_JOURNALS": INTEGER,
        "REDIRECTED_RECEIVER_LIBRARY": NAME,
        "MAXIMUM_REMOTE_JOURNALS_ENTRIES_BEHIND": BIGINT,
        "MAXIMUM_REMOTE_JOURNALS_TIME_BEHIND": BIGINT,
        "MAXIMUM_REMOTE_JOURNALS_RETRANSMISSIONS": BIGINT,
        "REMOVE_FIXED_LENGTH_DETAIL": VARCHAR(3),
        "MINIMIZE_ESD_FOR_DATA_AREAS": VARCHAR(3),
        "MINIMIZE_ESD_FOR_FILES": VARCHAR(3),
        "JOURNAL_CACHE": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_JOB_NAME": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_USER_NAME": VARCHAR(3),
        "FIXED_LENGTH_DATA_INCLUDES_PROGRAM_NAME": VARCHAR(3),
    },
    "QSYS2.MESSAGE_QUEUE_INFO": {
        "MESSAGE_QUEUE_LIBRARY": NAME,  # doc
        "MESSAGE_QUEUE_NAME": NAME,  # doc
        "MESSAGE_ID": VARCHAR(7),  # doc
        "MESSAGE_TYPE": VARCHAR(13),  # assumed; longest value is INFORMATIONAL
        "MESSAGE_SUBTYPE": VARCHAR(22),  # assumed
        "MESSAGE_TEXT": VARGRAPHIC(1024),  # doc (CCSID 1200)
        "SEVERITY": SMALLINT,  # assumed
        "MESSAGE_TIMESTAMP": TIMESTAMP,  # assumed
        "MESSAGE_KEY": BINARY(4),  # assumed; shown as hex
        "ASSOCIATED_MESSAGE_KEY": BINARY(4),  # assumed
        "FROM_USER": NAME,  # assumed
        "FROM_JOB": VARCHAR(28),  # assumed; nnnnnn/user/job
        "FROM_PROGRAM": VARCHAR(256),  # assumed
        "MESSAGE_FILE_LIBRARY": NAME,  # assumed
        "MESSAGE_FILE_NAME": NAME,  # assumed
        "MESSAGE_SECOND_LEVEL_TEXT": VARGRAPHIC(4096),  # assumed
        # The replacement data (mqmessages.py). Assumed VARCHAR(4096) FOR BIT DATA, nullable (IBM's page not
        # retrieved); db2 shows bit data as hex, like a VARBINARY.
        "MESSAGE_TOKENS": Db2Type("VARBINARY", 4096),
    },
    "QSYS2.SYSTEM_VALUE_INFO": {
        "SYSTEM_VALUE_NAME": NAME,  # doc
        "CURRENT_NUMERIC_VALUE": BIGINT,  # doc, nullable
        "CURRENT_CHARACTER_VALUE": VARGRAPHIC(3840),  # doc, CCSID(1200) (ssw_ibm_i_75 rzajqviewsysvalinfo)
    },
    # ssw_ibm_i_76 rzajqviewmessagefiledata (MESSAGE_DATA_COUNT INTEGER, MESSAGE_DATA VARCHAR(2078) nullable: doc).
    "QSYS2.MESSAGE_FILE_DATA": {
        "MESSAGE_FILE_LIBRARY": NAME,  # doc
        "MESSAGE_FILE": NAME,  # doc
        "MESSAGE_ID": Db2Type("CHAR", 7),  # doc
        # MESSAGE_TEXT VARGRAPHIC(132) (doc) is left out: mqjournal never selects it, and the graphic-column guard
        # (tests/sim/test_graphic_columns.py) keys columns by name across views.
        "SEVERITY": INTEGER,  # doc
        "MESSAGE_DATA_COUNT": INTEGER,  # doc
        "MESSAGE_DATA": VARCHAR(2078),  # doc
    },
    "SYSIBM.SYSDUMMY1": {"IBMREQD": CHAR1},
}

# Table functions: the catalog gives every row; the function filters by its arguments (see sql.py).
TABLE_FUNCTIONS: dict[str, dict[str, Db2Type]] = {
    "QSYS2.USER_SPACE": {
        "USER_SPACE_LIBRARY": NAME,  # doc
        "USER_SPACE": NAME,  # doc
        "DATA": CLOB,  # doc, CLOB(16M)
        "DATA_BINARY": BLOB,  # doc, BLOB(16M)
    },
    "QSYS2.OBJECT_STATISTICS": {
        "OBJNAME": NAME,
        "OBJLIB": NAME,
        "OBJTYPE": VARCHAR(8),
        "OBJOWNER": NAME,
        "OBJATTRIBUTE": NAME,
        "OBJCREATED": TIMESTAMP,
        "OBJSIZE": DECIMAL(15),
        "OBJTEXT": VARCHAR(50),
        "LAST_USED_TIMESTAMP": TIMESTAMP,
        "SAVE_TIMESTAMP": TIMESTAMP,
    },
    # IBM i 7.5 SF99950 level 4 / 7.4 SF99704 level 25 (ibm.com support page "QSYS2.SAVE_FILE_OBJECTS"); columns as
    # the SAVE_FILE_OBJECTS view documents them (ssw_ibm_i_75 rzajq/rzajqviewsavfobj.htm), the ones the simulator
    # models. The content of a save file, not the object's save history, is what proves a backup.
    "QSYS2.SAVE_FILE_OBJECTS": {
        "SAVE_FILE_LIBRARY": NAME,  # doc
        "SAVE_FILE": NAME,  # doc
        "LIBRARY_NAME": NAME,  # doc: the library the object was saved from
        "OBJECT_NAME": NAME,  # doc
        "OBJECT_TYPE": VARCHAR(7),  # doc
        "OBJECT_ATTRIBUTE": NAME,  # doc, nullable
        "TEXT_DESCRIPTION": VARCHAR(50),  # doc, nullable
    },
    # The function's parameters are documented (ssw_ibm_i_75 rzajqudfassocjrn); its result columns were not
    # retrieved: these names and types are the simulator's guess (unverified).
    "QSYS2.ASSOCIATE_JOURNAL_RECEIVER": {
        "JOURNAL_RECEIVER_LIBRARY": NAME,  # assumed
        "JOURNAL_RECEIVER_NAME": NAME,  # assumed
        "ASSOCIATION_STATUS": VARCHAR(10),  # assumed; ASSOCIATED
    },
}

# Catalog and system views the doctor and the capability reader use (#13; sim/releases.py says which release has
# what). Names from IBM's pages: SYSCOLUMNS and SYSROUTINES (Db2 for i catalog, ssw_ibm_i_72 rbafzcatsysrout),
# ASP_INFO (ssw_ibm_i_74/76 rzajqviewaspinfo; capacities in MB), USER_INFO (assumed column subset and widths).
VIEWS.update(
    {
        "QSYS2.SYSCOLUMNS": {
            "COLUMN_NAME": VARCHAR(128),  # doc
            "TABLE_NAME": VARCHAR(128),  # doc
            "TABLE_OWNER": VARCHAR(128),  # doc
            "ORDINAL_POSITION": INTEGER,  # doc
            "DATA_TYPE": VARCHAR(8),  # doc
            "LENGTH": INTEGER,  # doc
            "NUMERIC_SCALE": INTEGER,  # doc, nullable
            "IS_NULLABLE": CHAR1,  # doc
            "TABLE_SCHEMA": VARCHAR(128),  # doc
        },
        "QSYS2.SYSROUTINES": {
            "SPECIFIC_SCHEMA": VARCHAR(128),  # doc
            "SPECIFIC_NAME": VARCHAR(128),  # doc
            "ROUTINE_SCHEMA": VARCHAR(128),  # doc
            "ROUTINE_NAME": VARCHAR(128),  # doc
            "ROUTINE_TYPE": VARCHAR(9),  # doc: FUNCTION or PROCEDURE
            "FUNCTION_TYPE": CHAR1,  # assumed: S scalar, T table
        },
        "QSYS2.ASP_INFO": {
            "DEVICE_DESCRIPTION_NAME": NAME,  # doc, nullable
            "ASP_NUMBER": INTEGER,  # doc
            "ASP_STATE": VARCHAR(10),  # doc
            "ASP_TYPE": VARCHAR(9),  # doc
            "RDB_NAME": VARCHAR(18),  # doc
            "NUMBER_OF_DISK_UNITS": INTEGER,  # doc
            "TOTAL_CAPACITY": BIGINT,  # assumed type; megabytes (forstie gist)
            "TOTAL_CAPACITY_AVAILABLE": BIGINT,  # assumed type; megabytes
        },
        "QSYS2.USER_INFO": {
            "AUTHORIZATION_NAME": NAME,  # assumed
            "STATUS": NAME,  # assumed: *ENABLED / *DISABLED
            "SPECIAL_AUTHORITIES": VARCHAR(88),  # assumed: blank-separated, e.g. "*JOBCTL *SAVSYS"
            "GROUP_PROFILE_NAME": NAME,  # assumed: *NONE when none
            "SUPPLEMENTAL_GROUP_COUNT": SMALLINT,  # assumed
            "SUPPLEMENTAL_GROUP_LIST": VARCHAR(150),  # assumed: blank-separated names
        },
        # The PTF groups installed (WRKPTFGRP in SQL): `mqjournal doctor --capture` records the Db2 group's level.
        # Names from IBM's page (ssw_ibm_i_75 rzajqviewgroupptfinfo); widths assumed.
        "QSYS2.GROUP_PTF_INFO": {
            "PTF_GROUP_NAME": VARCHAR(60),  # doc
            "PTF_GROUP_DESCRIPTION": VARCHAR(100),  # doc
            "PTF_GROUP_LEVEL": INTEGER,  # doc
            "PTF_GROUP_TARGET_RELEASE": VARCHAR(6),  # doc
            "PTF_GROUP_STATUS": VARCHAR(20),  # doc
        },
        # The operating system's version and release ('7', '5'), as in Db2's SYSIBMADM.ENV_SYS_INFO (assumed on IBM i).
        "SYSIBMADM.ENV_SYS_INFO": {
            "OS_NAME": VARCHAR(256),  # assumed
            "OS_VERSION": VARCHAR(256),  # assumed
            "OS_RELEASE": VARCHAR(256),  # assumed
            "HOST_NAME": VARCHAR(256),  # assumed
        },
    }
)

VIEW_COLUMNS: dict[str, tuple[str, ...]] = {
    name: tuple(columns) for name, columns in {**VIEWS, **TABLE_FUNCTIONS}.items()
}


def _known_types() -> dict[str, Db2Type]:
    known: dict[str, Db2Type] = {}
    for columns in (*VIEWS.values(), *TABLE_FUNCTIONS.values()):
        for column, db2type in columns.items():
            known.setdefault(column, db2type)
    return known


# By bare column name: how a result column that carries a view column's name is laid out.
KNOWN_COLUMN_TYPES: dict[str, Db2Type] = _known_types()
