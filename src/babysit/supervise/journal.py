"""Store writes that never take the run down: queued in order, retried, reported once.

    j = Journal(store, "train", say, time.time)
    j.event(EventKind.NOTE, "hello", attempt=1, detail=42)
    j.state(RunState.RUNNING)
    j.write(UpdateAttempt("train", 1, {"last_step": 10}))   # a write record (records.py)
    j.flush()            # retry what the store refused (disk full...); call it often

Every write goes through one FIFO queue, so the store never sees them out of order. A write the
store refuses for a reason that may pass (disk full, I/O error, locked) stays at the head and is
retried on the next flush; the operator is told once, and told again when it clears. A write
refused for good (a constraint: a bug) is reported and dropped, so it cannot block the rest.
An event is two writes (its SQLite row, then its JSONL line): a failure of the second does not
repeat the first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from babysit.errors import StoreError, StoreWriteError
from babysit.records import RUN_TRANSITIONS, Event, EventKind, Level, RunState, Say
from babysit.store import Store
from babysit.store.writes import AddEventRow, MirrorEvent, SetRunState, StoreWrite

MAX_PENDING = 10_000


class Journal:
    def __init__(self, store: Store, run: str, say: Say, wall: Callable[[], float]) -> None:
        self.store = store
        self.run = run
        self.say = say
        self.wall = wall
        self.pending: deque[StoreWrite] = deque()
        self.run_state: RunState | None = None
        self.dropped = 0
        self._warned = False
        self._dropped_told = 0  # metrics samples dropped before the last "accepts again"

    def write(self, write: StoreWrite, droppable: bool = False) -> None:
        """Queue a write and try the queue. A `droppable` one (a metrics sample) is dropped
        instead of queued while the store refuses writes and MAX_PENDING are waiting, so a
        long outage cannot eat the memory; attempts, events and incidents are always kept."""
        if droppable and self.pending and len(self.pending) >= MAX_PENDING:
            self.dropped += 1
            return
        self.pending.append(write)
        self.flush()

    def flush(self) -> None:
        while self.pending:
            try:
                self.store.apply(self.pending[0])
            except StoreWriteError as exc:
                if not self._warned:
                    self._warned = True
                    self.say(
                        Level.WARN,
                        f"{exc}. Supervision goes on; the entries are kept in memory and written "
                        "when the store accepts them again.",
                    )
                return
            except StoreError as exc:
                self.say(
                    Level.ERROR,
                    f"a logbook entry was refused and is dropped (a babysit bug?): {exc}",
                )
            self.pending.popleft()
        if self._warned:
            self._warned = False
            lost = self.dropped - self._dropped_told
            self._dropped_told = self.dropped
            self.say(
                Level.INFO,
                "the store accepts writes again; "
                + (
                    f"attempts, events and incidents were all kept, but {lost} metrics "
                    "sample(s) were dropped meanwhile (the run's own logs still hold them)"
                    if lost
                    else "nothing was lost"
                ),
            )

    def event(self, kind: EventKind, message: str, attempt: int | None = None, **data: Any) -> None:
        event = Event(self.run, kind, message, self.wall(), attempt, data)
        self.write(AddEventRow(event))
        self.write(MirrorEvent(event))

    def state(
        self, state: RunState, reason: str | None = None, exit_code: int | None = None
    ) -> None:
        """Move the run to `state` (see RunState for the lifecycle)."""
        old = self.run_state
        if old is not None and state not in RUN_TRANSITIONS[old]:
            # Never expected; written anyway (the store must tell the truth), but visible.
            self.say(
                Level.WARN,
                f"internal: run state {old.value} -> {state.value} is not in the "
                "lifecycle (please report)",
            )
        self.run_state = state
        self.write(SetRunState(self.run, state, reason, exit_code))
