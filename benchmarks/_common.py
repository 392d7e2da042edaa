"""Helpers shared by the benchmarks: run babysit as a real process, summarise samples."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TINYGPT = REPO / "examples" / "tinygpt" / "train.py"


def babysit(*args: str) -> list[str]:
    return [sys.executable, "-m", "babysit", *args]


def summary(samples: list[float], unit: str, scale: float = 1.0) -> str:
    s = sorted(x * scale for x in samples)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return (
        f"median {statistics.median(s):.2f}{unit}  p95 {p95:.2f}{unit}  "
        f"max {s[-1]:.2f}{unit}  (n={len(s)})"
    )
