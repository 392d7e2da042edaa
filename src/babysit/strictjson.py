"""Strict JSON: what babysit prints or keeps as JSON has no bare NaN or Infinity.

    dumps({"value": float("inf")}, indent=2)   # '{\\n  "value": "inf"\\n}'
    finite(doc)                                 # the same document, JSON-able and strict

Python's json writes NaN, Infinity and -Infinity, which JSON does not have: jq, JavaScript and
most parsers refuse the whole document. A non-finite number travels as the string "nan", "inf"
or "-inf" (as `babysit watch --json` has always written them, and float("inf") reads back);
tuples become lists, mapping keys strings, and anything else its str(). dumps() also passes
allow_nan=False, so a value that slipped past finite() raises instead of writing bad JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any


def finite(value: Any) -> Any:
    """`value` with every non-finite float as its string, recursively; JSON-able."""
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return str(value)


def dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps of finite(value), strict (allow_nan=False)."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
