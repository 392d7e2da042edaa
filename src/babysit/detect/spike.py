"""Loss and grad-norm spikes: a value far above a robust rolling baseline.

    d = SpikeDetector("loss", SpikeRule())
    d.feed(step=120, value=7.9, ts=t, line=n)   # -> Incident | None

Rule (defaults in SpikeRule): the level m is the median of the last `level_window` (16) values;
the noise s is 1.4826 * MAD of the last `noise_window` (128) step-to-step differences, divided
by sqrt(2) (the spread of one value), floored at `rel_floor` (1%) * |m|. A value x is a spike
when x > m + z * s and x > m * (1 + min_rise): z = 8 and 30% for the loss (tiny absolute
wiggles of a very flat curve are not spikes); z = 6 and 5x the median for the grad norm.
Medians, unlike OLMo-core's mean + 6 sigma over 128 values, are not dragged up by earlier
spikes, and differences, unlike raw values, do not count a trend (the fast early decay, a
learning-rate drop) as noise. One incident per episode: the episode lasts while values stay
z/2 sigmas above m, and its values stay out of the baseline (for `max_episode` values at most:
a longer one is the new level). Needs `min_history` values first (20).

Noisy series near zero (`log_scale`): when m <= z * s, the band of symmetric noise that the
rule above assumes would reach below zero, which a positive series cannot do: its noise is
skewed, multiplicative (a tiny-batch loss near zero, an MSE of a nearly fitted model: a few
hard batches give several times the median, and the MAD of such a tail is small, so 4x is 10
robust sigmas). There the noise is also measured on the log scale, where multiplicative noise is
symmetric: s_log is 1.4826 * MAD of the last `noise_window` differences of log(x), / sqrt(2),
and a spike must also have log(x / m) > z * s_log. A loss of 0.02 whose log wobbles by 0.3 a
step then needs e^(8 * 0.3) = 11x its median, not 4x. A series whose level stands more than z
sigmas clear of zero (an LLM loss at 2.3 with 1-3% noise) is judged on the linear scale alone,
as before, so a jump to 7 is still a spike and small symmetric noise keeps its sensitivity (on
such a series the two scales nearly agree, and the log scale would only be stricter). The log
scale needs `min_history` differences of positive values; a value <= 0 starts it over.

Why 5x for the grad norm: its per-step noise is heavy-tailed and skewed (a few batches with
large gradients; clipping at 1.0 over a norm near 0.3 clips routinely), so twice or thrice the
median is ordinary: healthy runs reach 2.6x their 16-step median (tests/fixtures/healthy: HF
Trainer, Lightning, 2-rank DDP under torchrun), and 6 robust sigmas of step-to-step noise are
crossed too (the MAD of a heavy tail is small). A grad-norm spike worth a look (the ones before
OPT's and PaLM's loss spikes, an fp16 overflow, a bad batch) is about an order of magnitude:
5x, on a log scale about the middle between the noise and 10x, as well as far out in robust
sigmas. benchmarks/quality_vitals.py measures both sides (recall on injected spikes, zero
false spikes on the healthy runs, a held-out part kept apart). The step counter going
back (a restart, a rollback) starts the baseline over; a step seen twice (several ranks) counts
once. Measured by benchmarks/quality_vitals.py.

A spike that does not settle (the loss) is a second incident, LOSS_DIVERGED: its episode has
lasted `diverge_after` values (0: never; at most `max_episode`, while the level is still the one
from before it), and the median of its last 4 values (its excess e over the level) is still
well up: above half the episode's peak excess, or `min_rise` (30%) of the level or more, and
not coming down: e shrank by less than a quarter over the last half of `diverge_after` values.
So a loss that stays up, climbs, or falls back from a jump to 3.5x to a plateau at 2x and sits
there is not settling; a spike that decays back, even slowly (its excess halving within ~19
values: a quarter less over 8), is, however high it still is.
The rollback policy acts on that one. Its step is the step where the episode began, so a
rollback goes back past the start of the trouble.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from itertools import pairwise

from babysit.detect.window import RobustWindow, robust_stats
from babysit.records import Incident, IncidentKind


@dataclass(frozen=True)
class SpikeRule:
    level_window: int = 16  # values whose median is the level the next value is compared to
    noise_window: int = 128  # step-to-step differences whose spread is the noise
    min_history: int = 20
    z: float = 8.0
    min_rise: float = 0.3
    rel_floor: float = 0.01
    max_episode: int = 16  # a "spike" that lasts longer is the new level: the baseline follows
    diverge_after: int = 0  # values of one episode after which it "did not settle" (0: off)
    log_scale: bool = True  # near zero (m <= z * s), also z sigmas out on the log scale


LOSS_RULE = SpikeRule(diverge_after=16)
GRAD_NORM_RULE = SpikeRule(z=6.0, min_rise=4.0)  # 5x the median: see the module docstring
EVIDENCE = 16  # (step, value) pairs kept before the spike, as its evidence
PLATEAU_SHRINK = 0.75  # an excess still this much of itself half an episode ago: a plateau
SQRT2 = math.sqrt(2.0)


class SpikeDetector:
    def __init__(self, metric: str, rule: SpikeRule, kind: IncidentKind) -> None:
        self.metric = metric
        self.rule = rule
        self.kind = kind
        self.level = RobustWindow(rule.level_window, refresh=1)
        self.noise = RobustWindow(rule.noise_window)
        # The values of the baseline, for the noise on the log scale: computed only when a value
        # near zero looks like a spike (rare), so that the common value pays one append.
        self.history: deque[float] = deque(maxlen=rule.noise_window + 1)
        self._s_log: float | None = None  # cached until the baseline moves
        self.recent: deque[tuple[int | None, float]] = deque(maxlen=EVIDENCE)
        self.last_step: int | None = None
        self.last_value: float | None = None
        self.in_spike = 0  # values so far in the current episode (0: none)
        self.began: tuple[int | None, float, float] | None = None  # (step, value, median)
        self.peak = 0.0  # the highest value of the current episode
        self.diverged = False  # LOSS_DIVERGED was reported for the current episode
        self.episode: list[float] = []  # the current episode's values (up to max_episode)
        self._approx: float | None = None
        self._since = 0

    def _candidate(self, value: float) -> bool:
        """A cheap first look (a median cached over the last few values): only a value well
        above the level can be a spike, and only then are the exact statistics worth their
        sorting. Most values of a run stop here."""
        self._since += 1
        if self._since >= 8 or self._approx is None:
            self._approx, self._since = self.level.stats()[0], 0
        return self._approx <= 0 or value > self._approx * (1 + self.rule.min_rise / 2)

    def _log_sigmas(self, value: float, med: float) -> float:
        """How far `value` is above `med` in robust sigmas of the step-to-step noise of log(value),
        over the baseline's values since the last one <= 0: infinite (no objection) until there
        are `min_history` differences."""
        if self._s_log is None:
            logs = []
            for v in reversed(self.history):
                if v <= 0:
                    break
                logs.append(math.log(v))
            diffs = [a - b for a, b in pairwise(logs)]
            ok = len(diffs) >= self.rule.min_history
            self._s_log = robust_stats(diffs)[1] / SQRT2 if ok else math.nan
        if not self._s_log > 0:  # too few values yet, or no noise at all
            return math.inf
        return math.log(value / med) / self._s_log

    def _unsettled(self, med: float) -> bool:
        """The episode so far is well above the level and not coming down: it stays up,
        climbs, or sits on a plateau."""
        now = _median4(self.episode, len(self.episode)) - med
        if now < min(0.5 * (self.peak - med), self.rule.min_rise * abs(med)):
            return False
        back = max(self.rule.diverge_after // 2, 4)
        if len(self.episode) < back + 4:
            return True
        then = _median4(self.episode, len(self.episode) - back) - med
        return now >= PLATEAU_SHRINK * then

    def _diverged(
        self, step: int | None, value: float, med: float, ts: float, line: int
    ) -> Incident:
        began, first, _ = self.began or (step, value, med)
        at = f" at step {began}" if began is not None else ""
        now = f" (step {step})" if step is not None else ""
        return Incident(
            IncidentKind.LOSS_DIVERGED,
            f"{self.metric} did not settle after its spike{at} (to {first:.4g}): "
            f"{self.in_spike} values later it is still {value:.4g}{now}, "
            f"{value / med if med else math.inf:.1f}x its median {med:.4g} before the spike",
            ts,
            began,
            self.metric,
            value,
            med,
            line,
            (*self.recent, (step, value)),
        )

    def reset(self) -> None:
        self._approx = None
        self.level.clear()
        self.noise.clear()
        self.history.clear()
        self._s_log = None
        self.recent.clear()
        self.in_spike = 0
        self.last_step = None
        self.last_value = None

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
        if (
            len(self.level) >= min(self.rule.min_history, self.rule.level_window)
            and len(self.noise) >= self.rule.min_history
            and (self.in_spike or self._candidate(value))
        ):
            med, _ = self.level.stats()
            # Noise from step-to-step differences: a trend (fast early decay, a learning-rate
            # drop) does not inflate it the way the spread of raw values would.
            scale = max(self.noise.stats()[1] / SQRT2, self.rule.rel_floor * abs(med), 1e-12)
            sigmas = (value - med) / scale
            if (
                self.rule.log_scale
                and sigmas > self.rule.z / 2  # below, the log scale could not change a thing
                and 0 < med <= self.rule.z * scale
            ):
                # The band of symmetric noise would reach below zero: the noise of a positive
                # series that large is skewed, and symmetric on the log scale.
                sigmas = min(sigmas, self._log_sigmas(value, med))
            high = sigmas > self.rule.z and value > med * (1 + self.rule.min_rise)
            if high and not self.in_spike:
                self.in_spike = 1
                self.began = (step, value, med)
                self.peak, self.diverged = value, False
                self.episode = [value]
                at = f" at step {step}" if step is not None else ""
                incident = Incident(
                    self.kind,
                    f"{self.metric} spiked to {value:.4g}{at}: "
                    # .3g, not .1f/.0f: a loss of 1e308 must not print a 309-digit number
                    f"{value / med if med else math.inf:.3g}x its recent median {med:.4g} "
                    f"({(value - med) / scale:.3g} robust sigmas of its step-to-step noise)",
                    ts,
                    step,
                    self.metric,
                    value,
                    med,
                    line,
                    (*self.recent, (step, value)),
                )
            elif self.in_spike and sigmas <= self.rule.z / 2:
                self.in_spike = 0
            elif self.in_spike:
                self.in_spike += 1
                self.peak = max(self.peak, value)
                if self.in_spike <= self.rule.max_episode:
                    self.episode.append(value)
                if (
                    self.rule.diverge_after
                    and self.rule.diverge_after <= self.in_spike <= self.rule.max_episode
                    and not self.diverged
                    and self._unsettled(med)
                ):
                    self.diverged = True
                    incident = self._diverged(step, value, med, ts, line)
        self.recent.append((step, value))
        if self.in_spike and self.in_spike <= self.rule.max_episode:
            return incident  # the spike does not become part of its own baseline
        if self.last_value is not None:
            self.noise.add(value - self.last_value)
        self.history.append(value)
        self._s_log = None
        self.level.add(value)
        self.last_value = value
        return incident


def _median4(values: list[float], end: int) -> float:
    """The median of the (up to) 4 values before index `end`."""
    last = sorted(values[max(end - 4, 0) : end])
    return last[len(last) // 2]
