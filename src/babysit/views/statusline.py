"""What the live status line of `babysit run` says, from what the loop saw (pure: time is given).

    track = StatusTracker(total=5000)
    track.progress(now, attempt=2, step=1234, values={"loss": 2.31, "tokens_per_s": 91234.0})
    track.incident(now, "loss_spike", "loss 9.1 at step 1200 is 4x its baseline", step=1200)
    status_text(track.state(now + 1.2))
    # -> "attempt 2 · step 1,234/5,000 (24.7%) · loss 2.31 · 91,234 tokens/s ·
    #     last step 1.2s ago · last incident: loss spike 1.2s ago at step 1,200: loss 9.1 ..."

The tracker keeps the attempt, its step (and the total when known: babysit.toml's
run.total_steps, the command's --max-steps-like flag, else a progress bar's N/M in the output),
the newest loss and throughput the parsers found, when the step last moved and the step rate
over the last RATE_WINDOW_S, and the last incident. status_parts() lays a StatusState out as
(text, style) pieces, most important first, so that a narrow terminal cuts the incident's words,
not the step; views/console.py draws them. Text from the run (an incident's message, a loss
printed as text) goes through views/safe.py and babysit.redact: it can never drive the terminal.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from babysit.durations import format_duration
from babysit.redact import redact_text
from babysit.views.live import LOSS_KEYS, total_from_bar
from babysit.views.safe import plain

__all__ = ["StatusState", "StatusTracker", "status_parts", "status_text"]

RATE_WINDOW_S = 60.0  # the step rate is measured over the last minute: a live line, not an ETA
STALE_S = 120.0  # "last step ... ago" turns yellow past this
BAR_TAIL_BYTES = 4096  # how much of the latest output is kept to find a progress bar's total
MAX_MESSAGE = 200  # an incident's message is cut here (the line is cut to the width anyway)
# The throughput shown, in this order of preference; without any, the step rate.
THROUGHPUT_UNITS = {"tokens_per_s": "tokens/s", "samples_per_s": "samples/s", "iters_per_s": "it/s"}
SEP = " · "


@dataclass(frozen=True)
class StatusState:
    """What the line says, at one moment. None: not known (left out of the line)."""

    attempt: int | None = None
    step: int | None = None
    total: int | None = None
    loss: float | str | None = None
    throughput: tuple[str, float] | None = None  # (metric name, value), e.g. tokens_per_s
    steps_per_s: float | None = None
    since_step_s: float | None = None  # since the step last moved (since the launch: no step)
    incident: str | None = None  # the last incident's kind in words ("loss spike")
    incident_step: int | None = None
    incident_message: str | None = None  # safe to print (views.safe) and redacted
    incident_age_s: float | None = None


class StatusTracker:
    """Accumulates what the loop sees into a StatusState. Not thread-safe: the caller locks."""

    def __init__(self, total: int | None = None) -> None:
        self.fixed_total = total if total and total > 0 else None
        self.attempt: int | None = None
        self.step: int | None = None
        self.loss: float | str | None = None
        self.throughput: tuple[str, float] | None = None
        self.moved_at: float | None = None  # when the step last moved, or the attempt began
        self.samples: deque[tuple[float, int]] = deque(maxlen=256)  # (first seen, step)
        self.incident_kind: str | None = None
        self.incident_step: int | None = None
        self.incident_message: str | None = None
        self.incident_at: float | None = None
        self._tail = b""
        self._tail_dirty = False
        self._bar_total: int | None = None

    def progress(
        self, now: float, attempt: int, step: int | None, values: Mapping[str, object]
    ) -> None:
        """The loop's latest view of the attempt: its step and newest metric values."""
        if attempt != self.attempt:
            # A new attempt: its own step, rate and clock (the last incident stays: it is news).
            self.attempt, self.step, self.moved_at = attempt, None, now
            self.loss, self.throughput = None, None
            self.samples.clear()
        if step is not None and step != self.step:
            if self.step is not None and step < self.step:
                self.samples.clear()  # rolled back: the rate starts again
            self.step, self.moved_at = step, now
            self.samples.append((now, step))
        loss = next((values[k] for k in LOSS_KEYS if k in values), None)
        if isinstance(loss, (int, float, str)) and not isinstance(loss, bool):
            self.loss = loss
        for key in THROUGHPUT_UNITS:
            value = values.get(key)
            if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
                self.throughput = (key, float(value))
                break

    def incident(self, now: float, kind: str, message: str, step: int | None = None) -> None:
        words = redact_text(message)
        if len(words) > MAX_MESSAGE:
            words = words[: MAX_MESSAGE - 1] + "…"
        self.incident_kind = plain(kind.replace("_", " "))
        self.incident_step = step
        self.incident_message = plain(words)
        self.incident_at = now

    def output(self, data: bytes) -> None:
        """The run's latest output (its tail is searched for a progress bar's total)."""
        if self.fixed_total is None and data:
            self._tail = (self._tail + data)[-BAR_TAIL_BYTES:]
            self._tail_dirty = True

    def state(self, now: float) -> StatusState:
        if self._tail_dirty:
            self._tail_dirty = False
            found = total_from_bar(self._tail.decode("utf-8", "replace"))
            self._bar_total = found or self._bar_total
        return StatusState(
            attempt=self.attempt,
            step=self.step,
            total=self.fixed_total or self._bar_total,
            loss=self.loss,
            throughput=self.throughput,
            steps_per_s=self._rate(),
            since_step_s=None if self.moved_at is None else max(now - self.moved_at, 0.0),
            incident=self.incident_kind,
            incident_step=self.incident_step,
            incident_message=self.incident_message,
            incident_age_s=None if self.incident_at is None else max(now - self.incident_at, 0),
        )

    def _rate(self) -> float | None:
        if len(self.samples) < 2:
            return None
        t1, s1 = self.samples[-1]
        recent = [(t, s) for t, s in self.samples if t >= t1 - RATE_WINDOW_S]
        t0, s0 = recent[0] if len(recent) >= 2 else self.samples[-2]
        return (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None


def status_parts(state: StatusState) -> list[tuple[str, str]]:
    """The line as (text, rich style) pieces, most important first; joined with SEP."""
    if state.attempt is None:
        return [("babysit: starting", "bold")]
    parts = [(f"attempt {state.attempt}", "bold")]
    if state.step is None:
        waited = state.since_step_s
        parts.append(("no step yet" + (f" ({_ago(waited)})" if waited is not None else ""), ""))
    else:
        total = state.total
        if total and state.step <= total:
            pct = f" ({100.0 * state.step / total:.1f}%)"
            parts.append((f"step {state.step:,}/{total:,}{pct}", "cyan"))
        else:
            parts.append((f"step {state.step:,}", "cyan"))
    if state.loss is not None:
        parts.append((f"loss {_num(state.loss)}", "magenta"))
    if state.throughput is not None:
        key, value = state.throughput
        parts.append((f"{_num(value)} {THROUGHPUT_UNITS.get(key, plain(key))}", "green"))
    elif state.steps_per_s:
        parts.append((_rate_words(state.steps_per_s), "green"))
    if state.step is not None and state.since_step_s is not None:
        stale = state.since_step_s >= STALE_S
        parts.append((f"last step {_ago(state.since_step_s)} ago", "yellow" if stale else "dim"))
    if state.incident is not None:
        words = state.incident
        if state.incident_age_s is not None:
            words += f" {_ago(state.incident_age_s)} ago"
        if state.incident_step is not None:
            words += f" at step {state.incident_step:,}"
        if state.incident_message:
            words += f": {state.incident_message}"
        parts.append((f"last incident: {words}", "yellow"))
    return parts


def status_text(state: StatusState) -> str:
    """The line as plain text (the plain mode, and the tests)."""
    return SEP.join(text for text, _ in status_parts(state))


def _ago(seconds: float) -> str:
    return format_duration(seconds)


def _num(v: float | str) -> str:
    if isinstance(v, str):
        return plain(v)[:20]  # "nan", "inf": printed as text by the run
    if not math.isfinite(v):
        return str(v)
    if 1000 <= abs(v) < 1e12:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def _rate_words(steps_per_s: float) -> str:
    if steps_per_s >= 0.1:
        return f"{steps_per_s:.3g} steps/s"
    return f"{1 / steps_per_s:.3g} s/step"
