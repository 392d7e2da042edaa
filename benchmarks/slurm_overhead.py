"""babysit's overhead per Slurm attempt, and the relaunch inside an allocation with spares.

    python benchmarks/slurm_overhead.py [--attempts 5] [--quick]

Both on a real Slurm cluster on localhost (tests/slurmlab.py: slurmctld + three slurmd from
Debian's packages), started here and stopped at the end. Skipped (exit 0, said why) when Slurm
is not installed.

1. Per attempt, `babysit run --launcher slurm`: the child fails ATTEMPTS times, then succeeds;
   each attempt is an sbatch job. The gap from one child's end to the next child's start (both
   stamped by the child itself on its node) is what a relaunch costs: noticing the job's end
   (scontrol), judging it, submitting the next job (sbatch), Slurm starting it. Baseline in the
   same run: a shell loop that does the same by hand (sbatch, then poll scontrol every 0.5 s,
   babysit's own poll). babysit's overhead is the difference of the medians: the queue and
   Slurm's own start-up are in both. Target (issue 13): <= 2 s.
2. With --nodes 1 --spares 1, the child dies with an Xid on its node in attempt 1: babysit bans
   the node and runs attempt 2 on the spare, as a new srun step in the same allocation. The gap
   from attempt 1's end to attempt 2's child start: target <= 5 s.
--quick: one round of each; checks exit codes and where attempt 2 ran, not the targets.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import REPO, babysit, check, check_exit, parse_args, summary

sys.path.insert(0, str(REPO))
from tests.slurmlab import SlurmLab, missing

CHILD = """
import os, sys, time
stamps, fail_until, bad = sys.argv[1], int(sys.argv[2]), sys.argv[3]
n = int(os.environ.get("BABYSIT_ATTEMPT") or os.environ.get("ROUND") or "0")
node = os.environ.get("SLURMD_NODENAME", "?")
with open(stamps, "a") as fh:
    fh.write(f"start {n} {node} {time.time()}\\n")
print(f"step {n}", flush=True)
code = 0
if node == bad:
    print("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", flush=True)
    code = 1
elif n <= fail_until:
    code = 1
with open(stamps, "a") as fh:
    fh.write(f"end {n} {node} {time.time()}\\n")
sys.exit(code)
"""
CONFIG = """\
[restart]
backoff_s = 0
storm_attempts = 0
[budget]
unknown = 1000
[nodes]
ban_after = 1
"""
BASELINE = """
set -u
for round in $(seq 1 {rounds}); do
  job=$(ROUND=$round sbatch --parsable -o /dev/null --wrap "{py} {child} {stamps} {fail} none")
  [ -n "$job" ] || exit 3
  while :; do
    state=$(scontrol show job -o $job | tr ' ' '\\n' | sed -n 's/^JobState=//p')
    case $state in PENDING|RUNNING|CONFIGURING|COMPLETING) sleep 0.5 ;; *) break ;; esac
  done
done
"""


def gaps(stamps: Path) -> list[float]:
    """From each child's end to the next child's start."""
    rows = [line.split() for line in stamps.read_text().splitlines()]
    starts = {int(r[1]): float(r[3]) for r in rows if r[0] == "start"}
    ends = {int(r[1]): float(r[3]) for r in rows if r[0] == "end"}
    return [starts[n + 1] - ends[n] for n in sorted(ends) if n + 1 in starts]


def _child(work: Path) -> Path:
    child = work / "child.py"
    child.write_text(CHILD)
    child.chmod(0o755)
    return child


def per_attempt(lab: SlurmLab, work: Path, attempts: int) -> tuple[list[float], list[float]]:
    child = _child(work)
    stamps = work / "babysit.stamps"
    (work / "babysit.toml").write_text(CONFIG)
    res = subprocess.run(
        babysit(
            "run", "--home", str(work / "h"), "-q", "--config", str(work / "babysit.toml"),
            "--name", "ovh", "--launcher", "slurm", "--nodes", "1",
            "--", sys.executable, str(child), str(stamps), str(attempts), "none",
        ),
        cwd=work, env=lab.env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    check_exit(res.returncode, 0, "babysit run --launcher slurm", res.stderr)
    ours = gaps(stamps)
    check(len(ours) == attempts, f"{len(ours)} relaunches measured, want {attempts}")
    base_stamps = work / "baseline.stamps"
    script = BASELINE.format(
        rounds=attempts + 1, py=sys.executable, child=child, stamps=base_stamps, fail=attempts
    )
    res = subprocess.run(
        ["bash", "-c", script], cwd=work, env=lab.env(), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    check_exit(res.returncode, 0, "the baseline loop", res.stderr)
    theirs = gaps(base_stamps)
    check(len(theirs) == attempts, f"baseline: {len(theirs)} relaunches, want {attempts}")
    return ours, theirs


def with_spares(lab: SlurmLab, work: Path) -> tuple[float, str, str]:
    """attempt 1 -> 2 inside the allocation: the gap, and the nodes of attempts 1 and 2."""
    child = _child(work)
    stamps = work / "spares.stamps"
    (work / "babysit.toml").write_text(CONFIG)
    # The allocation's first node is node1 (the lab is idle): it is the one that "dies".
    res = subprocess.run(
        babysit(
            "run", "--home", str(work / "h"), "-q", "--config", str(work / "babysit.toml"),
            "--name", "spares", "--launcher", "slurm", "--nodes", "1", "--spares", "1",
            "--", sys.executable, str(child), str(stamps), "0", "node1",
        ),
        cwd=work, env=lab.env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    check_exit(res.returncode, 0, "babysit run --launcher slurm --spares 1", res.stderr)
    rows = [line.split() for line in stamps.read_text().splitlines()]
    nodes = {int(r[1]): r[2] for r in rows if r[0] == "start"}
    (gap,) = gaps(stamps)
    check("banned node node1" in res.stderr, f"node1 was not banned:\n{res.stderr[-2000:]}")
    return gap, nodes[1], nodes[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attempts", type=int, default=5, help="failed attempts before success")
    args = parse_args(ap, {"attempts": 1})
    gone = missing()
    if gone:
        print(f"skipped: Slurm is not installed (missing {', '.join(gone)})")
        return 0
    work = Path(tempfile.mkdtemp(prefix="babysit-slurm-bench-"))
    # SIGTERM (a timeout) ends the benchmark through its `finally`: the lab is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    lab = SlurmLab.start(work / "lab", own_session=False)
    (work / "a").mkdir()
    (work / "s").mkdir()
    try:
        ours, theirs = per_attempt(lab, work / "a", args.attempts)
        lab.idle()
        gap, first, second = with_spares(lab, work / "s")
    finally:
        lab.stop()
    overhead = statistics.median(ours) - statistics.median(theirs)
    print(f"relaunch as a new job, babysit:  {summary(ours, ' s')}")
    print(f"relaunch as a new job, baseline: {summary(theirs, ' s')} (sbatch + scontrol loop)")
    print(f"babysit's overhead per attempt: {overhead:+.2f} s (target <= 2 s)")
    print(
        f"relaunch inside the allocation (spares): {gap:.2f} s, {first} -> {second} (target <= 5 s)"
    )
    check(first != second, f"attempt 2 ran on {second}, the node that failed")
    print(json.dumps({"overhead_s": overhead, "spares_relaunch_s": gap}))
    if not args.quick:
        check(overhead <= 2.0, f"overhead {overhead:.2f} s > 2 s")
        check(gap <= 5.0, f"relaunch with spares {gap:.2f} s > 5 s")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    t0 = time.monotonic()
    code = main()
    print(f"({time.monotonic() - t0:.1f} s)")
    sys.exit(code)
