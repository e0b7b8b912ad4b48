"""What the host proves about backups: which receivers each save file holds, read from the save file itself.

A receiver's own save history (SAVE_TIMESTAMP, status SAVED) says that *some* save happened, not where: the
site's nightly SAVLIB sets it too, and a save file can be deleted afterwards. Only the content of a save file that
exists now (QSYS2.SAVE_FILE_OBJECTS) proves that a restore from it can bring the receiver back.

Whether a save file exists is read apart from its content (QSYS2.OBJECT_STATISTICS), so a save file that is gone
is told from one whose content could not be read without reading any message text (which comes in the job's
language): only a gone save file lets a step conclude that nothing was saved in it.

The backup store is asked too: a verified copy there of a save file that lists the receiver, whose bytes the host's
own digest vouched for when it was copied (`StoredObject.vouched`), is what makes a save a backup to delete against
(`rules.BackupEvidence.proven`), and outlives the save file's removal from the host.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog, StoredObject
from mqjournal.ibmi import capabilities, commands
from mqjournal.ibmi.db2out import Db2Failure, check_sql_runner, parse_results
from mqjournal.ibmi.transport import IbmiSession
from mqjournal.rules import BackupEvidence, EvidenceKey
from mqjournal.snapshot import Receiver

log = logging.getLogger(__name__)

# Statements per SSH round trip: each is one db2 run, and the command line stays well below any shell limit.
_PER_TRIP = 20


@dataclass(frozen=True)
class SaveFileContent:
    exists: bool | None  # None: could not be told
    receivers: frozenset[tuple[str, str]] | None  # (library, receiver) of its *JRNRCV objects; None: unreadable

    @property
    def known(self) -> bool:
        """Existence and content both read: a conclusion may be drawn from it."""
        return self.exists is False or self.receivers is not None

    def holds(self, library: str, receiver: str) -> bool:
        return (library, receiver) in (self.receivers or ())


def require_content_service(session: IbmiSession) -> None:
    """ServiceMissing when the partition has no QSYS2.SAVE_FILE_OBJECTS (IBM i 7.3, or 7.4/7.5 below the Db2 PTF group
    level that brings it): then no save can be proven, so nothing is saved for deletion and nothing is deleted.
    A catalog that cannot be read decides nothing here: the content query itself then fails, and proves nothing."""
    try:
        caps = capabilities.read(session)
    except capabilities.CapabilitiesUnreadable:
        return
    caps.require("save")


def save_file_contents(session: IbmiSession, save_files: Iterable[str]) -> dict[str, SaveFileContent]:
    """{"LIB/NAME": whether it exists and which receivers it holds}, for every save file asked about."""
    require_content_service(session)
    wanted = sorted(set(save_files))
    libraries = sorted({path.split("/")[0] for path in wanted})
    statements = [commands.save_files(library) for library in libraries]
    statements += [commands.save_file_objects(*path.split("/")) for path in wanted]
    results: list = []
    for start in range(0, len(statements), _PER_TRIP):
        chunk = statements[start : start + _PER_TRIP]
        out = session.run(commands.sql(*chunk, runner=session.sql_runner))
        check_sql_runner(session, out)
        found = parse_results(out.stdout)
        results += found + [None] * (len(chunk) - len(found))
    listed: dict[str, set[str] | None] = {}
    # The libraries' answers come first; the save files' follow them (one per statement, padded above).
    for library, result in zip(libraries, results, strict=False):
        listed[library] = None if result is None or isinstance(result, Db2Failure) else {r["OBJNAME"] for r in result}
    contents = {}
    for path, result in zip(wanted, results[len(libraries) :], strict=True):
        library, name = path.split("/")
        names = listed[library]
        exists = None if names is None else name in names
        readable = result is not None and not isinstance(result, Db2Failure)
        contents[path] = SaveFileContent(
            exists=exists,
            receivers=frozenset((r["LIBRARY_NAME"], r["OBJECT_NAME"]) for r in result if r["OBJECT_TYPE"] == "*JRNRCV")
            if readable and exists is not False
            else None,
        )
    return contents


def evidence_for(
    session: IbmiSession,
    catalog: Catalog,
    host: str,
    receivers: Iterable[Receiver],
    store: BackupStore | None = None,
) -> dict[EvidenceKey, list[BackupEvidence]]:
    """Every catalogued save of each receiver, checked on the host now (one round trip per 20 save files), and in
    the backup store: a verified copy there that lists the receiver (none without a store)."""
    require_content_service(session)  # before any save or delete: without it nothing can be proven
    # A receiver without an attach time has no catalogued save: the catalog keys saves on it.
    known = {(r.library, r.name, r.attached_at): r for r in receivers if r.attached_at is not None}
    # All of the queue manager's receivers in one read of the catalog each, not one per receiver.
    saves = catalog.saves_of_each(host, known)
    copies = catalog.off_partition_copies_of_each(host, known) if store is not None else {}
    files = {f"{s.save_file_library}/{s.save_file}" for found in saves.values() for s in found}
    contents = save_file_contents(session, files) if files else {}
    discarded = catalog.discarded_save_files(host) if files else set()
    evidence: dict[EvidenceKey, list[BackupEvidence]] = {}
    checked: dict[str, str | None] = {}  # store key -> why it does not count (None: it does), asked once per copy
    for key, receiver in known.items():
        found = saves[key]
        stored = _stored_keys(copies.get(key, []), store, host, receiver, checked)
        evidence[key] = [
            BackupEvidence(
                save_file=path,
                # Unknown counts as gone: a save file that cannot be seen proves nothing.
                on_host=contents[path].exists is True,
                lists_receiver=contents[path].holds(receiver.library, receiver.name),
                discarded=path in discarded,
                # Taken after detach, and holding the last entry the receiver has now.
                complete=s.detached_at is not None and s.last_sequence == receiver.last_sequence,
                stored_key=stored.get(path),
            )
            for s in found
            for path in [f"{s.save_file_library}/{s.save_file}"]
        ]
    return evidence


def _stored_keys(
    copies: list[StoredObject],
    store: BackupStore | None,
    host: str,
    receiver: Receiver,
    checked: dict[str, str | None],
) -> dict[str, str]:
    """{"LIB/NAME": store key} of the save files holding this receiver incarnation (`copies`, as catalogued) that
    `store` holds now, as verified when they were copied (only the current store counts: another one cannot be
    checked from here). `checked` carries the store's answers between receivers: one save file holds up to 300."""
    if store is None:
        return {}
    found: dict[str, str] = {}
    for copy in copies:
        if copy.store_url != store.url or copy.save_file_path in found:
            continue
        if copy.key not in checked:
            # Only bytes the host's own digest vouched for are a backup (ibmi/hostdigest.py): a copy made before the
            # host's digest was read, or from a host without one, is kept in the store and proves nothing.
            checked[copy.key] = (
                store.still_holds(copy)
                if copy.vouched
                else f"{copy.key}: the host's digest never vouched for its bytes (copied without one)"
            )
        problem = checked[copy.key]
        if problem is None:
            found[copy.save_file_path] = copy.key
        else:
            log.warning("%s %s/%s: the stored copy does not count: %s", host, receiver.library, receiver.name, problem)
    return found
