"""The run's attempts: one row each, from its launch to its outcome, and the records the restart
policy reads.

    store.add_attempt("gpt", 1, {"started": time.time(), "argv": ["torchrun", "train.py"]})
    store.update_attempt("gpt", 1, {"outcome": "crashed", "exit_code": 1})
    store.attempts("gpt")   # -> [{"number": 1, "argv": [...], "outcome": "crashed", ...}]
    store.history("gpt")    # -> [AttemptRecord(number=1, ...)]

A mixin of Store (it uses Store's _write and _read), kept apart to keep files small.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from babysit.errors import StoreError
from babysit.records import AttemptRecord, Category, Outcome
from babysit.store.rows import encode, upsert

ATTEMPT_COLUMNS = (
    "run",
    "number",
    "started",
    "ended",
    "host",
    "pid",
    "launcher_pid",
    "launcher_started",
    "argv",
    "resume_from",
    "log_dir",
    "token",
    "outcome",
    "exit_code",
    "signal",
    "first_step",
    "last_step",
    "category",
    "transient",
    "fingerprint",
    "summary",
    "stdout_offset",
    "stderr_offset",
    "resume_step",
    "suspect_host",
    "anomaly_step",
    "anomaly_kind",
    "anomaly_message",
    "skip_steps",
    "lr_scale",
    "hosts",
)


class AttemptLog:
    def _write(
        self, sql: str, params: Mapping[str, Any] | tuple[Any, ...], refused: str = ""
    ) -> None:
        raise NotImplementedError

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
        raise NotImplementedError

    def add_attempt(self, run: str, number: int, fields: Mapping[str, Any]) -> None:
        """A new attempt's row. It replaces a row of the same number only when that one was
        never launched (babysit died between writing it and starting the launcher, and the next
        babysit launches it now); any other duplicate is refused (a StoreError)."""
        row = {"run": run, "number": number, "outcome": Outcome.RUNNING.value, **fields}
        row = {k: encode(v) for k, v in row.items()}
        self._write(
            upsert("attempts", row, ("run", "number"))
            + " WHERE attempts.launcher_pid IS NULL AND attempts.outcome='running'",
            row,
            refused=f"attempt {number} of run {run!r} is already recorded (UNIQUE constraint)",
        )

    def update_attempt(self, run: str, number: int, fields: Mapping[str, Any]) -> None:
        unknown = set(fields) - set(ATTEMPT_COLUMNS)
        if unknown:
            raise StoreError(f"unknown attempt fields: {sorted(unknown)}")
        sets = ", ".join(f"{k}=:{k}" for k in fields)
        params = {k: encode(v) for k, v in fields.items()} | {"_run": run, "_num": number}
        self._write(f"UPDATE attempts SET {sets} WHERE run=:_run AND number=:_num", params)

    def attempts(self, run: str) -> list[dict[str, Any]]:
        rows = self._read("SELECT * FROM attempts WHERE run=? ORDER BY number", (run,))
        return [_decode_attempt(r) for r in rows]

    def history(self, run: str) -> list[AttemptRecord]:
        """The attempts as records, for the policy."""
        out = []
        for a in self.attempts(run):
            out.append(
                AttemptRecord(
                    number=a["number"],
                    started=a["started"],
                    ended=a["ended"],
                    outcome=Outcome(a["outcome"]),
                    exit_code=a["exit_code"],
                    signal=a["signal"],
                    first_step=a["first_step"],
                    last_step=a["last_step"],
                    category=Category(a["category"]) if a["category"] else None,
                    transient=a["transient"],
                    fingerprint=a["fingerprint"],
                    summary=a["summary"],
                    resume_step=a["resume_step"],
                    suspect_host=a["suspect_host"],
                    anomaly_step=a["anomaly_step"],
                    anomaly_kind=a["anomaly_kind"],
                )
            )
        return out


def _decode_attempt(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["argv"] = json.loads(out["argv"] or "[]")
    out["skip_steps"] = [tuple(w) for w in json.loads(out["skip_steps"] or "[]")]
    out["hosts"] = json.loads(out["hosts"]) if out["hosts"] else None
    if out["transient"] is not None:
        out["transient"] = bool(out["transient"])
    return out
