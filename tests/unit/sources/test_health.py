"""Health checks through their seams: a fake pynvml, fake disk usage, fake interpreters."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from babysit.records import CheckResult, CheckStatus
from babysit.sources import fsprobe, nvml
from babysit.sources.checkpoints import glob_directory
from babysit.sources.fsprobe import check_fs_latency
from babysit.sources.health import (
    HealthTargets,
    HealthThresholds,
    Job,
    check_disk,
    check_gpus,
    check_memory,
    check_shm,
    failure_summary,
    run_checks,
    run_jobs,
)
from babysit.sources.matmul import matmul_check
from babysit.views.doctor import doctor_document, doctor_table
from tests.unit.nvml_fake import Err, FakeNvml, gpu

TH = HealthThresholds()
MIB = 1 << 20
GIB = 1 << 30


def usage(total: int, free: int) -> Any:
    return lambda path: SimpleNamespace(total=total, used=total - free, free=free)


# -- gpu ------------------------------------------------------------------------------------


def test_healthy_gpus_pass_one_result_each() -> None:
    nv = FakeNvml([gpu(), gpu()])
    results = check_gpus(TH, module=nv)
    assert [r.target for r in results] == ["GPU 0", "GPU 1"]
    assert all(r.status is CheckStatus.PASS for r in results)
    assert "41 C (slows at 87 C)" in results[0].summary
    assert results[0].details["name"] == "NVIDIA H100 80GB HBM3"
    assert results[0].details["ecc_volatile"] == 0
    assert results[0].details["throttle_thermal"] is False
    assert nv.inits == 1 and nv.shutdowns == 1


@pytest.mark.parametrize(
    ("changes", "status", "words"),
    [
        ({"remapped": (0, 1, 1, 0)}, CheckStatus.FAIL, "row remap is pending: reset the GPU"),
        ({"remapped": (0, 1, 0, 1)}, CheckStatus.FAIL, "remap FAILED"),
        ({"retired_pending": 1}, CheckStatus.FAIL, "page retirement is pending"),
        ({"ecc_volatile": 2}, CheckStatus.FAIL, "2 uncorrected ECC error(s) since the driver"),
        ({"ecc_aggregate": 5}, CheckStatus.WARN, "5 uncorrected ECC error(s) over its life"),
        ({"temp": 84}, CheckStatus.WARN, "84 C (slows at 87 C): running hot"),
        ({"temp": 86, "slowdown": None}, CheckStatus.WARN, "86 C: running hot"),
        ({"reasons": 0x40}, CheckStatus.WARN, "throttled for temperature"),
        ({"reasons": 0x80}, CheckStatus.WARN, "power brake"),
        ({"reasons": 0x4}, CheckStatus.PASS, "41 C"),  # at the power cap: normal under load
    ],
)
def test_gpu_verdicts(changes: dict[str, Any], status: CheckStatus, words: str) -> None:
    (r,) = check_gpus(TH, module=FakeNvml([gpu(**changes)]))
    assert r.status is status, r.summary
    assert words in r.summary
    if status is CheckStatus.FAIL and "ECC" in words:
        assert "NVIDIA field diagnostic" in r.summary


def test_unsupported_calls_are_simply_not_reported() -> None:
    old = gpu(ecc_volatile=None, ecc_aggregate=None, remapped=None, retired_pending=None)
    (r,) = check_gpus(TH, module=FakeNvml([old]))
    assert r.status is CheckStatus.PASS
    assert not {"ecc_volatile", "remapped_pending", "retired_pending"} & set(r.details)
    assert "ECC" not in r.summary


def test_a_lost_gpu_fails_alone() -> None:
    nv = FakeNvml([gpu(), gpu(temp=Err(FakeNvml.NVML_ERROR_GPU_IS_LOST))])
    ok, lost = check_gpus(TH, module=nv)
    assert ok.status is CheckStatus.PASS
    assert lost.status is CheckStatus.FAIL and lost.target == "GPU 1"
    assert "NVML error" in lost.summary and "drain this node" in lost.summary


def test_older_nvml_falls_back_to_throttle_reasons() -> None:
    class Old(FakeNvml):
        nvmlDeviceGetCurrentClocksEventReasons = None  # type: ignore[assignment]

        def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: int) -> Any:
            return self._get(h, "reasons")

    (r,) = check_gpus(TH, module=Old([gpu(reasons=0x20)]))
    assert r.status is CheckStatus.WARN and "throttled for temperature" in r.summary


@pytest.mark.parametrize(
    ("nv", "words"),
    [
        (FakeNvml([gpu()], init_error=9), "no NVIDIA driver answered"),
        (FakeNvml([]), "sees no GPU"),
    ],
)
def test_no_driver_or_no_gpu_is_a_clean_skip(nv: FakeNvml, words: str) -> None:
    (r,) = check_gpus(TH, module=nv)
    assert r.status is CheckStatus.SKIP and words in r.summary
    if "no NVIDIA driver" not in words:  # (an init that failed opened nothing)
        assert nv.shutdowns == nv.inits  # every NVML session opened is closed again


def test_without_nvidia_ml_py_the_gpu_check_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(nvml.importlib, "import_module", missing)
    (r,) = check_gpus(TH)
    assert r.status is CheckStatus.SKIP and "pip install nvidia-ml-py" in r.summary


def test_real_pynvml_never_fails_for_want_of_a_gpu() -> None:
    pytest.importorskip("pynvml")
    results = check_gpus(TH)
    assert results and all(r.status is not CheckStatus.FAIL for r in results)


# -- shm, disk, memory ----------------------------------------------------------------------


def test_dockers_64mib_shm_warns_and_says_how_to_fix() -> None:
    (r,) = check_shm(TH, usage=usage(64 * MIB, 64 * MIB))
    assert r.status is CheckStatus.WARN
    assert "64 MiB" in r.summary and "--shm-size" in r.summary and "bus error" in r.summary
    (big,) = check_shm(TH, usage=usage(16 * GIB, 16 * GIB))
    assert big.status is CheckStatus.PASS


def test_missing_shm_skips(tmp_path: Path) -> None:
    (r,) = check_shm(TH, path=str(tmp_path / "nope"))
    assert r.status is CheckStatus.SKIP


def test_disk_thresholds_and_missing_dirs(tmp_path: Path) -> None:
    t = HealthTargets(checkpoint_dirs=(tmp_path / "run" / "ckpt",), home=tmp_path)
    low, home = check_disk(t, TH, usage=usage(100 * GIB, GIB // 2))
    assert low.status is CheckStatus.FAIL and "No space left" in low.summary
    assert f"not created yet: checked {tmp_path}" in low.summary
    assert low.target == str(tmp_path / "run" / "ckpt")
    assert "babysit's home" in home.summary
    (mid, _) = check_disk(t, TH, usage=usage(100 * GIB, 5 * GIB))
    assert mid.status is CheckStatus.WARN
    assert check_disk(HealthTargets(), TH)[0].status is CheckStatus.SKIP


def test_memory_check_reads_this_host() -> None:
    (r,) = check_memory(TH)
    assert r.status in (CheckStatus.PASS, CheckStatus.WARN) and "GiB available" in r.summary
    (r,) = check_memory(HealthThresholds(mem_fail_gib=1e9))
    assert r.status is CheckStatus.FAIL and "OOM killer" in r.summary


# -- fs_latency -----------------------------------------------------------------------------


def test_fs_latency_writes_syncs_reads_and_cleans_up(tmp_path: Path) -> None:
    r = check_fs_latency(tmp_path, TH.fs_warn_ms, TH.fs_fail_ms)
    assert r.status is CheckStatus.PASS, r.summary
    assert {"write_ms", "fsync_ms", "read_ms", "delete_ms", "total_ms"} <= set(r.details)
    assert list(tmp_path.iterdir()) == []


def test_fs_latency_full_disk_is_a_clear_failure_not_a_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fsprobe.os, "fsync", full)
    r = check_fs_latency(tmp_path, warn_ms=500, fail_ms=5000)
    assert r.status is CheckStatus.FAIL
    assert "No space left on device" in r.summary and "bug" not in r.summary
    assert not list(tmp_path.iterdir())  # the probe is cleaned up


def test_fs_latency_thresholds(tmp_path: Path) -> None:
    r = check_fs_latency(tmp_path, warn_ms=0.0, fail_ms=TH.fs_fail_ms)
    assert r.status is CheckStatus.WARN
    r = check_fs_latency(tmp_path, warn_ms=0.0, fail_ms=0.0)
    assert r.status is CheckStatus.FAIL and "slow or hung filesystem" in r.summary


def test_fs_latency_missing_dir_and_file_in_the_way(tmp_path: Path) -> None:
    r = check_fs_latency(tmp_path / "a" / "b", TH.fs_warn_ms, TH.fs_fail_ms)
    assert r.status is CheckStatus.PASS and "not created yet" in r.summary
    (tmp_path / "f").write_text("x")
    r = check_fs_latency(tmp_path / "f" / "ckpt", TH.fs_warn_ms, TH.fs_fail_ms)
    assert r.status is CheckStatus.FAIL and "is a file, not a directory" in r.summary


def test_read_only_data_dir_is_timed_by_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def refuse(path: Any, flags: int, mode: int = 0o777) -> int:
        if ".babysit-probe" in str(path):
            raise OSError(30, "Read-only file system")
        return real_open(path, flags, mode)

    monkeypatch.setattr(fsprobe.os, "open", refuse)
    data = check_fs_latency(tmp_path, TH.fs_warn_ms, TH.fs_fail_ms, read_only_ok=True)
    assert data.status is CheckStatus.PASS and "read-only" in data.summary
    ckpt = check_fs_latency(tmp_path, TH.fs_warn_ms, TH.fs_fail_ms)
    assert ckpt.status is CheckStatus.FAIL and "checkpoints cannot be saved" in ckpt.summary


# -- the runner -----------------------------------------------------------------------------


def test_a_hung_check_fails_at_the_budget_and_never_blocks() -> None:
    release = threading.Event()
    ok = CheckResult("memory", CheckStatus.PASS, "fine")

    def boom() -> list[CheckResult]:
        raise RuntimeError("oops")

    jobs = [
        Job("fs_latency", "/nfs", lambda: [ok] if release.wait(30) else []),
        Job("memory", "RAM", lambda: [ok]),
        Job("disk", "", boom),
    ]
    t0 = time.monotonic()
    hung, fine, broken = run_jobs(jobs, budget_s=0.3)
    release.set()
    assert time.monotonic() - t0 < 2.0
    assert hung.status is CheckStatus.FAIL and hung.target == "/nfs"
    assert "did not finish within 0.3s: slow or hung filesystem" in hung.summary
    assert fine.status is CheckStatus.PASS and fine.elapsed_s > 0
    assert broken.status is CheckStatus.FAIL and "RuntimeError: oops" in broken.summary
    line = failure_summary([hung, fine, broken])
    assert line.startswith("fs_latency /nfs: did not finish") and "; disk: the check" in line


def test_run_checks_selects_and_orders(tmp_path: Path) -> None:
    t = HealthTargets(checkpoint_dirs=(tmp_path, tmp_path), data_dirs=(tmp_path / "d",))
    results = run_checks(t, budget_s=5.0, only=["fs_latency", "memory", "shm"])
    assert [r.name for r in results] == ["shm", "fs_latency", "fs_latency", "memory"]
    assert run_checks(HealthTargets(), only=["fs_latency"])[0].status is CheckStatus.SKIP
    with pytest.raises(ValueError, match="unknown check"):
        run_checks(t, only=["gpus"])


# -- matmul through fake interpreters -------------------------------------------------------


def _shims(tmp_path: Path, *blocked: str) -> str:
    """A PYTHONPATH where `import <blocked>` fails, as on a machine without them."""
    for name in blocked:
        (tmp_path / f"{name}.py").write_text("raise ImportError('not here')\n")
    return str(tmp_path)


def test_matmul_with_numpy_passes_and_catches_corruption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("numpy")
    monkeypatch.setenv("PYTHONPATH", _shims(tmp_path, "torch"))
    (r,) = matmul_check(sys.executable, budget_s=20)
    assert r.status is CheckStatus.PASS and r.details["backend"] == "numpy", r.summary
    monkeypatch.setenv("BABYSIT_TEST_CORRUPT_MATMUL", "1")
    (r,) = matmul_check(sys.executable, budget_s=20)
    assert r.status is CheckStatus.FAIL and "computes wrong results: max error 1" in r.summary


def test_matmul_skips_without_torch_or_numpy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", _shims(tmp_path, "torch", "numpy"))
    (r,) = matmul_check(sys.executable, budget_s=20)
    assert r.status is CheckStatus.SKIP and "neither torch nor numpy" in r.summary


def _fake_python(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return str(exe)


def test_matmul_hung_or_crashed(tmp_path: Path) -> None:
    t0 = time.monotonic()
    hung = "echo 'babysit-matmul: gpus 1'; exec sleep 30"  # phases: tests/.../test_matmul.py
    (r,) = matmul_check(_fake_python(tmp_path, hung), budget_s=0.3)
    assert time.monotonic() - t0 < 3.0
    assert r.status is CheckStatus.FAIL and "did not finish within 0.3s" in r.summary
    (r,) = matmul_check(_fake_python(tmp_path, "exec sleep 30"), budget_s=0.3)
    assert r.status is CheckStatus.WARN and "importing torch (or numpy) took over" in r.summary
    (r,) = matmul_check(_fake_python(tmp_path, "echo 'CUDA error: ECC' >&2; exit 1"), 5)
    assert r.status is CheckStatus.FAIL and "crashed: CUDA error: ECC" in r.summary
    (r,) = matmul_check(str(tmp_path / "no-python"), 5)
    assert r.status is CheckStatus.SKIP and "cannot run" in r.summary


def test_matmul_reports_each_gpu(tmp_path: Path) -> None:
    doc = (
        '{"backend": "torch", "version": "2.5", "devices": ['
        '{"device": "cpu", "label": "CPU", "name": "CPU", "n": 512, "max_error": 0.0},'
        '{"device": "cuda:0", "label": "GPU 0", "name": "H100", "n": 4096, "max_error": 0.0},'
        '{"device": "cuda:1", "label": "GPU 1", "name": "H100", "n": 4096, "max_error": 3.0},'
        '{"device": "cuda:2", "label": "GPU 2", "error": "RuntimeError: CUDA error: ECC"},'
        '{"device": "cuda:3", "label": "GPU 3", "busy": "OutOfMemoryError: CUDA out of memory"}'
        "]}"
    )
    results = matmul_check(_fake_python(tmp_path, f"echo '{doc}'"), 5)
    assert [r.status for r in results] == [
        CheckStatus.PASS,
        CheckStatus.PASS,
        CheckStatus.FAIL,
        CheckStatus.FAIL,
        CheckStatus.WARN,  # a GPU full of someone's training is busy, not broken
    ]
    assert "GPU 1 computes wrong results: max error 3" in results[2].summary
    assert "GPU 2 failed the matmul test: RuntimeError" in results[3].summary
    assert "NVIDIA field diagnostic" in results[3].summary
    assert "GPU 3 has no memory free for the test" in results[4].summary


# -- the doctor's rendering and defaults ----------------------------------------------------


def test_table_and_document() -> None:
    results = [
        CheckResult("gpu", CheckStatus.SKIP, "no NVIDIA driver answered"),
        CheckResult("fs_latency", CheckStatus.FAIL, "slow [or] hung", "/nfs", 10.0, {"x": 1.5}),
        CheckResult("memory", CheckStatus.WARN, "little", "RAM", 0.01, {"v": float("inf")}),
    ]
    buf = io.StringIO()
    doctor_table(results, Console(file=buf, width=120), host="node7")
    out = buf.getvalue()
    assert "health of node7" in out and "slow [or] hung" in out
    assert "fail: do not trust this node with a run: fs_latency /nfs failed" in out
    doc = json.loads(json.dumps(doctor_document(results, "node7", 1.23456)))
    assert doc["status"] == "fail" and doc["host"] == "node7" and doc["elapsed_s"] == 1.235
    assert doc["counts"] == {"pass": 0, "warn": 1, "fail": 1, "skip": 1}
    assert doc["checks"][1] == {
        "name": "fs_latency",
        "status": "fail",
        "summary": "slow [or] hung",
        "target": "/nfs",
        "elapsed_s": 10.0,
        "details": {"x": 1.5},
    }
    assert doc["checks"][2]["details"] == {"v": "inf"}
    skips = doctor_document(results[:1])
    assert skips["status"] == "skip"


@pytest.mark.parametrize(
    ("pattern", "directory"),
    [
        ("out/ckpt_*.pt", "out"),
        ("out/step{step}/model.pt", "out"),
        ("/abs/run/checkpoint-*", "/abs/run"),
        ("ckpt.pt", "."),
        ("*.pt", "."),
    ],
)
def test_checkpoint_dir_of_a_glob(pattern: str, directory: str) -> None:
    assert glob_directory(pattern) == Path(directory)
