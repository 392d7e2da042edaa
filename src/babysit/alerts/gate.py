"""Fewer, better alerts: dedupe with a cooldown, bursts in one digest, escalation, `recovered`.

    gate = Gate(AlertRule())
    gate.offer(alert, now)               # -> the alerts to send now (maybe none)
    gate.tick(now)                       # -> digests of bursts whose window closed
    gate.progress(attempt, step, now)    # -> a `recovered` alert once the run moves again

Time comes from the caller (monotonic seconds); nothing here sends or sleeps.

- Dedupe: an alert whose fingerprint was sent less than `cooldown_s` ago, at the same or a
  louder severity, is folded: counted, and said with the next one that goes out.
- Escalation: the `escalate_after`-th time the same fingerprint comes within
  `escalate_window_s`, it goes out one notch louder (info -> warn -> page), past the cooldown.
- Bursts: the first alert of a group (run, severity, kind) goes out at once; the others of the
  group within `burst_s` are held and go out as one digest when the window closes (64 ranks
  failing, 1,000 spikes in a row: two messages).
- Recovered: after a page or a warn went out, the first progress of a later attempt (or of the
  same attempt past the alert's step) sends one `recovered`, at the same severity, so it
  reaches the same people.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from dataclasses import dataclass, field

from babysit.alerts.message import Alert, Severity
from babysit.alerts.settings import AlertRule

SAMPLES = 5  # a digest quotes this many of the alerts it stands for
MAX_FINGERPRINTS = 10_000  # memory bound: the oldest are forgotten past this


@dataclass
class _Seen:
    times: deque[float] = field(default_factory=deque)
    sent_at: float | None = None
    sent_severity: Severity = Severity.INFO
    folded: int = 0  # held by the cooldown since the last one sent


@dataclass
class _Burst:
    opened: float
    first: Alert
    held: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)


class Gate:
    def __init__(self, rule: AlertRule) -> None:
        self.rule = rule
        self.seen: dict[str, _Seen] = {}
        self.bursts: dict[str, _Burst] = {}
        self.outstanding: Alert | None = None  # the last page or warn, until progress
        self.suppressed = 0  # folded by the cooldown or held in a digest, all told

    def offer(self, alert: Alert, now: float) -> list[Alert]:
        seen = self._seen(alert.fingerprint)
        seen.times.append(now)
        while seen.times and now - seen.times[0] > self.rule.escalate_window_s:
            seen.times.popleft()
        n = self.rule.escalate_after
        if n and len(seen.times) >= n and alert.severity != Severity.PAGE:
            # Louder than anything sent for it so far: past the cooldown and the burst.
            alert = dataclasses.replace(
                alert,
                severity=max(alert.severity.up(), seen.sent_severity, key=lambda s: s.rank),
                escalated=True,
                count=len(seen.times),
                group=f"{alert.group}|escalated",
            )
        cooling = seen.sent_at is not None and now - seen.sent_at < self.rule.cooldown_s
        if cooling and alert.severity.rank <= seen.sent_severity.rank:
            seen.folded += 1
            self.suppressed += 1
            return []
        burst = self.bursts.get(alert.group)
        if burst is not None and now - burst.opened < self.rule.burst_s:
            burst.held += 1
            burst.kinds[alert.headline] += 1
            if len(burst.samples) < SAMPLES:
                burst.samples.append(alert.what or alert.headline)
            self.suppressed += 1
            self._sent(seen, alert, now)  # in the digest: it counts as told
            return []
        self.bursts[alert.group] = _Burst(now, alert)
        if seen.folded and not alert.escalated:
            alert = dataclasses.replace(alert, count=seen.folded + 1)
        self._sent(seen, alert, now)
        return [alert]

    def _sent(self, seen: _Seen, alert: Alert, now: float) -> None:
        seen.sent_at, seen.sent_severity, seen.folded = now, alert.severity, 0
        if alert.severity.rank >= Severity.WARN.rank and alert.kind not in ("digest", "test"):
            self.outstanding = alert

    def _seen(self, fingerprint: str) -> _Seen:
        seen = self.seen.get(fingerprint)
        if seen is None:
            if len(self.seen) >= MAX_FINGERPRINTS:
                del self.seen[next(iter(self.seen))]
            seen = self.seen[fingerprint] = _Seen()
        return seen

    def tick(self, now: float) -> list[Alert]:
        out = []
        for group, burst in list(self.bursts.items()):
            if now - burst.opened < self.rule.burst_s:
                continue
            del self.bursts[group]
            if burst.held:
                out.append(_digest(burst, now))
        return out

    def next_tick(self, now: float) -> float | None:
        """Seconds until the next burst window closes (None: none open)."""
        ends = [b.opened + self.rule.burst_s - now for b in self.bursts.values() if b.held]
        return max(min(ends), 0.0) if ends else None

    def progress(self, attempt: int, step: int, now: float) -> list[Alert]:
        out = self.outstanding
        if out is None:
            return []
        later = out.attempt is None or attempt > out.attempt
        further = attempt == out.attempt and out.step is not None and step > out.step
        if not (later or further):
            return []
        self.outstanding = None
        return [
            dataclasses.replace(
                out,
                kind="recovered",
                headline=f"making progress again (step {step}) after: {out.headline}",
                what=f"attempt {attempt} reached step {step}",
                action="recovered; nothing to do",
                verdict=None,
                fingerprint=f"{out.fingerprint}|recovered",
                group=f"{out.run}|recovered",
                ts=out.ts,
                attempt=attempt,
                step=step,
                count=1,
                escalated=False,
                attachments=(),
            )
        ]


def _digest(burst: _Burst, now: float) -> Alert:
    first = burst.first
    kinds = "; ".join(f"{n} x {k}" for k, n in burst.kinds.most_common(5))
    samples = " | ".join(burst.samples)
    return dataclasses.replace(
        first,
        kind="digest",
        headline=f"{burst.held} more like the last alert ({first.headline})",
        what=f"{kinds}. For example: {samples}",
        action=f"held them back for {now - burst.opened:.0f}s so as not to flood you",
        verdict=None,
        fingerprint=f"{first.group}|digest",
        count=burst.held,
        escalated=False,
        attachments=(),
    )
