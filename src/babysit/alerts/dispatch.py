"""The alerts of one run, off the supervisor's path: events in, messages out.

    alerts = Alerts.open(rule, run="gpt", host="gpu-3", more="babysit logbook gpt",
                         workdir=run_dir / "alerts", say=say)   # None: nothing configured
    alerts.start()
    alerts.event(event)              # every logbook event; returns at once, never raises
    alerts.progress(attempt, step)   # the run moved: a `recovered` may follow a page or warn
    alerts.metrics(step, values)     # the loss, for the chart attached around an incident
    alerts.close()                   # what is still on its way gets rule.drain_s to go out

The supervisor's thread only puts items on a bounded queue (a full queue drops them, counted
and said once). One thread routes them (route.py), gates them (gate.py), redacts them and
hands each to the outbox of every destination whose minimum severity it reaches (outbox.py):
one thread per destination, so a destination that is down delays nobody. The dead-man ping
has its own thread too (deadman.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from babysit.alerts.attach import attachments
from babysit.alerts.deadman import Deadman
from babysit.alerts.gate import Gate
from babysit.alerts.hook import HookSender
from babysit.alerts.message import Alert
from babysit.alerts.outbox import Outbox
from babysit.alerts.route import Router
from babysit.alerts.sender import AppriseSender, Sender, check_urls
from babysit.alerts.settings import AlertRule, Destination
from babysit.records import Event, Level, Say
from babysit.redact import redact_text

INBOX_MAX = 10_000
POINTS = 2_000  # loss points kept for the chart
_STOP = object()


class Alerts:
    def __init__(
        self,
        rule: AlertRule,
        router: Router,
        destinations: Sequence[tuple[Destination, Sender]],
        say: Say,
        workdir: Path | None = None,
        hook: Sender | None = None,
        deadman: Deadman | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        backoff_s: tuple[float, ...] | None = None,
    ) -> None:
        self.rule, self.router, self.say, self.workdir = rule, router, say, workdir
        self.monotonic = monotonic
        self.gate = Gate(rule)
        extra: dict[str, Any] = {"backoff_s": backoff_s} if backoff_s is not None else {}
        self.outboxes = [
            (d, Outbox(s, say, rule.retries, monotonic=monotonic, **extra)) for d, s in destinations
        ]
        # The hook is run once per alert: a command that fails would fail again the same way.
        self.hook = Outbox(hook, say, 1, monotonic=monotonic) if hook is not None else None
        self.deadman = deadman
        self.inbox: queue.Queue[Any] = queue.Queue(INBOX_MAX)
        self.points: deque[tuple[int, float]] = deque(maxlen=POINTS)
        # What went to the outboxes, in order (tests, benchmarks); the newest only: a month-long
        # run must not grow it without end.
        self.sent: deque[Alert] = deque(maxlen=1_000)
        self.dropped = 0
        self._thread = threading.Thread(target=self._loop, name="babysit-alerts", daemon=True)
        self._started = False

    @classmethod
    def open(
        cls,
        rule: AlertRule,
        run: str,
        host: str,
        more: str,
        workdir: Path | None,
        say: Say,
        hang_pages: bool = False,
        watching: bool = False,
    ) -> Alerts | None:
        """The run's alerts per `rule`; None when nothing is configured. Raises ConfigError for a
        URL apprise refuses (or apprise missing): babysit refuses to start, not at 4am."""
        if not rule.enabled:
            return None
        check_urls([d.url for d in rule.notify])
        destinations = [(d, AppriseSender(d.url)) for d in rule.notify]
        hook = HookSender(rule.on_event, rule.on_event_timeout_s) if rule.on_event else None
        deadman = Deadman(rule.deadman_url, rule.deadman_every_s, say) if rule.deadman_url else None
        router = Router(run, host, more, hang_pages, watching)
        return cls(rule, router, destinations, say, workdir, hook, deadman)

    # -- the supervisor's side: put and return ---------------------------------------------------

    def event(self, ev: Event) -> None:
        self._put(("event", ev))

    def progress(self, attempt: int, step: int) -> None:
        self._put(("progress", attempt, step))

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        loss = _loss(values)
        if loss is not None:
            self._put(("metrics", step, loss))

    def _put(self, item: Any) -> None:
        try:
            self.inbox.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1:
                self.say(
                    Level.WARN,
                    "alerts fall behind: events are dropped for alerting "
                    "(they are all in the logbook)",
                )

    def start(self) -> None:
        for _, box in self.outboxes:
            box.start()
        if self.hook is not None:
            self.hook.start()
        if self.deadman is not None:
            self.deadman.start()
        self._thread.start()
        self._started = True

    def close(self) -> None:
        """Route what is queued, send the held digests, and give the outboxes rule.drain_s."""
        if not self._started:
            return
        deadline = self.monotonic() + self.rule.drain_s
        with contextlib.suppress(queue.Full):
            self.inbox.put(_STOP, timeout=max(deadline - self.monotonic(), 0.1))
        self._thread.join(max(deadline - self.monotonic(), 0.1))
        for _, box in self.outboxes:
            box.close(deadline)
        if self.hook is not None:
            self.hook.close(deadline)
        if self.deadman is not None:
            self.deadman.close()

    # -- the alerts' thread --------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            wait = self.gate.next_tick(self.monotonic())
            try:
                item = self.inbox.get(timeout=wait)
            except queue.Empty:
                item = None
            now = self.monotonic()
            if item is _STOP:
                self._deliver(self.gate.tick(math.inf))
                return
            try:
                out = self._handle(item, now) if item is not None else []
                out += self.gate.tick(now)
                self._deliver(out)
            except Exception as exc:  # a bug here must never reach the supervisor
                self.say(
                    Level.WARN,
                    f"internal: alerting skipped an event ({type(exc).__name__}: "
                    f"{exc}); please report",
                )

    def _handle(self, item: tuple[Any, ...], now: float) -> list[Alert]:
        what = item[0]
        if what == "event":
            alert = self.router.route(item[1])
            return self.gate.offer(alert, now) if alert is not None else []
        if what == "progress":
            return self.gate.progress(item[1], item[2], now)
        if what == "metrics":
            self.points.append((item[1], item[2]))
        return []

    def _deliver(self, alerts: list[Alert]) -> None:
        for alert in alerts:
            alert = redacted(alert)
            if self.workdir is not None and any(s.attachments for _, s in self._takers(alert)):
                alert = dataclasses.replace(
                    alert, attachments=attachments(alert, list(self.points), self.workdir)
                )
            self.sent.append(alert)
            for dest, box in self.outboxes:
                if dest.takes(alert.severity):
                    box.put(alert)
            if self.hook is not None:
                self.hook.put(alert)

    def _takers(self, alert: Alert) -> list[tuple[Destination, Sender]]:
        return [(d, b.sender) for d, b in self.outboxes if d.takes(alert.severity)]


def redacted(alert: Alert) -> Alert:
    """Every text of the alert through babysit.redact (the logbook's own redaction)."""
    changes: dict[str, Any] = {
        f.name: redact_text(getattr(alert, f.name))
        for f in dataclasses.fields(alert)
        if isinstance(getattr(alert, f.name), str)
    }
    return dataclasses.replace(alert, **changes)


def _loss(values: Mapping[str, float]) -> float | None:
    if "loss" in values:
        return float(values["loss"])
    for key, value in values.items():
        if "loss" in key.lower() and "scale" not in key.lower():
            return float(value)
    return None
