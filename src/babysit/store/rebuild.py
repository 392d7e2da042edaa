"""The store rebuilt from its JSONL mirror: `babysit rebuild`, and a babysit whose database was
deleted, emptied or damaged under it.

    folded = fold(read_events(home / "events.jsonl"), home)  # runs, attempts, events...
    store.restore(folded)                                    # into a database, one commit
    report = rebuild(home)    # `babysit rebuild`: the bad db moved aside (never deleted)

events.jsonl holds every logbook event (store/events.py writes each line right after its row),
and the events say enough to draw the runs again: each run's command, state and budget start;
each attempt's start, argv, launcher, outcome, exit code, last step and cause; the incidents.
What only the database held is not rebuilt: metrics samples, stack reports, triage documents,
the node registry, and the log offsets (a re-attached babysit reads the logs from the start).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from babysit.errors import StoreError
from babysit.store.dbfile import DB_NAME, JSONL_NAME
from babysit.store.home import HomeMode
from babysit.store.sqlite import Store

FINAL = ("succeeded", "failed", "stopped")
NOT_REBUILT = "metrics samples, stack reports, triage documents and the node registry"


@dataclass
class Folded:
    """What the events say, as rows of the store's tables (store.restore writes them)."""

    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    attempts: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    incidents: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0  # lines that were not an event (a torn last line, garbage)


def read_events(path: Path, skipped: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """The events of a JSONL mirror, in order; unreadable lines are skipped (and counted in
    skipped[0] when given). Raises OSError when the file cannot be read."""
    with path.open("rb") as fh:
        for raw in fh:
            try:
                event = json.loads(raw)
            except ValueError:
                event = None
            if not _is_event(event):
                if raw.strip() and skipped is not None:
                    skipped[0] += 1
                continue
            yield event


def _is_event(e: Any) -> bool:
    return (
        isinstance(e, dict)
        and isinstance(e.get("run"), str)
        and isinstance(e.get("kind"), str)
        and isinstance(e.get("ts"), (int, float))
        and (e.get("attempt") is None or isinstance(e.get("attempt"), int))
    )


def fold(events: Iterable[Mapping[str, Any]], home: Path) -> Folded:
    """The runs, attempts, events and incidents the events describe, in order."""
    out = Folded()
    for e in events:
        _fold_one(out, e, home)
    return out


def _fold_one(out: Folded, e: Mapping[str, Any], home: Path) -> None:
    name, kind, ts = e["run"], e["kind"], float(e["ts"])
    number: int | None = e.get("attempt")
    raw = e.get("data")
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    message = str(e.get("message") or "")
    out.events.append(
        {
            "run": name,
            "attempt": number,
            "ts": ts,
            "kind": kind,
            "message": message,
            "data": json.dumps(data),
        }
    )
    run = out.runs.get(name)
    if run is None:
        run = out.runs[name] = {
            "name": name,
            "created": ts,
            "state": "starting",
            "reason": None,
            "exit_code": None,
            "command": [],
            "cwd": "",
            "budget_from": 1,
        }
    run["updated"] = ts
    row = out.attempts.get((name, number)) if number is not None else None

    def attempt() -> dict[str, Any]:
        assert number is not None
        found = out.attempts.get((name, number))
        if found is None:
            log_dir = home.absolute() / "runs" / name / f"attempt-{number:04d}"
            found = out.attempts[(name, number)] = {
                "run": name,
                "number": number,
                "started": ts,
                "outcome": "running",
                "log_dir": str(log_dir),
            }
        return found

    def state(value: str, reason: str | None = None, code: int | None = None) -> None:
        run.update(state=value, reason=reason, exit_code=code)

    if kind == "run_started":
        if run["state"] in FINAL:  # started again after it ended: a fresh budget
            run["budget_from"] = 1 + sum(1 for (r, _) in out.attempts if r == name)
        run["command"] = data.get("command") or run["command"]
        run["cwd"] = data.get("cwd") or run["cwd"]
        state("starting")
    elif kind == "attempt_started" and number is not None:
        a = attempt()
        a.update(started=ts, argv=data.get("argv"), launcher_pid=data.get("launcher_pid"))
        a["resume_from"] = data.get("resume_from")
        state("running")
    elif kind == "reattached" and number is not None:
        attempt()
        state("running")
    elif kind == "attempt_ended" and number is not None:
        a = attempt()
        found = data.get("verdict")
        verdict: dict[str, Any] = found if isinstance(found, dict) else {}
        a.update(
            ended=ts,
            outcome=data.get("outcome") or "lost",
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            last_step=data.get("last_step"),
            category=verdict.get("category"),
            transient=verdict.get("transient"),
            fingerprint=verdict.get("fingerprint"),
            summary=verdict.get("summary")
            or (message if data.get("outcome") != "succeeded" else None),
        )
    elif kind in ("restart_scheduled", "rollback"):
        state("backoff", message)
    elif kind == "succeeded":
        state("succeeded", message, 0)
    elif kind == "gave_up":
        code = data.get("exit_code")
        state("failed", message, code if isinstance(code, int) else None)
    elif kind == "stop_requested":
        state("stopping", message)
    elif kind == "stopped":
        state("stopped", message, 5)
        if row is not None and row.get("outcome") == "running":
            row.update(ended=ts, outcome="stopped", summary=message)
    elif kind == "incident":
        out.incidents.append(
            {
                "run": name,
                "attempt": number,
                "ts": ts,
                "kind": str(data.get("incident") or "unknown"),
                "category": str(data.get("category") or "unknown"),
                "step": data.get("step"),
                "metric": data.get("metric"),
                "message": message,
            }
        )


# -- `babysit rebuild` -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Rebuilt:
    db: Path
    moved_aside: list[Path]  # the old database (and its -wal, -shm), renamed, never deleted
    runs: int
    attempts: int
    events: int
    skipped: int  # unreadable lines of events.jsonl


def aside_name(path: Path, now: float | None = None) -> Path:
    """babysit.db -> babysit.db.bad-20260101T040000 (a number appended when that exists)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now if now is not None else time.time()))
    candidate = path.with_name(f"{path.name}.bad-{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.bad-{stamp}-{n}")
    return candidate


def move_aside(db: Path) -> list[Path]:
    """Rename the database and its -wal and -shm files out of the way (never delete them)."""
    moved = []
    target = aside_name(db)
    for suffix in ("", "-wal", "-shm"):
        src = db.with_name(db.name + suffix)
        if src.exists():
            dst = target.with_name(target.name + suffix)
            os.replace(src, dst)
            moved.append(dst)
    return moved


def check_rebuildable(home: Path) -> Path:
    """events.jsonl of the home, or a StoreError saying why nothing can be rebuilt."""
    jsonl = home / JSONL_NAME
    if not jsonl.is_file():
        raise StoreError(
            f"nothing to rebuild from: {jsonl} does not exist (is {home} a babysit home? pass "
            "--home DIR)"
        )
    if not os.access(jsonl, os.R_OK):
        raise StoreError(f"cannot read {jsonl}: permission denied")
    return jsonl


def rebuild(home: Path, mode: HomeMode | None = None) -> Rebuilt:
    """`babysit rebuild`: move the home's database aside (never delete it) and replay
    events.jsonl into a fresh one. Raises StoreError (nothing to rebuild from, cannot write)."""
    home = home.expanduser()
    jsonl = check_rebuildable(home)
    skipped = [0]
    try:
        folded = fold(read_events(jsonl, skipped), home)  # read all before moving anything
    except OSError as exc:
        raise StoreError(f"cannot read {jsonl}: {exc}") from exc
    folded.skipped = skipped[0]
    db = home / DB_NAME
    try:
        moved = move_aside(db)
    except OSError as exc:
        raise StoreError(f"cannot move {db} aside: {exc} (is the home writable?)") from exc
    with Store.open(home, mode=mode, replace_lost=True) as store:
        store.restore(folded)
    return Rebuilt(
        db, moved, len(folded.runs), len(folded.attempts), len(folded.events), folded.skipped
    )
