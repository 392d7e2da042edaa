"""The node registry: failures and health checks per host, bans, and the stacks of hung attempts.

    store.add_node_event(ts, "gpu-17", "failure", "NCCL error: unhandled system error", run="gpt")
    store.add_ban(Ban("gpu-17", "3 failures in 24h", since=t, expires=t + 86400, ...))
    store.active_bans(now)          # -> [Ban, ...]
    store.lift_bans("gpu-17", now, "replaced the IB cable")

A node's record is shared by every run of the home: a host that broke one run is suspect for the
next. Host names are normalised where they enter and where they are looked up (records.node_key:
lower case, short name), so `gpu-17`, `GPU-17` and `gpu-17.cluster.local.` are one node; rows
written before that are normalised when read. A mixin of Store (it uses Store's _write and
_read), kept apart to keep files small.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from typing import Any

from babysit.records import Ban, node_key


class NodeRegistry:
    def _write(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...]) -> None:
        raise NotImplementedError

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        raise NotImplementedError

    # -- node events ---------------------------------------------------------------------------

    def add_node_event(
        self,
        ts: float,
        host: str,
        kind: str,
        reason: str,
        run: str | None = None,
        attempt: int | None = None,
        gpu: str | None = None,
        category: str | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> None:
        """kind: "failure" (an attempt failed and this node was blamed), "health_pass",
        "health_fail" (a preflight), "health_warn" (a preflight found the node's disk,
        filesystem or memory wanting), "incident" (telemetry: throttling, ECC)."""
        self._write(
            "INSERT INTO node_events (ts, host, gpu, run, attempt, kind, category, reason, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (ts, node_key(host), gpu, run, attempt, kind, category, reason, _json(data)),
        )

    def node_events(
        self, host: str | None = None, since: float = -math.inf
    ) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM node_events WHERE ts>=? ORDER BY ts, id", (since,))
        docs = [
            dict(r) | {"host": node_key(r["host"]), "data": json.loads(r["data"] or "{}")}
            for r in rows
        ]
        # Filtered here, not in SQL: rows from before names were normalised match too.
        return docs if host is None else [d for d in docs if d["host"] == node_key(host)]

    # -- bans ----------------------------------------------------------------------------------

    def add_ban(self, ban: Ban) -> None:
        host = node_key(ban.host)
        self._write(
            "INSERT INTO bans (host, reason, since, expires, probation_s, by, run) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (host, ban.reason, ban.since, ban.expires, ban.probation_s, ban.by, ban.run),
        )

    def lift_bans(self, host: str, ts: float, reason: str) -> None:
        """End every ban of `host` (any spelling) still in force (the operator unbanned it)."""
        rows = self._read(
            "SELECT id, host FROM bans WHERE lifted IS NULL AND (expires IS NULL OR expires>?)",
            (ts,),
        )
        ids = [r["id"] for r in rows if node_key(r["host"]) == node_key(host)]
        if ids:
            marks = ", ".join("?" * len(ids))
            self._write(
                f"UPDATE bans SET lifted=?, lifted_reason=? WHERE id IN ({marks})",
                (ts, reason, *ids),
            )

    def bans(self, host: str | None = None) -> list[dict[str, Any]]:
        """Every ban ever recorded (of one host), oldest first, lifted or not."""
        rows = self._read("SELECT * FROM bans ORDER BY since, id", ())
        docs = [dict(r) | {"host": node_key(r["host"])} for r in rows]
        return docs if host is None else [d for d in docs if d["host"] == node_key(host)]

    def active_bans(self, now: float) -> list[Ban]:
        rows = self._read(
            "SELECT * FROM bans WHERE lifted IS NULL AND (expires IS NULL OR expires>?) "
            "ORDER BY since, id",
            (now,),
        )
        return [_ban(r) for r in rows]

    def last_bans(self) -> dict[str, Ban]:
        """Each host's most recent ban (in force, expired or lifted): probation is judged on it."""
        out: dict[str, Ban] = {}
        for r in self._read("SELECT * FROM bans ORDER BY since, id", ()):
            ban = _ban(r)
            if r["lifted"] is not None:
                # Lifted by hand: probation runs from the moment it was lifted.
                ban = Ban(
                    ban.host, ban.reason, ban.since, r["lifted"], ban.probation_s, ban.by, ban.run
                )
            out[ban.host] = ban
        return out

    # -- stacks of hung attempts ---------------------------------------------------------------

    def add_stacks(
        self, run: str, attempt: int | None, ts: float, summary: str, report: Mapping[str, Any]
    ) -> None:
        self._write(
            "INSERT INTO stacks (run, attempt, ts, summary, report) VALUES (?, ?, ?, ?, ?)",
            (run, attempt, ts, summary, _json(report)),
        )

    def stacks(self, run: str) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM stacks WHERE run=? ORDER BY id", (run,))
        return [dict(r) | {"report": json.loads(r["report"] or "{}")} for r in rows]


def _ban(r: sqlite3.Row) -> Ban:
    host = node_key(r["host"])
    return Ban(host, r["reason"], r["since"], r["expires"], r["probation_s"], r["by"], r["run"])


def _json(data: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(data or {}), default=str)  # a Path or an enum must not fail a write
