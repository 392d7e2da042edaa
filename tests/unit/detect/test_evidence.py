"""detect.evidence: two looks at a stalled attempt -> stuck, working or unsure, and why."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from babysit.detect.evidence import weigh
from babysit.detect.stacks import group_stacks
from babysit.looks import (
    Frame,
    HangVerdict,
    Look,
    ProcessLook,
    ProcessStack,
    StackReport,
    ThreadStack,
)

ALL_REDUCE = (
    Frame("all_reduce", "torch/distributed/distributed_c10d.py", 3252),
    Frame("step", "train.py", 80),
    Frame("main", "train.py", 120),
)
SLEEP_IN_READ = (
    Frame("read_shard", "train.py", 29),
    Frame("next_batch", "train.py", 40),
    Frame("main", "train.py", 110),
)
EVAL_A = (
    Frame("forward", "torch/nn/modules/linear.py", 134),
    Frame("estimate_loss", "train.py", 60),
    Frame("main", "train.py", 130),
)
EVAL_B = (
    Frame("forward", "model.py", 44),
    Frame("estimate_loss", "train.py", 61),
    Frame("main", "train.py", 130),
)
LOCK = (Frame("acquire", "threading.py", 320), Frame("main", "train.py", 90))


def proc(
    pid: int, cpu: float = 10.0, state: str = "sleeping", io: int = 1000, rank: int | None = None
) -> ProcessLook:
    return ProcessLook(pid, state, cpu, io, rank)


def stacks(frames: Mapping[int, Sequence[Frame]], ranks: Mapping[int, int]) -> StackReport:
    ps = [
        ProcessStack(
            pid,
            ranks.get(pid),
            "node1",
            "faulthandler",
            (ThreadStack("MainThread", tuple(f)),),
        )
        for pid, f in frames.items()
    ]
    return group_stacks(ps, 0.0)


def look(
    ts: float,
    procs: Sequence[ProcessLook],
    frames: Mapping[int, Sequence[Frame]] | None = None,
    files: Mapping[str, int] | None = None,
    gpu: float | None = None,
) -> Look:
    ranks = {p.pid: p.rank for p in procs if p.rank is not None}
    report = stacks(frames, ranks) if frames is not None else None
    return Look(ts, tuple(procs), report, dict(files or {}), gpu)


def test_a_stopped_process_is_stuck() -> None:
    a = look(0.0, [proc(10, state="stopped", rank=0), proc(11, rank=1)])
    b = look(5.0, [proc(10, state="stopped", rank=0), proc(11, rank=1)])
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.STUCK and ev.sign == "stopped"
    assert ev.rank == 0 and ev.pid == 10 and "SIGCONT" in ev.reason and ev.looked_s == 5.0


def test_a_process_stopped_only_once_is_not_enough() -> None:
    a = look(0.0, [proc(10, state="stopped")])
    b = look(5.0, [proc(10, state="sleeping", cpu=10.0)])
    assert weigh(a, b).sign != "stopped"


def test_a_debugger_is_not_killed() -> None:
    a = look(0.0, [proc(10, state="tracing-stop")])
    b = look(5.0, [proc(10, state="tracing-stop")])
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.UNSURE and ev.sign == "debugger"


def test_a_growing_checkpoint_is_working_even_when_the_process_sleeps() -> None:
    # A save to slow storage: the writer sleeps in write(), identical stacks, no CPU.
    f = {10: SLEEP_IN_READ}
    a = look(0.0, [proc(10)], f, {"/ckpt/step_100.pt.tmp": 1 << 20})
    b = look(5.0, [proc(10)], f, {"/ckpt/step_100.pt.tmp": 3 << 20})
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.WORKING and ev.sign == "file_growing"
    assert "/ckpt/step_100.pt.tmp grew by 2.0 MiB" in ev.reason


def test_a_new_file_counts_as_growth() -> None:
    a = look(0.0, [proc(10)], None, {})
    b = look(5.0, [proc(10)], None, {"/ckpt/checkpoint-500/model.safetensors": 4096})
    assert weigh(a, b).sign == "file_growing"


def test_a_silent_eval_is_working() -> None:
    a = look(0.0, [proc(10, cpu=100.0)], {10: EVAL_A})
    b = look(5.0, [proc(10, cpu=104.5)], {10: EVAL_B})
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.WORKING and ev.sign == "cpu"
    assert "4.5 CPU-seconds in 5s in forward (model.py:44)" in ev.reason


def test_a_busy_cpu_on_one_line_in_both_looks_proves_nothing_where_there_are_gpus() -> None:
    # The main thread spinning in .item() behind a hung NCCL collective (CUDA's spin-wait):
    # the same line in both looks with the CPU busy. Without GPUs it is a long computation.
    a = look(0.0, [proc(10, cpu=100.0)], {10: EVAL_A})
    b = look(5.0, [proc(10, cpu=105.0)], {10: EVAL_A})
    assert weigh(a, b).verdict == HangVerdict.WORKING
    gpu_a, gpu_b = (dataclasses.replace(x, gpus=True) for x in (a, b))
    ev = weigh(gpu_a, gpu_b)
    assert ev.verdict == HangVerdict.UNSURE and ev.sign == "spinning" and ev.pid == 10


def test_logs_that_grow_are_no_save() -> None:
    # wandb's service process and a FileHandler keep writing while the training hangs.
    f = {10: SLEEP_IN_READ}
    logs = ("/run/wandb/run-1/run-1.wandb", "/run/train.log", "/run/events.out.tfevents.1")
    a = look(0.0, [proc(10)], f, dict.fromkeys(logs, 100))
    b = look(5.0, [proc(10)], f, dict.fromkeys(logs, 9000))
    assert weigh(a, b).verdict == HangVerdict.STUCK


def test_cpu_spent_spinning_in_a_collective_is_not_work() -> None:
    # NCCL's CPU threads spin while the main thread waits in all_reduce: parked, not working.
    ps0 = [proc(10, cpu=100.0, rank=0), proc(11, cpu=100.0, rank=1)]
    ps1 = [proc(10, cpu=105.0, rank=0), proc(11, cpu=105.0, rank=1)]
    f = {10: ALL_REDUCE, 11: ALL_REDUCE}
    ev = weigh(look(0.0, ps0, f), look(5.0, ps1, f))
    assert ev.verdict == HangVerdict.STUCK and ev.sign == "parked"
    assert "all 2 ranks" in ev.reason and "all_reduce" in ev.reason


def test_every_rank_in_a_collective_but_one_names_that_one() -> None:
    ps = [proc(10 + r, rank=r) for r in range(4)]
    f = {10: ALL_REDUCE, 11: SLEEP_IN_READ, 12: ALL_REDUCE, 13: ALL_REDUCE}
    ev = weigh(look(0.0, ps, f), look(5.0, ps, f))
    assert ev.verdict == HangVerdict.STUCK and ev.sign == "odd_rank"
    assert ev.rank == 1 and ev.pid == 11
    assert ev.reason.startswith("rank 1 (pid 11) sits in read_shard (train.py:29) while 3 ranks")


def test_the_odd_rank_that_computes_is_waited_for() -> None:
    # Rank 0 evaluates alone while the others wait at a barrier: normal, not a hang.
    ps0 = [proc(10, cpu=50.0, rank=0), proc(11, rank=1)]
    ps1 = [proc(10, cpu=54.0, rank=0), proc(11, rank=1)]
    a = look(0.0, ps0, {10: EVAL_A, 11: ALL_REDUCE})
    b = look(5.0, ps1, {10: EVAL_B, 11: ALL_REDUCE})
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.WORKING and ev.rank == 0


def test_identical_idle_stacks_are_parked() -> None:
    f = {10: SLEEP_IN_READ}
    ev = weigh(look(0.0, [proc(10)], f), look(5.0, [proc(10)], f))
    assert ev.verdict == HangVerdict.STUCK and ev.sign == "parked"
    assert "process 10 sat in the same place for 5s (read_shard (train.py:29))" in ev.reason


def test_a_lock_with_background_cpu_is_parked() -> None:
    a = look(0.0, [proc(10, cpu=10.0)], {10: LOCK})
    b = look(5.0, [proc(10, cpu=10.5)], {10: LOCK})  # a watchdog thread's CPU
    assert weigh(a, b).sign == "parked"


def test_moving_stacks_without_cpu_are_not_conclusive() -> None:
    # A Python polling loop (sleep, check, sleep): it moves, but does nothing.
    a = look(0.0, [proc(10)], {10: SLEEP_IN_READ})
    b = look(5.0, [proc(10)], {10: LOCK})
    ev = weigh(a, b)
    assert ev.verdict == HangVerdict.UNSURE and ev.sign == "none"


def test_disk_sleep_without_io_is_stuck_and_with_io_is_not() -> None:
    stuck = weigh(
        look(0.0, [proc(10, state="disk-sleep", io=500)]),
        look(5.0, [proc(10, state="disk-sleep", io=500)]),
    )
    assert stuck.verdict == HangVerdict.STUCK and stuck.sign == "kernel_wait"
    moving = weigh(
        look(0.0, [proc(10, state="disk-sleep", io=500)]),
        look(5.0, [proc(10, state="disk-sleep", io=90_000)]),
    )
    assert moving.verdict != HangVerdict.STUCK


def test_idle_without_stacks_is_stuck_unless_a_gpu_is_busy() -> None:
    ev = weigh(look(0.0, [proc(10)]), look(5.0, [proc(10)]))
    assert ev.verdict == HangVerdict.STUCK and ev.sign == "idle"
    busy = weigh(look(0.0, [proc(10)], gpu=95.0), look(5.0, [proc(10)], gpu=95.0))
    assert busy.verdict == HangVerdict.UNSURE


def test_busy_gpus_count_only_when_not_every_rank_waits_in_a_collective() -> None:
    ps = [proc(10, rank=0), proc(11, rank=1)]
    before, after = {10: EVAL_A, 11: EVAL_A}, {10: EVAL_B, 11: EVAL_B}
    ev = weigh(look(0.0, ps, before, gpu=90.0), look(5.0, ps, after, gpu=90.0))
    assert ev.verdict == HangVerdict.WORKING and ev.sign == "gpu"
    # Stacks that did not move: the busy GPU alone proves nothing.
    still = weigh(look(0.0, ps, before, gpu=90.0), look(5.0, ps, before, gpu=90.0))
    assert still.verdict != HangVerdict.WORKING
    # A hung NCCL collective keeps the GPUs at 100%: that is no work.
    f = {10: ALL_REDUCE, 11: ALL_REDUCE}
    hung = weigh(look(0.0, ps, f, gpu=100.0), look(5.0, ps, f, gpu=100.0))
    assert hung.verdict == HangVerdict.STUCK


def test_a_rank_s_dataloader_workers_do_not_count_as_ranks() -> None:
    # pid 12 is rank 0's worker (same RANK, higher pid): the rank is pid 10.
    ps = [proc(10, rank=0), proc(11, rank=1), proc(12, cpu=10.0, rank=0)]
    f = {10: SLEEP_IN_READ, 11: ALL_REDUCE, 12: LOCK}
    ev = weigh(look(0.0, ps, f), look(5.0, ps, f))
    assert ev.sign == "odd_rank" and ev.pid == 10


def test_no_process_left_is_unsure() -> None:
    ev = weigh(look(0.0, [proc(10)]), look(5.0, []))
    assert ev.verdict == HangVerdict.UNSURE and "no process" in ev.reason
