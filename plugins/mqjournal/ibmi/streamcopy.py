"""A save file's download through a stream file, for partitions whose sftp-server does not read QSYS.LIB itself.

IBM's own tools never read ``/QSYS.LIB/LIB.LIB/NAME.FILE`` with SFTP: ansible-for-i's ``ibmi_fetch`` runs PASE
``cp /QSYS.LIB/LIB.LIB/NAME.FILE /tmp/.ansible`` and fetches that copy (``rm`` in a ``finally``), vscode-ibmi-fs runs
``CPYTOSTMF FROMMBR('/QSYS.LIB/LIB.LIB/NAME.FILE') TOSTMF(...) STMFOPT(*REPLACE)`` and ``rm -f`` afterwards
(docs/ibmi-interfaces.md, section 5). mqjournal keeps the direct read as the default and copies where the host is
recorded as needing it (`routes`, written by `mqjournal doctor`): "stream_file" by ansible's `cp` (a byte copy, with
none of CPYTOSTMF's CCSID options to get right), "cpytostmf" by CPYTOSTMF where PASE `cp` may not read the save file
either (IBM documents that CPYTOSTMF copies a save file to a stream file, converting only database members). The
stream file is in the host's scratch directory (the fleet file's `scratch_directory`, IbmiSession.scratch_directory).

The proof rules are the direct path's: the host's digest of the save file is read first (`hostdigest.read_proof`),
the stream file's digest must equal it (else the save changed between the two, or the copy is not byte for byte:
NotOurBytes, nothing downloaded), and the download must hash to it (transfer). The stream file is removed in a
``finally``; a removal that fails is logged with the file's name and the command that removes it, and does not undo
a verified copy.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal, TypeVar

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands, hostdigest
from mqjournal.ibmi.transport import CommandOutput, ConnectionLost, HostUnreachable, IbmiSession

__all__ = ["ScratchCopyFailed", "StreamRoute", "through_stream_file"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")


StreamRoute = Literal["stream_file", "cpytostmf"]
"""How the scratch copy is made: PASE `cp` ("stream_file", what hosts recorded before CPYTOSTMF was tried), or CL
CPYTOSTMF."""


class ScratchCopyFailed(MqJournalError):
    """The save file could not be copied into its scratch stream file (PASE `cp`, or CPYTOSTMF): nothing was
    downloaded."""


def through_stream_file(
    session: IbmiSession,
    library: str,
    name: str,
    run_id: str,
    host_sha256: str,
    download: Callable[[str], _T],
    *,
    by: StreamRoute,
) -> _T:
    """`download(stream_file)` of a scratch copy of save file `library`/`name` made `by` PASE `cp` ("stream_file") or
    CPYTOSTMF, once the host's digest of that copy equals `host_sha256` (the save file's, read just before); the
    copy is removed afterwards, whatever happened."""
    where = f"{session.host} {library}/{name}"
    scratch = commands.scratch_file_path(library, name, run_id, session.scratch_directory)
    how = "PASE cp" if by == "stream_file" else "CPYTOSTMF"
    try:
        out = _copy(session, library, name, scratch, by)
        if out.exit_status != 0:
            said = (out.stderr.strip() or out.stdout.strip())[-300:] or f"exit status {out.exit_status}"
            raise ScratchCopyFailed(
                where,
                f"{how} could not copy the save file to the stream file {scratch} ({said}); nothing was downloaded",
                f"check that {session.scratch_directory} can be created and written by {session.user} (and has "
                "room for the save file; the fleet file's scratch_directory names another), then run the step again; "
                "if the copy itself is refused, run mqjournal doctor: it records CPYTOSTMF where that copies instead",
            )
        copied = hostdigest.file_sha256(session, scratch, where)
        if copied != host_sha256:
            raise hostdigest.NotOurBytes(
                where,
                f"the stream file's SHA-256 {copied} is not the save file's {host_sha256}: the save file changed "
                "between its digest and its copy (or the copy is not byte for byte), so the copy is not this save's; "
                "nothing was downloaded",
                "run the step again once nothing else saves into this save file",
            )
        return download(scratch)
    finally:
        _remove(session, scratch, where)


def _copy(session: IbmiSession, library: str, name: str, scratch: str, by: StreamRoute) -> CommandOutput:
    if by == "stream_file":
        return session.run(commands.copy_to_stream_file(library, name, scratch))
    made = session.run(commands.make_scratch_directory(scratch))
    if made.exit_status != 0:
        return made  # CPYTOSTMF would only say the directory is missing (CPFA0A9)
    return session.run(commands.copy_to_stream_file_by_cl(library, name, scratch))


def _remove(session: IbmiSession, scratch: str, where: str) -> None:
    command = commands.remove_stream_file(scratch)
    try:
        out = session.run(command)
    except (HostUnreachable, ConnectionLost, MqJournalError) as exc:
        log.warning(
            "%s: the stream file %s was not removed (%s); remove it on the host: %s", where, scratch, exc, command
        )
        return
    if out.exit_status != 0:
        log.warning(
            "%s: the stream file %s was not removed (%s); remove it on the host: %s",
            where,
            scratch,
            (out.stderr.strip() or f"exit status {out.exit_status}")[-200:],
            command,
        )
