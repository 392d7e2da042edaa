"""The hang timeout an attempt's babysit learned, kept in the attempt's directory for the next
babysit that re-attaches (a requeue, a kill -9): without it, a hang during the re-attach would
get the 30-minute start-up allowance.

    saved = save_cadence(attempt_dir, learned_s, saved)   # written when it moved by > 10%
    read_cadence(attempt_dir)                             # -> seconds, or None
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

CADENCE_FILE = "cadence.json"


def save_cadence(attempt_dir: Path, learned: float | None, saved: float | None) -> float | None:
    """Write `learned` unless it is within 10% of what was `saved`; returns what is saved now.
    A write that fails costs a re-attach the learned timeout, nothing else."""
    if learned is None or (saved is not None and abs(learned - saved) <= 0.1 * saved):
        return saved
    path = attempt_dir / CADENCE_FILE
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"timeout_s": learned}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return saved
    return learned


def read_cadence(attempt_dir: Path) -> float | None:
    """The saved timeout in seconds; None when there is none or it is not a positive number."""
    try:
        text = (attempt_dir / CADENCE_FILE).read_text(encoding="utf-8")[:1000]
        value = json.loads(text)["timeout_s"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = isinstance(value, (int, float)) and math.isfinite(value) and value > 0
    return float(value) if ok else None
