"""CL and SQL text for IBM i, built only from validated names.

Every name passes through `object_name` / `qmgr_name` here even if the caller validated it already: this module is
the last gate before text reaches a partition. The command line is quoted for the PASE shell with `shlex.quote`, so
CL and SQL keep their own quotes intact.
"""

from __future__ import annotations

import shlex
from datetime import datetime

from mqjournal.ibmi.transport import Command
from mqjournal.names import object_name, qmgr_name

MQS_INI = "/QIBM/UserData/mqm/mqs.ini"
RECOVERY_MESSAGES = ("AMQ7460", "AMQ7462", "AMQ7432", "AMQ7472")


def cl(text: str, *, idempotent: bool) -> Command:
    return Command(text=f"system {shlex.quote(text)}", idempotent=idempotent)


def sql(*statements: str) -> Command:
    """Several SELECTs in one SSH round trip: one `db2` run each, their outputs in order on stdout."""
    return Command(text="; ".join(f"db2 {shlex.quote(s)}" for s in statements), idempotent=True)


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


def host_clock() -> str:
    return (
        "SELECT CURRENT TIMESTAMP AS NOW, (SELECT CURRENT_CHARACTER_VALUE FROM QSYS2.SYSTEM_VALUE_INFO"
        " WHERE SYSTEM_VALUE_NAME = 'QUTCOFFSET') AS UTC_OFFSET FROM SYSIBM.SYSDUMMY1"
    )


def mq_journals(libraries: list[str] | None = None) -> str:
    """The MQ queue manager journals (AMQxJRN) on the partition, optionally within some libraries."""
    where = "JOURNAL_NAME LIKE 'AMQ_JRN'"
    if libraries:
        where += " AND JOURNAL_LIBRARY IN (" + ", ".join(_lit(object_name(l)) for l in libraries) + ")"
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
    prefix = _lit(f"AMQ{object_name(instance)}%")
    return (
        f"SELECT {', '.join(RECEIVER_COLUMNS)} FROM QSYS2.JOURNAL_RECEIVER_INFO"
        f" WHERE (JOURNAL_LIBRARY = {lib} AND JOURNAL_NAME = {jrn})"
        f" OR (JOURNAL_RECEIVER_LIBRARY = {lib} AND JOURNAL_RECEIVER_NAME LIKE {prefix})"
        " ORDER BY ATTACH_TIMESTAMP, JOURNAL_RECEIVER_NAME"
    )


_MESSAGE_COLUMNS = "MESSAGE_QUEUE_LIBRARY, MESSAGE_QUEUE_NAME, MESSAGE_ID, MESSAGE_TIMESTAMP, MESSAGE_TEXT"


def messages_since(
    library: str, journal: str, journal_queue: tuple[str, str], since: datetime | None, lookback_days: int = 7
) -> str:
    """AMQ7460/7462/7432/7472 from QMQMMSG, and CPI70E3 about this journal from QSYSOPR and its message queue."""
    lib = _lit(object_name(library))
    mq_ids = ", ".join(_lit(i) for i in RECOVERY_MESSAGES)
    queues = {("QSYS", "QSYSOPR"), (object_name(journal_queue[0]), object_name(journal_queue[1]))}
    system_queues = " OR ".join(
        f"(MESSAGE_QUEUE_LIBRARY = {_lit(q_lib)} AND MESSAGE_QUEUE_NAME = {_lit(q_name)})" for q_lib, q_name in sorted(queues)
    )
    start = _lit(db2_timestamp(since)) if since else f"CURRENT TIMESTAMP - {int(lookback_days)} DAYS"
    about_journal = f"MESSAGE_TEXT LIKE {_lit('%' + object_name(journal) + '%' + object_name(library) + '%')}"
    return (
        f"SELECT {_MESSAGE_COLUMNS} FROM QSYS2.MESSAGE_QUEUE_INFO WHERE MESSAGE_TIMESTAMP >= {start}"
        f" AND ((MESSAGE_QUEUE_LIBRARY = {lib} AND MESSAGE_QUEUE_NAME = 'QMQMMSG' AND MESSAGE_ID IN ({mq_ids}))"
        f" OR (({system_queues}) AND MESSAGE_ID = 'CPI70E3' AND {about_journal}))"
        " ORDER BY MESSAGE_TIMESTAMP"
    )


def latest_recovery_points(library: str) -> str:
    """The newest AMQ7460 and AMQ7462, whenever they were sent (they describe the current recovery points)."""
    return (
        f"SELECT {_MESSAGE_COLUMNS} FROM QSYS2.MESSAGE_QUEUE_INFO"
        f" WHERE MESSAGE_QUEUE_LIBRARY = {_lit(object_name(library))} AND MESSAGE_QUEUE_NAME = 'QMQMMSG'"
        " AND MESSAGE_ID IN ('AMQ7460', 'AMQ7462') ORDER BY MESSAGE_TIMESTAMP DESC FETCH FIRST 10 ROWS ONLY"
    )


# --- save and delete -------------------------------------------------------------------------------------------

MAX_SAVOBJ_OBJECTS = 300  # SAVOBJ's OBJ parameter takes at most 300 names


def create_save_file(library: str, name: str) -> Command:
    """CRTSAVF: not idempotent (a second run fails with CPF5813), which the executor relies on to find a free name."""
    return cl(
        f"CRTSAVF FILE({object_name(library)}/{object_name(name)}) TEXT('mqjournal receiver save')", idempotent=False
    )


def save_receivers(library: str, receivers: list[str], save_library: str, save_file: str) -> Command:
    """SAVOBJ of journal receivers into an empty save file. Sending it twice only saves them twice."""
    if not 1 <= len(receivers) <= MAX_SAVOBJ_OBJECTS:
        raise ValueError(f"SAVOBJ takes 1 to {MAX_SAVOBJ_OBJECTS} objects, not {len(receivers)}")
    objects = " ".join(object_name(r) for r in receivers)
    return cl(
        f"SAVOBJ OBJ({objects}) LIB({object_name(library)}) DEV(*SAVF) OBJTYPE(*JRNRCV)"
        f" SAVF({object_name(save_library)}/{object_name(save_file)}) UPDHST(*YES)",
        idempotent=True,
    )


def delete_receiver(library: str, receiver: str, *, ignore_inquiry: bool) -> Command:
    """DLTJRNRCV. `ignore_inquiry` (DLTOPT(*IGNINQMSG)) only when the catalog proves a save: it silences CPA7025."""
    option = "*IGNINQMSG" if ignore_inquiry else "*NONE"
    return cl(f"DLTJRNRCV JRNRCV({object_name(library)}/{object_name(receiver)}) DLTOPT({option})", idempotent=False)
