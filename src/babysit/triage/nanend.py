"""Metrics gone NaN as a log ends, read only when triage found no error in the log: a run that
stopped without a word after its loss (or another value it prints every step) became NaN.

    n = nan_end(tail_lines)  # -> NanEnd(line="INFO: epoch, 0200, nan, nan, nan, nan", count=4)

A NaN is the word `nan` (any case) standing where a number stands: after a key (`loss: nan`,
`| KL | nan |`, `loss_tot nan`), in a column or a list (`76990 nan`, `epoch, 0199, nan, nan`).
Not a word that holds it (`nanoGPT`, `nan_to_num`, `np.nan`), nor Megatron's count of the steps
it skipped (`number of nan iterations: 0`, cut after `number of nan` by a wrap). A line counts
when it holds one and a digit (a metrics line: a step, an epoch, the other values); the log's last
QUIET_LINES lines that are not blank must hold NAN_LINES of them: one NaN may be a step that the
loss scaler skipped, a run of them at the end is a training whose numbers went NaN and stayed.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NAN_LINES = 3
QUIET_LINES = 30  # as stall.quiet: the last lines of each log (not blank) read
_NAN = re.compile(r"(?i)(?<![\w.])(?<!number of )nan(?![\w(])(?!\s+iterations?\b)")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class NanEnd:
    line: str  # the last line with a value at NaN
    count: int  # how many of the log's last lines hold one


def nan_end(lines: Sequence[str]) -> NanEnd | None:
    """Whether `lines` (a log's last lines, oldest first) end with values at NaN: NAN_LINES or
    more of the last QUIET_LINES lines that are not blank hold one, with a digit."""
    said = [line for line in lines if line.strip()][-QUIET_LINES:]
    found = [line for line in said if _NAN.search(line) and _DIGIT.search(line)]
    if len(found) < NAN_LINES:
        return None
    return NanEnd(found[-1].strip(), len(found))


def nan_end_of(tails: Sequence[Sequence[str]]) -> NanEnd | None:
    """The NaN end among a run's logs with the most lines at NaN, or None."""
    found = [n for tail in tails if (n := nan_end(tail)) is not None]
    return max(found, key=lambda n: n.count, default=None)
