"""Every benchmark as a smoke test: `python benchmarks/X.py --quick` exits 0.

--quick runs the smallest inputs, a run or two, and still checks the benchmark's verdicts and
exit codes (a right suspect, a right triage, babysit's exit code...), never a figure against its
target: nothing here depends on the machine's speed. Each runs in its own session with TMPDIR
under the test's tmp_path, so that what it leaves (temporary files, a stuck process) is cleaned
up even when it hangs.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
NEEDS_TORCH = {"overhead.py"}  # trains the tiny GPT
TIMEOUT_S = 120  # a stuck benchmark, not a slow one: each takes seconds
# Those that train real ranks through real faults and wall-clock caps take minutes, by design.
TIMEOUT_S_FOR = {"chaos.py": 600}

pytestmark = pytest.mark.e2e

SCRIPTS = sorted(
    p.name for p in BENCHMARKS.glob("*.py") if not p.name.startswith("_") and p.name != "run_all.py"
)


def run(
    workdir: Path, *argv: str, timeout_s: float = TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Run a benchmark script; on a timeout, kill its whole session and fail saying so."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BABYSIT_")}
    env["TMPDIR"] = str(workdir)
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"{' '.join(argv)} did not finish in {timeout_s} s\n"
            f"--- stdout (end) ---\n{out[-3000:]}\n--- stderr (end) ---\n{err[-5000:]}"
        )
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_ok(res: subprocess.CompletedProcess[str], what: str) -> None:
    assert res.returncode == 0, (
        f"{what} exited {res.returncode}\n"
        f"--- stderr (end) ---\n{res.stderr[-5000:]}\n--- stdout (end) ---\n{res.stdout[-3000:]}"
    )


def params() -> list[object]:
    out: list[object] = []
    for script in SCRIPTS:
        marks = [pytest.mark.torch] if script in NEEDS_TORCH else []
        if script in TIMEOUT_S_FOR:
            # pytest's own limit (300 s in pyproject.toml) must not end it before its cap: chaos
            # takes about 290 s of it on a slow day of a 2-core machine
            marks.append(pytest.mark.timeout(TIMEOUT_S_FOR[script] + 60))
        out.append(pytest.param(script, marks=marks, id=script.removesuffix(".py")))
    return out


@pytest.mark.parametrize("script", params())
def test_quick(script: str, workdir: Path) -> None:
    if script in NEEDS_TORCH:
        pytest.importorskip("torch")
    timeout_s = TIMEOUT_S_FOR.get(script, TIMEOUT_S)
    res = run(workdir, str(BENCHMARKS / script), "--quick", timeout_s=timeout_s)
    assert_ok(res, f"python benchmarks/{script} --quick")


def test_run_all_lists_every_benchmark() -> None:
    spec = importlib.util.spec_from_file_location("run_all", BENCHMARKS / "run_all.py")
    assert spec is not None and spec.loader is not None
    run_all = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_all)  # defines BENCHES; runs nothing
    listed = sorted(script for script, _ in run_all.BENCHES)
    assert listed == SCRIPTS, "benchmarks/run_all.py's BENCHES and benchmarks/*.py differ"


def test_run_all_passes_quick_on(workdir: Path) -> None:
    res = run(workdir, str(BENCHMARKS / "run_all.py"), "--quick", "relaunch_latency.py")
    assert_ok(res, "python benchmarks/run_all.py --quick relaunch_latency.py")
    assert "== relaunch_latency.py" in res.stdout
    assert "== overhead.py" not in res.stdout, "run_all.py ran a benchmark it was not asked for"
