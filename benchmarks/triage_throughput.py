"""Triage of a big interleaved multi-rank log: time on one core and peak memory.

    python benchmarks/triage_throughput.py [--gb 1.0] [--ranks 512] [--keep] [--quick]

The log is what a 512-rank torchrun job leaves after a long run: every rank prints its
torchtitan step line (ANSI colours, `[rankN]:` prefixes), data-loader chatter, NCCL INFO
lines and the odd UserWarning; then rank 317 dies of a CUDA OOM with a traceback, every
other rank's NCCL watchdog times out ten minutes later, and torchrun prints its
ChildFailedError summary. The file is written once under the temp directory (kept with
--keep). Triage runs in a fresh child process pinned to one core (sched_setaffinity), so its
peak RSS is its own. Baselines in the same run, on the same file: reading it line by line in
Python (`for line in f`), `grep -c -i error` when grep is installed, and triage itself with
its needles searched in Python alone (as where grep is missing: one bytes.find pass a needle).
Target (issue 12): 1 GB in <= 5 s on one core, < 300 MB of memory (issue 4 asked 15 s); the
verdict must be the OOM on rank 317, with and without grep (exit 1 otherwise; the time and
memory are reported, not checked).
--quick: 2 MB of 16 ranks (the OOM on rank 317 % 16 = 13); the verdict is checked all the same.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import check, parse_args

_CHILD = r"""
import json, os, resource, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from babysit.triage import grepfind, triage_files
if sys.argv[2] == "python":
    grepfind.grep_path = lambda: None  # the needles searched in Python alone
t = time.perf_counter()
r = triage_files([sys.argv[1]])
dt = time.perf_counter() - t
d = r.diagnosis
print(json.dumps({"seconds": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                  / 1024, "category": d.category.value, "rank": d.suspect.rank,
                  "lines": r.lines, "consequences": [c.count for c in d.consequences]}))
"""

_READ = r"""
import os, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
t = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as f:
    for _ in f:
        n += 1
print(time.perf_counter() - t)
"""


def make_log(path: Path, size_bytes: int, ranks: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    noise = [
        "NCCL INFO Channel 02/32 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "NCCL INFO Connected all rings",
        "[titan] 2026-11-30 01:02:03,338 - root - INFO - Dataloader: fetched shard 1783 of 40960",
        "[titan] 2026-11-30 01:02:03,338 - root - INFO - Dumping traces at step 1000",
        "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This "
        "DataLoader will create 16 worker processes in total.",
        "  warnings.warn(",
    ]
    written = 0
    step = 0
    loss = 6.0
    with open(path, "w", buffering=1 << 22) as out:
        while written < size_bytes:
            step += 1
            loss = max(1.5, loss * 0.999 + rng.gauss(0, 0.02))
            tps = 7282 + rng.randint(-200, 200)
            chunk = []
            for r in range(ranks):
                chunk.append(
                    f"[rank{r}]:[titan] 2026-11-30 01:02:03,338 - root - INFO - \x1b[31mstep: "
                    f"{step:2}  \x1b[32mloss: {loss:7.4f}  \x1b[33mgrad_norm: "
                    f"{0.8 + rng.random() / 10:7.4f}  \x1b[34mmemory:  9.46GiB(64.99%)  tps: "
                    f"{tps:,}  tflops: 0.52  mfu: 0.17%\x1b[39m\n"
                )
                if rng.random() < 0.3:
                    chunk.append(f"[rank{r}]:{rng.choice(noise)}\n")
            text = "".join(chunk)
            out.write(text)
            written += len(text)
        # The crash: rank 317 runs out of memory, the others time out, torchrun sums up.
        culprit = 317 % ranks
        for line in (
            "Traceback (most recent call last):",
            '  File "/workspace/torchtitan/train.py", line 512, in train_step',
            "    loss.backward()",
            '  File "/usr/lib/python3/site-packages/torch/_tensor.py", line 626, in backward',
            "    torch.autograd.backward(",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a "
            "total capacity of 79.10 GiB of which 1.19 GiB is free.",
        ):
            out.write(f"[rank{culprit}]:{line}\n")
        for r in range(ranks):
            if r == culprit:
                continue
            out.write(
                f"[rank{r}]:[E1130 01:12:03.408271257 ProcessGroupNCCL.cpp:607] [Rank {r}] "
                f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum={step * 4}, "
                "OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) "
                "ran for 600060 milliseconds before timing out.\n"
            )
        out.write(
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
            "============================================================\n"
            "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-30_01:12:04\n"
            f"  host      : node-{culprit // 8:03d}\n  rank      : {culprit} (local_rank: "
            f"{culprit % 8})\n  exitcode  : 1 (pid: 4242)\n"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--ranks", type=int, default=512)
    ap.add_argument("--keep", action="store_true", help="keep the generated log for next time")
    args = parse_args(ap, quick={"gb": 0.002, "ranks": 16})
    size = int(args.gb * (1 << 30))
    path = Path(tempfile.gettempdir()) / f"babysit-triage-bench-{args.ranks}r-{size}.log"
    if not path.exists():
        t = time.perf_counter()
        partial = path.with_suffix(".partial")  # an interrupted write is never measured
        make_log(partial, size, args.ranks)
        os.replace(partial, path)
        print(
            f"wrote {path} ({path.stat().st_size / 1e9:.2f} GB) in {time.perf_counter() - t:.0f} s",
            flush=True,
        )
    file_gb = path.stat().st_size / 1e9
    try:
        res, py = (
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _CHILD, str(path), how],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            for how in ("grep", "python")
        )
        read_s = float(
            subprocess.run(
                [sys.executable, "-c", _READ, str(path)], check=True, capture_output=True, text=True
            ).stdout
        )
        grep_s = None
        if shutil.which("grep"):
            t = time.perf_counter()
            subprocess.run(
                ["grep", "-c", "-i", "error", str(path)],
                capture_output=True,
                env={**os.environ, "LC_ALL": "C"},
            )
            grep_s = time.perf_counter() - t
    finally:
        if not args.keep:
            path.unlink(missing_ok=True)
    rate = file_gb / res["seconds"] * 1000
    lines_rate = res["lines"] / res["seconds"] / 1e6
    print(
        f"triage: {res['seconds']:.1f} s for {file_gb:.2f} GB ({rate:.0f} MB/s, "
        f"{lines_rate:.2f} M lines/s), peak RSS {res['rss_mb']:.0f} MB  (target <= 5 s and "
        "< 300 MB for 1 GB)"
    )
    print(
        f"verdict: {res['category']} on rank {res['rank']}; consequences "
        f"{res['consequences']}  (want cuda_oom on rank {317 % args.ranks})"
    )
    print(
        f"the needles searched in Python alone (no grep): {py['seconds']:.1f} s, peak RSS "
        f"{py['rss_mb']:.0f} MB (grep pass / Python = {res['seconds'] / py['seconds']:.2f}x); "
        f"verdict {py['category']} on rank {py['rank']}"
    )
    print(
        f"baseline, same file: Python `for line in f` {read_s:.1f} s "
        f"(triage/read = {res['seconds'] / read_s:.2f}x)"
        + (f"; grep -c -i error {grep_s:.1f} s" if grep_s is not None else "")
    )
    check(
        (py["category"], py["rank"]) == (res["category"], res["rank"]),
        "the grep pass and the Python search disagree on the verdict",
    )
    check(
        res["category"] == "cuda_oom" and res["rank"] == 317 % args.ranks,
        f"wrong verdict: {res['category']} on rank {res['rank']}, want cuda_oom on rank "
        f"{317 % args.ranks}: the benchmark measured a triage that missed the root cause",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
