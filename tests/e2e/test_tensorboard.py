"""TensorBoard event files as a metrics source (the optional extra)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from babysit.sources.tensorboard import metric_name
from tests.conftest import fixture, start_babysit, status_json, wait_for

pytest.importorskip("tensorboard")
pytest.importorskip("torch")
pytestmark = [pytest.mark.e2e, pytest.mark.torch]


def test_metric_names_from_tags() -> None:
    assert metric_name("train/loss") == "loss"
    assert metric_name("Train/learning_rate") == "lr"
    assert metric_name("eval/loss") == "val_loss"
    assert metric_name("charts/episodic_return") == "charts/episodic_return"


def test_tensorboard_scalars_are_vital_signs(workdir: Path) -> None:
    home, done = workdir / "h", workdir / "seen"
    proc = start_babysit("run", "--home", str(home), "--name", "tb", "--tensorboard", "tb", "--",
                         sys.executable, fixture("tb_trainer.py"), str(workdir / "tb"),
                         str(done), cwd=workdir, stderr_path=workdir / "b.err")

    def nan_seen() -> bool:
        if not (home / "runs" / "tb" / "attempt-0001").exists():
            return False
        doc = status_json(home, "tb", workdir)
        return any(i["kind"] == "nonfinite" and i["step"] == 30 for i in doc["incidents"])

    # A deadline for a broken run only (on a slow machine, torch and tensorboard imports alone
    # take tens of seconds).
    wait_for(nan_seen, timeout=180, what="the NaN in the event file to become an incident")
    done.write_text("")
    assert proc.wait(timeout=60) == 0
