"""IBM i object names, MQ queue manager names and the naming rules of MQ journal receivers.

Every library, journal, receiver, save file and queue manager name that ever reaches a CL command or an SQL
statement passes through one of the validators here: that, not quoting, is what keeps command text safe.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, StringConstraints

from mqjournal.errors import InvalidName, NextReceiverNameTaken, NoReceiverNameFree

# The patterns are published as text (unanchored) for the places that cannot call a validator: pydantic field
# patterns, the DAG form, the Spark job's rlike. Anchor them there (^...$, or \z in Java).

OBJECT_NAME_PATTERN = r"[A-Z$#@][A-Z0-9$#@_.]{0,9}"
"""IBM i basic object names: 1-10 characters, the first A-Z $ # @, the rest also 0-9 _ and '.'. Quoted (extended)
names are deliberately not supported: no MQ object needs them."""

QMGR_NAME_PATTERN = r"[A-Za-z0-9._/%]{1,48}"
"""MQ queue manager names: up to 48 of A-Z a-z 0-9 . / _ %. None of these can end a CL quoted string."""

RECEIVER_NAME_PATTERN = r"AMQ([A-Z])([0-9])([0-9]{5})"
"""MQ journal receiver names AMQxrnnnnn: instance x, restore count r, number nnnnn."""

# Seed rule 1, the successor of a receiver name, as text: the first RECEIVER_KEPT_LENGTH characters (AMQ, x and r)
# are kept, and the last RECEIVER_NUMBER_DIGITS (nnnnn) count up by one modulo SEQUENCE_SIZE, zero-padded.
# ReceiverName.successor applies it to a parsed name; the Spark job builds the same rule from these on a column.
RECEIVER_KEPT_LENGTH = 5
RECEIVER_NUMBER_DIGITS = 5
SEQUENCE_SIZE = 10**RECEIVER_NUMBER_DIGITS  # nnnnn runs 00000-99999 before it wraps

_OBJECT_NAME = re.compile(OBJECT_NAME_PATTERN)
_QMGR_NAME = re.compile(QMGR_NAME_PATTERN)
_RECEIVER_NAME = re.compile(RECEIVER_NAME_PATTERN)
_JOURNAL_NAME = re.compile(r"AMQ([A-Z])JRN")


def object_name(value: object, *, what: str = "object") -> str:
    """Return `value` as an IBM i object name, upper-cased as CL would, or raise InvalidName."""
    if not isinstance(value, str):
        raise InvalidName(repr(value), f"{what} name must be text", "give a name of 1-10 characters")
    # Upper-case ASCII only: str.upper() would turn 'ß' into 'SS', a different name than the one given.
    name = value.upper() if value.isascii() else value
    if not _OBJECT_NAME.fullmatch(name):
        raise InvalidName(
            repr(value),
            f"not a valid IBM i {what} name",
            "use 1-10 characters: A-Z $ # @ first, then A-Z 0-9 $ # @ _ .",
        )
    return name


SCRATCH_DIRECTORY = "/tmp/mqjournal"
"""Where a save file is copied to a stream file for its download (ibmi/streamcopy.py) unless the fleet file names
another directory for the host (`scratch_directory`): under /tmp, as IBM's ansible ibmi_fetch copies to /tmp/.ansible.
"""

_IFS_SEGMENT = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}")
_SCRATCH_MAX = 200


def scratch_directory(value: object) -> str:
    """`value` as a directory for scratch stream files, or InvalidName: an absolute IFS path of plain segments
    (letters, digits, '_', '.', '-'; no '.' or '..'), so that it goes into a shell or CL command as one token that
    needs no quoting and names no other directory; not in QSYS.LIB, whose objects are not stream files."""
    action = "give an absolute directory such as /tmp/mqjournal: segments of A-Z a-z 0-9 _ . - only"
    if not isinstance(value, str) or not value.startswith("/") or len(value) > _SCRATCH_MAX:
        raise InvalidName(
            repr(value),
            f"a scratch directory must be an absolute IFS path of at most {_SCRATCH_MAX} characters",
            action,
        )
    segments = value.removesuffix("/").split("/")[1:]
    if not segments or any(not _IFS_SEGMENT.fullmatch(s) or s in (".", "..") for s in segments):
        raise InvalidName(
            repr(value), "not a plain absolute IFS directory (no shell or CL characters, no . or ..)", action
        )
    if segments[0].upper() == "QSYS.LIB":
        raise InvalidName(repr(value), "a scratch directory in QSYS.LIB holds no stream files", action)
    return "/" + "/".join(segments)


def qmgr_name(value: object) -> str:
    """Return `value` as an MQ queue manager name (case kept: MQ names are case-sensitive)."""
    if not isinstance(value, str) or not _QMGR_NAME.fullmatch(value):
        raise InvalidName(
            repr(value),
            "not a valid queue manager name",
            "use 1-48 characters from A-Z a-z 0-9 . / _ %",
        )
    return value


# Where IBM MQ for IBM i keeps a queue manager's object definitions and the messages they hold (IBM MQ 9.0
# "Availability, backup, recovery, and restart on IBM i", q021790_: "The IFS directories and files contain IBM MQ
# configuration files, the descriptions of IBM MQ objects, and the data they contain").
QMGRS_DIRECTORY = "/QIBM/UserData/mqm/qmgrs"

# MQ's queue manager name transformation: '.' becomes '!' and '/' becomes '&' (IBM MQ 9.3 "IBM MQ file names";
# on IBM i the IFS example /QIBM/UserData/mqm/qmgrs/queue&manager, WebSphere MQ 6 "IFS queue manager name
# transformation"). The IFS root file system takes the other characters of a queue manager name as they are, so the
# "truncate to eight characters and add a suffix" rule for names still invalid does not apply there (ASSUMED).
_DIRECTORY_CHARACTERS = str.maketrans({".": "!", "/": "&"})


def qmgr_directory(qmgr: object) -> str:
    """The IFS directory of a queue manager, from its validated name by MQ's name transformation.

    ASSUMED: the directory carries no suffix. MQ adds one (.000, .001 ...) when a directory of the transformed name
    already exists at CRTMQM, e.g. after a queue manager of that name was deleted without its directory; mqs.ini's
    Prefix and Directory keys are then the only authority, and a SAV of the plain path fails (the object is not
    found) instead of saving another queue manager's data."""
    return f"{QMGRS_DIRECTORY}/{qmgr_name(qmgr).translate(_DIRECTORY_CHARACTERS)}"


def mq_name(value: object, *, what: str = "MQ object") -> str:
    """An MQ object or cluster name (a queue, a channel, a cluster): 1-48 of the characters queue manager names use.

    The same character set as queue manager names, so it can never end a CL quoted string either.
    """
    if not isinstance(value, str) or not _QMGR_NAME.fullmatch(value):
        raise InvalidName(repr(value), f"not a valid {what} name", "use 1-48 characters from A-Z a-z 0-9 . / _ %")
    return value


def _as_object_name(value: object) -> str:
    # Names read back from snapshots are already valid and upper case: one match, not object_name's case folding.
    if type(value) is str and _OBJECT_NAME.fullmatch(value):
        return value
    return object_name(value)


ObjectName = Annotated[str, BeforeValidator(_as_object_name), StringConstraints(pattern=rf"^{OBJECT_NAME_PATTERN}$")]
"""A pydantic field type for any IBM i object name (library, journal, receiver, save file, message queue)."""

QueueManagerName = Annotated[str, BeforeValidator(qmgr_name), StringConstraints(pattern=rf"^{QMGR_NAME_PATTERN}$")]

MqObjectName = Annotated[str, AfterValidator(mq_name)]
"""A pydantic field type for an MQ object or cluster name."""

_HOST_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,61}[A-Za-z0-9])?")


def host_name(value: str) -> str:
    """A host's name in the fleet (any platform): letters, digits, '.' and '-', as DNS names are."""
    if not _HOST_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a host name (letters, digits, '.', '-')")
    return value


HostName = Annotated[str, AfterValidator(host_name)]


def qmgr_library_for(qmgr: str) -> str:
    """The default library CRTMQM derives: QM + the queue manager name in a unique form (TEST -> QMTEST).

    MQ's own mangling of long or lower-case names is not published in full, so only names that map one to one
    are derived here; anything else must be named in the fleet file (or found by discovery).
    """
    name = qmgr_name(qmgr)
    if not re.fullmatch(r"[A-Z0-9]{1,8}", name):
        raise InvalidName(
            name,
            "its queue manager library cannot be derived (the name is lower case, long or has symbols)",
            "name the queue manager's library in the fleet file",
        )
    return "QM" + name


# IBM-supplied libraries that hold user data: IBM's SAVLIB LIB(*ALLUSR) saves them with the user libraries, and an
# upgrade of the OS leaves their contents alone. Every other name starting with Q is IBM's: a system library (QSYS,
# QSYS2, QSYSnnnn, QRECOVERY, QSPL, QRPLOBJ, QTCP, ...), a product library (QMQM is MQ itself) or a queue manager's
# library (QMxxx). *ALLUSR and *NONSYS backups do not save those as user data, QRPLOBJ and parts of QRECOVERY and
# QSPL are cleared at IPL, and a queue manager library is what a library recovery deletes and restores.
_USER_DATA_Q_LIBRARIES = frozenset({"QGPL", "QGPL38", "QUSRSYS", "QS36F", "QUSER38"})
_SAVE_LIBRARY_ACTION = "give QGPL or a library of your own whose name does not start with Q (CRTLIB)"


def save_library_for(save_library: object, qmgr_library: str) -> str:
    """The library to create a queue manager's save files in, upper-cased, or InvalidName when it is unsafe there.

    Refused: the queue manager's own library (a lost library, DLTLIB, takes the only saves with it), QTEMP (it is
    the job's own and goes when the SSH session ends), and IBM's libraries (any name starting with Q but QGPL,
    QGPL38, QUSRSYS, QS36F and QUSER38, the ones IBM's *ALLUSR backups save as user data).
    """
    library = object_name(save_library, what="save library")
    if library == object_name(qmgr_library, what="queue manager library"):
        raise InvalidName(
            library,
            "save files may not go in the queue manager's own library: a lost library (DLTLIB) or a library restore "
            "would take the saves with it, and the receivers could never be restored",
            _SAVE_LIBRARY_ACTION,
        )
    if library == "QTEMP":
        raise InvalidName(
            library,
            "save files may not go in the job's temporary library: it and every save file in it go when the job "
            "(the SSH session) ends",
            _SAVE_LIBRARY_ACTION,
        )
    if library.startswith("Q") and library not in _USER_DATA_Q_LIBRARIES:
        raise InvalidName(
            library,
            "save files may not go in an IBM-supplied system or product library (or another queue manager's "
            "library): backups of user data (SAVLIB *ALLUSR) skip it, and IBM may clear or replace it (IPL, upgrade, "
            "library recovery)",
            _SAVE_LIBRARY_ACTION,
        )
    return library


def journal_name(instance: str) -> str:
    """The journal of MQ instance `instance`: 'A' -> AMQAJRN (the inverse of `journal_instance`)."""
    return f"AMQ{_instance(instance)}JRN"


def receiver_prefix(instance: str) -> str:
    """What every receiver name of the instance's journal starts with ('A' -> AMQA), for generic names (AMQA*) and
    SQL patterns (AMQA%)."""
    return f"AMQ{_instance(instance)}"


def _instance(instance: str) -> str:
    if not (len(instance) == 1 and "A" <= instance <= "Z"):
        raise InvalidName(repr(instance), "not an MQ journal instance letter", "the instance is one letter, A to Z")
    return instance


def journal_instance(journal: str) -> str:
    """The instance letter of an MQ journal: AMQAJRN -> 'A' (A for a single-instance queue manager)."""
    match = _JOURNAL_NAME.fullmatch(object_name(journal, what="journal"))
    if not match:
        raise InvalidName(journal, "not an MQ queue manager journal name", "MQ journals are named AMQxJRN, x in A-Z")
    return match.group(1)


@dataclass(frozen=True, order=False)
class ReceiverName:
    """An MQ journal receiver name, AMQ{instance}{r}{nnnnn}.

    `restore` (r) is bumped each time a receiver is restored and `number` (nnnnn) by one per receiver. Names wrap,
    so they carry no order: chain order comes from the journal's links and attach times, never from sorting names.
    """

    instance: str
    restore: int
    number: int

    @classmethod
    def parse(cls, value: str) -> ReceiverName:
        match = _RECEIVER_NAME.fullmatch(value.upper()) if isinstance(value, str) else None
        if not match:
            raise InvalidName(
                repr(value), "not an MQ journal receiver name", "MQ receivers are named AMQxrnnnnn, e.g. AMQA000012"
            )
        return cls(match.group(1), int(match.group(2)), int(match.group(3)))

    @classmethod
    def first(cls, instance: str = "A") -> ReceiverName:
        return cls(instance, 0, 0)

    def __str__(self) -> str:
        return f"AMQ{self.instance}{self.restore}{self.number:0{RECEIVER_NUMBER_DIGITS}d}"

    def successor(self) -> ReceiverName:
        """Seed rule 1: nnnnn + 1, wrapping 99999 to 00000 with r kept (AMQA999999 -> AMQA900000)."""
        return ReceiverName(self.instance, self.restore, (self.number + 1) % SEQUENCE_SIZE)


def is_receiver_name(value: str) -> bool:
    return bool(_RECEIVER_NAME.fullmatch(value))


def next_receiver_name(attached: str, existing: Collection[str]) -> ReceiverName:
    """The name the system gives the next receiver, or NextReceiverNameTaken when rule 2 stops switching.

    `existing` is every *JRNRCV name in the queue manager library, attached or not.
    """
    following = ReceiverName.parse(attached).successor()
    if str(following) in existing:
        raise NextReceiverNameTaken(
            str(following),
            f"the next receiver name after {attached} already exists, so automatic receiver switching stops",
            "attach a receiver with a free name by hand (CRTJRNRCV, CHGOBJOWN NEWOWN(QMQM), CHGJRN JRNRCV(..))",
        )
    return following


def next_free_receiver_name(attached: str, existing: Collection[str]) -> ReceiverName:
    """The first name after `attached`, by rule 1, that is not in `existing`; NoReceiverNameFree (rule 3) if none."""
    candidate = ReceiverName.parse(attached)
    for _ in range(SEQUENCE_SIZE - 1):
        candidate = candidate.successor()
        if str(candidate) not in existing:
            return candidate
    raise NoReceiverNameFree(
        attached,
        "every receiver name in the sequence is on the system",
        "delete receivers no longer needed, run RCDMQMIMG, then delete again so old names can be reused",
    )


# --- save files mqjournal makes ------------------------------------------------------------------------------------

SAVE_FILE_SLOTS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
"""The last character of a save file's name: one per save of a queue manager on one day."""

TEXT_LENGTH = 50
"""An object's TEXT (CRTSAVF TEXT): at most 50 characters on IBM i."""


def save_file_names(qmgr_library: str, on: date) -> list[str]:
    """The names mqjournal tries, in order, for a save file of the queue manager in `qmgr_library` made on `on`: its
    library without the QM prefix (5 characters at most), the day of the year, then a slot: QMPAYROLL on 23 Nov 2026
    gives PAYRO327A, PAYRO327B, ... An admin reading WRKOBJ *SAVF sees whose saves they are and when they were made;
    the TEXT says what each holds."""
    library = object_name(qmgr_library, what="queue manager library")
    rest = library[2:] if library.startswith("QM") else ""
    stem = (rest if rest[:1].isalpha() else library)[:5]
    return [f"{stem}{on.timetuple().tm_yday:03d}{slot}" for slot in SAVE_FILE_SLOTS]


def receiver_save_text(qmgr: str, first: str, last: str, on: date) -> str:
    """CRTSAVF TEXT for a save of receivers: mqjournal PAYROLL AMQA000000-AMQA000023 2026-11-23. A long queue
    manager name is cut so that the receivers and the date always fit the 50 characters."""
    receivers = first if first == last else f"{first}-{last}"
    return _text(qmgr, f" {receivers} {on:%Y-%m-%d}")


def library_save_text(qmgr: str, library: str, on: date) -> str:
    """CRTSAVF TEXT for a save of the queue manager library: mqjournal PAYROLL library QMPAYROLL 2026-11-23."""
    return _text(qmgr, f" library {library} {on:%Y-%m-%d}")


def restored_save_file_text(qmgr: str, origin: str) -> str:
    """CRTSAVF TEXT for a save file a restore brings back from the backup store: mqjournal PAYROLL from store
    QGPL/PAYRO327A. No date: a plan made again before it runs must name the same command."""
    return _text(qmgr, f" from store {origin}")


def _text(qmgr: str, tail: str) -> str:
    room = TEXT_LENGTH - len("mqjournal ") - len(tail)
    name = qmgr if len(qmgr) <= room else qmgr[: room - 1] + "~"
    return f"mqjournal {name}{tail}"
