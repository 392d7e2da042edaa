"""A training loss that jumped before a log ended without an error (triage.lossjump)."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.records import Category
from babysit.triage import triage_files
from babysit.triage.lossjump import jump_of, jumped

CURVES = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "tinygpt_curves.jsonl"


def _megatron(it: int, loss: float) -> str:
    return (
        f" iteration {it:>8}/  159576 | consumed samples: {it * 96:>12} | elapsed time per "
        f"iteration (ms): 18706.1 | learning rate: 6.000E-05 | lm loss: {loss:.6E} | loss "
        "scale: 4096.0 | grad norm: 0.412 |"
    )


def test_a_loss_that_jumps_from_a_steady_level_is_a_jump() -> None:
    lines = [_megatron(7000 + 10 * i, v) for i, v in enumerate([6.44, 6.41, 6.39, 11.42, 7.1])]
    j = jumped(lines)
    assert j is not None and j.after == 11.42 and 6.39 < j.before < 6.45
    assert "lm loss: 1.142000E+01" in j.line


def test_no_jump_in_a_falling_or_noisy_curve_or_in_losses_that_are_not_the_training_s() -> None:
    falling = [f"step {i} | loss: {10 / (1 + i):.4f}" for i in range(50)]
    assert jumped(falling) is None
    # an evaluation's, a validation's, a best one; a layer named loss2; a loss near zero
    others = [
        "step 10 | loss: 2.0",
        " validation loss at iteration 7000 | lm loss value: 7.174200E+00 |",
        "{'eval_loss': 5.1, 'epoch': 1.0}",
        "Ignoring source layer loss2/classifier",
        "best loss: 9.0",
        "step 11 | loss: 2.1",
    ]
    assert jumped(others) is None
    assert jumped(["step 1 | loss: 0.02", "step 2 | loss: 0.05"]) is None  # below the floor
    # per-step losses of a small-batch fine-tune wander by a fifth: one step half as high again
    # is within their noise, no spike
    sft = [1.0132, 0.9668, 0.8639, 0.8829, 1.0543, 0.9832, 1.5017]
    assert jumped([f"{{'loss': {v}, 'learning_rate': 0.0001, 'epoch': 0.95}}" for v in sft]) is None
    assert jumped(["step 1 | loss: -1.5", "step 2 | loss: 3.0"]) is None  # an RL loss below 0


def test_no_jump_in_real_healthy_curves_and_most_injected_spikes_found() -> None:
    # the tiny GPT's real curves (benchmarks/quality_vitals.py's labelled set): 300 steps each
    clean = spikes = found = 0
    for row in CURVES.read_text().splitlines():
        d = json.loads(row)
        pairs = zip(d["steps"], d["loss"], strict=True)
        lines = [f"step {s} | loss: {v}" for s, v in pairs if v is not None]
        j = jumped(lines)
        if d["spike_at"] is None and d["nan_at"] is None:
            clean += 1
            assert j is None, d["name"]
        elif d["spike_at"] is not None:
            spikes += 1
            found += j is not None
    assert clean >= 4 and found >= spikes // 2


def test_the_biggest_jump_among_a_run_s_logs() -> None:
    a = [f"step {i} | loss: 2.0" for i in range(5)] + ["step 5 | loss: 3.2"]
    b = [f"step {i} | loss: 2.0" for i in range(5)] + ["step 5 | loss: 9.0"]
    j = jump_of([a, ["no loss here"], b])
    assert j is not None and j.after == 9.0


def test_triage_says_numerical_only_where_the_log_holds_no_error(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    lines = [_megatron(31214 + i, v) for i, v in enumerate([2.24, 2.25, 2.23, 5.10, 3.49])]
    log.write_text("\n".join(lines) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.NUMERICAL and d.transient is None and d.confidence < 0.5
    assert d.suspect.kind == "numerics"
    assert "the training loss jumped from about 2.24 to 5.1 (x2.3)" in d.summary
    assert "Roll back" in d.action
    log.write_text(log.read_text() + "torch.OutOfMemoryError: CUDA out of memory.\n")
    assert triage_files([log]).diagnosis.category == Category.CUDA_OOM


def test_opennmt_s_cross_entropy_is_a_training_loss() -> None:
    lines = [
        f"[2018-11-23 16:42:05,019 INFO] Step {s}/100000; acc:  16.42; ppl: 375.91; xent: {x}; "
        "lr: 1.00000; 12811/18007 tok/s;     20 sec"
        for s, x in [(100, 5.95), (150, 5.93), (200, 5.94), (250, 5.93), (300, 17.28)]
    ]
    j = jumped(lines)
    assert j is not None and j.after == 17.28 and "Step 300/" in j.line


def test_a_tensorflow_estimator_s_cross_entropy_is_a_training_loss() -> None:
    # a line that names another metric's mean (`train_mean_iou`) still holds the training's loss
    lines = [
        f"INFO:tensorflow:cross_entropy = {x}, learning_rate = 0.0139, train_mean_iou = 0.0445, "
        "train_px_accuracy = 0.6036 (7.317 sec)"
        for x in [3.22, 3.19, 3.25, 3.21, 3936.86]
    ]
    j = jumped(lines)
    assert j is not None and j.after == 3936.86
    # a mean loss is still not the training's own
    assert jumped([f"mean loss = {x}" for x in [3.22, 3.19, 3.25, 3.21, 3936.86]]) is None


def test_detectron2_s_total_loss_and_chainer_s_main_loss_are_training_losses() -> None:
    lines = [
        f"iter: {i}  total_loss: {v}  loss_cls: 0.4  time: 0.51  lr: 0.02  max_mem: 7712M"
        for i, v in zip(range(1000, 1100, 20), [1.21, 1.19, 1.22, 1.20, 5.31], strict=True)
    ]
    j = jumped(lines)
    assert j is not None and j.after == 5.31 and not j.negative
    # ESPnet's report of its trainer (Chainer's keys), `validation/main/loss` not the training's
    chainer = ['    "main/loss": 58.973086261749266,', '    "main/loss": 59.60016016960144,']
    assert jumped([*chainer, '        "validation/main/loss": 5900.3,']) is None


def test_a_loss_near_zero_that_blew_up_a_thousandfold_left_its_curve() -> None:
    # audio-diffusion-pytorch's loss, from about 0.05 to 3.6e7
    losses = [0.0519, 0.0557, 0.0499, 0.0482, 1.4608, 35551447.3009]
    j = jumped([f"{1330 + i} Loss : {v}" for i, v in enumerate(losses)])
    assert j is not None and j.after == 35551447.3009
    # a loss near zero that a few hard batches multiply, even a hundredfold, is left alone
    assert jumped([f"step {i} | loss: {v}" for i, v in enumerate([0.002, 0.003, 0.25])]) is None
    assert jumped([f"step {i} | loss: {v}" for i, v in enumerate([1e-5, 2e-5, 0.1])]) is None


def test_a_line_naming_the_validation_s_loss_after_the_training_s_holds_a_training_loss() -> None:
    # Keras's epoch lines (tf-metal's MNIST run), nanoGPT's evaluation line
    keras = [
        f"938/938 [==============================] - 5s 5ms/step - loss: {v} - accuracy: 0.86 - "
        f"val_loss: {v + 1.5:.4f} - val_accuracy: 0.81"
        for v in [0.5007, 0.4871, 0.4790, 0.4911, 2.4296]
    ]
    j = jumped(keras)
    assert j is not None and j.after == 2.4296
    steps = [(0, 2.31), (250, 2.30), (500, 7.9)]
    nanogpt = [f"step {s}: train loss {v}, val loss 2.45" for s, v in steps]
    j = jumped(nanogpt)
    assert j is not None and j.after == 7.9
    # a validation's loss before the training's on its line is not read
    assert jumped([f"val_loss: 3.99 - loss: {v}" for v in [2.4, 2.4, 9.0]]) is None


def test_a_loss_that_went_negative_and_huge_left_its_curve_and_an_rl_loss_did_not() -> None:
    # ESPnet's CTC loss gone to -1e34 after a steady positive curve
    ctc = ['        "main/loss": 58.973086261749266,', '        "main/loss": 59.60016016960144,',
           '        "main/loss": -3.190146999736208e+34,']
    j = jumped(ctc)
    assert j is not None and j.negative and j.after == 3.190146999736208e34
    # LapIRN's NCC loss, below zero from the start, growing tenfold in size
    ncc = [f'step "{s}" -> training loss "{v}" - sim_NCC "{v}"' for s, v in
           [(869, "-10781668352.0000"), (1396, "-118240641024.0000")]]
    j = jumped(ncc)
    assert j is not None and j.negative and j.after == 118240641024.0
    # an RL loss that swings around zero; a loss below zero, only a few times the size of the
    # positive curve before it
    assert jumped(["loss: 0.8", "loss: 0.9", "loss: -2.5", "loss: 0.7"]) is None
    assert jumped(["loss: 2.5", "loss: 2.4", "loss: -40.0"]) is None


def test_a_loss_that_climbs_past_its_curve_or_rises_above_all_of_it_left_the_curve() -> None:
    # a divergence: four rises in a row, to a new high (BLOOM 104B's second run)
    climb = [_megatron(6900 + 10 * i, v) for i, v in enumerate([6.37, 6.60, 7.31, 9.12, 10.24])]
    j = jumped(climb)
    assert j is not None and j.climb == 4 and j.before == 6.37 and j.after == 10.24
    # a curve that came down, then went far past where it started
    above = [f"Step {50 * i}; acc: 10; xent: {v}" for i, v in enumerate([10.7, 8.1, 7.0, 17.3])]
    j = jumped(above)
    assert j is not None and j.after == 17.3 and j.climb == 0
    # a per-step curve climbing out of a dip, and on: no divergence
    dip = [2.45, 2.44, 2.63, 2.57, 2.01, 2.36, 2.55, 2.58, 2.68, 2.41]
    assert jumped([f"step {i} | loss: {v}" for i, v in enumerate(dip)]) is None


def test_triage_says_how_the_loss_left_its_curve(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    lines = [_megatron(6900 + 10 * i, v) for i, v in enumerate([6.37, 6.60, 7.31, 9.12, 10.24])]
    log.write_text("\n".join(lines) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.NUMERICAL and d.transient is None
    assert "climbed 4 logged steps in a row, from 6.37 to 10.24" in d.summary
    log.write_text('    "main/loss": 58.97,\n    "main/loss": 59.6,\n    "main/loss": -3.19e+34,\n')
    d = triage_files([log]).diagnosis
    assert d.category == Category.NUMERICAL
    assert "jumped from about 59.28 to -3.19e+34 (x5.4e+32 in size) before" in d.summary
