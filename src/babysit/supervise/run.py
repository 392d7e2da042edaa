"""The run loop: attempts one after another, each decision carried out, stop and re-attach.

    sup = Supervisor(cfg, ["python", "train.py"], name="train", home=Path(".babysit"),
                     cwd=Path.cwd(), say=ConsoleReporter())
    code = sup.run()                  # -> ExitCode
    sup.request_stop(signal.SIGINT)   # from a signal handler: pass it on, escalate after grace

One attempt at a time: launch it (or re-attach to the attempt an earlier babysit left running)
and watch it (attempt.py); when it ends, judge it (judge.py), blame a node (nodes.py), ask
policy/compose.py for the one decision, record it, and carry it out (backoff, rollback, stop).
Every store write goes through the Journal, which retries what the store refuses: a store
problem never stops the supervision of the run. The policies' history is kept in memory
(seeded from the store), so budgets hold even while the store refuses writes.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import signal
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from babysit.config import Config, config_document
from babysit.detect.outcome import signal_name
from babysit.engines import Engine, LocalEngine
from babysit.engines.jobcheck import EXIT_SICK
from babysit.errors import LaunchError, NodesExhausted, RunBusy, UsageError
from babysit.policy import compose
from babysit.records import (
    AttemptRecord,
    Decision,
    DecisionKind,
    EventKind,
    ExitCode,
    ExitStatus,
    Level,
    RunState,
    Say,
)
from babysit.redact import redact_argv
from babysit.store import Store
from babysit.store.home import restore_umask, set_umask
from babysit.store.writes import ReleaseRun, SetBudgetFrom
from babysit.supervise import judge
from babysit.supervise.attempt import Attempts
from babysit.supervise.context import RunContext, Seams
from babysit.supervise.doctor import targets_from_config, training_python
from babysit.supervise.endings import cancelled, cannot_start, decided, gave_up, record_stopped
from babysit.supervise.forensics import Forensics
from babysit.supervise.injob import InJobPreflight
from babysit.supervise.journal import Journal
from babysit.supervise.live import Live, StatusSink
from babysit.supervise.nodes import Nodes
from babysit.supervise.postmortem import Postmortem
from babysit.supervise.prepare import check_checkpoint_glob, check_command
from babysit.supervise.reattach import (
    failed_start,
    highest_attempt_dir,
    stored_backoff,
    unfinished,
    unlaunched,
)
from babysit.supervise.requests import STOP_REQUEST, OperatorStops
from babysit.supervise.rollback import Rollbacks, StopRequested
from babysit.supervise.telemetry import Telemetry
from babysit.triage import load_knowledge


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
        engine: Engine | None = None,
        status: StatusSink | None = None,
    ) -> None:
        self.ctx = ctx = RunContext(
            cfg, command, name, home, cwd, say, seams or Seams(), engine or LocalEngine()
        )
        # The operator's signals, and `babysit stop`'s requests read from the run's directory.
        self.stops = OperatorStops(
            ctx.run_dir / STOP_REQUEST, ctx.seams.monotonic, ctx.seams.wall, say
        )
        ctx.stop_signals = self.stops
        self.cfg, self.name, self.say = cfg, name, say
        self.rules = cfg.rules
        self.history: list[AttemptRecord] = []  # the attempts the budget counts, in memory
        self.attempts_seen = 0
        self.pending_rollback: Decision | None = None  # what the next launch must do
        self.rollbacks = Rollbacks(
            cfg, cwd, say, ctx.get_journal, ctx.seams.wall, lambda: bool(ctx.stop_signals)
        )
        targets = targets_from_config(cfg, python=training_python(command), cwd=cwd, home=home)
        self.nodes = Nodes(
            cfg, name, cwd, say, ctx.get_journal, ctx.seams.wall, targets, ctx.engine.host
        )
        # Slurm: preflight on every node of the allocation (engines/slurm.py), not this one.
        self.nodes.each_node = ctx.engine.preflight_nodes
        self.injob = InJobPreflight(ctx, self.nodes)  # a job's own check of its nodes
        self.forensics = Forensics(ctx)
        self.telemetry = Telemetry(ctx, self.nodes.targets, self.nodes.host)
        self.attempts = Attempts(ctx, self.rollbacks, self.nodes, self.forensics, self.telemetry)
        self.attempts.status = status  # the live status line (the CLI draws and closes it)
        rules = [cwd / cfg.triage.rules] if cfg.triage.rules else []
        self.postmortem = Postmortem(load_knowledge(rules), say, cfg.triage.kernel_log)
        ctx.open_alerts()  # a notify URL apprise refuses stops babysit here (exit 2)

    # -- the operator -------------------------------------------------------------------------

    def request_stop(self, sig: int = signal.SIGTERM) -> None:
        """Async-signal-safe enough: only appends; the loop does the work."""
        self.ctx.stop_signals.append(sig)

    @property
    def journal(self) -> Journal:
        return self.ctx.journal

    # -- entry ---------------------------------------------------------------------------------

    def run(self) -> ExitCode:
        ctx = self.ctx
        store = Store.open(ctx.home)
        for warning in store.warnings:
            self.say(Level.WARN, warning)
        ctx.open_journal(store)
        self.attempts.channels.open_echo(self.attempts.status)
        lock = None
        umask = set_umask(store.mode)  # what babysit writes in the home is private too
        try:
            ctx.run_dir.mkdir(parents=True, exist_ok=True)
            lock = self._lock()
            self.stops.arm(ctx.seams.wall())
            self.telemetry.start()
            return self._supervise(store)
        except UsageError as exc:
            if self.journal.run_state is not None:  # it took the run: do not leave it `starting`
                failed_start(self.journal, exc)
            raise
        finally:
            try:
                self.stops.close()
                self.telemetry.stop()
                self.attempts.channels.close_echo()
                if lock is not None:
                    self.journal.write(ReleaseRun(self.name))
                    self.journal.flush()
                    if self.journal.pending:
                        self.say(
                            Level.ERROR,
                            f"{len(self.journal.pending)} logbook entries could not be written "
                            f"to {ctx.home}: the store still refuses writes (is the disk full?)",
                        )
                    lock.close()
                store.close()
                ctx.close_journal()
            finally:
                restore_umask(umask)  # whatever failed above

    def _lock(self) -> IO[str]:
        path = self.ctx.run_dir / "supervisor.lock"
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
        ctx, cfg = self.ctx, self.cfg
        existing = next((r for r in store.runs() if r["name"] == self.name), None)
        rows = store.attempts(self.name) if existing else []
        every = store.history(self.name) if existing else []
        ghost = unlaunched(rows, ctx.engine)  # recorded, never launched: no failure, launched now
        if ghost is not None:
            rows, every = rows[:-1], [a for a in every if a.number != ghost]
        check_checkpoint_glob(cfg.checkpoint.glob, ctx.command, cfg.run.resume_args, ctx.cwd)
        self.attempts.channels.open_tensorboard()
        # Kept redacted (secrets in flags); relaunches use ctx.command, never the store's.
        store.start_run(
            self.name, redact_argv(ctx.command), str(ctx.cwd), config_document(cfg)
        )
        self.journal.run_state = RunState.STARTING
        budget_from = int(existing["budget_from"]) if existing else 1
        if existing is None or existing["state"] in (RunState.SUCCEEDED, RunState.FAILED):
            budget_from = len(every) + 1  # started again after it ended: a fresh budget
            self.journal.write(SetBudgetFrom(self.name, budget_from))
        self.history = [a for a in every if a.number >= budget_from]
        rollback = self.rollbacks.seed(rows, self.history, budget_from)
        self.attempts_seen = max(len(every), highest_attempt_dir(ctx.run_dir))
        if ghost is not None:
            self.attempts_seen = ghost - 1
            self.say(
                Level.INFO,
                f"attempt {ghost} was recorded but never launched (babysit was killed in "
                "between): launching it now; it counts as no failure",
            )
        self.journal.event(
            EventKind.RUN_STARTED,
            f"babysit {os.getpid()} supervises {shlex.join(ctx.command)}",
            command=ctx.command,
            cwd=str(ctx.cwd),
        )
        resumed = self._resume_unfinished(rows)
        if resumed is None and rollback is not None:
            self.say(Level.INFO, f"babysit was away before it could act: {rollback.reason}")
            if rollback.kind != DecisionKind.ROLLBACK:
                code = self._decided(rollback)
                assert code is not None
                return code
            self.pending_rollback = rollback
        if resumed is None:
            check_command(ctx.command, ctx.cwd)  # only before a new launch: re-attach needs none
            wait_s, why = stored_backoff(store, existing, ctx.seams.wall())
            if wait_s > 0:
                self.say(Level.INFO, why)
                if not self._backoff(wait_s):
                    return self._stopped(None)
        while True:
            if resumed is not None:
                live, resumed = resumed, None
            else:
                if ctx.stop_signals:
                    return self._stopped(None)
                try:
                    live = self._launch()
                except StopRequested:  # told to stop while validating a checkpoint
                    return self._stopped(None)
                except NodesExhausted as exc:
                    return gave_up(self.journal, self.say, str(exc), ExitCode.BUDGET_EXHAUSTED)
                except LaunchError as exc:
                    if ctx.stop_signals:  # stopped while the launch waited (a Slurm queue)
                        return self._stopped(None)
                    self.say(Level.ERROR, str(exc))
                    self.journal.state(RunState.FAILED, str(exc), ExitCode.NEEDS_HUMAN)
                    return ExitCode.NEEDS_HUMAN
            status = self.attempts.watch(live)
            if status is None:  # the operator stopped it
                return self._stopped(live)
            sick, gated = self.injob.results(live)  # a job per attempt checks its nodes
            if _cancelled_outside(live, status):  # a human's scancel (Slurm): an operator stop
                return cancelled(self.journal, self.say, self.name, live, status)
            if (status.scheduler_state or "").startswith(CANNOT_START):
                # no restart can help: say why
                return cannot_start(self.journal, self.say, self.name, live, status)
            if sick and gated and status.exit_code == EXIT_SICK:
                decision, record = self.injob.stopped(live, status, sick, self.history)
                self.history = [a for a in self.history if a.number != live.number] + [record]
            else:
                decision = self._ended(live, status)
            code = self._decided(decision)
            if code is not None:
                return code
            if not self._backoff(decision.delay_s):
                return self._stopped(None)

    def _launch(self) -> Live:
        self.attempts_seen += 1  # counted here: the store may be refusing writes right now
        rollback, self.pending_rollback = self.pending_rollback, None
        return self.attempts.launch(self.attempts_seen, self.history, rollback)

    def _ended(self, live: Live, status: ExitStatus) -> Decision:
        """Judge the attempt, record it, blame a node, and ask the policies what next."""
        left = self.ctx.engine.sweep(live.handle)
        if left:
            self.say(
                Level.WARN,
                f"killed {len(left)} process(es) of attempt {live.number} left "
                f"behind after it ended: {left}",
            )
        j = judge.judge(live, status, self.postmortem.diagnose)
        host = j.suspect_host or self._host_of_rank(live, j)
        if host != j.suspect_host:  # the engine's rank -> node map: stored with the attempt
            j = replace(j, suspect_host=host, record=replace(j.record, suspect_host=host))
        judge.record(self.ctx, self.postmortem, j)
        self.history = [a for a in self.history if a.number != j.number] + [j.record]
        ban_pending = banned = False
        if host is not None and j.verdict is not None:
            d = j.verdict.diagnosis
            gpu = d.suspect.gpu if d is not None else None
            # A node named only by its peers (a reset connection, an InfiniBand peer in a
            # timeout) is a suspect until the evidence is corroborated (supervise/nodes.py).
            peer = d is not None and d.suspect.kind == "network"
            ban = self.nodes.blame(
                j.number, host, j.verdict.summary, j.verdict.category.value, gpu, peer=peer
            )
            if ban is not None and self.ctx.engine.drains:
                self.say(Level.WARN, self.ctx.engine.drain(host, j.verdict.summary))  # --drain
            ban_pending = ban is not None or self.nodes.can_ban(host)  # out of the next one
            banned = ban is not None
        anomaly_step = j.record.anomaly_step
        if anomaly_step is not None and not _pages(j.pending):
            self.rollbacks.ended_for_anomaly(anomaly_step, status.ended, j.number)
        newest = None if _pages(j.pending) else self.rollbacks.newest()
        decision = compose.on_ended(
            self.rollbacks.so_far(self.history),
            self.rules,
            self.ctx.seams.uniform(),
            newest,
            j.pending,
            live.hung_s(status.ended),
            ban_pending,
            banned,
        )
        if decision.kind == DecisionKind.ROLLBACK:
            self.rollbacks.rolled_back(decision, anomaly_step)
        return decision

    def _host_of_rank(self, live: Live, j: judge.Judgement) -> str | None:
        """The node of the rank triage blamed, where the engine knows it (Slurm: srun's task
        reports, the step's nodes); None elsewhere."""
        d = j.verdict.diagnosis if j.verdict is not None else None
        if d is None or d.suspect.rank is None or d.suspect.kind not in ("node", "network"):
            return None
        return self.ctx.engine.host_of_rank(live.handle, d.suspect.rank)

    def _decided(self, decision: Decision) -> ExitCode | None:
        """Record and announce the decision (endings.decided); the exit code when the run is
        over, else what the next launch must do."""
        code = decided(self.journal, self.say, decision)
        if code is None:
            self.pending_rollback = decision if decision.kind == DecisionKind.ROLLBACK else None
        return code

    def _resume_unfinished(self, rows: list[dict[str, Any]]) -> Live | None:
        """Re-attach to an attempt left running by a babysit that died (or record how it ended
        meanwhile)."""
        ctx = self.ctx
        found = unfinished(ctx.run_dir, rows, self.name, self.journal, self.say, ctx.engine)
        if found is None:
            return None
        row, handle = found
        live = self.attempts.resume(row, handle)
        rearmed = self.rollbacks.rearm(row, ctx.seams.wall())
        if rearmed is not None:
            # The babysit before this one had decided to end it for an anomaly: carry that out.
            live.rollback, live.anomaly = rearmed
        status = ctx.engine.poll(handle)
        if rearmed is not None:
            # Still running: babysit kills it now. Ended: by the stop that babysit sent before
            # it died, or on its own (then it is judged as such: "it ended before babysit
            # stopped it").
            stopped = status is not None and bool(status.signals_received)
            live.killed = status is None or stopped
        if status is None:
            msg = (
                f"re-attached to attempt {live.number} (launcher pid {handle.launcher_pid}), "
                "still running; following its output"
            )
        else:
            msg = f"attempt {live.number} ended while babysit was away; recording how"
        self.say(Level.INFO, msg)
        self.journal.event(EventKind.REATTACHED, msg, live.number)
        self.journal.state(RunState.RUNNING)
        return live

    def _backoff(self, delay_s: float) -> bool:
        """Sleep before the next attempt; False when the operator stopped babysit meanwhile."""
        seams, signals = self.ctx.seams, self.ctx.stop_signals
        deadline = seams.monotonic() + delay_s
        while seams.monotonic() < deadline:
            if signals:
                return False
            self.journal.flush()
            seams.sleep(min(self.cfg.run.poll_s, max(deadline - seams.monotonic(), 0)))
        return not signals

    def _stopped(self, live: Live | None) -> ExitCode:
        signals = self.ctx.stop_signals
        sig = signals[0] if signals else signal.SIGTERM
        name = self.stops.describe(0) or signal_name(sig)
        self.journal.state(RunState.STOPPING, f"operator sent {name}")
        if live is None:
            self.journal.event(EventKind.STOPPED, f"stopped by {name} between attempts")
            self.say(Level.INFO, f"stopped by {name} between attempts")
            self.journal.state(RunState.STOPPED, f"stopped by {name}", ExitCode.STOPPED)
            return ExitCode.STOPPED
        grace = self.cfg.stop.grace_s
        # The signal first, then the words: a babysit killed right after saying it passed the
        # signal on must have passed it on (a scheduler's SIGTERM then SIGKILL).
        self.ctx.engine.signal(live.handle, sig)
        self.say(
            Level.INFO,
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
        status, forced = self.attempts.terminate(live, sig, "stopped", sent=True)
        # The launcher keeps its own grace timer, and may have SIGKILLed the command itself.
        forced = forced or status.signal == signal.SIGKILL
        number = live.number
        record_stopped(self.journal, self.name, number, status, f"stopped by the operator ({name})")
        msg = f"attempt {number} stopped by the operator ({name})" + (
            " after SIGKILL" if forced else ""
        )
        self.journal.event(EventKind.STOPPED, msg, number, forced=forced)
        self.journal.state(RunState.STOPPED, msg, ExitCode.STOPPED)
        self.say(Level.INFO, msg)
        return ExitCode.STOPPED


CANNOT_START = "CANNOT_START"  # engines/slurmfollow.py: a pending job that can never start


def _cancelled_outside(live: Live, status: ExitStatus) -> bool:
    """Slurm says the job was cancelled, and not by babysit (no stop passed on, not killed)."""
    state = status.scheduler_state or ""
    return state.startswith("CANCELLED") and not status.signals_received and not live.killed


def _pages(pending: Decision | None) -> bool:
    return pending is not None and pending.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
