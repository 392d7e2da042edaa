"""The node registry as `babysit nodes list` shows it: one row per host, from the store's rows.

    docs = nodes_document(store.node_events(), store.bans(), now=time.time(), window_s=86400)
    console.print(nodes_table(docs))

A host is `banned` (a ban in force), `probation` (a ban ended less than its probation ago: one
more failure bans it again), or `ok`. Failures are counted over the last `window_s`, and so are
stragglers (a rank on the host whose step lines lagged the median rank's for the long window:
`last_straggler` says which rank and by how much; each also counts toward a ban).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from babysit.durations import iso_utc
from babysit.views.safe import markup


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))


def nodes_document(
    events: Sequence[dict[str, Any]],
    bans: Sequence[dict[str, Any]],
    now: float,
    window_s: float,
) -> list[dict[str, Any]]:
    hosts: dict[str, dict[str, Any]] = {}

    def host(name: str) -> dict[str, Any]:
        return hosts.setdefault(
            name,
            {
                "host": name,
                "state": "ok",
                "failures": 0,
                "failures_total": 0,
                "last_failure": None,
                "last_health": None,
                "ban": None,
                "bans_total": 0,
                "stragglers": 0,
                "last_straggler": None,
                "suspects": 0,  # named by its peers only, not (yet) corroborated
            },
        )

    # A suspicion (the node named only by its peers) becomes a failure of the node once a later
    # failure corroborates it: supervise/nodes.py counts them so toward a ban.
    suspected: dict[str, list[float]] = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        h = host(e["host"])
        if e["kind"] == "suspect":
            suspected.setdefault(e["host"], []).append(e["ts"])
            h["suspects"] += 1
        if e["kind"] == "failure":
            for ts in suspected.pop(e["host"], []):
                h["suspects"] -= 1
                h["failures_total"] += 1
                h["failures"] += ts >= now - window_s
            h["failures_total"] += 1
            if e["ts"] >= now - window_s:
                h["failures"] += 1
            h["last_failure"] = {
                "ts": e["ts"],
                "run": e["run"],
                "attempt": e["attempt"],
                "category": e["category"],
                "reason": e["reason"],
            }
        elif e["kind"] == "straggler":  # the step lag of one of its ranks (detect/straggler.py)
            h["stragglers"] += e["ts"] >= now - window_s
            h["last_straggler"] = {"ts": e["ts"], "run": e["run"], "reason": e["reason"]}
        elif e["kind"].startswith("health_"):
            h["last_health"] = {
                "ts": e["ts"],
                "passed": e["kind"] != "health_fail",  # a warning (a full disk) is no failure
                "reason": e["reason"],
            }
    for b in bans:
        h = host(b["host"])
        h["bans_total"] += 1
        ended = b["lifted"] if b["lifted"] is not None else b["expires"]
        doc = {
            "reason": b["reason"],
            "since": b["since"],
            "expires": b["expires"],
            "by": b["by"],
            "run": b["run"],
            "lifted": b["lifted"],
            "lifted_reason": b["lifted_reason"],
            "probation_until": None if ended is None else ended + b["probation_s"],
        }
        if ended is None or ended > now:
            h["state"], h["ban"] = "banned", doc
        elif now < ended + b["probation_s"] and h["state"] != "banned":
            h["state"], h["ban"] = "probation", doc
    order = {"banned": 0, "probation": 1, "ok": 2}
    return sorted(hosts.values(), key=lambda h: (order[h["state"]], h["host"]))


def nodes_table(docs: Sequence[dict[str, Any]], window_s: float) -> Table:
    table = Table(title="nodes", title_justify="left")
    table.add_column("host", no_wrap=True)
    table.add_column("state", no_wrap=True)
    table.add_column(f"failures ({window_s / 3600:g}h)", justify="right", no_wrap=True)
    table.add_column("until", no_wrap=True)
    table.add_column("why", overflow="fold")
    style = {"banned": "[red]banned[/]", "probation": "[yellow]probation[/]", "ok": "ok"}
    for d in docs:
        ban = d["ban"]
        if d["state"] == "banned":
            until = _when(ban["expires"]) if ban["expires"] is not None else "`nodes unban`"
            why = f"{ban['reason']} (by {ban['by']})"
        elif d["state"] == "probation":
            until = _when(ban["probation_until"])
            why = f"on probation after: {ban['reason']}"
        else:
            until = "-"
            last, lag = d["last_failure"], d.get("last_straggler")
            why = f"last failure: {last['reason']}" if last else ""
            if lag is not None and (last is None or lag["ts"] >= last["ts"]):
                why = f"straggler: {lag['reason']}"
        health = d["last_health"]
        if health is not None and not health["passed"] and d["state"] == "ok":
            why = f"last health check failed: {health['reason']}"
        table.add_row(
            markup(d["host"]), style[d["state"]], str(d["failures"]), until, markup(why[:300])
        )
    return table


def nodes_json(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documents as `nodes list --json` prints them: every time ISO 8601 in UTC."""
    times = ("ts", "since", "expires", "lifted", "probation_until")

    def convert(d: dict[str, Any]) -> dict[str, Any]:
        return {
            k: (iso_utc(v) if k in times and isinstance(v, (int, float)) else v)
            for k, v in d.items()
        }

    return [
        {
            **d,
            **{
                k: convert(d[k])
                for k in ("ban", "last_failure", "last_health", "last_straggler")
                if isinstance(d.get(k), dict)
            },
        }
        for d in docs
    ]
