"""`babysit run --preflight`: the doctor's checks before each attempt, a node that fails them
banned instead of trusted, and the node telemetry sampled during the run. The failing device is
simulated with BABYSIT_TEST_CORRUPT_MATMUL=1 (the matmul self-test perturbs one result)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from babysit.store import Store
from tests.conftest import babysit_argv, fixture

pytestmark = [pytest.mark.e2e, pytest.mark.torch]
pytest.importorskip("torch")


def run(workdir: Path, *extra: str, corrupt: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BABYSIT_")}
    if corrupt:
        env["BABYSIT_TEST_CORRUPT_MATMUL"] = "1"
    return subprocess.run(
        babysit_argv("run", "--home", str(workdir / "h"), "--name", "pf", "--preflight",
                     "--backoff", "0", *extra, "--", sys.executable, fixture("flaky.py"),
                     "--steps", "3"),
        cwd=workdir, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_a_healthy_node_passes_and_its_telemetry_is_recorded(workdir: Path) -> None:
    res = run(workdir)
    assert res.returncode == 0, res.stderr[-3000:]
    host = os.uname().nodename
    assert f"preflight of {host} passed" in res.stderr
    with Store.open(workdir / "h", create=False) as store:
        events = [e for e in store.events("pf") if e["kind"] == "preflight"]
        health = [e["kind"] for e in store.node_events(host)]
        samples = store.metrics("pf")
    assert events and events[0]["data"]["passed"] is True
    names = {c["name"] for c in events[0]["data"]["checks"]}
    assert {"disk", "fs_latency", "memory", "matmul"} <= names
    assert health == ["health_pass"]
    assert any("host/cpu_pct" in s["vals"] for s in samples)  # the telemetry source


def test_a_node_that_computes_wrong_results_is_banned_not_trusted(workdir: Path) -> None:
    res = run(workdir, corrupt=True)
    host = os.uname().nodename
    assert res.returncode == 4, res.stderr[-3000:]
    assert f"preflight of {host} FAILED" in res.stderr and "matmul" in res.stderr
    assert f"this node ({host}) is banned" in res.stderr
    assert "babysit nodes unban" in res.stderr
    listed = subprocess.run(
        babysit_argv("nodes", "list", "--json", "--home", str(workdir / "h")),
        cwd=workdir, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    (node,) = json.loads(listed.stdout)["nodes"]
    assert node["host"] == host and node["state"] == "banned"
    assert node["ban"]["by"] == "preflight" and "matmul" in node["ban"]["reason"]
    with Store.open(workdir / "h", create=False) as store:
        assert store.attempts("pf") == []  # nothing ran on the sick node
