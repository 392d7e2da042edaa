"""views.goodput_nodes: failures per node across runs, lemons, bans, MTBF; and its table."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from babysit.views.goodput_nodes import nodes_report
from babysit.views.goodput_render import nodes_report_table

T = 1_750_000_000.0


def _a(number: int, hosts: list[str], suspect: str | None = None, **kw: Any) -> dict[str, Any]:
    return {"number": number, "started": T + 100 * number, "ended": T + 100 * number + 50,
            "hosts": hosts, "host": "login", "suspect_host": suspect, "category": kw.get("cat"),
            "summary": "boom"}  # fmt: skip


def _failure(host: str, run: str, attempt: int, cat: str = "nccl_error") -> dict[str, Any]:
    return {"ts": T + 100 * attempt + 50, "host": host, "run": run, "attempt": attempt,
            "kind": "failure", "category": cat, "reason": "NCCL error"}  # fmt: skip


CLUSTER = ["node-a", "node-b", "node-c", "node-d"]
RUNS = {
    "gpt": [_a(i, CLUSTER, "node-b" if i < 4 else None) for i in range(1, 6)],
    "bert": [_a(1, ["GPU-9.cluster.local"]), _a(2, ["gpu-9"], "gpu-9", cat="gpu_hardware")],
}
EVENTS = [_failure("node-b", "gpt", i) for i in (1, 2, 3)] + [
    {"ts": T, "host": "node-a", "kind": "health_pass", "run": None, "attempt": None,
     "category": None, "reason": "ok"},
]  # fmt: skip
BANS = [
    {"host": "NODE-B", "reason": "3 failures", "since": T + 400, "expires": None, "lifted": None},
    {"host": "node-c", "reason": "old", "since": T, "expires": T + 10, "lifted": None},
]


def test_failures_rates_mtbf_and_lemons() -> None:
    doc = nodes_report(RUNS, EVENTS, BANS, now=T + 10_000)
    by_host = {n["host"]: n for n in doc["nodes"]}
    assert set(by_host) == {"node-a", "node-b", "node-c", "node-d", "gpu-9"}
    b = by_host["node-b"]
    assert (b["attempts"], b["failures"], b["failure_rate"]) == (5, 3, 0.6)
    assert b["uptime_s"] == 250.0 and b["mtbf_s"] == round(250 / 3, 3)
    assert b["by_cause"] == {"nccl_error": 3} and b["runs"] == ["gpt"]
    assert b["banned"] and b["ban_reason"] == "3 failures" and b["bans"] == 1
    assert b["lemon"]  # 3 failures in 5 attempts, the home's rate is 4 in 22
    # A suspect_host with no registry row counts too, once; names are one node's.
    g = by_host["gpu-9"]
    assert (g["attempts"], g["failures"], g["by_cause"]) == (2, 1, {"gpu_hardware": 1})
    assert not g["lemon"]  # one failure is no pattern
    assert by_host["node-c"]["bans"] == 1 and not by_host["node-c"]["banned"]  # expired
    assert by_host["node-a"]["failures"] == 0 and by_host["node-a"]["mtbf_s"] is None
    assert doc["nodes"][0]["host"] == "node-b"  # the most failing first
    assert doc["lemons"] == ["node-b"] and doc["banned"] == ["node-b"]
    assert (doc["runs"], doc["attempts"], doc["failures"]) == (2, 7, 4)
    assert doc["nodes"][0]["last_failure"]["ts"].endswith("+00:00")


def test_an_empty_home() -> None:
    doc = nodes_report({}, [], [], now=T)
    assert doc["nodes"] == [] and doc["failure_rate"] is None
    buf = io.StringIO()
    nodes_report_table(doc, Console(file=buf, width=100))
    assert "no nodes recorded" in buf.getvalue()


def test_table_marks_lemons_and_bans() -> None:
    buf = io.StringIO()
    nodes_report_table(nodes_report(RUNS, EVENTS, BANS, now=T + 10_000), Console(file=buf))
    out = buf.getvalue()
    assert "lemon banned" in out and "lemon nodes" in out and "node-b" in out
