"""The tiny client: report metrics to babysit from the training loop, if you want to.

    from babysit import client
    client.log(step, loss=loss.item(), grad_norm=gn, tokens=tokens_seen)

Not needed: babysit reads the metrics that trainers print. Use it when yours prints nothing
babysit understands, or to send more. The contract:
- a no-op when the script does not run under babysit (BABYSIT_METRICS_FILE unset);
- never raises into the training loop, never blocks it: a call appends to a bounded in-memory
  queue (median well under 2 us); a background thread writes the queue to the attempt's
  metrics file every 0.2 s. When the writer falls behind (a stalled disk), new values are
  dropped and counted (`client.dropped()`), never waited for;
- safe across fork (DataLoader workers): a child process starts its own writer when it logs.
Standard library only; it never imports torch. Values must be numbers (Python or numpy
floats, or 0-dim tensors after `.item()`); anything else is dropped and counted.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
import time
from collections import deque
from typing import Any

ENV_VAR = "BABYSIT_METRICS_FILE"
QUEUE_MAX = 100_000
FLUSH_S = 0.2


class _Client:
    def __init__(self) -> None:
        self.path = os.environ.get(ENV_VAR) or None
        self.queue: deque[tuple[float, int | None, dict[str, Any]]] = deque()
        self.dropped = 0
        self.pid = os.getpid()
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        self.flush_lock = threading.Lock()  # one writer at a time: rows stay whole and ordered

    def log(self, step: int | None, metrics: dict[str, Any]) -> None:
        if self.path is None:
            return
        if len(self.queue) >= QUEUE_MAX:
            self.dropped += 1
            return
        self.queue.append((time.time(), step, metrics))
        if self.thread is None or self.pid != os.getpid():
            self._start()

    def _start(self) -> None:
        with self.lock:
            if self.pid != os.getpid():  # forked: the parent's writer did not come along
                self.pid, self.thread = os.getpid(), None
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="babysit-client", daemon=True)
                self.thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(FLUSH_S)
            self.flush()

    def flush(self) -> None:
        with self.flush_lock:
            self._flush()

    def _flush(self) -> None:
        if not self.queue or self.path is None:
            return
        lines = []
        while self.queue:
            ts, step, metrics = self.queue.popleft()
            row: dict[str, Any] = {"step": step, "ts": ts}
            for key, value in metrics.items():
                try:
                    row[str(key)] = float(value)
                except (TypeError, ValueError):
                    self.dropped += 1
            lines.append(json.dumps(row, default=_nan_safe))
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
        except OSError:
            self.dropped += len(lines)


def _nan_safe(value: Any) -> Any:  # pragma: no cover - floats never reach here
    return str(value)


_client = _Client()


def log(step: int | None = None, **metrics: Any) -> None:
    """Report metrics at `step`. Never raises, never blocks; a no-op outside babysit."""
    try:
        _client.log(step, metrics)
    except Exception:
        _client.dropped += 1


def dropped() -> int:
    """How many values were dropped (writer behind, not numbers, disk refusing)."""
    return _client.dropped


def flush() -> None:
    """Write what is queued now (e.g. before exiting). Never raises."""
    with contextlib.suppress(Exception):
        _client.flush()


def _reset_after_fork() -> None:
    _client.thread = None
    _client.pid = os.getpid()
    _client.lock = threading.Lock()
    _client.flush_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)

atexit.register(flush)  # the last values of a run that ends normally are not lost

__all__ = ["dropped", "flush", "log"]
