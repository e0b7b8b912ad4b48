"""The commands mqjournal sends to a Linux queue manager host, built from validated names only.

Control commands run from the installation's bin directory (LinuxHostConfig.mq_bin) with their arguments as plain
shell words: a queue manager name (`[A-Za-z0-9._/%]{1,48}`), an extent name (`S` + 7 digits + `.LOG`) and the
directories the fleet file checked need no quoting, and anything else is refused before a command exists. MQSC goes
to `runmqsc QM` on its standard input, never through the shell (docs/linux-interfaces.md, section 9), one command
per line of values checked here: a `;`, a line break or a trailing `+`/`-` could otherwise start a second command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType

from mqjournal.errors import InvalidName
from mqjournal.ibmi.commands import DIGEST_PROBE, Command
from mqjournal.linuxmq.extents import Extent
from mqjournal.names import mq_name, qmgr_name

__all__ = [
    "LOG_STATUS_ATTRIBUTES",
    "OBJECT_TYPES",
    "OPENSSL_DGST",
    "QUEUE_TYPES",
    "SHA256SUM",
    "TOOLBOX_SHA256SUM",
    "DigestTool",
    "digest_probe",
    "display_image_schedule",
    "display_log_status",
    "display_queue_media_log",
    "extent_digest",
    "file_system_usage",
    "list_extents",
    "list_extents_posix",
    "list_queue_managers",
    "object_type",
    "queue_manager_info",
    "queue_manager_status",
    "read_qm_ini",
    "record_media_images",
    "recreate_object",
    "remove_extent",
    "set_log_archived",
    "start_queue_manager",
    "user_groups",
]

OBJECT_TYPES: Mapping[str, str | None] = MappingProxyType(
    {
        "all": None,
        "*": None,
        "qmgr": "qmgr",
        "queue": "queue",
        "q": "queue",
        "qlocal": "queue",
        "ql": "queue",
        "channel": "channel",
        "chl": "channel",
        "process": "process",
        "prcs": "process",
        "namelist": "namelist",
        "nl": "namelist",
        "authinfo": "authinfo",
        "listener": "listener",
        "lstr": "listener",
        "service": "service",
        "srvc": "service",
        "topic": "topic",
        "top": "topic",
    }
)
"""rcdmqimg's and rcrmqobj's `-t` words, each with the kind of object it selects (None: every kind). Verified:
"* or all", authinfo, "channel or chl" (q083370, q083360; both pages' tables were cut after their first rows); the
other words are runmqsc's names for the same objects (ASSUMED). The simulator answers by the same table."""

QUEUE_TYPES = frozenset(word for word, kind in OBJECT_TYPES.items() if kind == "queue")
"""The `-t` words of a queue: the only objects MQ shows a media recovery extent of their own for (DISPLAY QSTATUS
MEDIALOG, docs/linux-interfaces.md section 6)."""

_DIRECTORY = re.compile(r"/(?:[A-Za-z0-9._!&%-]+/)*[A-Za-z0-9._!&%-]*")

LOG_STATUS_ATTRIBUTES = ("CURRLOG", "RECLOG", "MEDIALOG", "ARCHLOG", "LOGPATH")
"""Named rather than `LOG` or `ALL`: every level since MQ 9.0.2 knows these five (docs, section 4); a name an older
level does not know would fail the whole command with a syntax error."""


def _directory(path: str) -> str:
    # The on-disk forms of MQ names use '!' and '&' ('.' and '/' transformed): both are shell words' characters
    # only outside quotes, so they are quoted below all the same.
    if not _DIRECTORY.fullmatch(path) or ".." in path.split("/"):
        raise ValueError(f"{path!r} is not a plain absolute directory")
    return path


def _program(bin_dir: str, name: str) -> str:
    return str(PurePosixPath(_directory(bin_dir)) / name)


def display_log_status(bin_dir: str, qmgr: str) -> Command:
    """DISPLAY QMSTATUS with the log attributes, through runmqsc on its standard input."""
    return Command(
        text=f"{_program(bin_dir, 'runmqsc')} {qmgr_name(qmgr)}",
        idempotent=True,
        stdin=f"DISPLAY QMSTATUS {' '.join(LOG_STATUS_ATTRIBUTES)}\n",
    )


def set_log_archived(bin_dir: str, qmgr: str, extent: Extent) -> Command:
    """SET LOG ARCHIVED for one `S` extent (Archive mode): a repeat succeeds while MQ still has the extent, so it may
    be sent again; once MQ reused it the repeat is refused, and release reads the directory to tell (release.py)."""
    if extent.reusable:
        raise ValueError(f"{extent.name} is an extent MQ keeps for reuse: only S extents are notified as archived")
    return Command(
        text=f"{_program(bin_dir, 'runmqsc')} {qmgr_name(qmgr)}",
        idempotent=True,
        stdin=f"SET LOG ARCHIVED('{extent.name}')\n",
    )


def object_type(value: str) -> str:
    """`value` as rcrmqobj's `-t` word (lower case); InvalidName for a word it does not take."""
    word = value.lower() if isinstance(value, str) else ""
    if word not in OBJECT_TYPES:
        raise InvalidName(
            repr(value),
            "not an object type rcrmqobj takes",
            "use one of " + ", ".join(sorted(OBJECT_TYPES)),
        )
    return "all" if word == "*" else word  # a bare * on the command line is the shell's, not rcrmqobj's


def record_media_images(bin_dir: str, qmgr: str) -> Command:
    """rcdmqimg of every object (`-t all *`); `-l` writes AMQ7467I/AMQ7468I. The `*` is quoted: unquoted, the
    user's shell would replace it with the names of the files in its working directory."""
    return Command(
        text=f"{_program(bin_dir, 'rcdmqimg')} -l -m {qmgr_name(qmgr)} -t all {shlex.quote('*')}", idempotent=True
    )


def queue_manager_info(bin_dir: str, qmgr: str) -> Command:
    """dspmqinf's stanza for the queue manager (its Directory, Prefix and DataPath): where its qm.ini is."""
    return Command(text=f"{_program(bin_dir, 'dspmqinf')} -o stanza {qmgr_name(qmgr)}", idempotent=True)


def read_qm_ini(data_path: str) -> Command:
    return Command(text=f"cat {shlex.quote(str(PurePosixPath(_directory(data_path)) / 'qm.ini'))}", idempotent=True)


@dataclass(frozen=True)
class DigestTool:
    """A program that prints a file's SHA-256 as `<64 hex> [ *]<path>` (coreutils' format), and what installs it."""

    name: str
    words: tuple[str, ...]
    """The program and its options, before the file: plain words, never a user's input."""
    brought_by: str

    def command(self, path: str) -> Command:
        return Command(text=" ".join([*self.words, shlex.quote(path)]), idempotent=True)


SHA256SUM = DigestTool("sha256sum", ("sha256sum",), "GNU coreutils")
"""coreutils' sha256sum, found on the PATH of the user's SSH commands: `<hex>  <path>` (every Linux distribution)."""
OPENSSL_DGST = DigestTool("openssl", ("openssl", "dgst", "-sha256", "-r"), "OpenSSL (AIX fileset openssl.base)")
"""`openssl dgst -sha256 -r`: `<hex> *<path>`, the coreutils format `-r` asks for (OpenSSL's dgst manual); the
program the IBM i side runs too (ibmi/hostdigest.py). On AIX from the openssl.base fileset (docs section 12)."""
TOOLBOX_SHA256SUM = DigestTool("sha256sum", ("/opt/freeware/bin/sha256sum",), "coreutils of the AIX Toolbox (dnf)")
"""GNU sha256sum as IBM's AIX Toolbox for Open Source Software installs it (ASSUMED path: the Toolbox's prefix)."""


def list_extents(active_directory: str) -> Command:
    """The files of the log's active directory with their sizes and modification times in seconds (GNU ls): the
    times are shown to people only, never planned by (IBM: "Use only the log file number", q018510)."""
    return Command(text=f"ls -l --time-style=+%s {shlex.quote(_directory(active_directory))}", idempotent=True)


def list_extents_posix(active_directory: str) -> Command:
    """The files of the log's active directory as POSIX's `ls -l` lists them, in the POSIX locale (`LC_ALL=C` before
    the command, for the shell to put in its environment): dates `Mon dd hh:mm` or `Mon dd  yyyy`, the only forms
    POSIX gives, in English month names whatever the host's own locale. For an ls with none of GNU's options (AIX:
    docs section 12); the times are shown to people only, never planned by."""
    return Command(text=f"LC_ALL=C ls -l {shlex.quote(_directory(active_directory))}", idempotent=True)


def extent_digest(active_directory: str, extent: Extent, tool: DigestTool = SHA256SUM) -> Command:
    """The host's SHA-256 of one extent, by `tool` (linuxmq/platforms.py says which): the proof a copy is checked
    against."""
    return tool.command(str(PurePosixPath(_directory(active_directory)) / extent.name))


def remove_extent(active_directory: str, extent: Extent) -> Command:
    """Manual mode's release of an extent neither restart nor media recovery needs, once a copy of it is proven
    (q018510: "you can delete any log file with a number less than both the RECLOG and MEDIALOG values"). Never an
    R extent, which is MQ's; the path is absolute, so `rm` cannot read it as an option."""
    if extent.reusable:
        raise ValueError(f"{extent.name} is an extent MQ keeps for reuse: mqjournal never removes one")
    path = PurePosixPath(_directory(active_directory)) / extent.name
    return Command(text=f"rm -f {shlex.quote(str(path))}", idempotent=True)


# --- what `mqjournal doctor` reads (linuxmq/doctor.py): nothing here changes the host --------------------------------


def user_groups() -> Command:
    """The groups of the signed-on session, by name (POSIX `id -G -n`): those of this login, so a user added to mqm
    since shows it only after signing on again."""
    return Command(text="id -G -n", idempotent=True)


def list_queue_managers(bin_dir: str) -> Command:
    """dspmq: every queue manager of the installation and its status, `QMNAME(QM1)  STATUS(Running)` a line."""
    return Command(text=_program(bin_dir, "dspmq"), idempotent=True)


def display_image_schedule(bin_dir: str, qmgr: str) -> Command:
    """DISPLAY QMGR IMGSCHED: whether the queue manager records media images of its own (AUTO) or not (MANUAL)."""
    return Command(
        text=f"{_program(bin_dir, 'runmqsc')} {qmgr_name(qmgr)}", idempotent=True, stdin="DISPLAY QMGR IMGSCHED\n"
    )


def digest_probe(tool: DigestTool = SHA256SUM) -> Command:
    """`tool` on /dev/null, as extent_digest runs it: an answer of the empty file's SHA-256 shows the host can vouch
    for an extent's bytes with it."""
    return tool.command(DIGEST_PROBE)


def file_system_usage(directory: str) -> Command:
    """The size, use and room of the file system holding `directory`, in POSIX's portable format and KiB
    (`df -P -k`: one line per file system, never wrapped)."""
    return Command(text=f"df -P -k {shlex.quote(_directory(directory))}", idempotent=True)


# --- what a recovery reads and sends (linuxmq/recover.py) ------------------------------------------------------------


def queue_manager_status(bin_dir: str, qmgr: str) -> Command:
    """dspmq of one queue manager: `STATUS(Running)` or `STATUS(Ended ...)`, and exit 72 for a name it does not know
    (docs, section 4): whether it runs is read here, not from whether runmqsc answers."""
    return Command(text=f"{_program(bin_dir, 'dspmq')} -m {qmgr_name(qmgr)}", idempotent=True)


def display_queue_media_log(bin_dir: str, qmgr: str, queue: str) -> Command:
    """DISPLAY QSTATUS of one queue with its MEDIALOG, the oldest extent its own media recovery needs (q086260). The
    name is quoted: MQSC folds an unquoted name to upper case, and a validated name holds no quote to close it."""
    return Command(
        text=f"{_program(bin_dir, 'runmqsc')} {qmgr_name(qmgr)}",
        idempotent=True,
        stdin=f"DISPLAY QSTATUS('{mq_name(queue, what='queue')}') TYPE(QUEUE) MEDIALOG\n",
    )


def start_queue_manager(bin_dir: str, qmgr: str) -> Command:
    """strmqm: its restart replays the log from RECLOG. Not sent twice on a lost answer: dspmq says what happened."""
    return Command(text=f"{_program(bin_dir, 'strmqm')} {qmgr_name(qmgr)}", idempotent=False)


def recreate_object(bin_dir: str, qmgr: str, kind: str, name: str) -> Command:
    """rcrmqobj of one object from its media image and the log after it (q083370). One object by its name: a generic
    name (a trailing `*`) is not built here, so an approval names what is re-created."""
    return Command(
        text=f"{_program(bin_dir, 'rcrmqobj')} -m {qmgr_name(qmgr)} -t {object_type(kind)} {mq_name(name)}",
        idempotent=False,
    )
