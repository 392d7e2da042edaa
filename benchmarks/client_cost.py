"""Cost of babysit.client.log() in the training loop: median per call.

    python benchmarks/client_cost.py [--calls 200000] [--quick]

Measured with the writer thread running (BABYSIT_METRICS_FILE set, as under babysit), each call
timed on its own with perf_counter_ns over batches of 100, the median taken; and when not under
babysit (the no-op). Baseline in the same run: an empty Python function call with the same
arguments. Target (issue 3): median <= 2 us per call. Checked every time (also with --quick:
2,000 calls): every call under babysit was written or counted as dropped, and none outside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any

from _common import check, parse_args

BATCH = 100  # calls timed together


def per_call_ns(fn: Any, calls: int) -> float:
    samples = []
    for i in range(calls // BATCH):
        t0 = time.perf_counter_ns()
        for j in range(BATCH):
            fn(i * BATCH + j, loss=2.5, grad_norm=0.8, tokens=4096)
        samples.append((time.perf_counter_ns() - t0) / BATCH)
    return statistics.median(samples)


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200_000)
    args = parse_args(ap, quick={"calls": 2000})
    check(args.calls >= BATCH, f"--calls must be at least {BATCH} (one timed batch)")
    calls = args.calls // BATCH * BATCH  # whole batches
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["BABYSIT_METRICS_FILE"] = os.path.join(tmp, "metrics.jsonl")
        from babysit import client

        def empty(step: int, **metrics: float) -> None:
            return None

        base = per_call_ns(empty, args.calls)
        under = per_call_ns(client.log, args.calls)
        client.flush()
        with open(os.environ["BABYSIT_METRICS_FILE"]) as fh:
            written = sum(1 for _ in fh)
        check(
            written + client.dropped() == calls,
            f"{written} rows written + {client.dropped()} dropped for {calls} calls",
        )
        client._client.path = None  # as outside babysit
        noop = per_call_ns(client.log, args.calls)
        client.flush()
        with open(os.environ["BABYSIT_METRICS_FILE"]) as fh:
            after = sum(1 for _ in fh)
        check(after == written, f"client.log outside babysit wrote {after - written} rows")
    print(
        f"client.log under babysit: median {under / 1000:.2f} us/call "
        f"({written} rows written, {client.dropped()} dropped)"
    )
    print(f"client.log outside babysit (no-op): {noop / 1000:.2f} us/call")
    print(f"baseline, an empty function with the same arguments: {base / 1000:.2f} us/call")
    return {"under_us": under / 1000, "noop_us": noop / 1000, "empty_call_us": base / 1000}


if __name__ == "__main__":
    print(json.dumps(main()))
