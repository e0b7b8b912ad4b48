"""Save files a restore needs that are no longer on the host, brought back from the backup store: pure planning.

A save file the host cleanup removed (policy `keep_on_host_days`), or one lost with its library or its partition,
is still a backup while a verified copy of it is in the backup store. For each such save file a restore plan gets,
before the first RSTOBJ/RSTLIB that reads it:

- CRTSAVF of the save file, by its original LIB/NAME when that is free; in the save library (QGPL unless given)
  when its own library is not on the host; by the first free name of the day's names when the name is taken. IBM i
  places an upload only into an existing, empty save file, and an upload must never create one
  (docs/ibmi-interfaces.md, section 5).
- the upload of the stored copy into it (UPLOAD_SAVE_FILE): `upload_save_file` verifies the copy against its
  sidecar before a byte is sent and compares the save file's size on the host after.
- the check (CHECK_SAVE_FILE): QSYS2.SAVE_FILE_OBJECTS must list every receiver to be restored from it (and, for a
  library save, the receiver attached at the save, which SAVLIB always takes).

The stored copy is re-read and compared with its sidecar (size and SHA-256) while planning (`gather` does the
reading, then plans again): a copy that differs is never restored from, and is a named gap when no other save
brings the receivers back. A plan made again for an approved one (the executor's re-check) is given the approved
targets: a target that is there and lists what is needed is done; one that is there but does not (an interrupted
upload may have left part of the copy in it) is deleted and created again before the upload is made again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date

from mqjournal.catalog import StoredObject
from mqjournal.names import restored_save_file_text, save_file_names
from mqjournal.recovery.plan import Action, RecoveryPlan, Step, step

Objects = frozenset[tuple[str, str]]
"""(library, receiver) pairs a save file must list."""


@dataclass(frozen=True)
class StoreView:
    """What the planner knows of the backup store and of the host around the save files it could bring back."""

    url: str
    copies: Mapping[str, tuple[StoredObject, ...]] = field(default_factory=dict)  # "LIB/NAME" -> newest first
    verified: frozenset[str] = frozenset()  # keys re-read and matching their sidecar now
    mismatches: Mapping[str, str] = field(default_factory=dict)  # key -> what differs (or why it cannot be read)
    missing_libraries: frozenset[str] = frozenset()  # save libraries that are not on the host
    save_library: str = "QGPL"  # where a save file goes when its own library is not on the host
    known_save_files: frozenset[str] = frozenset()  # every save file the catalog ever named on the host
    targets: Mapping[str, str] = field(default_factory=dict)  # origin -> target, from the approved plan
    target_contents: Mapping[str, Objects | None] = field(default_factory=dict)  # target on host -> what it lists

    def copy_of(self, origin: str) -> StoredObject | None:
        """The newest copy of save file `origin` that matched its sidecar (or is not read yet: gather reads it and
        plans again, so no plan it returns uploads an unread copy)."""
        return next((c for c in self.copies.get(origin, ()) if c.key not in self.mismatches), None)

    def problems(self, origin: str) -> list[str]:
        """Each copy of `origin` that may not be restored from, with what differs."""
        return [f"{c.key}: {self.mismatches[c.key]}" for c in self.copies.get(origin, ()) if c.key in self.mismatches]

    def unread(self, plan: RecoveryPlan) -> set[str]:
        """Keys `plan` uploads that were not re-read yet."""
        keys = {str(s.args["key"]) for s in plan.steps if s.action is Action.UPLOAD_SAVE_FILE}
        return keys - self.verified - set(self.mismatches)

    def with_reads(self, problems: Mapping[str, str | None]) -> StoreView:
        """This view, with the copies re-read: None for a copy that matches, else what differs."""
        ok = {key for key, problem in problems.items() if problem is None}
        bad = {key: problem for key, problem in problems.items() if problem is not None}
        return replace(self, verified=self.verified | ok, mismatches={**self.mismatches, **bad})


@dataclass
class Resolved:
    """Where the saves a plan restores from are read: `path` maps each origin to the save file RSTOBJ/RSTLIB names,
    `fetch` holds the steps that bring an origin back from the store (none when it is on the host)."""

    path: dict[str, str] = field(default_factory=dict)
    fetch: dict[str, list[Step]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def steps(self, origins: Iterable[str]) -> list[Step]:
        return [s for origin in dict.fromkeys(origins) for s in self.fetch.get(origin, [])]


@dataclass(frozen=True)
class Sources:
    """The save files a plan can read, on the host or in the backup store."""

    host: str
    on_host: set[str] | None  # "LIB/NAME"; None when not checked (every save file counts as there)
    store: StoreView | None
    qmgr: str
    qmgr_library: str
    today: date

    def available(self, origin: str) -> bool:
        if self.on_host is None:
            return True
        target = self.store.targets.get(origin) if self.store else None
        if target is not None and target in self.on_host and self._lists_anything(target):
            return True  # an approved upload that went in whole
        if origin in self.on_host and target is None:
            return True
        return self.store is not None and self.store.copy_of(origin) is not None

    def _lists_anything(self, target: str) -> bool:
        return bool(self.store and self.store.target_contents.get(target))

    def why_not(self, origins: Iterable[str]) -> str:
        """Why none of `origins` can be read, for a gap."""
        origins = sorted(set(origins))
        problem = f"the catalog's save file(s) {', '.join(origins)} no longer exist on {self.host}"
        if self.store is None:
            return problem + ", and no backup store was given to bring them back from"
        corrupt = [p for origin in origins for p in self.store.problems(origin)]
        if corrupt:
            return problem + "; their copies in the backup store may not be restored from: " + "; ".join(corrupt)
        return problem + f", and the backup store {self.store.url} has no verified copy of them"

    def resolve(self, needs: Mapping[str, Objects]) -> Resolved:
        """The save file each origin is read from, and the steps bringing back those the host no longer has."""
        out = Resolved()
        taken: set[str] = set()
        for origin, objects in needs.items():
            self._resolve_one(origin, objects, out, taken)
        return out

    def _resolve_one(self, origin: str, objects: Objects, out: Resolved, taken: set[str]) -> None:
        on_host = self.on_host or set()
        target = self.store.targets.get(origin) if self.store else None
        if target is not None and target in on_host:
            # An upload that lists nothing to check (an IFS save) is never taken as whole: it is made again.
            if objects and objects <= (self.store.target_contents.get(target) or frozenset()):  # type: ignore[union-attr]
                out.path[origin] = target  # uploaded whole and checked by an earlier attempt
                return
            out.path[origin] = target
            out.fetch[origin] = self._fetch(origin, target, objects, redo=True)
            return
        if target is None and (self.on_host is None or origin in on_host):
            out.path[origin] = origin
            return
        target = target or self._target(origin, on_host, taken)
        taken.add(target)
        out.path[origin] = target
        out.fetch[origin] = self._fetch(origin, target, objects, redo=False)
        library = origin.split("/")[0]
        if self.store is not None and library in self.store.missing_libraries:
            out.notes.append(
                f"Save library {library} is not on the host: {origin} is brought back from the backup store into "
                f"{target} (the save library given to the recovery)."
            )
        elif target != origin:
            out.notes.append(f"{origin} is taken on the host by another object: it is brought back as {target}.")

    def _target(self, origin: str, on_host: set[str], taken: set[str]) -> str:
        """The original LIB/NAME if free; the save library when the original library is gone; a name of the day's
        names when the name is taken (never one the catalog ever named: a record about that file must not be read
        as about this one)."""
        assert self.store is not None  # only a save file with a copy in the store is brought back
        library, name = origin.split("/")
        if library in self.store.missing_libraries:
            library = self.store.save_library
        used = on_host | taken | (self.store.known_save_files - {origin})
        for candidate in [name, *save_file_names(self.qmgr_library, self.today)]:
            if f"{library}/{candidate}" not in used:
                return f"{library}/{candidate}"
        return f"{library}/{name}"  # every name of the day taken: CRTSAVF says so (CPF5813) and nothing is restored

    def _fetch(self, origin: str, target: str, objects: Objects, *, redo: bool) -> list[Step]:
        assert self.store is not None
        copy = self.store.copy_of(origin)
        assert copy is not None  # available() held
        library, name = target.split("/")
        listed = " ".join(f"{lib}/{rcv}" for lib, rcv in sorted(objects))
        steps = []
        if redo:
            steps.append(
                step(
                    Action.DELETE_PARTIAL_UPLOAD,
                    f"{target} is there but does not list what is to be restored from it: an earlier upload was "
                    "interrupted, and IBM i places data only into an empty save file",
                    library=library,
                    name=name,
                )
            )
        steps += [
            step(
                Action.CREATE_SAVE_FILE,
                f"{origin} is no longer on the host: an empty save file to upload its copy from the backup store into",
                library=library,
                name=name,
                text=restored_save_file_text(self.qmgr, origin),
            ),
            step(
                Action.UPLOAD_SAVE_FILE,
                f"the copy of {origin} in the backup store ({copy.size_bytes} bytes, SHA-256 {copy.sha256[:12]}..., "
                "re-read and compared with its sidecar while planning, and again before it is sent)",
                origin=origin,
                key=copy.key,
                library=library,
                name=name,
            ),
            step(
                Action.CHECK_SAVE_FILE,
                f"the upload is complete: {target} lists {listed}"
                if listed
                else f"the upload is a save file IBM i reads (an IFS save: SAVE_FILE_OBJECTS lists no IFS object, so "
                f"the upload's size check and the copy's digest vouch for {target})",
                library=library,
                name=name,
                objects=listed,
            ),
        ]
        return steps


def needed_objects(check: Step) -> Objects:
    """The (library, receiver) pairs a CHECK_SAVE_FILE step requires its save file to list."""
    return frozenset(tuple(o.split("/", 1)) for o in str(check.args["objects"]).split())  # type: ignore[misc]


def upload_targets(approved: RecoveryPlan) -> dict[str, str]:
    """{origin: target} of every upload in an approved plan, for the plan made again before it runs."""
    return {
        str(s.args["origin"]): f"{s.args['library']}/{s.args['name']}"
        for s in approved.steps
        if s.action is Action.UPLOAD_SAVE_FILE
    }


_FETCH = (Action.DELETE_PARTIAL_UPLOAD, Action.CREATE_SAVE_FILE, Action.UPLOAD_SAVE_FILE, Action.CHECK_SAVE_FILE)


def resume_fetches(steps: list[Step], on_host: set[str] | None, store: StoreView | None) -> list[Step]:
    """An approved plan's steps with what remains of each save file's fetch from the store: none once its target is
    on the host and lists what its check requires; DLTF first when the target is there but does not (an interrupted
    upload); all of it while the target is not on the host."""
    checks = {f"{s.args['library']}/{s.args['name']}": s for s in steps if s.action is Action.CHECK_SAVE_FILE}
    remaining: list[Step] = []
    for s in steps:
        if s.action not in _FETCH:
            remaining.append(s)
            continue
        if s.action is Action.DELETE_PARTIAL_UPLOAD:
            continue  # added again below, before its CRTSAVF, when the target still needs it
        target = f"{s.args['library']}/{s.args['name']}"
        if on_host is None or target not in on_host:
            remaining.append(s)
            continue
        listed = (store.target_contents.get(target) if store else None) or frozenset()
        check = checks.get(target)
        if check is not None and needed_objects(check) <= listed:
            continue  # uploaded whole and checked by an earlier attempt
        if s.action is Action.CREATE_SAVE_FILE:
            library, name = target.split("/")
            remaining.append(
                step(
                    Action.DELETE_PARTIAL_UPLOAD,
                    f"{target} is there but does not list what is to be restored from it: an earlier upload was "
                    "interrupted, and IBM i places data only into an empty save file",
                    library=library,
                    name=name,
                )
            )
        remaining.append(s)
    return remaining


def fetched_later(steps: list[Step], path: str) -> bool:
    """Whether `steps` bring save file `path` back from the store."""
    return any(s.action is Action.CHECK_SAVE_FILE and f"{s.args['library']}/{s.args['name']}" == path for s in steps)
