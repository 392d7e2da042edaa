"""Metrics gone NaN as a log ends, read only when triage found no error in the log: a run that
stopped without a word after its loss (or another value it prints every step) became NaN.

    n = nan_end(tail_lines)  # -> NanEnd(line="INFO: epoch, 0200, nan, nan, nan, nan", count=3)

A NaN is the word `nan` (any case) where a value stands: after a key or a separator (`loss: nan`,
`loss=nan`, `loss_tot nan`), in a column or a list (`76990 nan`, `epoch, 0199, nan, nan`), then
the line's end, a space or a separator. Not a word that holds it (`nanoGPT`, `nan_to_num`,
`np.nan`), a path's or a host's part (`/home/nan/`, `nan-gpu01`), a key named so (`nan: 0`,
`NaN/Inf: 0`), nor Megatron's count of the steps it skipped (`number of nan iterations: 0`, cut
after `number of nan` by a wrap). A line counts when it holds one and a digit (a metrics line: a
step, an epoch, the other values); the log's last QUIET_LINES lines that are not blank must hold
NAN_LINES of them, and no line after the last of them may be one of theirs with its values
finite (`13 2.3000` after `12 nan`: the run came back): one NaN may be a step that the loss scaler
skipped, a run of them to the end is a training whose numbers went NaN and stayed. One alone counts
where it is the log's last line that is not blank: the last values the run printed were NaN, and
it said nothing after them.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NAN_LINES = 3
QUIET_LINES = 30  # the last lines of each log (not blank) read here and by stall.quiet
_NAN = re.compile(
    r"(?i)(?:^|(?<=[\s:=|,\[(]))(?<!number of )nan"
    r"(?=$|[\s,;|)\]}])(?!\s*[:=])(?!\s+iterations?\b)"
)
_DIGIT = re.compile(r"\d")
# A line's shape: its numbers and NaNs alike, to tell the same metrics line with finite values.
_VALUE = re.compile(r"(?i)[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|\bnan\b)")


@dataclass(frozen=True)
class NanEnd:
    line: str  # the last line with a value at NaN
    count: int  # how many of the log's last lines hold one


def nan_end(lines: Sequence[str]) -> NanEnd | None:
    """Whether `lines` (a log's last lines, oldest first) end with values at NaN: NAN_LINES or
    more of the last QUIET_LINES lines that are not blank hold one, with a digit, and none of
    them comes back finite after the last; or the last line that is not blank holds one."""
    said = [line for line in lines if line.strip()][-QUIET_LINES:]
    found = [i for i, line in enumerate(said) if _NAN.search(line) and _DIGIT.search(line)]
    if len(found) < NAN_LINES and not (found and found[-1] == len(said) - 1):
        return None
    shapes = {_shape(said[i]) for i in found}
    if any(_shape(line) in shapes for line in said[found[-1] + 1 :]):
        return None
    return NanEnd(said[found[-1]].strip(), len(found))


def _shape(line: str) -> str:
    return _VALUE.sub("0", line.strip())


def nan_end_of(tails: Sequence[Sequence[str]]) -> NanEnd | None:
    """The NaN end among a run's logs with the most lines at NaN, or None."""
    found = [n for tail in tails if (n := nan_end(tail)) is not None]
    return max(found, key=lambda n: n.count, default=None)
