"""Render the grouped stacks of a hung attempt, for the terminal, the logbook and programs.

    doc = stacks_document(report)      # JSON-able: what the logbook stores with the incident
    print(stacks_text(doc))            # groups with counts and ranks, frames innermost last

stacks_text reads the document, not the record, so that the views render what the store holds.
The document keeps each process's main thread; `full=True` keeps every thread of every process
(a 512-rank job with 20 threads each makes that megabytes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from babysit.records import Frame, ProcessStack, StackGroup, StackReport, ThreadStack


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
        "odd": odd,
        "frames": _frames(g.frames),
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
    for g in doc.get("groups") or []:
        grouped.update(g["pids"])
        pids = g["pids"]
        head = "ODD ONE OUT: " if g.get("odd") else ""
        count = f"{g['count']} process{'es' if g['count'] != 1 else ''}"
        shown = ", ".join(map(str, pids[:16])) + (", ..." if len(pids) > 16 else "")
        lines.append("")
        lines.append(f"{head}{count} in {g['where']} ({_ranks(g['ranks'])}pid {shown}):")
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
