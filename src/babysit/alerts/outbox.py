"""One destination's own thread: a bounded queue, retries with backoff, a logged failure.

    box = Outbox(sender, say, tries=3)
    box.start()
    box.put(alert)        # never blocks: a full queue drops the alert (counted, said once)
    box.close(deadline)   # what is left goes out until the deadline (monotonic), then is said

A destination that is down costs its own thread the retries, never the supervisor nor the
other destinations. Failures are said with the destination's masked name only.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable

from babysit.alerts.message import Alert
from babysit.alerts.sender import Sender, SendFailed
from babysit.records import Level, Say

QUEUE_MAX = 256
BACKOFF_S = (1.0, 2.0, 4.0, 8.0)  # between tries


class Outbox:
    def __init__(
        self,
        sender: Sender,
        say: Say,
        tries: int = 3,
        backoff_s: tuple[float, ...] = BACKOFF_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sender, self.say, self.tries = sender, say, max(tries, 1)
        self.backoff_s = backoff_s
        self.monotonic = monotonic
        self.queue: queue.Queue[Alert | None] = queue.Queue(QUEUE_MAX)
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self._stop = threading.Event()  # set: stop waiting between tries (shutdown)
        self._deadline: float | None = None
        self._thread = threading.Thread(
            target=self._loop, name=f"babysit-alerts {sender.name}", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def put(self, alert: Alert) -> None:
        try:
            self.queue.put_nowait(alert)
        except queue.Full:
            self.dropped += 1
            if self.dropped == 1:
                self.say(
                    Level.WARN,
                    f"alerts to {self.sender.name} are piling up ({QUEUE_MAX} waiting): newer "
                    "ones are dropped until it catches up (the logbook has them all)",
                )

    def close(self, deadline: float) -> None:
        """Send what is queued until `deadline` (monotonic), then give up and say so."""
        self._deadline = deadline
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)
        self._thread.join(max(deadline - self.monotonic(), 0.0))
        self._stop.set()
        left = self.queue.qsize() - (1 if self._thread.is_alive() else 0)
        if self._thread.is_alive() or left > 0:
            self.say(
                Level.WARN,
                f"{max(left, 1)} alert(s) to {self.sender.name} could not be sent before "
                "babysit exited (the destination is slow or down); the logbook has them",
            )

    def _loop(self) -> None:
        while True:
            alert = self.queue.get()
            if alert is None:
                return
            self._deliver(alert)

    def _deliver(self, alert: Alert) -> None:
        reason = ""
        for i in range(self.tries):
            try:
                self.sender.send(alert)
            except SendFailed as exc:
                reason = str(exc)
            except Exception as exc:  # a sender's bug: said, never raised into supervision
                reason = f"{type(exc).__name__}"
            else:
                self.sent += 1
                return
            if i + 1 < self.tries:
                wait = self.backoff_s[min(i, len(self.backoff_s) - 1)]
                if self._deadline is not None:
                    wait = min(wait, max(self._deadline - self.monotonic(), 0.0))
                if self._stop.wait(wait):
                    break
        self.failed += 1
        self.say(
            Level.WARN,
            f"alert {alert.title()!r} could not be sent to {self.sender.name} after "
            f"{self.tries} tries: {reason}",
        )
