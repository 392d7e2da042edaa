"""Throughput drop: tokens/s (or samples/s, or step time) sustained worse than its baseline.

    d = ThroughputDetector(ThroughputRule())
    d.feed(metric_record)   # -> Incident | None

Rule (defaults in ThroughputRule): the first metric present among tokens_per_s, samples_per_s,
iters_per_s, step_time_ms is followed. The first `warmup` values of each attempt are ignored
(compilation, cache warm-up). The baseline is the median of the last `window` healthy values
(100), once there are `min_history` (20). A value is degraded when it is worse than the baseline
by at least `drop` (30%): lower for rates, higher for step time. `sustain` degraded values in a
row (10) make one incident; one slow step (a checkpoint, an eval, a GC pause) never does.
Degraded values do not enter the baseline, so a slow node cannot become the new normal. The
episode ends after 3 healthy values in a row.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from babysit.detect.window import RobustWindow
from babysit.records import Incident, IncidentKind, Metric

RATES = ("tokens_per_s", "samples_per_s", "iters_per_s")
TIMES = ("step_time_ms",)


@dataclass(frozen=True)
class ThroughputRule:
    window: int = 100
    min_history: int = 20
    warmup: int = 10
    drop: float = 0.3
    sustain: int = 10
    recover: int = 3


class ThroughputDetector:
    def __init__(self, rule: ThroughputRule) -> None:
        self.rule = rule
        self.metric: str | None = None
        self.window = RobustWindow(rule.window)
        self.recent: deque[tuple[int | None, float]] = deque(maxlen=rule.sustain + 6)
        self.seen_this_attempt = 0
        self.degraded_run = 0
        self.healthy_run = 0
        self.in_drop = False
        self.last_step: int | None = None

    def new_attempt(self) -> None:
        """A new attempt warms up again; the baseline (the run's normal speed) is kept."""
        self.seen_this_attempt = 0
        self.degraded_run = 0
        self.last_step = None

    def _value(self, m: Metric) -> float | None:
        """The followed series. tqdm prints `it/s` above 1 it/s and `s/it` below: both are one
        series (step time = 1000 / rate), or a slowdown would hide in the switch."""
        v = m.values.get(self.metric or "")
        if v is not None:
            return v
        if self.metric == "iters_per_s" and (t := m.values.get("step_time_ms")):
            return 1000.0 / t
        if self.metric == "step_time_ms" and (r := m.values.get("iters_per_s")):
            return 1000.0 / r
        return None

    def feed(self, m: Metric) -> Incident | None:
        if self.metric is None:
            self.metric = next((k for k in (*RATES, *TIMES) if k in m.values), None)
        if self.metric is None:
            return None
        value = self._value(m)
        if value is None or not math.isfinite(value) or value <= 0:
            return None
        if m.step is not None and self.last_step is not None:
            if m.step == self.last_step:
                return None
            if m.step < self.last_step:
                self.new_attempt()
        self.last_step = m.step if m.step is not None else self.last_step
        self.seen_this_attempt += 1
        if self.seen_this_attempt <= self.rule.warmup:
            return None
        self.recent.append((m.step, value))
        if len(self.window) < self.rule.min_history:
            self.window.add(value)
            return None
        base, _ = self.window.stats()
        lower_is_better = self.metric in TIMES
        ratio = (base / value) if lower_is_better else (value / base)  # < 1: slower
        if ratio <= 1 - self.rule.drop:
            self.degraded_run += 1
            self.healthy_run = 0
        else:
            self.healthy_run += 1
            self.degraded_run = 0
            self.window.add(value)
            if self.in_drop and self.healthy_run >= self.rule.recover:
                self.in_drop = False
            return None
        if self.degraded_run >= self.rule.sustain and not self.in_drop:
            self.in_drop = True
            at = f" at step {m.step}" if m.step is not None else ""
            return Incident(
                IncidentKind.THROUGHPUT_DROP,
                f"{self.metric} {value:.4g}{at}: {(1 - ratio) * 100:.0f}% worse than its baseline "
                f"{base:.4g} for {self.degraded_run} values in a row (a slow node, a slow "
                "filesystem, thermal throttling?)",
                m.ts,
                m.step,
                self.metric,
                value,
                base,
                m.line,
                tuple(self.recent),
            )
        return None
