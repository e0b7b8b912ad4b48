"""The maintenance run's report, written for a person: Markdown, and a self-contained HTML page with the same content.

Per queue manager: what was saved (which receivers as ranges, in which save files, which copies in the backup store),
deleted, kept and why, declined at the gate, its alerts with what to do, net space; and for the run: who approved
and when, and the outcome. A dry run's report says what the plan would do and nothing about approval. No JSON: every
value is written as a sentence, a range or a table cell, and every time by mqjournal.timefmt.

Pure: the report task gathers the facts (`RunFacts`) and writes the texts where it wants them.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from mqjournal import explain, timefmt
from mqjournal.linuxmq.extents import extent_ranges
from mqjournal.linuxmq.planned import LinuxPlanned
from mqjournal.outcomes import CleanupResult, DeleteResult, LinuxArchiveResult, LinuxReleaseResult, SaveResult
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver, QueueManagerRef
from mqjournal.ranges import receiver_ranges
from mqjournal.report import asp_text, markdown_text, range_lines
from mqjournal.sizefmt import signed_size, size
from mqjournal.space import net_bytes
from mqjournal.undone import why_runs
from mqjournal.vocabulary import DELETES, SAVES, Action

QUIET_LISTED = 50
"""Queue managers with nothing saved, deleted, declined or alerted that the report names before counting the rest."""


class RunFacts(BaseModel):
    """What the report of one maintenance run says, gathered by the report task from the run's XComs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    dag_id: str = "mq_journal_maintenance"
    dry_run: bool = Field(False, description="plan only: the report says what would happen, never approval")
    outcome: str = Field(description="the run's outcome line (maintenance.outcome)")
    approved_by: str | None = Field(None, description="who approved at the gate; None: nobody (or a dry run)")
    approved_at: datetime | None = Field(None, description="when the gate was answered")
    chosen: list[str] = Field(
        default_factory=list, description="host/QMGR/LIBRARY keys (RunPlan.to_delete's) the approver chose"
    )
    declined: list[str] = Field(
        default_factory=list, description="host/QMGR/LIBRARY keys with receivers to delete the approver did not choose"
    )
    queue_managers: list[PlannedQueueManager] = Field(default_factory=list, description="the plan's queue managers")
    receivers: list[PlannedReceiver] = Field(default_factory=list, description="the plan's receivers")
    save_file_bytes_estimate: dict[str, int] = Field(
        default_factory=dict, description="by QueueManagerRef.key: the save files' bytes as the gate estimated them"
    )
    saves: list[SaveResult] = Field(default_factory=list)
    deletes: list[DeleteResult] = Field(default_factory=list)
    cleanups: list[CleanupResult] = Field(default_factory=list)
    not_found: list[str] = Field(
        default_factory=list,
        description="`host/QMGR: why` of each queue manager the fleet file names whose journal was not found: "
        "not collected, saved or deleted",
    )
    linux: list[LinuxPlanned] = Field(default_factory=list, description="the plan's Linux queue managers (#32)")
    linux_archives: list[LinuxArchiveResult] = Field(default_factory=list)
    linux_releases: list[LinuxReleaseResult] = Field(default_factory=list)
    left_undone: dict[str, list[str]] = Field(
        default_factory=dict,
        description="by `host/QMGR`: the work the run promised and left undone, each line what and why "
        "(mqjournal.undone); the run failed on it",
    )


# --- the document, once, for both formats ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Para:
    text: str
    strong: bool = False


@dataclass(frozen=True)
class Item:
    text: str
    children: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bullets:
    title: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


Block = Heading | Para | Bullets | Table


@dataclass
class _Qm:
    """One queue manager's plan rows (none when only a step's outcome names it) and step outcomes."""

    ref: QueueManagerRef
    row: PlannedQueueManager | None
    estimate: int | None = None  # the gate's estimate of its save files' bytes
    receivers: list[PlannedReceiver] = field(default_factory=list)
    save: SaveResult | None = None
    delete: DeleteResult | None = None
    cleanup: CleanupResult | None = None

    @property
    def key(self) -> str:
        return self.ref.key


def _gather(facts: RunFacts) -> list[_Qm]:
    estimates = facts.save_file_bytes_estimate
    qms = {q.ref.key: _Qm(q.ref, q, estimates.get(q.ref.key)) for q in facts.queue_managers}
    for r in facts.receivers:
        if r.ref.key in qms:
            qms[r.ref.key].receivers.append(r)
    for s in facts.saves:
        qms.setdefault(s.target.key, _Qm(s.target, None)).save = s
    for d in facts.deletes:
        qms.setdefault(d.target.key, _Qm(d.target, None)).delete = d
    for c in facts.cleanups:
        qms.setdefault(c.target.key, _Qm(c.target, None)).cleanup = c
    return [qms[k] for k in sorted(qms)]


def _named(qm: _Qm, names: Iterable[str]) -> tuple[list[PlannedReceiver], list[str]]:
    """The plan rows of these receivers, and the names the plan does not have."""
    wanted = list(dict.fromkeys(names))
    by_name = {r.receiver: r for r in qm.receivers}
    return [by_name[n] for n in wanted if n in by_name], [n for n in wanted if n not in by_name]


def _ranges_of(qm: _Qm, names: Iterable[str], verb: str = "") -> list[str]:
    """The named receivers as ranges of consecutive chain members, whatever the plan's action for each."""
    rows, unknown = _named(qm, names)
    lines = range_lines(receiver_ranges(rows, by_action=False), qm.row, verb=verb, why=False)
    return lines + ([f"{', '.join(unknown)} (not in the plan)"] if unknown else [])


# --- what the report says -------------------------------------------------------------------------------------------


def _status(facts: RunFacts, qm: _Qm) -> str:
    planned = qm.row.receivers_to_delete if qm.row else 0
    if facts.dry_run:
        return (
            f"dry run: {planned} receivers would be deleted, nothing was saved or deleted"
            if planned
            else "dry run: nothing to delete, nothing was saved or deleted"
        )
    d = qm.delete
    if qm.key in facts.declined:
        return "declined at the approval gate: nothing was deleted"
    if d is not None and (d.deleted or d.failed):
        text = f"{len(d.deleted)} receivers deleted, {size(d.freed_bytes)} freed"
        return text + (f"; stopped at {d.failed[0]}: {d.failed[1]}" if d.failed else "")
    if not planned:
        return "nothing to delete"
    if facts.approved_by is None:
        return "not approved: nothing was deleted"
    if d is None:
        return "approved, but the delete step did not run: nothing was deleted"
    return "approved; nothing was deletable at the re-check on the host"


def _saved(facts: RunFacts, qm: _Qm) -> Bullets | None:
    if facts.dry_run:
        lines = _ranges_of(qm, [r.receiver for r in qm.receivers if r.action in SAVES])
        return Bullets("Would be saved", tuple(Item(t) for t in lines)) if lines else None
    s = qm.save
    if s is None:
        return None
    items: list[Item] = []
    if s.saved:
        where = []
        if s.save_files:
            where.append(f"in the save files {', '.join(s.save_files)}")
        if s.copied:
            where.append(f"copied to the backup store as {', '.join(s.copied)}")
        items += [Item(t, tuple(where)) for t in _ranges_of(qm, s.saved, "saved now")]
    if s.already_saved:
        items += [Item(t) for t in _ranges_of(qm, s.already_saved, "already saved by an earlier run")]
    items += [Item(f"not saved: {line}") for line in why_runs(s.not_saved)]
    items += [Item(f"save file {f} not copied off the partition: {why}") for f, why in s.not_copied]
    if s.note:
        items.append(Item(s.note))
    items += [Item(f"found after an interrupted step: {line}") for line in s.reconciled or []]
    return Bullets("Saved", tuple(items)) if items else None


def _deleted(facts: RunFacts, qm: _Qm) -> Bullets | None:
    planned = [r.receiver for r in qm.receivers if r.action in DELETES]
    if facts.dry_run:
        lines = _ranges_of(qm, planned)
        return Bullets("Would be deleted", tuple(Item(t) for t in lines)) if lines else None
    if qm.key in facts.declined:
        lines = _ranges_of(qm, planned, "kept")
        return Bullets("Declined at the approval gate", tuple(Item(t) for t in lines)) if lines else None
    d = qm.delete
    if d is None:
        return None
    items = [Item(t) for t in _ranges_of(qm, d.deleted, "deleted")]
    if d.deleted:
        items.append(Item(f"{size(d.freed_bytes)} freed on the ASP"))
    if d.already_gone:
        items.append(Item(f"already gone from the host: {', '.join(d.already_gone)}"))
    items += [Item(f"not deleted at the re-check: {line}") for line in why_runs(d.kept)]
    if d.failed:
        items.append(Item(f"the deletes stopped at {d.failed[0]}: {d.failed[1]}"))
    items += [Item(f"found after an interrupted step: {line}") for line in d.reconciled or []]
    return Bullets("Deleted", tuple(items)) if items else None


def _kept(qm: _Qm) -> Bullets | None:
    # What the plan keeps on the partition, saved or not: a receiver saved by this run and kept is kept.
    rows = [r for r in qm.receivers if r.action in (Action.KEEP, Action.SAVE)]
    if not rows or qm.row is None:
        return None
    row = qm.row
    why = {r.receiver: explain.explanation(r, row) for r in rows}
    ranges = receiver_ranges(rows, key=lambda r: why[r.receiver], by_action=False)
    lines = range_lines(ranges, qm.row, verb="kept")
    return Bullets("Kept, and why", tuple(Item(t) for t in lines))


@dataclass(frozen=True)
class _Net:
    """A queue manager's net space this run, counted as the gate counts it (mqjournal.space.net_bytes): the
    receivers deleted less the save files written, with their real sizes."""

    freed: int
    written: int
    unknown: tuple[str, ...]  # save files written whose size could not be read

    @property
    def net(self) -> int:
        return net_bytes(self.freed, self.written)


def _net(qm: _Qm) -> _Net:
    freed = qm.delete.freed_bytes if qm.delete else 0
    files = qm.save.save_files if qm.save else []
    sizes = qm.save.save_file_bytes if qm.save else {}
    return _Net(freed, sum(sizes.get(f, 0) for f in files), tuple(f for f in files if f not in sizes))


def _space(facts: RunFacts, qm: _Qm) -> Bullets | None:
    items = []
    if not facts.dry_run and (qm.save is not None or qm.delete is not None or qm.cleanup is not None):
        n = _net(qm)
        line = f"receivers freed {size(n.freed)}, save files written {size(n.written)}: net {signed_size(n.net)}"
        estimate = qm.estimate
        if estimate is not None and qm.save is not None and qm.save.save_files:
            line += f" (the gate estimated the save files at {size(estimate)})"
        items.append(line)
        if n.unknown:
            items.append(f"size not known of {', '.join(n.unknown)}: not in the net")
        if qm.cleanup is not None:
            items.append(
                f"save files still on the partition, of this run and earlier ones: "
                f"{size(qm.cleanup.save_files_on_host_bytes)}"
            )
            items.append(f"{size(qm.cleanup.store_bytes)} in the backup store")
    if asp_text(qm.row):
        items.append(asp_text(qm.row))
    return Bullets("Space", tuple(Item(t) for t in items)) if items else None


def _cleanup(qm: _Qm) -> Bullets | None:
    c = qm.cleanup
    if c is None:
        return None
    items = [Item(f"removed (their copies verify in the backup store): {', '.join(c.removed)}")] if c.removed else []
    items += [Item(f"{f} kept: {why}") for f, why in c.kept]
    if c.not_due:
        items.append(Item(f"still within keep_on_host_days: {', '.join(c.not_due)}"))
    if c.already_gone:
        items.append(Item(f"already gone: {', '.join(c.already_gone)}"))
    items += [Item(f"found after an interrupted step: {line}") for line in c.reconciled]
    return Bullets("Save files on the partition", tuple(items)) if items else None


def _alerts(qm: _Qm) -> Bullets | None:
    lines = explain.alert_explanations(qm.row) if qm.row else []
    return Bullets("Alerts", tuple(Item(t) for t in lines)) if lines else None


def _busy(facts: RunFacts, qm: _Qm) -> bool:
    row = qm.row
    return bool(
        (row and (row.receivers_to_delete or row.receivers_to_save or row.block_reason or row.alerts))
        or qm.key in facts.declined
        or (qm.save and (qm.save.saved or qm.save.not_saved or qm.save.not_copied))
        or (qm.delete and (qm.delete.deleted or qm.delete.failed or qm.delete.kept))
        or (qm.cleanup and (qm.cleanup.removed or qm.cleanup.kept))
    )


def _approval(facts: RunFacts) -> list[Block]:
    if facts.dry_run or facts.approved_by is None:
        return []  # a dry run has no gate; a refusal is the outcome line's to say
    text = f"Approved by {facts.approved_by}"
    if facts.approved_at is not None:
        text += f" at {timefmt.local_time(facts.approved_at)}"
    blocks: list[Block] = [Para(text + ".")]
    if facts.chosen:
        blocks.append(Para(f"Chosen at the gate: {', '.join(sorted(facts.chosen))}."))
    if facts.declined:
        blocks.append(Para(f"Declined at the gate (nothing of them deleted): {', '.join(sorted(facts.declined))}."))
    return blocks


def _totals(facts: RunFacts, qms: Sequence[_Qm]) -> str:
    if facts.dry_run:
        deletes = sum(q.row.receivers_to_delete for q in qms if q.row)
        saves = sum(q.row.receivers_to_save for q in qms if q.row)
        freed = sum(q.row.bytes_freed for q in qms if q.row)
        return (
            f"The plan would save {saves} receivers and delete {deletes} ({size(freed)}) across {len(qms)} queue "
            "managers."
        )
    deleted = sum(len(q.delete.deleted) for q in qms if q.delete)
    freed = sum(q.delete.freed_bytes for q in qms if q.delete)
    saved = sum(len(q.save.saved) for q in qms if q.save)
    files = sum(len(q.save.save_files) for q in qms if q.save)
    alerted = sum(1 for q in qms if q.row and q.row.alerts)
    return (
        f"{deleted} receivers deleted ({size(freed)} freed), {saved} saved in {files} save files, across {len(qms)} "
        f"queue managers; {len(facts.declined)} declined at the gate, {alerted} with alerts."
    )


def _space_table(facts: RunFacts, qms: Sequence[_Qm]) -> list[Block]:
    """Net space per queue manager, counted as the approval gate counts it (mqjournal.space.net_bytes): receivers
    freed on the ASP less the save files this run wrote there, at their real sizes; then the save files still on the
    partition (this run's and earlier ones', after the cleanup) and what the backup store holds."""
    rows = []
    for q in qms:
        if q.save is None and q.delete is None and q.cleanup is None:
            continue
        n = _net(q)
        on_host = size(q.cleanup.save_files_on_host_bytes) if q.cleanup else "-"
        stored = size(q.cleanup.store_bytes) if q.cleanup else "-"
        rows.append((q.key, size(n.freed), size(n.written), signed_size(n.net), on_host, stored))
    if facts.dry_run or not rows:
        return []
    header = (
        "queue manager",
        "receivers freed",
        "save files written",
        "net",
        "save files on the partition",
        "in the backup store",
    )
    return [Heading(2, "Space"), Table(header, tuple(rows))]


def _not_found(facts: RunFacts) -> list[Block]:
    """Named near the top: a queue manager the run could not find is one nobody's journal housekeeping covered."""
    if not facts.not_found:
        return []
    return [Bullets("Not found on their hosts (this run did nothing for them)", tuple(map(Item, facts.not_found)))]


def _left_undone(facts: RunFacts) -> list[Block]:
    """Right under the outcome: what the run promised and did not do is what an admin acts on first."""
    if not facts.left_undone:
        return []
    items = tuple(Item(label, tuple(lines)) for label, lines in facts.left_undone.items())
    return [Bullets("Left undone (the run failed on it; what to do is in each failed task's log)", items)]


def document(facts: RunFacts) -> list[Block]:
    """The report as blocks, rendered by render_markdown and render_html."""
    qms = _gather(facts)
    blocks: list[Block] = [
        Heading(1, f"{facts.dag_id} {facts.run_id}"),
        Para(f"Outcome: {facts.outcome}", strong=True),
        *_left_undone(facts),
        *_approval(facts),
        Para(_totals(facts, qms)),
        *_not_found(facts),
        *_space_table(facts, qms),
    ]
    quiet = []
    for qm in qms:
        if not _busy(facts, qm):
            quiet.append(qm.key)
            continue
        blocks += [
            Heading(2, f"{qm.ref.label} (library {qm.ref.library})"),
            Para(_status(facts, qm)),
        ]
        if qm.row and qm.row.block_reason:
            blocks.append(Para(f"Blocked: {explain.block_words(qm.row)}. Nothing of it was deletable."))
        for section in (
            _saved(facts, qm),
            _deleted(facts, qm),
            _kept(qm),
            _alerts(qm),
            _space(facts, qm),
            _cleanup(qm),
        ):
            if section is not None:
                blocks.append(section)
    blocks += _linux(facts)
    if quiet:
        more = len(quiet) - QUIET_LISTED
        named = ", ".join(quiet[:QUIET_LISTED]) + (f" and {more} more" if more > 0 else "")
        blocks += [
            Heading(2, "Nothing to do"),
            Para(f"Nothing saved, deleted or alerted on {len(quiet)} queue managers: {named}."),
        ]
    return blocks


def _extents(names: list[str]) -> str:
    return ", ".join(extent_ranges(names))


def _linux(facts: RunFacts) -> list[Block]:
    """The Linux queue managers (#32), in MQ's own terms: the log points as collected, what was archived into the
    backup store, what was released (SET LOG ARCHIVED, or deleted in Manual mode), what stayed and why."""
    if not facts.linux:
        return []
    archives = {a.label: a for a in facts.linux_archives}
    releases = {r.label: r for r in facts.linux_releases}
    blocks: list[Block] = [
        Heading(2, "Linux queue managers (linear logs)"),
        Table(
            ("queue manager", "LogManagement", "CURRLOG", "RECLOG", "MEDIALOG", "archived", "released", "freed"),
            tuple(
                (
                    p.key,
                    p.log_management,
                    p.current_extent or "-",
                    p.restart_extent or "-",
                    p.media_extent or "-",
                    str(len(archives[p.key].archived)) if p.key in archives else "-",
                    str(len(releases[p.key].released)) if p.key in releases else "-",
                    size(releases[p.key].released_bytes) if p.key in releases else "-",
                )
                for p in facts.linux
            ),
        ),
    ]
    for p in facts.linux:
        items: list[Item] = []
        archived = archives.get(p.key)
        released = releases.get(p.key)
        if facts.dry_run:
            if p.to_archive:
                items.append(Item(f"would be archived: {_extents(p.to_archive)}"))
            if p.to_release:
                items.append(Item(f"would be released once approved: {_extents(p.to_release)}"))
        if archived is not None:
            if archived.archived:
                items.append(Item(f"archived into the backup store, proven: {_extents(archived.archived)}"))
            if archived.already_archived:
                items.append(Item(f"archived by an earlier run: {_extents(archived.already_archived)}"))
            items += [Item(f"not archived: {name}: {why}") for name, why in archived.not_archived]
        if released is not None:
            how = "told to MQ with SET LOG ARCHIVED" if p.log_management == "Archive" else "deleted"
            if released.released:
                items.append(Item(f"released ({how}): {_extents(released.released)}"))
            items += [Item(f"kept: {name}: {why}") for name, why in released.kept]
        elif p.to_release and not facts.dry_run:
            chose = "declined at the approval gate" if p.key in facts.declined else "not approved"
            items.append(Item(f"{len(p.to_release)} extents to release: {chose}, nothing released"))
        items += [Item(f"alert: {a}") for a in p.alerts]
        if items:
            blocks.append(Bullets(p.key, tuple(items)))
    return blocks


# --- rendering --------------------------------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return markdown_text(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(facts: RunFacts) -> str:
    """The document as Markdown: its texts are plain (CL with asterisks), so each is escaped where it is written."""
    md = markdown_text
    out: list[str] = []
    for block in document(facts):
        if isinstance(block, Heading):
            out += [f"{'#' * block.level} {md(block.text)}", ""]
        elif isinstance(block, Para):
            out += [f"**{md(block.text)}**" if block.strong else md(block.text), ""]
        elif isinstance(block, Bullets):
            out += [f"{md(block.title)}:", ""]
            for item in block.items:
                out.append(f"- {md(item.text)}")
                out += [f"  - {md(child)}" for child in item.children]
            out.append("")
        else:
            out += [
                "| " + " | ".join(_md_cell(h) for h in block.header) + " |",
                "|" + "---|" * len(block.header),
                *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows),
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


_CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2329; margin: 2rem auto;
       max-width: 72rem; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: .5rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #d5dbe1; padding-bottom: .2rem; }
h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
p.outcome { font-size: 1.05rem; font-weight: 600; background: #eef3f8; padding: .5rem .75rem; border-radius: 4px; }
ul { margin: .2rem 0 .8rem; padding-left: 1.4rem; }
li { margin: .15rem 0; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d5dbe1; padding: .25rem .6rem; text-align: left; }
th { background: #f3f5f7; }
td:nth-child(n+2) { text-align: right; }
"""


def render_html(facts: RunFacts) -> str:
    """A self-contained page: inline CSS, no scripts, no external assets; every value escaped."""
    esc = html.escape
    body: list[str] = []
    for block in document(facts):
        if isinstance(block, Heading):
            body.append(f"<h{block.level}>{esc(block.text)}</h{block.level}>")
        elif isinstance(block, Para):
            body.append(f'<p class="outcome">{esc(block.text)}</p>' if block.strong else f"<p>{esc(block.text)}</p>")
        elif isinstance(block, Bullets):
            body.append(f"<h3>{esc(block.title)}</h3>")
            body.append("<ul>")
            for item in block.items:
                children = "".join(f"<li>{esc(c)}</li>" for c in item.children)
                body.append(f"<li>{esc(item.text)}" + (f"<ul>{children}</ul>" if children else "") + "</li>")
            body.append("</ul>")
        else:
            header = "".join(f"<th>{esc(h)}</th>" for h in block.header)
            rows = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in block.rows)
            body.append(f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>")
    title = esc(f"{facts.dag_id} {facts.run_id}")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )
