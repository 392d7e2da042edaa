"""Overhead on training: the tiny GPT's steps/s under babysit vs bare, alternating runs.

    python benchmarks/overhead.py [--pairs 4] [--steps 200] [--quick]

Each pair runs the same command twice, bare and under `babysit run`, in alternating order, both
with stdout going to a file (as under Slurm). Throughput comes from the trainer's own per-step
times (`iter N: ..., time X ms`; the median, first 10 steps dropped), so interpreter and torch
start-up do not count. Target (issue 2): under babysit < 1% slower. Checked every time (also
with --quick: one pair of 20 steps): both runs exit 0 and print a time for every step.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import TINYGPT, babysit, check, check_exit, parse_args

STEP_MS = re.compile(r"^iter (\d+): loss \S+, time ([\d.]+)ms", re.M)


def step_ms(text: str, steps: int, what: str) -> float:
    found = STEP_MS.findall(text)
    check(
        len(found) == steps,
        f"{what}: {len(found)} `iter N: loss X, time Y ms` lines, want {steps}; output ends:\n"
        + text[-2000:],
    )
    times = [float(ms) for step, ms in found if int(step) >= 10]
    return statistics.median(times)


def one(work: Path, steps: int, under: bool, tag: str) -> float:
    out = work / f"out-{tag}"
    cmd = [
        sys.executable,
        str(TINYGPT),
        "--out-dir",
        str(out),
        "--max-steps",
        str(steps),
        "--ckpt-every",
        "0",
        "--eval-every",
        "0",
    ]
    log = work / f"{tag}.log"
    if under:
        home = work / f"h-{tag}"
        proc = subprocess.run(
            babysit("run", "--home", str(home), "--quiet", "--name", "o", "--", *cmd),
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        check_exit(proc.returncode, 0, "babysit run", proc.stderr)
        text = (home / "runs" / "o" / "attempt-0001" / "stdout.log").read_text()
    else:
        with log.open("w") as fh:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True, cwd=work)
        check_exit(proc.returncode, 0, "the bare tiny GPT", proc.stderr)
        text = log.read_text()
    return step_ms(text, steps, "under babysit" if under else "bare")


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    args = parse_args(ap, quick={"pairs": 1, "steps": 20})
    check(args.steps > 10, "--steps must be over 10 (the first 10 steps are not timed)")
    bare, under = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i in range(args.pairs):
            order = (False, True) if i % 2 == 0 else (True, False)
            for u in order:
                ms = one(work, args.steps, u, f"{i}-{int(u)}")
                (under if u else bare).append(ms)
    b, u = statistics.median(bare), statistics.median(under)
    paired = [ub / bb - 1 for bb, ub in zip(bare, under, strict=False)]
    print(
        f"paired (same pair, alternating order) step-time change under babysit: median "
        f"{statistics.median(paired) * 100:+.2f}%, each: "
        + ", ".join(f"{p * 100:+.1f}%" for p in paired)
    )
    print(f"median step time bare: {b:.3f} ms ({1000 / b:.1f} steps/s), samples {bare}")
    print(f"median step time under babysit: {u:.3f} ms ({1000 / u:.1f} steps/s), samples {under}")
    print(f"under babysit / bare steps/s: {b / u:.4f} ({(u / b - 1) * 100:+.2f}% step time)")
    return {
        "bare_step_ms": b,
        "babysit_step_ms": u,
        "slowdown_pct": (u / b - 1) * 100,
        "paired_median_slowdown_pct": statistics.median(paired) * 100,
    }


if __name__ == "__main__":
    print(json.dumps(main()))
