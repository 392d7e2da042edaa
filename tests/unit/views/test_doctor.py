"""The doctor's verdict (views/doctor.py) says what was checked and what was not: a pass on a
machine where no GPU was checked must not read as "the GPUs are healthy"."""

from __future__ import annotations

import io

from rich.console import Console

from babysit.records import CheckResult, CheckStatus
from babysit.views.doctor import doctor_document, doctor_table, verdict_line

PASS, WARN, FAIL, SKIP = CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL, CheckStatus.SKIP
NO_NVML = "no NVIDIA driver answered (NVML Shared Library Not Found)"

CPU_ONLY = [
    CheckResult("gpu", SKIP, NO_NVML),
    CheckResult("disk", PASS, "77 GiB free for checkpoints", "/ckpt"),
    CheckResult("disk", PASS, "77 GiB free for babysit's home", "/home/.babysit"),
    CheckResult("shm", PASS, "/dev/shm is 23 GiB", "/dev/shm"),
    CheckResult("memory", PASS, "23 of 24 GiB available", "RAM"),
    CheckResult("matmul", PASS, "CPU: 512x512 matmul exact", "CPU"),
]
GPU_NODE = [
    CheckResult("gpu", PASS, "GPU 0: 41 C", "GPU 0"),
    CheckResult("gpu", PASS, "GPU 1: 40 C", "GPU 1"),
    CheckResult("disk", PASS, "plenty", "/ckpt"),
    CheckResult("matmul", PASS, "CPU: exact", "CPU"),
    CheckResult("matmul", PASS, "H100: exact", "GPU 0"),
    CheckResult("matmul", PASS, "H100: exact", "GPU 1"),
]


def _table(results: list[CheckResult]) -> str:
    buf = io.StringIO()
    doctor_table(results, Console(file=buf, width=400), host="node7")
    return buf.getvalue().strip().splitlines()[-1]


def test_a_pass_without_a_gpu_says_no_gpu_was_checked() -> None:
    line = _table(CPU_ONLY)
    assert "healthy" not in line
    assert line == (
        "pass: nothing wrong found; checked: disk, shm, memory, matmul (CPU only); "
        f"skipped: gpu ({NO_NVML}); no GPU was checked, so this says nothing about GPUs"
    )
    doc = doctor_document(CPU_ONLY)
    assert doc["status"] == "pass" and doc["gpus_checked"] == 0
    assert doc["verdict"] == line.removeprefix("pass: ")


def test_a_pass_with_every_gpu_checked_is_healthy() -> None:
    assert verdict_line(GPU_NODE) == (
        "healthy; checked: gpu (2 GPUs), disk, matmul (CPU and 2 GPUs)"
    )
    assert doctor_document(GPU_NODE)["gpus_checked"] == 2


def test_only_some_checks_asked_for_is_not_healthy_either() -> None:
    assert verdict_line(CPU_ONLY[1:2]) == (
        "nothing wrong found; checked: disk; no GPU was checked, so this says nothing about GPUs"
    )


def test_warnings_and_failures_still_say_what_was_not_checked() -> None:
    warned = [*CPU_ONLY, CheckResult("shm", WARN, "64 MiB", "/dev/shm")]
    assert verdict_line(warned).startswith(
        "usable, with warnings worth a look; checked: disk, shm, memory, matmul (CPU only); "
        "skipped: gpu"
    )
    failed = [*GPU_NODE, CheckResult("fs_latency", FAIL, "hung", "/nfs")]
    assert verdict_line(failed) == "do not trust this node with a run: fs_latency /nfs failed"
    assert verdict_line([CheckResult("gpu", SKIP, NO_NVML)]) == (
        f"nothing could be checked; skipped: gpu ({NO_NVML}); no GPU was checked, so this says "
        "nothing about GPUs"
    )
