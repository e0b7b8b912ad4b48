"""What a person reads: the plan as the approval gate shows it, and the run summary afterwards (Markdown)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

from mqjournal import explain, timefmt
from mqjournal.forecast import AspForecast, AspKey, forecast_of, limit_in
from mqjournal.planrows import PlannedQueueManager, PlannedReceiver
from mqjournal.policy import Policy
from mqjournal.ranges import ReceiverRange, receiver_ranges
from mqjournal.sizefmt import signed_size, size
from mqjournal.space import net_bytes
from mqjournal.vocabulary import DELETES, IMPLAUSIBLE_NEEDS, Action, Alert, HoldingPoint, alert_text

TABLE_ROWS = 100
"""Queue managers the gate's table lists: past this, those with nothing to delete or say are counted, not listed."""
DETAILED_QUEUE_MANAGERS = 20
"""Queue managers whose receivers the gate shows as ranges: alerts and blocks first, then the most bytes freed."""
RANGES_PER_LIST = 6
"""Ranges per list (delete, save, keep) of one queue manager; the rest are summed up in one line."""


def _needs_look_doubtful(q: PlannedQueueManager) -> bool:
    """AMQJRNINF and the recovery points disagree, or one of them cannot be true."""
    return Alert.RECOVERY_POINTS_DISAGREE in q.alerts or not set(q.block_reasons).isdisjoint(IMPLAUSIBLE_NEEDS)


def planned_save_file_bytes(q: PlannedQueueManager, policy: Policy) -> int:
    """The save files the run is expected to write for queue manager `q`: its receivers to save, as compressed by the
    policy's save_compression (DTACPR). The run report has their real sizes."""
    return policy.estimated_save_file_bytes(q.bytes_to_save)


def planned_net(q: PlannedQueueManager, policy: Policy) -> int:
    """Net space as the gate shows it: what the deletes free less the save files the run is expected to write
    (mqjournal.space.net_bytes, as the run report counts it with the real sizes)."""
    return net_bytes(q.bytes_freed, planned_save_file_bytes(q, policy))


DELETE_NOTHING = "Delete nothing"
"""The maintenance gate's option that approves no queue manager, and its answer on timeout."""


RECOVERY_PAGE = f"dags/{explain.RECOVERY_DAG}"
"""The recovery DAG's page, relative: Airflow's UI sets its `<base href>` to where it is served, so the link resolves
there whether or not `[api] base_url` is set. Airflow 3.3's UI has no route of its own for the trigger form and fills
no form from the URL, so the link opens the DAG, whose Trigger button opens the form, and the text says what to
enter."""


def recovery_dag_link(page: str = RECOVERY_PAGE) -> str:
    """The recovery DAG named as a Markdown link, for explain.alert_explanations in Markdown the UI renders."""
    return f"[{explain.RECOVERY_DAG}]({page}) (its Trigger button opens the form)"


def markdown_text(text: str) -> str:
    """Plain text made safe for Markdown: IBM i writes special values with an asterisk (TYPE(*ALL), WHERE(*INDOUBT
    *EQ YES)), and two of them on one line would render as emphasis, eating the asterisks an admin has to type.
    Underscores are left alone: inside a word (STARTUP_POINT_OLD) they never start emphasis."""
    return text.replace("\\", "\\\\").replace("*", "\\*")


def asp_text(q: PlannedQueueManager | None) -> str:
    """`ASP 1: 72% used, 17.9 GB free of 64.0 GB`, or "" when the collector could not read it."""
    if q is None:
        return ""
    capacity, available = q.asp_capacity_bytes, q.asp_available_bytes
    if not capacity or available is None:
        return ""
    used = 100 * (capacity - available) / capacity
    number = q.asp_number
    return f"ASP {number if number is not None else '?'}: {used:.0f}% used, {size(available)} free of {size(capacity)}"


_POINT_WORDS: dict[str, str] = {
    HoldingPoint.STARTUP: "the latest startup recovery point (AMQ7460)",
    HoldingPoint.MEDIA: "the latest media recovery point (AMQ7462)",
    HoldingPoint.AMQJRNINF: "AMQJRNINF's oldest needed entry",
}


def held_by(q: PlannedQueueManager, policy: Policy) -> str:
    """Which point holds the oldest needed receiver, and its age ("-" when not known). A point is always held by
    something; right after the checkpoint mqjournal forces it is seconds old, which is MQ's normal state and must not
    read as a finding: it is said in words. Only one older than the limit of STARTUP_POINT_OLD and MEDIA_POINT_OLD
    (policy.recovery_point_alert_hours) keeps the terse `AMQ7462, 46 h` an admin looks into."""
    point = q.holding_point
    if not point:
        return "-"
    age = q.holding_point_age_seconds
    if age is None:
        return str(point)
    if age > policy.recovery_point_alert_age.total_seconds():
        return f"{point}, {timefmt.age(age)}"
    return f"{_POINT_WORDS[point]}, {timefmt.age(age)} old"


def _notable(q: PlannedQueueManager) -> bool:
    return bool(q.receivers_to_delete or q.receivers_to_save or q.block_reason or q.alerts)


def _priority(q: PlannedQueueManager) -> tuple:
    return (not (q.alerts or q.block_reason), -q.bytes_freed, q.host, q.qmgr)


def grouped_ranges(rows: Iterable[PlannedReceiver], q: PlannedQueueManager) -> list[ReceiverRange]:
    """The queue manager's receivers as ranges of the same action and the same explanation."""
    return receiver_ranges(rows, key=lambda r: explain.explanation(r, q))


def _keep_verb(r: ReceiverRange) -> str:
    return "to save, then keep" if r.action == Action.SAVE else "kept"


def _delete_label(row: PlannedReceiver) -> str:
    return "saved by this run first" if row.action == Action.SAVE_THEN_DELETE else "saved before"


def range_lines(
    ranges: Sequence[ReceiverRange],
    q: PlannedQueueManager | None,
    *,
    verb: str | Callable[[ReceiverRange], str] = "",
    why: bool = True,
) -> list[str]:
    """One line per range, at most RANGES_PER_LIST, then the rest summed up; `verb` may depend on the range."""
    offset = explain.offset_of(q)
    lines = []
    for r in ranges[:RANGES_PER_LIST]:
        v = verb(r) if callable(verb) else verb
        lines.append(
            r.text(offset, verb=v, why=r.label) if why else r.text(offset, verb=v) + f" ({r.label})" * bool(r.label)
        )
    rest = ranges[RANGES_PER_LIST:]
    if rest:
        count, total = sum(r.count for r in rest), sum(r.size_bytes for r in rest)
        lines.append(f"... and {len(rest)} more ranges: {count} receivers, {size(total)}")
    return lines


def _detail(
    q: PlannedQueueManager, rows: Sequence[PlannedReceiver], policy: Policy, store_bytes: int | None
) -> list[str]:
    """A queue manager's section of the gate: its receivers as ranges, space, blocks and alerts."""
    out = [f"### {q.ref.label} (library {q.qmgr_library})", ""]
    deletes = [r for r in rows if r.action in DELETES]
    saves = [r for r in rows if r.action == Action.SAVE]
    kept = [r for r in rows if r.action == Action.KEEP]
    items: list[str] = []
    if q.block_reason:
        items.append(f"**Blocked**: {markdown_text(explain.block_words(q))}. Nothing of it is deleted.")
    if deletes:
        items += range_lines(receiver_ranges(deletes, key=_delete_label), q, verb="to delete", why=False)
    if saves or kept:
        items += map(markdown_text, range_lines(grouped_ranges([*saves, *kept], q), q, verb=_keep_verb))
    if not rows:
        items.append(f"{q.receivers_to_delete} receivers to delete, {q.receivers_to_save} to save")
    space = [
        f"frees {size(q.bytes_freed)}",
        f"net {signed_size(planned_net(q, policy))} after this run's save files (about "
        f"{size(planned_save_file_bytes(q, policy))}, DTACPR({policy.save_compression}))",
    ]
    if asp_text(q):
        space.append(asp_text(q))
    if store_bytes is not None:
        space.append(f"{size(store_bytes)} in the backup store")
    items.append("Space: " + "; ".join(space))
    items += _alert_lines(q)
    return [*out, *(f"- {item}" for item in items), ""]


def _alert_lines(q: PlannedQueueManager) -> list[str]:
    # The link is Markdown of our own; the explanation around it is plain text (CL with its asterisks).
    link, marker = recovery_dag_link(), "\x00recovery-dag\x00"
    return [markdown_text(line).replace(marker, link) for line in explain.alert_explanations(q, recovery_dag=marker)]


def plan_body(
    queue_managers: Iterable[PlannedQueueManager],
    receivers: Iterable[PlannedReceiver] = (),
    policy: Policy | None = None,
    *,
    store_bytes: Mapping[str, int] | None = None,
    forecasts: Mapping[AspKey, AspForecast] | None = None,
) -> str:
    """The approval gate's body: the fleet's totals, a table per host and queue manager, then per queue manager its
    receivers to delete and save as ranges (count, bytes, detach dates), those it keeps grouped by why, net space
    (the save files estimated with `policy`'s compression), ASP use, what the backup store holds of it
    (`store_bytes`, by QueueManagerRef.key), when its ASP reaches the policy's limit (`forecasts`, by host and ASP:
    mqjournal.forecast), blocks and alerts with what to do. Bounded for a large fleet:
    TABLE_ROWS, DETAILED_QUEUE_MANAGERS and RANGES_PER_LIST cap it, and say what they leave out."""
    policy = policy or Policy()
    stored = store_bytes or {}
    rows = sorted(queue_managers, key=lambda q: q.ref.order)
    by_key: dict[str, list[PlannedReceiver]] = defaultdict(list)
    for r in receivers:
        by_key[r.ref.key].append(r)
    deletes = sum(q.receivers_to_delete for q in rows)
    saves = sum(q.receivers_to_save for q in rows)
    deleting = sum(1 for q in rows if q.receivers_to_delete)
    blocked = sum(1 for q in rows if q.block_reason)
    alerted = sum(1 for q in rows if q.alerts)
    total = sum(q.bytes_freed for q in rows)
    net = sum(planned_net(q, policy) for q in rows)
    out = [
        f"**{deletes} receivers to delete on {deleting} of {len(rows)} queue managers, {size(total)} to free, "
        f"{signed_size(net)} net** ({saves} receivers to save, {size(sum(q.bytes_to_save for q in rows))}"
        f" in about {size(sum(planned_save_file_bytes(q, policy) for q in rows))} of save files"
        f"; {blocked} blocked, {alerted} with alerts).",
        "",
        "Choose the queue managers whose deletes may run: the gate's options are named `host/QMGR`, each with the "
        "receivers and bytes choosing it deletes; when there are several, one chooses all of them. None is "
        "preselected. Only the chosen ones delete; the others delete nothing (their saves stand) and the "
        f'run report names them declined. "{DELETE_NOTHING}" with anything else deletes nothing, and so does no '
        "answer before the gate's timeout.",
        "",
        "Net: the receivers freed on the partition's disk minus the save files this run writes there; those stay "
        "until the cleanup step removes them, `keep_on_host_days` after their copy in the backup store is verified. "
        f"The save files are estimated from the receivers to save and the policy's data compression "
        f"(DTACPR({policy.save_compression})); the run report counts the same with their real sizes.",
        "",
        *_table(rows, policy, stored, forecasts or {}),
    ]
    detailed = sorted(sorted(rows, key=_priority)[:DETAILED_QUEUE_MANAGERS], key=lambda q: (q.host, q.qmgr))
    if detailed:
        out += ["", "## Per queue manager", ""]
        for q in detailed:
            out += _detail(q, by_key.get(q.ref.key, []), policy, stored.get(q.ref.key))
        left = len(rows) - len(detailed)
        if left:
            out += [
                f"The receivers of {left} more queue managers are not shown here (their rows in the table are; the "
                "plan's receivers dataset has every receiver).",
                "",
            ]
    codes = sorted({code for q in rows for code in q.alerts})
    if codes:
        out += ["Alerts:"] + [f"- {code}: {alert_text(code)}" for code in codes]
    # What MQ says it needs, side by side, wherever the three disagree or one of them cannot be true.
    doubtful = [q for q in rows if _needs_look_doubtful(q)]
    if doubtful:
        out += ["", "What MQ needs (AMQJRNINF, AMQ7460 startup, AMQ7462 media) where they disagree or cannot be true:"]
        out += [f"- {q.ref.key}: {q.recovery_points or '-'}" for q in doubtful]
    out += [
        "",
        "Approving deletes only what is still deletable when the delete runs: AMQJRNINF and the chain are "
        "re-read on each partition first.",
    ]
    return "\n".join(out)


def _table(
    rows: Sequence[PlannedQueueManager],
    policy: Policy,
    stored: Mapping[str, int],
    forecasts: Mapping[AspKey, AspForecast],
) -> list[str]:
    listed = list(rows) if len(rows) <= TABLE_ROWS else [q for q in rows if _notable(q)][:TABLE_ROWS]
    lines = [
        "| host | queue manager | library | delete | frees | save | net | ASP | in the store | oldest needed "
        f"| held by | blocked | alerts | ASP {policy.asp_limit_percent:g}% in |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for q in listed:
        asp = asp_text(q).split(": ", 1)[-1].split(",")[0] if asp_text(q) else "-"
        in_store = stored.get(q.ref.key)
        lines.append(
            f"| {q.host} | {q.qmgr} | {q.qmgr_library} | {q.receivers_to_delete} "
            f"| {size(q.bytes_freed)} | {q.receivers_to_save} ({size(q.bytes_to_save)}) "
            f"| {signed_size(planned_net(q, policy))} | {asp} "
            f"| {size(in_store) if in_store is not None else '-'} "
            f"| {q.oldest_needed or '-'} | {held_by(q, policy)} | {q.block_reason or 'no'} "
            f"| {', '.join(q.alerts) or '-'} | {limit_in(forecast_of(q, forecasts))} |"
        )
    left = [q for q in rows if q not in listed]
    if left:
        quiet = sum(1 for q in left if not _notable(q))
        lines += [
            "",
            f"{len(left)} more queue managers are not listed ({quiet} of them with nothing to save or delete, not "
            "blocked, no alerts); the plan's queue_managers dataset has them all.",
        ]
    return lines
