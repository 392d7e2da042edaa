"""Fakes for the supervise loop's seams: a clock that moves only when slept on, and an engine
whose attempts are scripts instead of processes. Nothing here waits in real time.

    clock = FakeClock()
    engine = FakeEngine(clock, [Script.crash(steps(1, 5), "ConnectionError: reset"),
                                Script(steps(6, 9), ends_at=1.0)])
    seams = Seams(clock.sleep, clock.monotonic, clock.wall, lambda: 0.5, None, None)
    code = Supervisor(cfg, argv, "run", home, cwd, Said(), seams, engine).run()
    clock.at(5.0, lambda: sup.request_stop(signal.SIGTERM))   # things that happen at a time
    engine.launches, engine.signals                             # what babysit asked for

An attempt's lines are appended to its stdout.log / stderr.log (and its files written) when the
fake clock reaches their time, counted from its launch; it ends at `Script.ends_at`, or when a
signal it obeys arrives, or on `kill`. Like the real launcher, its ExitStatus lists the stop
signals it received. Pids are above any kernel's pid_max, so a fake pid is never a real process.
"""

from __future__ import annotations

import heapq
import itertools
import os
import signal
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from babysit.engines.base import LaunchSpec, NodeResult, NoExtras, RankProcess, with_exclude
from babysit.engines.process import STDERR_NAME, STDOUT_NAME, Handle
from babysit.records import ExitStatus, Level

FAKE_PID_BASE = 5_000_000  # above the largest pid_max Linux allows (2**22)
WALL_START = 1_700_000_000.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # what the launcher records


class BabysitKilled(BaseException):
    """Raised from a clock timer to end babysit as a SIGKILL would: mid-loop, its attempt left
    running. A BaseException, so that no `except Exception` in babysit catches it."""


class FakeClock:
    """Monotonic and wall time that advance only when `sleep` (or `advance`) is called; timers
    set with `at` run when the clock passes their time, in order."""

    def __init__(self, wall_start: float = WALL_START, limit_s: float = 100_000.0) -> None:
        self.now = 0.0  # monotonic
        self.wall_start = wall_start
        self.limit_s = limit_s  # a loop that never ends fails the test instead of spinning
        self.slept: list[float] = []
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()

    def monotonic(self) -> float:
        return self.now

    def wall(self) -> float:
        return self.wall_start + self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, f"sleep({seconds})"
        self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        target = self.now + seconds
        while self._timers and self._timers[0][0] <= target:
            when, _, action = heapq.heappop(self._timers)
            self.now = max(self.now, when)
            action()
        self.now = target
        if self.now > self.limit_s:
            raise AssertionError(f"the fake clock passed {self.limit_s:g}s: the loop never ended")

    def at(self, when: float, action: Callable[[], None]) -> None:
        """Run `action` when the monotonic clock reaches `when` (at once if it has)."""
        if when <= self.now:
            action()
        else:
            heapq.heappush(self._timers, (when, next(self._order), action))


@dataclass(frozen=True)
class Script:
    """One attempt as a test writes it. Times are seconds after its launch."""

    stdout: Sequence[tuple[float, str]] = ()
    stderr: Sequence[tuple[float, str]] = ()
    files: Sequence[tuple[float, str]] = ()  # files it writes (relative to the spec's cwd)
    ends_at: float | None = 0.0  # None: it never ends by itself (a hang, or a long run)
    exit_code: int | None = 0  # how it ends by itself
    killed_by: int | None = None  # ... or the signal it dies of by itself
    obeys: bool = True  # a stop signal ends it (killed by that signal); False: only SIGKILL
    exit_on_stop: int | None = None  # a polite script: exits with this code on a stop signal

    @classmethod
    def crash(
        cls, stdout: Sequence[tuple[float, str]], error: str, code: int = 1, at: float | None = None
    ) -> Script:
        """Prints `stdout`, then a Python traceback ending in `error` on stderr, exits `code`."""
        end = at if at is not None else (stdout[-1][0] if stdout else 0.0) + 0.1
        tb = traceback_lines(error)
        return cls(stdout, [(end, line) for line in tb], ends_at=end, exit_code=code)


def steps(
    first: int, last: int, every_s: float = 0.1, start_s: float = 0.1, loss: str = "2.50"
) -> list[tuple[float, str]]:
    """nanoGPT lines `iter N: loss L, time 5.00ms` for steps first..last, one every `every_s`."""
    return [
        (start_s + i * every_s, f"iter {n}: loss {loss}, time 5.00ms")
        for i, n in enumerate(range(first, last + 1))
    ]


def traceback_lines(error: str, file: str = "train.py") -> list[str]:
    return [
        "Traceback (most recent call last):",
        f'  File "{file}", line 12, in <module>',
        "    main()",
        error,
    ]


@dataclass
class FakeAttempt:
    """What the engine knows of one launched attempt."""

    handle: Handle
    spec: LaunchSpec
    script: Script
    launched_at: float  # monotonic
    status: ExitStatus | None = None
    ended_at: float | None = None  # monotonic
    signals: list[int] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return self.status is None


class FakeEngine(NoExtras):
    """The Engine protocol on scripts (see the module docstring). Scripts are used in launch
    order; when they run out, the last one repeats."""

    name = "fake"

    def __init__(
        self,
        clock: FakeClock,
        scripts: Iterable[Script] = (),
        host: str = "fake-node",
        node_results: Sequence[NodeResult] = (),
    ) -> None:
        self.clock = clock
        self.scripts = list(scripts)
        self.host = host
        self.node_results = list(node_results)
        self.attempts: list[FakeAttempt] = []
        self.launches: list[LaunchSpec] = []
        self.signals: list[tuple[int, int]] = []  # (attempt index from 1, signal)
        self.kills: list[int] = []  # attempt indexes killed with SIGKILL
        self.node_commands: list[list[str]] = []
        self.banned: list[list[str]] = []
        self._pids = itertools.count(FAKE_PID_BASE, 10)

    # -- launching -----------------------------------------------------------------------------

    def apply_bans(self, spec: LaunchSpec, banned: Sequence[str]) -> LaunchSpec:
        self.banned.append(list(banned))
        return with_exclude(spec, banned)

    def launch(self, spec: LaunchSpec) -> Handle:
        spec.attempt_dir.mkdir(parents=True, exist_ok=True)
        for name in (STDOUT_NAME, STDERR_NAME):
            (spec.attempt_dir / name).touch()
        index = len(self.attempts)
        script = self.scripts[min(index, len(self.scripts) - 1)]
        handle = Handle(next(self._pids), self.clock.wall(), spec.attempt_dir, spec.token)
        attempt = FakeAttempt(handle, spec, script, self.clock.monotonic())
        self.attempts.append(attempt)
        self.launches.append(spec)
        start = self.clock.monotonic()
        for stream, lines in ((STDOUT_NAME, script.stdout), (STDERR_NAME, script.stderr)):
            for t, text in lines:
                self.clock.at(start + t, self._writer(attempt, stream, text))
        for t, rel in script.files:
            self.clock.at(start + t, self._file_writer(attempt, spec.cwd / rel))
        if script.ends_at is not None:
            code = script.exit_code if script.killed_by is None else None
            ends = ExitStatus(code, script.killed_by, 0.0)
            self.clock.at(start + script.ends_at, lambda: self._end(attempt, ends))
        return handle

    def _writer(self, attempt: FakeAttempt, stream: str, text: str) -> Callable[[], None]:
        def write() -> None:
            if attempt.alive:
                with (attempt.handle.attempt_dir / stream).open("a", encoding="utf-8") as fh:
                    fh.write(text + "\n")

        return write

    def _file_writer(self, attempt: FakeAttempt, path: Path) -> Callable[[], None]:
        def write() -> None:
            if attempt.alive:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"weights")
                wall = self.clock.wall()
                os.utime(path, (wall, wall))  # the checkpoint scan reads mtimes: fake time

        return write

    def _end(self, attempt: FakeAttempt, how: ExitStatus) -> None:
        if attempt.alive:
            received = tuple(s for s in attempt.signals if s in STOP_SIGNALS)
            attempt.status = ExitStatus(how.exit_code, how.signal, self.clock.wall(), received)
            attempt.ended_at = self.clock.monotonic()

    def _find(self, handle: Handle) -> FakeAttempt | None:
        return next((a for a in self.attempts if a.handle.token == handle.token), None)

    def _index(self, handle: Handle) -> int:
        found = self._find(handle)
        return self.attempts.index(found) + 1 if found is not None else 0

    # -- finding an attempt again --------------------------------------------------------------

    def reattach(
        self,
        launcher_pid: int | None,
        launcher_started: float | None,
        attempt_dir: Path,
        token: str,
    ) -> Handle | None:
        """A handle when that launcher is still alive (as the real one checks pid + start)."""
        for a in self.attempts:
            h = a.handle
            if a.alive and (h.launcher_pid, h.launcher_started) == (launcher_pid, launcher_started):
                return Handle(h.launcher_pid, h.launcher_started, h.attempt_dir, h.token)
        return None

    def adopt(self, attempt_dir: Path, token: str | None = None) -> Handle | None:
        """A handle from what the launcher left in the directory, alive or not."""
        for a in self.attempts:
            h = a.handle
            if h.attempt_dir.resolve() == attempt_dir.resolve() and token in (None, h.token):
                alive_or_not = h.launcher_started if a.alive else 0.0
                return Handle(h.launcher_pid, alive_or_not, h.attempt_dir, h.token)
        return None

    # -- observing -----------------------------------------------------------------------------

    def poll(self, handle: Handle) -> ExitStatus | None:
        a = self._find(handle)
        if a is None:  # never launched: nothing says how it ended (like the real launcher)
            return ExitStatus(None, None, self.clock.wall())
        return a.status

    def wait(self, handle: Handle, timeout_s: float, sleep: Callable[[float], None]) -> None:
        sleep(timeout_s)

    def close(self, handle: Handle) -> None:
        pass

    def main_pid(self, handle: Handle) -> int | None:
        return handle.launcher_pid + 1

    def ranks(self, handle: Handle) -> list[RankProcess]:
        a = self._find(handle)
        if a is None or not a.alive:
            return []
        return [RankProcess(handle.launcher_pid + 1, self.host, 0)]

    def survivors(self, handle: Handle) -> list[int]:
        a = self._find(handle)
        if a is None or not a.alive:
            return []
        return [handle.launcher_pid, handle.launcher_pid + 1]

    def sweep(self, handle: Handle) -> list[int]:
        return []

    # -- acting --------------------------------------------------------------------------------

    def signal(self, handle: Handle, sig: int) -> None:
        self.signals.append((self._index(handle), sig))
        a = self._find(handle)
        if a is None or not a.alive:
            return
        a.signals.append(sig)
        if sig == signal.SIGKILL:
            self._end(a, ExitStatus(None, signal.SIGKILL, 0.0))
        elif sig in STOP_SIGNALS and a.script.obeys:
            code = a.script.exit_on_stop
            self._end(a, ExitStatus(code, sig if code is None else None, 0.0))

    def kill(self, handle: Handle, spare_launcher: bool = False) -> None:
        self.kills.append(self._index(handle))
        a = self._find(handle)
        if a is not None:
            self._end(a, ExitStatus(None, signal.SIGKILL, 0.0))

    def on_each_node(
        self, handle: Handle | None, argv: Sequence[str], timeout_s: float
    ) -> list[NodeResult]:
        self.node_commands.append(list(argv))
        return list(self.node_results) or [NodeResult(self.host, 0, "", "")]


class Said:
    """A `say` that keeps what babysit told the operator."""

    def __init__(self) -> None:
        self.messages: list[tuple[Level, str]] = []

    def __call__(self, level: Level, message: str) -> None:
        self.messages.append((level, message))

    @property
    def text(self) -> str:
        return "\n".join(f"{level.value}: {message}" for level, message in self.messages)
