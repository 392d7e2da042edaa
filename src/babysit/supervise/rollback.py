"""Rollbacks and checkpoints: what the run skipped, which checkpoint the next attempt takes.

    rb = Rollbacks(cfg, cwd, say, journal, wall=time.time, stopping=lambda: bool(stop_signals))
    pending = rb.seed(store.attempts("gpt"), history)   # windows, anomalies; a decision to redo
    newest = rb.newest()               # one scan of the checkpoint directory per decision, ...
    ckpt = rb.pick_checkpoint(settle_s=0.0, before_step=1199)   # ... reused by a launch at once
    rb.rolled_back(decision, anomaly_step)

The decisions themselves are policy/compose.py's; this room keeps the state they read (the data
windows skipped so far, the anomalies rolled back for, checkpoints saved after one) and finds
and validates checkpoints. Every write goes through the Journal; a store that refuses writes
never stops the run. The validator runs at most checkpoint.validate_timeout_s, and is killed
(with what it started) as soon as babysit is told to stop: pick_checkpoint then raises
StopRequested, and the loop stops between attempts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from babysit.config import Config
from babysit.errors import LaunchError
from babysit.policy import compose
from babysit.policy.checkpoint import choose_checkpoint
from babysit.policy.rollback import Window, merge, wants_rollback
from babysit.records import (
    AttemptRecord,
    Checkpoint,
    Decision,
    DecisionKind,
    EventKind,
    Incident,
    IncidentKind,
    Level,
    Say,
)
from babysit.sources.checkpoints import scan_checkpoints, validate_checkpoint
from babysit.supervise.journal import Journal
from babysit.supervise.prepare import resolve_path

SCAN_REUSE_S = 0.5  # a decision's scan serves a launch this soon after it (no backoff)
MAX_VALIDATIONS = 3  # checkpoints the validator may reject in a row before babysit pages


class StopRequested(Exception):
    """babysit was told to stop (a signal, `babysit stop`) while it validated a checkpoint for
    the next attempt: nothing is launched. Not an error: the loop stops as between attempts."""


class Rollbacks:
    def __init__(
        self,
        cfg: Config,
        cwd: Path,
        say: Say,
        journal: Callable[[], Journal],
        wall: Callable[[], float] = time.time,
        stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.cfg = cfg
        self.stopping = stopping  # babysit was told to stop: a running validator is ended
        self.cwd = cwd
        self.say = say
        self._journal = journal
        self.wall = wall
        glob = cfg.checkpoint.glob
        self.checkpoint_pattern = str(resolve_path(glob, cwd)) if glob else None
        self.rule = cfg.rollback
        self.rules = cfg.rules
        self.windows: tuple[Window, ...] = ()  # data windows skipped so far (all attempts)
        self.anomalies: list[int] = []  # steps of the anomalies rolled back for
        self.quarantine: list[tuple[int, float, int]] = []  # (anomaly step, ended, attempt)
        self._rejected: dict[tuple[str, float, int], str] = {}  # validator verdicts, by file
        self._accepted: set[tuple[str, float, int]] = set()
        self._found: tuple[float, list[Checkpoint]] | None = None  # the decision's scan, and when
        self.lr_scale: float | None = None  # of the last rollback, until the run passes lr_until
        self.lr_until = -1
        self._told: set[str] = set()  # scan problems already said

    @property
    def journal(self) -> Journal:
        return self._journal()

    def anomaly(self, kind: str | None, step: int, message: str | None, ts: float) -> Incident:
        """The incident an attempt was rolled back for, rebuilt from its row."""
        known = {i.value for i in IncidentKind}
        k = IncidentKind(kind) if kind in known else IncidentKind.NONFINITE
        return Incident(k, message or f"loss anomaly at step {step}", ts, step, "loss")

    def seed(
        self,
        rows: Sequence[dict[str, Any]],
        history: Sequence[AttemptRecord],
        budget_from: int = 1,
    ) -> Decision | None:
        """What earlier attempts of this run (since its budget began: a run started again after
        it ended starts clean) left: skipped windows, anomalies, checkpoints saved after one,
        the learning-rate scale. Returns the decision still to carry out when babysit died
        between ending an attempt for an anomaly and launching the next: made again."""
        current = [r for r in rows if r["number"] >= budget_from]
        for row in current:
            if row.get("skip_steps"):
                self.windows = merge([*self.windows, *row["skip_steps"]])
            if row.get("lr_scale") is not None and row.get("skip_steps"):
                self.lr_scale = row["lr_scale"]
                self.lr_until = max(hi for _, hi in row["skip_steps"])
        # (an attempt still running with an anomaly is rearm()'s: it is not over yet)
        anomalies: list[int] = []
        for a in history:
            if a.anomaly_step is not None and a.ended is not None:
                self.ended_for_anomaly(a.anomaly_step, a.ended, a.number)
                anomalies.append(a.anomaly_step)
        last = history[-1] if history else None
        if last is None or last.anomaly_step is None or last.ended is None:
            self.anomalies = anomalies
            return None
        self.anomalies = anomalies[:-1]
        row = next((r for r in current if r["number"] == last.number), {})
        again = self.anomaly(
            last.anomaly_kind, last.anomaly_step, row.get("anomaly_message"), last.ended
        )
        decision = self.on_incident(again)
        if decision.kind == DecisionKind.ROLLBACK:
            self.rolled_back(decision, last.anomaly_step)
            return decision
        self.anomalies = anomalies
        return decision if decision.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN else None

    def rearm(self, row: dict[str, Any], now: float) -> tuple[Decision, Incident] | None:
        """For an attempt re-attached to, that the babysit before had decided to end for an
        anomaly (its row says so): the decision again, and the anomaly."""
        if row.get("anomaly_step") is None:
            return None
        inc = self.anomaly(
            row.get("anomaly_kind"), row["anomaly_step"], row.get("anomaly_message"), now
        )
        decision = self.on_incident(inc)
        if decision.kind not in (DecisionKind.ROLLBACK, DecisionKind.GIVE_UP_NEEDS_HUMAN):
            return None
        return decision, inc

    # -- checkpoints ---------------------------------------------------------------------------

    def scan(self, settle_s: float) -> list[Checkpoint]:
        """Checkpoints on disk, newest first; those saved after an anomaly babysit rolled back
        past (until a newer save replaces them) and those the validator rejected are marked."""
        if self.checkpoint_pattern is None:
            return []
        out = []
        found = scan_checkpoints(self.checkpoint_pattern, self.wall(), settle_s, self._tell_once)
        for c in found:
            problem = self._rejected.get((c.path, c.mtime, c.size)) or self._after_anomaly(c)
            if problem is not None and c.complete:
                c = replace(c, complete=False, problem=problem)
            out.append(c)
        return out

    def _tell_once(self, problem: str) -> None:
        if problem not in self._told:
            self._told.add(problem)
            self.say(Level.WARN, problem)

    def _after_anomaly(self, c: Checkpoint) -> str | None:
        margin = self.rule.margin_steps
        for step, ended, attempt in self.quarantine:
            if c.step is not None and c.step >= step - margin and c.mtime <= ended:
                return (
                    f"saved by attempt {attempt} at or after its anomaly at step {step}, "
                    "which babysit rolled back past"
                )
        return None

    def newest(self) -> Checkpoint | None:
        """What the next attempt would resume from (validations already known are applied).
        The scan is kept for a launch that follows at once (a restart without backoff); after a
        backoff the directory is read again: a checkpoint may have been removed or restored
        meanwhile, by hand or by a retention job."""
        found = self.scan(0.0)
        self._found = (self.wall(), found)
        chosen, _ = choose_checkpoint(found)
        return chosen

    def pick_checkpoint(
        self,
        settle_s: float,
        before_step: int | None = None,
        resumed_from: Sequence[int] = (),
    ) -> Checkpoint | None:
        """The newest complete (and, with --validate-checkpoint, valid) checkpoint, at or before
        `before_step` for a rollback. What was passed over, and why, goes to the logbook.
        Raises LaunchError rather than send a run back to step 0 on a guess: when the validator
        rejects MAX_VALIDATIONS checkpoints in a row, and when a rollback finds none before
        the anomaly although there are checkpoints without a step in their names, or although
        an earlier attempt resumed from one (`resumed_from`: their steps) that is gone now.
        Raises StopRequested when babysit is told to stop while the validator runs."""
        pattern = self.checkpoint_pattern
        if pattern is None:
            return None
        kept, self._found = self._found, None
        fresh = kept is not None and self.wall() - kept[0] <= SCAN_REUSE_S
        found = kept[1] if kept is not None and fresh else self.scan(settle_s)
        rejected: list[Checkpoint] = []
        while True:
            chosen, passed_over = choose_checkpoint(found, before_step)
            if chosen is None or not self.cfg.checkpoint.validate:
                break
            if rejected and (len(rejected) >= MAX_VALIDATIONS):
                self._validator_gave_up(rejected)
            key = (chosen.path, chosen.mtime, chosen.size)
            if key in self._accepted:
                break
            problem = validate_checkpoint(
                self.cfg.checkpoint.validate,
                chosen.path,
                self.cwd,
                self.cfg.checkpoint.validate_timeout_s,
                self.stopping,
            )
            if self.stopping():  # the validator was killed (or finished) meanwhile
                raise StopRequested(f"stopped while validating {chosen.path}")
            if problem is None:
                self._accepted.add(key)  # not validated again at the next launch
                break
            self._rejected[key] = problem
            bad = replace(chosen, complete=False, problem=problem)
            rejected.append(bad)
            found = [bad if c.path == chosen.path else c for c in found]
        # (the rejected ones are among passed_over: `found` carries their problem)
        if rejected and chosen is None:
            self._validator_gave_up(rejected)
        if chosen is None and before_step is not None:
            self._refuse_scratch(found, before_step, resumed_from)
        for ckpt in passed_over:
            self.say(Level.WARN, f"skipping checkpoint {ckpt.path}: {ckpt.problem}")
        limit = f" at or before step {before_step}" if before_step is not None else ""
        if chosen is None and found:
            self.say(
                Level.WARN,
                f"no usable checkpoint{limit} among {len(found)} matching {pattern!r}: "
                "starting from scratch",
            )
        elif not found:
            self.say(Level.INFO, f"no checkpoint matches {pattern!r} yet: starting from scratch")
        if chosen is not None and passed_over:
            newest = passed_over[0]
            self.say(
                Level.WARN,
                f"the newest checkpoint{limit} ({Path(newest.path).name}) is not usable; "
                f"falling back to {Path(chosen.path).name} (step {chosen.step})",
            )
        if chosen is not None or passed_over or before_step is not None:
            if chosen:
                message = f"resuming from {chosen.path}"
            else:
                message = f"no usable checkpoint{limit}: starting from scratch"
            if chosen is not None and passed_over:
                message += (
                    " (newer ones passed over: "
                    + "; ".join(f"{Path(c.path).name}: {c.problem}" for c in passed_over)
                    + ")"
                )
            self.journal.event(
                EventKind.CHECKPOINT,
                message,
                path=chosen.path if chosen else None,
                step=chosen.step if chosen else None,
                before_step=before_step,
                passed_over=[{"path": c.path, "problem": c.problem} for c in passed_over],
            )
        return chosen

    def _validator_gave_up(self, rejected: Sequence[Checkpoint]) -> None:
        raise LaunchError(
            f"--validate-checkpoint rejected the newest {len(rejected)} checkpoint(s) and "
            f"left none to resume from (last: {Path(rejected[-1].path).name}: "
            f"{rejected[-1].problem}). babysit will not go back to step 0 on its word: check "
            "the command (run it by hand on a checkpoint you trust; raise "
            "checkpoint.validate_timeout_s if it is only slow), or remove the bad checkpoints"
        )

    def _refuse_scratch(
        self, found: Sequence[Checkpoint], before: int, resumed_from: Sequence[int]
    ) -> None:
        unplaced = [c for c in found if c.complete and c.step is None]
        if unplaced:
            raise LaunchError(
                f"cannot roll back: the checkpoints ({Path(unplaced[0].path).name}, ...) "
                "have no step in their names, so babysit cannot tell which is from before "
                f"step {before + 1}. Resume by hand, or save checkpoints as ckpt_{{step}}.pt "
                "(or point --checkpoint at a template like 'out/step{step}/model.pt')"
            )
        earlier = [step for step in resumed_from if step <= before]
        if earlier:
            # A checkpoint from before the anomaly existed (an attempt resumed from it) and is
            # gone or unusable now: going back to step 0 would throw the run away.
            raise LaunchError(
                f"cannot roll back: no usable checkpoint at or before step {before} is left "
                f"(attempts resumed from step {max(earlier)} before). Restore one, or resume by "
                "hand; babysit will not restart this run from step 0 on its own"
            )

    # -- rollbacks -----------------------------------------------------------------------------

    def so_far(self, attempts: Sequence[AttemptRecord] = ()) -> compose.RunSoFar:
        """What the decisions read: the attempts (those the budgets count), the anomalies and
        windows rolled back for so far, whether there is anything to roll back to."""
        has_glob = self.checkpoint_pattern is not None
        return compose.RunSoFar(tuple(attempts), tuple(self.anomalies), self.windows, has_glob)

    def wants_rollback(self, inc: Incident) -> bool:
        return wants_rollback(inc, self.rule)

    def on_incident(self, inc: Incident) -> Decision:
        return compose.on_incident(inc, self.so_far(), self.rules)

    def rolled_back(self, decision: Decision, anomaly_step: int | None) -> None:
        self.windows = merge([*self.windows, *decision.skip_steps])
        if anomaly_step is not None:
            self.anomalies.append(anomaly_step)
        if decision.lr_scale is not None and decision.skip_steps:
            self.lr_scale = decision.lr_scale
            self.lr_until = max(hi for _, hi in decision.skip_steps)

    def ended_for_anomaly(self, anomaly_step: int, ended: float, attempt: int) -> None:
        """Checkpoints that attempt saved at or after the anomaly are not resumed from."""
        self.quarantine.append((anomaly_step, ended, attempt))

    def lr_scale_for(self, resume_step: int | None) -> float | None:
        """The rollback's learning-rate scale holds until the run is past its skipped window."""
        if self.lr_scale is None or (resume_step or 0) > self.lr_until:
            return None
        return self.lr_scale
