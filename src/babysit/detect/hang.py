"""Hang (flatline): no progress for longer than the run's own cadence allows.

    d = HangDetector(HangRule())
    d.new_attempt(ts)          # the attempt started: the start-up allowance applies
    d.progress(step, ts)       # a step was printed
    d.activity(activity)       # a checkpoint save or an eval is visibly under way
    d.check(now)               # -> Incident | None, at most one per stall

Rule (defaults in HangRule), with zero code changes: the timeout is learned from the intervals
between progress observations (lines read together count as one observation): `mult` (2) times
their `quantile` (0.99) over the last `window` (200) intervals, plus `floor_s` (3 s), and never
less than `survived` (1.2) times the longest unannounced pause the run has already come through
(an epoch boundary respawning DataLoader workers, say). With a steady cadence a real hang is
flagged within about 2x the step interval + 3 s. Before the first step of an attempt, and until
`min_intervals` (5) intervals between observations are known (babysit reads the log every
0.2 s), the start-up allowance `startup_s` (30 min) applies instead. While a
checkpoint save or an eval is announced in the output (a line saying so since the last step),
the pause allowance `pause_s` (30 min) applies, counted from the announcement. A write in the
checkpoint directory (a save in progress grows its file) is a sign of life: the learned timeout
counts from the latest one instead of from the last step. The step counter going back (a
restart, a rollback) is not an anomaly. Time comes only from the records and from `now`, never
from a clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from babysit.detect.window import median, quantile
from babysit.records import Activity, Incident, IncidentKind


@dataclass(frozen=True)
class HangRule:
    mult: float = 2.0
    quantile: float = 0.99
    floor_s: float = 3.0
    survived: float = 1.2
    window: int = 200
    min_intervals: int = 5
    startup_s: float = 1800.0
    pause_s: float = 1800.0


class HangDetector:
    def __init__(self, rule: HangRule) -> None:
        self.rule = rule
        self.intervals: deque[float] = deque(maxlen=rule.window)
        self.last_progress_ts: float | None = None
        self.last_step: int | None = None
        self.started_ts: float | None = None
        self.pause: Activity | None = None
        self.alive_ts: float | None = None  # the latest write seen in the checkpoint directory
        self.flagged = False
        self.longest = 0.0  # the longest unannounced interval seen in the run
        self._added = 0  # intervals added so far (the cache key)
        self._cache: tuple[int, float] | None = None

    def new_attempt(self, ts: float) -> None:
        self.started_ts = ts
        self.last_progress_ts = None
        self.last_step = None
        self.pause = None
        self.alive_ts = None
        self.flagged = False

    def progress(self, step: int, ts: float) -> None:
        if self.last_step is not None and step == self.last_step:
            return  # the same step from another rank
        if (
            self.last_progress_ts is not None
            and ts > self.last_progress_ts  # lines read together are one observation
            and (self.last_step is None or step > self.last_step)
            and self.pause is None  # announced pauses do not teach the cadence
            and self.alive_ts is None
        ):
            self._learn(ts - self.last_progress_ts)
        self.last_step = step
        self.last_progress_ts = ts
        self.pause = None
        self.alive_ts = None
        self.flagged = False

    def beat(self, ts: float) -> None:
        """Metrics without a step (an HF dict, a Lightning bar): progress for the clock."""
        if (
            self.last_progress_ts is not None
            and ts > self.last_progress_ts
            and self.pause is None
            and self.alive_ts is None
        ):
            self._learn(ts - self.last_progress_ts)
        self.last_progress_ts = ts
        self.pause = None
        self.alive_ts = None
        self.flagged = False

    def _learn(self, interval: float) -> None:
        self.intervals.append(interval)
        self._added += 1
        self.longest = max(self.longest, interval)

    def activity(self, act: Activity) -> None:
        if act.kind == "checkpoint_write":
            self.alive_ts = act.ts
        else:
            self.pause = act
        self.flagged = False

    def learned_timeout_s(self) -> float | None:
        """max(mult * quantile(intervals) + floor_s, survived * longest), or None until enough
        intervals are known."""
        if len(self.intervals) < self.rule.min_intervals:
            return None
        if self._cache is None or self._cache[0] != self._added:
            q = quantile(list(self.intervals), self.rule.quantile)
            learned = max(self.rule.mult * q + self.rule.floor_s, self.rule.survived * self.longest)
            self._cache = (self._added, learned)
        return self._cache[1]

    def deadline(self) -> tuple[float, str] | None:
        """When the run counts as hung, and the allowance that sets it."""
        if self.pause is not None:
            return self.pause.ts + self.rule.pause_s, f"{self.pause.kind} in progress"
        learned = self.learned_timeout_s()
        if self.last_progress_ts is not None and learned is not None:
            alive = max(self.last_progress_ts, self.alive_ts or 0.0)
            return alive + learned, "learned cadence"
        since = self.last_progress_ts if self.last_progress_ts is not None else self.started_ts
        if since is None:
            return None
        return since + self.rule.startup_s, "start-up allowance"

    def check(self, now: float) -> Incident | None:
        due = self.deadline()
        if self.flagged or due is None or now < due[0]:
            return None
        self.flagged = True
        since = self.last_progress_ts if self.last_progress_ts is not None else self.started_ts
        quiet = now - (since if since is not None else now)
        typical = median(list(self.intervals)) if self.intervals else None
        cadence = f"; steps usually come every {typical:.3g}s" if typical else ""
        last = f"since step {self.last_step}" if self.last_step is not None else "since start"
        return Incident(
            IncidentKind.HANG,
            f"no progress for {quiet:.0f}s {last} (limit: {due[1]}{cadence}): the run looks hung",
            now,
            self.last_step,
            "step",
            quiet,
            typical,
            None,
        )
