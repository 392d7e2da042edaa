"""`babysit report --nodes`: failures per node across every run of a home, lemon nodes, bans,
MTBF per node. Pure: rows in, a JSON-able document out.

    doc = nodes_report({"gpt": attempt_rows, ...}, store.node_events(), store.bans(), now)
    doc["lemons"]        # the hosts that fail far more often than the others

A node's attempts are those that ran on it: the attempt's hostfile hosts (`hosts`), else the
host it was launched on (`host`). Its failures are the failures blamed on it: the registry's
`failure` events, and an attempt's `suspect_host` that the registry does not already hold
(recorded before the registry, or while the store refused writes). Its uptime is the time of the
attempts that ran on it; MTBF = uptime / failures. A lemon has at least LEMON_MIN_FAILURES
failures and a failure rate (failures per attempt run on it) at least LEMON_FACTOR x the home's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from babysit.durations import iso_utc
from babysit.records import node_key

LEMON_MIN_FAILURES = 2
LEMON_FACTOR = 2.0


def _hosts_of(a: Mapping[str, Any]) -> list[str]:
    hosts = a.get("hosts") or ([a["host"]] if a.get("host") else [])
    return sorted({node_key(str(h)) for h in hosts})


def nodes_report(
    attempts_by_run: Mapping[str, Sequence[Mapping[str, Any]]],
    node_events: Sequence[Mapping[str, Any]],
    bans: Sequence[Mapping[str, Any]],
    now: float,
) -> dict[str, Any]:
    """The document of `report --nodes --json` (README: `babysit report`)."""
    nodes: dict[str, dict[str, Any]] = {}

    def node(host: str) -> dict[str, Any]:
        return nodes.setdefault(
            host,
            {
                "host": host,
                "attempts": 0,
                "uptime_s": 0.0,
                "runs": set(),
                "failures": 0,
                "by_cause": defaultdict(int),
                "last_failure": None,
                "bans": 0,
                "banned": False,
                "ban_reason": None,
            },
        )

    blamed: set[tuple[str, str | None, int | None]] = set()
    for e in node_events:
        if e.get("kind") != "failure":
            continue
        n = node(node_key(e["host"]))
        blamed.add((n["host"], e.get("run"), e.get("attempt")))
        _failure(n, e["ts"], e.get("run"), e.get("attempt"), e.get("category"), e.get("reason"))
    for run, rows in attempts_by_run.items():
        for a in rows:
            end = a["ended"] if a.get("ended") is not None else now
            for h in _hosts_of(a):
                n = node(h)
                n["attempts"] += 1
                n["uptime_s"] += max(0.0, end - a["started"])
                n["runs"].add(run)
            suspect = a.get("suspect_host")
            if suspect and (node_key(suspect), run, a["number"]) not in blamed:
                n = node(node_key(suspect))
                _failure(n, end, run, a["number"], a.get("category"), a.get("summary"))
    for b in bans:
        n = node(node_key(b["host"]))
        n["bans"] += 1
        over = b.get("lifted") if b.get("lifted") is not None else b.get("expires")
        if over is None or over > now:
            n["banned"], n["ban_reason"] = True, b.get("reason")
    total_failures = sum(n["failures"] for n in nodes.values())
    total_attempts = sum(n["attempts"] for n in nodes.values())
    home_rate = total_failures / total_attempts if total_attempts else None
    docs = [_node_doc(n, home_rate) for n in nodes.values()]
    docs.sort(key=lambda d: (-d["failures"], -(d["failure_rate"] or 0.0), d["host"]))
    return {
        "nodes": docs,
        "lemons": [d["host"] for d in docs if d["lemon"]],
        "banned": [d["host"] for d in docs if d["banned"]],
        "runs": len(attempts_by_run),
        "attempts": sum(len(rows) for rows in attempts_by_run.values()),
        "failures": total_failures,
        "failure_rate": None if home_rate is None else round(home_rate, 5),
        "as_of": iso_utc(now),
    }


def _failure(
    n: dict[str, Any],
    ts: float,
    run: str | None,
    attempt: int | None,
    category: str | None,
    reason: str | None,
) -> None:
    n["failures"] += 1
    n["by_cause"][category or "unknown"] += 1
    last = n["last_failure"]
    if last is None or ts >= last["ts"]:
        n["last_failure"] = {
            "ts": ts,
            "run": run,
            "attempt": attempt,
            "category": category,
            "reason": reason,
        }


def _node_doc(n: Mapping[str, Any], home_rate: float | None) -> dict[str, Any]:
    failures, attempts = n["failures"], n["attempts"]
    rate = failures / attempts if attempts else None
    lemon = (
        failures >= LEMON_MIN_FAILURES
        and home_rate is not None
        and (rate is None or rate >= LEMON_FACTOR * home_rate)
    )
    last = n["last_failure"]
    return {
        "host": n["host"],
        "attempts": attempts,
        "runs": sorted(n["runs"]),
        "uptime_s": round(n["uptime_s"], 3),
        "failures": failures,
        "failure_rate": None if rate is None else round(rate, 5),
        "mtbf_s": round(n["uptime_s"] / failures, 3) if failures and attempts else None,
        "by_cause": dict(sorted(n["by_cause"].items())),
        "last_failure": None if last is None else {**last, "ts": iso_utc(last["ts"])},
        "bans": n["bans"],
        "banned": n["banned"],
        "ban_reason": n["ban_reason"],
        "lemon": lemon,
    }
