"""HF Trainer and Lightning, babysat as they print, end to end: a NaN at step K is rolled back
past, from the step their progress bars give, through their own resume flags
(`--resume_from_checkpoint {checkpoint}`, Lightning's `ckpt_path`). Tiny models built from
configs, synthetic data, nothing downloaded. Needs torch, transformers and lightning."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_babysit, status_json

pytestmark = [pytest.mark.e2e, pytest.mark.torch]

HF_TRAIN = REPO / "examples" / "hf_trainer" / "train.py"
LIGHTNING_TRAIN = REPO / "examples" / "lightning" / "train.py"

CONFIG = """
[run]
name = "{name}"
[restart]
backoff_s = 0
[checkpoint]
glob = "{glob}"
settle_s = 0
[rollback]
skip_before = 2
skip_after = 3
"""


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "WANDB_DISABLED": "true",
        "WANDB_MODE": "disabled",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }.items():
        monkeypatch.setenv(key, value)


def _attempts(workdir: Path, name: str) -> list[dict[str, object]]:
    doc = status_json(workdir / "h", name, workdir)
    return list(doc["attempts"])


def test_hf_trainer_nan_is_rolled_back_past_from_its_progress_bar(workdir: Path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    (workdir / "babysit.toml").write_text(CONFIG.format(name="hf", glob="out/checkpoint-*"))
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q",
        "--resume-args", "--resume_from_checkpoint {checkpoint}", "--",
        sys.executable, str(HF_TRAIN), "--output-dir", "out", "--max-steps", "40",
        "--save-steps", "10", "--nan-at", "25",
        cwd=workdir, timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "no step counter was printed" not in res.stderr
    assert "loss is nan at step 25" in res.stderr
    first, second = _attempts(workdir, "hf")
    assert first["outcome"] == "killed" and first["cause"] == "numerical"
    assert first["anomaly_step"] == 25
    assert second["outcome"] == "succeeded" and second["last_step"] == 40
    assert second["resume_from"] == str(workdir / "out" / "checkpoint-20")
    out = (Path(str(second["log_dir"])) / "stdout.log").read_text()
    assert "'loss': 'nan'" not in out and "'loss': nan" not in out
    assert (workdir / "out" / "checkpoint-40" / "trainer_state.json").exists()


def test_lightning_nan_is_rolled_back_past_from_its_progress_bar(workdir: Path) -> None:
    pytest.importorskip("lightning")
    (workdir / "babysit.toml").write_text(CONFIG.format(name="lt", glob="out/step=*.ckpt"))
    res = run_babysit(
        "run", "--home", str(workdir / "h"), "-q", "--resume-args", "--ckpt-path {checkpoint}",
        "--", sys.executable, str(LIGHTNING_TRAIN), "--out-dir", "out", "--max-steps", "60",
        "--nan-at", "45",
        cwd=workdir, timeout=180,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    assert "loss is nan at step 45" in res.stderr  # epoch 1, batch 5 of 40 a epoch
    first, second = _attempts(workdir, "lt")
    assert first["outcome"] == "killed" and first["cause"] == "numerical"
    assert first["anomaly_step"] == 45
    assert second["resume_from"] == str(workdir / "out" / "step=40.ckpt")
    assert second["outcome"] == "succeeded" and second["last_step"] == 60
    out = (Path(str(second["log_dir"])) / "stdout.log").read_text()
    assert "nan.0" not in out


def _watch(workdir: Path, *logs: Path) -> dict[str, object]:
    res = run_babysit("watch", "--json", *map(str, logs), cwd=workdir, timeout=60)
    assert res.returncode == 0, res.stderr[-3000:]
    return dict(json.loads(res.stdout))


def test_watch_reads_the_steps_of_both_trainers_bars(workdir: Path) -> None:
    """`babysit watch` on logs the trainers wrote (stdout and stderr apart, and merged)."""
    pytest.importorskip("transformers")
    pytest.importorskip("lightning")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    import subprocess

    def train(script: Path, *args: str, merged: bool) -> list[Path]:
        out, err = workdir / f"{script.parent.name}.out", workdir / f"{script.parent.name}.err"
        with out.open("wb") as fo, err.open("wb") as fe:
            subprocess.run(
                [sys.executable, str(script), *args], cwd=workdir, env=env, stdout=fo,
                stderr=subprocess.STDOUT if merged else fe, timeout=120, check=True,
            )  # fmt: skip
        return [out] if merged else [out, err]

    hf = train(HF_TRAIN, "--output-dir", "hf", "--max-steps", "30", "--nan-at", "20", merged=False)
    lt = train(LIGHTNING_TRAIN, "--out-dir", "lt", "--max-steps", "50", merged=True)
    report = _watch(workdir, *hf)
    progress = report["progress"]
    assert isinstance(progress, dict) and (progress["first_step"], progress["last_step"]) == (1, 30)
    incidents = report["incidents"]
    assert isinstance(incidents, list)
    nan = [i for i in incidents if i["kind"] == "nonfinite" and i["metric"] == "loss"]
    assert [i["step"] for i in nan] == [20]
    report = _watch(workdir, *lt)
    progress = report["progress"]
    assert isinstance(progress, dict) and (progress["first_step"], progress["last_step"]) == (1, 50)
