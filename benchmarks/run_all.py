"""Run every benchmark of issue 2 and print the figures against their targets.

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
]

for script, target in BENCHES:
    print(f"== {script}: target: {target}", flush=True)
    subprocess.run([sys.executable, str(HERE / script)], check=True, stderr=subprocess.DEVNULL)
