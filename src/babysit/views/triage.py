"""A triage verdict on the terminal: renders the document documents.py defines.

doc = diagnosis_document(diagnosis, seen_before=store.seen_before(fp))   # documents.py
print(json.dumps(doc))        # babysit triage --json
print_diagnosis(doc, console) # babysit triage

The document quotes the logs: every string of it goes through views.safe.markup.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console

from babysit.views.safe import markup

_CATEGORY_STYLE = {
    "gpu_hardware": "bold red",
    "cuda_oom": "bold magenta",
    "user_code": "bold magenta",
    "data": "bold magenta",
    "preemption": "cyan",
    "hang": "yellow",
    "unknown": "white",
}


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
        f"[{style}]{markup(cat)}[/]  {_transient_words(doc['transient'])}  "
        f"[dim]confidence {doc['confidence']:.2f}[/]"
    )
    console.print(markup(doc["summary"]), soft_wrap=True)
    s = doc["suspect"]
    where = suspect_where(s)
    console.print(
        f"[bold]suspect:[/] {markup(s['kind'])}" + (f" ({markup(where)})" if where else "")
    )
    console.print(f"[bold]what to do:[/] {markup(doc['action'])}", soft_wrap=True)
    if doc["evidence"]:
        console.print("[bold]evidence:[/]")
        for e in doc["evidence"][:14]:
            console.print(
                f"  [dim]{markup(e['file'])}:{e['line']}[/]  {markup(e['text'][:300])}",
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
                    else f" on rank(s) {markup(', '.join(map(str, ranks)))}"
                )
            console.print(
                f"  {c['count']}x [dim]{markup(c['category'])}[/] {markup(c['summary'])}{on}; "
                f"first: [dim]{markup(c['first']['file'])}:{c['first']['line']}[/]",
                soft_wrap=True,
            )
    if seen_line:
        console.print(f"[bold]seen before:[/] {markup(seen_line)}")
    if files:
        console.print(
            f"[dim]read {files} file(s), {lines:,} lines; fingerprint "
            f"{markup(doc['fingerprint'] or '-')}; rule {markup(doc['rule'] or '-')}[/]"
        )
    for sk in skipped:
        console.print(f"[yellow]note:[/] {markup(sk)}")
