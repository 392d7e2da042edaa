"""Parsing + detection throughput on a realistic mixed multi-rank log, and bounded memory.

    python benchmarks/parse_throughput.py [--lines 1000000] [--ranks 64] [--quick]

The log is what a torchrun job of RANKS ranks prints, all ranks in one stream with `[rankN]:`
prefixes: per step, a torchtitan line from every rank (torchtitan prints on all of them), a
nanoGPT-style line and an HF dict from rank 0, NCCL INFO and Python warnings from many ranks,
tqdm redraws, plain prose; now and then a Megatron line, a traceback of a survived warning, a
DeepSpeed overflow line. The whole babysit path is timed, on one core: the bytes are split into
lines by the Follower (as in `babysit run`), then parsed and fed to every detector through the
Pipeline. Baseline in the same run: the Follower alone (splitting and decoding the lines), the
floor under any parsing. Memory: the Pipeline's Python allocations (tracemalloc) after
LINES and after 5x LINES must be about the same: nothing grows with the run.
Target (issue 3): >= 300k lines/s. Checked every time (also with --quick: 20,000 lines of 8
ranks): every line was read, the step counter reached the log's last step, and the memory after
five fifths of LINES is at most twice that after the first fifth (plus 1 MiB).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from _common import check, parse_args

from babysit.sources.follow import Follower
from babysit.supervise.pipeline import Pipeline


def make_log(path: Path, lines: int, ranks: int, seed: int = 0) -> int:
    """Write the log; return the last step it reaches."""
    rng = random.Random(seed)
    out: list[str] = []
    step = 0
    loss = 6.0
    noise = [
        "NCCL INFO Channel 02/32 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "NCCL INFO Connected all rings",
        "/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:557: UserWarning: This "
        "DataLoader will create 16 worker processes in total.",
        "[titan] 2026-11-30 01:02:03,338 - root - INFO - Dumping traces at step 1000",
        "  warnings.warn(",
        "W1130 01:02:03.408000 139 torch/distributed/elastic/multiprocessing/api.py:897] ",
        "INFO:root:Preparing dataset shard 17 of 1024",
    ]
    starts: list[int] = []  # starts[k]: the index of step k + 1's first line
    while len(out) < lines:
        step += 1
        starts.append(len(out))
        loss = max(1.5, loss * 0.999 + rng.gauss(0, 0.02))
        tps = 7282 + rng.randint(-200, 200)
        for r in range(ranks):
            out.append(
                f"[rank{r}]:[titan] 2026-11-30 01:02:03,338 - root - INFO - \x1b[31mstep: {step:2}"
                f"  \x1b[32mloss: {loss:7.4f}  \x1b[33mgrad_norm: {0.8 + rng.random() / 10:7.4f}"
                f"  \x1b[34mmemory:  9.46GiB(64.99%)  tps: {tps:,}  tflops: 0.52  mfu: 0.17%"
                "\x1b[39m"
            )
            if rng.random() < 0.6:
                out.append(f"[rank{r}]:{rng.choice(noise)}")
        out.append(f"[rank0]:iter {step}: loss {loss:.4f}, time 33.52ms, mfu 0.96%")
        out.append(
            f"[rank0]:{{'loss': {loss:.4f}, 'grad_norm': {0.8 + rng.random():.4f}, "
            f"'learning_rate': 9.77e-06, 'epoch': {step / 1000:.2f}}}"
        )
        out.append(
            f"[rank0]:Epoch 0:  22%|██▏       | {step}/18000 [00:17<01:02,  4.47it/s, "
            f"loss={loss:.3f}, v_num=1]"
        )
        if step % 50 == 0:
            out.append(
                f" iteration {step:8d}/  250000 | consumed samples: {step * 1024} | "
                f"elapsed time per iteration (ms): 86545.2 | lm loss: {loss:.6E} | "
                "loss scale: 1.0 | grad norm: 0.231 | number of skipped iterations: 0 |"
            )
            out += [
                "Traceback (most recent call last):",
                '  File "x.py", line 3, in <module>',
                "    warn()",
                "UserWarning: this is only a warning",
            ]
            out.append(
                "[2026-11-30 01:02:03,037] [INFO] [loss_scaler.py:183:update_scale] "
                "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, "
                "reducing to 32768"
            )
    path.write_text("\n".join(out[:lines]) + "\n", encoding="utf-8")
    return sum(1 for i in starts if i < lines)


def run(path: Path, with_pipeline: bool) -> tuple[float, int, Pipeline]:
    follower = Follower(path, "stdout")
    pipeline = Pipeline()
    pipeline.new_attempt(0.0)
    n = 0
    t0 = time.process_time()
    while True:
        chunk = follower.poll(1.0, final=True)
        n += len(chunk.lines)
        if with_pipeline:
            pipeline.lines(chunk.lines)
        if not chunk.data:
            break
    return time.process_time() - t0, n, pipeline


def main() -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--ranks", type=int, default=64)
    args = parse_args(ap, quick={"lines": 20_000, "ranks": 8})
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "mixed.log"
        last_step = make_log(log, args.lines, args.ranks)
        size_mb = log.stat().st_size / 2**20
        base_s, n, _ = run(log, with_pipeline=False)
        check(n == args.lines, f"the Follower read {n} lines of {args.lines}")
        full_s, n, pipeline = run(log, with_pipeline=True)
        check(n == args.lines, f"the Follower read {n} lines of {args.lines} (with the Pipeline)")
        check(
            pipeline.last_step == last_step and pipeline.metric_records > 0,
            f"the Pipeline saw step {pipeline.last_step} and {pipeline.metric_records} metric "
            f"records; the log reaches step {last_step}",
        )
        rate = n / full_s
        # Parsing + detection alone, on lines already read (the figure).
        follower = Follower(log, "stdout")
        lines = []
        while True:
            chunk = follower.poll(1.0, final=True)
            lines += chunk.lines
            if not chunk.data:
                break
        only = Pipeline()
        only.new_attempt(0.0)
        t0 = time.process_time()
        for i in range(0, len(lines), 4096):
            only.lines(lines[i : i + 4096])
        parse_s = time.process_time() - t0
        del lines
        print(
            f"{n} lines ({size_mb:.0f} MiB, {args.ranks} ranks): parse + detect "
            f"{parse_s:.2f}s CPU = {n / parse_s / 1000:.0f}k lines/s on one core"
        )
        print(
            f"end to end (follow the file, split, decode, parse, detect): {full_s:.2f}s = "
            f"{rate / 1000:.0f}k lines/s; baseline, follow only: {base_s:.2f}s = "
            f"{n / base_s / 1000:.0f}k lines/s"
        )
        print(f"metric records {pipeline.metric_records}, last step {pipeline.last_step}")
        # Memory: the same pipeline fed 5x as much must not hold more.
        big = Path(tmp) / "big.log"
        tracemalloc.start()
        p = Pipeline()
        p.new_attempt(0.0)
        samples = []
        for _ in range(5):
            make_log(big, args.lines // 5, args.ranks, seed=len(samples))
            f = Follower(big, "stdout")
            while True:
                chunk = f.poll(1.0, final=True)
                p.lines(chunk.lines)
                if not chunk.data:
                    break
            samples.append(tracemalloc.get_traced_memory()[0] / 2**20)
        tracemalloc.stop()
        print("pipeline memory after each fifth (MiB): " + ", ".join(f"{s:.1f}" for s in samples))
        check(
            samples[-1] <= 2 * samples[0] + 1,
            f"the Pipeline's memory grows with the run: {samples} MiB after each fifth",
        )
    return {
        "parse_detect_lines_per_s": n / parse_s,
        "end_to_end_lines_per_s": rate,
        "follow_only_lines_per_s": n / base_s,
        "memory_first_mib": samples[0],
        "memory_last_mib": samples[-1],
    }


if __name__ == "__main__":
    print(json.dumps(main()))
