"""`babysit report` for people: the goodput of a run, and the nodes of a home, as rich tables.

    goodput_tables(goodput_document(...), console)
    nodes_report_table(nodes_report(...), console)

Causes and hosts come from the store (a run's triage, its host names): each goes through
views.safe.markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from babysit.durations import format_duration
from babysit.views.goodput import CATEGORIES, describe
from babysit.views.safe import markup

LABELS = {
    "productive": "productive training",
    "recomputation": "recomputation (steps redone)",
    "restart_overhead": "restart overhead (launch → first step)",
    "hang": "undetected hang (last step → kill)",
    "tail": "after the last step (crash, final save)",
    "backoff": "backoff and queue",
}


def _dur(seconds: float | None) -> str:
    return "-" if seconds is None else format_duration(seconds)


def _gpu_h(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if value < 10 else f"{value:,.1f}"


def _box(width: int) -> dict[str, Any]:
    if width >= 120:
        return {}
    return {"box": box.SIMPLE_HEAD, "pad_edge": False, "collapse_padding": True}


def goodput_tables(doc: Mapping[str, Any], console: Console) -> None:
    """The headline, the categories (with their causes), the causes (failures, MTBF, MTTR),
    and the notes on what could not be measured."""
    state = f" ({markup(doc['state'])})" if doc.get("state") else ""
    console.print(f"[bold]{markup(doc['run'])}[/]{state}: {markup(describe(doc))}")
    if not doc["attempts"]:
        return
    mtbf, mttr = _dur(doc["mtbf_s"]), _dur(doc["mttr_s"])
    step = doc.get("step_time_s")
    line = f"  MTBF {mtbf} · MTTR {mttr}"
    if step is not None:
        line += f" · mean step {step * 1000:.0f} ms" if step < 10 else f" · mean step {step:.1f}s"
    if doc.get("gpus") is not None:
        line += f" · {doc['gpus']} GPUs: {_gpu_h(doc['gpu_hours_lost'])} GPU-hours lost"
    console.print(line)
    gpus = doc.get("gpus") is not None
    table = Table(title="where the time went", title_justify="left", **_box(console.width))
    table.add_column("category")
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("share", justify="right", no_wrap=True)
    if gpus:
        table.add_column("GPU-h", justify="right", no_wrap=True)
    table.add_column("by cause", overflow="fold")
    for c in CATEGORIES:
        cat = doc["categories"][c]
        causes = ", ".join(
            f"{markup(k)} {_dur(v)}"
            for k, v in sorted(cat["by_cause"].items(), key=lambda kv: -kv[1])
        )
        if c == "hang" and cat["seconds"] > 0:
            causes += f" (to detect {_dur(cat['detect_s'])}, to act {_dur(cat['act_s'])})"
        row = [LABELS[c], _dur(cat["seconds"]), f"{cat['share'] * 100:.1f}%"]
        if gpus:
            row.append(_gpu_h(cat["gpu_hours"]))
        style = "green" if c == "productive" else ""
        table.add_row(*row, causes or "-", style=style)
    console.print(table)
    by_cause = doc.get("causes") or {}
    if by_cause:
        ct = Table(title="by cause", title_justify="left", **_box(console.width))
        for col in ("cause", "failures", "time lost", "MTBF", "MTTR"):
            ct.add_column(col, justify="left" if col == "cause" else "right", no_wrap=True)
        if gpus:
            ct.add_column("GPU-h lost", justify="right", no_wrap=True)
        for name, c in sorted(by_cause.items(), key=lambda kv: -kv[1]["lost_s"]):
            row = [
                markup(name),
                str(c["failures"]),
                _dur(c["lost_s"]),
                _dur(c["mtbf_s"]),
                _dur(c["mttr_s"]),
            ]
            if gpus:
                row.append(_gpu_h(c["gpu_hours_lost"]))
            ct.add_row(*row)
        console.print(ct)
    for note in doc.get("notes") or []:
        console.print(f"[yellow]note:[/] {markup(note)}")


def nodes_report_table(doc: Mapping[str, Any], console: Console) -> None:
    """Every node, the most failing first; lemons and bans marked."""
    if not doc["nodes"]:
        console.print("no nodes recorded: no attempt named its hosts, no failure was blamed")
        return
    rate = doc.get("failure_rate")
    console.print(
        f"{doc['runs']} run(s), {doc['attempts']} attempt(s), {doc['failures']} failure(s) "
        f"blamed on a node" + (f" ({rate * 100:.1f}% of node-attempts)" if rate is not None else "")
    )
    table = Table(title="nodes", title_justify="left", **_box(console.width))
    for col in ("host", "attempts", "failures", "rate", "MTBF", "bans", "verdict", "causes"):
        right = col in ("attempts", "failures", "rate", "MTBF", "bans")
        table.add_column(col, justify="right" if right else "left", no_wrap=col != "causes")
    for n in doc["nodes"]:
        verdict = []
        if n["lemon"]:
            verdict.append("[red]lemon[/]")
        if n["banned"]:
            verdict.append("[red]banned[/]")
        causes = ", ".join(f"{markup(k)} {v}" for k, v in n["by_cause"].items())
        r = n["failure_rate"]
        table.add_row(
            markup(n["host"]),
            str(n["attempts"]),
            str(n["failures"]),
            "-" if r is None else f"{r * 100:.0f}%",
            _dur(n["mtbf_s"]),
            str(n["bans"]),
            " ".join(verdict) or "ok",
            causes or "-",
        )
    console.print(table)
    if doc["lemons"]:
        console.print(
            "lemon nodes (at least 2 failures, failing at least twice as often as the home): "
            + ", ".join(markup(h) for h in doc["lemons"])
        )
