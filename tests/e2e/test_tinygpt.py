"""The real tiny GPT under babysit: crash, resume from its checkpoint, finish. Needs torch."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import TINYGPT, run_babysit, status_json

pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.torch]


def test_tinygpt_crash_resumes_from_checkpoint_and_step_continues(workdir: Path) -> None:
    home, out = workdir / "h", workdir / "out"
    res = run_babysit(
        "run", "--home", str(home), "--backoff", "0", "--checkpoint", "out/ckpt_*.pt", "--",
        sys.executable, str(TINYGPT), "--out-dir", str(out), "--max-steps", "60",
        "--ckpt-every", "20", "--eval-every", "0", "--crash-at", "45", "--kill-at", "52",
        cwd=workdir, timeout=240,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "DistBackendError: NCCL error" in res.stderr
    doc = status_json(home, "train", workdir)
    attempts = doc["attempts"]
    assert [a["outcome"] for a in attempts] == ["failed", "killed", "succeeded"]
    assert attempts[1]["resume_from"] == str(out / "ckpt_000040.pt")
    assert attempts[2]["resume_from"] == str(out / "ckpt_000040.pt")  # 60 not reached yet
    # The step counter continues from the checkpoint instead of starting over.
    assert attempts[0]["first_step"] == 0 and attempts[0]["last_step"] == 44
    assert attempts[1]["first_step"] == 40
    assert attempts[1]["last_step"] in (51, 52)  # "injecting SIGKILL at step 52" counts
    assert attempts[2]["first_step"] == 40 and attempts[2]["last_step"] == 59
    assert "resuming from" in (Path(attempts[1]["log_dir"]) / "stdout.log").read_text()
    assert attempts[1]["signal"] == 9


def test_demo_command(tmp_path: Path) -> None:
    res = run_babysit("demo", "--workdir", str(tmp_path / "demo"), "--steps", "200",
                      cwd=tmp_path, timeout=240)
    assert res.returncode == 0, res.stderr[-3000:]
    # crash, NaN (rolled back), SIGKILL, hang, success
    assert "The run finished after 5 attempts" in res.stderr, res.stderr[-3000:]
    assert "rolling back to the newest valid checkpoint" in res.stderr
    assert "hang at step" in res.stderr
    assert "babysit logbook tinygpt --home" in res.stderr
    assert "Failed to initialize NumPy" not in res.stdout + res.stderr  # the demo extra has it
    again = run_babysit("demo", "--workdir", str(tmp_path / "demo"), "--steps", "50",
                        cwd=tmp_path, timeout=240)  # reruns over its own directory
    assert again.returncode == 0, again.stderr[-3000:]
    other = tmp_path / "precious"
    other.mkdir()
    (other / "data.txt").write_text("keep me")
    refused = run_babysit("demo", "--workdir", str(other), cwd=tmp_path)
    assert refused.returncode == 2 and "not a babysit demo directory" in refused.stderr
    assert (other / "data.txt").read_text() == "keep me"


def test_a_skipped_window_trains_on_fresh_batches_and_its_data_faults_never_fire(
    tmp_path: Path,
) -> None:
    """BABYSIT_SKIP_STEPS skips the window's data, not its updates: every step of the window
    trains (a loss line each) on a batch drawn afresh, and the NaN batch inside it never fires."""
    import os
    import subprocess

    out = tmp_path / "out"
    env = {**os.environ, "BABYSIT_SKIP_STEPS": "5-9"}
    res = subprocess.run(
        [sys.executable, str(TINYGPT), "--out-dir", str(out), "--max-steps", "14",
         "--ckpt-every", "0", "--eval-every", "0", "--nan-at", "7", "--spike-data-at", "8",
         "--spike-data-steps", "2"],
        env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "skipping data for steps 5-9 (BABYSIT_SKIP_STEPS)" in res.stdout
    losses = {int(line.split()[1].rstrip(":")): float(line.split("loss ")[1].split(",")[0])
              for line in res.stdout.splitlines() if line.startswith("iter ")}  # fmt: skip
    assert sorted(losses) == list(range(14))  # every step trained, the window's too
    assert all(v == v and v < 7.0 for v in losses.values()), losses  # no NaN, no spike
    assert not (out / "faults_fired.json").exists()  # neither data fault fired
