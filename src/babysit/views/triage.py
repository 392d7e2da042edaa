"""A triage verdict for people and scripts: the JSON document and the terminal report.

    doc = diagnosis_document(diagnosis, seen_before=store.seen_before(fp))
    print(json.dumps(doc))        # babysit triage --json
    print_diagnosis(doc, console) # babysit triage

Stable keys: category, transient, suspect.{kind, host, rank, gpu}, summary, action,
evidence[].{line, file, text}, consequences[].{category, summary, count, ranks, hosts, first},
fingerprint, confidence, rule, seen_before[].{run, attempt, at, host, rank, category}.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from rich.console import Console
from rich.markup import escape

from babysit.records import Diagnosis

_WEEK_S = 7 * 24 * 3600
_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}
_CATEGORY_STYLE = {
    "gpu_hardware": "bold red",
    "cuda_oom": "bold magenta",
    "user_code": "bold magenta",
    "data": "bold magenta",
    "preemption": "cyan",
    "hang": "yellow",
    "unknown": "white",
}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds")


def diagnosis_document(
    d: Diagnosis, seen_before: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    doc = {
        "category": d.category.value,
        "transient": d.transient,
        "suspect": dataclasses.asdict(d.suspect),
        "summary": d.summary,
        "action": d.action,
        "evidence": [{"line": e.line, "file": e.file, "text": e.text} for e in d.evidence],
        "consequences": [
            {
                "category": c.category.value,
                "summary": c.summary,
                "count": c.count,
                "ranks": list(c.ranks),
                "hosts": list(c.hosts),
                "first": {"line": c.first.line, "file": c.first.file, "text": c.first.text},
            }
            for c in d.consequences
        ],
        "fingerprint": d.fingerprint,
        "confidence": d.confidence,
        "rule": d.rule,
        "seen_before": [seen_document(s) for s in seen_before],
    }
    return doc


def seen_document(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "run": row.get("run"),
        "attempt": row.get("attempt"),
        "at": _iso(float(row["ts"])) if row.get("ts") is not None else None,
        "host": row.get("host"),
        "rank": row.get("rank"),
        "category": row.get("category"),
    }


def seen_before_line(seen: Sequence[Mapping[str, Any]], host: str | None, now: float) -> str | None:
    """'third time on node gpu-17 this week' (counting this one), or how often and where this
    failure was seen before; None when it is new."""
    if not seen:
        return None
    if host is not None:
        week = [s for s in seen if s.get("host") == host and now - float(s.get("ts", 0)) <= _WEEK_S]
        if week:
            n = len(week) + 1
            nth = _ORDINAL.get(n, f"{n}th")
            return f"{nth} time on node {host} this week"
    runs = {s.get("run") for s in seen}
    hosts = {s.get("host") for s in seen if s.get("host")}
    last = seen[0]
    where = f" on {len(hosts)} node(s)" if hosts else ""
    return (
        f"seen {len(seen)} time(s) before in {len(runs)} run(s){where}; last: run "
        f"{last.get('run')} attempt {last.get('attempt')} at {_iso(float(last['ts']))}"
    )


def suspect_where(suspect: Mapping[str, Any]) -> str:
    """`host gpu-17, rank 3, gpu 0000:3b:00`: the parts of a suspect document that are known."""
    return ", ".join(
        f"{k} {suspect[k]}" for k in ("host", "rank", "gpu") if suspect.get(k) is not None
    )


def _transient_words(t: bool | None) -> str:
    if t is True:
        return "[green]a restart is a sane response[/]"
    if t is False:
        return "[bold red]a restart will not help: a human must fix something first[/]"
    return "[yellow]the log cannot tell whether a restart helps[/]"


def print_diagnosis(
    doc: Mapping[str, Any],
    console: Console,
    seen_line: str | None = None,
    files: int = 0,
    lines: int = 0,
    skipped: Sequence[str] = (),
) -> None:
    cat = doc["category"]
    style = _CATEGORY_STYLE.get(cat, "bold")
    console.print(
        f"[{style}]{cat}[/]  {_transient_words(doc['transient'])}  "
        f"[dim]confidence {doc['confidence']:.2f}[/]"
    )
    console.print(escape(doc["summary"]), soft_wrap=True)
    s = doc["suspect"]
    where = suspect_where(s)
    console.print(f"[bold]suspect:[/] {s['kind']}" + (f" ({where})" if where else ""))
    console.print(f"[bold]what to do:[/] {escape(doc['action'])}", soft_wrap=True)
    if doc["evidence"]:
        console.print("[bold]evidence:[/]")
        for e in doc["evidence"][:14]:
            console.print(
                f"  [dim]{escape(e['file'])}:{e['line']}[/]  {escape(e['text'][:300])}",
                soft_wrap=True,
                highlight=False,
            )
    if doc["consequences"]:
        console.print("[bold]follow-on errors (consequences, not the cause):[/]")
        for c in doc["consequences"][:8]:
            ranks = c["ranks"]
            on = ""
            if ranks:
                on = (
                    f" on {len(ranks)} rank(s)"
                    if len(ranks) > 3
                    else f" on rank(s) {', '.join(map(str, ranks))}"
                )
            console.print(
                f"  {c['count']}x [dim]{c['category']}[/] {escape(c['summary'])}{on}; first: "
                f"[dim]{escape(c['first']['file'])}:{c['first']['line']}[/]",
                soft_wrap=True,
            )
    if seen_line:
        console.print(f"[bold]seen before:[/] {escape(seen_line)}")
    if files:
        console.print(
            f"[dim]read {files} file(s), {lines:,} lines; fingerprint "
            f"{doc['fingerprint'] or '-'}; rule {doc['rule'] or '-'}[/]"
        )
    for sk in skipped:
        console.print(f"[yellow]note:[/] {escape(sk)}")
