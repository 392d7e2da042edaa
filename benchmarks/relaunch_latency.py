"""Relaunch latency: from one attempt's exit to the next attempt's start, backoff excluded.

    python benchmarks/relaunch_latency.py [--restarts 20]

The child prints one new step and exits 1 at once, so every attempt is a fresh failure that
babysit restarts with --backoff 0. The launcher stamps the child's end (exit.json "ended") and the
next child's start (launcher.json "started"); the gap is babysit's share: noticing the exit,
committing the verdict and decision, scanning checkpoints, starting the launcher, which starts
the child. Baseline in the same run: a shell `while` loop restarting the same child.
Target (issue 2): <= 1 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import babysit, summary

CHILD = """
import os, sys, time
n = int(os.environ.get("BABYSIT_ATTEMPT", "0"))
with open(sys.argv[1], "a") as fh:
    fh.write(f"start {time.time()}\\n")
print(f"step {n}", flush=True)
with open(sys.argv[1], "a") as fh:
    fh.write(f"end {time.time()}\\n")
sys.exit(0 if n >= int(sys.argv[2]) else 1)
"""


def measure_babysit(work: Path, restarts: int) -> list[float]:
    child = work / "child.py"
    child.write_text(CHILD)
    home = work / "h"
    subprocess.run(
        babysit(
            "run",
            "--home",
            str(home),
            "--backoff",
            "0",
            "--max-restarts",
            "1000",
            "--quiet",
            "--name",
            "lat",
            "--",
            sys.executable,
            str(child),
            str(work / "stamps"),
            str(restarts + 1),
        ),
        check=True,
        cwd=work,
        capture_output=True,
    )
    gaps = []
    dirs = sorted((home / "runs" / "lat").glob("attempt-*"))
    for prev, nxt in itertools.pairwise(dirs):
        ended = json.loads((prev / "exit.json").read_text())["ended"]
        started = json.loads((nxt / "launcher.json").read_text())["started"]
        gaps.append(started - ended)
    return gaps


def child_gaps(stamps: Path) -> list[float]:
    """End of one child to the first line of the next, from the children's own stamps."""
    lines = stamps.read_text().split()
    starts = [float(v) for k, v in zip(lines[::2], lines[1::2], strict=False) if k == "start"]
    ends = [float(v) for k, v in zip(lines[::2], lines[1::2], strict=False) if k == "end"]
    return [s - e for e, s in zip(ends, starts[1:], strict=False)]


def measure_shell_loop(work: Path, restarts: int) -> list[float]:
    child = work / "child.py"
    stamps = work / "loop-stamps"
    script = (
        f"n=1; while true; do BABYSIT_ATTEMPT=$n {sys.executable} {child} {stamps} "
        f"{restarts + 1} > /dev/null && break; n=$((n+1)); done"
    )
    subprocess.run(["bash", "-c", script], check=True)
    return child_gaps(stamps)


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--restarts", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.monotonic()
        gaps = measure_babysit(work, args.restarts)
        under = child_gaps(work / "stamps")
        loop = measure_shell_loop(work, args.restarts)
        print(
            f"babysit's share (child exit -> next child exec'd, launcher stamps): "
            f"{summary(gaps, ' ms', 1000)}"
        )
        print(f"child end -> next child's first line, under babysit: {summary(under, ' ms', 1000)}")
        print(
            f"child end -> next child's first line, shell while-loop baseline: "
            f"{summary(loop, ' ms', 1000)}"
        )
        print(f"({time.monotonic() - t0:.1f}s)")
    return {
        "relaunch_median_s": statistics.median(gaps),
        "relaunch_max_s": max(gaps),
        "end_to_first_line_median_s": statistics.median(under),
        "shell_loop_median_s": statistics.median(loop),
    }


if __name__ == "__main__":
    result = main()
    print(json.dumps(result))
