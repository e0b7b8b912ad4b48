"""The safety invariants of mqjournal, checked against the simulator's own truth.

Nothing here asks mqjournal what it did: the partition model (receivers, the journal's history of which receiver
held which entries, MQ's recovery points, the save files' contents) is the truth about the host, the simulator's
`CommandLog` is the truth about which commands the host received and what became of them, and the audit log and
the catalog are what mqjournal wrote down. The invariants:

1. **No receiver lost**: every receiver holding an entry at or after MQ's true oldest needed entry
   (`mq.oldest_needed`) is on the host, readable and in the journal's directory; on a deep copy of the partition,
   a power loss (`mq.crash`), STRMQM and RCRMQMOBJ of every object (each replayed from its media image) succeed.
2. **Every deletion is backed by a save**: each receiver mqjournal deleted (the catalog's deletions, and every
   DLTJRNRCV the host ran for mqjournal) has a catalog save record naming a save file that is on the host and whose
   content lists that receiver, fully saved (or, once the file is gone from the host, whose copy in the backup store
   verifies and lists it); and, when the scenario has a backup store, a copy of such a save file in the store that
   verifies (size and SHA-256 re-read) and whose object list holds that receiver incarnation; and a copy whose
   bytes the host's digest vouched for (`host_sha256` equal to its SHA-256) and whose bytes themselves, read as the
   save file's records, hold that receiver incarnation.
3. **Every command recorded**: every command the host received has an audit record (an intent, or an old-style
   record), the audit's answers are the host's, and every intent has an outcome or, when none came back, a
   `reconciled` record written by a later run.
4. **Catalog and host agree**: every catalog save is in its save file; every receiver in a save file mqjournal
   made is in the catalog; every DLTJRNRCV the host ran for mqjournal is a catalog deletion and the reverse;
   nothing is saved twice into one save file, and no receiver is recorded deleted twice. Where the catalog keeps
   operation intents (`Catalog.operations`), every SAVOBJ and DLTJRNRCV the host received has one, and none is
   left open.

A save file someone else deleted (`removed_save_files`) is not held against the catalog's saves in it, nor
against the deletions made before it went (`excused_deletions`: (receiver, save file) pairs the scenario notes when
it removes the file); a deletion made after it went is mqjournal's. Save files discarded by backup expiry are
mqjournal's own decision and excuse what was in them.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from mqjournal.backupstore import BackupStore
from mqjournal.catalog import Catalog
from mqjournal.sim import mq, savfdata
from mqjournal.sim.joblog import CommandError, JobLog
from mqjournal.sim.model import Partition

__all__ = [
    "CATALOGUED_VERBS",
    "Report",
    "SafetyChecker",
    "Violation",
    "cl_text",
    "cl_verb",
    "read_audit_events",
]

# Commands the catalog must hold an intent for before they are sent (the step stops before them without it).
CATALOGUED_VERBS = frozenset({"SAVOBJ", "SAVLIB", "DLTJRNRCV", "DLTF", "CLRSAVF", "DLTLIB"})

_PARAM = r"{}\(([^)]*)\)"


@functools.lru_cache(maxsize=4096)
def cl_text(command_line: str) -> str | None:
    """The CL of a `system '...'` command line, or None for anything else (SQL through db2, cat ...)."""
    if not command_line.lstrip().startswith(("system", "/QOpenSys/usr/bin/system")):
        return None
    try:
        tokens = shlex.split(command_line)
    except ValueError:
        return None
    if not tokens or tokens[0].rsplit("/", 1)[-1] != "system":
        return None
    rest = tokens[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[1:]
    return " ".join(rest) or None


def cl_verb(command_line: str) -> str | None:
    text = cl_text(command_line)
    return text.split(None, 1)[0].upper() if text else None


def cl_param(command_line: str, keyword: str) -> str | None:
    text = cl_text(command_line) or ""
    found = re.search(_PARAM.format(keyword), text, re.IGNORECASE)
    return found.group(1).strip() if found else None


def read_audit_events(paths: Iterable[Path]) -> list[dict]:
    """Every record of the audit files, in file order; old-style records (no `event`) are outcomes of their own."""
    events: list[dict] = []
    for path in paths:
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                # A worker killed mid-write may leave a torn last line; anything else is a broken audit log.
                events.append({"event": "torn", "line": number, "path": str(path), "text": line[:200]})
    return events


@dataclass(frozen=True)
class Violation:
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.detail}"


@dataclass
class Report:
    violations: list[Violation] = field(default_factory=list)
    lost_receivers: list[str] = field(default_factory=list)
    unrecorded_commands: list[str] = field(default_factory=list)
    commands_received: int = 0
    intents: int = 0

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, rule: str, detail: str) -> None:
        self.violations.append(Violation(rule, detail))

    def extend(self, other: Report) -> None:
        self.violations += other.violations
        self.lost_receivers += other.lost_receivers
        self.unrecorded_commands += other.unrecorded_commands

    def __str__(self) -> str:
        if self.ok:
            return "all invariants hold"
        return "\n".join(str(v) for v in self.violations)


def _same_instant(a: datetime | None, b: datetime | None) -> bool:
    return a is not None and b is not None and a == b


def _short(command_line: str) -> str:
    return cl_text(command_line) or command_line[:120]


def _at(record: dict | None) -> float | None:
    written = record.get("at") if record is not None else None
    return datetime.fromisoformat(written).timestamp() if written is not None else None


def _answer_window(attempt: tuple[dict, dict | None]) -> tuple[float, float] | None:
    """When an attempt with the host's answer (ok or failed) waited for it: from its intent to its outcome (the
    records keep milliseconds: the outcome's is let off by one); None for any other attempt."""
    intent, outcome = attempt
    sent, answered = _at(intent), _at(outcome)
    if outcome is None or outcome.get("outcome") not in ("ok", "failed") or sent is None or answered is None:
        return None
    return sent, answered + 0.001


def audit_report(host_name: str, received, events: list[dict], *, require_reconciled: bool = True) -> Report:
    """Invariant 3 for one host: every command line it received (`received`, the simulator's `CommandLog` entries)
    is an attempt in the audit `events` with the same text and standard input, its intent written before the command
    arrived; the audit's answers are the host's; every intent has an outcome (or, `require_reconciled`, a record
    reconciling it)."""
    report = Report()
    for e in events:
        if e.get("event") == "torn":
            report.add("audit", f"{e['path']}:{e['line']} is not a JSON record: {e['text']!r}")
    attempts = []  # (intent-like record, outcome record or None)
    outcomes: dict[str, dict] = {}
    reconciled: dict[str, dict] = {}
    for e in events:
        kind = e.get("event")
        if kind == "outcome":
            outcomes[e.get("id", "")] = e
        elif kind == "reconciled":
            reconciled[e.get("id", "")] = e
    for e in events:
        kind = e.get("event")
        if kind is None and "command" in e:
            attempts.append((e, e))  # an old-style record: written after the answer, intent and outcome in one
        elif kind == "intent":
            attempts.append((e, outcomes.get(e.get("id", ""))))
    intent_ids = {e.get("id") for e, _ in attempts}
    for record_id, e in reconciled.items():
        if record_id not in intent_ids:
            report.add("audit", f"a reconciled record names no intent: {e}")

    # Every command the host received is an attempt in the audit (matched in order, by its exact text and what it
    # read on its standard input: `runmqsc QM` is a DISPLAY or a SET LOG ARCHIVED by its MQSC alone).
    queues: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, (intent, _) in enumerate(attempts):
        # SFTP transfers (`transfer` set) travel on the connection but are no command lines: the host's command
        # log never holds them, so only their intent/outcome pairing is checked below.
        if intent.get("host", host_name) == host_name and "transfer" not in intent:
            queues[(intent["command"], intent.get("input") or "")].append(index)
    matched: dict[int, object] = {}
    windows = [_answer_window(attempt) for attempt in attempts]
    for entry in received:
        queue = queues.get((entry.command, entry.stdin or ""))
        if not queue:
            what = "ran" if entry.ran else entry.state
            report.unrecorded_commands.append(_short(entry.command))
            report.add(
                "unrecorded command",
                f"the host received `{_short(entry.command)}` ({what}"
                f"{', exit ' + str(entry.exit_status) if entry.exit_status is not None else ''}) and "
                "the audit log has no record of it",
            )
            continue
        # In audit order, but an attempt with the host's answer takes the command that arrived while it waited for
        # one: a killed worker's intent for the same text may never have left (its worker died between the record
        # and the send), and in order alone it would take the command of the attempt after it.
        index = next((i for i in queue if (w := windows[i]) is not None and w[0] <= entry.arrived_at <= w[1]), queue[0])
        queue.remove(index)
        matched[index] = entry
        written = attempts[index][0].get("at") if attempts[index][0].get("event") == "intent" else None
        if written is not None and datetime.fromisoformat(written).timestamp() > entry.arrived_at:
            # The intent must be on disk before the command leaves: a worker dying while the host runs it leaves
            # the intent, and nothing else, for the next run to reconcile.
            report.add(
                "intent after the command",
                f"`{_short(entry.command)}` arrived at the host before its intent was written ({written})",
            )
    for index, (intent, outcome) in enumerate(attempts):
        entry = matched.get(index)
        if outcome is not None:
            said = outcome.get("outcome")
            if said in ("ok", "failed") and "transfer" not in intent:
                if entry is None:
                    report.add(
                        "audit disagrees",
                        f"`{_short(intent['command'])}` is recorded {said} but the host never received it",
                    )
                elif entry.exit_status != outcome.get("exit_status"):
                    report.add(
                        "audit disagrees",
                        f"`{_short(intent['command'])}` is recorded with exit "
                        f"{outcome.get('exit_status')}, the host answered {entry.exit_status}",
                    )
            continue
        if intent.get("id") in reconciled:
            continue
        if require_reconciled:
            host_side = (
                "the host never received it"
                if entry is None
                else f"the host {'ran it, exit ' + str(entry.exit_status) if entry.ran else entry.state}"
            )
            report.add(
                "unexplained intent",
                f"`{_short(intent['command'])}` has an intent and neither an "
                f"outcome nor a reconciled record ({host_side})",
            )
    return report


class SafetyChecker:
    """The invariants for one simulated host, its queue managers, one catalog and the audit files of mqjournal.

    `received` gives the commands the host received from mqjournal (the simulator's `CommandLog` entries for the
    host); commands someone else runs must not go through it (scenarios run them on the host directly).
    """

    def __init__(
        self,
        *,
        host,
        host_name: str,
        catalog: Catalog,
        audit_paths: Sequence[Path],
        received,
        store: BackupStore | None = None,
    ) -> None:
        self.store = store
        self.host = host
        self.host_name = host_name
        self.catalog = catalog
        self.audit_paths = list(audit_paths)
        self._received = received

    # --- the whole check ------------------------------------------------------------------------------------

    def check(
        self,
        *,
        removed_save_files: Collection[str] = (),
        excused_deletions: Collection[tuple[str, str]] = (),
        require_reconciled: bool = True,
    ) -> Report:
        with self.host.lock:
            partition = self.host.partition.model_copy(deep=True)
        received = self._received()
        events = read_audit_events(self.audit_paths)
        report = Report()
        report.extend(self.receivers(partition))
        report.extend(self.deletions(partition, received, excused_deletions))
        report.extend(self.off_partition(partition))
        report.extend(self.audit(received, events, require_reconciled=require_reconciled))
        report.extend(self.agreement(partition, received, removed_save_files))
        report.commands_received = len(received)
        # SFTP transfers are audited like commands but are not command lines the host's command log receives.
        report.intents = sum(
            1
            for e in events
            if (e.get("event") == "intent" or ("event" not in e and "command" in e)) and not e.get("transfer")
        )
        return report

    def libraries(self, partition: Partition) -> list[str]:
        return [qm.library for qm in partition.queue_managers]

    # --- 1. no receiver lost ----------------------------------------------------------------------------------

    def receivers(self, partition: Partition) -> Report:
        """Every receiver MQ needs is there, and a power loss, STRMQM and RCRMQMOBJ of every object succeed."""
        report = Report()
        for qm in partition.queue_managers:
            if qm.library not in partition.libraries:
                continue  # a lost library is a recovery scenario of its own, not mqjournal's doing
            journal = partition.journals.get(f"{qm.library}/{qm.journal_name}")
            if journal is None or qm.startup_point is None or not qm.objects:
                continue
            needed = mq.oldest_needed(qm)
            directory = partition.journal_receivers(journal)
            for segment in journal.history:
                if segment.last_sequence < needed.sequence:
                    continue
                there = any(
                    r.name == segment.receiver
                    and r.library == segment.library
                    and r.first_sequence == segment.first_sequence
                    and r.readable
                    for r in directory
                )
                if not there:
                    name = f"{segment.library}/{segment.receiver}"
                    report.lost_receivers.append(name)
                    report.add(
                        "receiver lost",
                        f"{qm.name}: {name} (entries {segment.first_sequence}-"
                        f"{segment.last_sequence}) is needed (MQ's oldest needed entry is {needed.sequence}) "
                        "and is not readable in the journal's receiver directory",
                    )
            missing = mq.first_missing(partition, qm, needed.sequence)
            if missing is not None and not any(n.startswith(f"{qm.library}/") for n in report.lost_receivers):
                report.lost_receivers.append(f"{qm.library} entry {missing}")
                report.add(
                    "receiver lost",
                    f"{qm.name}: entry {missing} (needed from {needed.sequence}) is in no "
                    "readable receiver of the journal",
                )
        report.extend(self.restart(partition))
        return report

    def restart(self, partition: Partition) -> Report:
        """On a copy: the partition loses power, STRMQM, then every object recreated from its media image."""
        report = Report()
        copy = partition.model_copy(deep=True)
        for qm in copy.queue_managers:
            if qm.library not in copy.libraries or copy.journals.get(f"{qm.library}/{qm.journal_name}") is None:
                continue
            mq.crash(copy, qm)
            try:
                mq.start(copy, qm, JobLog())
            except CommandError as exc:
                report.add("restart", f"{qm.name}: STRMQM after a power loss fails: {exc}")
                continue
            for obj in qm.objects:
                obj.damaged = True
            try:
                mq.recreate_object(copy, qm, "*ALL", "*ALL", JobLog())
            except CommandError as exc:
                report.add("recreate", f"{qm.name}: RCRMQMOBJ of every object fails: {exc}")
        return report

    # --- 2. every deletion backed by a save --------------------------------------------------------------------

    def deletions(self, partition: Partition, received, excused: Collection[tuple[str, str]] = ()) -> Report:
        report = Report()
        gone = self.catalog.discarded_save_files(self.host_name)
        excused = set(excused)
        checked: set[tuple[str, str]] = set()
        for library in self.libraries(partition):
            for d in self.catalog.deletions_for(self.host_name, library):
                checked.add((d.library, d.receiver))
                saves = self.catalog.saves_of(self.host_name, d.library, d.receiver, d.attached_at)
                self._backed(report, partition, f"{d.library}/{d.receiver}", d.attached_at, saves, gone, excused)
        # Deletions the host did for mqjournal that the catalog does not know (rule 4 reports the missing record).
        for entry in received:
            if entry.state != "ran" or entry.exit_status != 0 or cl_verb(entry.command) != "DLTJRNRCV":
                continue
            library, _, name = (cl_param(entry.command, "JRNRCV") or "/").rpartition("/")
            if (library, name) in checked:
                continue
            checked.add((library, name))
            saves = self.catalog.saves_of(self.host_name, library, name)
            self._backed(report, partition, f"{library}/{name}", None, saves, gone, excused)
        return report

    def _stored(self, path: str, library: str, name: str, attached_at) -> bool:
        """A copy of save file `path` in the store verifies and lists this receiver (that incarnation, if given)."""
        if self.store is None:
            return False
        return any(
            s.save_file_path == path and s.holds(library, name, attached_at) and self.store.verify(s.key).ok
            for s in self.store.list_objects(self.host_name)
        )

    def off_partition(self, partition: Partition) -> Report:
        """Each receiver the catalog records deleted has a verified copy in the store of a save file holding it."""
        report = Report()
        if self.store is None:
            return report
        stored = self.store.list_objects(self.host_name)
        verified = {s.key for s in stored if self.store.verify(s.key).ok}
        for library in self.libraries(partition):
            for d in self.catalog.deletions_for(self.host_name, library):
                if not any(s.key in verified and s.holds(d.library, d.receiver, d.attached_at) for s in stored):
                    report.add(
                        "deleted without a copy off the partition",
                        f"{d.library}/{d.receiver} was deleted and no verified copy in {self.store.url} holds it",
                    )
                elif not any(
                    s.key in verified and s.vouched and self._bytes_hold(s.key, d.library, d.receiver, d.attached_at)
                    for s in stored
                ):
                    report.add(
                        "deleted without a copy the host vouched for",
                        f"{d.library}/{d.receiver} was deleted and no copy in {self.store.url} whose bytes the host's "
                        "digest vouched for holds it",
                    )
        return report

    def _bytes_hold(self, key: str, library: str, name: str, attached_at) -> bool:
        """The stored object's own bytes, read as the simulator's save file records, hold this receiver incarnation:
        the truth behind a sidecar's object list."""
        assert self.store is not None
        try:
            data = savfdata.decode(self.store.fs.cat_file(self.store._path(key)))
        except savfdata.DamagedSaveFile:
            return False
        return any(
            o.receiver.name == name
            and o.receiver.library == library
            and (attached_at is None or _same_instant(o.receiver.attached_at, attached_at))
            for o in data.objects
        )

    def _backed(self, report: Report, partition: Partition, receiver: str, attached_at, saves, gone, excused) -> None:
        library, _, name = receiver.partition("/")
        if not saves:
            report.add("deleted without save", f"{receiver} was deleted and the catalog has no save of it")
            return
        problems = []
        for s in saves:
            path = f"{s.save_file_library}/{s.save_file}"
            if path in gone or (receiver, path) in excused:
                return  # it was there when the receiver went; someone (or expiry) removed it since
            save_file = partition.save_files.get(path)
            if save_file is None and self._stored(path, library, name, attached_at):
                return  # gone from the host, but its copy in the store verifies and lists the receiver
            if save_file is None:
                problems.append(f"{path} is not on the host" + (" nor verified in the store" if self.store else ""))
                continue
            held = [
                o
                for o in save_file.objects
                if o.receiver.name == name
                and o.receiver.library == library
                and (attached_at is None or _same_instant(o.receiver.attached_at, attached_at))
            ]
            if any(not o.saved_while_attached and o.receiver.last_sequence == s.last_sequence for o in held):
                return
            problems.append(f"{path} does not hold it" if not held else f"{path} holds it only partly saved")
        report.add(
            "deleted without save", f"{receiver} was deleted; its catalogued saves are unusable: " + "; ".join(problems)
        )

    # --- 3. every command recorded ---------------------------------------------------------------------------

    def audit(self, received, events: list[dict], *, require_reconciled: bool = True) -> Report:
        return audit_report(self.host_name, received, events, require_reconciled=require_reconciled)

    # --- 4. catalog and host agree ---------------------------------------------------------------------------

    def agreement(self, partition: Partition, received, removed: Collection[str] = ()) -> Report:
        report = Report()
        gone = self.catalog.discarded_save_files(self.host_name) | set(removed)
        catalogued: dict[str, set[tuple[str, str, datetime]]] = defaultdict(set)
        for library in self.libraries(partition):
            for s in self.catalog.saves_for(self.host_name, library):
                path = f"{s.save_file_library}/{s.save_file}"
                catalogued[path].add((s.library, s.receiver, s.attached_at))
                if path in gone:
                    continue
                save_file = partition.save_files.get(path)
                if save_file is None:
                    report.add(
                        "catalog/host",
                        f"the catalog's save of {s.library}/{s.receiver} is in {path}, which is not on the host",
                    )
                    continue
                held = [
                    o
                    for o in save_file.objects
                    if o.receiver.name == s.receiver
                    and o.receiver.library == s.library
                    and _same_instant(o.receiver.attached_at, s.attached_at)
                ]
                if not held:
                    report.add(
                        "catalog/host",
                        f"the catalog says {path} holds {s.library}/{s.receiver} (attached "
                        f"{s.attached_at:%H:%M:%S.%f}); the save file on the host does not "
                        f"(it holds {sorted(o.receiver.name for o in save_file.objects) or 'nothing'})",
                    )
                elif all(o.saved_while_attached for o in held):
                    report.add("catalog/host", f"{path} holds {s.library}/{s.receiver} saved while attached only")

        # Save files mqjournal created, and what it saved into each.
        made = set()
        saves_into: Counter[str] = Counter()
        for entry in received:
            verb = cl_verb(entry.command)
            if entry.state != "ran" or entry.exit_status != 0:
                continue
            if verb == "CRTSAVF":
                made.add(_qualify(cl_param(entry.command, "FILE")))
            elif verb in ("SAVOBJ", "SAVLIB"):
                saves_into[_qualify(cl_param(entry.command, "SAVF"))] += 1
        for path, count in saves_into.items():
            if count > 1:
                report.add("saved twice", f"mqjournal saved into {path} {count} times")
        for path in sorted(made):
            save_file = partition.save_files.get(path)
            if save_file is None:
                continue
            seen = Counter((o.receiver.library, o.receiver.name, o.receiver.attached_at) for o in save_file.objects)
            for (library, name, _), count in seen.items():
                if count > 1:
                    report.add("saved twice", f"{path} holds {library}/{name} {count} times")
            for o in save_file.objects:
                r = o.receiver
                if o.saved_while_attached or r.attached_at is None:
                    continue
                if not any(
                    lib == r.library and rcv == r.name and _same_instant(at, r.attached_at)
                    for lib, rcv, at in catalogued.get(path, ())
                ):
                    report.add(
                        "catalog/host",
                        f"{path}, made by mqjournal, holds {r.library}/{r.name} and the "
                        "catalog does not record that save",
                    )

        # Deletions: what the host did on mqjournal's DLTJRNRCV, and what the catalog says.
        host_deleted: Counter[tuple[str, str]] = Counter()
        for entry in received:
            if entry.state == "ran" and entry.exit_status == 0 and cl_verb(entry.command) == "DLTJRNRCV":
                library, _, name = (cl_param(entry.command, "JRNRCV") or "/").rpartition("/")
                host_deleted[(library, name)] += 1
        catalog_deleted: Counter[tuple[str, str]] = Counter()
        incarnations: Counter[tuple[str, str, datetime]] = Counter()
        for library in self.libraries(partition):
            for d in self.catalog.deletions_for(self.host_name, library):
                catalog_deleted[(d.library, d.receiver)] += 1
                incarnations[(d.library, d.receiver, d.attached_at)] += 1
        for (library, name, at), count in incarnations.items():
            if count > 1:
                report.add(
                    "deleted twice",
                    f"the catalog records the deletion of {library}/{name} (attached {at:%H:%M:%S.%f}) {count} times",
                )
        for key in sorted(set(host_deleted) | {(lib, rcv) for lib, rcv, _ in incarnations}):
            on_host = host_deleted[key]
            in_catalog = len({at for lib, rcv, at in incarnations if (lib, rcv) == key})
            if on_host > in_catalog:
                report.add(
                    "catalog/host",
                    f"the host deleted {key[0]}/{key[1]} on mqjournal's DLTJRNRCV and the "
                    "catalog has no deletion record for it",
                )
            elif in_catalog > on_host:
                report.add(
                    "catalog/host",
                    f"the catalog records the deletion of {key[0]}/{key[1]}, which no "
                    "DLTJRNRCV of mqjournal deleted on the host",
                )
        report.extend(self.operations(received))
        return report

    def operations(self, received) -> Report:
        """Where the catalog keeps operation intents: one before every SAVOBJ and DLTJRNRCV the host received, and
        none left open (a later step reconciles what an interrupted one left)."""
        report = Report()
        read = getattr(self.catalog, "operations", None)
        if read is None:
            return report
        operations = read(self.host_name)
        if not operations:
            # A catalog that has operation records but an executor that does not write them yet (the change is
            # under way): the per-command rule below applies once any operation was recorded on this host.
            return report
        keys = set()
        for op in operations:
            names = tuple(op.receivers.split())
            if op.kind == "save":
                keys.add(("save", op.library, names, f"{op.save_file_library}/{op.save_file}"))
            else:
                keys.update(("delete", op.library, (name,), None) for name in names)
            if op.state == "intent":
                report.add(
                    "open catalog intent",
                    f"the catalog's intent to {op.kind} {op.library}/{op.receivers} "
                    f"(run {op.run_id}) has no outcome and was not reconciled",
                )
        for entry in received:
            verb = cl_verb(entry.command)
            if verb == "SAVOBJ":
                key = (
                    "save",
                    cl_param(entry.command, "LIB"),
                    tuple((cl_param(entry.command, "OBJ") or "").split()),
                    _qualify(cl_param(entry.command, "SAVF")),
                )
            elif verb == "DLTJRNRCV":
                library, _, name = (cl_param(entry.command, "JRNRCV") or "/").rpartition("/")
                key = ("delete", library, (name,), None)
            else:
                continue
            if key not in keys:
                report.add(
                    "no catalog intent",
                    f"the host received `{_short(entry.command)}` and the catalog holds no intent for it",
                )
        return report


def _qualify(value: str | None) -> str:
    value = (value or "").upper()
    return value if "/" in value else f"*LIBL/{value}"
