"""The backup store's scrub: every stored copy read again in full, within a set number of days, and compared with the
digest the catalog recorded for it.

A copy is proven when it is written (and again right before a delete counts on it), but a backup that nobody reads
can rot unseen: a disk's silent corruption, a sync job that truncates, an operator's mistake. The scrub reads the
copies whose last verification is the oldest, up to a number of bytes per run, and records in the catalog when each
was read (`stored_objects.proof_checked_at`). A copy that does not match is flagged there (`proof_problem`): from
then on it proves nothing, so no receiver is deleted and no host save file is cleaned up on its account, and it is
logged at ERROR and named in the scrub's report. A later read that matches again (the copy put back from another
copy of the store) clears the flag.

`due` is a pure function of the catalog's copies and the time; `scrub` does the reads (docs/backup-store.md gives
the bytes a night this costs).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict

from mqjournal.backupstore import BackupStore, BackupStoreError
from mqjournal.catalog import Catalog, StoredCopy
from mqjournal.sizefmt import size

log = logging.getLogger(__name__)


class CopiesMismatched(BackupStoreError):
    """A scrub found stored copies that no longer match their recorded digest: they no longer count as backups."""


class ScrubResult(BaseModel):
    """What one scrub of a backup store read and found."""

    model_config = ConfigDict(frozen=True)

    store_url: str
    started_at: AwareDatetime
    due: int  # copies whose last verification was older than the scrub interval when the scrub started
    matched: list[str] = []  # keys read again and matching their recorded digest
    mismatched: list[str] = []  # "key: what differs"; each now proves nothing
    left_for_later: list[str] = []  # keys due but past this run's byte budget: the next run reads them first
    bytes_read: int = 0

    @property
    def clean(self) -> bool:
        return not self.mismatched

    def check(self) -> None:
        """CopiesMismatched naming every copy that did not match (nothing when all did)."""
        if self.mismatched:
            raise CopiesMismatched(
                f"backup store {self.store_url}",
                f"{len(self.mismatched)} stored copy(ies) no longer match the digest recorded when they were copied, "
                f"and no longer count as backups: {'; '.join(self.mismatched)}",
                "put each back from another copy of the store (the next scrub then finds it matching), or delete it "
                "and let the save step copy the save file again while the host still has it; until then the "
                "receivers it holds are not deleted on its account",
            )

    def text(self) -> str:
        lines = [
            f"backup store {self.store_url}: {self.due} copy(ies) due for a scrub, {len(self.matched)} read again "
            f"and matching, {len(self.mismatched)} not matching, {len(self.left_for_later)} left for the next run "
            f"({size(self.bytes_read)} read)"
        ]
        lines += [
            f"  MISMATCH: {m}; this copy no longer counts as a backup: no receiver it holds is deleted on its account"
            for m in self.mismatched
        ]
        lines += [f"  due, left for the next run: {key}" for key in self.left_for_later]
        return "\n".join(lines)


def due(copies: Sequence[StoredCopy], now: datetime, every: timedelta) -> list[StoredCopy]:
    """The copies last verified `every` or longer before `now`, the least recently verified first."""
    return sorted((c for c in copies if now - c.last_verified >= every), key=lambda c: c.last_verified)


def scrub(
    store: BackupStore, catalog: Catalog, *, every: timedelta, max_bytes: int, now: datetime | None = None
) -> ScrubResult:
    """Read again the copies of `store` that are due (`due`), oldest verification first, until `max_bytes` have
    been read (the copy that crosses it is read whole: a copy larger than the budget is never starved), and record
    each outcome in the catalog."""
    started = now or datetime.now(UTC)
    todo = due(catalog.stored_copies(store.url), started, every)
    matched: list[str] = []
    mismatched: list[str] = []
    later: list[str] = []
    read = 0
    for copy in todo:
        if read >= max_bytes:
            later.append(copy.stored.key)
            continue
        problem = store.still_holds(copy.stored, reread=True)  # the store's own checksum would not see rot
        read += copy.stored.size_bytes
        catalog.record_check(store.url, copy.stored.key, at=datetime.now(UTC), problem=problem)
        if problem is None:
            matched.append(copy.stored.key)
            if copy.problem is not None:
                log.warning("%s: matches its recorded digest again; it counts as a backup again", copy.stored.key)
        else:
            mismatched.append(f"{copy.stored.key}: {problem}")
            log.error(
                "backup store %s: %s does not match the copy the catalog recorded (%s); it no longer counts as a "
                "backup of %s %s (%s): no receiver it holds is deleted on its account",
                store.url,
                copy.stored.key,
                problem,
                copy.stored.host,
                copy.stored.qmgr,
                copy.stored.save_file_path,
            )
    return ScrubResult(
        store_url=store.url,
        started_at=started,
        due=len(todo),
        matched=matched,
        mismatched=mismatched,
        left_for_later=later,
        bytes_read=read,
    )
