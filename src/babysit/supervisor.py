"""The supervisor loop: the one module that wires sources, parse, detect, policy, act and store.

    sup = Supervisor(cfg, ["python", "train.py"], name="train", home=Path(".babysit"),
                     cwd=Path.cwd())
    code = sup.run()          # -> ExitCode
    sup.request_stop(signal.SIGINT)   # from a signal handler: pass it on, escalate after grace

One attempt at a time: launch (or re-attach to the attempt an earlier babysit left running),
follow its log files, echo them, read progress and errors from them; when it ends, judge it,
commit the verdict, ask the policy, commit the decision, then act. A failure to write the store
is reported and retried, never allowed to stop the supervision of the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import shlex
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from babysit.act import process
from babysit.config import Config
from babysit.detect.outcome import AttemptEvidence, judge, signal_name
from babysit.errors import CommandNotFound, ConfigError, LaunchError, RunBusy, StoreWriteError
from babysit.parse.lines import LineParser
from babysit.policy.checkpoint import choose_checkpoint
from babysit.policy.restart import RestartPolicy, decide
from babysit.records import (
    AttemptRecord,
    Checkpoint,
    Decision,
    DecisionKind,
    Event,
    EventKind,
    ExitCode,
    ExitStatus,
    Outcome,
    OutputLine,
    Progress,
    PythonError,
    RunState,
)
from babysit.sources.checkpoints import scan_checkpoints
from babysit.sources.follow import Follower
from babysit.store import Store

Say = Callable[[str, str], None]
PROGRESS_FLUSH_S = 2.0
LOW_DISK_BYTES = 1 << 30  # how often the last step and log offsets are committed while running


@dataclass
class Seams:
    """The side effects the loop uses, replaceable in tests."""

    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    uniform: Callable[[], float] = random.random
    stdout: IO[bytes] | None = field(default_factory=lambda: _std_buffer(sys.stdout))
    stderr: IO[bytes] | None = field(default_factory=lambda: _std_buffer(sys.stderr))


def _std_buffer(stream: Any) -> IO[bytes] | None:
    return getattr(stream, "buffer", None)


@dataclass
class _Live:
    """What the loop knows about the attempt it is watching."""

    number: int
    handle: process.Handle
    followers: list[Follower]
    started: float
    first_step: int | None = None
    last_step: int | None = None
    errors: list[PythonError] = field(default_factory=list)
    parser: LineParser = field(default_factory=LineParser)
    flushed_at: float = 0.0


class Supervisor:
    def __init__(
        self,
        cfg: Config,
        command: list[str],
        name: str,
        home: Path,
        cwd: Path,
        say: Say,
        seams: Seams | None = None,
    ) -> None:
        self.cfg = cfg
        self.command = command
        self.name = name
        self.home = home
        self.cwd = cwd
        self.say = say
        self.seams = seams or Seams()
        self.run_dir = home / "runs" / name
        self.policy = RestartPolicy(**asdict(cfg.restart))
        self._stop_signals: list[int] = []
        self._pending: list[Callable[[], None]] = []
        self._store_warned = False
        self.store: Store | None = None
        self.live: _Live | None = None
        self.attempts_seen = 0

    # -- the operator -------------------------------------------------------------------------

    def request_stop(self, sig: int = signal.SIGTERM) -> None:
        """Async-signal-safe enough: only appends; the loop does the work."""
        self._stop_signals.append(sig)

    # -- store writes that never take the run down -----------------------------------------------

    def _record(self, write: Callable[[], None]) -> None:
        self._pending.append(write)
        self._flush_pending()

    def _flush_pending(self) -> None:
        while self._pending:
            try:
                self._pending[0]()
            except StoreWriteError as exc:
                if not self._store_warned:
                    self.say(
                        "warn",
                        f"{exc}. Supervision goes on; the entries are kept in memory "
                        "and written when the store accepts them again.",
                    )
                    self._store_warned = True
                return
            self._pending.pop(0)
            if self._store_warned and not self._pending:
                self.say("info", "the store accepts writes again; nothing was lost")
                self._store_warned = False

    def _event(
        self, kind: EventKind, message: str, attempt: int | None = None, **data: Any
    ) -> None:
        assert self.store is not None
        store = self.store
        event = Event(self.name, kind, message, self.seams.wall(), attempt, data)
        self._record(lambda: store.add_event(event))

    def _state(
        self, state: RunState, reason: str | None = None, exit_code: int | None = None
    ) -> None:
        assert self.store is not None
        store = self.store
        self._record(lambda: store.set_run_state(self.name, state, reason, exit_code))

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> ExitCode:
        self.store = Store.open(self.home)
        for warning in self.store.warnings:
            self.say("warn", warning)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        lock = self._lock()
        try:
            return self._supervise()
        finally:
            with contextlib.suppress(StoreWriteError):
                self.store.release_run(self.name)
            self._flush_pending()
            if self._pending:
                self.say(
                    "error",
                    f"{len(self._pending)} logbook entries could not be written to "
                    f"{self.home}: the store still refuses writes (disk full?)",
                )
            lock.close()
            self.store.close()

    def _lock(self) -> IO[str]:
        path = self.run_dir / "supervisor.lock"
        fh = path.open("a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise RunBusy(
                f"run {self.name!r} is already supervised by babysit ({holder}); use "
                "`babysit status` to see it, or pick another --name"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()} on {os.uname().nodename}\n")
        fh.flush()
        return fh

    def _supervise(self) -> ExitCode:
        assert self.store is not None
        store = self.store
        existing = {r["name"]: r for r in store.runs()}.get(self.name)
        history = store.history(self.name) if existing else []
        self.attempts_seen = len(history)
        self._check_command()
        self._check_checkpoint_glob()
        store.start_run(self.name, self.command, str(self.cwd), _config_dict(self.cfg))
        if existing is None or RunState(existing["state"]) in (RunState.SUCCEEDED, RunState.FAILED):
            self._record(lambda: store.set_budget_from(self.name, len(history) + 1))
        self._event(
            EventKind.RUN_STARTED,
            f"babysit {os.getpid()} supervises {shlex.join(self.command)}",
            command=self.command,
            cwd=str(self.cwd),
        )

        resumed = self._resume_unfinished(history)
        while True:
            if resumed is not None:
                self.live, resumed = resumed, None
            else:
                if self._stop_signals:
                    return self._stopped(None)
                try:
                    self.live = self._launch()
                except LaunchError as exc:
                    self.say("error", str(exc))
                    self._state(RunState.FAILED, str(exc), ExitCode.NEEDS_HUMAN)
                    return ExitCode.NEEDS_HUMAN
            status = self._watch(self.live)
            if status is None:  # the operator stopped it
                return self._stopped(self.live)
            decision = self._ended(self.live, status)
            self.live = None
            if decision.kind == DecisionKind.SUCCEED:
                self.say("ok", decision.reason)
                self._event(EventKind.SUCCEEDED, decision.reason)
                self._state(RunState.SUCCEEDED, decision.reason, ExitCode.OK)
                return ExitCode.OK
            if decision.kind != DecisionKind.RESTART:
                code = (
                    ExitCode.NEEDS_HUMAN
                    if decision.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
                    else ExitCode.BUDGET_EXHAUSTED
                )
                advice = (
                    "a human must fix this before the next try; do not requeue as is"
                    if code == ExitCode.NEEDS_HUMAN
                    else "the failures looked transient; a requeue (on other nodes?) may help"
                )
                self.say("error", f"giving up: {decision.reason} ({advice}; exit code {int(code)})")
                self._event(EventKind.GAVE_UP, decision.reason, exit_code=int(code), advice=advice)
                self._state(RunState.FAILED, decision.reason, code)
                return code
            self.say("warn", decision.reason)
            self._event(EventKind.RESTART_SCHEDULED, decision.reason, delay_s=decision.delay_s)
            self._state(RunState.BACKOFF, decision.reason)
            if not self._backoff(decision.delay_s):
                return self._stopped(None)

    # -- checks before launching ----------------------------------------------------------------

    def _check_command(self) -> None:
        prog = self.command[0]
        if os.sep in prog:
            path = prog if os.path.isabs(prog) else str(self.cwd / prog)
            if not os.path.exists(path):
                raise CommandNotFound(f"command not found: {prog} (no such file)")
            if not os.access(path, os.X_OK) or os.path.isdir(path):
                raise CommandNotFound(f"command not executable: {prog} (check its mode: chmod +x)")
        elif shutil.which(prog) is None:
            raise CommandNotFound(
                f"command not found: {prog!r} is not on PATH (activate the environment that "
                "has it, or give its full path)"
            )

    def _check_checkpoint_glob(self) -> None:
        pattern = self.cfg.checkpoint.glob
        uses_placeholder = any("{checkpoint}" in a for a in self.command) or (
            "{checkpoint}" in self.cfg.run.resume_args
        )
        if uses_placeholder and not pattern:
            raise ConfigError(
                "the command uses {checkpoint} but no checkpoint glob is set: pass "
                "--checkpoint 'out/ckpt_*.pt' (or [checkpoint] glob in babysit.toml)"
            )
        if not pattern:
            return
        fixed = []
        for part in Path(os.path.expanduser(pattern)).parts:
            if any(c in part for c in "*?["):
                break
            fixed.append(part)
        base = self.cwd / Path(*fixed) if fixed else self.cwd
        while not base.exists() and base != base.parent:
            base = base.parent
        if base.is_dir() and not os.access(base, os.R_OK | os.X_OK):
            raise ConfigError(
                f"checkpoint.glob {pattern!r}: cannot read directory {base} (permission denied)"
            )

    # -- launching -----------------------------------------------------------------------------

    def _pick_checkpoint(self, settle_s: float) -> Checkpoint | None:
        pattern = self.cfg.checkpoint.glob
        if not pattern:
            return None
        full = pattern if os.path.isabs(os.path.expanduser(pattern)) else str(self.cwd / pattern)
        found = scan_checkpoints(full, self.seams.wall(), settle_s)
        chosen, passed_over = choose_checkpoint(found)
        for ckpt in passed_over:
            self.say("warn", f"skipping checkpoint {ckpt.path}: {ckpt.problem}")
        if chosen is None and found:
            self.say("warn", f"no usable checkpoint among {len(found)} matching {pattern!r}")
        elif not found:
            self.say("info", f"no checkpoint matches {pattern!r} yet: starting from scratch")
        if chosen is not None or passed_over:
            self._event(
                EventKind.CHECKPOINT,
                f"resuming from {chosen.path}" if chosen else "no usable checkpoint",
                path=chosen.path if chosen else None,
                step=chosen.step if chosen else None,
                passed_over=[{"path": c.path, "problem": c.problem} for c in passed_over],
            )
        return chosen

    def _argv(self, ckpt: Checkpoint | None) -> list[str]:
        argv = []
        for arg in self.command:
            if "{checkpoint}" in arg:
                if ckpt is None:
                    continue  # `--resume={checkpoint}` is dropped when there is nothing to resume
                arg = arg.replace("{checkpoint}", ckpt.path)
            argv.append(arg)
        if ckpt is not None and self.cfg.run.resume_args:
            argv += [
                a.replace("{checkpoint}", ckpt.path) for a in shlex.split(self.cfg.run.resume_args)
            ]
        return argv

    def _launch(self) -> _Live:
        assert self.store is not None
        store = self.store
        self.attempts_seen += 1  # counted here: the store may be refusing writes right now
        number = self.attempts_seen
        ckpt = self._pick_checkpoint(self.cfg.checkpoint.settle_s if number == 1 else 0.0)
        argv = self._argv(ckpt)
        attempt_dir = self.run_dir / f"attempt-{number:04d}"
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")  # progress lines reach the log file as printed
        env.update(
            {
                "BABYSIT_RUN": self.name,
                "BABYSIT_ATTEMPT": str(number),
                "BABYSIT_HOME": str(self.home.resolve()),
            }
        )
        env.pop("BABYSIT_RESUME_FROM", None)
        if ckpt is not None:
            env["BABYSIT_RESUME_FROM"] = ckpt.path
        token = f"{self.name}/{number}/{uuid.uuid4().hex}"
        self._warn_if_disk_low(attempt_dir.parent)
        handle = process.launch(argv, env, self.cwd, attempt_dir, self.cfg.stop.grace_s, token)
        started = self.seams.wall()
        fields = {
            "started": started,
            "host": os.uname().nodename,
            "pid": None,
            "launcher_pid": handle.launcher_pid,
            "launcher_started": handle.launcher_started,
            "argv": argv,
            "resume_from": ckpt.path if ckpt else None,
            "log_dir": str(attempt_dir),
            "token": token,
        }
        self._record(lambda: store.add_attempt(self.name, number, fields))
        self._state(RunState.RUNNING)
        where = f", resuming from {ckpt.path}" if ckpt else ""
        self.say("info", f"attempt {number} started{where}; output in {attempt_dir}")
        self._event(
            EventKind.ATTEMPT_STARTED,
            f"attempt {number} started{where}",
            number,
            argv=argv,
            launcher_pid=handle.launcher_pid,
            resume_from=fields["resume_from"],
        )
        return _Live(number, handle, self._followers(attempt_dir, 0, 0), started)

    def _warn_if_disk_low(self, directory: Path) -> None:
        try:
            free = shutil.disk_usage(directory).free
        except OSError:
            return
        if free < LOW_DISK_BYTES:
            self.say(
                "warn",
                f"only {free / 2**20:.0f} MiB free under {directory}: the run's "
                "output files are there, and a program whose print fails may crash",
            )

    def _followers(self, attempt_dir: Path, out_off: int, err_off: int) -> list[Follower]:
        return [
            Follower(attempt_dir / process.STDOUT_NAME, "stdout", out_off),
            Follower(attempt_dir / process.STDERR_NAME, "stderr", err_off),
        ]

    def _resume_unfinished(self, history: list[AttemptRecord]) -> _Live | None:
        """Re-attach to an attempt left running by a babysit that died, or close it."""
        assert self.store is not None
        if not history or history[-1].outcome != Outcome.RUNNING:
            return None
        row = self.store.attempts(self.name)[-1]
        attempt_dir = Path(row["log_dir"])
        handle = process.reattach(
            row["launcher_pid"], row["launcher_started"], attempt_dir, row.get("token") or ""
        )
        followers = self._followers(attempt_dir, row["stdout_offset"], row["stderr_offset"])
        live = _Live(
            row["number"],
            handle
            or process.Handle(
                row["launcher_pid"] or 0,
                row["launcher_started"] or 0.0,
                attempt_dir,
                row.get("token") or "",
            ),
            followers,
            row["started"],
            row["first_step"],
            row["last_step"],
        )
        if handle is not None:
            msg = (
                f"re-attached to attempt {live.number} (launcher pid {handle.launcher_pid}), "
                "still running; following its output"
            )
        else:
            msg = f"attempt {live.number} ended while babysit was away; recording how"
        self.say("info", msg)
        self._event(EventKind.REATTACHED, msg, live.number, alive=handle is not None)
        self._state(RunState.RUNNING)
        return live

    # -- watching ------------------------------------------------------------------------------

    def _pump(self, live: _Live, final: bool = False) -> None:
        now = self.seams.wall()
        for f in live.followers:
            while True:  # one bounded read per stream; at the end, read everything that is left
                chunk = f.poll(now, final=final)
                if chunk.data and self.cfg.run.echo:
                    self._echo(f.stream, chunk.data)
                self._parse(live, chunk.lines)
                if not final or not chunk.data:
                    break
        if final or self.seams.monotonic() - live.flushed_at >= PROGRESS_FLUSH_S:
            self._flush_progress(live)

    def _parse(self, live: _Live, lines: list[OutputLine]) -> None:
        for line in lines:
            for rec in live.parser.feed(line):
                if isinstance(rec, Progress):
                    if live.first_step is None:
                        live.first_step = rec.step
                    live.last_step = rec.step
                else:
                    live.errors.append(rec)
                    del live.errors[:-20]

    def _flush_progress(self, live: _Live) -> None:
        assert self.store is not None
        store = self.store
        live.flushed_at = self.seams.monotonic()
        fields = {
            "first_step": live.first_step,
            "last_step": live.last_step,
            "stdout_offset": live.followers[0].consumed,
            "stderr_offset": live.followers[1].consumed,
        }
        pid = live.handle.training_pid()
        if pid is not None:
            fields["pid"] = pid
        number = live.number
        self._record(lambda: store.update_attempt(self.name, number, fields))

    def _echo(self, stream: str, data: bytes) -> None:
        target = self.seams.stdout if stream == "stdout" else self.seams.stderr
        if target is None:
            return
        try:
            target.write(data)
            target.flush()
        except (OSError, ValueError):
            # The terminal went away (closed, EPIPE): keep supervising, stop echoing there.
            if stream == "stdout":
                self.seams.stdout = None
            else:
                self.seams.stderr = None

    def _watch(self, live: _Live) -> ExitStatus | None:
        """Follow the attempt until it ends (its exit status) or the operator stops it (None)."""
        while True:
            self._pump(live)
            self._flush_pending()
            status = live.handle.poll()
            if status is not None:
                live.handle.close()
                self._pump(live, final=True)
                return status
            if self._stop_signals:
                return None
            live.handle.wait(self.cfg.run.poll_s, self.seams.sleep)  # wakes at once on exit

    def _ended(self, live: _Live, status: ExitStatus) -> Decision:
        assert self.store is not None
        store = self.store
        verdict = judge(
            AttemptEvidence(status, tuple(live.errors), live.first_step, live.last_step)
        )
        if status.exit_code == 0:
            outcome = Outcome.SUCCEEDED
        elif status.signal is not None:
            outcome = Outcome.KILLED
        elif status.exit_code is None:
            outcome = Outcome.LOST
        else:
            outcome = Outcome.FAILED
        fields: dict[str, Any] = {
            "ended": status.ended,
            "outcome": outcome,
            "exit_code": status.exit_code,
            "signal": status.signal,
        }
        if verdict is not None:
            fields.update(
                category=verdict.category,
                transient=verdict.transient,
                fingerprint=verdict.fingerprint,
                summary=verdict.summary,
            )
        number = live.number
        self._record(lambda: store.update_attempt(self.name, number, fields))
        how = (
            "finished"
            if outcome == Outcome.SUCCEEDED
            else f"killed by {signal_name(status.signal)}"
            if status.signal is not None
            else "ended (exit status unknown)"
            if status.exit_code is None
            else f"exited with code {status.exit_code}"
        )
        steps = f" at step {live.last_step}" if live.last_step is not None else " before any step"
        self._event(
            EventKind.ATTEMPT_ENDED,
            f"attempt {number} {how}{steps}",
            number,
            outcome=outcome.value,
            exit_code=status.exit_code,
            signal=status.signal,
            last_step=live.last_step,
            verdict=asdict(verdict) if verdict is not None else None,
        )
        if verdict is not None:
            self.say("warn", f"attempt {number} {how}{steps}: {verdict.summary}")
        history = self._budget_history()
        current = AttemptRecord(
            number,
            live.started,
            status.ended,
            outcome,
            status.exit_code,
            status.signal,
            live.first_step,
            live.last_step,
            verdict.category if verdict else None,
            verdict.transient if verdict else None,
            verdict.fingerprint if verdict else None,
            verdict.summary if verdict else None,
        )
        history = [a for a in history if a.number != number] + [current]
        return decide(history, self.policy, self.seams.uniform())

    def _budget_history(self) -> list[AttemptRecord]:
        assert self.store is not None
        try:
            start = int(self.store.run(self.name).get("budget_from") or 1)
            return [a for a in self.store.history(self.name) if a.number >= start]
        except Exception:
            return []

    def _backoff(self, delay_s: float) -> bool:
        """Sleep before the next attempt; False when the operator stopped babysit meanwhile."""
        deadline = self.seams.monotonic() + delay_s
        while self.seams.monotonic() < deadline:
            if self._stop_signals:
                return False
            self._flush_pending()
            self.seams.sleep(min(self.cfg.run.poll_s, max(deadline - self.seams.monotonic(), 0)))
        return not self._stop_signals

    # -- stopping ------------------------------------------------------------------------------

    def _stopped(self, live: _Live | None) -> ExitCode:
        assert self.store is not None
        store = self.store
        sig = self._stop_signals[0] if self._stop_signals else signal.SIGTERM
        name = signal_name(sig)
        self._state(RunState.STOPPING, f"operator sent {name}")
        if live is None:
            self._event(EventKind.STOPPED, f"stopped by {name} between attempts")
            self.say("info", f"stopped by {name} between attempts")
            self._state(RunState.STOPPED, f"stopped by {name}", ExitCode.STOPPED)
            return ExitCode.STOPPED
        grace = self.cfg.stop.grace_s
        self.say(
            "info",
            f"{name} received: passing it to attempt {live.number}'s processes; "
            f"they are killed if still alive in {grace:g}s (send it again to kill now)",
        )
        self._event(
            EventKind.STOP_REQUESTED,
            f"operator sent {name}; passed to the process group",
            live.number,
            signal=sig,
            grace_s=grace,
        )
        process.signal_group(live.handle, sig)
        deadline = self.seams.monotonic() + grace
        forced = False
        while process.survivors(live.handle):
            self._pump(live)
            if not forced and (len(self._stop_signals) > 1 or self.seams.monotonic() >= deadline):
                forced = True
                why = "second signal" if len(self._stop_signals) > 1 else f"{grace:g}s grace over"
                left = process.survivors(live.handle)
                self.say(
                    "warn",
                    f"{why}: killing {len(left)} remaining process(es) of attempt "
                    f"{live.number} with SIGKILL",
                )
                self._event(
                    EventKind.FORCE_KILLED,
                    f"{why}: SIGKILL to {len(left)} process(es)",
                    live.number,
                    pids=left,
                )
                deadline = self.seams.monotonic() + 10.0
            if forced:
                process.kill_all(live.handle)
                if self.seams.monotonic() >= deadline:
                    left = process.survivors(live.handle)
                    self.say(
                        "error",
                        f"processes {left} of attempt {live.number} survive SIGKILL "
                        "(stuck in the kernel, e.g. on a hung filesystem or GPU driver)",
                    )
                    break
            self.seams.sleep(min(self.cfg.run.poll_s, 0.1))
        self._pump(live, final=True)
        status = live.handle.poll() or ExitStatus(None, sig, self.seams.wall())
        live.handle.close()
        fields = {
            "ended": status.ended,
            "outcome": Outcome.STOPPED,
            "exit_code": status.exit_code,
            "signal": status.signal,
            "summary": f"stopped by the operator ({name})",
        }
        number = live.number
        self._record(lambda: store.update_attempt(self.name, number, fields))
        msg = f"attempt {number} stopped by the operator ({name})" + (
            " after SIGKILL" if forced else ""
        )
        self._event(EventKind.STOPPED, msg, number, forced=forced)
        self._state(RunState.STOPPED, msg, ExitCode.STOPPED)
        self.say("info", msg)
        return ExitCode.STOPPED


def _config_dict(cfg: Config) -> dict[str, Any]:
    return asdict(cfg)
