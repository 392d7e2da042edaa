"""Files attached to an alert where the destination takes them: the loss around the incident
as a small SVG chart, and the grouped stacks as text (their file, as forensics wrote it).

    svg = loss_svg([(10, 2.5), (20, 2.4), (30, 9.9)], mark_step=30)
    paths = attachments(alert, points, directory)   # the alert's files, plus the chart

An SVG drawn by hand: no plotting library is needed (email and Slack show it as a file).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from babysit.alerts.message import Alert

W, H, PAD = 480, 200, 36
AROUND = 100  # points either side of the incident
PLOTTED = ("gave_up", "restart", "rollback", "incident", "hang")


def loss_svg(points: Sequence[tuple[int, float]], mark_step: int | None = None) -> str:
    """A line chart of (step, loss); non-finite values are drawn as red ticks on the top."""
    finite = [(s, v) for s, v in points if math.isfinite(v)]
    steps = [s for s, _ in points]
    lo_s, hi_s = min(steps), max(steps)
    values = [v for _, v in finite] or [0.0]
    lo_v, hi_v = min(values), max(values)
    if hi_v == lo_v:
        lo_v, hi_v = lo_v - 1, hi_v + 1
    span_s = max(hi_s - lo_s, 1)

    def x(step: int) -> float:
        return PAD + (step - lo_s) / span_s * (W - 2 * PAD)

    def y(value: float) -> float:
        return H - PAD - (value - lo_v) / (hi_v - lo_v) * (H - 2 * PAD)

    path = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v in finite)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{PAD}" y="16">loss, steps {lo_s} to {hi_s}</text>',
        f'<text x="4" y="{PAD}">{hi_v:.4g}</text>',
        f'<text x="4" y="{H - PAD}">{lo_v:.4g}</text>',
        f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{path}"/>',
    ]
    for s, v in points:
        if not math.isfinite(v):
            parts.append(
                f'<line x1="{x(s):.1f}" y1="{PAD - 8}" x2="{x(s):.1f}" y2="{PAD}" '
                'stroke="red" stroke-width="2"/>'
            )
    if mark_step is not None and lo_s <= mark_step <= hi_s:
        mx = x(mark_step)
        parts.append(
            f'<line x1="{mx:.1f}" y1="{PAD}" x2="{mx:.1f}" y2="{H - PAD}" '
            'stroke="red" stroke-dasharray="4 3"/>'
        )
        parts.append(
            f'<text x="{mx + 3:.1f}" y="{H - PAD + 14}" fill="red">step {mark_step}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def attachments(
    alert: Alert, points: Sequence[tuple[int, float]], directory: Path
) -> tuple[str, ...]:
    """The alert's own files that exist, plus a loss chart around its step when there are
    enough points (three or more). Never raises: an attachment is a nicety."""
    files = [p for p in alert.attachments if Path(p).is_file()]
    if alert.kind not in PLOTTED or len(points) < 3:
        return tuple(files)
    mark = alert.step
    if mark is not None:
        near = [p for p in points if abs(p[0] - mark) <= AROUND * _stride(points)]
        points = near if len(near) >= 3 else points
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"loss-{int(alert.ts * 1000)}-{alert.kind}.svg"
        path.write_text(loss_svg(points, mark), encoding="utf-8")
    except (OSError, ValueError):
        return tuple(files)
    return (*files, str(path))


def _stride(points: Sequence[tuple[int, float]]) -> int:
    if len(points) < 2:
        return 1
    return max((points[-1][0] - points[0][0]) // (len(points) - 1), 1)
