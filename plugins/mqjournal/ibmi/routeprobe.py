"""Which way this host's save files download, tried on a scratch save file: `mqjournal doctor`'s one write.

The doctor creates an empty save file (CRTSAVF ``<save library>/MQJRTPROBE``), reads it with SFTP directly, and, if
that fails, through a stream file copy in the host's scratch directory (streamcopy: PASE `cp`, then `rm`), and, if
that fails too, through a copy by CPYTOSTMF; each read counts only when its bytes hash to the host's digest of the
save file, and the first way that works is the host's route. The save file is deleted (DLTF) in a ``finally``.
Every command and transfer goes through the session, so each has its audit intent and outcome. An empty save file is
the smallest there is; that a partition which reads an empty one reads a full one the same way is ASSUMED.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from mqjournal.errors import MqJournalError
from mqjournal.ibmi import commands, hostdigest, streamcopy
from mqjournal.ibmi.transfer import Route, remote_file
from mqjournal.ibmi.transport import ConnectionLost, HostUnreachable, IbmiSession

__all__ = ["PROBE_FILE", "RouteFound", "find_route"]

log = logging.getLogger(__name__)

PROBE_FILE = "MQJRTPROBE"
PROBE_RUN = "mqjournal-doctor"


@dataclass(frozen=True)
class RouteFound:
    route: Route | None  # None: neither way downloads a save file that hashes to the host's digest
    detail: str
    probed: bool = True  # False: the scratch save file could not be made, so nothing was learnt of the host


def find_route(session: IbmiSession, save_library: str) -> RouteFound:
    library = save_library
    where = f"{session.host} {library}/{PROBE_FILE}"
    made = session.run(commands.create_save_file(library, PROBE_FILE, "mqjournal doctor: download probe"))
    if made.exit_status != 0:
        said = (made.stderr.strip() or made.stdout.strip())[-200:] or f"exit status {made.exit_status}"
        return RouteFound(
            None, f"the scratch save file {library}/{PROBE_FILE} could not be created ({said})", probed=False
        )
    try:
        expected = hostdigest.file_sha256(session, commands.save_file_path(library, PROBE_FILE), where)
        direct = _read(session, commands.save_file_path(library, PROBE_FILE), expected)
        if direct is None:
            return RouteFound("direct", "SFTP reads /QSYS.LIB save files directly")
        copied = _through_stream_file(session, library, expected, "stream_file")
        if copied is None:
            return RouteFound(
                "stream_file",
                f"SFTP may not read /QSYS.LIB save files ({direct}); a copy in {session.scratch_directory} (PASE cp) "
                "downloads and matches the host's digest",
            )
        by_cl = _through_stream_file(session, library, expected, "cpytostmf")
        if by_cl is None:
            return RouteFound(
                "cpytostmf",
                f"SFTP may not read /QSYS.LIB save files ({direct}), nor could a PASE cp copy be downloaded "
                f"({copied}); a copy in {session.scratch_directory} by CPYTOSTMF downloads and matches the host's "
                "digest",
            )
        return RouteFound(
            None,
            f"the direct read failed ({direct}), and so did the stream file copy by PASE cp ({copied}) and the one "
            f"by CPYTOSTMF ({by_cl})",
        )
    except (MqJournalError, HostUnreachable, ConnectionLost) as exc:
        return RouteFound(None, f"the probe stopped: {exc}")
    finally:
        gone = session.run(commands.delete_save_file(library, PROBE_FILE))
        if gone.exit_status != 0:
            log.warning("%s: the scratch save file was not deleted; DLTF FILE(%s/%s)", where, library, PROBE_FILE)


def _through_stream_file(session: IbmiSession, library: str, expected: str, by: streamcopy.StreamRoute) -> str | None:
    """None when a scratch copy made `by` downloads and hashes to `expected`; otherwise why not."""
    try:
        return streamcopy.through_stream_file(
            session, library, PROBE_FILE, PROBE_RUN, expected, lambda scratch: _read(session, scratch, expected), by=by
        )
    except (MqJournalError, HostUnreachable, ConnectionLost) as exc:
        return str(exc)


def _read(session: IbmiSession, path: str, expected: str) -> str | None:
    """None when `path` downloads and its bytes hash to `expected`; otherwise why not. The bytes are only hashed."""
    remote = remote_file(session, path)
    digest = hashlib.sha256()
    try:
        with remote:
            remote.open()
            for chunk in remote.chunks():
                digest.update(chunk)
    except (OSError, HostUnreachable, ConnectionLost, MqJournalError) as exc:
        remote.done("failed", error=str(exc))
        return f"{type(exc).__name__}: {exc}"
    remote.done("ok", sha256=digest.hexdigest())
    if digest.hexdigest() != expected:
        return f"the bytes read hash to {digest.hexdigest()}, not the host's {expected}"
    return None
