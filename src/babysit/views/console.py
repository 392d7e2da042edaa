"""babysit's own live messages on the terminal, apart from the run's output.

    say = ConsoleReporter(Console(stderr=True))
    say(Level.WARN, "cannot write the store: disk full; supervision goes on")

Messages go to stderr, prefixed `babysit:`, so they never mix into a pipe of the run's stdout.
They quote the run's text (an error line, a summary): escapes and rich markup in it are shown,
never obeyed (views.safe), and secrets in it are hidden as in the store (babysit.redact).

    status = LiveStatus.open(None, say, command=argv)   # `babysit run`'s live status line
    status.progress(1, 120, {"loss": 2.3}); status.close()

LiveStatus draws views/statusline.py's line at the bottom of the terminal, under the run's
output; status_mode() says when it is drawn, printed plain, or left out.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from rich.console import Console
from rich.text import Text

from babysit.records import Level, Say
from babysit.redact import redact_text
from babysit.views.safe import markup
from babysit.views.statusline import SEP, StatusState, StatusTracker, status_parts, status_text

_STYLES = {Level.INFO: "cyan", Level.OK: "green", Level.WARN: "yellow", Level.ERROR: "bold red"}


class ConsoleReporter:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)

    def __call__(self, level: Level, text: str) -> None:
        style = _STYLES.get(level, "")
        safe = markup(redact_text(text), newlines=True)
        with contextlib.suppress(OSError):  # a closed terminal must not stop the supervisor
            self.console.print(f"[{style}]babysit:[/] {safe}" if style else f"babysit: {safe}")


# -- the live status line of `babysit run` -------------------------------------------------------

STATUS_HZ = 4.0  # redraws at most this often (and only when the words or the size changed)
PLAIN_EVERY_S = 300.0  # --status on a file: one plain line at each attempt's first step, then so

# The line lives in the terminal's last row, outside a scroll region that holds everything else
# (DECSTBM, as apt's progress bar does): the run's output, partial lines, `\r` progress bars and
# babysit's messages scroll above it untouched, and drawing it moves no byte of theirs. Each
# drawing is one write that saves the cursor (DECSC), works, and restores it (DECRC).
_SAVE, _RESTORE = "\x1b7", "\x1b8"
_FULL_REGION = "\x1b[r"  # DECSTBM without rows: the whole screen (it homes the cursor: saved)
_DOWN_UP = "\x1bD\x1bM"  # IND then RI: make room under the cursor (scrolls if at the bottom)


def status_mode(flag: bool | None, fd: int | None, environ: Mapping[str, str]) -> str:
    """"live" (the line at the bottom), "plain" (a line on stderr every PLAIN_EVERY_S) or "off".

    Default (flag None): live when `fd` (stdout) is a terminal that is not TERM=dumb, else off:
    a Slurm output file gets the run's output and babysit's messages, nothing redrawn.
    --status (True): live where it can be, plain elsewhere. --no-status (False): off."""
    if flag is False:
        return "off"
    tty = fd is not None and _isatty(fd) and environ.get("TERM", "") != "dumb"
    if tty:
        return "live"
    return "plain" if flag else "off"


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


class LiveStatus:
    """The status line's terminal side: the loop tells it what it sees (progress, incident,
    output: each returns at once and never raises); a thread draws it at most STATUS_HZ times a
    second. Any error turns it off with one warning; a terminal that went away turns it off
    quietly. close() puts the terminal back (the scroll region reset, the last row cleared).

        status = LiveStatus.open(flag, say, command=argv, total=cfg.run.total_steps)
        status.progress(attempt=1, step=120, values={"loss": 2.3})
        status.close()
    """

    def __init__(
        self,
        mode: str,
        say: Say | None = None,
        fd: int | None = None,
        total: int | None = None,
        no_color: bool = False,
        clock: Callable[[], float] = time.monotonic,
        size: Callable[[], tuple[int, int]] | None = None,
        hz: float = STATUS_HZ,
        plain_every_s: float = PLAIN_EVERY_S,
    ) -> None:
        self.mode = mode
        self.say = say
        self.fd = fd
        self.clock = clock
        self.hz = hz
        self.plain_every_s = plain_every_s
        self.tracker = StatusTracker(total)
        self.no_color = no_color
        self._size = size or self._terminal_size
        self._lock = threading.Lock()  # the tracker, between the loop and the drawing thread
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._region: tuple[int, int] | None = None  # (rows, cols) the scroll region is set for
        self._drawn = ""
        self._told_at: float | None = None  # plain mode: when the last line was said
        self._told_attempt: int | None = None
        self._console: Console | None = None
        # Shared with the echo of the run's output (share_terminal): the line is drawn under
        # it, and only when the output written so far ends between escape sequences.
        self._terminal: threading.Lock | None = None
        self._clean: Callable[[], bool] = lambda: True

    def share_terminal(self, lock: threading.Lock, clean: Callable[[], bool]) -> None:
        """Draw under `lock` (held by the echo of the run's output while it writes), and
        only while clean() (its bytes so far end between escape sequences and characters):
        a line drawn inside a split escape sequence garbles both."""
        self._terminal, self._clean = lock, clean

    @classmethod
    def open(
        cls,
        flag: bool | None,
        say: Say | None,
        command: Sequence[str] = (),
        total: int | None = None,
    ) -> LiveStatus:
        """The status line for this process's stdout, per status_mode(); started."""
        from babysit.views.live import total_from_command

        try:
            fd: int | None = sys.stdout.fileno()
        except (AttributeError, ValueError, OSError):  # replaced by a test runner, or closed
            fd = None
        mode = status_mode(flag, fd, os.environ)
        no_color = bool(os.environ.get("NO_COLOR"))  # no-color.org: set and not empty
        status = cls(mode, say, fd, total or total_from_command(command), no_color)
        status.start()
        return status

    # -- what the loop tells it (never blocks on the terminal, never raises) -----------------

    def progress(self, attempt: int, step: int | None, values: Mapping[str, object]) -> None:
        if self.mode == "off":
            return
        try:
            now = self.clock()
            with self._lock:
                self.tracker.progress(now, attempt, step, values)
            if self.mode == "plain":
                self._plain(now)
        except Exception as exc:  # the line is a nicety: it never costs the supervision
            self._failed(exc)

    def incident(self, attempt: int, kind: str, message: str, step: int | None = None) -> None:
        if self.mode == "off":
            return
        try:
            with self._lock:
                self.tracker.incident(self.clock(), kind, message, step)
        except Exception as exc:
            self._failed(exc)

    def output(self, data: bytes) -> None:
        if self.mode != "live" or self.tracker.fixed_total is not None:
            return
        try:
            with self._lock:
                self.tracker.output(data)
        except Exception as exc:
            self._failed(exc)

    # -- drawing --------------------------------------------------------------------------------

    def start(self) -> None:
        if self.mode == "live" and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="babysit-status", daemon=True)
            self._thread.start()

    def close(self, timeout_s: float = 1.0) -> None:
        """Stop drawing and give the terminal back as it was (but for what scrolled)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout_s)
            if thread.is_alive():
                return  # stuck writing to a terminal that does not read: leave it be
        if self._region is not None:
            rows = self._region[0]
            self._region = None
            # Not after a write of the echo stuck on a terminal that does not read.
            lock = self._terminal
            if lock is not None and not lock.acquire(timeout=timeout_s):
                return
            try:
                with contextlib.suppress(OSError):
                    self._write(f"{_SAVE}{_FULL_REGION}\x1b[{rows};1H\x1b[2K{_RESTORE}")
            finally:
                if lock is not None:
                    lock.release()

    def _run(self) -> None:
        last_second = -1
        while not self._stop.wait(1.0 / self.hz):
            try:
                with self._lock:
                    if self.tracker.attempt is None:
                        continue  # nothing to say before the first attempt
                    now = self.clock()
                    state = self.tracker.state(now)
                # The ages in the line move each second: redraw then, or when the words change.
                second = int(now)
                with self._terminal if self._terminal is not None else contextlib.nullcontext():
                    if not self._clean():
                        continue  # the output stops inside an escape sequence: next time
                    line = self._render(state)
                    if line is None or (line == self._drawn and second == last_second):
                        continue
                    last_second = second
                    self._draw(line)
            except OSError:
                self.mode = "off"  # the terminal went away: nothing to draw on, nobody to tell
                return
            except Exception as exc:
                self._failed(exc)
                self.close_region_quietly()
                return

    def _render(self, state: StatusState) -> str | None:
        """The line in the terminal's codes, cut to its width; None when it is too small."""
        rows, cols = self._size()
        if rows < 3 or cols < 20:
            return None
        if self._region != (rows, cols):
            self._set_region(rows, cols)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        for i, (part, style) in enumerate(status_parts(state)):
            if i:
                text.append(SEP, "dim")
            text.append(part, style)  # Text takes no markup: the run's words print as written
        text.truncate(cols - 1, overflow="ellipsis")  # not the last column: no wrap pending
        console = self._console
        if console is None or console.width != cols - 1:
            console = self._console = Console(
                file=io.StringIO(),
                force_terminal=True,
                color_system="standard",
                no_color=self.no_color,
                width=cols - 1,
                highlight=False,
                markup=False,
                emoji=False,
                legacy_windows=False,
            )
        with console.capture() as cap:
            console.print(text, end="", no_wrap=True, overflow="ellipsis", crop=True)
        return cap.get()

    def _set_region(self, rows: int, cols: int) -> None:
        """Keep the last row for the line: the rest scrolls (again after a resize)."""
        # After a resize, the old region goes first (the whole screen scrolls again) and the
        # new last row is cleared with the drawing; IND/RI keep the cursor's column.
        reset = f"{_SAVE}{_FULL_REGION}{_RESTORE}" if self._region is not None else ""
        self._region = (rows, cols)
        self._drawn = ""
        self._write(f"{reset}{_DOWN_UP}{_SAVE}\x1b[1;{rows - 1}r{_RESTORE}")

    def _draw(self, line: str) -> None:
        assert self._region is not None
        self._write(f"{_SAVE}\x1b[{self._region[0]};1H\x1b[2K{line}{_RESTORE}")
        self._drawn = line

    def close_region_quietly(self) -> None:
        if self._region is not None:
            rows, self._region = self._region[0], None
            with contextlib.suppress(OSError):
                self._write(f"{_SAVE}{_FULL_REGION}\x1b[{rows};1H\x1b[2K{_RESTORE}")

    def _write(self, codes: str) -> None:
        """One write() per drawing where the terminal takes it all: it never splits another."""
        assert self.fd is not None
        data = codes.encode("utf-8", "replace")
        while data:
            n = os.write(self.fd, data)
            data = data[n:]

    def _terminal_size(self) -> tuple[int, int]:
        assert self.fd is not None
        try:
            size = os.get_terminal_size(self.fd)
        except OSError:
            return (0, 0)
        return (size.lines, size.columns)

    def _plain(self, now: float) -> None:
        """--status where nothing can be redrawn: one line at each attempt's first step, then
        one every plain_every_s, said like babysit's other messages (stderr, no codes there but
        rich's, which it leaves out when stderr is a file)."""
        with self._lock:
            t = self.tracker
            if t.step is None:
                return
            new = t.attempt != self._told_attempt
            if not new and self._told_at is not None and now - self._told_at < self.plain_every_s:
                return
            self._told_attempt, self._told_at = t.attempt, now
            words = status_text(t.state(now))
        if self.say is not None:
            self.say(Level.INFO, f"status: {words}")

    def _failed(self, exc: Exception) -> None:
        if self.mode == "off":
            return
        self.mode = "off"
        self._stop.set()
        if self.say is not None:
            with contextlib.suppress(Exception):
                self.say(
                    Level.WARN,
                    f"the status line failed and is off ({type(exc).__name__}: {exc}); "
                    "supervision goes on",
                )
