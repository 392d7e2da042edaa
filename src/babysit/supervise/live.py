"""What the loop knows about the attempt it watches (Live), and the status line it tells
(StatusSink): shared by the attempt's loop (attempt.py), its judge and the in-job supervisor.

    live = Live(number=3, handle=handle, followers=followers, started=time.time(),
                pipeline=pipeline)
    live.last_step   # the pipeline's last training step
    live.logs()      # its stdout and stderr, and the files the engine adds for triage
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from babysit.engines.process import Handle
from babysit.looks import Evidence, Look, StackReport
from babysit.records import Decision, Incident
from babysit.sources.follow import Follower
from babysit.supervise.pipeline import Pipeline

RANK_HOSTS_S = 10.0  # how often a multi-node engine's rank -> node map is refreshed


class StatusSink(Protocol):
    """The live status line (views/console.py's LiveStatus, which the CLI hands over): told
    what the loop sees; each call returns at once and never raises."""

    def progress(self, attempt: int, step: int | None, values: Mapping[str, object]) -> None: ...

    def incident(self, attempt: int, kind: str, message: str, step: int | None = None) -> None: ...

    def output(self, data: bytes) -> None: ...

    def share_terminal(self, lock: threading.Lock, clean: Callable[[], bool]) -> None: ...


@dataclass
class Live:
    """What the loop knows about the attempt it is watching."""

    number: int
    handle: Handle
    followers: list[Follower]
    started: float
    pipeline: Pipeline
    flushed_at: float = 0.0
    pulsed_at: float = 0.0
    saved_scan_at: float = 0.0  # the next look for a finished save (monotonic)
    mapped_at: float = 0.0  # the next refresh of the ranks' nodes (monotonic)
    map_every: float = RANK_HOSTS_S  # doubles while a refresh learns nothing new
    metrics_flushed: int = -1  # pipeline.metric_records at the last metrics sample
    hang: Incident | None = None  # set when the hang detector fired
    rollback: Decision | None = None  # a NaN or unsettled spike: end it, roll back (or page)
    anomaly: Incident | None = None  # the incident behind `rollback`
    stacks: StackReport | None = None  # the grouped stacks taken before a hang kill
    look: Look | None = None  # the latest look at the hung attempt
    evidence: Evidence | None = None  # what the latest two looks said
    next_look: float = 0.0  # when to look again (wall time)
    cadence_saved: float | None = None  # the hang timeout last saved (supervise/cadence.py)
    resume_step: int | None = None
    killed: bool = False  # babysit ended it (a hang, a rollback), not the operator
    # Files the engine adds for triage (torchrun: its workers' error files, as text).
    engine_logs: Callable[[], list[Path]] = field(default=lambda: [], repr=False)

    @property
    def first_step(self) -> int | None:
        return self.pipeline.first_step

    @property
    def last_step(self) -> int | None:
        return self.pipeline.last_step

    def logs(self) -> list[Path]:
        own = [f.path for f in self.followers if f.stream in ("stdout", "stderr")]
        return own + self.engine_logs()

    def hung_s(self, ended: float) -> float:
        """How long the attempt sat hung before babysit killed it (0: not killed for a hang)."""
        if not self.killed or self.hang is None:
            return 0.0
        return max(0.0, ended - (self.hang.ts - (self.hang.value or 0.0)))
