"""Rollback past a NaN with the real tiny GPT: its batch at step X poisons the weights every
time it is trained on; babysit stops the attempt, resumes from the checkpoint before X, hands
the script BABYSIT_SKIP_STEPS (and BABYSIT_LR_SCALE), and the run finishes. Needs torch."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from babysit.store import Store
from tests.conftest import TINYGPT, run_babysit, status_json

pytestmark = pytest.mark.e2e  # the tiny GPT's test is marked torch; the fake trainer's need none

CONFIG = """
[run]
name = "tg"
[restart]
backoff_s = 0
[checkpoint]
glob = "out/ckpt_*.pt"
[rollback]
skip_before = 3
skip_after = 4
lr_scale = 0.5
"""


def _run(workdir: Path, nan_at: int, steps: int = 70) -> tuple[int, str]:
    (workdir / "babysit.toml").write_text(CONFIG)
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--",
        sys.executable, str(TINYGPT), "--out-dir", str(workdir / "out"), "--max-steps",
        str(steps), "--ckpt-every", "20", "--eval-every", "0", "--nan-at", str(nan_at),
        cwd=workdir, timeout=240,
    )  # fmt: skip
    return res.returncode, res.stderr


@pytest.mark.torch
def test_nan_rolls_back_before_it_skips_its_data_and_finishes(workdir: Path) -> None:
    pytest.importorskip("torch")
    code, err = _run(workdir, nan_at=45)
    assert code == 0, err[-3000:]
    assert "rolling back to the newest valid checkpoint at or before step 44" in err
    doc = status_json(workdir / "h", "tg", workdir)
    first, second = doc["attempts"]
    assert first["outcome"] == "killed" and first["cause"] == "numerical"
    assert first["last_step"] >= 45  # it printed the NaN
    assert second["outcome"] == "succeeded"
    assert second["resume_from"] == str(workdir / "out" / "ckpt_000040.pt")
    assert second["skip_steps"] == [[42, 49]] and first["anomaly_step"] == 45
    out = (Path(second["log_dir"]) / "stdout.log").read_text()
    assert "skipping data for steps 42-49 (BABYSIT_SKIP_STEPS)" in out
    assert "scaling lr by 0.5 (BABYSIT_LR_SCALE)" in out
    assert "loss nan" not in out
    with Store.open(workdir / "h", create=False) as store:
        rows = store.attempts("tg")
        events = [e["kind"] for e in store.events("tg")]
    assert rows[0]["anomaly_step"] == 45
    assert rows[1]["skip_steps"] == [(42, 49)] and rows[1]["lr_scale"] == 0.5
    assert "rollback" in events
    final = [float(line.split("loss ")[1].split(",")[0]) for line in out.splitlines()
             if line.startswith("iter ")]
    assert final and all(math.isfinite(v) for v in final)


NAN_CONFIG = """
[run]
name = "nt"
[restart]
backoff_s = 0
[checkpoint]
glob = "out/ckpt_*.pt"
settle_s = 0
[rollback]
skip_before = 2
skip_after = 3
"""


def test_a_nan_that_comes_back_at_the_same_place_widens_the_skip_then_pages(
    workdir: Path,
) -> None:
    from tests.conftest import fixture

    (workdir / "babysit.toml").write_text(NAN_CONFIG)
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--", sys.executable,
        fixture("nan_trainer.py"), str(workdir / "out"), "--ignore-skip",
        cwd=workdir, timeout=60,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr[-3000:]
    env2 = (workdir / "out" / "env-2.txt").read_text()
    env3 = (workdir / "out" / "env-3.txt").read_text()
    assert "BABYSIT_SKIP_STEPS=28-33\n" in env2
    assert "BABYSIT_SKIP_STEPS=26-36\n" in env3  # twice as wide the second time
    assert f"BABYSIT_RESUME_FROM={workdir / 'out' / 'ckpt_000020.pt'}" in env2
    assert "anomaly number 3 at the same place" in res.stderr
    assert not (workdir / "out" / "env-4.txt").exists()


def test_a_loss_that_does_not_settle_is_rolled_back_past(workdir: Path) -> None:
    from tests.conftest import fixture

    (workdir / "babysit.toml").write_text(NAN_CONFIG)
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--", sys.executable,
        fixture("nan_trainer.py"), str(workdir / "out"), "--steps", "120", "--nan-at", "-1",
        "--diverge-at", "70",
        cwd=workdir, timeout=60,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "loss did not settle after its spike at step 70" in res.stderr
    env2 = (workdir / "out" / "env-2.txt").read_text()
    assert "BABYSIT_SKIP_STEPS=68-73\n" in env2
    # ckpt_000070 may hold step 70's update (1-based counters): the one before is taken
    assert f"BABYSIT_RESUME_FROM={workdir / 'out' / 'ckpt_000060.pt'}" in env2
    doc = status_json(workdir / "h", "nt", workdir)
    assert [a["cause"] for a in doc["attempts"]] == ["loss_spike", None]
    assert doc["attempts"][0]["anomaly_step"] == 70


@pytest.mark.parametrize("fault", ["--nan-at", "--hang-at"])
def test_a_script_that_exits_0_on_sigterm_is_still_killed_not_finished(
    workdir: Path, fault: str
) -> None:
    """Many trainers save and exit 0 on SIGTERM: when babysit ended the attempt (a NaN, a
    hang), that is never a success nor an outside stop."""
    from tests.conftest import fixture

    # A floor and a start-up allowance well above what a loaded machine may pause this 10 ms-a-
    # step trainer for (a false hang would end an attempt that should finish); the injected
    # hang never ends, so they cost only the wait.
    hang = "[hang]\nfloor_s = 5\nstartup_s = 10\nkill_after_s = 0\n"
    (workdir / "babysit.toml").write_text(NAN_CONFIG + hang)
    args = ["--nan-at", "30"] if fault == "--nan-at" else ["--nan-at", "-1", "--hang-at", "30"]
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--", sys.executable,
        fixture("nan_trainer.py"), str(workdir / "out"), "--polite", *args,
        cwd=workdir, timeout=60,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    doc = status_json(workdir / "h", "nt", workdir)
    first, second = doc["attempts"]
    assert first["outcome"] == "killed" and first["exit_code"] == 0
    assert first["cause"] == ("numerical" if fault == "--nan-at" else "hang")
    assert second["outcome"] == "succeeded" and second["last_step"] == 59


def test_checkpoints_without_a_step_cannot_be_rolled_back_to_so_it_pages(workdir: Path) -> None:
    """nanoGPT's single `ckpt.pt`: babysit cannot tell whether it is from before the NaN, and
    does not throw the run back to step 0 on a guess."""
    from tests.conftest import fixture

    (workdir / "babysit.toml").write_text(NAN_CONFIG.replace("ckpt_*.pt", "ckpt.pt"))
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--", sys.executable,
        fixture("nan_trainer.py"), str(workdir / "out"), "--ckpt-name", "ckpt.pt",
        cwd=workdir, timeout=60,
    )  # fmt: skip
    assert res.returncode == 3, res.stderr[-3000:]
    assert "have no step in their names" in res.stderr
    assert not (workdir / "out" / "env-2.txt").exists()
