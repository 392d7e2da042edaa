"""Render run documents for people: the status tables and the Markdown logbook.

print(logbook_markdown(doc))
status_tables(doc, console)
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

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


def runs_table(docs: Sequence[Mapping[str, Any]], console: Console) -> None:
    table = Table(title="runs", title_justify="left")
    for col in ("run", "state", "attempts", "last step", "updated", "supervisor"):
        table.add_column(col)
    for d in docs:
        last = next(
            (a["last_step"] for a in reversed(d["attempts"]) if a["last_step"] is not None), None
        )
        style = _STATE_STYLE.get(d["state"], "")
        table.add_row(
            d["run"],
            f"[{style}]{d['state']}[/]",
            str(len(d["attempts"])),
            "-" if last is None else str(last),
            _time(d["updated"]),
            f"pid {d['supervisor_pid']}" if d["supervised"] else "none",
        )
    console.print(table)


def status_tables(doc: Mapping[str, Any], console: Console, events: int = 10) -> None:
    style = _STATE_STYLE.get(doc["state"], "")
    sup = (
        f"supervised by babysit pid {doc['supervisor_pid']}"
        if doc["supervised"]
        else "no babysit attached"
    )
    if doc["state"] in ("running", "backoff", "starting") and not doc["supervised"]:
        sup += " (babysit died? run the same `babysit run` again to re-attach)"
    console.print(f"[bold]{escape(doc['run'])}[/]: [{style}]{doc['state']}[/] — {escape(sup)}")
    if doc.get("reason"):
        console.print(f"  reason: {escape(str(doc['reason']))}")
    console.print(f"  command: {escape(shlex.join(doc.get('command') or []))}")
    table = Table(title="attempts", title_justify="left")
    for col in ("#", "started", "duration", "outcome", "steps", "cause", "summary"):
        table.add_column(col, overflow="fold")
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
            _how(a),
            steps,
            a["cause"] or "",
            escape(a["summary"] or ""),
        )
    console.print(table)
    diagnoses = doc.get("diagnoses") or []
    if diagnoses:
        d = diagnoses[-1]
        where = suspect_where(d["suspect"])
        console.print(
            f"last triage (attempt {d['attempt'] or '-'}): [bold]{d['category']}[/]"
            + (f" — suspect {d['suspect']['kind']} ({escape(where)})" if where else "")
        )
        console.print(f"  {escape(d['summary'])}")
        console.print(f"  what to do: {escape(d['action'])}")
    incidents = doc.get("incidents") or []
    if incidents:
        console.print(f"{len(incidents)} incident(s), the last {min(5, len(incidents))}:")
        for i in incidents[-5:]:
            console.print(f"  {_time(i['ts'])}  [yellow]{i['kind']}[/]  {escape(i['message'])}")
    if events and doc["events"]:
        console.print(f"last {min(events, len(doc['events']))} events:")
        for e in doc["events"][-events:]:
            console.print(f"  {_time(e['ts'])}  {escape(e['message'])}")


def logbook_markdown(doc: Mapping[str, Any]) -> str:
    out = [f"# Logbook: {doc['run']}", ""]
    out.append(f"- command: `{shlex.join(doc.get('command') or [])}`")
    out.append(f"- working directory: `{doc.get('cwd')}`")
    out.append(
        f"- state: **{doc['state']}**" + (f" — {doc['reason']}" if doc.get("reason") else "")
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
        summary = (a["summary"] or "").replace("|", "\\|")
        out.append(
            f"| {a['number']} | {_time(a['started'])} | {_dur(a['duration_s'])} | "
            f"{_how(a)} | {steps} | {a['cause'] or ''} | {summary} |"
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
            what = i["message"].replace("|", "\\|")
            step = "-" if i["step"] is None else i["step"]
            out.append(
                f"| {_time(i['ts'])} | {i['attempt'] or '-'} | {i['kind']} | {step} | {what} |"
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
                f"- {_time(d['ts'])} attempt {d['attempt'] or '-'}: **{d['category']}** "
                f"({restart}; suspect {s['kind']}{': ' + where if where else ''}; confidence "
                f"{d['confidence']}) — {d['summary']}"
            )
            out.append(f"  - what to do: {d['action']}")
            if d["evidence"]:
                e = d["evidence"][-1]
                out.append(f"  - evidence: `{e['file']}:{e['line']}` `{e['text'][:200]}`")
            for c in d["consequences"][:3]:
                out.append(f"  - consequence: {c['count']}× {c['category']}: {c['summary']}")
    stacks = doc.get("stacks") or []
    if stacks:
        out += ["", "## Stacks of hung attempts", ""]
        for x in stacks:
            out.append(f"- {_time(x['ts'])} attempt {x['attempt'] or '-'}: {x['summary']}")
            for g in x.get("groups") or []:
                ranks = g.get("ranks") or []
                who = f"rank(s) {', '.join(map(str, ranks))}" if ranks else f"pids {g['pids']}"
                odd = " (the odd one out)" if g.get("odd") else ""
                out.append(f"  - {g['count']}× {who}{odd}: `{g['where']}`")
    out += ["", "## Events", ""]
    for e in doc["events"]:
        tag = f" (attempt {e['attempt']})" if e["attempt"] is not None else ""
        out.append(f"- {_time(e['ts'])}{tag} **{e['kind']}**: {e['message']}")
    return "\n".join(out) + "\n"
