"""Is a stalled attempt stuck, or silently working? Two looks a few seconds apart tell. Pure.

    ev = weigh(first, second)    # two looks.Look of the attempt, the second taken later
    ev.verdict                   # HangVerdict.STUCK (kill now), WORKING (wait) or UNSURE
    ev.sign, ev.reason           # "stopped", "rank 0 (pid 4242) is stopped (state T) ..."

What a person would look at, in the order a person would weigh it:
1. A process stopped (state T: SIGSTOP, Ctrl-Z) in both looks is stuck: nothing it does moves
   until someone continues it. One held by a debugger (state t) is someone's business: unsure.
2. Working, wait:
   - a file being written grew (a checkpoint save on slow storage: open for writing by the
     attempt, or in the checkpoint directory); logs and metrics streams (`.log`, `.jsonl`,
     wandb's and TensorBoard's files) do not count: a hung job's helpers keep writing them;
   - a rank used CPU (at least BUSY_CPU of a core), its main thread is not parked in a wait,
     and its stack moved between the looks (an eval or a save that prints nothing: nanoGPT's
     estimate_loss). Busy on the very same line in both looks is a long computation on a
     machine without GPUs, but proves nothing on one with GPUs: CUDA spin-waits in `.item()`
     behind a hung collective ("spinning", unsure);
   - the GPUs are busy (NVML) while some rank's stack moved and not every rank waits in a
     collective (a hung NCCL collective keeps a GPU at 100% too, so that alone proves nothing).
3. Stuck, kill now:
   - a process in uninterruptible sleep (D) in both looks with no I/O between them;
   - every rank's main thread in the same frame, line for line, in both looks, and parked: in
     a wait (a collective, a lock, a read, `sleep`) or using no CPU. When all ranks but one
     wait in a collective, that one is named ("odd_rank");
   - without stacks, every process idle (no CPU, no I/O) on a machine without a busy GPU.
4. Otherwise unsure: hang.kill_after_s decides (policy/hang.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from babysit.detect.stacks import describe, plumbing, telling, waiting
from babysit.looks import Evidence, Frame, HangVerdict, Look, ProcessLook, ProcessStack

# A rank that used a fifth of a core between the looks is doing something; one under 2% is
# idle. A Python process that computes (an eval on the CPU, a loop feeding a GPU) uses a whole
# core; one blocked on a lock, a socket or a sleep uses next to nothing, its background threads
# (a NCCL watchdog, gloo's) a little.
BUSY_CPU = 0.2
IDLE_CPU = 0.02
GPU_BUSY_PCT = 20.0  # NVML's utilisation: some kernel ran during most of the sample period
_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".jsonl", ".csv", ".wandb")
STOPPED = "stopped"
TRACED = "tracing-stop"
DISK_SLEEP = "disk-sleep"
# The functions a main thread parks in when it waits for something rather than working.
_WAIT_FUNCTIONS = frozenset(
    {
        "sleep",
        "wait",
        "wait_for",
        "acquire",
        "join",
        "get",
        "select",
        "poll",
        "epoll",
        "read",
        "readinto",
        "readline",
        "recv",
        "recv_into",
        "recvfrom",
        "accept",
        "connect",
        "flock",
        "lockf",
        "_wait_for_tstate_lock",
        "barrier",
        "synchronize",
    }
)


def weigh(first: Look, second: Look) -> Evidence:
    """What the two looks say; `second` was taken after `first`."""
    dt = max(second.ts - first.ts, 1e-6)
    before = {p.pid: p for p in first.processes}
    both = [(before[p.pid], p) for p in second.processes if p.pid in before]
    if not both:
        return Evidence(
            HangVerdict.UNSURE, "none", "no process of the attempt was left to look at", dt
        )
    stacks = {p.pid: p for p in second.stacks.processes} if second.stacks else {}
    old_stacks = {p.pid: p for p in first.stacks.processes} if first.stacks else {}

    for a, b in both:
        if a.state == b.state == STOPPED:
            return Evidence(
                HangVerdict.STUCK,
                "stopped",
                f"{_who(b)} is stopped (state T: SIGSTOP or Ctrl-Z); it makes no progress until "
                "someone sends it SIGCONT",
                dt,
                b.rank,
                b.pid,
            )
    for a, b in both:
        if a.state == b.state == TRACED:
            return Evidence(
                HangVerdict.UNSURE,
                "debugger",
                f"{_who(b)} is held by a debugger (state t): not killed while someone debugs it",
                dt,
                b.rank,
                b.pid,
            )

    grown = _grown(first, second)
    if grown is not None:
        path, by = grown
        return Evidence(
            HangVerdict.WORKING,
            "file_growing",
            f"{path} grew by {_size(by)} in {dt:.0f}s: a save is under way",
            dt,
        )
    ranks = _ranks(both, stacks)
    spinning: ProcessLook | None = None
    for a, b in ranks:
        used = _cpu(a, b)
        frames = _main(stacks.get(b.pid))
        if used is None or used < BUSY_CPU * dt or (frames and _parked(frames)):
            continue
        if frames and frames == _main(old_stacks.get(b.pid)) and second.gpus:
            spinning = spinning or b  # busy on one line: a long call, or a spin on the GPU
            continue
        where = f" in {describe(telling(frames))}" if frames else ""
        return Evidence(
            HangVerdict.WORKING,
            "cpu",
            f"{_who(b)} used {used:.1f} CPU-seconds in {dt:.0f}s{where}: it is computing "
            "without printing (an eval, a save)",
            dt,
            b.rank,
            b.pid,
        )
    all_waiting = bool(ranks) and all(
        (f := _main(stacks.get(b.pid))) and waiting(f) for _, b in ranks
    )
    busy_gpu = [x.gpu_util_pct for x in (first, second) if x.gpu_util_pct is not None]
    moved = any(
        (f := _main(stacks.get(b.pid))) is not None and f != _main(old_stacks.get(b.pid))
        for _, b in ranks
    )
    if busy_gpu and min(busy_gpu) >= GPU_BUSY_PCT and moved and not all_waiting:
        return Evidence(
            HangVerdict.WORKING,
            "gpu",
            f"the GPUs are busy ({min(busy_gpu):.0f}% utilisation) and not every rank waits in "
            "a collective: it is computing without printing",
            dt,
        )

    for a, b in both:
        if a.state == b.state == DISK_SLEEP and a.io_bytes is not None and a.io_bytes == b.io_bytes:
            return Evidence(
                HangVerdict.STUCK,
                "kernel_wait",
                f"{_who(b)} is stuck in the kernel (state D) with no I/O for {dt:.0f}s: a hung "
                "filesystem or GPU driver, most often",
                dt,
                b.rank,
                b.pid,
            )
    if stacks and ranks:
        parked = _all_parked(ranks, stacks, old_stacks, dt)
        if parked is not None:
            return parked
    if not stacks and ranks and all(_idle(a, b, dt) for a, b in both):
        gpu = second.gpu_util_pct
        if gpu is None or gpu < GPU_BUSY_PCT:
            return Evidence(
                HangVerdict.STUCK,
                "idle",
                f"no process of the attempt used CPU or did I/O for {dt:.0f}s"
                + ("" if gpu is None else f", and the GPUs are idle ({gpu:.0f}%)"),
                dt,
            )
    if spinning is not None:
        return Evidence(
            HangVerdict.UNSURE,
            "spinning",
            f"{_who(spinning)} keeps a CPU busy on one line "
            f"({describe(telling(_main(stacks.get(spinning.pid)) or ()))}) in both looks: a long "
            "computation, or a spin-wait on a GPU behind a hung collective",
            dt,
            spinning.rank,
            spinning.pid,
        )
    if all_waiting:
        return Evidence(
            HangVerdict.UNSURE,
            "waiting",
            "every rank waits in a collective, and their stacks moved between the looks",
            dt,
        )
    return Evidence(
        HangVerdict.UNSURE,
        "none",
        f"no evidence either way in {dt:.0f}s (no CPU to speak of, stacks not conclusive)",
        dt,
    )


def _all_parked(
    ranks: Sequence[tuple[ProcessLook, ProcessLook]],
    stacks: dict[int, ProcessStack],
    old_stacks: dict[int, ProcessStack],
    dt: float,
) -> Evidence | None:
    """Stuck when every rank's main thread sat in the same frames, lines included, in both
    looks, and is parked (in a wait, or using no CPU)."""
    for a, b in ranks:
        now, then = _main(stacks.get(b.pid)), _main(old_stacks.get(b.pid))
        if not now or now != then:
            return None
        if not (_parked(now) or _idle(a, b, dt)):
            return None
    report_ranks = [b for _, b in ranks]
    odd_rank = _odd_one(report_ranks, stacks)
    if odd_rank is not None:
        p, frames = odd_rank
        rest = len(report_ranks) - 1
        return Evidence(
            HangVerdict.STUCK,
            "odd_rank",
            f"{_who(p)} sits in {describe(telling(frames))} while "
            f"{f'{rest} ranks wait' if rest > 1 else 'the other rank waits'} in a collective "
            f"for it, unchanged for {dt:.0f}s",
            dt,
            p.rank,
            p.pid,
        )
    first = _main(stacks.get(report_ranks[0].pid)) or ()
    who = _who(report_ranks[0]) if len(report_ranks) == 1 else f"all {len(report_ranks)} ranks"
    return Evidence(
        HangVerdict.STUCK,
        "parked",
        f"{who} sat in the same place for {dt:.0f}s ({describe(telling(first))}), waiting for "
        "something that does not come",
        dt,
        report_ranks[0].rank if len(report_ranks) == 1 else None,
        report_ranks[0].pid if len(report_ranks) == 1 else None,
    )


def _odd_one(
    ranks: Sequence[ProcessLook], stacks: dict[int, ProcessStack]
) -> tuple[ProcessLook, tuple[Frame, ...]] | None:
    """The one rank not waiting in a collective while all the others (at least one) are."""
    if len(ranks) < 2:
        return None
    elsewhere = [p for p in ranks if not waiting(_main(stacks.get(p.pid)) or ())]
    if len(elsewhere) != 1:
        return None
    p = elsewhere[0]
    return p, _main(stacks.get(p.pid)) or ()


def _ranks(
    both: Sequence[tuple[ProcessLook, ProcessLook]], stacks: dict[int, ProcessStack]
) -> list[tuple[ProcessLook, ProcessLook]]:
    """The processes that count: the ranks when any has one (not a launcher, not a rank's
    DataLoader worker), else those with a stack, else all."""
    ranked = [(a, b) for a, b in both if b.rank is not None]
    if ranked:
        seen: set[int] = set()
        out = []
        for a, b in sorted(ranked, key=lambda x: x[1].pid):
            if b.rank is not None and b.rank not in seen:
                seen.add(b.rank)  # the lowest pid of a rank is the rank; the rest its workers
                out.append((a, b))
        return out
    with_stack = [(a, b) for a, b in both if _main(stacks.get(b.pid))]
    return with_stack or list(both)


def _main(stack: ProcessStack | None) -> tuple[Frame, ...] | None:
    if stack is None or stack.error is not None:
        return None
    t = stack.main_thread
    return t.frames if t is not None and t.frames else None


def _parked(frames: Sequence[Frame]) -> bool:
    """The main thread waits (a collective, the standard library's waiting, a blocking call)."""
    inner = frames[0]
    name = inner.function.rsplit(".", 1)[-1]
    return waiting(frames) or plumbing(inner) or name in _WAIT_FUNCTIONS


def _cpu(a: ProcessLook, b: ProcessLook) -> float | None:
    if a.cpu_s is None or b.cpu_s is None:
        return None
    return max(b.cpu_s - a.cpu_s, 0.0)


def _idle(a: ProcessLook, b: ProcessLook, dt: float) -> bool:
    used = _cpu(a, b)
    io_same = a.io_bytes is None or b.io_bytes is None or a.io_bytes == b.io_bytes
    return used is not None and used < IDLE_CPU * dt and io_same


def _grown(first: Look, second: Look) -> tuple[str, int] | None:
    """The file that grew most between the looks (a new one counts from 0), logs left out."""
    best: tuple[str, int] | None = None
    for path, size in second.files.items():
        if _log_like(path):
            continue
        by = size - first.files.get(path, 0)
        if by > 0 and (best is None or by > best[1]):
            best = (path, by)
    return best


def _log_like(path: str) -> bool:
    """A log or a metrics stream, which a hung job's helpers keep writing (wandb's service
    process, a logging FileHandler, `tee`): no save."""
    name = path.rsplit("/", 1)[-1].lower()
    return (
        name.endswith(_LOG_SUFFIXES)
        or "tfevents" in name
        or "/wandb/" in path
        or "/mlruns/" in path
    )


def _who(p: ProcessLook) -> str:
    return f"rank {p.rank} (pid {p.pid})" if p.rank is not None else f"process {p.pid}"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
