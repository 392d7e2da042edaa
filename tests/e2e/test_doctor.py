"""`babysit doctor` as a real process: this machine's checks, a device that computes wrong
results, defaults from babysit.toml, the table, bad flags."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import babysit_argv

pytestmark = pytest.mark.e2e

CHECK_KEYS = {"name", "status", "summary", "target", "elapsed_s", "details"}
HAS_GPU = Path("/dev/nvidia0").exists()


def doctor(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        babysit_argv("doctor", *args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def by_name(doc: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [c for c in doc["checks"] if c["name"] == name]


def test_doctor_json_on_this_machine(workdir: Path) -> None:
    (workdir / "data").mkdir()
    res = doctor("--json", "--checkpoint-dir", "ckpt", "--data-dir", "data", cwd=workdir)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert set(doc) == {
        "status", "verdict", "gpus_checked", "host", "elapsed_s", "counts", "checks"
    }
    assert doc["status"] in ("pass", "warn") and doc["counts"]["fail"] == 0
    assert all(set(c) == CHECK_KEYS for c in doc["checks"])
    # (its time against the 10 s target: benchmarks/preflight.py)
    gpus = by_name(doc, "gpu")
    if not HAS_GPU:
        assert [g["status"] for g in gpus] == ["skip"], gpus
        # a pass without a GPU says so, and does not call the node healthy
        assert doc["gpus_checked"] == 0 and "no GPU was checked" in doc["verdict"]
        assert not doc["verdict"].startswith("healthy")
    fs = by_name(doc, "fs_latency")
    assert {c["target"] for c in fs} == {str(workdir / "ckpt"), str(workdir / "data")}
    assert all(c["status"] == "pass" for c in fs), fs
    assert "not created yet" in next(c for c in fs if c["target"].endswith("ckpt"))["summary"]
    matmul = by_name(doc, "matmul")
    if importlib.util.find_spec("torch") is not None:
        assert [m["status"] for m in matmul] == ["pass"] * len(matmul), matmul
        assert matmul[0]["details"]["backend"] == "torch"
    assert {c["name"] for c in doc["checks"]} == {
        "gpu",
        "disk",
        "shm",
        "fs_latency",
        "memory",
        "matmul",
    }


def test_a_device_computing_wrong_results_fails_the_doctor(workdir: Path) -> None:
    if importlib.util.find_spec("torch") is None and importlib.util.find_spec("numpy") is None:
        pytest.skip("neither torch nor numpy: no matmul test to corrupt")
    res = doctor(
        "--json", "--only", "matmul", cwd=workdir, env={"BABYSIT_TEST_CORRUPT_MATMUL": "1"}
    )
    assert res.returncode == 6, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert doc["status"] == "fail"
    bad = [c for c in by_name(doc, "matmul") if c["status"] == "fail"]
    assert len(bad) == 1 and "computes wrong results: max error 1" in bad[0]["summary"]


def test_defaults_come_from_babysit_toml(workdir: Path) -> None:
    (workdir / "babysit.toml").write_text(
        '[run]\nhome = "state"\n[checkpoint]\nglob = "out/run1/ckpt_*.pt"\n'
    )
    res = doctor("--json", "--only", "disk", "--only", "fs_latency", cwd=workdir)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    disk = {c["target"]: c for c in by_name(doc, "disk")}
    assert set(disk) == {str(workdir / "out" / "run1"), str(workdir / "state")}
    assert "babysit's home" in disk[str(workdir / "state")]["summary"]
    assert [c["target"] for c in by_name(doc, "fs_latency")] == [str(workdir / "out" / "run1")]


def test_the_table_and_bad_flags(workdir: Path) -> None:
    res = doctor("--only", "memory", "--only", "shm", cwd=workdir)
    assert res.returncode == 0, res.stderr
    assert "memory" in res.stdout and "/dev/shm" in res.stdout
    # --only memory and shm: no GPU was checked, so the verdict may not say "healthy"
    assert "nothing wrong found" in res.stdout or "usable, with warnings" in res.stdout
    assert "no GPU was checked" in res.stdout
    res = doctor("--budget", "0", cwd=workdir)
    assert res.returncode == 2 and "--budget must be > 0 seconds" in res.stderr
    res = doctor("--only", "gpus", cwd=workdir)
    assert res.returncode == 2 and "gpus" in res.stderr
