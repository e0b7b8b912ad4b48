"""Inline SVG charts: no JavaScript library, no build step, and every drawn element carries its number.

The <svg> carries its whole series as JSON in `data-series`, and each point or bar its own `data-run` and
`data-value`, so a test (or a person with the browser's inspector) reads the numbers that were drawn, not pixels.
Runs are spaced evenly along the x axis, oldest left: a run is a weekly event, and its time is in each point's title.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 78, 16, 16, 34
COLORS = {"value": "#1f6feb", "saved": "#2da44e", "deleted": "#cf222e"}


@dataclass(frozen=True)
class Point:
    """One run's value (None: not known for that run, drawn as a gap)."""

    run: str
    label: str  # the run's time as a person reads it
    value: int | None


def _attr(value: object) -> str:
    return escape(str(value), quote=True)


def _nice_max(value: float) -> float:
    """The axis top: 1, 2, 2.5 or 5 times a power of ten, at least `value` (1 for an all-zero series)."""
    if value <= 0:
        return 1.0
    power = 10 ** (len(str(int(value))) - 1) if value >= 1 else 1.0
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def _frame(name: str, title: str, unit: str, series: object, body: list[str], top: float, fmt: Callable) -> str:
    plot_h = HEIGHT - TOP - BOTTOM
    grid = []
    for i in range(5):
        y = TOP + plot_h - plot_h * i / 4
        grid.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        grid.append(
            f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(fmt(top * i / 4))}</text>'
        )
    return (
        f'<figure class="chart-box"><figcaption>{escape(title)}</figcaption>'
        f'<svg class="chart" data-chart="{_attr(name)}" data-unit="{_attr(unit)}" '
        f'data-series="{_attr(json.dumps(series))}" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{_attr(title)}">' + "".join(grid + body) + "</svg></figure>"
    )


def _x(index: int, count: int) -> float:
    plot_w = WIDTH - LEFT - RIGHT
    return LEFT + plot_w / 2 if count == 1 else LEFT + plot_w * index / (count - 1)


def _x_labels(points: Sequence[Point]) -> list[str]:
    if not points:
        return []
    ends = {0: "start", len(points) - 1: "end"}
    return [
        f'<text class="tick" x="{_x(i, len(points)):.1f}" y="{HEIGHT - 10}" '
        f'text-anchor="{"middle" if len(points) == 1 else anchor}">{escape(points[i].label)}</text>'
        for i, anchor in ends.items()
    ]


def line_chart(
    name: str, title: str, unit: str, points: Sequence[Point], fmt: Callable[[float], str], *, step: float = 1.0
) -> str:
    """One series over the runs: a line through the known values, a circle per value with its number. The axis
    top is a round number of `step`s (3600 for seconds: whole hours; 1048576 for bytes: whole MB)."""
    series = [{"run": p.run, "at": p.label, "value": p.value} for p in points]
    known = [p.value for p in points if p.value is not None]
    if not known:
        return _frame(name, title, unit, series, [_empty()], 1.0, fmt)
    top = _nice_max(max(known) / step) * step
    plot_h = HEIGHT - TOP - BOTTOM

    def y(value: int) -> float:
        return TOP + plot_h - plot_h * value / top

    body: list[str] = []
    path: list[tuple[float, float] | None] = []
    for i, p in enumerate(points):
        if p.value is None:
            path.append(None)
            continue
        cx, cy = _x(i, len(points)), y(p.value)
        path.append((cx, cy))
        body.append(
            f'<circle class="point" data-run="{_attr(p.run)}" data-at="{_attr(p.label)}" data-value="{p.value}" '
            f'cx="{cx:.1f}" cy="{cy:.1f}" r="4" fill="{COLORS["value"]}">'
            f"<title>{escape(p.label)}: {escape(fmt(p.value))}</title></circle>"
        )
    segments: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for xy in path:  # a run without a value breaks the line
        if xy is None:
            segments.append(current)
            current = []
        else:
            current.append(xy)
    segments.append(current)
    lines = [
        f'<polyline class="line" fill="none" stroke="{COLORS["value"]}" stroke-width="2" '
        f'points="{" ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in segment)}"/>'
        for segment in segments
        if len(segment) > 1
    ]
    return _frame(name, title, unit, series, lines + body + _x_labels(points), top, fmt)


def bar_chart(
    name: str, title: str, unit: str, points: Sequence[str], labels: Sequence[str], bars: dict[str, Sequence[int]]
) -> str:
    """Several counts per run, side by side (e.g. receivers saved and deleted), a rect per count with its number."""
    series = [
        {"run": run, "at": label, **{k: v[i] for k, v in bars.items()}}
        for i, (run, label) in enumerate(zip(points, labels, strict=True))
    ]
    values = [v for counts in bars.values() for v in counts]
    fmt = _count
    if not points:
        return _frame(name, title, unit, series, [_empty()], 1.0, fmt)
    top = _nice_max(max(values, default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(points)
    width = max(2.0, min(24.0, slot * 0.8 / len(bars)))
    body = []
    for i, run in enumerate(points):
        left = LEFT + slot * i + (slot - width * len(bars)) / 2
        for j, (kind, counts) in enumerate(bars.items()):
            value = counts[i]
            h = plot_h * value / top
            body.append(
                f'<rect class="bar" data-series="{_attr(kind)}" data-run="{_attr(run)}" data-at="{_attr(labels[i])}" '
                f'data-value="{value}" x="{left + width * j:.1f}" y="{TOP + plot_h - h:.1f}" width="{width:.1f}" '
                f'height="{h:.1f}" fill="{COLORS.get(kind, "#888")}"><title>{escape(labels[i])}: {value} {escape(kind)}'
                "</title></rect>"
            )
    legend = [
        f'<text class="legend" x="{LEFT + 8 + 90 * j}" y="{TOP + 12}" fill="{COLORS.get(kind, "#888")}">'
        f"&#9632; {escape(kind)}</text>"
        for j, kind in enumerate(bars)
    ]
    ticks = _x_labels([Point(run, label, None) for run, label in zip(points, labels, strict=True)])
    return _frame(name, title, unit, series, body + legend + ticks, top, fmt)


def _count(value: float) -> str:
    return f"{value:g}"


def _empty() -> str:
    return (
        f'<text class="empty" x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT / 2}" text-anchor="middle">'
        "no run has recorded this yet</text>"
    )


@dataclass(frozen=True)
class Reading:
    """One collection's reading of an ASP: when (ISO, and as a person reads it) and the bytes used."""

    at: str
    label: str
    value: int
    seconds: float  # seconds from the first reading: the x axis is time, not runs


def forecast_chart(
    name: str,
    title: str,
    readings: Sequence[Reading],
    *,
    capacity: int,
    limit: int,
    projection: tuple[float, float, float, float] | None,
    end_label: str,
    facts: dict[str, object],
    fmt: Callable[[float], str],
) -> str:
    """An ASP's used bytes over time (x: time, so that irregular runs are drawn at their distance), the policy's
    limit and the capacity as horizontal lines, and the forecast's projection from the newest reading as a dashed
    line (`projection`: x0 and y0, x1 and y1, in seconds from the first reading and bytes). The <svg> carries the
    readings and `facts` (growth, days to the limit and to full) in `data-series`."""
    series = {"readings": [{"at": r.at, "value": r.value} for r in readings], **facts}
    if not readings:
        return _frame(name, title, "bytes", series, [_empty()], 1.0, fmt)
    top = float(max(capacity, max(r.value for r in readings), 1))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    last = max([r.seconds for r in readings] + ([projection[2]] if projection else []))
    span = last or 1.0

    def x(seconds: float) -> float:
        return LEFT + plot_w * seconds / span if last else LEFT + plot_w / 2

    def y(value: float) -> float:
        return TOP + plot_h - plot_h * max(0.0, min(value, top)) / top

    body = [
        f'<line class="limit" data-value="{limit}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(limit):.1f}" '
        f'y2="{y(limit):.1f}" stroke="#d4a72c" stroke-width="1.5"><title>the policy\'s limit: '
        f"{escape(fmt(limit))}</title></line>",
        f'<line class="capacity" data-value="{capacity}" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(capacity):.1f}" '
        f'y2="{y(capacity):.1f}" stroke="#cf222e" stroke-width="1.5"><title>full: {escape(fmt(capacity))}</title>'
        "</line>",
    ]
    if projection is not None:
        x0, y0, x1, y1 = projection
        body.append(
            f'<line class="projection" x1="{x(x0):.1f}" y1="{y(y0):.1f}" x2="{x(x1):.1f}" y2="{y(y1):.1f}" '
            f'stroke="{COLORS["value"]}" stroke-width="2" stroke-dasharray="6 4"><title>at the fitted growth, if '
            "nothing is deleted</title></line>"
        )
    body.append(
        f'<polyline class="line" fill="none" stroke="{COLORS["value"]}" stroke-width="2" '
        f'points="{" ".join(f"{x(r.seconds):.1f},{y(r.value):.1f}" for r in readings)}"/>'
    )
    body += [
        f'<circle class="point" data-at="{_attr(r.at)}" data-value="{r.value}" cx="{x(r.seconds):.1f}" '
        f'cy="{y(r.value):.1f}" r="3" fill="{COLORS["value"]}"><title>{escape(r.label)}: {escape(fmt(r.value))}'
        "</title></circle>"
        for r in readings
    ]
    body += [
        f'<text class="tick" x="{LEFT}" y="{HEIGHT - 10}" text-anchor="start">{escape(readings[0].label)}</text>',
        f'<text class="tick" x="{WIDTH - RIGHT}" y="{HEIGHT - 10}" text-anchor="end">{escape(end_label)}</text>',
    ]
    return _frame(name, title, "bytes", series, body, top, fmt)
