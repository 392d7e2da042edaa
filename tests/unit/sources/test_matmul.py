"""The matmul self-test's timeouts (sources/matmul.py): which phase overran decides whose fault it
is. A slow import is the environment's (a WARN, never a ban), a hang on a GPU is the GPU's.
Fake interpreters are shell scripts that print the child's markers and then sleep."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from babysit.records import CheckStatus
from babysit.sources.health import HealthTargets, HealthThresholds, jobs_for, run_checks, run_jobs
from babysit.sources.matmul import MARK, MatmulCheck, matmul_check

SLEEP = "exec sleep 30"


def _fake_python(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "python"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return str(exe)


def _said(*markers: str) -> str:
    return "; ".join(f"echo '{MARK}{m}'" for m in markers)


def test_a_timeout_while_importing_is_a_slow_import_not_the_gpu(tmp_path: Path) -> None:
    t0 = time.monotonic()
    (r,) = matmul_check(_fake_python(tmp_path, SLEEP), budget_s=0.3)
    assert time.monotonic() - t0 < 5.0
    assert r.status is CheckStatus.WARN, r.summary
    assert "slow Python/torch import (network filesystem?)" in r.summary
    assert "GPU" not in r.summary and r.details["phase"] == "import"


def test_output_printed_while_importing_is_not_taken_for_the_marker(tmp_path: Path) -> None:
    # A sitecustomize, a banner: the word alone is no marker.
    (r,) = matmul_check(_fake_python(tmp_path, f"echo 'modules imported'; {SLEEP}"), 0.3)
    assert r.status is CheckStatus.WARN and r.details["phase"] == "import", r.summary


def test_a_slow_numpy_import_after_torch_failed_is_still_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "torch.py").write_text("raise ImportError('not here')\n")
    (shims / "numpy.py").write_text("import time\ntime.sleep(30)\n")
    monkeypatch.setenv("PYTHONPATH", str(shims))
    (r,) = matmul_check(sys.executable, budget_s=1.5)
    assert r.status is CheckStatus.WARN and r.details["phase"] == "import", r.summary


def test_a_timeout_during_the_matmul_on_gpus_is_the_gpus(tmp_path: Path) -> None:
    body = f"{_said('imported torch', 'gpus 8')}; {SLEEP}"
    (r,) = matmul_check(_fake_python(tmp_path, body), budget_s=0.3)
    assert r.status is CheckStatus.FAIL, r.summary
    assert "on 8 GPU(s) did not finish within 0.3s: a GPU or its driver may be hung" in r.summary


def test_a_timeout_initialising_cuda_is_the_driver(tmp_path: Path) -> None:
    (r,) = matmul_check(_fake_python(tmp_path, f"{_said('imported torch')}; {SLEEP}"), 0.3)
    assert r.status is CheckStatus.FAIL and r.details["phase"] == "cuda_init", r.summary
    assert "CUDA did not initialise" in r.summary


def test_a_timeout_computing_on_the_cpu_only_blames_no_gpu(tmp_path: Path) -> None:
    body = f"{_said('imported torch', 'gpus 0')}; {SLEEP}"
    (r,) = matmul_check(_fake_python(tmp_path, body), budget_s=0.3)
    assert r.status is CheckStatus.WARN, r.summary
    assert "no GPU here" in r.summary and "No GPU was tested" in r.summary


def test_the_doctors_deadline_before_the_checks_own_still_names_the_phase(
    tmp_path: Path,
) -> None:
    # The check's own timeout is inside the budget, but reaping a child stuck in the kernel
    # (an import from a hung NFS mount: D state) can outlast it: the doctor's deadline passes
    # first, and must not then blame a GPU.
    # Here the doctor's budget is made shorter than the check's own (2.5 s) to stand for that.
    t = HealthTargets(python=_fake_python(tmp_path, SLEEP))
    (r,) = run_jobs(jobs_for("matmul", t, HealthThresholds(), budget_s=3.0), budget_s=0.5)
    assert r.status is CheckStatus.WARN, r.summary
    assert "slow Python/torch import" in r.summary and r.elapsed_s == 0.5
    (tmp_path / "gpu").mkdir()
    body = f"{_said('imported torch', 'gpus 2')}; {SLEEP}"
    gpu = HealthTargets(python=_fake_python(tmp_path / "gpu", body))
    (r,) = run_jobs(jobs_for("matmul", gpu, HealthThresholds(), budget_s=3.0), budget_s=1.0)
    assert r.status is CheckStatus.FAIL and "on 2 GPU(s)" in r.summary, r.summary


def test_a_tiny_budget_does_not_blame_the_gpu_for_a_slow_import(tmp_path: Path) -> None:
    t = HealthTargets(python=_fake_python(tmp_path, SLEEP))
    (r,) = run_checks(t, budget_s=0.5, only=["matmul"])
    assert r.status is CheckStatus.WARN, r.summary


def test_the_phase_follows_the_markers_as_they_come(tmp_path: Path) -> None:
    check = MatmulCheck(_fake_python(tmp_path, "true"))
    assert check.phase == "importing"
    check._follow(bytearray(f"{MARK}imported torch\n{MARK}gp".encode()))
    assert check.phase == "initialising CUDA" and check.gpus is None
    check._follow(bytearray(f"{MARK}imported torch\n{MARK}gpus 4\n".encode()))
    assert check.phase == "computing" and check.gpus == 4
