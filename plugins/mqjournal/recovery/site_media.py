"""Receivers a restore needs that only the site's own backup holds (`backup: site`, docs/site-backup.md). Pure.

With the site's backup, mqjournal deletes a receiver once IBM i shows it fully saved by the site (SAVE_TIMESTAMP
set, status SAVED or FREED), and nothing of it is in mqjournal's catalog or backup store. When a restore later
needs that receiver, it is no unknown loss: the snapshots mqjournal took before deleting it show when the site
saved it. `site_media_restores` turns those receivers into "restore from the site's backup media" notes, naming the
receiver, its library and that save time, so the operator knows which night's media to mount. What it cannot
show is which media: IBM i records that a save happened, not where it went (docs/site-backup.md, "What IBM i
proves").

A receiver is matched by its incarnation (library, name, attach time): names wrap, so a save of an earlier
receiver of the same name is never taken for this one. Only a full save counts (`rules.site_saved`): a save taken
while the receiver was attached leaves out the entries written after it, so it restores a receiver that is no use
to MQ's recovery pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from mqjournal import timefmt
from mqjournal.rules import site_saved
from mqjournal.snapshot import Snapshot


@dataclass(frozen=True)
class NeededReceiver:
    """A receiver incarnation a restore needs that is neither on the host nor in the catalog or the backup store."""

    name: str
    library: str
    attached_at: datetime

    def label(self, offset: int | None = None) -> str:
        # The form of recovery.restore.Known.label, so a note and a gap name a receiver alike.
        return f"{self.library}/{self.name} (attached {timefmt.local_time(self.attached_at, offset)})"


@dataclass(frozen=True)
class SiteMediaRestore:
    """A needed receiver that the site's backup saved, by the newest snapshot that showed it."""

    receiver: str
    library: str
    attached_at: datetime
    saved_at: datetime  # SAVE_TIMESTAMP, the partition's clock: the newest full save of it any snapshot showed
    seen_at: datetime  # the collection that showed it
    run_id: str

    def label(self, offset: int | None = None) -> str:
        return f"{self.library}/{self.receiver} (attached {timefmt.local_time(self.attached_at, offset)})"

    def note(self, offset: int | None = None) -> str:
        """The line a restore plan shows in place of a gap; `offset`: the partition's, in minutes east of UTC (None:
        each time in the zone it carries, which for snapshot times is the partition's)."""
        return (
            f"{self.label(offset)}: restore from the site's backup media: saved by the site's backup on "
            f"{timefmt.local_time(self.saved_at, offset)} (collection {self.run_id} of "
            f"{timefmt.local_time(self.seen_at, offset)} showed it); not in mqjournal's store. Restore it "
            f"from that save (RSTOBJ OBJ({self.receiver}) LIB({self.library}) OBJTYPE(*JRNRCV) from the site's "
            "media, or RSTOBJBRM where BRMS saved it), then plan again"
        )


@dataclass(frozen=True)
class SiteMediaResult:
    restores: list[SiteMediaRestore] = field(default_factory=list)  # in the order asked
    # No snapshot shows a full save of these by anyone: they stay gaps of the restore plan.
    not_found: list[NeededReceiver] = field(default_factory=list)


def site_media_restores(needed: Iterable[NeededReceiver], snapshots: Iterable[Snapshot]) -> SiteMediaResult:
    """For each needed receiver, the newest full save that the snapshots show of that very incarnation.

    `snapshots` are the queue manager's snapshots known to mqjournal, in any order (the maintenance runs' data
    folder, read with `snapshot.read_snapshots`); the delete step deletes only receivers a fresh collection showed
    saved, so the run that deleted one has the last snapshot showing it.
    """
    newest: dict[tuple[str, str, datetime], SiteMediaRestore] = {}
    for snap in snapshots:
        for r in snap.receivers:
            if r.attached_at is None or r.saved_at is None or not site_saved(r):
                continue
            key = (r.library, r.name, r.attached_at)
            seen = newest.get(key)
            # The newest save is the one whose media the site keeps longest; ties: the newest collection.
            if seen is None or (r.saved_at, snap.collected_at) > (seen.saved_at, seen.seen_at):
                newest[key] = SiteMediaRestore(
                    r.name, r.library, r.attached_at, r.saved_at, snap.collected_at, snap.run_id
                )
    result = SiteMediaResult()
    for n in needed:
        found = newest.get((n.library, n.name, n.attached_at))
        if found is None:
            result.not_found.append(n)
        else:
            result.restores.append(found)
    return result
