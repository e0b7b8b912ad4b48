"""What the host proves about backups: which receivers each save file holds, read from the save file itself.

A receiver's own save history (SAVE_TIMESTAMP, status SAVED) says that *some* save happened, not where: the
site's nightly SAVLIB sets it too, and a save file can be deleted afterwards. Only the content of a save file that
exists now (QSYS2.SAVE_FILE_OBJECTS) proves that a restore from it can bring the receiver back.
"""

from __future__ import annotations

from collections.abc import Iterable

from mqjournal.catalog import Catalog
from mqjournal.ibmi import commands
from mqjournal.ibmi.db2out import Db2Failure, parse_results
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.rules import BackupEvidence, EvidenceKey
from mqjournal.snapshot import Receiver

# Statements per SSH round trip: each is one db2 run, and the command line stays well below any shell limit.
_PER_TRIP = 20

Content = frozenset[tuple[str, str]]  # (library, receiver) of the *JRNRCV objects a save file holds


class SaveFileUnreadable(Exception):
    """SAVE_FILE_OBJECTS failed for a reason other than the save file being gone."""


def save_file_contents(session: IbmiSession, save_files: Iterable[str]) -> dict[str, Content | None]:
    """{"LIB/NAME": the receivers it holds, or None when the save file does not exist (or cannot be read)}."""
    wanted = sorted(set(save_files))
    found: dict[str, Content | None] = {}
    for start in range(0, len(wanted), _PER_TRIP):
        chunk = wanted[start : start + _PER_TRIP]
        statements = [commands.save_file_objects(*path.split("/")) for path in chunk]
        out = session.run(commands.sql(*statements))
        results = parse_results(out.stdout)
        for index, path in enumerate(chunk):
            result = results[index] if index < len(results) else None
            if result is None or isinstance(result, Db2Failure):
                # Gone, or unreadable: either way it proves nothing, and the receiver is kept.
                found[path] = None
            else:
                found[path] = frozenset(
                    (row["LIBRARY_NAME"], row["OBJECT_NAME"]) for row in result if row["OBJECT_TYPE"] == "*JRNRCV"
                )
    return found


def evidence_for(
    session: IbmiSession, catalog: Catalog, host: str, receivers: Iterable[Receiver]
) -> dict[EvidenceKey, list[BackupEvidence]]:
    """Every catalogued save of each receiver, checked on the host now (one round trip per 20 save files)."""
    receivers = [r for r in receivers if r.attached_at is not None]
    saves = {
        (r.library, r.name, r.attached_at): (r, catalog.saves_of(host, r.library, r.name, r.attached_at))
        for r in receivers
    }
    files = {f"{s.save_file_library}/{s.save_file}" for _, found in saves.values() for s in found}
    contents = save_file_contents(session, files) if files else {}
    discarded = catalog.discarded_save_files(host) if files else set()
    evidence: dict[EvidenceKey, list[BackupEvidence]] = {}
    for key, (receiver, found) in saves.items():
        evidence[key] = [
            BackupEvidence(
                save_file=path,
                on_host=contents.get(path) is not None,
                lists_receiver=(receiver.library, receiver.name) in (contents.get(path) or ()),
                discarded=path in discarded,
                # Taken after detach, and holding the last entry the receiver has now.
                complete=s.detached_at is not None and s.last_sequence == receiver.last_sequence,
            )
            for s in found
            for path in [f"{s.save_file_library}/{s.save_file}"]
        ]
    return evidence
