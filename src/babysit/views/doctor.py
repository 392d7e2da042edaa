"""Render health-check results: a table for people, a JSON document for programs.

    doctor_table(results, console)               # one row per check and target, then a verdict
    doc = doctor_document(results, host="node7") # {"status": "fail", "checks": [...], ...}

The document's keys are stable (scripts and the logbook read them): status (the overall
verdict: "fail" when any check failed, else "warn" when any warned, else "pass"; "skip" only
when every check skipped), verdict (the verdict in words: what was checked, what was skipped
and why, and "no GPU was checked" when none was: a pass without a GPU says nothing about GPUs),
gpus_checked (how many GPUs a check reached), host, elapsed_s, counts ({status: n}), checks
([{name, status, summary, target, elapsed_s, details}], in the order the checks ran).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from babysit.records import CheckResult, CheckStatus
from babysit.strictjson import finite
from babysit.views.safe import markup

STATUS_STYLE = {
    CheckStatus.PASS: "green",
    CheckStatus.WARN: "yellow",
    CheckStatus.FAIL: "bold red",
    CheckStatus.SKIP: "dim",
}


def overall(results: Sequence[CheckResult]) -> CheckStatus:
    statuses = {r.status for r in results}
    for s in (CheckStatus.FAIL, CheckStatus.WARN, CheckStatus.PASS):
        if s in statuses:
            return s
    return CheckStatus.SKIP if statuses else CheckStatus.PASS


def gpus_checked(results: Sequence[CheckResult]) -> int:
    """How many GPUs a check reached (NVML's readings, the matmul test's devices)."""
    gpus = {r.target for r in results if r.target.startswith("GPU ")}
    if not gpus and any(r.name == "gpu" and r.status is not CheckStatus.SKIP for r in results):
        return 1  # an NVML answer without a device (a hung driver): a GPU was looked at
    return len(gpus)


def verdict_line(results: Sequence[CheckResult]) -> str:
    """The verdict in words, with what was checked and what was not: a pass never claims more
    than was checked (without a GPU checked, it says so)."""
    failed = [r for r in results if r.status is CheckStatus.FAIL]
    verdict = overall(results)
    skipped = _skipped(results)
    parts = []
    if failed:
        names = ", ".join(sorted({f"{r.name} {r.target}".strip() for r in failed}))
        parts.append(f"do not trust this node with a run: {names} failed")
    elif verdict is CheckStatus.SKIP:
        parts.append("nothing could be checked")
    else:
        if verdict is CheckStatus.WARN:
            head = "usable, with warnings worth a look"
        else:  # "healthy" only when every check ran, GPUs included
            head = "healthy" if not skipped and gpus_checked(results) else "nothing wrong found"
        parts.append(f"{head}; checked: {_checked(results)}")
    if skipped:
        parts.append(f"skipped: {skipped}")
    if results and not gpus_checked(results):
        parts.append("no GPU was checked, so this says nothing about GPUs")
    return "; ".join(parts)


def _checked(results: Sequence[CheckResult]) -> str:
    """`gpu (8 GPUs), disk, shm, memory, matmul (CPU and 8 GPUs)`: the checks that ran."""
    out: dict[str, list[str]] = {}
    for r in results:
        if r.status is not CheckStatus.SKIP:
            out.setdefault(r.name, []).append(r.target)
    words = []
    for name, targets in out.items():
        gpus = sum(t.startswith("GPU ") for t in targets)
        cpu = "CPU" in targets
        on = " and ".join(
            ([] if not cpu else ["CPU" if gpus else "CPU only"])
            + ([f"{gpus} GPU{'s' if gpus > 1 else ''}"] if gpus else [])
        )
        words.append(f"{name} ({on})" if on else name)
    return ", ".join(words)


def _skipped(results: Sequence[CheckResult]) -> str:
    """`gpu (no NVIDIA driver answered)`: the checks that could not run, and why."""
    return ", ".join(
        f"{r.name}{f' {r.target}' if r.target else ''} ({r.summary})"
        for r in results
        if r.status is CheckStatus.SKIP
    )


def check_document(r: CheckResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "status": r.status.value,
        "summary": r.summary,
        "target": r.target,
        "elapsed_s": round(r.elapsed_s, 4),
        "details": finite(r.details),
    }


def doctor_document(
    results: Sequence[CheckResult], host: str | None = None, elapsed_s: float | None = None
) -> dict[str, Any]:
    counts = {s.value: sum(r.status is s for r in results) for s in CheckStatus}
    return {
        "status": overall(results).value,
        "verdict": verdict_line(results),
        "gpus_checked": gpus_checked(results),
        "host": host,
        "elapsed_s": None if elapsed_s is None else round(elapsed_s, 3),
        "counts": counts,
        "checks": [check_document(r) for r in results],
    }


def doctor_table(results: Sequence[CheckResult], console: Console, host: str | None = None) -> None:
    title = f"health of {host}" if host else "health"
    table = Table(title=title, title_justify="left")
    for col in ("check", "target", "status", "time", "summary"):
        table.add_column(col, overflow="fold")
    for r in results:
        style = STATUS_STYLE[r.status]
        table.add_row(
            markup(r.name),
            markup(r.target or "-"),
            f"[{style}]{r.status.value}[/]",
            f"{r.elapsed_s:.2f}s",
            markup(r.summary),
        )
    console.print(table)
    verdict = overall(results)
    line = verdict_line(results)
    console.print(f"[{STATUS_STYLE[verdict]}]{verdict.value}[/]: {markup(line)}")
