"""A new save file for a save mqjournal makes: the first free name of the day's names, with a TEXT that says what it
holds. The receiver saves (executor) and the library saves (recovery) both make theirs here."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands
from mqjournal.ibmi.commands import save_file_path
from mqjournal.ibmi.readings import cl_messages
from mqjournal.ibmi.transport import IbmiSession, TransportError

log = logging.getLogger(__name__)


def create_save_file(
    session: IbmiSession,
    *,
    host: str,
    library: str,
    names: Sequence[str],
    text: str,
    known: Collection[str],
    error: type[MqJournalError],
) -> str:
    """CRTSAVF the first of `names` that is neither in `known` ("LIB/NAME", every save file the catalog ever named on
    the host) nor on the host (CPF5813): a save never writes into a file some record is about. Raises `error`,
    naming the save file, when CRTSAVF fails otherwise or every name is taken."""
    for name in names:
        if f"{library}/{name}" in known:
            continue
        out = session.run(commands.create_save_file(library, name, text))
        if out.exit_status == 0:
            return name
        if "CPF5813" not in out.msg_ids:
            messages = cl_messages(out.stdout, out.stderr)
            raise error(
                f"save file {library}/{name} on {host}",
                "; ".join(f"{m.id}: {m.text}" for m in messages) or "CRTSAVF failed",
                "check the save library exists and the user profile may create files in it",
                msg_id=messages[-1].id if messages else None,
            )
    raise error(
        f"save files {names[0]}-{names[-1]} in {library} on {host}",
        "every save file name of the day is taken",
        "clear save files that are backed up elsewhere, or save into another library (save_library)",
    )


def save_file_sizes(session: IbmiSession, paths: Sequence[str]) -> dict[str, int]:
    """The size on the host of each save file "LIB/NAME" of `paths` (SFTP stat of its QSYS.LIB path, one channel):
    what it takes on the ASP, for net space. A save file whose size cannot be read now is left out: net space says
    it is not known, rather than guess."""
    sizes: dict[str, int] = {}
    if not paths:
        return sizes
    try:
        with session.sftp() as sftp:
            for path in paths:
                library, name = path.split("/")
                try:
                    sizes[path] = sftp.stat(save_file_path(library, name)).st_size or 0
                except OSError as exc:
                    log.info("%s: the size of save file %s could not be read (%s)", session.host, path, exc)
    except (OSError, TransportError) as exc:
        log.info("%s: the sizes of save files %s could not be read (%s)", session.host, ", ".join(paths), exc)
    return sizes
