"""Run every benchmark and print the figures against their targets (issues 2 to 5).

python benchmarks/run_all.py        # or: make bench
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
BENCHES = [
    ("relaunch_latency.py", "relaunch latency <= 1 s (babysit's share, backoff excluded)"),
    ("overhead.py", "tiny GPT steps/s under babysit < 1% slower than bare"),
    ("cpu_usage.py", "babysit's own CPU < 2% of one core at 200 lines/s"),
    ("parse_throughput.py", "parse + detect >= 300k lines/s on one core; memory bounded"),
    ("client_cost.py", "babysit.client.log median <= 2 us per call"),
    ("quality_vitals.py", "spike/NaN precision and recall >= 0.95; no false hangs; hang delay"),
    ("triage_throughput.py", "triage a 1 GB 512-rank log in <= 15 s on one core, < 300 MB"),
    ("quality_triage.py", "triage category accuracy >= 90%; no fatal cause called transient"),
    ("stack_dump.py", "stack dump of 8 processes <= 3 s (py-spy and faulthandler)"),
    ("preflight.py", "preflight (every health check, with the matmul test) <= 10 s"),
    ("decision_latency.py", "from an incident (a NaN) to the action (SIGTERM) <= 100 ms"),
]

failed = []
for script, target in BENCHES:
    print(f"== {script}: target: {target}", flush=True)
    proc = subprocess.run([sys.executable, str(HERE / script)], stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:  # say why, and run the others all the same
        failed.append(script)
        print(f"!! {script} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}", flush=True)
sys.exit(f"failed: {', '.join(failed)}" if failed else 0)
