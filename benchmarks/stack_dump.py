"""Stack dump of a hung attempt: 8 Python processes, 7 in one function and 1 in another.

    python benchmarks/stack_dump.py [--rounds 5] [--quick]

The processes are started with forensics_env (as babysit starts an attempt) and each prints
that it is in its function before the clock starts. Timed: dump_stacks + parse_stacks with
py-spy (all at once) and with the faulthandler fallback (pyspy=None); each round must also name
the odd process. The clock starts once an untimed dump finds every process inside its function
(`ready` is printed just before the call).
Baseline in the same run: `py-spy dump` run on the 8 pids one after the other.
Target (issue 4): <= 3 s for 8 processes. Exit 1 over target (or when py-spy is missing, no
py-spy figures: the fallback is still measured). With --quick (one round) the target is not
checked and a missing py-spy is only reported; a wrong suspect still fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import FIXTURES, check, parse_args, summary

from babysit.act.stackdump import dump_stacks, find_pyspy, forensics_env
from babysit.detect.stacks import group_stacks
from babysit.parse.stacks import parse_stacks

BUDGET_S = 10.0  # forensics.stacks_budget_s: what the dump may take, not the target
TARGET_S = 3.0
FUNCTIONS = ("wait_for_peers", "load_batch")


def start(stacks: Path) -> list[subprocess.Popen[str]]:
    procs = []
    for rank in range(8):
        fn = "load_batch" if rank == 5 else "wait_for_peers"
        env = forensics_env({**os.environ, "RANK": str(rank)}, stacks)
        procs.append(
            subprocess.Popen(
                [sys.executable, str(FIXTURES / "stuck_rank.py"), fn],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().startswith("ready")
    return procs


def settle(pids: list[int], stacks: Path, timeout_s: float = 30.0) -> None:
    """Wait (untimed) until a dump finds every process inside its function: each prints
    `ready` just before the call, so a dump right after may still catch it in main."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = parse_stacks(dump_stacks(pids, stacks, budget_s=BUDGET_S, pyspy=None))
        inside = [any(f.function in FUNCTIONS for t in p.threads for f in t.frames) for p in result]
        if len(inside) == len(pids) and all(inside):
            return
        check(
            time.monotonic() < deadline,
            f"the 8 processes were not all in their functions after {timeout_s:g} s: "
            f"{group_stacks(result, ts=0.0).summary}",
        )
        time.sleep(0.1)


def timed(pids: list[int], stacks: Path, pyspy: str | None, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        t0 = time.monotonic()
        result = parse_stacks(dump_stacks(pids, stacks, budget_s=BUDGET_S, pyspy=pyspy))
        samples.append(time.monotonic() - t0)
        report = group_stacks(result, ts=0.0)
        check(
            report.suspect is not None and report.suspect.rank == 5,
            f"wrong suspect ({pyspy or 'faulthandler'}): {report.summary}",
        )
    return samples


def sequential(pids: list[int], pyspy: str, rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        t0 = time.monotonic()
        for pid in pids:
            subprocess.run([pyspy, "dump", "--pid", str(pid)], capture_output=True, check=True)
        samples.append(time.monotonic() - t0)
    return samples


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = parse_args(ap, quick={"rounds": 1})
    pyspy = find_pyspy()
    result: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        stacks = Path(tmp) / "stacks"
        procs = start(stacks)
        try:
            pids = [p.pid for p in procs]
            settle(pids, stacks)
            fallback = timed(pids, stacks, None, args.rounds)
            print(f"faulthandler fallback, 8 processes: {summary(fallback, ' ms', 1000)}")
            result["faulthandler_median_s"] = statistics.median(fallback)
            result["faulthandler_max_s"] = max(fallback)
            if pyspy:
                parallel = timed(pids, stacks, pyspy, args.rounds)
                base = sequential(pids, pyspy, args.rounds)
                print(f"py-spy, all at once:                {summary(parallel, ' ms', 1000)}")
                print(f"baseline, py-spy one after another: {summary(base, ' ms', 1000)}")
                result["pyspy_median_s"] = statistics.median(parallel)
                result["pyspy_max_s"] = max(parallel)
                result["pyspy_sequential_median_s"] = statistics.median(base)
            else:
                print("py-spy is not installed: no py-spy figures", file=sys.stderr)
        finally:
            for p in procs:
                p.kill()
                p.wait()
                if p.stdout:
                    p.stdout.close()
    print(json.dumps(result))
    if args.quick:
        return 0
    worst = max(v for k, v in result.items() if k.endswith("_max_s") and v is not None)
    return int(worst > TARGET_S or pyspy is None)


if __name__ == "__main__":
    sys.exit(main())
