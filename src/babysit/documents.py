"""What the logbook stores, defined once: records in, JSON-able documents (and the words babysit
records with them) out. The store keeps them; views render them; nothing here renders for a
terminal. Standard library only, like records.py.

    doc = stacks_document(report)      # the grouped stacks of a hung attempt
    text = stacks_text(doc)            # the attempt's stacks.txt: groups with counts and ranks
    doc = diagnosis_document(diagnosis, seen_before=store.seen_before(fp))
    seen_before_line(seen, "gpu-17", now)   # 'third time on node gpu-17 this week'
    other_attempts(seen, attempts_of(files))  # not the attempt whose logs are being triaged

Stable keys of a diagnosis: category, transient, suspect.{kind, host, rank, gpu}, summary,
action, evidence[].{line, file, text}, consequences[].{category, summary, count, ranks, hosts,
first}, fingerprint, confidence, rule, seen_before[].{run, attempt, at, host, rank, category}.
A stacks document keeps each process's main thread; `full=True` keeps every thread of every
process (a 512-rank job with 20 threads each makes that megabytes). stacks_text reads the
document, not the record, so that what is shown is what the store holds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any, TypeVar

from babysit.durations import iso_utc
from babysit.looks import Evidence, Frame, ProcessStack, StackGroup, StackReport, ThreadStack
from babysit.records import Diagnosis

_WEEK_S = 7 * 24 * 3600
_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


# -- a triage verdict ---------------------------------------------------------------------------


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
        "at": iso_utc(float(row["ts"])) if row.get("ts") is not None else None,
        "host": row.get("host"),
        "rank": row.get("rank"),
        "category": row.get("category"),
    }


# An attempt's own log directory: `<home>/runs/<run>/attempt-0003/...`.
_Row = TypeVar("_Row", bound=Mapping[str, Any])
_ATTEMPT_DIR = re.compile(r"(?:^|/)runs/(?P<run>[^/]+)/attempt-(?P<n>\d+)(?:/|$)")


def attempts_of(paths: Iterable[str]) -> set[tuple[str, int]]:
    """The (run, attempt) whose log directories the paths are in: what is being triaged."""
    out = set()
    for path in paths:
        m = _ATTEMPT_DIR.search(path.replace("\\", "/"))
        if m:
            out.add((m["run"], int(m["n"])))
    return out


def other_attempts(seen: Sequence[_Row], own: Iterable[tuple[str, int]]) -> list[_Row]:
    """The earlier verdicts without those of the attempts being triaged: triaging attempt 3's
    logs again must not find attempt 3's own record and call the failure seen before."""
    mine = set(own)
    return [s for s in seen if (s.get("run"), s.get("attempt")) not in mine]


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


# -- the stacks of a hung attempt ---------------------------------------------------------------


def _frames(frames: Sequence[Frame]) -> list[dict[str, Any]]:
    return [{"function": f.function, "file": f.file, "line": f.line} for f in frames]


def _thread(t: ThreadStack) -> dict[str, Any]:
    return {"name": t.name, "active": t.active, "frames": _frames(t.frames)}


def _process(p: ProcessStack, full: bool) -> dict[str, Any]:
    main = p.main_thread
    threads = p.threads if full else (main,) if main else ()
    return {
        "pid": p.pid,
        "rank": p.rank,
        "host": p.host,
        "tool": p.tool,
        "command": p.command,
        "parent": p.parent,
        "error": p.error,
        "thread_count": len(p.threads),
        "threads": [_thread(t) for t in threads],
    }


def _group(g: StackGroup, odd: bool) -> dict[str, Any]:
    return {
        "where": g.where,
        "count": len(g.pids),
        "pids": list(g.pids),
        "ranks": list(g.ranks),
        "hosts": list(g.hosts),
        "odd": odd,
        "frames": _frames(g.frames),
    }


def evidence_document(e: Evidence) -> dict[str, Any]:
    """What the looks at a hung attempt said (a stable schema): verdict, sign, reason,
    looked_s, rank, pid."""
    return {
        "verdict": e.verdict.value,
        "sign": e.sign,
        "reason": e.reason,
        "looked_s": round(e.looked_s, 3),
        "rank": e.rank,
        "pid": e.pid,
    }


def stacks_document(report: StackReport, full: bool = False) -> dict[str, Any]:
    """The report as JSON-able data (a stable schema: summary, suspect, groups, processes)."""
    s = report.suspect
    return {
        "ts": report.ts,
        "summary": report.summary,
        "suspect": asdict(s),
        "groups": [_group(g, g in report.odd) for g in report.groups],
        "processes": [_process(p, full) for p in report.processes],
    }


def _hosts(hosts: Sequence[str], multi: bool) -> str:
    if not multi or not hosts:
        return ""
    shown = ", ".join(hosts[:8]) + (f", ... ({len(hosts)} nodes)" if len(hosts) > 8 else "")
    return f"on {shown}; "


def _traceback(frames: Sequence[Mapping[str, Any]], indent: str = "    ") -> list[str]:
    """Frames innermost last, as Python prints a traceback."""
    out = []
    for f in reversed(frames):
        line = f", line {f['line']}" if f.get("line") is not None else ""
        out.append(f'{indent}File "{f["file"]}"{line}, in {f["function"]}')
    return out


def _ranks(ranks: Sequence[int]) -> str:
    if not ranks:
        return ""
    shown = ", ".join(map(str, ranks[:16])) + (", ..." if len(ranks) > 16 else "")
    return f"rank{'s' if len(ranks) > 1 else ''} {shown}; "


def stacks_text(doc: Mapping[str, Any]) -> str:
    """Plain text for the terminal and the logbook."""
    processes = doc.get("processes") or []
    tools = sorted({p["tool"] for p in processes if p.get("tool") != "none"})
    lines = [
        f"stacks of {len(processes)} process{'es' if len(processes) != 1 else ''}"
        + (f" ({', '.join(tools)})" if tools else ""),
    ]
    if doc.get("summary"):
        lines.append(str(doc["summary"]))
    grouped: set[int] = set()
    # Across several nodes a group says where its processes ran (pids repeat across nodes).
    multi = len({p.get("host") for p in processes if p.get("host")}) > 1
    for g in doc.get("groups") or []:
        grouped.update(g["pids"])
        pids = g["pids"]
        head = "ODD ONE OUT: " if g.get("odd") else ""
        count = f"{g['count']} process{'es' if g['count'] != 1 else ''}"
        shown = ", ".join(map(str, pids[:16])) + (", ..." if len(pids) > 16 else "")
        lines.append("")
        on = _hosts(g.get("hosts") or [], multi)
        lines.append(f"{head}{count} in {g['where']} ({_ranks(g['ranks'])}{on}pid {shown}):")
        lines.extend(_traceback(g["frames"]))
    others = [p for p in processes if p["pid"] not in grouped]
    if others:
        lines.append("")
        lines.append("not grouped (launchers, a rank's own workers, no stack):")
    for p in others:
        rank = f"rank {p['rank']}, " if p.get("rank") is not None else ""
        command = f" {p['command']}" if p.get("command") else ""
        lines.append(f"  pid {p['pid']} ({rank}{p['host']}){command}")
        if p.get("error"):
            lines.append(f"    no stack: {p['error']}")
        elif p.get("threads"):
            lines.extend(_traceback(p["threads"][0]["frames"], indent="    "))
    return "\n".join(lines)
