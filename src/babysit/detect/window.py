"""A bounded rolling window with robust statistics (median, MAD), cheap enough per record.

    w = RobustWindow(size=128)
    w.add(2.31)
    median, scale = w.stats()   # scale = 1.4826 * MAD: a standard deviation for normal noise

The statistics are recomputed every `refresh` additions, not on every one: a detector asks for
them on every record, and a sort of 128 floats per line would cost more than all the parsing.
Memory is bounded by `size`, whatever the length of the run.
"""

from __future__ import annotations

import math
from collections import deque

MAD_TO_SIGMA = 1.4826


def median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    if n == 0:
        return math.nan
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2


def quantile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return math.nan
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def robust_stats(values: list[float]) -> tuple[float, float]:
    """(median, 1.4826 * median absolute deviation) of `values` (nan, nan when empty)."""
    mid = median(values)
    return mid, MAD_TO_SIGMA * median([abs(v - mid) for v in values])


class RobustWindow:
    def __init__(self, size: int = 128, refresh: int = 8) -> None:
        self.values: deque[float] = deque(maxlen=size)
        self.refresh = refresh
        self._stale = refresh
        self._median = math.nan
        self._scale = math.nan

    def __len__(self) -> int:
        return len(self.values)

    def add(self, value: float) -> None:
        self.values.append(value)
        self._stale += 1

    def clear(self) -> None:
        self.values.clear()
        self._stale = self.refresh

    def stats(self) -> tuple[float, float]:
        """(median, 1.4826 * median absolute deviation) of the window."""
        if self._stale >= self.refresh:
            self._median, self._scale = robust_stats(list(self.values))
            self._stale = 0
        return self._median, self._scale
