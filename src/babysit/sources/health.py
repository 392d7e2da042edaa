"""Health checks of this node, for `babysit doctor` and the preflight before each attempt.

    targets = HealthTargets(checkpoint_dirs=(Path("out"),), home=Path(".babysit"))
    for r in run_checks(targets, budget_s=10.0):     # [CheckResult, ...]
        print(r.status.value, r.name, r.target, r.summary)
    ok, results = preflight(targets)                 # ok: nothing FAILed
    ban_reason = failure_summary(results)            # the FAILs in one line

Checks (CHECKS): "gpu" (one result per GPU through NVML: temperature against its slowdown
temperature, clock throttling, uncorrected ECC errors, remapped rows, retired pages), "disk" (free
space where checkpoints go and in babysit's home), "shm" (/dev/shm size), "fs_latency"
(sources/fsprobe.py: 1 MiB write + fsync + read back + delete in each checkpoint and data
directory), "memory" (available
RAM, swap in use), "matmul" (sources/matmul.py: does every device compute right?).

Every check runs in its own daemon thread (each directory of fs_latency too), all at once, and
the caller waits at most `budget_s`: a hung filesystem or driver is a FAIL that says so, never a
hung babysit. A directory that does not exist yet is checked through its nearest existing parent,
and the summary says so.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import psutil

from babysit.records import CHECK_ERROR, CheckResult, CheckStatus
from babysit.sources.fsprobe import check_fs_latency, nearest_existing, where
from babysit.sources.matmul import MatmulCheck
from babysit.sources.nvml import GIB, GpuReading, Nvml, NvmlError, NvmlUnavailable

CHECKS = ("gpu", "disk", "shm", "fs_latency", "memory", "matmul")
MIB = float(1 << 20)
DRAIN = "drain this node and run the NVIDIA field diagnostic"
_OVERRUN = {
    "gpu": "NVML did not answer: a GPU or the driver may be hung (does nvidia-smi hang too?)",
    "fs_latency": "slow or hung filesystem: checkpoints and data loading would stall here",
}


@dataclass(frozen=True)
class HealthTargets:
    checkpoint_dirs: tuple[Path, ...] = ()
    data_dirs: tuple[Path, ...] = ()
    home: Path | None = None
    python: str = field(default=sys.executable)  # the interpreter the matmul test runs in


@dataclass(frozen=True)
class HealthThresholds:
    gpu_temp_margin_c: float = 5.0  # WARN this close to the GPU's own slowdown temperature
    gpu_temp_warn_c: float = 85.0  # WARN at this when the GPU reports no slowdown temperature
    disk_warn_gib: float = 20.0
    disk_fail_gib: float = 1.0
    # Docker's 64 MiB default kills DataLoader workers with bus errors. A WARN, not a FAIL: it
    # is the container's setting, not a broken node, and runs without worker processes are fine.
    shm_warn_mib: float = 1024.0
    fs_warn_ms: float = 500.0  # 1 MiB write + fsync + read + delete; local NVMe: a few ms
    fs_fail_ms: float = 5000.0
    mem_warn_gib: float = 2.0
    mem_fail_gib: float = 0.25
    swap_warn_pct: float = 50.0


class Job(NamedTuple):
    name: str
    target: str
    run: Callable[[], list[CheckResult]]
    # What to report when the job is still running at the deadline (default: a FAIL, with the
    # hint of _OVERRUN): the matmul test knows which phase it was in.
    overrun: Callable[[float], CheckResult] | None = None


def run_checks(
    targets: HealthTargets,
    budget_s: float = 10.0,
    only: Collection[str] | None = None,
    thresholds: HealthThresholds | None = None,
) -> list[CheckResult]:
    """Every check (or those named in `only`), concurrently, within `budget_s` in all."""
    th = thresholds or HealthThresholds()
    unknown = sorted(set(only or ()) - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown check(s) {', '.join(unknown)}; known: {', '.join(CHECKS)}")
    names = [c for c in CHECKS if only is None or c in only]
    return run_jobs([j for n in names for j in jobs_for(n, targets, th, budget_s)], budget_s)


def preflight(
    targets: HealthTargets, budget_s: float = 10.0, thresholds: HealthThresholds | None = None
) -> tuple[bool, list[CheckResult]]:
    """All checks; ok is False when any FAILed (the node should be banned, not trusted)."""
    results = run_checks(targets, budget_s, None, thresholds)
    return not any(r.status is CheckStatus.FAIL for r in results), results


def failure_summary(results: Sequence[CheckResult]) -> str:
    """The failed checks in one line, for a ban's reason and the logbook."""
    return "; ".join(
        f"{r.name}{f' {r.target}' if r.target else ''}: {r.summary}"
        for r in results
        if r.status is CheckStatus.FAIL
    )


def not_checked(results: Sequence[CheckResult]) -> str:
    """What the checks could not look at, in one line ('' when they saw everything, GPUs
    included), so that a pass never claims more than was checked."""
    parts = []
    skipped = [f"{r.name} ({r.summary})" for r in results if r.status is CheckStatus.SKIP]
    if skipped:
        parts.append(f"skipped: {', '.join(skipped)}")
    gpu = any(
        r.target.startswith("GPU ") or (r.name == "gpu" and r.status is not CheckStatus.SKIP)
        for r in results
    )
    if not gpu:
        parts.append("no GPU was checked")
    return "; ".join(parts)


def jobs_for(name: str, t: HealthTargets, th: HealthThresholds, budget_s: float) -> list[Job]:
    if name == "gpu":
        return [Job("gpu", "", lambda: check_gpus(th))]
    if name == "disk":
        return [Job("disk", "", lambda: check_disk(t, th))]
    if name == "shm":
        return [Job("shm", "/dev/shm", lambda: check_shm(th))]
    if name == "memory":
        return [Job("memory", "RAM", lambda: check_memory(th))]
    if name == "matmul":
        # Its own timeout a little inside the budget, so it reports itself and kills its child;
        # when reaping that child takes longer, the overrun still names the phase it was in.
        mm = MatmulCheck(t.python)
        return [Job("matmul", "", lambda: mm.run(max(0.5, budget_s - 0.5)), mm.overrun)]
    dirs = [(d, False) for d in t.checkpoint_dirs] + [(d, True) for d in t.data_dirs]
    if not dirs:
        skip = CheckResult("fs_latency", CheckStatus.SKIP, "no checkpoint or data directory given")
        return [Job("fs_latency", "", lambda: [skip])]
    return [Job("fs_latency", where(d), _fs_job(d, ro, th)) for d, ro in _unique(dirs)]


def _fs_job(d: Path, read_only_ok: bool, th: HealthThresholds) -> Callable[[], list[CheckResult]]:
    return lambda: [check_fs_latency(d, th.fs_warn_ms, th.fs_fail_ms, read_only_ok)]


def run_jobs(jobs: Sequence[Job], budget_s: float) -> list[CheckResult]:
    """Run the jobs in daemon threads; a job still running at the deadline is a FAIL."""
    slots: list[list[CheckResult] | None] = [None] * len(jobs)
    took: list[float] = [0.0] * len(jobs)

    def work(i: int, job: Job) -> None:
        t0 = time.monotonic()
        try:
            res = job.run()
        except Exception as exc:  # a check must never take the doctor down with it
            msg = f"the check itself failed ({type(exc).__name__}: {exc}); this is a babysit bug"
            # not the node's fault: a preflight must not ban a node for it (records.NODE_CHECKS)
            res = [CheckResult(job.name, CheckStatus.FAIL, msg, job.target,
                               details={CHECK_ERROR: True})]
        took[i] = time.monotonic() - t0
        slots[i] = res

    start = time.monotonic()
    threads = [
        threading.Thread(target=work, args=(i, j), name=f"check-{j.name}", daemon=True)
        for i, j in enumerate(jobs)
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join(max(0.0, start + budget_s - time.monotonic()))
    out: list[CheckResult] = []
    for i, job in enumerate(jobs):
        res = slots[i]
        if res is None and job.overrun is not None:
            res = [replace(job.overrun(budget_s), elapsed_s=budget_s)]
        elif res is None:
            hint = _OVERRUN.get(job.name, "it may be hung")
            summary = f"did not finish within {budget_s:g}s: {hint}"
            res = [CheckResult(job.name, CheckStatus.FAIL, summary, job.target, budget_s)]
        out += [r if r.elapsed_s else replace(r, elapsed_s=took[i]) for r in res]
    return out


# -- gpu ------------------------------------------------------------------------------------


def check_gpus(th: HealthThresholds, module: Any = None) -> list[CheckResult]:
    """One result per GPU; `module` stands in for pynvml in tests."""
    try:
        nvml = Nvml(module)
    except NvmlUnavailable as exc:
        return [CheckResult("gpu", CheckStatus.SKIP, str(exc))]
    try:
        out = []
        for i in range(nvml.count):
            t0 = time.monotonic()
            try:
                r = nvml.read(i)
            except NvmlError as exc:
                msg = f"GPU {i}: NVML error {exc}; {DRAIN}"
                out.append(CheckResult("gpu", CheckStatus.FAIL, msg, f"GPU {i}"))
                continue
            status, summary = judge_gpu(r, th)
            details: dict[str, Any] = {k: v for k, v in r.__dict__.items() if v is not None}
            if r.reasons is not None:
                details |= {
                    "throttle_thermal": r.throttle_thermal,
                    "throttle_power": r.throttle_power,
                    "power_capped": r.power_capped,
                }
            out.append(
                CheckResult("gpu", status, summary, f"GPU {i}", time.monotonic() - t0, details)
            )
        return out
    finally:
        nvml.close()


def judge_gpu(r: GpuReading, th: HealthThresholds) -> tuple[CheckStatus, str]:
    fails: list[str] = []
    warns: list[str] = []
    fine: list[str] = []
    if r.remapped_failed:
        fails.append(f"a memory row remap FAILED: the GPU needs replacing; {DRAIN}")
    if r.remapped_pending:
        fails.append("a memory row remap is pending: reset the GPU (or reboot the node) first")
    if r.retired_pending:
        fails.append("a memory page retirement is pending: reset the GPU (or reboot) first")
    if r.ecc_volatile:
        fails.append(f"{r.ecc_volatile} uncorrected ECC error(s) since the driver loaded; {DRAIN}")
    if r.ecc_aggregate:
        warns.append(f"{r.ecc_aggregate} uncorrected ECC error(s) over its life")
    if r.temp_c is not None:
        limit = r.slowdown_c - th.gpu_temp_margin_c if r.slowdown_c else th.gpu_temp_warn_c
        at = f"{r.temp_c:.0f} C" + (f" (slows at {r.slowdown_c:.0f} C)" if r.slowdown_c else "")
        if r.temp_c >= limit:
            warns.append(f"{at}: running hot, check its cooling")
        else:
            fine.append(at)
    if r.throttle_thermal:
        warns.append("clocks throttled for temperature: check cooling and airflow")
    if r.throttle_power:
        warns.append("clocks slowed by a hardware slowdown or power brake: check power supply")
    if r.ecc_volatile == 0 and not r.ecc_aggregate:
        fine.append("no ECC errors")
    if r.remapped_pending == 0 and r.remapped_failed == 0:
        fine.append("no pending row remaps")
    status = CheckStatus.FAIL if fails else CheckStatus.WARN if warns else CheckStatus.PASS
    return status, f"{r.name}: " + "; ".join(fails + warns + fine)


# -- disk, shm, memory ----------------------------------------------------------------------

Usage = Callable[[str], Any]  # shutil.disk_usage: (total, used, free)


def check_disk(
    t: HealthTargets, th: HealthThresholds, usage: Usage = shutil.disk_usage
) -> list[CheckResult]:
    dirs = [(d, "checkpoints") for d in t.checkpoint_dirs]
    dirs += [(t.home, "babysit's home")] if t.home is not None else []
    if not dirs:
        return [CheckResult("disk", CheckStatus.SKIP, "no checkpoint directory or home given")]
    out = []
    for d, role in _unique(dirs):
        real = nearest_existing(d)
        u = usage(str(real))
        free = u.free / GIB
        note = "" if real == d.expanduser().absolute() else f" (not created yet: checked {real})"
        status = (
            CheckStatus.FAIL
            if free < th.disk_fail_gib
            else CheckStatus.WARN
            if free < th.disk_warn_gib
            else CheckStatus.PASS
        )
        summary = f"{free:.1f} GiB free for {role}{note}"
        if status is not CheckStatus.PASS:
            summary += ": a checkpoint save may fail with 'No space left on device'; free space"
        details = {"free_bytes": u.free, "total_bytes": u.total, "checked": str(real)}
        out.append(CheckResult("disk", status, summary, where(d), 0.0, details))
    return out


def check_shm(
    th: HealthThresholds, path: str = "/dev/shm", usage: Usage = shutil.disk_usage
) -> list[CheckResult]:
    try:
        u = usage(path)
    except OSError:
        return [CheckResult("shm", CheckStatus.SKIP, f"{path} does not exist here", path)]
    size, free = u.total / MIB, u.free / MIB
    details = {"total_bytes": u.total, "free_bytes": u.free}
    if size < th.shm_warn_mib or free < th.shm_warn_mib / 2:
        summary = (
            f"{path} is {size:.0f} MiB ({free:.0f} MiB free): DataLoader workers die with "
            "'bus error' when it fills; start the container with --shm-size=16g (or "
            "--ipc=host), or use num_workers=0"
        )
        return [CheckResult("shm", CheckStatus.WARN, summary, path, 0.0, details)]
    return [
        CheckResult("shm", CheckStatus.PASS, f"{path} is {size / 1024:.1f} GiB", path, 0.0, details)
    ]


def check_memory(th: HealthThresholds) -> list[CheckResult]:
    vm, sw = psutil.virtual_memory(), psutil.swap_memory()
    avail = vm.available / GIB
    details = {"available_bytes": vm.available, "total_bytes": vm.total, "swap_used_bytes": sw.used}
    summary = f"{avail:.1f} of {vm.total / GIB:.1f} GiB available"
    status = CheckStatus.PASS
    if avail < th.mem_fail_gib:
        status = CheckStatus.FAIL
        summary += ": the OOM killer will end the run; find what holds the memory (top, ps)"
    elif avail < th.mem_warn_gib:
        status = CheckStatus.WARN
        summary += ": little left for data loading workers"
    if sw.total and sw.percent >= th.swap_warn_pct:
        status = max(status, CheckStatus.WARN, key=_severity)
        summary += f"; swap {sw.percent:.0f}% used: the node is short of memory and will be slow"
    return [CheckResult("memory", status, summary, "RAM", 0.0, details)]


def _severity(s: CheckStatus) -> int:
    return [CheckStatus.SKIP, CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL].index(s)


def _unique(items: Sequence[tuple[Path, Any]]) -> list[tuple[Path, Any]]:
    seen: set[Path] = set()
    out = []
    for p, extra in items:
        key = p.expanduser().absolute()
        if key not in seen:
            seen.add(key)
            out.append((p, extra))
    return out
