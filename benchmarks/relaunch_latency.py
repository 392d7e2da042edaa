"""Relaunch latency: from one attempt's exit to the next attempt's start, backoff excluded.

    python benchmarks/relaunch_latency.py [--restarts 20] [--quick]

The child prints one new step and exits 1 at once, so every attempt is a fresh failure that
babysit restarts with --backoff 0. Twenty failures in a minute are what the restart-storm rule
(restart.storm_attempts) and the budget of the `unknown` category (budget.unknown: the child
exits 1 without a Python error) exist to stop, so the run's babysit.toml turns the storm rule
off and lifts that budget, as a user who wants these restarts would.
The launcher stamps the child's end (exit.json "ended") and the next child's start
(launcher.json "started"); the gap is babysit's share: noticing the exit, committing the verdict
and decision, scanning checkpoints, starting the launcher, which starts the child.
Baseline in the same run: a shell `while` loop restarting the same child.
Target (issue 2): <= 1 s. Checked every time (also with --quick, 3 restarts): babysit exits 0
after exactly RESTARTS + 1 attempts, every attempt but the last exited 1, and the shell loop ran
as many children.
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

from _common import babysit, check, check_exit, parse_args, summary

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
# What a user who wants every one of these restarts writes: no storm rule, a budget to match.
CONFIG = """\
[restart]
storm_attempts = 0   # default 5: five failed attempts within 30 min stop the run (exit 4)
[budget]
unknown = 1000       # default 10 within 24 h; an exit 1 without a Python error is `unknown`
"""


def measure_babysit(work: Path, restarts: int) -> list[float]:
    child = work / "child.py"
    child.write_text(CHILD)
    home = work / "h"
    config = work / "babysit.toml"
    config.write_text(CONFIG)
    proc = subprocess.run(
        babysit(
            "run",
            "--home",
            str(home),
            "--config",
            str(config),
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
        cwd=work,
        capture_output=True,
        text=True,
    )
    check_exit(proc.returncode, 0, f"babysit run over {restarts} restarts", proc.stderr)
    gaps = []
    dirs = sorted((home / "runs" / "lat").glob("attempt-*"))
    check(
        len(dirs) == restarts + 1,
        f"{len(dirs)} attempts under {home}, want {restarts + 1} ({restarts} restarts)",
    )
    codes = [json.loads((d / "exit.json").read_text())["exit_code"] for d in dirs]
    check(
        codes == [1] * restarts + [0],
        f"attempts' exit codes {codes}, want {restarts} times 1 then 0",
    )
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
    gaps = child_gaps(stamps)
    check(len(gaps) == restarts, f"shell loop: {len(gaps)} restarts, want {restarts}")
    return gaps


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--restarts", type=int, default=20)
    args = parse_args(ap, quick={"restarts": 3})
    check(args.restarts >= 1, "--restarts must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        t0 = time.monotonic()
        gaps = measure_babysit(work, args.restarts)
        under = child_gaps(work / "stamps")
        check(len(under) == args.restarts, f"child stamps: {len(under)} restarts under babysit")
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
