"""Numbers as training logs print them: `9.46GiB(64.99%)`, `10,050`, `634K`, `nan.0`, `-inf`,
`np.float64(0.3)`, a step counter `00100` or `10/100`. Pure functions.

    num("75.2M")          # -> 75200000.0
    millis("2.8874")          # -> 2887.4 (seconds unless the text says otherwise)
    gibibytes("10762", "MiB")   # -> 10.51...
    as_int("10/100")      # -> 10
"""

from __future__ import annotations

import math
import re

_NUM = re.compile(
    r"[\[('\"\s]*"
    r"([-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
    r"|[-+]?(?:[Nn]a[Nn]|NAN|[Ii]nfinity|INFINITY|[Ii]nf|INF))"
    r"([A-Za-z%/µ]*)"
)
# A number ends at whitespace, a separator or a closing bracket; `2:44:49`, `2024-01-01` and
# `1.2.3` are not numbers.
_NUM_END = frozenset(" \t,;)]}'\"(")
# Single-letter SI suffixes as printed by humanised counters (`634K`, `75.2M`): scaled.
_SCALE = {"": 1.0, "%": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
# Units glued on that leave the number as printed.
# fmt: off
_UNITS = frozenset({"ms", "s", "sec", "secs", "us", "µs", "ns", "m", "min", "h", "hr", "GiB", "GB",
                    "MiB", "MB", "KiB", "KB", "kB", "TiB", "TB", "gb", "mb", "gib", "mib", "x",
                    "it/s", "s/it", "tok/s", "tokens/s", "samples/s"})
# fmt: on
DIGITS = frozenset("0123456789")
_SPECIAL = {
    spelling: float(spelling)
    for spelling in ("nan", "NaN", "inf", "-inf", "+inf", "Infinity", "-Infinity", "-nan")
}
# Lightning's bar pads numbers to 5 characters with a dot and zeros: `nan.0`, `inf.0`, `-inf.`.
_SPECIAL.update({f"{s}.0": v for s, v in _SPECIAL.items() if len(s) == 3})
_SPECIAL.update({f"{s}.": v for s, v in _SPECIAL.items() if len(s) == 4})


def _parse_num(s: str) -> tuple[float, str] | None:
    """(value, unit) from `9.46GiB(64.99%)`, `10,050`, `-inf`, `'2.345'`, `np.float64(0.3)`."""
    if s[:1].isalpha() and "(" in s:  # np.float64(0.3), tensor(2.3, device='cuda:0')
        s = s[s.index("(") + 1 :]
    m = _NUM.match(s)
    if m is None:
        return None
    end = m.end()
    if end < len(s) and s[end] not in _NUM_END:
        return None
    number, unit = m.groups()
    try:
        return float(number.replace(",", "")), unit
    except ValueError:  # pragma: no cover - the regex only lets floats through
        return None


def num(s: str) -> float | None:
    """A value as a float, units dropped (SI suffixes K/M/G/T scaled); None if not a number."""
    last = s[-1:]
    if last in DIGITS and "," not in s:
        try:
            return float(s)
        except ValueError:
            pass
    elif last == "%" or last == ",":  # `0.17%`, `0.449,`: common enough for a shortcut
        try:
            return float(s[:-1])
        except ValueError:
            pass
    return num_slow(s)


def num_slow(s: str) -> float | None:
    special = _SPECIAL.get(s)
    if special is not None:
        return special
    if not s:
        return None
    if "," in s:  # thousands separators (`tps: 10,050`); a trailing comma is handled above
        try:
            return float(s.replace(",", ""))
        except ValueError:
            pass
    parsed = _parse_num(s)
    if parsed is None:
        return None
    value, unit = parsed
    scale = _SCALE.get(unit)
    if scale is not None:
        return value * scale
    return value if unit in _UNITS else None


_TO_MS = {"ms": 1.0, "s": 1e3, "sec": 1e3, "us": 1e-3, "µs": 1e-3, "m": 6e4, "min": 6e4}
_TO_GIB = {"GiB": 1.0, "GB": 1.0, "G": 1.0, "MiB": 1 / 1024, "MB": 1 / 1024, "M": 1 / 1024}


def millis(s: str, default_unit: str = "s") -> float | None:
    """A duration in milliseconds (`44.57ms`, `2.8874` seconds by default, `1.2m`)."""
    return _scaled(s, _TO_MS, default_unit)


def gibibytes(s: str, default_unit: str) -> float | None:
    """A memory size in GiB (`9.46GiB`, `10762` MiB by default for mmengine)."""
    return _scaled(s, _TO_GIB, default_unit)


def _scaled(s: str, factors: dict[str, float], default_unit: str) -> float | None:
    if s[-1:] in DIGITS and "," not in s:  # no unit printed: the format's own
        try:
            return float(s) * factors[default_unit]
        except ValueError:
            pass
    parsed = _parse_num(s)
    if parsed is None:
        return None
    value, unit = parsed
    return value * factors.get(unit or default_unit, 1.0)


def as_int(s: str) -> int | None:
    """A step counter: `00100`, `10/100` (-> 10), `1.000`; huge and negative ones as they are."""
    head = s.strip().strip("'\"[],").split("/", 1)[0].strip()
    try:
        return int(head)
    except ValueError:
        pass
    value = num(head)
    if value is None or not math.isfinite(value) or value != int(value):
        return None
    return int(value)
