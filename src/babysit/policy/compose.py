"""The one place the policies meet: an incident or an ended attempt in, one Decision out.

    rules = Rules(restart=cfg.restart, rollback=cfg.rollback, budget=cfg.budget)
    d = on_incident(incident, RunSoFar(history, anomalies, windows, checkpoints=True), rules)
    d = on_ended(RunSoFar(...), rules, uniform=0.4, newest=newest_checkpoint, pending=d)

Pure: values in, a Decision out, with its reason in plain words. The supervise package only
carries it out. Decisions, in the order a careful human would take them:
- an incident during an attempt (a NaN, a loss spike that does not settle) -> keep watching,
  or roll back past it with a skip window (the attempt is stopped first), or page a human when
  rolling back has not helped at the same place (policy/rollback.py);
- a hang still flagged -> wait, or kill the attempt and restart it (policy/hang.py);
- an attempt that ended -> succeed, restart after a backoff, or give up (a human must act, or a
  budget is spent) (policy/restart.py); a pending rollback replaces a plain restart, and a
  pending page is final.
Bans are not decided here: a failure blamed on a node goes to the node registry, whose own rule
(policy/nodes.py) bans it before the next launch, and the launch leaves banned hosts out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from babysit.looks import Evidence
from babysit.policy.hang import HangAction, backoff_left
from babysit.policy.hang import on_hang as hang_on_hang
from babysit.policy.restart import BudgetRule, RestartPolicy, decide
from babysit.policy.rollback import RollbackRule, Window
from babysit.policy.rollback import on_incident as rollback_on_incident
from babysit.records import AttemptRecord, Checkpoint, Decision, DecisionKind, Incident


@dataclass(frozen=True)
class Rules:
    """The rules the policies take: the config's sections, as they are."""

    restart: RestartPolicy = field(default_factory=RestartPolicy)
    rollback: RollbackRule = field(default_factory=RollbackRule)
    budget: BudgetRule = field(default_factory=BudgetRule)
    hang: HangAction = field(default_factory=HangAction)


@dataclass(frozen=True)
class RunSoFar:
    """What the decisions read of the run's history."""

    attempts: Sequence[AttemptRecord] = ()  # those the budgets count, oldest first
    anomalies: Sequence[int] = ()  # steps of the anomalies earlier rollbacks were for
    windows: Sequence[Window] = ()  # data windows skipped so far
    checkpoints: bool = False  # the run has a checkpoint glob (something to roll back to)


def on_incident(inc: Incident, run: RunSoFar, rules: Rules) -> Decision:
    """KEEP_WATCHING (logged), ROLLBACK (stop the attempt, then roll back) or
    GIVE_UP_NEEDS_HUMAN (stop the attempt, then page)."""
    return rollback_on_incident(inc, rules.rollback, run.anomalies, run.windows, run.checkpoints)


def on_hang(hang: Incident, now: float, rules: Rules, evidence: Evidence | None = None) -> Decision:
    """A hang still flagged: KEEP_WATCHING (wait) or RESTART (kill it now, then restart), on
    what the looks at it showed (`evidence`)."""
    return hang_on_hang(hang, now, rules.hang, evidence)


def stops_attempt(decision: Decision) -> bool:
    """Whether an incident's decision ends the attempt now."""
    return decision.kind in (DecisionKind.ROLLBACK, DecisionKind.GIVE_UP_NEEDS_HUMAN)


def on_ended(
    run: RunSoFar,
    rules: Rules,
    uniform: float,
    newest: Checkpoint | None,
    pending: Decision | None = None,
    hung_s: float = 0.0,
    node_ban_pending: bool = False,
    node_banned: bool = False,
) -> Decision:
    """After an attempt ended (the last of `run.attempts`): `newest` is the checkpoint the next
    attempt would start from; `pending` the decision of the anomaly the attempt was ended for;
    `hung_s` how long it sat hung before babysit killed it (it counts toward the backoff).
    `node_ban_pending`: the node it was blamed on can still be banned, `node_banned`: it was
    just banned (restart.decide).
    A page is final; a rollback replaces a plain restart, never a give-up."""
    if pending is not None and pending.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN:
        return pending
    # Progress is judged by steps: checkpoints without one in their name (`ckpt.pt`) can't.
    judged = run.checkpoints and (newest is None or newest.step is not None)
    decision = decide(
        run.attempts,
        rules.restart,
        uniform,
        newest.step if newest is not None else None,
        judged and pending is None,
        rules.budget.limits(),
        rules.budget.window_s,
        node_ban_pending,
        node_banned,
    )
    if pending is not None and decision.kind == DecisionKind.RESTART:
        return pending
    if decision.kind == DecisionKind.RESTART and hung_s > 0 and decision.delay_s > 0:
        left = backoff_left(decision.delay_s, hung_s)
        full = f"restarting in {decision.delay_s:.1f}s"
        reason = decision.reason.replace(full, f"restarting in {left:.1f}s", 1)
        return replace(
            decision,
            delay_s=left,
            reason=f"{reason}; the {decision.delay_s:.1f}s backoff counts the {hung_s:.0f}s "
            "the job sat hung",
        )
    return decision
