"""babysit.parse.formats: the dispatcher hands a line to the reader its marker names."""

from __future__ import annotations

import pytest

from babysit.parse.formats import dispatch


@pytest.mark.parametrize(
    ("body", "source", "step"),
    [
        ("iter 340: loss 5.4983, time 33785.52ms, mfu 0.96%", "nanogpt", 340),
        (" iteration      100/    5000 | lm loss: 2.31E+00 | grad norm: 1.2 |", "megatron", 100),
        ("{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 3e-05, 'epoch': 0.5}", "hf", None),
        ("loss=2.31 grad_norm=1.2", "generic", None),
    ],
)
def test_a_line_goes_to_the_reader_its_marker_names(
    body: str, source: str, step: int | None
) -> None:
    parsed = dispatch(body)
    assert parsed is not None and parsed[0] == source and parsed[1] == step, parsed
    assert parsed[2]["loss"] == pytest.approx(2.31 if source != "nanogpt" else 5.4983)


def test_a_line_of_prose_reads_as_no_values() -> None:
    parsed = dispatch("Saving the model to /ckpt")
    assert parsed is None or not parsed[2]
