"""Render health-check results: a table for people, a JSON document for programs.

    doctor_table(results, console)               # one row per check and target, then a verdict
    doc = doctor_document(results, host="node7") # {"status": "fail", "checks": [...], ...}

The document's keys are stable (scripts and the logbook read them): status (the overall
verdict: "fail" when any check failed, else "warn" when any warned, else "pass"; "skip" only
when every check skipped), host, elapsed_s, counts ({status: n}), checks ([{name, status,
summary, target, elapsed_s, details}], in the order the checks ran).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from babysit.records import CheckResult, CheckStatus

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


def _jsonable(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    return str(v)


def check_document(r: CheckResult) -> dict[str, Any]:
    return {
        "name": r.name,
        "status": r.status.value,
        "summary": r.summary,
        "target": r.target,
        "elapsed_s": round(r.elapsed_s, 4),
        "details": _jsonable(r.details),
    }


def doctor_document(
    results: Sequence[CheckResult], host: str | None = None, elapsed_s: float | None = None
) -> dict[str, Any]:
    counts = {s.value: sum(r.status is s for r in results) for s in CheckStatus}
    return {
        "status": overall(results).value,
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
            r.name,
            escape(r.target or "-"),
            f"[{style}]{r.status.value}[/]",
            f"{r.elapsed_s:.2f}s",
            escape(r.summary),
        )
    console.print(table)
    verdict = overall(results)
    failed = [r for r in results if r.status is CheckStatus.FAIL]
    if failed:
        names = ", ".join(sorted({f"{r.name} {r.target}".strip() for r in failed}))
        line = f"do not trust this node with a run: {names} failed"
    elif verdict is CheckStatus.WARN:
        line = "usable, with warnings worth a look"
    else:
        line = "healthy"
    console.print(f"[{STATUS_STYLE[verdict]}]{verdict.value}[/]: {escape(line)}")
