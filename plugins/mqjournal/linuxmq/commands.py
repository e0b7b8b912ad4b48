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
from pathlib import PurePosixPath

from mqjournal.ibmi.commands import Command
from mqjournal.linuxmq.extents import Extent
from mqjournal.names import qmgr_name

__all__ = [
    "LOG_STATUS_ATTRIBUTES",
    "display_log_status",
    "extent_digest",
    "list_extents",
    "queue_manager_info",
    "read_qm_ini",
    "record_media_images",
    "remove_extent",
    "set_log_archived",
]

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


def list_extents(active_directory: str) -> Command:
    """The files of the log's active directory with their sizes and modification times in seconds (GNU ls): the
    times are shown to people only, never planned by (IBM: "Use only the log file number", q018510)."""
    return Command(text=f"ls -l --time-style=+%s {shlex.quote(_directory(active_directory))}", idempotent=True)


def extent_digest(active_directory: str, extent: Extent) -> Command:
    """The host's SHA-256 of one extent (coreutils sha256sum): the proof a copy is checked against."""
    path = PurePosixPath(_directory(active_directory)) / extent.name
    return Command(text=f"sha256sum {shlex.quote(str(path))}", idempotent=True)


def remove_extent(active_directory: str, extent: Extent) -> Command:
    """Manual mode's release of an extent neither restart nor media recovery needs, once a copy of it is proven
    (q018510: "you can delete any log file with a number less than both the RECLOG and MEDIALOG values"). Never an
    R extent, which is MQ's; the path is absolute, so `rm` cannot read it as an option."""
    if extent.reusable:
        raise ValueError(f"{extent.name} is an extent MQ keeps for reuse: mqjournal never removes one")
    path = PurePosixPath(_directory(active_directory)) / extent.name
    return Command(text=f"rm -f {shlex.quote(str(path))}", idempotent=True)
