"""Small SVG charts for the logbook, by hand: no plotting library, no script, no font to fetch.

    line_chart([(54, 2.44), (55, 2.43), ..., (70, 6.92)], title="loss", marks=[70])
    timeline_chart([Span(0.0, 3.3, "#1", "failed"), Span(3.4, 9.0, "#2", "succeeded")],
                   ticks=[(0.0, "05:06:32Z"), (9.0, "05:06:41Z")], marks=[(2.9, "loss_spike")])

Each returns one `<svg>` element as a string, sized in CSS pixels, with a <title> for screen
readers, that a browser shows inline in HTML (and that prints: colours are attributes, not
stylesheet rules). Every text in it (titles, labels) may come from a run's logs: it is passed
through views.safe.plain and html.escape, so it can neither close the element nor drive a
terminal when the file is cat'ed.

A line chart draws the finite points as a line (broken where a value is not finite), marks
each non-finite value (NaN, inf) as a red triangle at the top edge, draws each `mark` (the
anomaly's step) as a red dashed line with the point on it ringed, and shades each `band` (a
window of skipped steps). Values so large that they would flatten everything else (|v| >
OFF_SCALE) count as off the scale, like a non-finite one.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from babysit.views.safe import plain

__all__ = ["OFF_SCALE", "OUTCOME_COLOURS", "Span", "fmt_number", "line_chart", "timeline_chart"]

OFF_SCALE = 1e12
LINE = "#2563eb"
ANOMALY = "#dc2626"
MUTED = "#6b7280"
GRID = "#e5e7eb"
BAND = "#fde68a"
OUTCOME_COLOURS = {
    "succeeded": "#16a34a",
    "failed": "#dc2626",
    "killed": "#ea580c",
    "stopped": "#7c3aed",
    "lost": "#6b7280",
    "running": "#2563eb",
}
FONT = 'font-family="ui-sans-serif,system-ui,sans-serif" font-size="10"'


def _t(text: object) -> str:
    """Text for SVG: no control characters, XML-escaped (quotes too: it may sit in an
    attribute)."""
    return html.escape(plain(text), quote=True)


def fmt_number(v: float) -> str:
    """Compact: 3 significant digits, `1.2e+08` for the large and the tiny, `nan`, `inf`."""
    if not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        return f"{v:.2e}"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def _num(v: float) -> str:
    return f"{v:.1f}"


def _scale(lo: float, hi: float, out_lo: float, out_hi: float) -> tuple[float, float]:
    """(a, b) with a*lo + b = out_lo and a*hi + b = out_hi; a flat range maps to the middle."""
    if hi - lo <= 0 or not math.isfinite(hi - lo):
        return 0.0, (out_lo + out_hi) / 2
    a = (out_hi - out_lo) / (hi - lo)
    return a, out_lo - a * lo


def line_chart(
    points: Sequence[tuple[float, float]],
    title: str,
    marks: Sequence[float] = (),
    bands: Sequence[tuple[float, float]] = (),
    width: int = 360,
    height: int = 120,
    x_label: str = "step",
) -> str:
    """One series over steps (x) as an SVG string; see the module docstring."""
    pts = sorted((float(x), float(y)) for x, y in points)
    shown = [(x, y) for x, y in pts if math.isfinite(y) and abs(y) <= OFF_SCALE]
    off = [(x, y) for x, y in pts if not (math.isfinite(y) and abs(y) <= OFF_SCALE)]
    left, right, top, bottom = 46, 10, 18, 20
    xs = [x for x, _ in pts] + list(marks) + [v for b in bands for v in b]
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    ys = [y for _, y in shown]
    y_lo, y_hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if y_hi == y_lo:
        pad = abs(y_lo) * 0.1 or 1.0
        y_lo, y_hi = y_lo - pad, y_hi + pad
    ax, bx = _scale(x_lo, x_hi, left, width - right)
    ay, by = _scale(y_lo, y_hi, height - bottom, top + 4)

    def px(x: float) -> float:
        return ax * x + bx

    def py(y: float) -> float:
        return ay * y + by

    label = f"{title}: {len(pts)} values over {x_label}s {fmt_number(x_lo)}-{fmt_number(x_hi)}"
    if marks:
        label += "; anomaly at " + ", ".join(f"{x_label} {fmt_number(m)}" for m in marks)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" class="chart" {FONT}>',
        f"<title>{_t(label)}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    plot_bottom, plot_top = height - bottom, top + 4
    for lo, hi in bands:
        x0, x1 = px(min(lo, hi)), px(max(lo, hi))
        out.append(
            f'<rect x="{_num(x0)}" y="{plot_top}" width="{_num(max(x1 - x0, 2.0))}" '
            f'height="{plot_bottom - plot_top}" fill="{BAND}" opacity="0.6">'
            f"<title>{_t(f'{x_label}s {lo}-{hi} skipped')}</title></rect>"
        )
    for y in (y_lo, (y_lo + y_hi) / 2, y_hi):
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{_num(py(y))}" y2="{_num(py(y))}" '
            f'stroke="{GRID}" stroke-width="1"/>'
            f'<text x="{left - 4}" y="{_num(py(y) + 3)}" text-anchor="end" fill="{MUTED}">'
            f"{_t(fmt_number(y))}</text>"
        )
    out.append(f'<text x="{left}" y="12" font-weight="bold" fill="#111827">{_t(title)}</text>')
    for x, anchor in ((x_lo, "start"), (x_hi, "end")):
        out.append(
            f'<text x="{_num(px(x))}" y="{height - 6}" text-anchor="{anchor}" fill="{MUTED}">'
            f"{_t(f'{x_label} {fmt_number(x)}')}</text>"
        )
    for run in _runs(pts):
        coords = " ".join(f"{_num(px(x))},{_num(py(y))}" for x, y in run)
        if len(run) == 1:
            x, y = run[0]
            out.append(f'<circle cx="{_num(px(x))}" cy="{_num(py(y))}" r="1.8" fill="{LINE}"/>')
        else:
            out.append(
                f'<polyline points="{coords}" fill="none" stroke="{LINE}" stroke-width="1.5" '
                'stroke-linejoin="round"/>'
            )
    for x, y in off:
        cx = px(x)
        out.append(
            f'<path d="M{_num(cx - 4)},{plot_top - 2} L{_num(cx + 4)},{plot_top - 2} '
            f'L{_num(cx)},{plot_top + 5} Z" fill="{ANOMALY}">'
            f"<title>{_t(f'{title} = {fmt_number(y)} at {x_label} {fmt_number(x)}')}</title></path>"
        )
    by_x = dict(shown)
    for m in marks:
        cx = px(m)
        out.append(
            f'<line x1="{_num(cx)}" x2="{_num(cx)}" y1="{plot_top}" y2="{plot_bottom}" '
            f'stroke="{ANOMALY}" stroke-width="1.2" stroke-dasharray="3,2"/>'
        )
        anchor = "end" if cx > (left + width - right) / 2 else "start"
        dx = -3 if anchor == "end" else 3
        # The label goes where the line is not: at the bottom beside a spike up, else the top.
        near = [py(y) for x, y in shown if 0 <= (px(x) - cx) * (1 if dx > 0 else -1) <= 50]
        high = bool(near) and sum(near) / len(near) < (plot_top + plot_bottom) / 2
        label_y = plot_bottom - 4 if high else plot_top + 8
        out.append(
            f'<text x="{_num(cx + dx)}" y="{label_y}" text-anchor="{anchor}" '
            f'fill="{ANOMALY}">{_t(f"{x_label} {fmt_number(m)}")}</text>'
        )
        if m in by_x:
            out.append(
                f'<circle cx="{_num(cx)}" cy="{_num(py(by_x[m]))}" r="3.5" fill="none" '
                f'stroke="{ANOMALY}" stroke-width="1.5"/>'
            )
    out.append("</svg>")
    return "".join(out)


def _runs(pts: Sequence[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """The points split where a value is off the scale (the line breaks there)."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in pts:
        if math.isfinite(y) and abs(y) <= OFF_SCALE:
            runs[-1].append((x, y))
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


@dataclass(frozen=True)
class Span:
    """One attempt on the timeline: from `start` to `end` (seconds on any one clock)."""

    start: float
    end: float
    label: str
    outcome: str  # a key of OUTCOME_COLOURS (another one is grey)


def timeline_chart(
    spans: Sequence[Span],
    ticks: Sequence[tuple[float, str]] = (),
    marks: Sequence[tuple[float, str]] = (),
    width: int = 720,
    height: int = 64,
) -> str:
    """The attempts as bars on one time axis, coloured by outcome; `marks` (an incident's time
    and label) as red ticks above them; `ticks` (time, label) under the axis."""
    left, right, bar_top, bar_h = 8, 8, 18, 20
    times = [t for s in spans for t in (s.start, s.end)] + [t for t, _ in (*ticks, *marks)]
    t_lo, t_hi = (min(times), max(times)) if times else (0.0, 1.0)
    a, b = _scale(t_lo, t_hi, left, width - right)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" class="timeline" {FONT}>',
        f"<title>{_t(f'{len(spans)} attempt(s) on a time line')}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<line x1="{left}" x2="{width - right}" y1="{bar_top + bar_h + 2}" '
        f'y2="{bar_top + bar_h + 2}" stroke="{GRID}"/>',
    ]
    for s in spans:
        x0, x1 = a * s.start + b, a * s.end + b
        w = max(x1 - x0, 2.0)
        colour = OUTCOME_COLOURS.get(s.outcome, MUTED)
        out.append(
            f'<rect x="{_num(x0)}" y="{bar_top}" width="{_num(w)}" height="{bar_h}" rx="2" '
            f'fill="{colour}"><title>{_t(f"{s.label}: {s.outcome}")}</title></rect>'
        )
        if w >= 8 * len(s.label) * 0.6 + 4:
            out.append(
                f'<text x="{_num(x0 + w / 2)}" y="{bar_top + 14}" text-anchor="middle" '
                f'fill="#ffffff" font-weight="bold">{_t(s.label)}</text>'
            )
    for t, label in marks:
        x = a * t + b
        out.append(
            f'<path d="M{_num(x - 4)},4 L{_num(x + 4)},4 L{_num(x)},{bar_top - 2} Z" '
            f'fill="{ANOMALY}"><title>{_t(label)}</title></path>'
        )
    for t, label in ticks:
        x = a * t + b
        anchor = "start" if x < width / 3 else "end" if x > 2 * width / 3 else "middle"
        out.append(
            f'<text x="{_num(x)}" y="{height - 6}" text-anchor="{anchor}" fill="{MUTED}">'
            f"{_t(label)}</text>"
        )
    out.append("</svg>")
    return "".join(out)
