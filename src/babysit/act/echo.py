"""Copy the run's output to babysit's terminal without ever waiting on the terminal.

    echo = Echo(sys.stdout.buffer)
    echo.write(b"iter 1: loss 2.3\\n")    # returns at once
    echo.close()                          # flush what is queued (bounded wait), stop the thread

A thread does the writing; the supervisor only queues bytes. When the terminal (or a pipe that
nobody reads) falls behind by more than `max_bytes`, new output is dropped for the terminal
only, and counted: the log files have everything. A terminal that goes away (EPIO, EPIPE)
ends the echo; supervision goes on.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from typing import IO


class Echo:
    def __init__(self, target: IO[bytes] | None, max_bytes: int = 16 << 20) -> None:
        self.target = target
        self.max_bytes = max_bytes
        self.dropped = 0
        self.dead = target is None
        self._queue: deque[bytes] = deque()
        self._queued = 0
        self._cond = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None

    def write(self, data: bytes) -> None:
        if self.dead or not data:
            return
        with self._cond:
            if self._queued + len(data) > self.max_bytes:
                self.dropped += len(data)
                return
            self._queue.append(data)
            self._queued += len(data)
            self._cond.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="babysit-echo", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        assert self.target is not None
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                data = self._queue.popleft()
                self._queued -= len(data)
            try:
                self.target.write(data)
                self.target.flush()
            except (OSError, ValueError):
                self.dead = True  # the terminal went away: stop echoing, keep supervising
                with self._cond:
                    self._queue.clear()
                    self._queued = 0
                return

    def close(self, timeout_s: float = 2.0) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout_s)
        with contextlib.suppress(OSError, ValueError):
            if self.target is not None and not self.dead:
                self.target.flush()
