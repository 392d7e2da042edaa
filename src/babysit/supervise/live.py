"""What the supervisor knows about the attempt it watches, and its seams (clock, sleep, output).

    live = Live(number, handle, followers, started, pipeline)
    live.hang, live.rollback, live.killed       # set as the loop learns them

Shared by supervisor.py and ending.py; nothing else uses it.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from babysit.act import process
from babysit.records import Decision, Incident, StackReport
from babysit.sources.follow import Follower
from babysit.supervise.pipeline import Pipeline


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
class Live:
    """What the loop knows about the attempt it is watching."""

    number: int
    handle: process.Handle
    followers: list[Follower]
    started: float
    pipeline: Pipeline
    flushed_at: float = 0.0
    pulsed_at: float = 0.0
    metrics_flushed: int = -1  # pipeline.metric_records at the last metrics sample
    hang: Incident | None = None  # set when the hang detector fired
    rollback: Decision | None = None  # a NaN or unsettled spike: end it, roll back (or page)
    anomaly: Incident | None = None  # the incident behind `rollback`
    stacks: StackReport | None = None  # the grouped stacks taken before a hang kill
    resume_step: int | None = None
    killed: bool = False  # babysit ended it (a hang, a rollback), not the operator

    @property
    def first_step(self) -> int | None:
        return self.pipeline.first_step

    @property
    def last_step(self) -> int | None:
        return self.pipeline.last_step
