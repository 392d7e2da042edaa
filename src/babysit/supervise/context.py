"""What every room of supervise shares about the run: its settings, its seams, its journal.

    ctx = RunContext(cfg, ["python", "train.py"], "train", home, cwd, say, Seams(), LocalEngine())
    ctx.open_journal(store)     # once the store is open (Supervisor.run)
    ctx.journal.event(...)
    ctx.stop_signals            # the operator's signals, appended by a signal handler

Seams are the side effects the loop uses (clock, sleep, randomness, the terminal), replaceable
in tests; the engine is the seam for processes (engines/base.py).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from babysit.alerts import Alerts
from babysit.config import Config, config_document
from babysit.engines import Engine
from babysit.records import Say
from babysit.redact import redact_argv
from babysit.store import Store
from babysit.store.writes import AddEventRow, AddMetrics, StoreWrite, UpdateAttempt
from babysit.supervise.journal import Journal
from babysit.supervise.ledger import Ledger


@dataclass
class Seams:
    """The side effects the loop uses, replaceable in tests."""

    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    uniform: Callable[[], float] = random.random
    stdout: IO[bytes] | None = field(default_factory=lambda: _std_buffer(sys.stdout))
    stderr: IO[bytes] | None = field(default_factory=lambda: _std_buffer(sys.stderr))


def _std_buffer(stream: Any) -> IO[bytes] | None:
    return getattr(stream, "buffer", None)


@dataclass
class RunContext:
    cfg: Config
    command: list[str]
    name: str
    home: Path
    cwd: Path
    say: Say
    seams: Seams
    engine: Engine
    stop_signals: list[int] = field(default_factory=list)
    _journal: Journal | None = None
    alerts: Alerts | None = None  # [alerts] / --notify: see open_alerts

    def open_alerts(self) -> None:
        """The run's alerts, when configured. Raises ConfigError for a notify URL apprise
        refuses: before anything starts. They start with the journal (open_journal)."""
        home = "" if self.home == Path(".babysit") else f" --home {self.home}"
        self.alerts = Alerts.open(
            self.cfg.alerts,
            run=self.name,
            host=self.engine.host,
            more=f"babysit logbook {self.name}{home}",
            workdir=self.run_dir / "alerts",
            say=self.say,
            hang_pages=self.cfg.hang.action == "alert",
        )

    @property
    def run_dir(self) -> Path:
        return self.home / "runs" / self.name

    @property
    def journal(self) -> Journal:
        assert self._journal is not None, "the journal is set when the store is open"
        return self._journal

    def open_journal(self, store: Store) -> Journal:
        """The journal, with a ledger of the run seeded from the store: what it needs to write
        the store again if the database is deleted under the run."""
        config = config_document(self.cfg)
        ledger = Ledger(self.name, redact_argv(self.command), self.cwd, config)
        ledger.seed(store)
        self._journal = Journal(
            store, self.name, self.say, self.seams.wall, self.seams.monotonic, ledger
        )
        if self.alerts is not None:
            # Alerts see what the journal writes, off the supervisor's path (their own threads).
            self._journal.listener = self._tell_alerts
            self.alerts.start()
        return self._journal

    def _tell_alerts(self, write: StoreWrite) -> None:
        """The writes alerts need: each event once (its row, not its JSONL mirror), the step
        counter (a `recovered` needs progress) and the metrics (the loss chart)."""
        assert self.alerts is not None
        if isinstance(write, AddEventRow):
            self.alerts.event(write.event)
        elif isinstance(write, UpdateAttempt) and write.fields.get("last_step") is not None:
            self.alerts.progress(write.number, int(write.fields["last_step"]))
        elif isinstance(write, AddMetrics) and write.step is not None:
            self.alerts.metrics(write.step, write.values)

    def close_journal(self) -> None:
        """What the journal opened itself (a store written again mid-run), closed at the end;
        the alerts still on their way get [alerts] drain_s to go out."""
        if self.alerts is not None:
            self.alerts.close()
        if self._journal is not None:
            self._journal.close()

    def get_journal(self) -> Journal:
        """For the rooms that take the journal as a callable (it exists only once the store is
        open)."""
        return self.journal
