"""Time as people type it and scripts read it: durations (`90s`, `1h30m`) and ISO 8601 instants.

    parse_duration("1h30m")     # -> 5400.0
    parse_duration("2.5")       # -> 2.5 (a plain number is seconds)
    format_duration(5400)       # -> "1h30m"
    iso_utc(1796099821.743)     # -> "2026-12-01T04:37:01.743+00:00"

Standard library only: the config, the stores' documents and the CLI all use it. One format for
every instant babysit prints as JSON (UTC, milliseconds, an explicit offset), so scripts parse
them all with `datetime.fromisoformat`.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

__all__ = ["DURATION_HELP", "format_duration", "iso_utc", "parse_duration"]

DURATION_HELP = "a duration: 90s, 5m, 2h, 1h30m, 1d, or a number of seconds"

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)", re.IGNORECASE)
_WHOLE = re.compile(r"(?:\s*(?:\d+(?:\.\d*)?|\.\d+)\s*(?:ms|s|m|h|d)\s*)+", re.IGNORECASE)


def parse_duration(text: str | float) -> float:
    """Seconds in `text`: a number (seconds), or parts with units in any order of size: `90s`,
    `5m`, `2h`, `1h30m`, `1d12h`, `500ms`. Raises ValueError (with the accepted forms) on
    anything else, a negative value included."""
    if isinstance(text, bool):
        raise ValueError(f"expected {DURATION_HELP}, got {text!r}")
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        s = text.strip()
        try:
            seconds = float(s)
        except ValueError:
            if not s or not _WHOLE.fullmatch(s):
                raise ValueError(f"expected {DURATION_HELP}, got {text!r}") from None
            seconds = sum(float(n) * _UNITS[u.lower()] for n, u in _PART.findall(s))
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"expected {DURATION_HELP} (>= 0), got {text!r}")
    return seconds


def format_duration(seconds: float) -> str:
    """A short human duration: `45s`, `12m05s`, `1h30m`, `2d03h`; under 10 s with a tenth."""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 10:
        return f"{max(seconds, 0):.1f}s"
    s = round(seconds)
    d, rem = divmod(s, 86400)
    h, rem = divmod(rem, 3600)
    m, sec = divmod(rem, 60)
    if d:
        return f"{d}d{h:02d}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"


def iso_utc(ts: float | None) -> str | None:
    """A Unix time as ISO 8601 in UTC with milliseconds and offset; None stays None."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="milliseconds")
