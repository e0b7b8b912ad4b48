"""What a person reads: the plan as the approval gate shows it, and the run summary afterwards (Markdown)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mqjournal.vocabulary import IMPLAUSIBLE_NEEDS, Alert, alert_text


def size(n: int | None) -> str:
    value = float(n or 0)
    if value < 1024:
        return f"{value:.0f} B"
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024:
            return f"{value:.1f} {unit}"
    return f"{value / 1024:.1f} TB"


def signed_size(n: int) -> str:
    """A size that can be negative: net space, when new save files outweigh the receivers they free."""
    return f"-{size(-n)}" if n < 0 else size(n)


def _needs_look_doubtful(q: Mapping) -> bool:
    """AMQJRNINF and the recovery points disagree, or one of them cannot be true."""
    blocks = set((q["block_reason"] or "").split(","))
    return Alert.RECOVERY_POINTS_DISAGREE in q["alerts"] or not blocks.isdisjoint(IMPLAUSIBLE_NEEDS)


def _net(q: Mapping) -> int:
    """Bytes freed on the ASP less the new save files, which are about the size of the receivers they hold."""
    return (q["bytes_freed"] or 0) - (q["bytes_to_save"] or 0)


def plan_body(
    queue_managers: Iterable[Mapping], to_save: Mapping[str, list[str]], to_delete: Mapping[str, list[str]]
) -> str:
    """The approval gate's body: per queue manager, what will be saved and deleted, what is blocked, and why."""
    rows = sorted(queue_managers, key=lambda q: (q["host"], q["qmgr"]))
    lines = [
        "| host | queue manager | library | oldest needed | save | delete | frees | net | in the store | blocked "
        "| alerts |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q in rows:
        lines.append(
            f"| {q['host']} | {q['qmgr']} | {q['qmgr_library']} | {q['oldest_needed'] or '-'} "
            f"| {q['receivers_to_save']} ({size(q['bytes_to_save'])}) | {q['receivers_to_delete']} "
            f"| {size(q['bytes_freed'])} | {signed_size(_net(q))} "
            f"| {size(q['store_bytes']) if q.get('store_bytes') is not None else '-'} | {q['block_reason'] or 'no'} "
            f"| {', '.join(q['alerts']) or '-'} |"
        )
    total = sum(q["bytes_freed"] or 0 for q in rows)
    net = sum(_net(q) for q in rows)
    deletes = sum(q["receivers_to_delete"] or 0 for q in rows)
    out = [
        f"**{deletes} receivers to delete, {size(total)} to free, {signed_size(net)} net**, across {len(rows)} "
        "queue managers.",
        "",
        "Net: the receivers freed on the partition's disk minus the save files this run writes there; those stay "
        "until the cleanup step removes them, `keep_on_host_days` after their copy in the backup store is verified.",
        "",
        *lines,
    ]
    details = [(k, v) for k, v in sorted(to_delete.items()) if v]
    if details:
        out += ["", "Receivers to delete (oldest first; each is saved and verified first):"]
        out += [f"- {key}: {', '.join(names)}" for key, names in details]
    alerts = sorted({code for q in rows for code in q["alerts"]})
    if alerts:
        out += ["", "Alerts:"] + [f"- {code}: {alert_text(code)}" for code in alerts]
    # What MQ says it needs, side by side, wherever the three disagree or one of them cannot be true.
    doubtful = [q for q in rows if _needs_look_doubtful(q)]
    if doubtful:
        out += ["", "What MQ needs (AMQJRNINF, AMQ7460 startup, AMQ7462 media) where they disagree or cannot be true:"]
        out += [f"- {q['host']}/{q['qmgr']}/{q['qmgr_library']}: {q.get('recovery_points') or '-'}" for q in doubtful]
    out += [
        "",
        "Approving deletes only what is still deletable when the delete runs: AMQJRNINF and the chain are "
        "re-read on each partition first.",
    ]
    return "\n".join(out)
