"""`babysit report --plot FILE.svg`: the run's timeline as one stacked horizontal bar, each
stretch coloured by its category, with a legend of each category's total. Written by hand (no
plotting library): one self-contained SVG file that any browser shows.

    svg = goodput_svg(goodput_document(...))
    Path("report.svg").write_text(svg)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from babysit.durations import format_duration
from babysit.views.goodput import CATEGORIES
from babysit.views.safe import plain

COLOURS = {
    "productive": "#2e9d4a",
    "recomputation": "#e8a33d",
    "restart_overhead": "#4a7fd0",
    "hang": "#d0453a",
    "tail": "#9a6fc0",
    "backoff": "#9a9a9a",
}
LABELS = {
    "productive": "productive",
    "recomputation": "recomputation",
    "restart_overhead": "restart overhead",
    "hang": "undetected hang",
    "tail": "after last step",
    "backoff": "backoff and queue",
}
WIDTH, LEFT, RIGHT = 900, 20, 20
BAR_Y, BAR_H = 60, 40


def _text(x: float, y: float, s: str, size: int = 12, anchor: str = "start") -> str:
    # plain(): a control character from a run's name is no valid XML; shown as an escape.
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-family="sans-serif">{escape(plain(s))}</text>'
    )


def goodput_svg(doc: Mapping[str, Any]) -> str:
    """The SVG document (a string). Every stretch of the timeline is one rect with a title
    (shown on hover): its category, cause, attempt and length."""
    wall = float(doc.get("wall_s") or 0.0)
    span = WIDTH - LEFT - RIGHT
    rows = (len(CATEGORIES) + 1) // 2
    height = BAR_Y + BAR_H + 50 + rows * 22 + 10
    share = doc.get("goodput")
    title = f"{doc.get('run')}: goodput " + (f"{share * 100:.1f}%" if share is not None else "-")
    title += f" of {format_duration(wall)}, {doc.get('attempts', 0)} attempt(s)"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}">',
        f"<title>{escape(plain(title))}</title>",
        f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        _text(LEFT, 28, title, 16),
        _text(LEFT, BAR_Y - 8, "0", 11),
        _text(WIDTH - RIGHT, BAR_Y - 8, format_duration(wall), 11, "end"),
        f'<rect x="{LEFT}" y="{BAR_Y}" width="{span}" height="{BAR_H}" fill="#eeeeee"/>',
    ]
    if wall > 0:
        for s in doc.get("timeline") or []:
            x = LEFT + span * s["start_s"] / wall
            w = max(span * (s["end_s"] - s["start_s"]) / wall, 0.5)  # a short stretch stays seen
            tip = (
                f"{LABELS[s['category']]}: {format_duration(s['end_s'] - s['start_s'])}, "
                f"attempt {s['attempt']}, cause {s['cause']}"
            )
            out.append(
                f'<rect x="{x:.2f}" y="{BAR_Y}" width="{w:.2f}" height="{BAR_H}" '
                f'fill="{COLOURS[s["category"]]}" class="{s["category"]}">'
                f"<title>{escape(plain(tip))}</title></rect>"
            )
        # Where each attempt begins: a tick and its number under the bar.
        seen: set[int] = set()
        labelled = -1e9  # the x of the last number written: numbers must not overlap
        for s in doc.get("timeline") or []:
            if s["category"] == "backoff" or s["attempt"] in seen:
                continue
            seen.add(s["attempt"])
            x = LEFT + span * s["start_s"] / wall
            out.append(
                f'<line x1="{x:.2f}" y1="{BAR_Y}" x2="{x:.2f}" y2="{BAR_Y + BAR_H + 6}" '
                'stroke="#333333" stroke-width="1"/>'
            )
            if x - labelled >= 28:
                out.append(_text(x + 2, BAR_Y + BAR_H + 16, f"#{s['attempt']}", 10))
                labelled = x
    cats = doc.get("categories") or {}
    for i, c in enumerate(CATEGORIES):
        x = LEFT + (i % 2) * (span / 2)
        y = BAR_Y + BAR_H + 40 + (i // 2) * 22
        cat = cats.get(c) or {"seconds": 0.0, "share": 0.0}
        label = f"{LABELS[c]}: {format_duration(cat['seconds'])} ({cat['share'] * 100:.1f}%)"
        out.append(f'<rect x="{x:.1f}" y="{y - 11}" width="14" height="14" fill="{COLOURS[c]}"/>')
        out.append(_text(x + 20, y, label))
    out.append("</svg>")
    return "\n".join(out) + "\n"
