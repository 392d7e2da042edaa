"""Loss and grad-norm spikes: a value far above a robust rolling baseline.

    d = SpikeDetector("loss", SpikeRule())
    d.feed(step=120, value=7.9, ts=t, line=n)   # -> Incident | None

Rule (defaults in SpikeRule): over the last `window` finite values of the metric (128), take the
median m and the robust deviation s = 1.4826 * MAD, floored at `rel_floor` * |m|. A value x is a
spike when x > m + z * s (z = 6) and x > m * (1 + min_rise) (20% for the loss, 100% for the grad
norm, so tiny absolute wiggles of a very flat curve are not spikes). The median and MAD, unlike
mean and standard deviation (OLMo-core's mean + 6 sigma over 128 values), are not dragged up by
earlier spikes. One incident per episode: the episode lasts while values stay above
m + z/2 * s. Needs `min_history` values first (20). The step counter going back (a restart, a
rollback) starts the baseline over; a step seen twice (several ranks) counts once.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from babysit.detect.window import RobustWindow
from babysit.records import Incident, IncidentKind


@dataclass(frozen=True)
class SpikeRule:
    window: int = 128
    min_history: int = 20
    z: float = 6.0
    min_rise: float = 0.2
    rel_floor: float = 0.01


LOSS_RULE = SpikeRule()
GRAD_NORM_RULE = SpikeRule(min_rise=1.0)
EVIDENCE = 16  # (step, value) pairs kept before the spike, as its evidence


class SpikeDetector:
    def __init__(self, metric: str, rule: SpikeRule, kind: IncidentKind) -> None:
        self.metric = metric
        self.rule = rule
        self.kind = kind
        self.window = RobustWindow(rule.window)
        self.recent: deque[tuple[int | None, float]] = deque(maxlen=EVIDENCE)
        self.last_step: int | None = None
        self.in_spike = False

    def reset(self) -> None:
        self.window.clear()
        self.recent.clear()
        self.in_spike = False
        self.last_step = None

    def feed(self, step: int | None, value: float, ts: float, line: int = 0) -> Incident | None:
        if not math.isfinite(value):
            return None  # the non-finite detector reports those
        if step is not None and self.last_step is not None:
            if step == self.last_step:
                return None
            if step < self.last_step:
                self.reset()
        self.last_step = step if step is not None else self.last_step
        incident = None
        if len(self.window) >= self.rule.min_history:
            med, scale = self.window.stats()
            scale = max(scale, self.rule.rel_floor * abs(med), 1e-12)
            high = value > med + self.rule.z * scale and value > med * (1 + self.rule.min_rise)
            if high and not self.in_spike:
                self.in_spike = True
                what = self.metric
                at = f" at step {step}" if step is not None else ""
                incident = Incident(
                    self.kind,
                    f"{what} spiked to {value:.4g}{at}: {value / med if med else math.inf:.1f}x "
                    "its "
                    f"rolling median {med:.4g} ({(value - med) / scale:.0f} robust sigmas)",
                    ts,
                    step,
                    self.metric,
                    value,
                    med,
                    line,
                    (*self.recent, (step, value)),
                )
            elif self.in_spike and value <= med + self.rule.z / 2 * scale:
                self.in_spike = False
        self.window.add(value)
        self.recent.append((step, value))
        return incident
