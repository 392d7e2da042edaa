"""The logbook as one self-contained HTML file: inline CSS, inline SVG charts, no script.

    html = logbook_html(doc, chron)     # doc: views.document.run_document; chron: chronicle()
    Path("logbook.html").write_text(html)

Nothing is fetched: no stylesheet, font, image or script from anywhere, and a Content Security
Policy (default-src 'none') tells the browser to refuse any that a bug let in. It reads on a
screen and prints (print CSS: no navigation, no card split across pages, colours kept).

Logs are attacker-controlled: every text of the run (its name, command, messages, log lines,
notes) goes through _e(): control characters shown as escapes (views.safe.plain), then
html.escape, quotes included. The charts (views.svgchart) escape their own labels.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from babysit import __version__
from babysit.views.chronicle_md import triage_words
from babysit.views.render import _command, _dur, _time
from babysit.views.safe import plain
from babysit.views.svgchart import OUTCOME_COLOURS, Span, line_chart, timeline_chart

__all__ = ["logbook_html"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { --fg:#111827; --muted:#6b7280; --line:#e5e7eb; --card:#f9fafb; --accent:#2563eb; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:#fff;
  font:14px/1.45 ui-sans-serif,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; }
main { max-width:1120px; margin:0 auto; padding:24px 28px 48px; }
h1 { font-size:24px; margin:0 0 4px; display:flex; gap:12px; align-items:center; flex-wrap:wrap; }
h2 { font-size:18px; margin:32px 0 10px; padding-bottom:4px; border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:0 0 6px; }
code, pre { font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; }
code { background:#f3f4f6; padding:1px 4px; border-radius:3px; overflow-wrap:anywhere; }
pre { background:#111827; color:#f9fafb; padding:8px 10px; border-radius:4px; margin:6px 0;
  white-space:pre-wrap; overflow-wrap:anywhere; }
.muted { color:var(--muted); }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px;
  font-weight:600; color:#fff; background:var(--muted); vertical-align:middle;
  -webkit-print-color-adjust:exact; print-color-adjust:exact; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:2px 14px; margin:10px 0; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; overflow-wrap:anywhere; }
.figures { display:flex; flex-wrap:wrap; gap:10px; margin:12px 0; }
.figure { border:1px solid var(--line); border-radius:6px; padding:6px 12px; min-width:96px; }
.figure b { display:block; font-size:18px; }
.figure span { color:var(--muted); font-size:12px; }
nav { margin:10px 0 0; color:var(--muted); }
nav a { color:var(--accent); text-decoration:none; margin-right:12px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; vertical-align:top; padding:4px 8px;
  border-bottom:1px solid var(--line); }
th { background:#f3f4f6; font-weight:600; white-space:nowrap; }
td.num { text-align:right; white-space:nowrap; }
td.when { white-space:nowrap; }
td.wrap { overflow-wrap:anywhere; min-width:16em; }
svg { max-width:100%; height:auto; }
article.incident { border:1px solid var(--line); border-left:4px solid #dc2626;
  border-radius:6px; background:var(--card); padding:12px 14px; margin:12px 0; }
article.incident.settled { border-left-color:#f59e0b; }
.meta { color:var(--muted); font-size:12px; margin-bottom:6px; }
.triage { margin:6px 0; }
.charts { display:flex; flex-wrap:wrap; gap:10px; margin:8px 0; }
.charts svg { border:1px solid var(--line); border-radius:4px; background:#fff; }
ul { margin:4px 0; padding-left:20px; }
.notes li { margin:6px 0; list-style:none; border-left:3px solid var(--accent);
  padding:2px 10px; background:var(--card); }
.note-text { white-space:pre-wrap; overflow-wrap:anywhere; }
footer { margin-top:36px; color:var(--muted); font-size:12px; }
@media (max-width: 900px) {
  td.when, th { white-space:normal; }
  table { font-size:12px; }
}
@media print {
  body { font-size:10pt; }
  td.when, th { white-space:normal; }
  table { font-size:8.5pt; }
  main { max-width:none; padding:0; }
  nav { display:none; }
  h2 { break-after:avoid; }
  article.incident, tr, .figure, svg { break-inside:avoid; }
  pre { background:#fff; color:#000; border:1px solid #999; }
  a { color:inherit; text-decoration:none; }
  @page { margin:14mm; }
}
"""


def _e(text: object) -> str:
    """Run text for HTML: control characters as escapes, then HTML-escaped (quotes too)."""
    return html.escape(plain("" if text is None else text), quote=True)


def _e_lines(text: object) -> str:
    return html.escape(plain("" if text is None else text, newlines=True), quote=True)


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


def _badge(word: object, colour: str | None = None) -> str:
    colour = colour or OUTCOME_COLOURS.get(str(word), "#6b7280")
    return f'<span class="badge" style="background:{colour}">{_e(word)}</span>'


def logbook_html(doc: Mapping[str, Any], chron: Mapping[str, Any]) -> str:
    """The whole page (see the module docstring)."""
    body = [
        _header(doc, chron),
        _timeline(chron),
        _incidents(chron),
        _decisions(chron),
        _notes(chron),
        _events(doc),
        f"<footer>Written by babysit {_e(__version__)} from its store; run last updated "
        f"{_e(_time(doc.get('updated')))}. Self-contained: nothing here was fetched.</footer>",
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="babysit {_e(__version__)}">'
        f"<title>Logbook: {_e(doc['run'])}</title>"
        f"<style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(body)
        + "\n</main></body></html>\n"
    )


def _header(doc: Mapping[str, Any], chron: Mapping[str, Any]) -> str:
    s = chron["summary"]
    facts = [
        ("command", f"<code>{_e(_command(doc))}</code>"),
        ("working directory", f"<code>{_e(doc.get('cwd') or '-')}</code>"),
        ("started", _e(_time(s["started"]))),
        ("ended", _e(_time(s["ended"])) if s["ended"] else "still running"),
    ]
    if doc.get("reason"):
        facts.insert(0, ("how it ended" if s["ended"] else "state", _e(doc["reason"])))
    figures = [
        (_dur(s["wall_s"]) if s["wall_s"] is not None else "-", "wall time"),
        (str(s["attempts"]), "attempts"),
        (str(s["restarts"]), "restarts"),
        (str(s["rollbacks"]), "rollbacks"),
        (str(s["bans"]), "bans"),
        (str(s["incidents"]), "incidents"),
        ("-" if s["last_step"] is None else f"{s['last_step']:,}", "last step"),
        (str(s["notes"]), "notes"),
    ]
    return (
        f"<header><h1>Logbook: {_e(doc['run'])} {_badge(doc['state'])}</h1>"
        '<dl class="facts">'
        + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts)
        + '</dl><div class="figures">'
        + "".join(f'<div class="figure"><b>{_e(v)}</b><span>{k}</span></div>' for v, k in figures)
        + "</div>"
        '<nav><a href="#timeline">Timeline</a><a href="#incidents">Incidents</a>'
        '<a href="#decisions">Decisions and actions</a><a href="#notes">Notes</a>'
        '<a href="#events">Events</a></nav></header>'
    )


def _timeline(chron: Mapping[str, Any]) -> str:
    rows, spans = [], []
    times: list[float] = []
    for t in chron["timeline"]:
        start, end = _epoch(t["started"]), _epoch(t["ended"])
        if start is not None:
            times += [start] + ([end] if end is not None else [])
        steps = "-" if t["last_step"] is None else f"{t['first_step']}–{t['last_step']}"
        exit_code = t["exit_code"] if t["exit_code"] is not None else "-"
        rows.append(
            f"<tr><td class=num>{t['number']}</td><td class=when>{_e(_time(t['started']))}</td>"
            f"<td class=when>{_e(_time(t['ended'])) if t['ended'] else 'running'}</td>"
            f"<td class=num>{_e(_dur(t['duration_s']))}</td>"
            f"<td class=when>{_badge(t['outcome'])} {_e(_detail(t['how'], t['outcome']))}</td>"
            f"<td class=num>{_e(exit_code)}</td><td>{_e(t['cause'] or '-')}</td>"
            f"<td>{_e(t['host'] or '-')}</td><td class=num>{_e(steps)}</td>"
            f"<td class=wrap>{_summary(t)}</td></tr>"
        )
    last = max(times) if times else 0.0
    for t in chron["timeline"]:
        start = _epoch(t["started"])
        if start is not None:
            end = _epoch(t["ended"]) or last
            spans.append(Span(start, max(end, start), f"#{t['number']}", str(t["outcome"])))
    marks = []
    for i in chron["incidents"]:
        ts = _epoch(i["ts"])
        if ts is not None:
            marks.append((ts, f"{i['id']}: {i['title']}"))
    chart = ""
    if spans:
        lo, hi = min(s.start for s in spans), max(s.end for s in spans)
        ticks = [(lo, _time(chron["timeline"][0]["started"]))]
        if hi > lo:
            ticks.append((hi, f"{_time(chron['summary']['ended'] or '')}".strip("-") or "now"))
        chart = f"<div>{timeline_chart(spans, ticks, marks, width=1060)}</div>"
    return (
        '<section id="timeline"><h2>Timeline</h2>'
        + chart
        + "<table><thead><tr><th>#</th><th>started (UTC)</th><th>ended</th><th>duration</th>"
        "<th>outcome</th><th>exit</th><th>cause</th><th>host</th><th>steps</th><th>summary</th>"
        "</tr></thead><tbody>"
        + ("".join(rows) or "<tr><td colspan=10>No attempt yet.</td></tr>")
        + "</tbody></table></section>"
    )


def _detail(how: str, outcome: object) -> str:
    """`SIGTERM` of `killed (SIGTERM)`: the badge says `killed`, the exit column the code."""
    rest = how[len(str(outcome)) :].strip() if how.startswith(str(outcome)) else how
    return "" if rest.startswith("(exit ") else rest.strip("()")


def _summary(t: Mapping[str, Any]) -> str:
    parts = [_e(t["summary"])] if t.get("summary") else []
    if t.get("resume_from"):
        parts.append(f"<span class=muted>resumed from {_e(t['resume_from'])}</span>")
    if t.get("skip_steps"):
        windows = ", ".join(f"{lo}-{hi}" for lo, hi in t["skip_steps"])
        parts.append(f"<span class=muted>skipping the data of steps {_e(windows)}</span>")
    return "<br>".join(parts)


def _incidents(chron: Mapping[str, Any]) -> str:
    parts = ['<section id="incidents"><h2>Incidents</h2>']
    if not chron["incidents"]:
        parts.append("<p class=muted>No incident: nothing went wrong that babysit saw.</p>")
    for i in chron["incidents"]:
        parts.append(_incident(i))
    parts.append("</section>")
    return "".join(parts)


def _incident(i: Mapping[str, Any]) -> str:
    failed = i["kind"] in ("failed", "killed", "lost")
    where = [f"at {_e(_time(i['ts']))}"]
    if i["attempt"] is not None:
        where.append(f"attempt {i['attempt']}")
    if i["step"] is not None:
        where.append(f"step {_e(i['step'])}")
    out = [
        f'<article class="incident{"" if failed else " settled"}" id="{_e(i["id"])}">'
        f"<h3>{_e(i['id'])} · {_e(i['title'])} {_badge(i['category'], '#374151')}</h3>"
        f'<div class="meta">{" · ".join(where)}</div>'
    ]
    if i["summary"]:
        out.append(f"<p>{_e(i['summary'])}</p>")
    signals = [s for s in i["signals"] if s["message"] != i["summary"]]
    if signals:
        out.append(
            "<ul>"
            + "".join(
                f"<li><span class=muted>{_e(_time(s['ts']))}</span> <b>{_e(s['kind'])}</b>: "
                f"{_e(s['message'])}</li>"
                for s in signals
            )
            + "</ul>"
        )
    t = i["triage"]
    if t:
        out.append(f'<div class="triage"><b>Triage:</b> {_e(triage_words(t))}')
        if t.get("action"):
            out.append(f"<br><b>What to do:</b> {_e(t['action'])}")
        out.append("</div>")
    if i["vitals"]:
        out.append('<div class="charts">')
        for v in i["vitals"]:
            points = [(float(x), _num(y)) for x, y in v["points"]]
            bands = [(float(lo), float(hi)) for lo, hi in v["bands"]]
            marks = [float(m) for m in v["marks"]]
            out.append(line_chart(points, v["metric"], marks, bands, width=420, height=140))
        out.append("</div>")
    if i["evidence"]:
        lines = [
            (f"{_short(e['file'])}:{e['line']}: " if e.get("file") else "") + str(e["text"])
            for e in i["evidence"]
        ]
        out.append("<b>Evidence</b><pre>" + "\n".join(_e(ln) for ln in lines) + "</pre>")
    if i["consequences"]:
        out.append(
            "<b>Follow-on errors</b><ul>"
            + "".join(
                f"<li>{_e(c.get('count'))}× {_e(c.get('category'))}: {_e(c.get('summary'))}</li>"
                for c in i["consequences"]
            )
            + "</ul>"
        )
    for x in i["stacks"]:
        out.append(f"<b>Stacks</b> <span class=muted>{_e(_time(x['ts']))}</span>")
        if x.get("summary"):
            out.append(f"<p>{_e(x['summary'])}</p>")
        out.append("<ul>" + "".join(_group(g) for g in x["groups"]) + "</ul>")
    out.append("</article>")
    return "".join(out)


def _short(path: object) -> str:
    """`attempt-0001/stderr.log` of a log's full path (the JSON has it whole)."""
    return "/".join(str(path).rstrip("/").split("/")[-2:])


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _group(g: Mapping[str, Any]) -> str:
    ranks: Sequence[Any] = g.get("ranks") or []
    who = f"rank(s) {', '.join(map(str, ranks[:16]))}" if ranks else "processes"
    odd = " <b>(the odd one out)</b>" if g.get("odd") else ""
    return f"<li>{_e(g.get('count'))}× {_e(who)}{odd}: <code>{_e(g.get('where'))}</code></li>"


def _decisions(chron: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td class=when>{_e(_time(d['ts']))}</td>"
        f"<td class=num>{_e(d['attempt'] if d['attempt'] is not None else '-')}</td>"
        f"<td><b>{_e(d['action'])}</b></td><td class=wrap>{_e(d['reason'])}</td></tr>"
        for d in chron["decisions"]
    )
    return (
        '<section id="decisions"><h2>Decisions and actions</h2>'
        "<table><thead><tr><th>when (UTC)</th><th>attempt</th><th>action</th><th>reason</th>"
        "</tr></thead><tbody>"
        + (rows or "<tr><td colspan=4>None.</td></tr>")
        + "</tbody></table></section>"
    )


def _notes(chron: Mapping[str, Any]) -> str:
    if not chron["notes"]:
        body = '<p class=muted>None yet (<code>babysit note RUN "text"</code> adds one).</p>'
    else:
        body = (
            '<ul class="notes">'
            + "".join(
                f"<li><div class=muted>{_e(_time(n['ts']))}"
                + (f" · {_e(n['author'])}" if n.get("author") else "")
                + (f" · attempt {_e(n['attempt'])}" if n.get("attempt") is not None else "")
                + f'</div><div class="note-text">{_e_lines(n["text"])}</div></li>'
                for n in chron["notes"]
            )
            + "</ul>"
        )
    return f'<section id="notes"><h2>Notes</h2>{body}</section>'


def _events(doc: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><td class=when>{_e(_time(e['ts']))}</td>"
        f"<td class=num>{_e(e['attempt'] if e['attempt'] is not None else '-')}</td>"
        f"<td>{_e(e['kind'])}</td><td class=wrap>{_e(e['message'])}</td></tr>"
        for e in doc["events"]
    )
    return (
        f'<section id="events"><h2>Events ({len(doc["events"])})</h2>'
        "<table><thead><tr><th>when (UTC)</th><th>attempt</th><th>event</th><th>message</th>"
        "</tr></thead><tbody>"
        + (rows or "<tr><td colspan=4>None.</td></tr>")
        + "</tbody></table></section>"
    )
