"""Receivers as ranges an admin reads at a glance: `AMQA000000-AMQA000023: 24 receivers, 115.8 MB, detached 20-22 Nov`.

A range is a run of consecutive chain members (by `chain_position`, never by name: names wrap) of one queue manager
that share an action, and optionally a label (why they are kept, say). A receiver that is not in the chain is a range
of its own. The rows are the plan's receivers (mqjournal.planrows); a plan written without `detached_at` reads
without dates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from mqjournal import timefmt
from mqjournal.planrows import PlannedReceiver, QueueManagerRef
from mqjournal.sizefmt import size
from mqjournal.vocabulary import ReceiverStatus

Row = PlannedReceiver


@dataclass(frozen=True)
class ReceiverRange:
    """Consecutive chain members of one queue manager with the same action (and label)."""

    host: str
    qmgr: str
    qmgr_library: str
    action: str
    label: str  # what else the members share (the grouping key's text); "" when grouped by action alone
    first: str  # the oldest member's name
    last: str  # the newest member's name
    first_position: int | None  # None: a receiver not in the chain
    last_position: int | None
    count: int
    size_bytes: int
    detached_first: datetime | None  # the earliest detach among the members (None: none detached, or not known)
    detached_last: datetime | None
    attached: bool  # the attached receiver is a member

    @property
    def ref(self) -> QueueManagerRef:
        return QueueManagerRef(host=self.host, qmgr=self.qmgr, library=self.qmgr_library)

    @property
    def names(self) -> str:
        """`AMQA000000-AMQA000023`, or the one name."""
        return self.first if self.count == 1 else f"{self.first}-{self.last}"

    def dates(self, offset_minutes: int | None = None) -> str:
        """`detached 20-22 Nov`, `attached`, `detached 20 Nov, and the attached receiver`, or "" when not known."""
        parts = []
        if self.detached_first is not None and self.detached_last is not None:
            parts.append(f"detached {timefmt.day_span(self.detached_first, self.detached_last, offset_minutes)}")
        if self.attached:
            parts.append("and the attached receiver" if parts else "attached")
        return ", ".join(parts)

    def text(self, offset_minutes: int | None = None, *, verb: str = "", why: str = "") -> str:
        """`AMQA000000-AMQA000023: 24 receivers, 115.8 MB, detached 20-22 Nov` (days in the partition's zone); with
        `verb` and `why`: `AMQA000024-AMQA000061: 38 receivers kept: <why>; 180.0 MB, detached 21-22 Nov`."""
        noun = "receiver" if self.count == 1 else "receivers"
        facts = ", ".join(x for x in (size(self.size_bytes), self.dates(offset_minutes)) if x)
        head = f"{self.names}: {self.count} {noun}"
        if why:
            return f"{head} {verb}: {why}; {facts}" if verb else f"{head}: {why}; {facts}"
        return f"{head} {verb}, {facts}" if verb else f"{head}, {facts}"


def _order(row: Row) -> tuple:
    position = row.chain_position
    return (*row.ref.order, position is None, position if position is not None else 0, row.receiver)


def receiver_ranges(
    rows: Iterable[Row], key: Callable[[Row], str] | None = None, *, by_action: bool = True
) -> list[ReceiverRange]:
    """The rows as ranges, per queue manager (host, qmgr, library order), oldest first; receivers not in the chain
    last, one range each. Members are consecutive when their chain positions follow one another, so rows left out
    (another action, another label) split a range. `key(row)` is the label members must share besides the action;
    without `by_action` they need not share it (and the range's action is "")."""
    ranges: list[ReceiverRange] = []
    group: list[Row] = []

    def close() -> None:
        if group:
            ranges.append(_range(group, key(group[0]) if key else "", by_action))
            group.clear()

    for row in sorted(rows, key=_order):
        if group and not _continues(group[-1], row, key, by_action):
            close()
        group.append(row)
    close()
    return ranges


def _continues(previous: Row, row: Row, key: Callable[[Row], str] | None, by_action: bool) -> bool:
    a, b = previous.chain_position, row.chain_position
    return (
        a is not None
        and b is not None
        and b == a + 1
        and previous.ref == row.ref
        and (not by_action or previous.action == row.action)
        and (key is None or key(previous) == key(row))
    )


def _range(members: list[Row], label: str, by_action: bool) -> ReceiverRange:
    detached = [r.detached_at for r in members if r.detached_at is not None]
    first, last = members[0], members[-1]
    return ReceiverRange(
        host=first.host,
        qmgr=first.qmgr,
        qmgr_library=first.qmgr_library,
        action=str(first.action) if by_action else "",
        label=label,
        first=first.receiver,
        last=last.receiver,
        first_position=first.chain_position,
        last_position=last.chain_position,
        count=len(members),
        size_bytes=sum(r.size_bytes for r in members),
        detached_first=min(detached) if detached else None,
        detached_last=max(detached) if detached else None,
        attached=any(r.status == ReceiverStatus.ATTACHED for r in members),
    )
