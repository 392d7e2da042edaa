"""RL vital signs: policy entropy collapse, KL blow-up, no learning signal.

    d = RLDetector(RLRule())
    d.feed(metric_record)   # -> list[Incident]

Rules (defaults in RLRule); each needs its condition `sustain` values in a row and reports once
until the condition clears:
- entropy_collapse: `entropy` below `entropy_frac` (10%) of its early baseline (the median of its
  first `baseline_n` = 20 values) for 5 values in a row. verl's maintainers call actor/entropy
  the metric to watch; a collapsed policy stops exploring.
- kl_blowup: `kl` above `kl_factor` (10x) the median of its last `kl_window` (50) values and
  above `kl_floor` (0.1) for 3 values in a row: the policy runs away from the reference. (A KL
  that grows slowly, as GRPO's does, is not a blow-up.)
- no_learning_signal: `frac_reward_zero_std` >= 0.95, or `reward_std` <= 1e-6, for 10 values in
  a row: every group's rewards are equal, so GRPO's advantages are zero and nothing is learned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from babysit.detect.window import RobustWindow, median
from babysit.records import Incident, IncidentKind, Metric


@dataclass(frozen=True)
class RLRule:
    baseline_n: int = 20
    entropy_frac: float = 0.1
    entropy_sustain: int = 5
    kl_factor: float = 10.0
    kl_floor: float = 0.1
    kl_window: int = 50
    kl_sustain: int = 3
    zero_std_frac: float = 0.95
    signal_sustain: int = 10


class _Condition:
    """Counts a condition's values in a row and fires once per episode."""

    def __init__(self, sustain: int) -> None:
        self.sustain = sustain
        self.run = 0
        self.fired = False

    def update(self, holds: bool) -> bool:
        if not holds:
            self.run, self.fired = 0, False
            return False
        self.run += 1
        if self.run >= self.sustain and not self.fired:
            self.fired = True
            return True
        return False


class RLDetector:
    def __init__(self, rule: RLRule) -> None:
        self.rule = rule
        self.early: dict[str, list[float]] = {"entropy": []}
        self.kl_recent = RobustWindow(rule.kl_window, refresh=4)
        self.base: dict[str, float] = {}
        self.entropy = _Condition(rule.entropy_sustain)
        self.kl = _Condition(rule.kl_sustain)
        self.signal = _Condition(rule.signal_sustain)

    def _baseline(self, name: str, value: float) -> float | None:
        if name in self.base:
            return self.base[name]
        early = self.early[name]
        early.append(value)
        if len(early) >= self.rule.baseline_n:
            self.base[name] = median(early)
            del early[:]
        return None

    def feed(self, m: Metric) -> list[Incident]:
        out: list[Incident] = []
        at = f" at step {m.step}" if m.step is not None else ""
        ent = m.values.get("entropy")
        if ent is not None and math.isfinite(ent):
            base = self._baseline("entropy", ent)
            if (
                base is not None
                and base > 0
                and self.entropy.update(ent < self.rule.entropy_frac * base)
            ):
                out.append(
                    Incident(
                        IncidentKind.ENTROPY_COLLAPSE,
                        f"policy entropy collapsed to {ent:.4g}{at}, {ent / base * 100:.1f}% "
                        f"of its early level {base:.4g}: the policy has stopped exploring",
                        m.ts,
                        m.step,
                        "entropy",
                        ent,
                        base,
                        m.line,
                    )
                )
        kl = m.values.get("kl")
        if kl is not None and math.isfinite(kl):
            base = self.kl_recent.stats()[0] if len(self.kl_recent) >= 10 else None
            self.kl_recent.add(kl)
            if base is not None and self.kl.update(
                kl > self.rule.kl_floor and kl > self.rule.kl_factor * max(abs(base), 1e-12)
            ):
                out.append(
                    Incident(
                        IncidentKind.KL_BLOWUP,
                        f"KL to the reference policy is {kl:.4g}{at}, more than "
                        f"{self.rule.kl_factor:g}x its recent median {base:.4g}",
                        m.ts,
                        m.step,
                        "kl",
                        kl,
                        base,
                        m.line,
                    )
                )
        zero_frac = m.values.get("frac_reward_zero_std")
        std = m.values.get("reward_std")
        if zero_frac is not None or std is not None:
            flat = (zero_frac is not None and zero_frac >= self.rule.zero_std_frac) or (
                std is not None and abs(std) <= 1e-6
            )
            if self.signal.update(flat):
                out.append(
                    Incident(
                        IncidentKind.NO_LEARNING_SIGNAL,
                        f"rewards show no spread{at} for {self.signal.run} logs in a row "
                        "(reward_std ~ 0): advantages are zero and the policy learns nothing",
                        m.ts,
                        m.step,
                        "reward_std" if std is not None else "frac_reward_zero_std",
                        std if std is not None else zero_frac,
                        None,
                        m.line,
                    )
                )
        return out
