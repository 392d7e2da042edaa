"""How a run went, printed when `babysit run` (or `babysit demo`) ends: attempts, causes, steps
redone, time lost.

    doc = summary_document(store.attempts("train"))
    print_summary(console, "train", home, store.attempts("train"), store.incidents("train"),
                  store.diagnoses("train"), ExitCode.OK, wall_s=812.0)

Steps redone: after each restart, the steps between where the new attempt started and where
the one before got to (work since the last checkpoint, or skipped back past an anomaly). Time
lost: the time between attempts (backoff, start-up of the launch) plus the time spent redoing
those steps, at the speed of the attempt that first made them.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from babysit.durations import format_duration
from babysit.views.safe import markup

__all__ = ["print_summary", "summary_document"]


def summary_document(attempts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """attempts, causes {category: count}, steps_redone, time_lost_s, between_attempts_s,
    redoing_s, from store.attempts rows (oldest first)."""
    causes = Counter(a["category"] for a in attempts if a.get("category"))
    redone = 0
    between = redoing = 0.0
    for prev, a in itertools.pairwise(attempts):
        if prev.get("ended") is not None and a.get("started") is not None:
            between += max(0.0, a["started"] - prev["ended"])
        last, first = prev.get("last_step"), a.get("first_step")
        if last is None or first is None or first > last:
            continue
        steps = last - first + 1
        redone += steps
        made = last - (prev.get("first_step") or 0)
        duration = (prev.get("ended") or 0.0) - (prev.get("started") or 0.0)
        if made > 0 and duration > 0:
            redoing += steps * duration / made
    return {
        "attempts": len(attempts),
        "causes": dict(causes),
        "steps_redone": redone,
        "between_attempts_s": round(between, 1),
        "redoing_s": round(redoing, 1),
        "time_lost_s": round(between + redoing, 1),
    }


def print_summary(
    console: Console,
    run: str,
    home: Path,
    attempts: Sequence[Mapping[str, Any]],
    incidents: Sequence[Mapping[str, Any]],
    diagnoses: Sequence[Mapping[str, Any]],
    code: int,
    wall_s: float,
) -> None:
    """The attempts table and the verdict in words; `code` is how babysit exits (0 finished)."""
    doc = summary_document(attempts)
    console.rule("[bold]summary[/]")
    console.print(_attempts_table(attempts))
    seen = ", ".join(
        f"{markup(i['kind'].replace('_', ' '))} at step {i['step']}"
        if i.get("step") is not None
        else markup(i["kind"].replace("_", " "))
        for i in incidents
    )
    console.print(f"Vital signs: {seen or 'no incidents'}.")
    for d in diagnoses:
        body = d.get("document") or {}
        console.print(
            f"Triage of attempt {d.get('attempt') or '-'}: [bold]{markup(body.get('category'))}"
            f"[/] — {markup(str(body.get('summary') or '')[:160])}"
        )
    verdict = "[green]finished[/]" if code == 0 else f"[red]ended with exit {code}[/]"
    causes = ", ".join(f"{n}× {markup(c)}" for c, n in doc["causes"].items())
    lost = doc["time_lost_s"]
    lost_words = (
        f"{format_duration(lost)} lost ({format_duration(doc['between_attempts_s'])} between "
        f"attempts, ~{format_duration(doc['redoing_s'])} redoing steps)"
        if doc["attempts"] > 1
        else "no time lost to restarts"
    )
    n = doc["attempts"]
    console.print(
        f"The run {verdict} after {n} attempt{'s' if n != 1 else ''} in "
        f"{format_duration(wall_s)}" + (f"; causes: {causes}" if causes else "") + ".\n"
        f"{doc['steps_redone']} step{'s were' if doc['steps_redone'] != 1 else ' was'} redone "
        f"after restarts (work since the last checkpoint); {lost_words}.\n"
        f"Logbook: babysit logbook {markup(run)} --home {markup(home)}\n"
        f"Status:  babysit status {markup(run)} --home {markup(home)}"
    )


def _attempts_table(attempts: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(title="attempts", title_justify="left")
    table.add_column("#", justify="right", no_wrap=True, min_width=2)
    table.add_column("outcome", no_wrap=True, min_width=9, overflow="ellipsis")
    table.add_column("steps", no_wrap=True, min_width=7)
    table.add_column("resumed from", no_wrap=True, min_width=7, overflow="ellipsis")
    table.add_column("cause", ratio=1, min_width=12, overflow="ellipsis", no_wrap=True)
    for a in attempts:
        how = a["outcome"] + (
            f" (signal {a['signal']})"
            if a.get("signal")
            else f" (exit {a['exit_code']})"
            if a.get("exit_code") is not None
            else ""
        )
        steps = "-" if a.get("last_step") is None else f"{a['first_step']}→{a['last_step']}"
        resumed = Path(a["resume_from"]).name if a.get("resume_from") else "scratch"
        table.add_row(str(a["number"]), markup(how), steps, markup(resumed), markup(_cause(a)))
    return table


def _cause(a: Mapping[str, Any]) -> str:
    cause = a.get("category") or ""
    if a.get("anomaly_step") is not None:
        return f"{cause} (rolled back past step {a['anomaly_step']})"
    if cause == "unknown":
        return str(a.get("summary") or cause)
    if cause and a.get("transient") is not None:
        return cause + (" (restart)" if a["transient"] else " (needs a human)")
    return cause or str(a.get("summary") or "")
