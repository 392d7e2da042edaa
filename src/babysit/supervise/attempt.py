"""One attempt: launch it through the engine, follow its output, act on its incidents, end it.

    attempts = Attempts(ctx, rollbacks, nodes, forensics, telemetry)
    live = attempts.launch(number=3, history=history, rollback=None)   # or attempts.resume(...)
    status = attempts.watch(live)        # -> ExitStatus, or None when the operator stops it
    status, forced = attempts.terminate(live, signal.SIGTERM, "stopped")

While it runs: its stdout and stderr are followed (and echoed), parsed, and fed to the
detectors; metrics from babysit.client, a metrics file and TensorBoard join them; writes in the
checkpoint directory (supervise/saves.py) and node telemetry count too. An incident goes to the
store at once; its decision (policy/compose.py) may end the attempt to roll back past it or to
page a human. A hang is looked at before it is acted on: the processes, their stacks and the
files they write, twice, hang.look_again_s apart (supervise/forensics.py), weighed by
detect/evidence.py; stuck is killed at once, busy is left alone, and no evidence either way
waits for hang.kill_after_s.
babysit only reads files and sends signals: the training never depends on it.
"""

from __future__ import annotations

import os
import shutil
import signal
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from babysit.config import Config
from babysit.detect.evidence import weigh
from babysit.detect.vitals import CLIENT_SOURCE, VitalsRules
from babysit.engines import LaunchSpec
from babysit.engines.process import STDERR_NAME, STDOUT_NAME, Handle
from babysit.policy import compose
from babysit.policy.rollback import format_windows
from babysit.records import (
    AttemptRecord,
    Decision,
    DecisionKind,
    EventKind,
    ExitStatus,
    Incident,
    IncidentKind,
    Level,
    RunState,
)
from babysit.sources.follow import Follower
from babysit.store.writes import AddAttempt, AddIncident, UpdateAttempt
from babysit.supervise.cadence import read_cadence
from babysit.supervise.channels import Channels
from babysit.supervise.context import RunContext
from babysit.supervise.forensics import Forensics
from babysit.supervise.live import Live, StatusSink
from babysit.supervise.nodes import Nodes
from babysit.supervise.pipeline import Pipeline, ban_evidence
from babysit.supervise.prepare import attempt_env, build_argv, recovery_env, resolve_path
from babysit.supervise.rollback import Rollbacks
from babysit.supervise.saves import SaveWatch
from babysit.supervise.telemetry import Telemetry

LOW_DISK_BYTES = 1 << 30
CLIENT_METRICS = "metrics.jsonl"  # in the attempt's directory: what babysit.client writes


def vitals_rules(cfg: Config) -> VitalsRules:
    return VitalsRules(hang=cfg.hang)  # the [hang] section is the detector's rule


class Attempts:
    def __init__(
        self,
        ctx: RunContext,
        rollbacks: Rollbacks,
        nodes: Nodes,
        forensics: Forensics,
        telemetry: Telemetry,
    ) -> None:
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.rollbacks = rollbacks
        self.nodes = nodes
        self.forensics = forensics
        self.telemetry = telemetry
        self.pipeline = Pipeline(vitals_rules(ctx.cfg), ctx.cfg.straggler)
        self.rules = ctx.cfg.rules
        self.channels = Channels(ctx)  # echo, TensorBoard, rank map, progress flushes
        self.saves = SaveWatch(ctx, rollbacks.checkpoint_pattern)
        self.status: StatusSink | None = None  # `babysit run`'s status line, when it has one

    # -- launching -----------------------------------------------------------------------------

    def launch(
        self, number: int, history: Sequence[AttemptRecord], rollback: Decision | None
    ) -> Live:
        """Start attempt `number` from the right checkpoint (before the anomaly, for a
        rollback). Raises LaunchError, NodesExhausted."""
        ctx, cfg = self.ctx, self.cfg
        first = not history
        attempt_dir = (ctx.run_dir / f"attempt-{number:04d}").resolve()
        before = rollback.before_step if rollback is not None else None
        self.nodes.preflight(number)
        hostfile, hosts, banned = self.nodes.hosts(attempt_dir)
        resumed_from = [a.resume_step for a in history if a.resume_step is not None]
        ckpt = self.rollbacks.pick_checkpoint(
            cfg.checkpoint.settle_s if first else 0.0, before, resumed_from
        )
        argv = build_argv(ctx.command, cfg.run.resume_args, ckpt, hostfile)
        env = attempt_env(
            os.environ, ctx.name, number, ctx.home, ckpt, attempt_dir / CLIENT_METRICS
        )
        skip = self.rollbacks.windows
        resume_step = ckpt.step if ckpt is not None else None
        lr_scale = self.rollbacks.lr_scale_for(resume_step)
        recovery_env(env, skip, lr_scale, resume_step, hostfile, hosts, banned)
        env = self.forensics.child_env(env, attempt_dir)
        token = f"{ctx.name}/{number}/{uuid.uuid4().hex}"
        spec = LaunchSpec(argv, env, ctx.cwd, attempt_dir, cfg.stop.grace_s, token, tuple(hosts))
        # The engine's own rewrite of the command (torchrun: its --max-restarts set to 0, the
        # per-rank files under the attempt) is what the attempt records and runs.
        spec, notes = ctx.engine.prepare(ctx.engine.apply_bans(spec, sorted(banned)))
        argv = spec.argv
        self._warn_if_disk_low(ctx.run_dir)
        started = ctx.seams.wall()
        fields = {
            "started": started,
            "host": ctx.engine.host,
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
        ctx.journal.write(AddAttempt(ctx.name, number, fields))
        for note in notes:  # what the engine changed in the command, said once per babysit
            ctx.say(Level.INFO, note)
            ctx.journal.event(EventKind.NOTE, note, number)
        handle = ctx.engine.launch(spec)
        launched = {
            "launcher_pid": handle.launcher_pid,
            "launcher_started": handle.launcher_started,
        }
        ctx.journal.write(UpdateAttempt(ctx.name, number, launched))
        ctx.journal.state(RunState.RUNNING)
        where = f", resuming from {ckpt.path}" if ckpt else ""
        if skip:
            where += f", skipping the data of steps {format_windows(skip)}"
        if lr_scale is not None:
            where += f", learning rate x{lr_scale:g}"
        ctx.say(Level.INFO, f"attempt {number} started{where}; output in {attempt_dir}")
        ctx.journal.event(
            EventKind.ATTEMPT_STARTED,
            f"attempt {number} started{where}",
            number,
            argv=argv,
            launcher_pid=handle.launcher_pid,
            resume_from=fields["resume_from"],
        )
        self.pipeline.new_attempt(started)
        # Stragglers are named with their host: this node for a local job on this node only
        # (an engine that maps ranks to nodes gives its map to pipeline.set_hosts instead).
        alone = ctx.engine.name in ("local", "torchrun") and len(spec.hosts) <= 1
        self.pipeline.set_hosts({}, ctx.engine.host if alone else None)
        live = Live(number, handle, self._followers(attempt_dir, 0, 0), started, self.pipeline)
        # No metrics sample until this attempt reports: the pipeline's latest values are still
        # the attempt before's, and a sample of them would carry its step at this one's time.
        live.metrics_flushed = self.pipeline.metric_records
        live.resume_step = resume_step
        live.engine_logs = lambda: ctx.engine.evidence_files(handle)
        return live

    def resume(self, row: dict[str, Any], handle: Handle) -> Live:
        """The attempt an earlier babysit left (re-attached, or ended meanwhile), followed from
        where that babysit stopped reading."""
        attempt_dir = Path(row["log_dir"])
        followers = self._followers(attempt_dir, row["stdout_offset"], row["stderr_offset"])
        now = self.ctx.seams.wall()
        self.pipeline.new_attempt(now, row["first_step"], row["last_step"])
        learned = read_cadence(attempt_dir)
        if learned is not None and row["last_step"] is not None:
            # Past its start-up: the timeout the babysit before learned, not the allowance.
            self.pipeline.hang.restore(learned, now, row["last_step"])
        live = Live(row["number"], handle, followers, row["started"], self.pipeline)
        live.resume_step = row.get("resume_step")
        engine = self.ctx.engine
        live.engine_logs = lambda: engine.evidence_files(handle)
        return live

    def _warn_if_disk_low(self, directory: Path) -> None:
        try:
            free = shutil.disk_usage(directory).free
        except OSError:
            return
        if free < LOW_DISK_BYTES:
            self.ctx.say(
                Level.WARN,
                f"only {free / 2**20:.0f} MiB free under {directory}: the run's "
                "output files are there, and a program whose print fails may crash",
            )

    def _followers(self, attempt_dir: Path, out_off: int, err_off: int) -> list[Follower]:
        """stdout and stderr (echoed), what babysit.client sends, and --metrics-file."""
        followers = [
            Follower(attempt_dir / STDOUT_NAME, "stdout", out_off),
            Follower(attempt_dir / STDERR_NAME, "stderr", err_off),
            Follower(attempt_dir / CLIENT_METRICS, CLIENT_SOURCE),  # its rows' stamps count
        ]
        if self.cfg.run.metrics_file:
            path = resolve_path(self.cfg.run.metrics_file, self.ctx.cwd)
            # A file of the run's own, across attempts: read only what is new from now on.
            offset = path.stat().st_size if path.exists() else 0
            followers.append(Follower(path, "metrics", offset))
        return followers

    # -- watching ------------------------------------------------------------------------------

    def pump(self, live: Live, final: bool = False) -> None:
        now = self.ctx.seams.wall()
        for f in live.followers:
            while True:  # one bounded read per stream; at the end, read everything that is left
                chunk = f.poll(now, final=final)
                problem = f.take_problem()  # a FIFO given as --metrics-file: said once
                if problem is not None:
                    self.ctx.say(Level.WARN, problem)
                if chunk.data:
                    self.channels.echo(f.stream, chunk.data)
                if chunk.data and self.status is not None and self.channels.echoed(f.stream):
                    self.status.output(chunk.data)  # a progress bar's N/M gives the total
                for inc in live.pipeline.lines(chunk.lines):
                    self.incident(live, inc)
                if not final or not chunk.data:
                    break
        if final or self.channels.flush_due(live):
            self.channels.flush_progress(live)
        if self.status is not None:  # only copies a few values: the drawing is its own thread
            self.status.progress(live.number, live.last_step, live.pipeline.latest)

    def incident(self, live: Live, inc: Incident) -> None:
        """Store it, decide (policy/compose.py), and tell the operator."""
        ctx, number = self.ctx, live.number
        ctx.journal.write(AddIncident(ctx.name, number, inc))
        ctx.journal.event(
            EventKind.INCIDENT,
            inc.message,
            number,
            incident=inc.kind.value,
            category=inc.category.value,
            step=inc.step,
            metric=inc.metric,
        )
        for host, why in ban_evidence(inc):
            # A straggler that persisted over straggler.ban_window_steps: evidence against its
            # node, counted toward nodes.ban_after like a failure (supervise/nodes.py).
            self.nodes.blame(number, host, why, inc.category.value, kind="straggler")
        extra = ""
        wanted = live.rollback is None and self.rollbacks.wants_rollback(inc)
        decision = self.rollbacks.on_incident(inc) if wanted else None
        if decision is not None and compose.stops_attempt(decision):
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
            ctx.journal.write(UpdateAttempt(ctx.name, number, mark))
        elif decision is not None:
            # Wanted, but it cannot be done (no glob, no step): the reason is worth a note.
            extra = f"; {decision.reason}"
            ctx.journal.event(EventKind.NOTE, decision.reason, number)
        if inc.kind == IncidentKind.HANG:
            live.hang = inc
            if self.cfg.hang.action == "alert" and live.stacks is None:
                # Nobody will kill it: the stacks now are all the evidence there will be.
                live.stacks = self.forensics.stacks(live.handle, number)
            rule = self.cfg.hang
            if rule.action == "restart" and rule.kill_after_s > 0 and rule.evidence:
                live.look, live.evidence, live.next_look = None, None, 0.0
                extra = (
                    f"; babysit looks at its processes now and again in {rule.look_again_s:g}s: "
                    "stuck is killed and restarted, busy is left alone (without evidence either "
                    f"way, killed {rule.kill_after_s:g}s after the last step)"
                )
            elif rule.action == "restart" and rule.kill_after_s > 0:
                extra = (
                    f"; babysit kills and restarts it if there is still no progress "
                    f"{rule.kill_after_s:g}s after the last step"
                )
        ctx.say(Level.WARN, f"{inc.kind.value.replace('_', ' ')}: {inc.message}{extra}")
        if self.status is not None:
            self.status.incident(number, inc.kind.value, inc.message, inc.step)

    def watch(self, live: Live) -> ExitStatus | None:
        """Follow the attempt until it ends (its exit status) or the operator stops it (None)."""
        ctx, engine = self.ctx, self.ctx.engine
        while True:
            self.pump(live)
            ctx.journal.flush()
            status = engine.poll(live.handle)
            if status is not None:
                engine.close(live.handle)
                self.pump(live, final=True)
                return status
            if ctx.stop_signals:
                return None
            self.saves.look(live)
            self.channels.map_ranks(live)
            for inc in self.channels.tensorboard_metrics(live):
                self.incident(live, inc)
            for inc in self.telemetry.poll(live.number):
                self.incident(live, inc)
            for inc in live.pipeline.tick(ctx.seams.wall()):
                self.incident(live, inc)
            if live.rollback is not None:
                # The reason was said with the incident, and is said again with the decision.
                goal = "roll back" if live.rollback.kind == DecisionKind.ROLLBACK else "page you"
                ctx.say(Level.WARN, f"stopping attempt {live.number} to {goal}")
                status, _ = self.terminate(live, signal.SIGTERM, "rollback")
                live.killed = True
                return status
            if live.hang is not None and self._hang_confirmed(live):
                if live.look is not None and live.look.stacks is not None:
                    live.stacks = self.forensics.keep(
                        live.look, live.evidence, live.number, live.handle.attempt_dir
                    )
                else:
                    live.stacks = self.forensics.stacks(live.handle, live.number)
                ctx.say(Level.WARN, f"killing hung attempt {live.number} to restart it")
                # A hung attempt's own SIGTERM handler may hang as well: a shorter grace.
                grace = min(self.cfg.stop.grace_s, self.cfg.hang.kill_grace_s)
                status, _ = self.terminate(live, signal.SIGTERM, "hung", grace_s=grace)
                live.killed = True
                dumps = self.forensics.flight_recorder_dumps(live.handle.attempt_dir)
                if dumps:
                    ctx.say(
                        Level.INFO,
                        f"PyTorch's flight recorder dumped {len(dumps)} file(s) in "
                        f"{dumps[0].parent} (the last collectives of each rank)",
                    )
                return status
            engine.wait(live.handle, self.cfg.run.poll_s, ctx.seams.sleep)  # wakes on exit

    def _hang_confirmed(self, live: Live) -> bool:
        """Whether to act on the hang incident now: still no progress, and the policy says to
        kill it (policy/hang.py)."""
        assert live.hang is not None
        if not live.pipeline.hang.flagged:  # progress came back: it was a long pause
            msg = f"attempt {live.number} made progress again: it was a pause, not a hang"
            self.ctx.say(Level.INFO, msg)
            self.ctx.journal.event(EventKind.NOTE, msg, live.number)
            live.hang, live.look, live.evidence = None, None, None
            return False
        rule = self.cfg.hang
        if rule.action == "restart" and rule.kill_after_s > 0 and rule.evidence:
            self._look(live)
        decision = compose.on_hang(live.hang, self.ctx.seams.wall(), self.rules, live.evidence)
        if decision.kind == DecisionKind.RESTART and live.evidence is not None:
            self.ctx.journal.event(EventKind.NOTE, decision.reason, live.number)
        return decision.kind == DecisionKind.RESTART

    def _look(self, live: Live) -> None:
        """Look at the hung attempt when a look is due; weigh it against the one before, and
        record what the evidence says when it says something new."""
        seams, rule = self.ctx.seams, self.cfg.hang
        if seams.wall() < live.next_look:
            return
        look = self.forensics.look(live.handle, self.telemetry.gpu_util())
        before, live.look = live.look, look
        if before is None:
            live.next_look = look.ts + rule.look_again_s
            return
        evidence = weigh(before, look)
        live.next_look = look.ts + rule.relook_s
        told = live.evidence
        live.evidence = evidence
        if told is not None and (told.verdict, told.sign) == (evidence.verdict, evidence.sign):
            return
        self.forensics.tell_evidence(evidence, live.number)

    # -- ending --------------------------------------------------------------------------------

    def terminate(
        self, live: Live, sig: int, why: str, sent: bool = False, grace_s: float | None = None
    ) -> tuple[ExitStatus, bool]:
        """Send sig to every process of the attempt (unless `sent` already); SIGKILL what is
        left after the grace period (`grace_s`, else stop.grace_s; at once on a second
        operator signal). Returns (exit status, forced)."""
        ctx, engine, seams = self.ctx, self.ctx.engine, self.ctx.seams
        grace = self.cfg.stop.grace_s if grace_s is None else grace_s
        # The signal that counts as "again": for an operator stop (`sent`), any after the first,
        # even one that came while babysit was passing the first on; for babysit's own kill, a
        # second operator signal after this began.
        first = 1 if sent else max(len(ctx.stop_signals), 1)
        if not sent:
            engine.signal(live.handle, sig)
        if self.forensics.any_stopped(live.handle):
            engine.signal(live.handle, signal.SIGCONT)  # a stopped process acts on none but KILL
        deadline = seams.monotonic() + grace
        forced = False
        while engine.survivors(live.handle):
            self.pump(live)
            again = len(ctx.stop_signals) > first
            if not forced and (again or seams.monotonic() >= deadline):
                forced = True
                reason = "second signal" if again else f"{grace:g}s grace over"
                left = engine.survivors(live.handle)
                ctx.say(
                    Level.WARN,
                    f"{reason}: killing {len(left)} remaining process(es) of attempt "
                    f"{live.number} with SIGKILL",
                )
                ctx.journal.event(
                    EventKind.FORCE_KILLED,
                    f"{reason}: SIGKILL to {len(left)} process(es) ({why})",
                    live.number,
                    pids=left,
                )
                deadline = seams.monotonic() + 10.0
            if forced:
                # The launcher last: it records how the command died, then exits by itself.
                spare = seams.monotonic() < deadline - 5.0
                engine.kill(live.handle, spare_launcher=spare)
                if seams.monotonic() >= deadline:
                    left = engine.survivors(live.handle)
                    ctx.say(
                        Level.ERROR,
                        f"processes {left} of attempt {live.number} survive SIGKILL "
                        "(stuck in the kernel, e.g. on a hung filesystem or GPU driver)",
                    )
                    break
            seams.sleep(min(self.cfg.run.poll_s, 0.1))
        self.pump(live, final=True)
        status = engine.poll(live.handle) or ExitStatus(None, sig, seams.wall())
        engine.close(live.handle)
        return status, forced
