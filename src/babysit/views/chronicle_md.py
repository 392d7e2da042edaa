"""The chronicle (views.chronicle) in Markdown: its timeline, incident reports, decisions and
notes, as lines that views.render.logbook_markdown puts before the events.

    chronicle_markdown(chron)  # -> ["## Timeline", "", "- 2026-11-30 04:12 → ...", ...]
    sparkline([[1, 2.4], [2, 2.3], [3, "nan"]])  # -> "█▁×"

Every text from the run goes through plain() or a code span. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from babysit.views.chronicle import metric_value
from babysit.views.render import _code, _dur, _time
from babysit.views.safe import plain
from babysit.views.svgchart import fmt_number
from babysit.views.triage import suspect_where

__all__ = ["chronicle_markdown", "sparkline", "triage_words", "vital_words"]

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(points: Sequence[Sequence[Any]], width: int = 40) -> str:
    """The values as a line of block characters (× for a value that is not finite), at most
    `width` wide (evenly sampled, the last point kept)."""
    ys = [metric_value(p[1]) for p in points]
    if len(ys) > width:
        step = (len(ys) - 1) / (width - 1)
        ys = [ys[round(k * step)] for k in range(width)]
    finite_ys = [y for y in ys if y is not None and math.isfinite(y)]
    lo, hi = (min(finite_ys), max(finite_ys)) if finite_ys else (0.0, 0.0)
    out = []
    for y in ys:
        if y is None or not math.isfinite(y):
            out.append("×")
        elif hi == lo:
            out.append(_BARS[3])
        else:
            out.append(_BARS[min(int((y - lo) / (hi - lo) * len(_BARS)), len(_BARS) - 1)])
    return "".join(out)


def _transient(t: Any) -> str:
    return {True: "a restart can help", False: "a human must act"}.get(t, "restart or not: unclear")


def triage_words(t: Mapping[str, Any]) -> str:
    """`network (a restart can help; suspect node: host gpu-7, rank 3; confidence 0.90)`; an
    unknown suspect is left out."""
    s = t.get("suspect") or {}
    where = suspect_where(s)
    parts = [_transient(t.get("transient"))]
    if where or s.get("kind") not in (None, "unknown"):
        parts.append(f"suspect {s.get('kind') or 'unknown'}" + (f": {where}" if where else ""))
    if isinstance(t.get("confidence"), (int, float)):
        parts.append(f"confidence {t['confidence']:.2f}")
    return f"{t.get('category') or 'unknown'} ({'; '.join(parts)})"


def vital_words(v: Mapping[str, Any]) -> str:
    """`loss 2.44 ▃▃▂▂█▇▇ 6.43 (steps 54–85; anomaly at step 70)`."""
    pts = v["points"]
    first, last = metric_value(pts[0][1]), metric_value(pts[-1][1])
    marks = ", ".join(fmt_number(m) for m in v["marks"])
    return (
        f"{v['metric']} {fmt_number(first or 0.0)} {sparkline(pts)} {fmt_number(last or 0.0)} "
        f"(steps {pts[0][0]}–{pts[-1][0]}" + (f"; anomaly at step {marks}" if marks else "") + ")"
    )


def chronicle_markdown(chron: Mapping[str, Any]) -> list[str]:
    """The chronicle's sections in Markdown, as lines: the timeline, the incidents, the
    decisions and the notes (views.render.logbook_markdown puts them before the events).
    Every text from the run goes through plain() or a code span."""
    out = ["## Timeline", ""]
    for t in chron["timeline"]:
        steps = "" if t["last_step"] is None else f", steps {t['first_step']}–{t['last_step']}"
        gap = t["gap_before_s"]
        wait = f" (after {_dur(gap)})" if gap is not None and gap >= 0.1 else ""
        host = f" on {plain(t['host'])}" if t.get("host") else ""
        cause = f"; cause {plain(t['cause'])}" if t.get("cause") else ""
        out.append(
            f"- {_time(t['started'])} → {_time(t['ended']) if t['ended'] else 'now'}{wait}: "
            f"**attempt {t['number']}**{host}, {_dur(t['duration_s'])}, {plain(t['how'])}"
            f"{steps}{cause}"
        )
    out += ["", "## Incident reports", ""]
    if not chron["incidents"]:
        out.append("No incident.")
    for i in chron["incidents"]:
        where = f", attempt {i['attempt']}" if i["attempt"] is not None else ""
        if out[-1]:
            out.append("")
        out += [f"### {i['id']}. {plain(i['title'])} — {plain(i['category'])}", ""]
        out.append(f"- when: {_time(i['ts'])}{where}")
        if i["summary"]:
            out.append(f"- what: {plain(i['summary'])}")
        for s in i["signals"]:
            if s["message"] != i["summary"]:
                out.append(f"- signal: {_time(s['ts'])} {plain(s['kind'])}: {plain(s['message'])}")
        if i["triage"]:
            out.append(f"- triage: **{plain(triage_words(i['triage']))}**")
            if i["triage"].get("action"):
                out.append(f"- what to do: {plain(i['triage']['action'])}")
        for v in i["vitals"]:
            out.append(f"- vital sign: {_code(vital_words(v))}")
        if i["evidence"]:
            out.append("- evidence:")
            for e in i["evidence"]:
                at = f"{e['file']}:{e['line']}" if e.get("file") else ""
                out.append(f"  - {_code(at) + ' ' if at else ''}{_code(e['text'])}")
        for x in i["stacks"]:
            out.append(f"- stacks: {plain(x['summary'] or '')}")
            for g in x["groups"]:
                who = f"rank(s) {', '.join(map(str, g['ranks']))}" if g["ranks"] else "pids"
                odd = " (the odd one out)" if g.get("odd") else ""
                out.append(f"  - {plain(g['count'])}× {plain(who)}{odd}: {_code(g['where'])}")
    out += ["", "## Decisions and actions", ""]
    out += ["| when (UTC) | attempt | action | reason |", "|---|---|---|---|"]
    for d in chron["decisions"]:
        reason = plain(d["reason"]).replace("|", "\\|")
        out.append(
            f"| {_time(d['ts'])} | {d['attempt'] if d['attempt'] is not None else '-'} | "
            f"{plain(d['action'])} | {reason} |"
        )
    out += ["", "## Notes", ""]
    if not chron["notes"]:
        out.append('None yet (`babysit note RUN "text"` adds one).')
    for n in chron["notes"]:
        by = f" {plain(n['author'])}" if n.get("author") else ""
        out.append(f"- {_time(n['ts'])}{by}: {plain(n['text'])}")
    return out
