"""All vital-sign detectors behind one door: records in, incidents out.

    v = VitalSigns(VitalsRules())
    v.new_attempt(ts)
    for rec in records:            # Metric, Progress, Activity from parse
        incidents += v.feed(rec)
    incidents += v.tick(now)       # the hang detector needs the time to pass

`babysit run` and `babysit watch` both use this, so a replay of a log decides what live
supervision decided. Pure: time comes from the records and from `now`. Memory is bounded by the
detectors' windows, whatever the length of the run.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from babysit.detect.hang import HangDetector, HangRule
from babysit.detect.numerics import NumericsDetector
from babysit.detect.rl import RLDetector, RLRule
from babysit.detect.spike import GRAD_NORM_RULE, LOSS_RULE, SpikeDetector, SpikeRule
from babysit.detect.throughput import ThroughputDetector, ThroughputRule
from babysit.records import Activity, Incident, IncidentKind, Metric, Progress

# The metrics whose recent values are kept as evidence for incidents about them.
EVIDENCE_METRICS = frozenset(
    {
        "loss",
        "grad_norm",
        "loss_scale",
        "nan_iterations",
        "tokens_per_s",
        "samples_per_s",
        "step_time_ms",
        "iters_per_s",
        "entropy",
        "kl",
        "reward_std",
        "frac_reward_zero_std",
        "val_loss",
    }
)
EVIDENCE_LEN = 16
# The source babysit.client's rows arrive on (named so by supervise). Each row carries `ts`, the
# time of the client.log() call: the step's own time, not the time babysit read it.
CLIENT_SOURCE = "client"


@dataclass(frozen=True)
class VitalsRules:
    loss: SpikeRule = LOSS_RULE
    grad_norm: SpikeRule = GRAD_NORM_RULE
    throughput: ThroughputRule = field(default_factory=ThroughputRule)
    rl: RLRule = field(default_factory=RLRule)
    hang: HangRule = field(default_factory=HangRule)


class VitalSigns:
    """The detectors of one source (`source` names it to the hang detector, which counts each
    source's steps apart). `hang` may be shared between sources (progress anywhere is
    progress); the one who owns it calls tick()."""

    def __init__(
        self,
        rules: VitalsRules | None = None,
        hang: HangDetector | None = None,
        source: str = "",
    ) -> None:
        rules = rules or VitalsRules()
        self.rules = rules
        self.source = source
        self._stamped = source == CLIENT_SOURCE
        self.loss = SpikeDetector("loss", rules.loss, IncidentKind.LOSS_SPIKE)
        self.grad_norm = SpikeDetector("grad_norm", rules.grad_norm, IncidentKind.GRAD_NORM_SPIKE)
        self.numerics = NumericsDetector()
        self.throughput = ThroughputDetector(rules.throughput)
        self.rl = RLDetector(rules.rl)
        self.hang = hang if hang is not None else HangDetector(rules.hang)
        self.metric_names: set[str] = set()
        self.recent: dict[str, deque[tuple[int | None, float]]] = {}

    def new_attempt(self, ts: float) -> None:
        """A new attempt: the step counter may start over; warm-ups and allowances apply again."""
        self.hang.new_attempt(ts)
        self.throughput.new_attempt()
        self.numerics.reset()

    def _stamp(self, values: Mapping[str, float]) -> float | None:
        """When the line says it was written (babysit.client's `ts`), or None."""
        if not self._stamped:
            return None
        ts = values.get("ts")
        return ts if ts is not None and math.isfinite(ts) else None

    def feed(self, rec: Metric | Progress | Activity) -> list[Incident]:
        if isinstance(rec, Progress):
            self.hang.progress(rec.step, rec.ts, self.source)
            return []
        if isinstance(rec, Activity):
            self.hang.activity(rec)
            return []
        out: list[Incident] = []
        values = rec.values
        if len(self.metric_names) < 512:  # bounded, whatever a trainer invents
            self.metric_names.update(values)
        if rec.step is not None:
            self.hang.progress(rec.step, rec.ts, self.source, self._stamp(values))
        else:
            # HF dicts, Lightning and tqdm bars carry no global step: still a sign of life.
            self.hang.beat(rec.ts, self.source, self._stamp(values))
        loss = values.get("loss")
        if loss is not None and (inc := self.loss.feed(rec.step, loss, rec.ts, rec.line)):
            out.append(inc)
        gn = values.get("grad_norm")
        if gn is not None and (inc := self.grad_norm.feed(rec.step, gn, rec.ts, rec.line)):
            out.append(inc)
        out += self.numerics.feed(rec)
        if (inc := self.throughput.feed(rec)) is not None:
            out.append(inc)
        if (
            "entropy" in values
            or "kl" in values
            or "reward_std" in values
            or ("frac_reward_zero_std" in values)
        ):
            out += self.rl.feed(rec)
        for name in EVIDENCE_METRICS.intersection(values):
            self.recent.setdefault(name, deque(maxlen=EVIDENCE_LEN)).append(
                (rec.step, values[name])
            )
        if out:
            # Every incident carries the metric's recent values as its evidence.
            out = [
                replace(i, window=tuple(self.recent.get(i.metric or "", ())))
                if not i.window and i.metric in self.recent
                else i
                for i in out
            ]
        return out

    def tick(self, now: float) -> list[Incident]:
        inc = self.hang.check(now)
        return [inc] if inc is not None else []
