"""Preflight wall time: every health check of `babysit doctor`, the matmul self-test included.

    python benchmarks/preflight.py [--reps 5] [--budget 10] [--quick]

What `babysit run --preflight` pays before each attempt: run_checks on a checkpoint and a data
directory (a temporary directory here), all checks at once in their threads. Baselines in the
same run: `python -c "import torch"` alone (the floor any torch matmul test must pay: the import
dominates), and the same checks run one after the other (what the concurrency saves).
Target (issue 6): <= 10 s on this machine with the matmul test. Exits 1 when over target
(not with --quick: one rep, a 60 s budget so that a loaded machine does not overrun it). Checked
every time: every check ran, and the matmul self-test did not fail (a check that fails on
this node, e.g. a small /dev/shm, is reported, not a failure of the benchmark).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import check, parse_args, summary

from babysit.records import CheckStatus
from babysit.sources.health import CHECKS, HealthTargets, preflight, run_checks

TARGET_S = 10.0


def time_import_torch(reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
        if proc.returncode != 0:
            return []
        out.append(time.monotonic() - t0)
    return out


def main() -> tuple[dict[str, float | int | str | None], bool]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--budget", type=float, default=TARGET_S)
    args = parse_args(ap, quick={"reps": 1, "budget": 60.0})
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "data").mkdir()
        targets = HealthTargets((work / "ckpt",), (work / "data",), work / "home")
        walls, failures, backend = [], 0, None
        for _ in range(args.reps):
            t0 = time.monotonic()
            ok, results = preflight(targets, args.budget)
            walls.append(time.monotonic() - t0)
            failures += not ok
            matmul = [r for r in results if r.name == "matmul"]
            backend = str(matmul[0].details.get("backend")) if matmul else None
            slowest = max(results, key=lambda r: r.elapsed_s)
            ran = {r.name for r in results}
            check(ran == set(CHECKS), f"checks run {sorted(ran)}, want {sorted(CHECKS)}")
        seq = []
        for _ in range(max(1, args.reps // 2)):
            t0 = time.monotonic()
            for name in CHECKS:
                run_checks(targets, args.budget, only=[name])
            seq.append(time.monotonic() - t0)
        torch_import = time_import_torch(args.reps)
    print(f"preflight, all checks concurrently: {summary(walls, ' s')}")
    print(f"  slowest check in the last run: {slowest.name} {slowest.elapsed_s:.2f} s")
    print(f"  statuses: {[f'{r.name}:{r.status.value}' for r in results]}")
    print(f"baseline: the same checks one after the other: {summary(seq, ' s')}")
    if torch_import:
        print(f"baseline: python -c 'import torch' alone: {summary(torch_import, ' s')}")
    else:
        print("baseline: no torch in this interpreter (the matmul test used numpy or skipped)")
    fig: dict[str, float | int | str | None] = {
        "preflight_median_s": statistics.median(walls),
        "preflight_max_s": max(walls),
        "sequential_median_s": statistics.median(seq),
        "import_torch_median_s": statistics.median(torch_import) if torch_import else None,
        "matmul_backend": backend,
        "failed_runs": failures,
        "target_s": TARGET_S,
    }
    fails = [r for r in results if r.status is CheckStatus.FAIL]
    for r in fails:
        print(f"!! {r.name} {r.target}: {r.summary}", file=sys.stderr)
    check(
        all(r.name != "matmul" for r in fails),
        "the matmul self-test failed on this (healthy) machine",
    )
    return fig, args.quick or max(walls) <= TARGET_S


if __name__ == "__main__":
    figures, within = main()
    print(json.dumps(figures))
    if not within:
        sys.exit(f"preflight took {figures['preflight_max_s']:.2f} s > {TARGET_S} s")
