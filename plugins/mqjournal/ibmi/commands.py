"""CL and SQL text for IBM i, built only from validated names.

Every name passes through `object_name` / `qmgr_name` here even if the caller validated it already: this module is
the last gate before text reaches a partition. The command line is quoted for the PASE shell with `shlex.quote`, so
CL and SQL keep their own quotes intact.

SQL reaches the partition through the `db2` utility, which is a Qshell utility (program QSYS/QZDFMDB2, linked as
/usr/bin/db2 in the root file system), not a PASE command: the SSH login shell (PASE bsh, unless changed with
QSYS2.SET_PASE_SHELL_INFO) does not have it. The runner `qsh` (the default) therefore sends
``/QOpenSys/usr/bin/qsh -c 'db2 '"'"'SELECT ...'"'"''``: the statements quoted for Qshell (POSIX sh rules), that text
quoted again for the PASE shell. `db2` sends a bare ``db2 'SELECT ...'``, for partitions where an admin linked
/QOpenSys/usr/bin/db2 to qsh. Sources: kadler, "Calling QSH utilities from PASE" (2018); codefori/vscode-ibmi issue
#3008 (qsh -c "system ..." with a PATH that lacks /usr/bin: "qsh: 001-0019 Error found searching for command
system. No such path or directory.", exit 127).
"""

from __future__ import annotations

import functools
import hashlib
import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from mqjournal.errors import InvalidName
from mqjournal.names import (
    TEXT_LENGTH,
    mq_name,
    object_name,
    qmgr_directory,
    qmgr_name,
    receiver_prefix,
    scratch_directory,
)
from mqjournal.space import data_compression

MQS_INI = "/QIBM/UserData/mqm/mqs.ini"
RECOVERY_MESSAGES = ("AMQ7460", "AMQ7462", "AMQ7432", "AMQ7472")


@dataclass(frozen=True)
class Command:
    """One command line for the host's shell, e.g. ``system 'RCDMQMIMG ...'``, built from validated names."""

    text: str
    idempotent: bool  # True: safe to send again when a transport failure leaves its outcome unknown
    # What the program reads on its standard input, then end of file: the MQSC a Linux host's runmqsc runs, so that
    # none of it passes through the shell. Lines built from validated values only (linuxmq's builders).
    stdin: str = ""

    def __post_init__(self) -> None:
        # One command per exec: a line break or NUL would let the shell run a second, unvalidated one.
        if not self.text.strip() or any(c in self.text for c in "\r\n\0"):
            raise ValueError(f"not a single command line: {self.text!r}")
        if "\0" in self.stdin or "\r" in self.stdin or (self.stdin and not self.stdin.endswith("\n")):
            raise ValueError(f"not whole lines of input: {self.stdin!r}")

    def __str__(self) -> str:
        return self.text


def cl(text: str, *, idempotent: bool) -> Command:
    return Command(text=f"system {shlex.quote(text)}", idempotent=idempotent)


SqlRunner = Literal["qsh", "db2"]
SQL_RUNNERS: tuple[SqlRunner, ...] = ("qsh", "db2")
QSH = "/QOpenSys/usr/bin/qsh"


def _db2_line(statements: tuple[str, ...], runner: SqlRunner) -> str:
    if not statements:
        raise ValueError("no SQL statement to send")
    # shlex.quote follows POSIX sh quoting, which both Qshell and the PASE shells implement: '...' with each ' as '"'"'.
    db2_runs = "; ".join(f"db2 {shlex.quote(s)}" for s in statements)
    if runner == "qsh":
        return f"{QSH} -c {shlex.quote(db2_runs)}"
    if runner == "db2":
        return db2_runs
    raise ValueError(f"unknown SQL runner {runner!r}: use one of {', '.join(SQL_RUNNERS)}")


def sql(*statements: str, runner: SqlRunner) -> Command:
    """Several SELECTs in one SSH round trip: one `db2` run each, their outputs in order on stdout.

    `runner` is the host's (IbmiSession.sql_runner): required, so that no call site silently sends a bare `db2`
    to a partition that has none."""
    return Command(text=_db2_line(statements, runner), idempotent=True)


# One `db2 <word>` run as `_db2_line` writes it: <word> is shlex.quote's output, a bare safe word or '...' pieces
# joined by "'" (how a quote inside is written).
_QUOTED_WORD = r"""(?:'[^']*'|"'"|[A-Za-z0-9_@%+=:,./-])+"""
_DB2_RUN = re.compile(rf"db2 ({_QUOTED_WORD})(?:; |\Z)")
_QSH_LINE = re.compile(rf"{re.escape(QSH)} -c ({_QUOTED_WORD})")
_WORD_PIECE = re.compile(r"""'([^']*)'|"(')"|([A-Za-z0-9_@%+=:,./-]+)""")


def _unquoted(word: str) -> str:
    """A shell word of the `_QUOTED_WORD` form, as the shell reads it. What shlex.split gives for such a word, at a
    fraction of its cost: the audit log, the reconciler and the command log read every SQL command sent, and
    shlex's character-by-character tokenizer on a command of many statements was a seventh of a session's CPU."""
    return "".join(quoted or quote or bare for quoted, quote, bare in _WORD_PIECE.findall(word))


def sql_statements(command: str) -> list[str] | None:
    """The SQL statements a command built by `sql` or `associate_receivers` sends (either runner); None for any
    other command. For the audit and the reconciler, which judge a past command by its text. Read by the exact
    form `_db2_line` writes, not by a general shell parser (a `;` inside a statement is not a separator)."""
    statements = _sql_statements(command)
    return None if statements is None else list(statements)


# Each command sent is read here twice (its log line, then its answer's), and a run sends the same reads to many
# queue managers: reading each text once matters to a batch task whose sessions share one interpreter lock.
@functools.lru_cache(maxsize=1024)
def _sql_statements(command: str) -> tuple[str, ...] | None:
    if command.startswith(f"{QSH} -c "):
        whole = _QSH_LINE.fullmatch(command)
        if whole is not None:
            line = _unquoted(whole.group(1))
        else:  # not as `_db2_line` writes it (spacing, other quoting): as the shell would read it
            try:
                argv = shlex.split(command)
            except ValueError:
                return None
            if len(argv) != 3:
                return None
            line = argv[2]
    elif command.startswith("db2 "):
        line = command
    else:
        return None
    statements: list[str] = []
    position = 0
    while position < len(line):
        run = _DB2_RUN.match(line, position)
        if run is None:
            return None
        statements.append(_unquoted(run.group(1)))
        position = run.end()
    return tuple(statements) or None


def db2_timestamp(moment: datetime) -> str:
    """A Db2 for i timestamp literal in the partition's local time."""
    return moment.strftime("%Y-%m-%d-%H.%M.%S.%f")


def _lit(name: str) -> str:
    # Safe because every name reaching here matched [A-Z0-9$#@_.]; quoting still follows SQL rules.
    return "'" + name.replace("'", "''") + "'"


# --- CL -----------------------------------------------------------------------------------------------------


def record_media_images(qmgr: str) -> Command:
    """RCDMQMIMG OBJ(*ALL): forces a checkpoint; MQ then logs AMQ7460/AMQ7462 and rewrites AMQJRNINF.

    Sending it twice only takes two checkpoints, so a retry after a lost connection is safe.
    """
    return cl(f"RCDMQMIMG OBJ(*ALL) OBJTYPE(*ALL) MQMNAME('{qmgr_name(qmgr)}') DSPJRNDTA(*YES)", idempotent=True)


def change_receiver(library: str, journal: str) -> Command:
    """CHGJRN JRNRCV(*GEN): attach a new receiver. Not idempotent: each run attaches another one."""
    return cl(f"CHGJRN JRN({object_name(library)}/{object_name(journal)}) JRNRCV(*GEN)", idempotent=False)


def read_mqs_ini() -> Command:
    return Command(text=f"cat {MQS_INI}", idempotent=True)


# --- SQL ----------------------------------------------------------------------------------------------------

# Columns IBM documents as graphic (UTF-16, CCSID 1200), with their documented lengths. How the db2 utility prints
# an uncast graphic column was not found anywhere, so every statement casts them to character first (`as_text`).
# MESSAGE_QUEUE_INFO.MESSAGE_TEXT: VARGRAPHIC(1024) CCSID 1200 (ssw_ibm_i_74/76 rzajqviewmessagequeueinfo);
# SYSTEM_VALUE_INFO.CURRENT_CHARACTER_VALUE: VARGRAPHIC(3840) CCSID(1200) (ssw_ibm_i_75 rzajqviewsysvalinfo).
GRAPHIC_COLUMNS: dict[str, int] = {"MESSAGE_TEXT": 1024, "CURRENT_CHARACTER_VALUE": 3840}
# EBCDIC US/Canada: a single-byte CCSID, so each UTF-16 code unit becomes at most one byte and VARCHAR(n) holds all
# of a VARGRAPHIC(n); and a CCSID every IBM i converts to and from, so the utility can show it in any job CCSID. A
# character outside its repertoire (DBCS text) becomes a substitution character: only in MESSAGE_TEXT, which
# mqjournal shows but never reads (the replacement data is what it reads, mqmessages.py).
TEXT_CCSID = 37


def cast_to_text(column: str) -> str:
    """A graphic column cast to a character type no shorter than it, so nothing is cut off."""
    return f"CAST({column} AS VARCHAR({GRAPHIC_COLUMNS[column]}) CCSID {TEXT_CCSID})"


def as_text(column: str) -> str:
    """`cast_to_text`, named as the column, so the readers of the result stay the same."""
    return f"{cast_to_text(column)} AS {column}"


def host_clock() -> str:
    return (
        f"SELECT CURRENT TIMESTAMP AS NOW, (SELECT {cast_to_text('CURRENT_CHARACTER_VALUE')}"
        " FROM QSYS2.SYSTEM_VALUE_INFO WHERE SYSTEM_VALUE_NAME = 'QUTCOFFSET') AS UTC_OFFSET,"
        f" (SELECT {cast_to_text('CURRENT_CHARACTER_VALUE')} FROM QSYS2.SYSTEM_VALUE_INFO"
        " WHERE SYSTEM_VALUE_NAME = 'QTIMZON') AS TIME_ZONE FROM SYSIBM.SYSDUMMY1"
    )


def mq_journals(libraries: list[str] | None = None) -> str:
    """The MQ queue manager journals (AMQxJRN) on the partition, optionally within some libraries."""
    where = "JOURNAL_NAME LIKE 'AMQ_JRN'"
    if libraries:
        where += " AND JOURNAL_LIBRARY IN (" + ", ".join(_lit(object_name(lib)) for lib in libraries) + ")"
    return (
        "SELECT JOURNAL_LIBRARY, JOURNAL_NAME, ATTACHED_JOURNAL_RECEIVER_NAME, MESSAGE_QUEUE, MESSAGE_QUEUE_LIBRARY"
        f" FROM QSYS2.JOURNAL_INFO WHERE {where} ORDER BY JOURNAL_LIBRARY, JOURNAL_NAME"
    )


def amqjrninf_text(library: str) -> str:
    return (
        "SELECT SUBSTR(DATA, 1, 37) AS AMQJRNINF FROM TABLE(QSYS2.USER_SPACE("
        f"USER_SPACE => 'AMQJRNINF', USER_SPACE_LIBRARY => {_lit(object_name(library))})) X"
    )


def amqjrninf_binary(library: str) -> str:
    """The raw bytes, for when the character column does not convert: decoded from EBCDIC by the caller."""
    return (
        "SELECT HEX(SUBSTR(DATA_BINARY, 1, 37)) AS AMQJRNINF_HEX FROM TABLE(QSYS2.USER_SPACE("
        f"USER_SPACE => 'AMQJRNINF', USER_SPACE_LIBRARY => {_lit(object_name(library))})) X"
    )


RECEIVER_COLUMNS = (
    "JOURNAL_RECEIVER_NAME",
    "JOURNAL_RECEIVER_LIBRARY",
    "JOURNAL_NAME",
    "JOURNAL_LIBRARY",
    "STATUS",
    "SIZE",
    "THRESHOLD",
    "ATTACH_TIMESTAMP",
    "DETACH_TIMESTAMP",
    "SAVE_TIMESTAMP",
    "PREVIOUS_JOURNAL_RECEIVER",
    "PREVIOUS_JOURNAL_RECEIVER_LIBRARY",
    "NEXT_JOURNAL_RECEIVER",
    "NEXT_JOURNAL_RECEIVER_LIBRARY",
    "FIRST_SEQUENCE_NUMBER",
    "LAST_SEQUENCE_NUMBER",
)


def receivers(library: str, journal: str, instance: str) -> str:
    """The journal's receiver directory, plus any receiver in the library named like its receivers but not in it
    (a restored receiver not yet associated, or one an admin created: it can take the next name, CPI70E3)."""
    lib, jrn = _lit(object_name(library)), _lit(object_name(journal))
    prefix = _lit(f"{receiver_prefix(instance)}%")
    return (
        f"SELECT {', '.join(RECEIVER_COLUMNS)} FROM QSYS2.JOURNAL_RECEIVER_INFO"
        f" WHERE (JOURNAL_LIBRARY = {lib} AND JOURNAL_NAME = {jrn})"
        f" OR (JOURNAL_RECEIVER_LIBRARY = {lib} AND JOURNAL_RECEIVER_NAME LIKE {prefix})"
        " ORDER BY ATTACH_TIMESTAMP, JOURNAL_RECEIVER_NAME"
    )


_MESSAGE_COLUMNS = (
    f"MESSAGE_QUEUE_LIBRARY, MESSAGE_QUEUE_NAME, MESSAGE_ID, MESSAGE_TIMESTAMP, {as_text('MESSAGE_TEXT')}"
)
# The replacement data, in hex: what mqjournal reads from a message (mqmessages.py), never MESSAGE_TEXT, which comes
# in the job's language and date format. The first 256 bytes hold every layout mqjournal knows, and keep the db2
# column narrow (a whole VARCHAR(4096) FOR BIT DATA would print 8192 characters wide on every row). The CAST states
# the width outright, whatever length attribute a release gives SUBSTR and HEX: printed 8192 wide, the tokens were
# five sixths of a collect's answer (258 KB for a queue manager's 30 messages, fleet_bench, #28).
MESSAGE_TOKENS_BYTES = 256
_TOKENS = (
    f"CAST(HEX(SUBSTR(MESSAGE_TOKENS, 1, {MESSAGE_TOKENS_BYTES})) AS VARCHAR({2 * MESSAGE_TOKENS_BYTES}))"
    " AS MESSAGE_TOKENS"
)


def _message_columns(with_tokens: bool) -> str:
    # Without the column (a release or PTF level that lacks it) the rows carry no tokens: readers then fall back.
    return f"{_MESSAGE_COLUMNS}, {_TOKENS}" if with_tokens else _MESSAGE_COLUMNS


def messages_since(
    library: str,
    journal: str,
    journal_queue: tuple[str, str],
    since: datetime | None,
    lookback_days: int = 7,
    *,
    with_tokens: bool = True,
) -> str:
    """AMQ7460/7462/7432/7472 from QMQMMSG, and every CPI70E3 on QSYSOPR and the journal's message queue.

    CPI70E3's text names no journal (IBM: "A system managed change journal operation to attach a new journal
    receiver could not be accomplished..."), so which journal it is about is read from its replacement data by the
    caller (`mqmessages.journal_of`), after reading; `journal` only documents whose queue this is.
    """
    object_name(journal)
    lib = _lit(object_name(library))
    mq_ids = ", ".join(_lit(i) for i in RECOVERY_MESSAGES)
    queues = {("QSYS", "QSYSOPR"), (object_name(journal_queue[0]), object_name(journal_queue[1]))}
    system_queues = " OR ".join(
        f"(MESSAGE_QUEUE_LIBRARY = {_lit(q_lib)} AND MESSAGE_QUEUE_NAME = {_lit(q_name)})"
        for q_lib, q_name in sorted(queues)
    )
    start = _lit(db2_timestamp(since)) if since else f"CURRENT TIMESTAMP - {int(lookback_days)} DAYS"
    return (
        f"SELECT {_message_columns(with_tokens)} FROM QSYS2.MESSAGE_QUEUE_INFO WHERE MESSAGE_TIMESTAMP >= {start}"
        f" AND ((MESSAGE_QUEUE_LIBRARY = {lib} AND MESSAGE_QUEUE_NAME = 'QMQMMSG' AND MESSAGE_ID IN ({mq_ids}))"
        f" OR (({system_queues}) AND MESSAGE_ID = 'CPI70E3'))"
        " ORDER BY MESSAGE_TIMESTAMP"
    )


def message_formats(files: dict[str, tuple[str, str]]) -> str:
    """The declared substitution variables (MESSAGE_DATA) of the messages mqjournal reads, from their message files.

    QSYS2.MESSAGE_FILE_DATA is a view over every message of every message file: the WHERE names the files and IDs so
    that only these rows are built. Its text columns are graphic, so they are cast like MESSAGE_TEXT.
    """
    pairs = sorted({(object_name(lib), object_name(file)) for lib, file in files.values()})
    ids = ", ".join(_lit(msg_id) for msg_id in sorted(files) if _MESSAGE_ID.fullmatch(msg_id))
    where = " OR ".join(f"(MESSAGE_FILE_LIBRARY = {_lit(lib)} AND MESSAGE_FILE = {_lit(file)})" for lib, file in pairs)
    return (
        "SELECT MESSAGE_FILE_LIBRARY, MESSAGE_FILE, MESSAGE_ID, MESSAGE_DATA_COUNT, MESSAGE_DATA"
        f" FROM QSYS2.MESSAGE_FILE_DATA WHERE ({where}) AND MESSAGE_ID IN ({ids}) ORDER BY MESSAGE_ID"
    )


_MESSAGE_ID = re.compile(r"[A-Z]{3}[0-9A-F]{4}")


def latest_recovery_points(library: str, *, with_tokens: bool = True) -> str:
    """The newest AMQ7460 and AMQ7462, whenever they were sent (they describe the current recovery points)."""
    return (
        f"SELECT {_message_columns(with_tokens)} FROM QSYS2.MESSAGE_QUEUE_INFO"
        f" WHERE MESSAGE_QUEUE_LIBRARY = {_lit(object_name(library))} AND MESSAGE_QUEUE_NAME = 'QMQMMSG'"
        " AND MESSAGE_ID IN ('AMQ7460', 'AMQ7462') ORDER BY MESSAGE_TIMESTAMP DESC FETCH FIRST 10 ROWS ONLY"
    )


# --- save and delete -------------------------------------------------------------------------------------------

MAX_SAVOBJ_OBJECTS = 300  # SAVOBJ's OBJ parameter takes at most 300 names


def create_save_file(library: str, name: str, text: str) -> Command:
    """CRTSAVF: not idempotent (a second run fails with CPF5813), which the executor relies on to find a free name.
    `text` is the object's TEXT (at most 50 characters), so WRKOBJ shows what the save file holds."""
    if len(text) > TEXT_LENGTH or not text.isprintable():
        raise ValueError(f"a save file's TEXT is at most {TEXT_LENGTH} printable characters: {text!r}")
    return cl(
        f"CRTSAVF FILE({object_name(library)}/{object_name(name)}) TEXT({_lit(text)})",
        idempotent=False,
    )


def save_receivers(
    library: str, receivers: list[str], save_library: str, save_file: str, *, compression: str
) -> Command:
    """SAVOBJ of journal receivers into an empty save file, with data compression DTACPR(`compression`) (the
    policy's `save_compression`). Sending it twice only saves them twice."""
    if not 1 <= len(receivers) <= MAX_SAVOBJ_OBJECTS:
        raise ValueError(f"SAVOBJ takes 1 to {MAX_SAVOBJ_OBJECTS} objects, not {len(receivers)}")
    objects = " ".join(object_name(r) for r in receivers)
    return cl(
        f"SAVOBJ OBJ({objects}) LIB({object_name(library)}) DEV(*SAVF) OBJTYPE(*JRNRCV)"
        f" SAVF({object_name(save_library)}/{object_name(save_file)}) UPDHST(*YES)"
        f" DTACPR({data_compression(compression)})",
        idempotent=True,
    )


def delete_receiver(library: str, receiver: str, *, ignore_inquiry: bool) -> Command:
    """DLTJRNRCV. `ignore_inquiry` (DLTOPT(*IGNINQMSG)) only when the catalog proves a save: it silences CPA7025."""
    option = "*IGNINQMSG" if ignore_inquiry else "*NONE"
    return cl(f"DLTJRNRCV JRNRCV({object_name(library)}/{object_name(receiver)}) DLTOPT({option})", idempotent=False)


# --- restore, repair and recovery ------------------------------------------------------------------------------

# RCRMQMOBJ's OBJTYPE values (IBM MQ for IBM i command reference).
MQ_OBJECT_TYPES = frozenset(
    {
        "*ALL",
        "*Q",
        "*ALSQ",
        "*LCLQ",
        "*MDLQ",
        "*RMTQ",
        "*AUTHINFO",
        "*CTLG",
        "*MQM",
        "*NMLIST",
        "*PRC",
        "*CHL",
        "*CLTCN",
        "*LSR",
        "*SVC",
        "*SYNCFILE",
        "*CLCHLTAB",
        "*TOPIC",
    }
)
MQ_RECEIVER_TEXT = "MQM LOCAL JOURNAL RECEIVER"
MAX_THRESHOLD_KB = 1_919_999  # the largest threshold of an attached receiver without *MAXOPTn (CRTJRN)


def _mq_object_type(value: str) -> str:
    if value not in MQ_OBJECT_TYPES:
        raise ValueError(f"{value!r} is not an RCRMQMOBJ object type ({', '.join(sorted(MQ_OBJECT_TYPES))})")
    return value


def restore_receiver(qmgr_library: str, receiver: str, save_library: str, save_file: str) -> Command:
    """RSTOBJ of one receiver from a save file into the library it was saved from (the only one IBM i allows).

    Not idempotent: a second run is refused because the receiver exists (CPF2112), which the executor reads on
    the host rather than resending blindly.
    """
    return cl(
        f"RSTOBJ OBJ({object_name(receiver)}) SAVLIB({object_name(qmgr_library)}) DEV(*SAVF) OBJTYPE(*JRNRCV)"
        f" SAVF({object_name(save_library)}/{object_name(save_file)})",
        idempotent=False,
    )


def restore_library(qmgr_library: str, journal: str, instance: str, save_library: str, save_file: str) -> Command:
    """RSTLIB of a queue manager library without its journal and receivers.

    The journal is left out because restoring it makes IBM i attach a receiver named by rule 1 after the one
    attached at save time, a name a later save usually holds (the MQ restore pitfall); the receivers are left out
    because each is restored from its newest full save instead.
    """
    lib = object_name(qmgr_library)
    return cl(
        f"RSTLIB SAVLIB({lib}) DEV(*SAVF) SAVF({object_name(save_library)}/{object_name(save_file)})"
        f" OMITOBJ(({lib}/{object_name(journal)} *JRN) ({lib}/{receiver_prefix(instance)}* *JRNRCV))",
        idempotent=False,
    )


def create_receiver(library: str, receiver: str, threshold_kb: int) -> Command:
    """CRTJRNRCV as the MQ documentation gives it for a receiver made by hand."""
    if not 1 <= int(threshold_kb) <= MAX_THRESHOLD_KB:
        raise ValueError(f"threshold {threshold_kb} KB is outside 1-{MAX_THRESHOLD_KB} KB")
    return cl(
        f"CRTJRNRCV JRNRCV({object_name(library)}/{object_name(receiver)}) THRESHOLD({int(threshold_kb)})"
        f" TEXT('{MQ_RECEIVER_TEXT}')",
        idempotent=False,
    )


def give_receiver_to_qmqm(library: str, receiver: str) -> Command:
    """CHGOBJOWN NEWOWN(QMQM): MQ must own the receivers of its journal."""
    return cl(
        f"CHGOBJOWN OBJ({object_name(library)}/{object_name(receiver)}) OBJTYPE(*JRNRCV) NEWOWN(QMQM)",
        idempotent=True,
    )


def attach_receiver(library: str, journal: str, receiver: str) -> Command:
    """CHGJRN JRNRCV(lib/name): attach a named receiver; this also resumes system-managed switching."""
    lib = object_name(library)
    return cl(f"CHGJRN JRN({lib}/{object_name(journal)}) JRNRCV({lib}/{object_name(receiver)})", idempotent=False)


def create_journal(library: str, journal: str, receiver: str) -> Command:
    """CRTJRN on a receiver made by hand, with the attributes MQ gives AMQxJRN (system-managed, never deleting)."""
    lib = object_name(library)
    return cl(
        f"CRTJRN JRN({lib}/{object_name(journal)}) JRNRCV({lib}/{object_name(receiver)}) MNGRCV(*SYSTEM) DLTRCV(*NO)",
        idempotent=False,
    )


def associate_receivers(library: str, journal: str, instance: str, *, runner: SqlRunner) -> Command:
    """QSYS2.ASSOCIATE_JOURNAL_RECEIVER for every restored receiver of the journal (WRKJRN option 9 in SQL).

    A table function, not a procedure (IBM i 7.5 SQL services: "ASSOCIATE_JOURNAL_RECEIVER table function"), so it
    is queried, one row per receiver it associated. Associating a receiver that is already associated changes
    nothing, so this may be resent.
    """
    lib = _lit(object_name(library))
    query = (
        "SELECT * FROM TABLE(QSYS2.ASSOCIATE_JOURNAL_RECEIVER("
        f"JOURNAL_LIBRARY => {lib}, JOURNAL_NAME => {_lit(object_name(journal))},"
        f" RECEIVER_LIBRARY => {lib}, RECEIVER_NAME => {_lit('AMQ' + object_name(instance) + '*')})) X"
    )
    return Command(text=_db2_line((query,), runner), idempotent=True)


def start_qmgr(qmgr: str) -> Command:
    """STRMQM: its startup recovery pass reads the journal from the startup recovery point (AMQ7432 if a gap)."""
    return cl(f"STRMQM MQMNAME('{qmgr_name(qmgr)}')", idempotent=False)


def end_qmgr(qmgr: str) -> Command:
    """ENDMQM, controlled, ending the connected jobs: the state IBM's backup procedure saves a library in."""
    return cl(f"ENDMQM MQMNAME('{qmgr_name(qmgr)}') OPTION(*CNTRLD) ENDCCTJOB(*YES)", idempotent=False)


def recreate_object(qmgr: str, obj: str, objtype: str) -> Command:
    """RCRMQMOBJ: replays the journal from the object's media image; does nothing if the object is not damaged."""
    return cl(
        f"RCRMQMOBJ OBJ('{mq_name(obj)}') OBJTYPE({_mq_object_type(objtype)}) MQMNAME('{qmgr_name(qmgr)}')",
        idempotent=True,
    )


def refresh_cluster(qmgr: str, cluster: str, *, repos: bool) -> Command:
    """RFRMQMCL (REFRESH CLUSTER) on one queue manager. REPOS(*YES) is refused on a full repository (AMQ9406)."""
    return cl(
        f"RFRMQMCL CLUSTER('{mq_name(cluster, what='cluster')}') MQMNAME('{qmgr_name(qmgr)}')"
        f" REPOS({'*YES' if repos else '*NO'})",
        idempotent=False,
    )


def set_full_repository(qmgr: str, cluster: str | None) -> Command:
    """CHGMQM REPOS: make the queue manager a full repository for `cluster`, or demote it (None)."""
    value = f"'{mq_name(cluster, what='cluster')}'" if cluster else "' '"
    return cl(f"CHGMQM MQMNAME('{qmgr_name(qmgr)}') REPOS({value})", idempotent=True)


def save_library(qmgr_library: str, save_library_: str, save_file: str) -> Command:
    """SAVLIB of a queue manager library into an empty save file."""
    return cl(
        f"SAVLIB LIB({object_name(qmgr_library)}) DEV(*SAVF)"
        f" SAVF({object_name(save_library_)}/{object_name(save_file)}) UPDHST(*YES)",
        idempotent=True,
    )


def save_file_device(library: str, name: str) -> str:
    """A save file as SAV and RST name their device: its QSYS.LIB path (IBM i CL reference, SAV DEV)."""
    return f"/QSYS.LIB/{object_name(library)}.LIB/{object_name(name)}.FILE"


def save_qmgr_directory(qmgr: str, save_library_: str, save_file: str) -> Command:
    """SAV of the queue manager's IFS directory (its object definitions and their messages) into an empty save
    file, as IBM's backup procedure takes it beside SAVLIB of the library. The path comes only from the validated
    queue manager name (names.qmgr_directory), whose characters cannot end a CL quoted string."""
    return cl(
        f"SAV DEV('{save_file_device(save_library_, save_file)}') OBJ(('{qmgr_directory(qmgr)}'))",
        idempotent=False,  # sent again, it finds the save file holding the first SAV's data and is refused
    )


def restore_qmgr_directory(qmgr: str, save_library: str, save_file: str) -> Command:
    """RST of the queue manager's IFS directory from the save file SAV put it in; the queue manager must be ended
    (its jobs hold the queue files). What is there is replaced by the save, so it runs before STRMQM only."""
    return cl(
        f"RST DEV('{save_file_device(save_library, save_file)}') OBJ(('{qmgr_directory(qmgr)}'))",
        idempotent=True,
    )


def delete_save_file(library: str, name: str) -> Command:
    """DLTF of a save file: it and every save in it are gone for good."""
    return cl(f"DLTF FILE({object_name(library)}/{object_name(name)})", idempotent=False)


def delete_partial_upload(library: str, name: str) -> Command:
    """DLTF of a save file an interrupted upload from the backup store went into: it may hold part of the stored
    copy, and IBM i places data only into an empty save file, so it is deleted and created again (CRTSAVF) before
    the upload is made again. Its own builder, apart from `delete_save_file`, because that one discards a backup
    (the catalog records it and never offers its saves again), and this one deletes no backup: the stored copy is."""
    return cl(f"DLTF FILE({object_name(library)}/{object_name(name)})", idempotent=False)


def save_file_objects(save_library: str, save_file: str) -> str:
    """The journal receivers a save file holds (QSYS2.SAVE_FILE_OBJECTS, IBM i 7.4 SF99704 level 25 / 7.5 SF99950
    level 4): the only proof that a backup holds a receiver. The receiver's own save history (SAVE_TIMESTAMP) says
    that *some* save happened, not where. Fails (SQL0443) when the save file does not exist."""
    return (
        "SELECT LIBRARY_NAME, OBJECT_NAME, OBJECT_TYPE FROM TABLE(QSYS2.SAVE_FILE_OBJECTS("
        f"SAVE_FILE => {_lit(object_name(save_file))}, SAVE_FILE_LIBRARY => {_lit(object_name(save_library))},"
        " OBJECT_TYPE_FILTER => '*JRNRCV')) X ORDER BY LIBRARY_NAME, OBJECT_NAME"
    )


# --- the host's SHA-256 of a save file (ibmi/hostdigest.py; docs/ibmi-interfaces.md, section 5) ----------------

DIGEST_TOOLS = ("openssl", "openssl-rpm", "sha256sum")
"""The PASE programs that can give a file's SHA-256, in the order the client tries them (hostdigest.TOOLS says
which product brings each)."""

DIGEST_PROBE = "/dev/null"
"""What discovery digests: every PASE has it, it is empty, and its SHA-256 is known, so a tool that answers anything
else is not trusted."""

_SAVE_FILE_PATH = re.compile(r"/QSYS\.LIB/(?:[A-Z0-9$#@_]{1,10}\.LIB/)?[A-Z0-9$#@_]{1,10}\.FILE")


def save_file_path(library: str, name: str) -> str:
    """The IFS path of save file `library`/`name`, built from validated names only."""
    lib, savf = object_name(library, what="library"), object_name(name, what="save file")
    for part in (lib, savf):
        if "." in part:
            # NAME.FILE is how QSYS.LIB tells the object type: a '.' in the name would make the path ambiguous.
            raise InvalidName(part, "a name with '.' has no unambiguous /QSYS.LIB path", "use a name without '.'")
    return f"/QSYS.LIB/{savf}.FILE" if lib == "QSYS" else f"/QSYS.LIB/{lib}.LIB/{savf}.FILE"


_SCRATCH_NAME = re.compile(r"[A-Z0-9$#@_]{1,10}\.[A-Z0-9$#@_]{1,10}\.[0-9a-f]{16}\.savf")


def scratch_file_path(library: str, name: str, run_id: str, directory: str) -> str:
    """The stream file save file `library`/`name` is copied to for run `run_id`'s download, in the host's scratch
    `directory`: validated names, and the run's id as a digest (a run id may hold any character; its digest only
    hex digits)."""
    save_file_path(library, name)  # the names' checks: valid, and no '.' (which would make the name ambiguous)
    run = hashlib.sha256(run_id.encode("utf-8")).hexdigest()[:16]
    return f"{scratch_directory(directory)}/{object_name(library)}.{object_name(name)}.{run}.savf"


def _is_scratch_file(path: str) -> bool:
    directory, _, file_name = path.rpartition("/")
    try:
        return scratch_directory(directory) == directory and bool(_SCRATCH_NAME.fullmatch(file_name))
    except InvalidName:
        return False


def _scratch(path: str) -> str:
    if not _is_scratch_file(path):
        raise InvalidName(path, "not a scratch stream file's path", "build it with commands.scratch_file_path")
    return shlex.quote(path)


def copy_to_stream_file(library: str, name: str, stream_file: str) -> Command:
    """PASE `cp` of save file `library`/`name` into `stream_file` (ansible's ibmi_fetch does the same): a byte copy
    (no CCSID conversion, unlike CPYTOSTMF's defaults), readable by the profile alone (umask 077: a save holds MQ's
    journal data). Writes only the scratch file (and its directory), so it is sent again after a dropped
    connection."""
    source = shlex.quote(save_file_path(library, name))
    target = _scratch(stream_file)
    directory = shlex.quote(stream_file.rpartition("/")[0])
    return Command(text=f"umask 077 && mkdir -p {directory} && cp {source} {target}", idempotent=True)


def make_scratch_directory(stream_file: str) -> Command:
    """`mkdir -p` of the directory `stream_file` goes into, readable by the profile alone (umask 077), before
    CPYTOSTMF copies into it (CPYTOSTMF makes no directory). Sent again after a dropped connection: it makes only
    what is missing."""
    _scratch(stream_file)
    return Command(text=f"umask 077 && mkdir -p {shlex.quote(stream_file.rpartition('/')[0])}", idempotent=True)


def copy_to_stream_file_by_cl(library: str, name: str, stream_file: str) -> Command:
    """CPYTOSTMF of save file `library`/`name` into `stream_file`, where PASE `cp` may not read QSYS.LIB: IBM's CL
    reference says CPYTOSTMF "copies either a database file member or a save file to a stream file" and converts
    data only "when copying a database file member"; STMFOPT(*REPLACE) as vscode-ibmi-fs sends it, so a scratch file
    left by an interrupted run is written over (docs/ibmi-interfaces.md, section 5). Both paths are built from
    validated names, so neither holds a quote. Writes only the scratch file: sent again after a drop."""
    source, target = save_file_path(library, name), stream_file
    _scratch(target)
    return cl(f"CPYTOSTMF FROMMBR('{source}') TOSTMF('{target}') STMFOPT(*REPLACE)", idempotent=True)


def remove_stream_file(stream_file: str) -> Command:
    """`rm -f` of a scratch stream file (none there is no error: removing it twice is the same)."""
    return Command(text=f"rm -f {_scratch(stream_file)}", idempotent=True)


def file_sha256(tool: str, path: str) -> Command:
    """The SHA-256 of `path` (a save file's /QSYS.LIB path, a scratch stream file, or DIGEST_PROBE) computed on the
    partition by `tool`. Reads only, so it is sent again after a dropped connection."""
    if path != DIGEST_PROBE and not _SAVE_FILE_PATH.fullmatch(path) and not _is_scratch_file(path):
        raise InvalidName(path, "not a save file's /QSYS.LIB path", "build it with commands.save_file_path")
    quoted = shlex.quote(path)
    if tool == "openssl":
        return Command(text=f"/QOpenSys/usr/bin/openssl dgst -sha256 -r {quoted}", idempotent=True)
    if tool == "openssl-rpm":
        return Command(text=f"/QOpenSys/pkgs/bin/openssl dgst -sha256 -r {quoted}", idempotent=True)
    if tool == "sha256sum":
        return Command(text=f"/QOpenSys/pkgs/bin/sha256sum {quoted}", idempotent=True)
    raise ValueError(f"unknown digest tool {tool!r}: one of {', '.join(DIGEST_TOOLS)}")


def save_files(library: str) -> str:
    """The save files of a library (to check, before a restore, that the catalog's save files still exist)."""
    return (
        "SELECT OBJNAME FROM TABLE(QSYS2.OBJECT_STATISTICS("
        f"{_lit(object_name(library))}, '*FILE')) X WHERE OBJATTRIBUTE = 'SAVF' ORDER BY OBJNAME"
    )


# --- ASP usage and read-only checks (#13) --------------------------------------------------------------------------


def journal_asp_usage(library: str, journal: str) -> str:
    """The capacity and free space (QSYS2.ASP_INFO, in megabytes) of the ASP that holds the journal (JOURNAL_INFO's
    ASP_NUMBER; MQ creates its receivers in the same library, so in the same ASP)."""
    return (
        "SELECT A.ASP_NUMBER, A.TOTAL_CAPACITY, A.TOTAL_CAPACITY_AVAILABLE FROM QSYS2.ASP_INFO A"
        " JOIN QSYS2.JOURNAL_INFO J ON J.ASP_NUMBER = A.ASP_NUMBER"
        f" WHERE J.JOURNAL_LIBRARY = {_lit(object_name(library))} AND J.JOURNAL_NAME = {_lit(object_name(journal))}"
    )


def user_profile(user: str) -> str:
    """The signed-on profile's special authorities and groups (QSYS2.USER_INFO): read by `mqjournal doctor`."""
    return (
        "SELECT AUTHORIZATION_NAME, STATUS, SPECIAL_AUTHORITIES, GROUP_PROFILE_NAME, SUPPLEMENTAL_GROUP_LIST"
        f" FROM QSYS2.USER_INFO WHERE AUTHORIZATION_NAME = {_lit(object_name(user, what='user profile'))}"
    )


CHKOBJ_TYPES = frozenset({"*LIB", "*CMD", "*JRNRCV", "*JRN", "*FILE", "*USRSPC", "*MSGQ"})
CHKOBJ_AUTHORITIES = frozenset(
    {"*USE", "*CHANGE", "*ALL", "*OBJEXIST", "*OBJMGT", "*OBJOPR", "*READ", "*ADD", "*UPD", "*DLT", "*EXECUTE"}
)


def check_object(library: str, name: str, objtype: str, authorities: tuple[str, ...] = ()) -> Command:
    """CHKOBJ: does the object exist, and has the job's user these authorities to it? Changes nothing (CPF9801 not
    found, CPF9810 no library, CPF9802 not authorized)."""
    if objtype not in CHKOBJ_TYPES:
        raise ValueError(f"{objtype!r} is not an object type mqjournal checks")
    bad = [a for a in authorities if a not in CHKOBJ_AUTHORITIES]
    if bad:
        raise ValueError(f"{bad[0]!r} is not an authority CHKOBJ checks")
    aut = f" AUT({' '.join(authorities)})" if authorities else ""
    return cl(f"CHKOBJ OBJ({object_name(library)}/{object_name(name)}) OBJTYPE({objtype}){aut}", idempotent=True)
