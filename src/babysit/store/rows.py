"""How the store's rows are written: a value as its column holds it, and an upsert of a row.
Shared by the runs' and attempts' parts of the store (store/sqlite.py, store/attempts.py).

    encode([1, 2])                                  # -> "[1, 2]"
    upsert("runs", {"name": "gpt", "state": "running"}, ("name",))  # -> "INSERT ... ON CONFLICT"
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babysit.store.signs import json_default


def upsert(table: str, row: Mapping[str, Any], key: tuple[str, ...]) -> str:
    """INSERT of `row` (named parameters) that updates the other columns of the row with the
    same `key` instead (a WHERE may follow)."""
    cols = ", ".join(row)
    marks = ", ".join(f":{k}" for k in row)
    sets = ", ".join(f"{k}=excluded.{k}" for k in row if k not in key)
    return (
        f"INSERT INTO {table} ({cols}) VALUES ({marks}) "
        f"ON CONFLICT({', '.join(key)}) DO UPDATE SET {sets}"
    )


def encode(value: Any) -> Any:
    """A value as a column holds it: lists and dicts as JSON, paths as text, bools as 0/1,
    enums by their value."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, default=json_default)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bool):
        return int(value)
    if hasattr(value, "value") and isinstance(getattr(value, "value", None), str):
        return value.value  # enums
    return value
