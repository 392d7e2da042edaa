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

Every CHECK_S the journal also looks at the database file itself (one stat): deleted (the home
with it), emptied, replaced or damaged under the live run, SQLite would go on writing into a file
nobody will ever read. The journal says so loudly, moves what is left aside, and writes the store
again: from events.jsonl when it is still there, from what it kept in memory (supervise/ledger.py)
when not. The run goes on meanwhile; the logs are followed through their open descriptors.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from babysit.errors import StoreCorrupt, StoreError, StoreWriteError
from babysit.records import RUN_TRANSITIONS, Event, EventKind, Level, RunState, Say
from babysit.store import Store
from babysit.store.rebuild import NOT_REBUILT, fold, move_aside, read_events
from babysit.store.writes import AddEventRow, MirrorEvent, SetRunState, StoreWrite
from babysit.supervise.ledger import Ledger

MAX_PENDING = 10_000
CHECK_S = 3.0  # how often the database file is looked at (one stat)


class Journal:
    def __init__(
        self,
        store: Store,
        run: str,
        say: Say,
        wall: Callable[[], float],
        monotonic: Callable[[], float] = time.monotonic,
        ledger: Ledger | None = None,
    ) -> None:
        self.store = store
        self.run = run
        self.say = say
        self.wall = wall
        self.monotonic = monotonic
        self.ledger = ledger
        self.lost: str | None = None  # what happened to the store, while it cannot be rebuilt
        self._checked_at = monotonic()
        self._lock: weakref.finalize[[int], Journal] | None = None  # the run's lock, made again
        self._opened: Store | None = None  # a store the journal opened itself (after a rebuild)
        self.pending: deque[StoreWrite] = deque()
        self.run_state: RunState | None = None
        self.dropped = 0
        self._warned = False
        self._dropped_told = 0  # metrics samples dropped before the last "accepts again"
        # Alerts: sees every write as it is queued (its events, the progress, the metrics);
        # set by RunContext.open_journal. It must return at once (babysit.alerts queues).
        self.listener: Callable[[StoreWrite], None] | None = None

    def write(self, write: StoreWrite, droppable: bool = False) -> None:
        """Queue a write and try the queue. A `droppable` one (a metrics sample) is dropped
        instead of queued while the store refuses writes and MAX_PENDING are waiting, so a
        long outage cannot eat the memory; attempts, events and incidents are always kept."""
        if self.listener is not None:
            self._tell(write)
        if droppable and self.pending and len(self.pending) >= MAX_PENDING:
            self.dropped += 1
            return
        self.pending.append(write)
        self.flush()

    def _tell(self, write: StoreWrite) -> None:
        """The listener's bug is said once and never stops the run (nor the write)."""
        assert self.listener is not None
        try:
            self.listener(write)
        except Exception as exc:
            self.listener = None
            self.say(Level.WARN, f"internal: alerts are off for this run after an error "
                     f"({type(exc).__name__}: {exc}); please report")

    def flush(self) -> None:
        self._watch_store()
        recovered = False  # once per flush: a write the new store refuses too is not retried
        while self.pending and self.lost is None:
            try:
                self.store.apply(self.pending[0])
            except (StoreCorrupt, StoreWriteError) as exc:
                # A refused write may be the first sign of a database or home gone: look now.
                what = str(exc) if isinstance(exc, StoreCorrupt) else self.store.check()
                if what is not None and not recovered:
                    recovered = True
                    self._recover(what)
                    continue
                if isinstance(exc, StoreCorrupt):
                    self.say(Level.ERROR, f"a logbook entry is dropped: {exc}")
                    self.pending.popleft()
                    continue
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
            else:
                if self.ledger is not None:
                    self.ledger.note(self.pending[0])
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

    def close(self) -> None:
        """Close what the journal opened itself: the store it wrote again, the lock it took
        again (the store it was given is its opener's to close)."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None
        if self._lock is not None:
            self._lock()
            self._lock = None

    # -- the database file under the live run ---------------------------------------------------

    def _watch_store(self) -> None:
        now = self.monotonic()
        if now - self._checked_at < CHECK_S:
            return
        self._checked_at = now
        what = self.lost or self.store.check()
        if what is not None:
            self._recover(what)

    def _recover(self, what: str) -> None:
        """Write the store again (see the module docstring); on failure, keep the writes queued
        and try again at the next check."""
        old, first = self.store, self.lost is None
        home, db = old.home, old.db_path
        if first:
            self.say(
                Level.ERROR,
                f"{what} while babysit was supervising run {self.run!r}: what babysit wrote since "
                "went into a file nobody will read. babysit writes the store again now; the run "
                "goes on.",
            )
        with contextlib.suppress(Exception):
            old.close()
        try:
            replaced = "replaced" in what
            moved = [] if replaced else move_aside(db)
            store = Store.open(home, mode=old.mode, replace_lost=True)
            source = self._refill(store)
        except (StoreError, OSError) as exc:
            self.lost = what
            if first:
                self.say(
                    Level.ERROR,
                    f"cannot write the store again in {home}: {exc}. Supervision goes on; the "
                    "entries are kept in memory, and babysit tries again every few seconds.",
                )
            return
        if self._opened is not None:
            with contextlib.suppress(Exception):
                self._opened.close()
        self.store, self.lost, self._opened = store, None, store
        self._relock()
        kept = f"; what was left of the old one is kept as {moved[0].name}" if moved else ""
        logs = (
            " The running attempt's log files went with the home: babysit reads on through the "
            "open files, but what was in them is not on disk any more."
            if "home" in what
            else ""
        )
        self.say(
            Level.WARN,
            f"the store is back in {db}, written from {source}{kept}. {NOT_REBUILT.capitalize()} "
            f"from before are not in it.{logs}",
        )

    def _refill(self, store: Store) -> str:
        """The run (and, from events.jsonl, every run of the home) into a new store; where it
        came from, in words."""
        if store.runs():  # a store someone put there (`babysit rebuild` under the live run)
            source = f"the new {store.db_path.name} and what this babysit kept in memory"
            # Another run's babysit may have written it from its own memory: this run's events
            # are in it only when this run is.
            mirrored = any(r["name"] == self.run for r in store.runs())
        elif store.jsonl_path.is_file():
            store.restore(fold(read_events(store.jsonl_path), store.home))
            source, mirrored = f"{store.jsonl_path.name} and what this babysit kept in memory", True
        else:
            source = (
                f"what this babysit kept in memory ({store.jsonl_path.name} was gone too: other "
                "runs of this home are not in it)"
            )
            mirrored = False
        if self.ledger is not None:
            self.ledger.restore(store, mirrored)
        return source

    def _relock(self) -> None:
        """The home was deleted with the run's lock file: take it again, so that a second
        babysit on this run is still refused."""
        path = self.store.home / "runs" / self.run / "supervisor.lock"
        if path.exists():
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, f"pid {os.getpid()} (lock taken again: the home was deleted)\n".encode())
        except OSError:
            os.close(fd)
            return
        if self._lock is not None:
            self._lock()
        self._lock = weakref.finalize(self, os.close, fd)  # held while this babysit lives

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
