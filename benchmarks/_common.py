"""Helpers shared by the benchmarks: run babysit as a real process, summarise samples, and the
`--quick` smoke-test mode every benchmark has."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
TINYGPT = REPO / "examples" / "tinygpt" / "train.py"

QUICK_HELP = (
    "smoke test: the smallest inputs, a run or two, seconds; still checks the verdicts and exit "
    "codes, never the figures against their targets (they depend on the machine)"
)


def babysit(*args: str) -> list[str]:
    return [sys.executable, "-m", "babysit", *args]


def parse_args(ap: argparse.ArgumentParser, quick: dict[str, Any]) -> argparse.Namespace:
    """Add --quick to `ap` and parse. With --quick, the options named in `quick` default to
    their quick values instead (an explicit flag still wins, even one equal to the default)."""
    ap.add_argument("--quick", action="store_true", help=QUICK_HELP)
    first, _ = ap.parse_known_args()
    if first.quick:
        ap.set_defaults(**quick)
    return ap.parse_args()


def check(ok: bool, message: str) -> None:
    """A verdict of the benchmark: when it does not hold, say so on stderr and exit 1."""
    if not ok:
        sys.exit(f"FAILED: {message}")


def check_exit(code: int | None, want: int, what: str, stderr: str) -> None:
    """`what` must have exited `want`; else the end of its stderr says why (one place for the
    message and the tail's length)."""
    check(code == want, f"{what} exited {code}, want {want}; its stderr ends:\n{stderr[-3000:]}")


def summary(samples: list[float], unit: str, scale: float = 1.0) -> str:
    s = sorted(x * scale for x in samples)
    p95 = s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
    return (
        f"median {statistics.median(s):.2f}{unit}  p95 {p95:.2f}{unit}  "
        f"max {s[-1]:.2f}{unit}  (n={len(s)})"
    )
