"""Values gone NaN as a log ends without an error (triage.nanend)."""

from __future__ import annotations

import json
from pathlib import Path

from babysit.records import Category
from babysit.triage import triage_files
from babysit.triage.nanend import nan_end, nan_end_of

CURVES = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "tinygpt_curves.jsonl"


def test_values_at_nan_in_the_last_lines_end_the_log_so() -> None:
    # (real shapes: a column of steps, a CSV-like logger line, a table row, a bare value)
    lines = [
        "76980 2.3419",
        "76990 nan",
        "INFO:PointNetLK-Revisited, 2022-03-11 14:21:24,647, epoch, 0199, nan, nan, nan, nan",
        "| KL        | nan      |",  # (no digit: a table's row is counted only with one)
        "| steps     | 1.2e+05  |",
        "40000 40% (1m 13s) nan Assaf / Russian ✗ (Arabic)",
    ]
    n = nan_end(lines)
    assert n is not None and n.count == 3 and n.line.startswith("40000 40%")


def test_one_nan_or_words_that_only_hold_it_are_no_nan_end() -> None:
    # a step the loss scaler skipped, then finite losses again
    assert nan_end(["step 1 | loss: nan", "step 2 | loss: 2.1", "step 3 | loss: 2.0"]) is None
    words = [
        "iteration 10/100 | lm loss: 2.1 | number of skipped iterations: 0 | number of nan "
        "iterations: 0 |",
        " rate: 4.475E-05 | lm loss: 2.117073E+00 | grad norm: 0.150 | number of nan",  # a wrap
        "step 12 | model: nanoGPT-124M | loss: 2.2",
        "step 13 | x = torch.nan_to_num(x, 0.0)",
        "step 14 | fill value np.nan for 3 columns",
        # a path's or a host's part, a key named so (a counter of NaNs, at zero)
        "[/home/nan/proj/train.py:45] step 3 loss 2.1",
        "nan-gpu01: step 4 | loss 2.0",
        "step 5 | nan: 0 | NaN/Inf: 0",
        "loss: nan",  # no digit: a line that is not a step's
        "loss: nan",
        "loss: nan",
    ]
    assert nan_end(words) is None
    # NaN only earlier than the last lines read
    early = ["step 1 | loss: nan"] * 5 + [f"step {i} | loss: 2.0" for i in range(2, 40)]
    assert nan_end(early) is None
    # a run that came back: the same metrics line finite after the NaNs (not another line)
    back = ["10 nan", "11 nan", "12 nan", "13 2.3000"]
    assert nan_end(back) is None
    n = nan_end(["10 nan", "11 nan", "12 nan", "2024-01-01 12:00:00 saving checkpoint"])
    assert n is not None and n.line == "12 nan"


def test_one_nan_counts_when_it_is_the_last_thing_the_run_printed() -> None:
    # (a real shape: Keras' progress bar with a metric at NaN)
    bar = " 115/6740 ━━━━━━━━━━━━━━━━━━━━ 2:01:30 1s/step - iou: nan - loss: 0.0234"
    last = ["Epoch 1/20", bar, ""]
    n = nan_end(last)
    assert n is not None and n.count == 1 and "iou: nan" in n.line
    # one NaN with a line after it, or one without a digit, is still none
    assert nan_end(["step 7 | loss: nan", "2024-01-01 12:00:00 saving checkpoint"]) is None
    assert nan_end(["step 6 | loss: 2.0", "loss: nan"]) is None


def test_real_healthy_curves_never_end_at_nan_and_the_curves_that_went_nan_do() -> None:
    # the tiny GPT's real curves (benchmarks/quality_vitals.py's labelled set): the runs that
    # went NaN print it from then on
    clean = nans = 0
    for row in CURVES.read_text().splitlines():
        d = json.loads(row)
        pairs = zip(d["steps"], d["loss"], strict=True)
        lines = [f"step {s} | loss: {'nan' if v is None else v}" for s, v in pairs]
        n = nan_end(lines)
        if d["nan_at"] is None:
            clean += 1
            assert n is None, d["name"]
        else:
            nans += 1
            assert n is not None, d["name"]
    assert clean >= 4 and nans >= 2


def test_the_log_with_the_most_values_at_nan() -> None:
    a = ["step 1 | loss: nan"] * 3
    b = ["step 1 | loss: nan"] * 5
    n = nan_end_of([a, ["no values here"], b])
    assert n is not None and n.count == 5


def test_triage_says_numerical_only_where_the_log_holds_no_error(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    lines = [f"epoch {e} | train 0.{90 - e} | valid 0.{91 - e}" for e in range(10)]
    lines += [f"epoch {e} | train nan | valid nan" for e in range(10, 14)]
    log.write_text("\n".join(lines) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.NUMERICAL and d.transient is False and d.confidence < 0.5
    assert d.rule is None and d.suspect.kind == "numerics"
    assert "4 of its last lines show the training's values at NaN" in d.summary
    assert "epoch 13 | train nan | valid nan" in d.summary and "Roll back" in d.action
    # a run that says it finished, at NaN, trained to nothing
    log.write_text(log.read_text() + "Training completed!\n")
    assert triage_files([log]).diagnosis.category == Category.NUMERICAL
    log.write_text(log.read_text() + "torch.OutOfMemoryError: CUDA out of memory.\n")
    assert triage_files([log]).diagnosis.category == Category.CUDA_OOM
