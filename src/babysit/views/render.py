"""Render run documents for people: the status tables and the Markdown logbook.

print(logbook_markdown(doc))
status_tables(doc, console)

Every string of a document may come from the run (its log lines, its command line): the tables
put each through views.safe.markup and the logbook through plain() (and Markdown's own escapes),
so a log line can neither drive the terminal nor inject markup.
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from babysit.views.safe import markup, plain
from babysit.views.triage import suspect_where

_STATE_STYLE = {
    "running": "green",
    "backoff": "yellow",
    "starting": "cyan",
    "stopping": "yellow",
    "succeeded": "bold green",
    "failed": "bold red",
    "stopped": "magenta",
}


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 60:
        return f"{seconds:.1f}s"
    h, rem = divmod(s, 3600)
    return f"{h}h{rem // 60:02d}m" if h else f"{rem // 60}m{rem % 60:02d}s"


def _how(a: Mapping[str, Any]) -> str:
    if a["outcome"] == "running":
        return "running"
    if a.get("signal"):
        try:
            name = signal.Signals(a["signal"]).name
        except ValueError:
            name = f"signal {a['signal']}"
        return f"{a['outcome']} ({name})"
    if a.get("exit_code") is not None:
        return f"{a['outcome']} (exit {a['exit_code']})"
    return str(a["outcome"])


def _time(iso: str | None) -> str:
    return iso.replace("T", " ")[:19] + "Z" if iso else "-"


def _cell(value: Any) -> str:
    """A Markdown table cell: one line, no control characters, pipes escaped."""
    return plain("" if value is None else value).replace("|", "\\|")


def _code(value: Any) -> str:
    """A Markdown code span that the text cannot close: a fence longer than its longest run
    of backticks, padded when the text starts or ends with one."""
    text = plain("" if value is None else value)
    longest = run = 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def runs_table(docs: Sequence[Mapping[str, Any]], console: Console) -> None:
    table = Table(title="runs", title_justify="left", **_box(console.width))
    for col in ("run", "state", "attempts", "last step", "updated", "supervisor"):
        table.add_column(col, no_wrap=col != "run", overflow="fold")  # a long name wraps
    for d in docs:
        last = next(
            (a["last_step"] for a in reversed(d["attempts"]) if a["last_step"] is not None), None
        )
        style = _STATE_STYLE.get(d["state"], "")
        table.add_row(
            markup(d["run"]),
            f"[{style}]{markup(d['state'])}[/]",
            str(len(d["attempts"])),
            "-" if last is None else markup(last),
            _time(d["updated"]),
            f"pid {d['supervisor_pid']}" if d["supervised"] else "none",
        )
    console.print(table)


def status_tables(
    doc: Mapping[str, Any], console: Console, events: int = 10, live: Sequence[str] = ()
) -> None:
    style = _STATE_STYLE.get(doc["state"], "")
    sup = (
        f"supervised by babysit pid {doc['supervisor_pid']}"
        if doc["supervised"]
        else "no babysit attached"
    )
    if doc["state"] in ("running", "backoff", "starting") and not doc["supervised"]:
        sup += " (babysit died? run the same `babysit run` again to re-attach)"
    console.print(
        f"[bold]{markup(doc['run'])}[/]: [{style}]{markup(doc['state'])}[/] — {markup(sup)}"
    )
    if doc.get("reason"):
        console.print(f"  reason: {markup(doc['reason'])}")
    console.print(f"  command: {markup(_command(doc))}")
    for line in live:  # views.live: step, loss, speed, ETA, last incident
        console.print(f"  {markup(line)}")
    table = _attempts_table(console.width)
    for a in doc["attempts"]:
        steps = (
            "-"
            if a["last_step"] is None
            else (
                f"{a['first_step']}→{a['last_step']}"
                if a["first_step"] is not None
                else str(a["last_step"])
            )
        )
        table.add_row(
            str(a["number"]),
            _time(a["started"]),
            _dur(a["duration_s"]),
            markup(_how(a)),
            markup(steps),
            markup(a["cause"] or ""),
            markup(a["summary"] or ""),
        )
    console.print(table)
    diagnoses = doc.get("diagnoses") or []
    if diagnoses:
        d = diagnoses[-1]
        where = suspect_where(d["suspect"])
        console.print(
            f"last triage (attempt {d['attempt'] or '-'}): [bold]{markup(d['category'])}[/]"
            + (f" — suspect {markup(d['suspect']['kind'])} ({markup(where)})" if where else "")
        )
        console.print(f"  {markup(d['summary'])}")
        console.print(f"  what to do: {markup(d['action'])}")
    incidents = doc.get("incidents") or []
    if incidents:
        console.print(f"{len(incidents)} incident(s), the last {min(5, len(incidents))}:")
        for i in incidents[-5:]:
            console.print(
                f"  {_time(i['ts'])}  [yellow]{markup(i['kind'])}[/]  {markup(i['message'])}"
            )
    if events and doc["events"]:
        console.print(f"last {min(events, len(doc['events']))} events:")
        for e in doc["events"][-events:]:
            console.print(f"  {_time(e['ts'])}  {markup(e['message'])}")


def _box(width: int) -> dict[str, Any]:
    """Under 120 columns, a table without side borders: 15 more columns for its text."""
    if width >= 120:
        return {}
    return {"box": box.SIMPLE_HEAD, "pad_edge": False, "collapse_padding": True}


def _attempts_table(width: int) -> Table:
    """The attempts table, readable at 80 columns: the fixed columns wrap to two lines at most
    (date / time, outcome / code), the summary takes one line, cut with an ellipsis (the last
    triage below has it whole; `status --json` has them all)."""
    narrow = width < 120
    table = Table(title="attempts", title_justify="left", **_box(width))
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("started", max_width=10 if narrow else None, no_wrap=not narrow)
    table.add_column("duration", no_wrap=True)
    table.add_column("outcome", max_width=10 if narrow else None)
    table.add_column("steps", no_wrap=True)
    table.add_column("cause", max_width=12 if narrow else None, overflow="fold")
    rest = max(12, width - (56 if narrow else 82))
    table.add_column("summary", no_wrap=True, overflow="ellipsis", max_width=rest)
    return table


def _command(doc: Mapping[str, Any]) -> str:
    return shlex.join(str(a) for a in doc.get("command") or [])


def logbook_markdown(doc: Mapping[str, Any], sections: Sequence[str] = ()) -> str:
    """The Markdown logbook; `sections` (lines: views.chronicle's timeline, incident reports,
    decisions and notes) go before the events."""
    out = [f"# Logbook: {plain(doc['run'])}", ""]
    out.append(f"- command: {_code(_command(doc))}")
    out.append(f"- working directory: {_code(doc.get('cwd'))}")
    out.append(
        f"- state: **{plain(doc['state'])}**"
        + (f" — {plain(doc['reason'])}" if doc.get("reason") else "")
    )
    out.append(f"- attempts: {len(doc['attempts'])}")
    out += [
        "",
        "## Attempts",
        "",
        "| # | started (UTC) | duration | outcome | steps | cause | summary |",
        "|---|---|---|---|---|---|---|",
    ]
    for a in doc["attempts"]:
        steps = "-" if a["last_step"] is None else f"{a['first_step']}–{a['last_step']}"
        out.append(
            f"| {a['number']} | {_time(a['started'])} | {_dur(a['duration_s'])} | "
            f"{_cell(_how(a))} | {_cell(steps)} | {_cell(a['cause'])} | {_cell(a['summary'])} |"
        )
    incidents = doc.get("incidents") or []
    if incidents:
        out += [
            "",
            "## Incidents",
            "",
            "| when (UTC) | attempt | kind | step | what |",
            "|---|---|---|---|---|",
        ]
        for i in incidents:
            step = "-" if i["step"] is None else i["step"]
            out.append(
                f"| {_time(i['ts'])} | {i['attempt'] or '-'} | {_cell(i['kind'])} | "
                f"{_cell(step)} | {_cell(i['message'])} |"
            )
    diagnoses = doc.get("diagnoses") or []
    if diagnoses:
        out += ["", "## Triage", ""]
        for d in diagnoses:
            s = d["suspect"]
            where = suspect_where(s)
            restart = {True: "restart can help", False: "a human must act", None: "unclear"}[
                d["transient"]
            ]
            out.append(
                f"- {_time(d['ts'])} attempt {d['attempt'] or '-'}: **{plain(d['category'])}** "
                f"({restart}; suspect {plain(s['kind'])}{': ' + plain(where) if where else ''}; "
                f"confidence {plain(d['confidence'])}) — {plain(d['summary'])}"
            )
            out.append(f"  - what to do: {plain(d['action'])}")
            if d["evidence"]:
                e = d["evidence"][-1]
                where_line = f"{e['file']}:{e['line']}"
                out.append(f"  - evidence: {_code(where_line)} {_code(e['text'][:200])}")
            for c in d["consequences"][:3]:
                out.append(
                    f"  - consequence: {plain(c['count'])}× {plain(c['category'])}: "
                    f"{plain(c['summary'])}"
                )
    stacks = doc.get("stacks") or []
    if stacks:
        out += ["", "## Stacks of hung attempts", ""]
        for x in stacks:
            out.append(
                f"- {_time(x['ts'])} attempt {x['attempt'] or '-'}: {plain(x.get('summary'))}"
            )
            for g in x.get("groups") or []:
                ranks = g.get("ranks") or []
                who = f"rank(s) {', '.join(map(str, ranks))}" if ranks else f"pids {g['pids']}"
                odd = " (the odd one out)" if g.get("odd") else ""
                out.append(f"  - {plain(g['count'])}× {plain(who)}{odd}: {_code(g['where'])}")
    if sections:
        out += ["", *sections]
    out += ["", "## Events", ""]
    for e in doc["events"]:
        tag = f" (attempt {e['attempt']})" if e["attempt"] is not None else ""
        out.append(f"- {_time(e['ts'])}{tag} **{plain(e['kind'])}**: {plain(e['message'])}")
    return "\n".join(out) + "\n"
