"""Receivers as ranges an admin reads at a glance: `AMQA000000-AMQA000023: 24 receivers, 115.8 MB, detached 20-22 Nov`.

A range is a run of consecutive chain members (by `chain_position`, never by name: names wrap) of one queue manager
that share an action, and optionally a label (why they are kept, say). A receiver that is not in the chain is a range
of its own. The rows are the plan's `receivers` rows as pyarrow reads them back (dicts); `detached_at` is read with
`.get()`, so a plan without it reads without dates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mqjournal import timefmt
from mqjournal.vocabulary import ReceiverStatus

Row = Mapping[str, Any]


def _size(n: int) -> str:
    from mqjournal.report import size  # report imports this module: the one way to write a size is its

    return size(n)


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
    def key(self) -> str:
        """host/qmgr/library, as PlanSummary keys a queue manager."""
        return f"{self.host}/{self.qmgr}/{self.qmgr_library}"

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
        facts = ", ".join(x for x in (_size(self.size_bytes), self.dates(offset_minutes)) if x)
        head = f"{self.names}: {self.count} {noun}"
        if why:
            return f"{head} {verb}: {why}; {facts}" if verb else f"{head}: {why}; {facts}"
        return f"{head} {verb}, {facts}" if verb else f"{head}, {facts}"


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _qm(row: Row) -> tuple[str, str, str]:
    return (str(row["host"]), str(row["qmgr"]), str(row["qmgr_library"]))


def _order(row: Row) -> tuple:
    position = row.get("chain_position")
    return (*_qm(row), position is None, position if position is not None else 0, str(row["receiver"]))


def receiver_ranges(rows: Iterable[Row], key: Callable[[Row], str] | None = None) -> list[ReceiverRange]:
    """The rows as ranges, per queue manager (host, qmgr, library order), oldest first; receivers not in the chain
    last, one range each. Members are consecutive when their chain positions follow one another, so rows left out
    (another action, another label) split a range. `key(row)` is the label members must share besides the action."""
    ranges: list[ReceiverRange] = []
    group: list[Row] = []

    def close() -> None:
        if group:
            ranges.append(_range(group, key(group[0]) if key else ""))
            group.clear()

    for row in sorted(rows, key=_order):
        if group and not _continues(group[-1], row, key):
            close()
        group.append(row)
    close()
    return ranges


def _continues(previous: Row, row: Row, key: Callable[[Row], str] | None) -> bool:
    a, b = previous.get("chain_position"), row.get("chain_position")
    return (
        a is not None
        and b is not None
        and b == a + 1
        and _qm(previous) == _qm(row)
        and previous.get("action") == row.get("action")
        and (key is None or key(previous) == key(row))
    )


def _range(members: list[Row], label: str) -> ReceiverRange:
    detached = [_utc(r["detached_at"]) for r in members if r.get("detached_at") is not None]
    host, qmgr, library = _qm(members[0])
    return ReceiverRange(
        host=host,
        qmgr=qmgr,
        qmgr_library=library,
        action=str(members[0].get("action")),
        label=label,
        first=str(members[0]["receiver"]),
        last=str(members[-1]["receiver"]),
        first_position=members[0].get("chain_position"),
        last_position=members[-1].get("chain_position"),
        count=len(members),
        size_bytes=sum(int(r.get("size_bytes") or 0) for r in members),
        detached_first=min(detached) if detached else None,
        detached_last=max(detached) if detached else None,
        attached=any(r.get("status") == ReceiverStatus.ATTACHED for r in members),
    )
