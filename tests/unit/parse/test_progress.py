"""babysit.parse.progress: the step counter from HF Trainer's and Lightning's progress bars, and
HF log dicts given their step. Frames are copied from real runs (transformers 5.24, lightning
2.6.6); tests/fixtures/healthy holds whole logs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from babysit.parse.lines import LineParser
from babysit.parse.metrics import parse_metrics
from babysit.parse.progress import ProgressBars, epoch_of, read_bar, step_in_path
from babysit.records import Metric, OutputLine, Progress

HEALTHY = Path(__file__).resolve().parents[2] / "fixtures" / "healthy"
CLEAR = " " * 46


def hf_bar(n: int, total: int = 30) -> str:
    return f" {100 * n // total:2d}%|██        | {n}/{total} [00:00<00:00, 29.40it/s]"


def hf_dict(loss: str, epoch: str) -> str:
    return (
        f"{{'loss': '{loss}', 'grad_norm': '1.5', 'learning_rate': '0.0004', 'epoch': '{epoch}'}}"
    )


def lt_bar(epoch: int, n: int, total: int, post: str = "") -> str:
    tail = f", {post}" if post else ""
    return f"Epoch {epoch}:  10%|█         | {n}/{total} [00:00<00:00, 62.94it/s{tail}]"


def feed(parser: LineParser, items: list[tuple[str, str]], ts: float = 0.0) -> list[object]:
    out: list[object] = []
    for number, (stream, text) in enumerate(items):
        out += parser.feed(OutputLine(stream, number, text, ts))
    return out


def steps(records: list[object]) -> list[int]:
    return [r.step for r in records if isinstance(r, Progress)]


def metrics(records: list[object]) -> list[Metric]:
    return [r for r in records if isinstance(r, Metric)]


def test_read_bar() -> None:
    bar = read_bar(" 45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s]")
    assert bar is not None and (bar.desc, bar.n, bar.total, bar.postfix) == ("", 450, 1000, "")
    bar = read_bar(
        "Epoch 0:  45%|████▌     | 450/1000 [00:12<00:15, 36.1it/s, v_num=0, train_loss=2.31]"
    )
    assert bar is not None and (bar.desc, bar.n, bar.total) == ("Epoch 0", 450, 1000)
    assert bar.postfix == "v_num=0, train_loss=2.31"
    bar = read_bar("Training: |          | 31/? [00:00<00:00, 1404.63it/s]")
    assert bar is not None and (bar.desc, bar.n, bar.total) == ("Training", 31, None)
    assert read_bar("Map: 100%|██████████| 1000/1000 [00:00<00:00, 5000.00 examples/s]") is None
    assert read_bar("step 10/100 loss 2.3") is None


def test_epoch_of_reads_its_printed_precision() -> None:
    assert epoch_of("{'loss': '4.0', 'epoch': '0.01562'}") == pytest.approx((0.01562, 5e-6))
    value, half = epoch_of("{'loss': 4.0, 'epoch': 0.45045045045045046}") or (0, 0)
    assert value == pytest.approx(0.45045045045045046) and half < 1e-11
    assert epoch_of("{'loss': '4.0', 'epoch': '1'}") == (1.0, 0.5)
    assert epoch_of("{'loss': '4.0'}") is None


def test_step_in_path() -> None:
    assert step_in_path("out/step=400.ckpt") == 400
    assert step_in_path("/x/epoch=1-step=50.ckpt") == 50
    assert step_in_path("out/checkpoint-20") == 20
    assert step_in_path("out/last.ckpt") is None


def test_lightning_nan_prints_as_nan_dot_zero() -> None:
    line = OutputLine("stdout", 1, lt_bar(1, 5, 10, "train_loss=nan.0, grad_norm=inf.0"), 0.0)
    m = parse_metrics(line)
    assert m is not None and math.isnan(m.values["loss"]) and m.values["grad_norm"] == math.inf


def test_hf_bar_is_the_step_and_a_redraw_is_not_counted_twice() -> None:
    out = feed(
        LineParser(),
        [
            ("stderr", hf_bar(0)),
            ("stderr", hf_bar(1)),
            ("stderr", CLEAR),
            ("stderr", hf_bar(1)),
            ("stderr", hf_bar(2)),
            ("stderr", hf_bar(3)),
        ],
    )
    assert steps(out) == [1, 2, 3]


def test_hf_dict_takes_the_step_of_the_bar_drawn_after_it_whichever_stream_comes_first() -> None:
    """The Trainer prints the dict at global step N with tqdm.write: the bar (stderr) is
    cleared, the dict goes to stdout, the bar is redrawn at N. Here all of stdout is read before
    stderr (the worst order), and the NaN still gets its step."""
    dicts = [("stdout", hf_dict("4.0", "0.01562")), ("stdout", hf_dict("nan", "0.03125"))]
    bars = [("stderr", hf_bar(1)), ("stderr", CLEAR), ("stderr", hf_bar(1))]
    bars += [("stderr", hf_bar(2)), ("stderr", CLEAR), ("stderr", hf_bar(2))]
    for order in (dicts + bars, bars + dicts):
        got = metrics(feed(LineParser(), order))
        assert [m.step for m in got] == [1, 2]
        assert got[0].stream == "stdout" and math.isnan(got[1].values["loss"])


def test_hf_dict_in_a_merged_log_takes_the_redraw_after_it() -> None:
    # stdout and stderr in one file: the clear, the dict, the redraw
    items = [("log", hf_bar(9)), ("log", hf_bar(10)), ("log", CLEAR)]
    items += [("log", hf_dict("3.9", "0.1562")), ("log", hf_bar(10)), ("log", hf_bar(11))]
    got = metrics(feed(LineParser(), items))
    assert [m.step for m in got] == [10]


def test_hf_steps_per_epoch_are_learned_and_give_the_step_at_once() -> None:
    bars = ProgressBars()
    line = OutputLine("stderr", 0, "", 0.0)
    for n, epoch in ((1, "0.01562"), (2, "0.03125"), (3, "0.04688")):
        bars.feed(CLEAR, line, None)
        bars.feed(hf_bar(n, 300), line, None)
        m = parse_metrics(OutputLine("stdout", n, hf_dict("4.0", epoch), 0.0))
        bars.feed(hf_dict("4.0", epoch), line, m)
    assert bars.steps_per_epoch() == 64
    m = parse_metrics(OutputLine("stdout", 9, hf_dict("nan", "0.1094"), 0.0))
    held, released = bars.feed(hf_dict("nan", "0.1094"), line, m)
    assert held is None and [r.step for r in released if isinstance(r, Metric)] == [7]


def test_a_coarse_epoch_does_not_give_a_step() -> None:
    """With 1000 steps an epoch, `0.4512` (4 digits) pins the step; `12.45` does not (+-5)."""
    bars = ProgressBars()
    line = OutputLine("stderr", 0, "", 0.0)
    m = parse_metrics(OutputLine("stdout", 1, hf_dict("4.0", "0.45"), 0.0))
    bars.feed(CLEAR, line, None)
    bars.feed(hf_bar(450, 3000), line, None)
    bars.feed("{'loss': 4.0, 'epoch': 0.45000000000000001}", line, m)  # transformers 4.x
    assert bars.steps_per_epoch() == 1000
    assert bars.epoch_step((0.4512, 5e-5)) == 451
    assert bars.epoch_step((12.45, 5e-3)) is None


def test_hf_dicts_without_a_bar_go_out_once_a_later_read_finds_none() -> None:
    parser = LineParser()
    first = parser.feed(OutputLine("stdout", 1, hf_dict("nan", "0.5"), 10.0))
    assert first == []
    later = parser.feed(OutputLine("stdout", 2, hf_dict("nan", "0.6"), 12.0))
    assert [(m.step, m.line) for m in metrics(later)] == [(None, 1)]


def test_other_dicts_without_a_bar_are_not_held() -> None:
    """transformers 4 (before its bar is read), `disable_tqdm`'s print, a script's own dict."""
    parser = LineParser()
    out = parser.feed(OutputLine("stdout", 1, "{'loss': nan, 'epoch': 0.5}", 0.0))
    assert [(m.step, math.isnan(m.values["loss"])) for m in metrics(out)] == [(None, True)]
    out = parser.feed(OutputLine("stdout", 2, "{'loss': '2.5', 'grad_norm': '0.3'}", 0.0))
    assert len(metrics(out)) == 1


def test_flush_releases_what_waits_at_the_end_of_the_input() -> None:
    parser = LineParser()
    assert parser.feed(OutputLine("stdout", 1, hf_dict("nan", "0.5"), 0.0)) == []
    assert [(m.step, m.line) for m in metrics(parser.flush())] == [(None, 1)]
    assert parser.flush() == []


def test_an_eval_bar_does_not_move_the_step() -> None:
    nested = " 50%|█████     | 4/8 [00:00<00:00, 30.1it/s]\x1b[A"
    items = [("stderr", hf_bar(10, 100)), ("stderr", nested), ("stderr", hf_bar(11, 100))]
    assert steps(feed(LineParser(), items)) == [10, 11]
    # after training (its bar finished, a dict matched to it), an eval bar at position 0
    items = [("stderr", hf_bar(29)), ("stdout", hf_dict("3.0", "0.5")), ("stderr", CLEAR)]
    items += [("stderr", hf_bar(30)), ("stderr", " 50%|█████     | 4/8 [00:00<00:00, 30.1it/s]")]
    assert steps(feed(LineParser(), items)) == [29, 30]


def test_lightning_two_frames_per_count_give_one_step_and_the_fresh_values() -> None:
    items = [
        ("stdout", lt_bar(0, 0, 40)),
        ("stdout", lt_bar(0, 1, 40)),
        ("stdout", lt_bar(0, 1, 40, "train_loss=1.170")),
        ("stdout", lt_bar(0, 2, 40, "train_loss=1.170")),  # count 2, postfix of count 1
        ("stdout", lt_bar(0, 2, 40, "train_loss=nan.0")),
    ]
    out = feed(LineParser(), items)
    assert steps(out) == [1, 2]
    got = metrics(out)
    assert [m.step for m in got] == [1, 2]
    assert got[0].values["loss"] == 1.17 and math.isnan(got[1].values["loss"])


def test_lightning_epochs_add_up_even_when_the_last_one_is_cut_short() -> None:
    items = [("stdout", lt_bar(0, n, 40, f"train_loss={n}.00")) for n in (1, 39, 40)]
    # max_steps=45: the last epoch's bar says 5 batches, not 40
    items += [("stdout", lt_bar(1, 0, 5)), ("stdout", lt_bar(1, 3, 5, "train_loss=nan.0"))]
    out = feed(LineParser(), items)
    assert steps(out) == [1, 39, 40, 43]
    assert [m.step for m in metrics(out)] == [1, 39, 40, 43]


def test_lightning_resumed_counts_from_the_checkpoint_it_restored() -> None:
    restore = "Restoring states from the checkpoint path at out/step=30.ckpt"
    resumed = "Training: |          | {}/? [00:00<00:00, 1404.63it/s]"  # the resumed epoch 0
    frames = [("stdout", resumed.format(n)) for n in (31, 32, 40)] + [("stdout", lt_bar(1, 1, 10))]
    for order in ([("stderr", restore), *frames], [frames[0], ("stderr", restore), *frames[1:]]):
        got = steps(feed(LineParser(), order))
        assert got[-3:] == [32, 40, 41]  # before the restore line is read, no step is made up


def test_a_restore_line_read_after_the_whole_resumed_bar_still_gives_its_step() -> None:
    # A short resumed attempt: its whole bar on stdout is read before Lightning's restore line
    # on stderr (the streams are read apart); the attempt still ends at a known step.
    restore = "Restoring states from the checkpoint path at out/step=40.ckpt"
    resumed = "Training: |          | {}/? [00:00<00:00, 1404.63it/s]"
    frames = [("stdout", resumed.format(n)) for n in range(41, 61)]
    got = steps(feed(LineParser(), [*frames, ("stderr", restore)]))
    assert got == [60]


def test_lightning_epoch_one_without_history_reports_no_step() -> None:
    out = feed(LineParser(), [("stdout", lt_bar(1, 3, 10, "train_loss=2.000"))])
    assert steps(out) == [] and [m.step for m in metrics(out)] == [None]


def test_a_step_in_the_postfix_wins() -> None:
    out = feed(LineParser(), [("stdout", lt_bar(2, 3, 10, "step=123.0, train_loss=2.000"))])
    assert steps(out) == [123] and [m.step for m in metrics(out)] == [123]


@pytest.mark.parametrize("name", sorted(p.name for p in HEALTHY.glob("*.log")))
def test_recorded_runs_read_every_step_in_order(name: str) -> None:
    parser = LineParser()
    text = (HEALTHY / name).read_bytes().decode("utf-8", errors="replace")
    out: list[object] = []
    for number, t in enumerate(text.replace("\r", "\n").split("\n")):
        if t:
            out += parser.feed(OutputLine("log", number, t, 0.0))
    assert steps(out) == list(range(1, 301))
    metric_steps = [m.step for m in metrics(out) if "loss" in m.values]
    assert metric_steps == sorted(metric_steps) and metric_steps[-1] == 300
    assert None not in metric_steps
