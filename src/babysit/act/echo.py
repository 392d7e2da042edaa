"""Copy the run's output to babysit's terminal without ever waiting on the terminal.

    echo = Echo(sys.stdout.buffer)
    echo.write(b"iter 1: loss 2.3\\n")    # returns at once
    echo.close()                          # flush what is queued (bounded wait), stop the thread

A thread does the writing; the supervisor only queues bytes. When the terminal (or a pipe that
nobody reads) falls behind by more than `max_bytes`, new output is dropped for the terminal
only, and counted: the log files have everything. A terminal that goes away (EPIO, EPIPE)
ends the echo; supervision goes on.

    echo = Echo(sys.stdout.buffer, lock=terminal_lock)   # shared with the status line
    with terminal_lock: ok = echo.clean                   # not inside an escape or a character

With a status line on the same terminal, each write is made under the shared lock, and
`clean` tells whether the bytes written so far end inside an escape sequence or a UTF-8
character (an output chunk may end anywhere): the line is drawn only between whole ones.
"""

from __future__ import annotations

import codecs
import contextlib
import threading
from collections import deque
from typing import IO

TAIL_BYTES = 256  # the end of what was written, kept to tell whether it ends mid-sequence


def ends_mid_sequence(tail: bytes) -> bool:
    """Whether `tail` (the last bytes written) ends inside an escape sequence (CSI: `ESC [`
    up to a final byte 0x40-0x7e; OSC: `ESC ]` up to BEL or `ESC \\`; others: ESC and one
    byte) or inside a UTF-8 character."""
    esc = tail.rfind(b"\x1b")
    if esc >= 0:
        seq = tail[esc + 1 :]
        if not seq:
            return True
        if seq[:1] == b"[" and not any(0x40 <= b <= 0x7E for b in seq[1:]):
            return True
        if seq[:1] == b"]" and b"\x07" not in seq:
            return True
    # The UTF-8 decoder keeps back the bytes of a character it has not seen the end of.
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    decoder.decode(tail)
    return bool(decoder.getstate()[0])


class Echo:
    def __init__(
        self,
        target: IO[bytes] | None,
        max_bytes: int = 16 << 20,
        lock: threading.Lock | None = None,
    ) -> None:
        self.target = target
        self.lock = lock  # shared with whatever else writes to the terminal (the status line)
        self._tail = b""
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
                with self.lock if self.lock is not None else contextlib.nullcontext():
                    self.target.write(data)
                    self.target.flush()
                    self._tail = (self._tail + data[-TAIL_BYTES:])[-TAIL_BYTES:]
            except (OSError, ValueError):
                self.dead = True  # the terminal went away: stop echoing, keep supervising
                with self._cond:
                    self._queue.clear()
                    self._queued = 0
                return

    @property
    def clean(self) -> bool:
        """What was written so far ends between escape sequences and characters (read it
        under the shared lock)."""
        return not ends_mid_sequence(self._tail)

    def close(self, timeout_s: float = 2.0) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout_s)
        with contextlib.suppress(OSError, ValueError):
            if self.target is not None and not self.dead:
                self.target.flush()
