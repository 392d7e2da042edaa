"""When each step of an attempt was printed, from the store's metrics samples. Pure.

`samples` are the store's metrics rows, (ts, step) for one attempt: babysit samples the newest
step every 2 s while it advances, so a sample's step was printed at most one step interval
before it, except the last sample of an attempt (it may come long after: a hang, a crash).
Steps between samples are interpolated; the first step and the steps after the last inner sample
are extrapolated with the mean step interval (the attempt's own, else the run's).

    pts = step_points(own_samples(raw, attempt_row, previous_row))
    step_s, how = run_step_s({n: pts, ...}, attempt_rows)
    at = step_clock(pts, step_s)   # at(step) -> ts; None without samples

views/goodput.py places attempts on the run's timeline with it.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def step_points(samples: Sequence[tuple[float, int]]) -> list[tuple[float, int]]:
    """Samples in time order, each step at its earliest sample, steps strictly increasing."""
    out: list[tuple[float, int]] = []
    for ts, step in sorted(samples):
        if not out or step > out[-1][1]:
            out.append((ts, step))
    return out


def inner_pairs(points: Sequence[tuple[float, int]]) -> tuple[float, int]:
    """(seconds, steps) between the first and the last inner sample (all but the last)."""
    inner = points[:-1]
    if len(inner) < 2:
        return 0.0, 0
    return inner[-1][0] - inner[0][0], inner[-1][1] - inner[0][1]


def step_clock(
    points: Sequence[tuple[float, int]], step_s: float | None
) -> Callable[[int], float] | None:
    """The time step `s` was printed, from one attempt's samples: interpolated between inner
    samples, extrapolated with the attempt's own mean interval (else `step_s`) outside them,
    and never after the first sample that had already seen `s`. None without samples."""
    if not points:
        return None
    secs, steps = inner_pairs(points)
    own = secs / steps if steps > 0 else None
    if own is None and len(points) >= 2 and points[-1][1] > points[0][1]:
        # Two samples: the last may be late (a hang); the run's cadence, when known, is better.
        own = (
            step_s
            if step_s is not None
            else ((points[-1][0] - points[0][0]) / (points[-1][1] - points[0][1]))
        )
    pace = own if own is not None else (step_s or 0.0)
    inner = list(points[:-1]) or list(points)
    inner_steps = [step for _, step in inner]
    steps_seen = [step for _, step in points]

    def at(s: int) -> float:
        first_ts, first_step = inner[0]
        last_ts, last_step = inner[-1]
        if s <= first_step:
            t = first_ts - (first_step - s) * pace
        elif s >= last_step:
            t = last_ts + (s - last_step) * pace
        else:
            i = bisect.bisect_left(inner_steps, s)  # inner[i - 1] < s <= inner[i]
            (t0, s0), (t1, s1) = inner[i - 1], inner[i]
            t = t0 + (t1 - t0) * (s - s0) / (s1 - s0)
        j = bisect.bisect_left(steps_seen, s)  # the first sample that had seen step s
        return min(t, points[j][0]) if j < len(points) else t

    return at


def own_samples(
    samples: Sequence[tuple[float, int]],
    a: Mapping[str, Any],
    prev: Mapping[str, Any] | None,
) -> list[tuple[float, int]]:
    """The samples that tell of this attempt's own steps: none below its first step, and not
    the leading ones that repeat the previous attempt's last step (babysit's first sample of
    an attempt may carry the step the attempt before it ended on)."""
    first, stale = a.get("first_step"), prev.get("last_step") if prev is not None else None
    out = sorted(p for p in samples if first is None or p[1] >= first)
    while out and stale is not None and out[0][1] == stale:
        out.pop(0)
    return out


def run_step_s(
    by_attempt: Mapping[int, Sequence[tuple[float, int]]], attempts: Sequence[Mapping[str, Any]]
) -> tuple[float | None, str]:
    """The run's mean step interval: over the attempts' inner samples; else over any two
    samples; else attempt time / steps (start-up counted as training: an upper bound)."""
    secs = steps = 0.0
    for pts in by_attempt.values():
        s, n = inner_pairs(step_points(pts))
        secs, steps = secs + s, steps + n
    if steps > 0:
        return secs / steps, "samples"
    for pts in by_attempt.values():
        p = step_points(pts)
        if len(p) >= 2:
            secs += p[-1][0] - p[0][0]
            steps += p[-1][1] - p[0][1]
    if steps > 0:
        return secs / steps, "samples"
    for a in attempts:
        if a.get("ended") is not None and a.get("last_step") is not None:
            done = a["last_step"] - (a.get("first_step") or 0) + 1
            if done > 0:
                secs, steps = secs + a["ended"] - a["started"], steps + done
    return (secs / steps, "attempt_time") if steps > 0 else (None, "none")
