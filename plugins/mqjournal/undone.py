"""Work a maintenance run promised and left undone, named so that no run ends green without saying so.

The plan promises, for each queue manager: its receivers to save are saved and their save files copied into the
backup store; its approved receivers are deleted. A step that leaves any of that undone says what and why here:
a save or a copy that failed (the store unreachable), a delete refused for lack of a proven backup or stopped by
DLTJRNRCV, a queue manager the fleet file names that was not found. What a person decided (the gate rejected, a queue
manager declined) and what the live host made right to keep (a receiver needed again, or attached) is not undone
work: the run keeps its promise by keeping those.

Pure: the steps' values in, sentences out. The steps' tasks fail on these lines (hostwork.finish), the gate warns
with them before anyone answers (`gate_warning`), and the run's note and report end with them (`note_tail`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from operator import itemgetter

from mqjournal.outcomes import DeleteResult, SaveResult
from mqjournal.planrows import QueueManagerRef
from mqjournal.report import markdown_text

NOTE_LISTED = 3
"""Queue managers the run's note names; the report names every one."""


def why_runs(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """(receiver, why) pairs, consecutive ones with the same why as one line: `AMQA000003-AMQA000005 (3 receivers):
    why`."""
    return [_run_line([name for name, _ in run], why) for why, run in groupby(pairs, key=itemgetter(1))]


def _run_line(names: list[str], why: str) -> str:
    span = names[0] if len(names) == 1 else f"{names[0]}-{names[-1]} ({len(names)} receivers)"
    return f"{span}: {why}"


def _receivers(count: int) -> str:
    return f"{count} receiver{'s' if count != 1 else ''}"


def save_left_undone(save: SaveResult) -> list[str]:
    """What one queue manager's save step left undone: save files not copied off the partition, and the receivers
    it left without a backup off it (not saved, or only in a save file not copied), which no delete removes. A
    receiver gone from the host, or attached, was not to be saved: not undone."""
    lines = [f"save file {path} not copied into the backup store: {why}" for path, why in save.not_copied]
    if save.unproven:
        count = _receivers(len(save.unproven))
        lines.append(
            f"{count} without a backup off the partition, so not deletable: " + "; ".join(why_runs(save.unproven))
        )
    return lines


def delete_left_undone(delete: DeleteResult) -> list[str]:
    """What one queue manager's approved deletes left undone: receivers refused for lack of a proven backup, and the
    DLTJRNRCV that stopped the deletes."""
    lines = [f"not deleted, no proven backup: {line}" for line in why_runs(delete.unproven)]
    if delete.failed:
        lines.append(f"the deletes stopped at {delete.failed[0]}: {delete.failed[1]}")
    return lines


def left_undone(
    *,
    saves: Iterable[SaveResult] = (),
    deletes: Iterable[DeleteResult] = (),
    not_found: Iterable[str] = (),
) -> dict[str, list[str]]:
    """What the run left undone, by queue manager (its `host/QMGR` label), in the order met: `not_found` are the
    `host/QMGR: why` lines of the queue managers the fleet file names whose journal was not found."""
    out: dict[str, list[str]] = {}
    for line in not_found:
        label, _, why = line.partition(": ")
        out.setdefault(label, []).append(f"not found, so not collected, saved or deleted: {why}")
    for s in saves:
        if lines := save_left_undone(s):
            out.setdefault(s.target.label, []).extend(lines)
    for d in deletes:
        if lines := delete_left_undone(d):
            out.setdefault(d.target.label, []).extend(lines)
    return out


def note_tail(undone: Mapping[str, Sequence[str]]) -> str:
    """The run note's last words when work was left undone ("" when none): how many queue managers, the first few
    with their first reason, and where the rest is."""
    if not undone:
        return ""
    named = [f"{label} ({lines[0]}{'; ...' if len(lines) > 1 else ''})" for label, lines in undone.items()]
    more = len(named) - NOTE_LISTED
    listed = "; ".join(named[:NOTE_LISTED]) + (f"; and {more} more" if more > 0 else "")
    count = len(undone)
    return f"LEFT UNDONE on {count} queue manager{'s' if count != 1 else ''}: {listed}"


def task_failure(undone: Mapping[str, Sequence[str]], doing: str) -> str:
    """The message a step's task fails with when it left work undone: every queue manager and line."""
    parts = [f"{label}: {'; '.join(lines)}" for label, lines in undone.items()]
    return f"{doing} left work undone on {len(parts)} queue manager{'s' if len(parts) != 1 else ''}: " + " | ".join(
        parts
    )


def gate_warning(to_delete: Mapping[str, Sequence[str]], saves: Sequence[SaveResult], *, saves_ran: bool) -> str:
    """The warning block the approval gate shows above its table (Markdown, "" when nothing is wrong): the save files
    not copied off the partition, and per queue manager the receivers offered for deletion that will not be deleted
    whatever the answer, because this run's saves left them without a backup off the partition (or its save step
    failed before saying what it did)."""
    by_key = {s.target.key: s for s in saves}
    lines: list[str] = []
    for s in saves:
        for path, why in s.not_copied:
            lines.append(f"{s.target.label}: save file {path} was not copied into the backup store: {why}")
    for key, offered in to_delete.items():
        if not offered:
            continue
        save = by_key.get(key)
        label = QueueManagerRef.parse(key).label
        if save is None:
            if saves_ran:
                lines.append(
                    f"{label}: its save step failed (see the save task's log): of its {_receivers(len(offered))}, "
                    "only those saved and copied by earlier runs can be deleted"
                )
            continue
        asked = set(offered)
        refused = [(name, why) for name, why in save.unproven if name in asked]
        lines += [f"{label}: not deleted whatever the answer: {line}" for line in why_runs(refused)]
    if not lines:
        return ""
    return "\n".join(
        [
            "> **Warning: this run's saves left work undone.** The receivers named below have no backup off the "
            "partition, so they are not deleted whatever the answer (a delete needs a verified copy in the backup "
            "store); the save task that left them ends failed, and so does the run, whose note and report name "
            "them. The next run's save step copies their save files (it does not save them again), and its deletes "
            "can then remove them.",
            ">",
            *(f"> - {markdown_text(line)}" for line in lines),
            "",
            "",
        ]
    )
