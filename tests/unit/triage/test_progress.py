"""The scanner notes the first training step of a log (to tell a set-up error from one hours
into training)."""

from __future__ import annotations

import io

import pytest

from babysit.triage.blocks import first_progress
from babysit.triage.scan import CHUNK_BYTES, scan


def _first(text: str) -> int:
    stats = scan(io.BytesIO(text.encode()), lambda n, t: False)
    return stats.first_progress


@pytest.mark.parametrize(
    "line",
    [
        "[titan] 2026-11-30 01:02:03,338 - root - INFO - step: 10  loss:  9.4321  memory: 9GiB",
        "{'loss': 2.1234, 'grad_norm': 1.5, 'learning_rate': 4.9e-05, 'epoch': 0.01}",
        "Epoch 0:  12%|#2   | 100/800 [00:10<01:10, 9.8it/s, train_loss=2.30, v_num=0]",
        " iteration      100/  500000 | consumed samples:  51200 | lm loss: 2.312E+00 |",
        "[Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]",
        "| epoch 001:    100 / 3000 loss 9.213, nll_loss 9.1, ppl 551.2",
        "Epoch 1/10 - loss: nan - accuracy: 0.1",
    ],
)
def test_a_training_step_is_progress(line: str) -> None:
    assert first_progress(line.lower().encode()) >= 0
    assert _first(f"starting\n{line}\nmore\n") == 2


@pytest.mark.parametrize(
    "line",
    [
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "  loss_scale: 65536   loss_type: cross_entropy",
        "Loading checkpoint shards: 100%|##########| 4/4 [00:02<00:00,  1.9it/s]",
        "loss: cross_entropy",
        "torch.distributed.DistNetworkError: ... (errno: 98 - Address already in use).",
    ],
)
def test_other_lines_are_not_progress(line: str) -> None:
    assert first_progress(line.lower().encode()) == -1
    assert _first(f"{line}\n") == 0


def test_the_first_step_is_found_past_the_first_chunk() -> None:
    filler = ("x" * 99 + "\n") * (CHUNK_BYTES // 100 * 2)
    n = filler.count("\n")
    assert _first(filler + "step 1 loss: 2.5\n") == n + 1
