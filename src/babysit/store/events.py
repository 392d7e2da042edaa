"""The run's events: what babysit saw and did, in the database and in the JSONL mirror that
`babysit rebuild` folds back (store/rebuild.py).

    store.add_event(Event(run="gpt", kind=EventKind.NOTE, message="hi", ts=time.time()))
    store.events("gpt")                         # -> [{"ts": ..., "kind": "note", ...}, ...]
    store.last_event("gpt", ["restart", "stop"])  # -> the newest of those kinds, or None

A mixin of Store (it uses Store's _write, _read and _read_one, its home's mode and the
mirror's path), kept apart to keep files small.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babysit.errors import StoreWriteError
from babysit.records import Event
from babysit.store.home import HomeMode
from babysit.store.signs import json_default

_NEW_FILE_MODE = 0o666  # less the umask, when the home mode is `keep`


class EventLog:
    jsonl_path: Path
    mode: HomeMode

    def _write(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...]) -> None:
        raise NotImplementedError

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        raise NotImplementedError

    def _read_one(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Row | None:
        raise NotImplementedError

    def add_event(self, event: Event) -> None:
        """Commit the event, then append it to the JSONL mirror (two steps: a caller retrying
        after a failure retries the one that failed, see add_event_row and mirror_event)."""
        self.add_event_row(event)
        self.mirror_event(event)

    def add_event_row(self, event: Event) -> None:
        data = json.dumps(dict(event.data), default=json_default)
        self._write(
            "INSERT INTO events (run, attempt, ts, kind, message, data) VALUES (?, ?, ?, ?, ?, ?)",
            (event.run, event.attempt, event.ts, event.kind.value, event.message, data),
        )

    def mirror_event(self, event: Event) -> None:
        line = json.dumps(
            {
                "run": event.run,
                "attempt": event.attempt,
                "ts": event.ts,
                "kind": event.kind.value,
                "message": event.message,
                "data": dict(event.data),
            },
            default=json_default,
        )
        try:
            new_mode = self.mode.file_mode or _NEW_FILE_MODE
            fd = os.open(self.jsonl_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, new_mode)
            with os.fdopen(fd, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            raise StoreWriteError(f"cannot append to {self.jsonl_path}: {exc}") from exc

    def events(self, run: str) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM events WHERE run=? ORDER BY id", (run,))
        return [_decode(r) for r in rows]

    def last_event(self, run: str, kinds: Sequence[str]) -> dict[str, Any] | None:
        """The run's newest event of one of `kinds` (decoded like events()), or None."""
        marks = ", ".join("?" for _ in kinds)
        row = self._read_one(
            f"SELECT * FROM events WHERE run=? AND kind IN ({marks}) ORDER BY id DESC LIMIT 1",
            (run, *kinds),
        )
        return None if row is None else _decode(row)


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "ts": row["ts"],
        "attempt": row["attempt"],
        "kind": row["kind"],
        "message": row["message"],
        "data": json.loads(row["data"] or "{}"),
    }
