"""Alert latency and burst aggregation: from babysit's decision to a local webhook, and how many
messages a storm of incidents becomes.

    python benchmarks/alert_latency.py [--runs 5] [--burst 1000] [--quick]

- decision -> receiver: `babysit run --notify json://127.0.0.1:PORT/` (real apprise, a local
  HTTP receiver) on a trainer that fails once (a transient network error) and then succeeds.
  The decision is the `restart_scheduled` event's ts in the store; the arrival is the moment
  the receiver got the warn. The same for the page of a run that gives up (a user bug): its
  `gave_up` event to the page. Target (issue 14): <= 1 s.
- a burst: 1,000 incidents (loss spikes on every rank, nodes banned) handed to the dispatcher
  at once (in-process, real apprise, the same receiver) -> the messages sent. Target: a
  handful (<= 5).
Checked every time (also with --quick: one run each, 200 incidents): babysit's exit codes, the
warn, the `recovered` and the page arrived, and the burst is at most 5 messages (the count does
not depend on the machine). The 1 s target is checked without --quick only.
"""

from __future__ import annotations

import argparse
import http.server
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import FIXTURES, babysit, check, check_exit, parse_args, summary

from babysit.alerts.dispatch import Alerts
from babysit.alerts.route import Router
from babysit.alerts.sender import AppriseSender
from babysit.alerts.settings import AlertRule, Destination
from babysit.records import Event, EventKind

TARGET_S = 1.0
HANDFUL = 5


class Receiver:
    def __init__(self) -> None:
        self.got: list[tuple[float, dict[str, Any]]] = []
        got = self.got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                got.append((time.time(), json.loads(body)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _events(home: Path) -> list[dict[str, Any]]:
    lines = (home / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def one_run(work: Path, fail: str) -> float:
    """Seconds from the decision (its event's ts) to its alert at the receiver."""
    rx = Receiver()
    try:
        if fail == "restart":
            script = [str(FIXTURES / "flaky.py"), "--fail-times", "1", "--steps", "5"]
            want, kind, tag = 0, "restart_scheduled", "[WARN]"
        else:
            script = [str(FIXTURES / "secret_bug.py")]
            want, kind, tag = 3, "gave_up", "[PAGE]"
        cmd = babysit("run", "--home", "h", "-q", "--backoff", "0.05", "--notify", rx.url,
                      "--", sys.executable, *script)  # fmt: skip
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=120)
        check_exit(proc.returncode, want, f"babysit ({fail})", proc.stderr)
        titles = [m["title"] for _, m in rx.got]
        hit = [at for at, m in rx.got if m["title"].startswith(tag)]
        check(bool(hit), f"no {tag} alert reached the receiver; it got {titles}")
        if fail == "restart":
            check(any(t.startswith("[RECOVERED]") for t in titles), f"no recovered: {titles}")
        decided = [e["ts"] for e in _events(work / "h") if e["kind"] == kind]
        check(bool(decided), f"no {kind} event in the logbook")
        return hit[0] - decided[0]
    finally:
        rx.close()


def burst(n: int) -> tuple[int, float]:
    """(messages the receiver got for `n` incidents at once, seconds until all were out)."""
    rx = Receiver()
    try:
        dest = Destination(rx.url)
        rule = AlertRule(burst_s=3600, drain_s=30)
        alerts = Alerts(rule, Router("big", "node-a", "babysit logbook big"),
                        [(dest, AppriseSender(dest.url))], lambda _l, _t: None)  # fmt: skip
        alerts.start()
        began = time.monotonic()
        now = time.time()
        for i in range(n):
            if i % 10 == 9:
                ev = Event("big", EventKind.BANNED, f"banned node gpu-{i}", now, 1,
                           {"host": f"gpu-{i}"})  # fmt: skip
            else:
                data = {"incident": "loss_spike", "step": 1000 + i, "metric": "loss"}
                ev = Event("big", EventKind.INCIDENT, f"rank {i % 512}: loss spike", now, 1, data)
            alerts.event(ev)
        alerts.close()
        return len(rx.got), time.monotonic() - began
    finally:
        rx.close()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--burst", type=int, default=1000, help="incidents in the burst")
    args = parse_args(p, quick={"runs": 1, "burst": 200})
    warn, page = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            warn.append(one_run(Path(tmp), "restart"))
        with tempfile.TemporaryDirectory() as tmp:
            page.append(one_run(Path(tmp), "gave_up"))
    messages, took = burst(args.burst)
    print(f"restart decision -> warn at the receiver:  {summary(warn, ' ms', 1000)}")
    print(f"give-up decision -> page at the receiver:  {summary(page, ' ms', 1000)}")
    print(f"{args.burst:,} incidents in a burst -> {messages} message(s) ({took:.2f}s)")
    figures = {
        "warn_latency_ms_median": round(statistics.median(warn) * 1000, 1),
        "warn_latency_ms_max": round(max(warn) * 1000, 1),
        "page_latency_ms_median": round(statistics.median(page) * 1000, 1),
        "page_latency_ms_max": round(max(page) * 1000, 1),
        "burst_incidents": args.burst,
        "burst_messages": messages,
        "target_latency_s": TARGET_S,
        "target_messages": HANDFUL,
    }
    print(json.dumps(figures))
    check(1 <= messages <= HANDFUL, f"{args.burst} incidents became {messages} messages")
    if not args.quick and max(warn + page) > TARGET_S:
        sys.exit(f"decision -> alert over {TARGET_S:g} s")


if __name__ == "__main__":
    main()
