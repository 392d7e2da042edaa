"""babysit.parse.lines: progress and Python errors from single output lines."""

from __future__ import annotations

import pytest

from babysit.parse.lines import LineParser, clean, parse_line
from babysit.records import Metric, OutputLine, Progress, PythonError

TS = 123.0


def parse(text: str, stream: str = "stdout", number: int = 7) -> list[Progress | PythonError]:
    return parse_line(OutputLine(stream, number, text, TS))


def steps(text: str) -> list[int]:
    return [r.step for r in parse(text) if isinstance(r, Progress)]


def error(text: str) -> PythonError:
    out = parse(text, stream="stderr")
    assert len(out) == 1, out
    assert isinstance(out[0], PythonError), out
    return out[0]


# -- progress ------------------------------------------------------------------------------------

TITAN = (
    "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  "
    "memory: 49.66GiB(52.28%)  tps: 5,856"
)
TITAN_COLOURED = (
    "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - \x1b[31mstep: 200  "
    "\x1b[32mloss:  6.1384  \x1b[33mmemory: 49.66GiB(52.28%)  \x1b[34mtps: 5,856\x1b[39m"
)


@pytest.mark.parametrize(
    ("text", "step"),
    [
        ("iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%", 340),
        ("step 0: train loss 2.2365, val loss 1.9580", 0),
        (TITAN, 200),
        (TITAN_COLOURED, 200),
        ("\x1b[1m[rank3]:\x1b[0m step: 14  loss: 7.1", 14),
        (
            " iteration      122/  250000 | consumed samples:        15616 | elapsed time per "
            "iteration (ms): 1543.2 | learning rate: 1.830E-05 | lm loss: 8.217E+00 |",
            122,
        ),
        (
            "step   61/74 | loss 3.208939 (+nanz)| norm 0.6853 (+nanz)| lr 6.00e-04 | "
            "128.25 ms | 46.0% bf16 MFU | 4087984 tok/s",
            61,
        ),
        (
            "[2023-08-08 19:37:41,112] [INFO] [logging.py:96:log_dist] [Rank 0] step=35, "
            "skipped=0, lr=[9.9e-05], mom=[(0.9, 0.999)]",
            35,
        ),
        ("[default0]:iter 5: loss 1.0", 5),
        ("3: step 12 loss 2.0", 12),  # srun --label prefix
        ("[1,0]<stdout>:step 9 | loss 1.1", 9),  # mpirun --tag-output
        ("Epoch 1 | step=100 | loss=0.5", 100),
        ("iter:77 loss 3", 77),
        ("  step 8  ", 8),
    ],
)
def test_progress_lines(text: str, step: int) -> None:
    assert steps(text) == [step]


def test_progress_record_fields() -> None:
    (rec,) = parse("iter 3: loss 1", stream="stderr", number=41)
    assert rec == Progress(step=3, ts=TS, stream="stderr", line=41)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "\x1b[0m",
        "global_step: 100",
        "global_step 100",
        "steps per epoch: 10",
        "optimizer.step()",
        "    optimizer.step()",
        "scheduler.step(5)",
        "max_iters = 5000",
        "lr_decay_iters = 5000",
        "warmup_steps 100",
        "step 1.5",  # not an integer step
        "training for 5000 steps",
        "loss 2.5, time 30ms",
        "iteration time 1543.2 ms",
        "/data/step/12/shard.bin",
        "iterations: 10",
    ],
)
def test_not_progress(text: str) -> None:
    assert steps(text) == []


def test_huge_step_numbers_are_ignored() -> None:
    assert steps("step 1234567890123") == []
    assert steps("step 123456789012") == [123456789012]


def test_first_step_number_wins() -> None:
    assert steps("step 5 (next eval at step 10)") == [5]


# -- Python errors -------------------------------------------------------------------------------


def test_module_not_found() -> None:
    err = error("ModuleNotFoundError: No module named 'foo'")
    assert err == PythonError(
        "ModuleNotFoundError",
        "No module named 'foo'",
        "ModuleNotFoundError: No module named 'foo'",
        TS,
        "stderr",
        7,
    )


def test_qualified_exception_is_unqualified() -> None:
    err = error(
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:219, unhandled system error, NCCL version 2.14.3"
    )
    assert err.exc_type == "DistBackendError"
    assert err.message.startswith("NCCL error in:")
    assert err.text.startswith("torch.distributed.DistBackendError:")


def test_syntax_error() -> None:
    err = error("SyntaxError: invalid syntax")
    assert (err.exc_type, err.message) == ("SyntaxError", "invalid syntax")


def test_bare_keyboard_interrupt() -> None:
    err = error("KeyboardInterrupt")
    assert (err.exc_type, err.message) == ("KeyboardInterrupt", "")


@pytest.mark.parametrize(
    ("text", "exc_type"),
    [
        (
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "OutOfMemoryError",
        ),
        ("SystemExit: 1", "SystemExit"),
        ("AssertionError", "AssertionError"),
        ("AssertionError: ", "AssertionError"),
        ("[rank1]: RuntimeError: CUDA error: an illegal memory access", "RuntimeError"),
        ("\x1b[31mValueError: bad\x1b[0m", "ValueError"),
        ("  KeyError: 'missing'", "KeyError"),  # indentation stripped
        ("my_pkg.errors.DataLoaderException: worker died", "DataLoaderException"),
        ("Fatal Python error: Segmentation fault", None),
        ("SegFault: core dumped", "SegFault"),
    ],
)
def test_error_lines(text: str, exc_type: str | None) -> None:
    errs = [r for r in parse(text) if isinstance(r, PythonError)]
    assert [e.exc_type for e in errs] == ([exc_type] if exc_type else [])


@pytest.mark.parametrize(
    "text",
    [
        "Error: something",  # no class name before Error
        "CUDA Error: foo",
        "The ValueError: was handled",
        '  File "train.py", line 3, in <module>',
        "Traceback (most recent call last):",
        "123Error: no",
        "warnings.warn(ValueError)",
    ],
)
def test_not_errors(text: str) -> None:
    assert not [r for r in parse(text) if isinstance(r, PythonError)]


def test_error_line_mentioning_a_step_is_an_error() -> None:
    out = parse("RuntimeError: loss is NaN at step 1200", stream="stderr")
    assert any(isinstance(r, PythonError) and r.exc_type == "RuntimeError" for r in out)


# -- argparse ------------------------------------------------------------------------------------


def test_argparse_error() -> None:
    err = error("train.py: error: unrecognized arguments: --foo")
    assert err.exc_type == "ArgumentError"
    assert err.message == "unrecognized arguments: --foo"
    assert err.text == "train.py: error: unrecognized arguments: --foo"


def test_argparse_error_with_prefix() -> None:
    err = error("[rank0]: pretrain.py: error: argument --lr: invalid float value: 'x'")
    assert err.exc_type == "ArgumentError"
    assert err.message == "argument --lr: invalid float value: 'x'"


def test_argparse_usage_line_is_nothing() -> None:
    assert parse("usage: train.py [-h] [--lr LR]") == []


# -- clean ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("[rank0]:hello", "hello"),
        ("[rank12]: hello", "hello"),
        ("[default3]:hello", "hello"),
        ("0: hello", "hello"),
        ("[0,1]<stderr>:hello", "hello"),
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("[rank0]:[rank1]:x", "[rank1]:x"),  # only one prefix removed
        ("plain", "plain"),
        ("10:30 meeting", "10:30 meeting"),  # no space after the colon: not a prefix
    ],
)
def test_clean(raw: str, cleaned: str) -> None:
    assert clean(raw) == cleaned


# -- LineParser: tracebacks ----------------------------------------------------------------------


def feed_all(
    parser: LineParser, lines: list[str], stream: str = "stderr"
) -> list[Progress | PythonError]:
    out: list[Progress | PythonError] = []
    for i, text in enumerate(lines, 1):
        out += parser.feed(OutputLine(stream, i, text, TS))
    return out


def test_line_parser_marks_the_line_that_ends_a_traceback() -> None:
    out = feed_all(
        LineParser(),
        [
            "Traceback (most recent call last):",
            '  File "train.py", line 3, in <module>',
            "    import foo",
            "ModuleNotFoundError: No module named 'foo'",
        ],
    )
    assert len(out) == 1
    assert isinstance(out[0], PythonError)
    assert (out[0].exc_type, out[0].from_traceback, out[0].line) == (
        "ModuleNotFoundError",
        True,
        4,
    )


def test_line_parser_look_alike_outside_a_traceback() -> None:
    (rec,) = feed_all(LineParser(), ["ValueError: just logged"])
    assert isinstance(rec, PythonError)
    assert rec.from_traceback is False


def test_line_parser_syntax_error_traceback_starts_at_file() -> None:
    out = feed_all(
        LineParser(),
        ['  File "train.py", line 1', "    def (", "        ^", "SyntaxError: invalid syntax"],
    )
    assert [(r.exc_type, r.from_traceback) for r in out] == [("SyntaxError", True)]


def test_line_parser_streams_are_separate() -> None:
    p = LineParser()
    p.feed(OutputLine("stderr", 1, "Traceback (most recent call last):", TS))
    (out,) = p.feed(OutputLine("stdout", 1, "KeyError: 'x'", TS))
    assert isinstance(out, PythonError)
    assert out.from_traceback is False
    (err_,) = p.feed(OutputLine("stderr", 2, "KeyError: 'y'", TS))
    assert isinstance(err_, PythonError)
    assert err_.from_traceback is True


def test_line_parser_passes_progress_through() -> None:
    out = feed_all(
        LineParser(),
        ["iter 1: loss 2", "Traceback (most recent call last):", "  x", "iter 2: loss 1",
         "saving checkpoint at step 3"],
    )
    # A metric line carries its step (no separate Progress); other lines yield Progress.
    steps = [r.step for r in out if isinstance(r, (Progress, Metric))]
    assert steps == [1, 2, 3]
    assert not [r for r in out if isinstance(r, PythonError)]
