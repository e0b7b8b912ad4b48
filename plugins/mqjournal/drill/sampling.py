"""Which stored copies a restore drill uploads this run: a pure rule over what the catalog knows.

A drill writes to a partition (CRTSAVF, an upload, DLTF), so it is bounded per run (`copies_per_run`, and
`max_bytes_per_run` of uploads); over the runs, every copy is drilled within `every` of its last drill. Within those
bounds, copies are taken in this order:

1. copies that prove nothing yet (a rebuild's claims, a copy whose last read or drill found a problem): a drill is
   the only way a claim whose host save file is gone can ever count again;
2. copies never drilled, then the least recently drilled, the oldest first;
3. by key, so that the same catalog gives the same sample.

Only copies that are due are drilled: unproven, never drilled, last drilled `every` ago or longer, or whose last
drill could not be made (`error`). A copy drilled by the previous drill run is not drilled again in this one while
any other copy is due ("never the same twice in a row unless nothing else exists"), so one copy that fails each
time cannot take every run's turn. The first copy is taken even when it alone is larger than the byte budget, as the
scrub does, so no copy is too large to be drilled.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Candidate:
    """A stored copy as the rule sees it."""

    store_url: str
    key: str
    host: str
    qmgr: str
    size_bytes: int
    proven: bool  # counts as a backup now (StoredCopy.proves)
    last_drilled_at: datetime | None = None
    last_outcome: str | None = None  # "passed", "failed", "error"; None: never drilled
    save_file: str = ""  # the copy's save file on its partition, LIB/NAME: for the approver


@dataclass(frozen=True)
class Rule:
    copies_per_run: int
    every: timedelta
    max_bytes_per_run: int | None = None  # None: no byte budget


@dataclass(frozen=True)
class Sample:
    chosen: tuple[Candidate, ...]
    due_left: tuple[Candidate, ...]  # due, not chosen this run: the next runs take them first
    held_back: tuple[str, ...]  # keys due but drilled by the previous run, left for the next one

    def text(self) -> str:
        if not self.chosen:
            return "no stored copy is due for a restore drill"
        head = f"{len(self.chosen)} cop{'y' if len(self.chosen) == 1 else 'ies'} to drill"
        tail = f"; {len(self.due_left)} more due, left for the next runs" if self.due_left else ""
        return head + tail


def is_due(c: Candidate, now: datetime, every: timedelta) -> bool:
    if not c.proven or c.last_drilled_at is None or c.last_outcome == "error":
        return True
    return now - c.last_drilled_at >= every


def _order(c: Candidate) -> tuple[bool, bool, float, str]:
    # False sorts first: unproven first, never drilled first, then the oldest drill.
    drilled = c.last_drilled_at.timestamp() if c.last_drilled_at is not None else 0.0
    return (c.proven, c.last_drilled_at is not None, drilled, c.key)


def choose(candidates: Iterable[Candidate], rule: Rule, now: datetime, previous_run: Collection[str] = ()) -> Sample:
    """The copies to drill this run. `previous_run`: the keys the previous drill run drilled."""
    due = sorted((c for c in candidates if is_due(c, now, rule.every)), key=_order)
    fresh = [c for c in due if c.key not in previous_run]
    pool = fresh or due  # only the previous run's copies are due: they may be drilled again
    chosen: list[Candidate] = []
    spent = 0
    for c in pool:
        if len(chosen) >= rule.copies_per_run:
            break
        if chosen and rule.max_bytes_per_run is not None and spent + c.size_bytes > rule.max_bytes_per_run:
            continue  # a smaller one may still fit the budget
        chosen.append(c)
        spent += c.size_bytes
    taken = {c.key for c in chosen}
    return Sample(
        chosen=tuple(chosen),
        due_left=tuple(c for c in due if c.key not in taken),
        held_back=tuple(c.key for c in due if c.key in previous_run and c.key not in taken and pool is fresh),
    )


def previous_run_keys(drills: Sequence[tuple[str, str, datetime]]) -> set[str]:
    """The keys of the newest drill run among (run_id, key, drilled_at) rows."""
    if not drills:
        return set()
    newest = max(drills, key=lambda d: d[2])[0]
    return {key for run_id, key, _ in drills if run_id == newest}
