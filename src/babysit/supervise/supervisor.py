"""The supervisor loop: the one module that wires sources, parse, detect, policy, act and store.

    sup = Supervisor(cfg, ["python", "train.py"], name="train", home=Path(".babysit"),
                     cwd=Path.cwd(), say=ConsoleReporter())
    code = sup.run()                  # -> ExitCode
    sup.request_stop(signal.SIGINT)   # from a signal handler: pass it on, escalate after grace

One attempt at a time: launch (or re-attach to the attempt an earlier babysit left running),
follow its log files, echo them, read progress, metrics and errors from them, watch for hangs;
when it ends, judge it, record the verdict, ask the policy, record the decision, then act.
Every store write goes through the Journal, which retries what the store refuses: a store
problem never stops the supervision of the run. The policy's history is kept in memory (seeded
from the store), so budgets hold even while the store refuses writes.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import signal
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from babysit.act import process
from babysit.act.echo import Echo
from babysit.config import Config
from babysit.detect.hang import HangRule
from babysit.detect.outcome import signal_name
from babysit.detect.vitals import VitalsRules
from babysit.errors import LaunchError, NodesExhausted, RunBusy
from babysit.policy.restart import RestartPolicy
from babysit.policy.rollback import format_windows, wants_rollback
from babysit.records import (
    Activity,
    AttemptRecord,
    Decision,
    DecisionKind,
    EventKind,
    ExitCode,
    ExitStatus,
    Incident,
    IncidentKind,
    Outcome,
    RunState,
)
from babysit.sources.checkpoints import DirectoryPulse
from babysit.sources.follow import Follower
from babysit.sources.tensorboard import TensorBoardSource
from babysit.store import Store
from babysit.supervise.checkup import Checkup
from babysit.supervise.ending import Ending
from babysit.supervise.journal import Journal
from babysit.supervise.live import Live, Seams
from babysit.supervise.pipeline import Pipeline
from babysit.supervise.postmortem import Postmortem
from babysit.supervise.prepare import (
    attempt_env,
    build_argv,
    check_checkpoint_glob,
    check_command,
    recovery_env,
    resolve_path,
)
from babysit.supervise.reattach import highest_attempt_dir, unfinished
from babysit.supervise.recovery import Recovery
from babysit.triage import load_knowledge

Say = Callable[[str, str], None]
PROGRESS_FLUSH_S = 2.0  # how often the last step, log offsets and metrics are committed
PULSE_S = 1.0  # how often the checkpoint directory is looked at for writes
TENSORBOARD_S = 2.0  # how often the TensorBoard event files are read
LOW_DISK_BYTES = 1 << 30
CLIENT_METRICS = "metrics.jsonl"  # in the attempt's directory: what babysit.client writes


def vitals_rules(cfg: Config) -> VitalsRules:
    h = cfg.hang
    return VitalsRules(
        hang=HangRule(mult=h.mult, floor_s=h.floor_s, startup_s=h.startup_s, pause_s=h.pause_s)
    )


class Supervisor(Ending):
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
        budgets = {k: v for k, v in asdict(cfg.budget).items() if k != "window_s"}
        self.policy = RestartPolicy(
            **asdict(cfg.restart), budgets=budgets, budget_window_s=cfg.budget.window_s
        )
        self.pipeline = Pipeline(vitals_rules(cfg))
        self.history: list[AttemptRecord] = []  # the attempts the budget counts, in memory
        self.attempts_seen = 0
        self._failures_told = 0  # pipeline failures already reported to the operator
        self._stop_signals: list[int] = []
        self._journal: Journal | None = None
        self._echo: dict[str, Echo] = {}
        self._pulse_watch: DirectoryPulse | None = None
        self._tensorboard: TensorBoardSource | None = None
        self._tensorboard_at = 0.0
        self.live: Live | None = None
        self.recovery = Recovery(cfg, name, cwd, say, lambda: self.journal, self.seams.wall)
        # The checkpoint glob, resolved once (the pulse looks at it every tick).
        self.checkpoint_pattern = self.recovery.checkpoint_pattern
        self.pending_rollback: Decision | None = None  # what the next launch must do
        self.checkup = Checkup(
            cfg, name, home, say, lambda: self.journal, self.recovery, self.seams.wall, command
        )
        rules = [cwd / cfg.triage.rules] if cfg.triage.rules else []
        self.postmortem = Postmortem(load_knowledge(rules), say, cfg.triage.kernel_log)

    # -- the operator -------------------------------------------------------------------------

    def request_stop(self, sig: int = signal.SIGTERM) -> None:
        """Async-signal-safe enough: only appends; the loop does the work."""
        self._stop_signals.append(sig)

    @property
    def journal(self) -> Journal:
        assert self._journal is not None
        return self._journal

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> ExitCode:
        store = Store.open(self.home)
        for warning in store.warnings:
            self.say("warn", warning)
        self._journal = Journal(store, self.name, self.say, self.seams.wall)
        self._echo = {"stdout": Echo(self.seams.stdout), "stderr": Echo(self.seams.stderr)}
        lock = None
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            lock = self._lock()
            self.checkup.start_telemetry()
            return self._supervise(store)
        finally:
            self.checkup.stop_telemetry()
            for echo in self._echo.values():
                echo.close()
                if echo.dropped:
                    self.say(
                        "warn",
                        f"the terminal was too slow: {echo.dropped} bytes of output "
                        "were not shown here (the log files have them all)",
                    )
            if lock is not None:
                self.journal.write(lambda s: s.release_run(self.name))
                self.journal.flush()
                if self.journal.pending:
                    self.say(
                        "error",
                        f"{len(self.journal.pending)} logbook entries could not be written to "
                        f"{self.home}: the store still refuses writes (is the disk full?)",
                    )
                lock.close()
            store.close()

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

    def _supervise(self, store: Store) -> ExitCode:
        existing = next((r for r in store.runs() if r["name"] == self.name), None)
        rows = store.attempts(self.name) if existing else []
        every = store.history(self.name) if existing else []
        check_checkpoint_glob(
            self.cfg.checkpoint.glob, self.command, self.cfg.run.resume_args, self.cwd
        )
        if self.cfg.run.tensorboard:
            self._tensorboard = TensorBoardSource(resolve_path(self.cfg.run.tensorboard, self.cwd))
        store.start_run(self.name, self.command, str(self.cwd), asdict(self.cfg))
        self.journal.run_state = RunState.STARTING
        budget_from = int(existing["budget_from"]) if existing else 1
        if existing is None or existing["state"] in (RunState.SUCCEEDED, RunState.FAILED):
            budget_from = len(every) + 1  # started again after it ended: a fresh budget
            self.journal.write(lambda s: s.set_budget_from(self.name, budget_from))
        self.history = [a for a in every if a.number >= budget_from]
        rollback = self.recovery.seed(rows, self.history, budget_from)
        self.attempts_seen = max(len(every), highest_attempt_dir(self.run_dir))
        self.journal.event(
            EventKind.RUN_STARTED,
            f"babysit {os.getpid()} supervises {shlex.join(self.command)}",
            command=self.command,
            cwd=str(self.cwd),
        )
        resumed = self._resume_unfinished(rows)
        if resumed is None and rollback is not None:
            self.say("info", f"babysit was away before it could act: {rollback.reason}")
            if rollback.kind != DecisionKind.ROLLBACK:
                code = self._decided(rollback)
                assert code is not None
                return code
            self.pending_rollback = rollback
        if resumed is None:
            check_command(self.command, self.cwd)  # only before a new launch: re-attach needs none
        while True:
            if resumed is not None:
                self.live, resumed = resumed, None
            else:
                if self._stop_signals:
                    return self._stopped(None)
                try:
                    self.live = self._launch()
                except NodesExhausted as exc:
                    msg = f"giving up: {exc} (exit code {int(ExitCode.BUDGET_EXHAUSTED)})"
                    self.say("error", msg)
                    self.journal.event(EventKind.GAVE_UP, str(exc), exit_code=4)
                    self.journal.state(RunState.FAILED, str(exc), ExitCode.BUDGET_EXHAUSTED)
                    return ExitCode.BUDGET_EXHAUSTED
                except LaunchError as exc:
                    self.say("error", str(exc))
                    self.journal.state(RunState.FAILED, str(exc), ExitCode.NEEDS_HUMAN)
                    return ExitCode.NEEDS_HUMAN
            status = self._watch(self.live)
            if status is None:  # the operator stopped it
                return self._stopped(self.live)
            decision = self._ended(self.live, status)
            self.live = None
            code = self._decided(decision)
            if code is not None:
                return code
            if not self._backoff(decision.delay_s):
                return self._stopped(None)

    def _decided(self, decision: Decision) -> ExitCode | None:
        """Record and announce the decision; the exit code when the run is over."""
        if decision.kind == DecisionKind.SUCCEED:
            self.say("ok", decision.reason)
            self.journal.event(EventKind.SUCCEEDED, decision.reason)
            self.journal.state(RunState.SUCCEEDED, decision.reason, ExitCode.OK)
            return ExitCode.OK
        if decision.kind in (DecisionKind.RESTART, DecisionKind.ROLLBACK):
            self.say("warn", decision.reason)
            rollback = decision.kind == DecisionKind.ROLLBACK
            self.journal.event(
                EventKind.ROLLBACK if rollback else EventKind.RESTART_SCHEDULED,
                decision.reason,
                delay_s=decision.delay_s,
                before_step=decision.before_step,
                skip_steps=decision.skip_steps,
                lr_scale=decision.lr_scale,
                counts=decision.counts,
            )
            self.journal.state(RunState.BACKOFF, decision.reason)
            self.pending_rollback = decision if rollback else None
            return None
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
        self.journal.event(EventKind.GAVE_UP, decision.reason, exit_code=int(code), advice=advice)
        self.journal.state(RunState.FAILED, decision.reason, code)
        return code

    # -- launching -----------------------------------------------------------------------------

    def _launch(self) -> Live:
        self.attempts_seen += 1  # counted here: the store may be refusing writes right now
        number = self.attempts_seen
        first = not self.history
        attempt_dir = (self.run_dir / f"attempt-{number:04d}").resolve()
        rollback, self.pending_rollback = self.pending_rollback, None
        before = rollback.before_step if rollback is not None else None
        self.checkup.preflight(number)
        hostfile, hosts, banned = self.recovery.hosts(attempt_dir)
        resumed_from = [a.resume_step for a in self.history if a.resume_step is not None]
        ckpt = self.recovery.pick_checkpoint(
            self.cfg.checkpoint.settle_s if first else 0.0, before, resumed_from
        )
        argv = build_argv(self.command, self.cfg.run.resume_args, ckpt, hostfile)
        env = attempt_env(
            os.environ, self.name, number, self.home, ckpt, attempt_dir / CLIENT_METRICS
        )
        skip = self.recovery.windows
        resume_step = ckpt.step if ckpt is not None else None
        lr_scale = self.recovery.lr_scale_for(resume_step)
        recovery_env(env, skip, lr_scale, resume_step, hostfile, hosts, banned)
        env = self.checkup.child_env(env, attempt_dir)
        token = f"{self.name}/{number}/{uuid.uuid4().hex}"
        self._warn_if_disk_low(self.run_dir)
        started = self.seams.wall()
        fields = {
            "started": started,
            "host": os.uname().nodename,
            "argv": argv,
            "resume_from": ckpt.path if ckpt else None,
            "resume_step": resume_step,
            "skip_steps": [list(w) for w in skip],
            "lr_scale": lr_scale,
            "hosts": hosts if hostfile is not None else None,
            "log_dir": str(attempt_dir),
            "token": token,
        }
        # The intent first: a babysit that dies right after the launch finds the attempt.
        self.journal.write(lambda s: s.add_attempt(self.name, number, fields))
        handle = process.launch(argv, env, self.cwd, attempt_dir, self.cfg.stop.grace_s, token)
        launched = {
            "launcher_pid": handle.launcher_pid,
            "launcher_started": handle.launcher_started,
        }
        self.journal.write(lambda s: s.update_attempt(self.name, number, launched))
        self.journal.state(RunState.RUNNING)
        where = f", resuming from {ckpt.path}" if ckpt else ""
        if skip:
            where += f", skipping the data of steps {format_windows(skip)}"
        if lr_scale is not None:
            where += f", learning rate x{lr_scale:g}"
        self.say("info", f"attempt {number} started{where}; output in {attempt_dir}")
        self.journal.event(
            EventKind.ATTEMPT_STARTED,
            f"attempt {number} started{where}",
            number,
            argv=argv,
            launcher_pid=handle.launcher_pid,
            resume_from=fields["resume_from"],
        )
        self.pipeline.new_attempt(started)
        live = Live(number, handle, self._followers(attempt_dir, 0, 0), started, self.pipeline)
        live.resume_step = resume_step
        return live

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
        """stdout and stderr (echoed), what babysit.client sends, and --metrics-file."""
        followers = [
            Follower(attempt_dir / process.STDOUT_NAME, "stdout", out_off),
            Follower(attempt_dir / process.STDERR_NAME, "stderr", err_off),
            Follower(attempt_dir / CLIENT_METRICS, "client"),
        ]
        if self.cfg.run.metrics_file:
            path = resolve_path(self.cfg.run.metrics_file, self.cwd)
            # A file of the run's own, across attempts: read only what is new from now on.
            offset = path.stat().st_size if path.exists() else 0
            followers.append(Follower(path, "metrics", offset))
        return followers

    def _resume_unfinished(self, rows: list[dict[str, Any]]) -> Live | None:
        """Re-attach to an attempt left running by a babysit that died (or record how it ended
        meanwhile)."""
        found = unfinished(self.run_dir, rows, self.name, self.journal, self.say)
        if found is None:
            return None
        row, handle = found
        attempt_dir = Path(row["log_dir"])
        followers = self._followers(attempt_dir, row["stdout_offset"], row["stderr_offset"])
        self.pipeline.new_attempt(self.seams.wall(), row["first_step"], row["last_step"])
        live = Live(row["number"], handle, followers, row["started"], self.pipeline)
        live.resume_step = row.get("resume_step")
        rearmed = self.recovery.rearm(row, self.seams.wall())
        if rearmed is not None:
            # The babysit before this one had decided to end it for an anomaly: carry that out.
            live.rollback, live.anomaly = rearmed
            live.killed = True
        if handle.poll() is None:
            msg = (
                f"re-attached to attempt {live.number} (launcher pid {handle.launcher_pid}), "
                "still running; following its output"
            )
        else:
            msg = f"attempt {live.number} ended while babysit was away; recording how"
        self.say("info", msg)
        self.journal.event(EventKind.REATTACHED, msg, live.number)
        self.journal.state(RunState.RUNNING)
        return live

    # -- watching ------------------------------------------------------------------------------

    def _pump(self, live: Live, final: bool = False) -> None:
        now = self.seams.wall()
        for f in live.followers:
            while True:  # one bounded read per stream; at the end, read everything that is left
                chunk = f.poll(now, final=final)
                if chunk.data and self.cfg.run.echo and f.stream in self._echo:
                    self._echo[f.stream].write(chunk.data)
                for inc in live.pipeline.lines(chunk.lines):
                    self._incident(live, inc)
                if not final or not chunk.data:
                    break
        if final or self.seams.monotonic() - live.flushed_at >= PROGRESS_FLUSH_S:
            self._flush_progress(live)

    def _incident(self, live: Live, inc: Incident) -> None:
        number = live.number
        self.journal.write(lambda s: s.add_incident(self.name, number, inc))
        self.journal.event(
            EventKind.INCIDENT,
            inc.message,
            number,
            incident=inc.kind.value,
            category=inc.category.value,
            step=inc.step,
            metric=inc.metric,
        )
        extra = ""
        if live.rollback is None and wants_rollback(inc, self.recovery.rollback_rule):
            decision = self.recovery.on_incident(inc)
            if decision.kind in (DecisionKind.ROLLBACK, DecisionKind.GIVE_UP_NEEDS_HUMAN):
                live.rollback, live.anomaly = decision, inc
                extra = "; babysit stops the attempt to " + (
                    "roll back past it" if decision.kind == DecisionKind.ROLLBACK else "page you"
                )
                # At once, not when the attempt ends: a babysit killed meanwhile must find it.
                mark = {
                    "anomaly_step": inc.step,
                    "anomaly_kind": inc.kind.value,
                    "anomaly_message": inc.message,
                }
                self.journal.write(lambda s: s.update_attempt(self.name, number, mark))
            else:
                extra = f"; {decision.reason}" if "cannot" in decision.reason else ""
                self.journal.event(EventKind.NOTE, decision.reason, number)
        if inc.kind == IncidentKind.HANG:
            live.hang = inc
            if self.cfg.hang.action == "alert" and live.stacks is None:
                # Nobody will kill it: the stacks now are all the evidence there will be.
                live.stacks = self.checkup.stacks(live.handle, number)
            if self.cfg.hang.action == "restart" and self.cfg.hang.kill_after_s > 0:
                extra = (
                    f"; babysit kills and restarts it if there is still no progress "
                    f"{self.cfg.hang.kill_after_s:g}s after the last step"
                )
        self.say("warn", f"{inc.kind.value.replace('_', ' ')}: {inc.message}{extra}")

    def _flush_progress(self, live: Live) -> None:
        live.flushed_at = self.seams.monotonic()
        fields: dict[str, Any] = {
            "first_step": live.first_step,
            "last_step": live.last_step,
            "stdout_offset": live.followers[0].consumed,
            "stderr_offset": live.followers[1].consumed,
        }
        pid = live.handle.training_pid()
        if pid is not None:
            fields["pid"] = pid
        number = live.number
        self.journal.write(lambda s: s.update_attempt(self.name, number, fields))
        p = live.pipeline
        if p.failures > self._failures_told:
            # Skipped lines used to vanish silently: say so (rarely, at most every 2 s).
            self.say(
                "warn",
                f"{p.failures - self._failures_told} output line(s) could not be parsed and were "
                f"skipped (last: {p.last_failure}); supervision goes on. Please report the line "
                f"(its file is in {live.handle.attempt_dir}).",
            )
            self._failures_told = p.failures
        if p.latest and p.metric_records != live.metrics_flushed:
            live.metrics_flushed = p.metric_records
            sample = (self.seams.wall(), p.latest_step, dict(p.latest))
            self.journal.write(lambda s: s.add_metrics(self.name, number, *sample), droppable=True)

    def _pulse(self, live: Live) -> None:
        """Writes in the checkpoint directory are a sign of life (a save under way)."""
        pattern = self.checkpoint_pattern
        if pattern is None or self.seams.monotonic() - live.pulsed_at < PULSE_S:
            return
        live.pulsed_at = self.seams.monotonic()
        if self._pulse_watch is None:
            self._pulse_watch = DirectoryPulse(pattern)
        if self._pulse_watch.changed():
            live.pipeline.activity(Activity("checkpoint_write", self.seams.wall()))

    def _poll_tensorboard(self, live: Live) -> None:
        if (
            self._tensorboard is None
            or self.seams.monotonic() - self._tensorboard_at < TENSORBOARD_S
        ):
            return
        self._tensorboard_at = self.seams.monotonic()
        for inc in live.pipeline.metrics(self._tensorboard.poll(self.seams.wall())):
            self._incident(live, inc)

    def _watch(self, live: Live) -> ExitStatus | None:
        """Follow the attempt until it ends (its exit status) or the operator stops it (None)."""
        while True:
            self._pump(live)
            self.journal.flush()
            status = live.handle.poll()
            if status is not None:
                live.handle.close()
                self._pump(live, final=True)
                return status
            if self._stop_signals:
                return None
            self._pulse(live)
            self._poll_tensorboard(live)
            for inc in self.checkup.poll_telemetry(live.number):
                self._incident(live, inc)
            for inc in live.pipeline.tick(self.seams.wall()):
                self._incident(live, inc)
            if live.rollback is not None:
                self.say("warn", f"stopping attempt {live.number}: {live.rollback.reason}")
                status, _ = self._terminate(live, signal.SIGTERM, "rollback")
                live.killed = True
                return status
            if live.hang is not None and self._hang_confirmed(live):
                live.stacks = self.checkup.stacks(live.handle, live.number)
                self.say("warn", f"killing hung attempt {live.number} to restart it")
                status, _ = self._terminate(live, signal.SIGTERM, "hung")
                live.killed = True
                dumps = self.checkup.flight_recorder_dumps(live.handle.attempt_dir)
                if dumps:
                    self.say(
                        "info",
                        f"PyTorch's flight recorder dumped {len(dumps)} file(s) in "
                        f"{dumps[0].parent} (the last collectives of each rank)",
                    )
                return status
            live.handle.wait(self.cfg.run.poll_s, self.seams.sleep)  # wakes at once on exit

    def _hang_confirmed(self, live: Live) -> bool:
        """Whether to act on the hang incident now: still no progress, the action is restart,
        and the stall has lasted hang.kill_after_s (a first eval nobody announced must not cost
        a restart; NCCL's own watchdog waits 10 minutes)."""
        assert live.hang is not None
        if not live.pipeline.hang.flagged:  # progress came back: it was a long pause
            msg = f"attempt {live.number} made progress again: it was a pause, not a hang"
            self.say("info", msg)
            self.journal.event(EventKind.NOTE, msg, live.number)
            live.hang = None
            return False
        if self.cfg.hang.action != "restart":
            return False
        stalled_since = live.hang.ts - (live.hang.value or 0.0)
        return self.seams.wall() - stalled_since >= self.cfg.hang.kill_after_s

    def _backoff(self, delay_s: float) -> bool:
        """Sleep before the next attempt; False when the operator stopped babysit meanwhile."""
        deadline = self.seams.monotonic() + delay_s
        while self.seams.monotonic() < deadline:
            if self._stop_signals:
                return False
            self.journal.flush()
            self.seams.sleep(min(self.cfg.run.poll_s, max(deadline - self.seams.monotonic(), 0)))
        return not self._stop_signals

    # -- stopping ------------------------------------------------------------------------------

    def _terminate(
        self, live: Live, sig: int, why: str, sent: bool = False
    ) -> tuple[ExitStatus, bool]:
        """Send sig to every process of the attempt (unless `sent` already); SIGKILL what is
        left after the grace period (or at once on a second operator signal). Returns (exit
        status, forced)."""
        grace = self.cfg.stop.grace_s
        signals_before = len(self._stop_signals)
        if not sent:
            process.signal_group(live.handle, sig)
        deadline = self.seams.monotonic() + grace
        forced = False
        while process.survivors(live.handle):
            self._pump(live)
            again = len(self._stop_signals) > max(signals_before, 1)
            if not forced and (again or self.seams.monotonic() >= deadline):
                forced = True
                reason = "second signal" if again else f"{grace:g}s grace over"
                left = process.survivors(live.handle)
                self.say(
                    "warn",
                    f"{reason}: killing {len(left)} remaining process(es) of attempt "
                    f"{live.number} with SIGKILL",
                )
                self.journal.event(
                    EventKind.FORCE_KILLED,
                    f"{reason}: SIGKILL to {len(left)} process(es) ({why})",
                    live.number,
                    pids=left,
                )
                deadline = self.seams.monotonic() + 10.0
            if forced:
                # The launcher last: it records how the command died, then exits by itself.
                spare = self.seams.monotonic() < deadline - 5.0
                process.kill_all(live.handle, spare_launcher=spare)
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
        return status, forced

    def _stopped(self, live: Live | None) -> ExitCode:
        sig = self._stop_signals[0] if self._stop_signals else signal.SIGTERM
        name = signal_name(sig)
        self.journal.state(RunState.STOPPING, f"operator sent {name}")
        if live is None:
            self.journal.event(EventKind.STOPPED, f"stopped by {name} between attempts")
            self.say("info", f"stopped by {name} between attempts")
            self.journal.state(RunState.STOPPED, f"stopped by {name}", ExitCode.STOPPED)
            return ExitCode.STOPPED
        grace = self.cfg.stop.grace_s
        # The signal first, then the words: a babysit killed right after saying it passed the
        # signal on must have passed it on (a scheduler's SIGTERM then SIGKILL).
        process.signal_group(live.handle, sig)
        self.say(
            "info",
            f"{name} received: passed it to attempt {live.number}'s processes; "
            f"they are killed if still alive in {grace:g}s (send it again to kill now)",
        )
        self.journal.event(
            EventKind.STOP_REQUESTED,
            f"operator sent {name}; passed to the process group",
            live.number,
            signal=sig,
            grace_s=grace,
        )
        status, forced = self._terminate(live, sig, "stopped", sent=True)
        # The launcher keeps its own grace timer, and may have SIGKILLed the command itself.
        forced = forced or status.signal == signal.SIGKILL
        fields = {
            "ended": status.ended,
            "outcome": Outcome.STOPPED,
            "exit_code": status.exit_code,
            "signal": status.signal,
            "summary": f"stopped by the operator ({name})",
        }
        number = live.number
        self.journal.write(lambda s: s.update_attempt(self.name, number, fields))
        msg = f"attempt {number} stopped by the operator ({name})" + (
            " after SIGKILL" if forced else ""
        )
        self.journal.event(EventKind.STOPPED, msg, number, forced=forced)
        self.journal.state(RunState.STOPPED, msg, ExitCode.STOPPED)
        self.say("info", msg)
        return ExitCode.STOPPED
