"""Run every benchmark and print the figures against their targets (issues 2 to 5).

python benchmarks/run_all.py           # or: make bench
python benchmarks/run_all.py --quick   # every benchmark as a smoke test (seconds each): the
                                       # smallest inputs, verdicts and exit codes checked, no
                                       # figure held against its target
python benchmarks/run_all.py --quick overhead.py stack_dump.py   # only these
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
BENCHES = [
    ("relaunch_latency.py", "relaunch latency <= 1 s (babysit's share, backoff excluded)"),
    ("overhead.py", "tiny GPT steps/s under babysit < 1% slower than bare"),
    ("cpu_usage.py", "babysit's own CPU < 2% of one core at 200 lines/s"),
    ("parse_throughput.py", "parse + detect >= 300k lines/s on one core; memory bounded"),
    ("client_cost.py", "babysit.client.log median <= 2 us per call"),
    ("quality_vitals.py", "spike/NaN precision and recall >= 0.95; no false hangs; hang delay"),
    ("triage_throughput.py", "triage a 1 GB 512-rank log in <= 5 s on one core, < 300 MB"),
    ("quality_triage.py", "triage category accuracy >= 90%; no fatal cause called transient"),
    ("stack_dump.py", "stack dump of 8 processes <= 3 s (py-spy and faulthandler)"),
    ("preflight.py", "preflight (every health check, with the matmul test) <= 10 s"),
    ("decision_latency.py", "from an incident (a NaN) to the action (SIGTERM) <= 100 ms"),
    ("checkpoint_scan.py", "watching a 100,000-file checkpoint directory < 1% of a core"),
    ("alert_latency.py", "decision -> alert at a local receiver <= 1 s; 1,000 incidents -> <= 5"),
    ("report_speed.py", "report over 100 runs / 10,000 attempts <= 2 s (per run and --nodes)"),
    ("hang_evidence.py", "frozen restarted <= detection + 15 s; 0 kills: 40 s eval, 60 s save"),
    ("straggler.py", "512 ranks >= 100k lines/s with stragglers on; held-out P >= .95, R >= .9"),
    ("chaos.py", "babysit finishes every fault schedule; rate >= 95% fault-free, >= 1.5x loop"),
    ("slurm_overhead.py", "Slurm: overhead per attempt <= 2 s; relaunch with spares <= 5 s"),
]


def main() -> int:
    ap = argparse.ArgumentParser(description="Run every benchmark (or those named).")
    ap.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    ap.add_argument("only", nargs="*", help="benchmark scripts to run (default: all)")
    args = ap.parse_args()
    known = [script for script, _ in BENCHES]
    unknown = [s for s in args.only if s not in known]
    if unknown:
        ap.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(known)}")
    failed = []
    for script, target in BENCHES:
        if args.only and script not in args.only:
            continue
        print(
            f"== {script}: target: {target}" + (" (quick: not checked)" if args.quick else ""),
            flush=True,
        )
        cmd = [sys.executable, str(HERE / script), *(["--quick"] if args.quick else [])]
        t0 = time.monotonic()
        proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
        took = time.monotonic() - t0
        if proc.returncode != 0:  # say why, and run the others all the same
            failed.append(script)
            print(
                f"!! {script} failed (exit {proc.returncode}, {took:.1f} s):\n"
                f"{proc.stderr[-3000:]}",
                flush=True,
            )
        else:
            print(f"   ({script}: {took:.1f} s)", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
