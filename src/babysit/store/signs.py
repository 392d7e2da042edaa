"""The vital signs a run leaves in the logbook: incidents (a loss spike, a stall), triage's
verdicts and their fingerprints, sampled metrics.

    store.add_incident("gpt", 3, incident)
    store.add_diagnosis("gpt", 3, time.time(), diagnosis_document)
    store.seen_before(fingerprint)      # -> earlier verdicts with it, newest first
    store.progress_samples("gpt")       # -> [(attempt, ts, step), ...]

A mixin of Store (it uses Store's _write and _read), kept apart to keep files small.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babysit.records import Incident


def json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    return repr(value)


class VitalSigns:
    def _write(self, sql: str, params: Mapping[str, Any] | tuple[Any, ...]) -> None:
        raise NotImplementedError

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        raise NotImplementedError

    def add_incident(self, run: str, attempt: int | None, inc: Incident) -> None:
        self._write(
            "INSERT INTO incidents (run, attempt, ts, kind, category, step, metric, value, "
            "baseline, line, message, window) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                attempt,
                inc.ts,
                inc.kind.value,
                inc.category.value,
                inc.step,
                inc.metric,
                _finite(inc.value),
                _finite(inc.baseline),
                inc.line,
                inc.message,
                json.dumps([[s, _json_number(v)] for s, v in inc.window]),
            ),
        )

    def incidents(self, run: str) -> list[dict[str, Any]]:
        return self._run_rows("incidents", run, "window", "[]")

    def _run_rows(self, table: str, run: str, column: str, empty: str) -> list[dict[str, Any]]:
        """A run's rows of `table` in order, with the JSON `column` decoded."""
        out = []
        for r in self._read(f"SELECT * FROM {table} WHERE run=? ORDER BY id", (run,)):
            d = dict(r)
            d[column] = json.loads(d[column] or empty)
            out.append(d)
        return out

    def add_diagnosis(
        self, run: str, attempt: int | None, ts: float, document: Mapping[str, Any]
    ) -> None:
        """A triage verdict: the JSON document of `babysit triage --json` (its seen_before,
        derived from this very table, is not stored)."""
        document = {k: v for k, v in document.items() if k != "seen_before"}
        suspect = document.get("suspect") or {}
        transient = document.get("transient")
        self._write(
            "INSERT INTO diagnoses (run, attempt, ts, category, transient, suspect, host, rank, "
            "gpu, fingerprint, confidence, summary, document) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                attempt,
                ts,
                document["category"],
                None if transient is None else int(bool(transient)),
                suspect.get("kind"),
                suspect.get("host"),
                suspect.get("rank"),
                suspect.get("gpu"),
                document.get("fingerprint"),
                document.get("confidence"),
                document["summary"],
                json.dumps(document, default=json_default),
            ),
        )

    def diagnoses(self, run: str) -> list[dict[str, Any]]:
        return self._run_rows("diagnoses", run, "document", "{}")

    def seen_before(
        self, fingerprint: str, before: float | None = None, limit: int = 20
    ) -> list[dict[str, Any]]:
        """Earlier verdicts with this fingerprint, newest first (any run)."""
        rows = self._read(
            "SELECT run, attempt, ts, category, host, rank, gpu, summary FROM diagnoses "
            "WHERE fingerprint=? AND ts<? ORDER BY ts DESC LIMIT ?",
            (fingerprint, before if before is not None else float("inf"), limit),
        )
        return [dict(r) for r in rows]

    def add_metrics(
        self,
        run: str,
        attempt: int | None,
        ts: float,
        step: int | None,
        values: Mapping[str, float],
    ) -> None:
        """The latest value of each metric, sampled (the caller decides how often)."""
        vals = json.dumps({k: _json_number(v) for k, v in values.items()})
        self._write(
            "INSERT INTO metrics (run, attempt, ts, step, vals) VALUES (?, ?, ?, ?, ?)",
            (run, attempt, ts, step, vals),
        )

    def metrics(self, run: str, limit: int = 10_000) -> list[dict[str, Any]]:
        rows = self._read(
            "SELECT * FROM (SELECT * FROM metrics WHERE run=? ORDER BY ts DESC LIMIT ?) "
            "ORDER BY ts",
            (run, limit),
        )
        return [dict(r) | {"vals": json.loads(r["vals"])} for r in rows]

    def progress_samples(self, run: str) -> list[tuple[int | None, float, int]]:
        """(attempt, ts, step) of the run's metrics samples that carry a step, oldest first:
        when each attempt was seen at which step (views/goodput.py). Only these three
        columns and no JSON decoding: a long run holds hundreds of thousands of samples."""
        rows = self._read(
            "SELECT attempt, ts, step FROM metrics WHERE run=? AND step IS NOT NULL ORDER BY ts",
            (run,),
        )
        return [(r[0], r[1], r[2]) for r in rows]


def _finite(value: float | None) -> float | None:
    """SQLite stores NaN as NULL; keep +-inf, which it can store."""
    return None if value is None or value != value else value


def _json_number(value: float) -> float | str:
    """JSON has no NaN or inf: those travel as the strings "nan", "inf", "-inf"."""
    return value if math.isfinite(value) else str(value)
