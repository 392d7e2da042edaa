"""What a babysit has written about its run, kept in memory: the store can be written again from it
when its database is deleted under the live run (the whole home with it, events.jsonl too).

    ledger = Ledger("train", command, cwd, config)   # as the store keeps them (redacted)
    ledger.seed(store)                 # the run's attempts and events before this babysit
    ledger.note(write)                 # each write the store took (the Journal calls it)
    ledger.restore(store, mirrored)    # the run again in a new store (events too, unless
                                       # events.jsonl was there to replay them)

Kept: the run's attempt rows (merged, one per attempt), its events (the newest MAX_EVENTS), its
state and budget start. Not kept: metrics samples, stacks, triage documents and the node
registry (the JSONL mirror does not hold them either).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babysit.records import Event, EventKind, RunState
from babysit.store import Store
from babysit.store.rebuild import Folded, fold
from babysit.store.writes import (
    AddAttempt,
    AddEventRow,
    SetBudgetFrom,
    SetRunState,
    StoreWrite,
    UpdateAttempt,
    redacted,
)

MAX_EVENTS = 50_000  # a run's events over weeks are thousands; a spam of notes must not grow RAM


class Ledger:
    def __init__(self, run: str, command: list[str], cwd: Path, config: Mapping[str, Any]) -> None:
        self.run = run
        self.command = command
        self.cwd = cwd
        self.config = config
        self.attempts: dict[int, dict[str, Any]] = {}
        self.events: deque[dict[str, Any]] = deque(maxlen=MAX_EVENTS)
        self.state: tuple[RunState, str | None, int | None] | None = None
        self.budget_from: int | None = None
        self.found: dict[str, Any] | None = None  # the run's row when this babysit started

    def seed(self, store: Store) -> None:
        """The run as the store holds it when this babysit starts (nothing for a new run)."""
        known = next((r for r in store.runs() if r["name"] == self.run), None)
        if known is None:
            return
        self.found = known
        self.budget_from = int(known["budget_from"])
        for row in store.attempts(self.run):
            self.attempts[row["number"]] = {k: v for k, v in row.items() if v is not None}
        for e in store.events(self.run):
            self.events.append({"run": self.run, **e})

    def note(self, write: StoreWrite) -> None:
        """A write the store took: remembered when it is about this run (redacted, as the store
        keeps it: store/writes.py)."""
        w = redacted(write)
        match w:
            case AddAttempt() if w.run == self.run:
                self.attempts[w.number] = {"outcome": "running", **w.fields}
            case UpdateAttempt() if w.run == self.run:
                self.attempts.setdefault(w.number, {}).update(w.fields)
            case SetRunState() if w.run == self.run:
                self.state = (w.state, w.reason, w.exit_code)
            case SetBudgetFrom() if w.run == self.run:
                self.budget_from = w.attempt
            case AddEventRow() if w.event.run == self.run:
                self.events.append(event_line(w.event))
            case _:
                pass

    def restore(self, store: Store, mirrored: bool) -> None:
        """Write the run into `store`: its events (unless `mirrored`: replayed from
        events.jsonl already; they are then also appended to a new events.jsonl), the run row
        under this babysit, its attempts as this babysit knows them, its state."""
        if not mirrored:
            store.restore(fold(self.events, store.home))
            for line in self.events:
                event = _event(line)
                if event is not None:
                    store.mirror_event(event)
        store.start_run(self.run, self.command, str(self.cwd), self.config)
        rows = {
            (self.run, n): {"run": self.run, "number": n, **row}
            for n, row in self.attempts.items()
            if "started" in row
        }
        store.restore(Folded(attempts=rows))
        if self.budget_from is not None:
            store.set_budget_from(self.run, self.budget_from)
        if self.state is not None:
            store.set_run_state(self.run, *self.state)


def event_line(event: Event) -> dict[str, Any]:
    """An event as events.jsonl holds it (the shape store/rebuild.py folds)."""
    return {
        "run": event.run,
        "attempt": event.attempt,
        "ts": event.ts,
        "kind": event.kind.value,
        "message": event.message,
        "data": json.loads(json.dumps(dict(event.data), default=repr)),
    }


def _event(line: Mapping[str, Any]) -> Event | None:
    try:
        kind = EventKind(line["kind"])
    except ValueError:
        return None  # a kind this babysit does not know (written by a newer one)
    return Event(line["run"], kind, line["message"], line["ts"], line["attempt"], line["data"])
