"""Restart or give up: the decision after an attempt ends. Pure: inputs are values.

    decide(history, RestartPolicy(max_restarts=10, ...), uniform=random.random())

`history` holds the attempts that count for the budget, oldest first, ending with the attempt
that just ended. Rules, in order:
1. exit 0 -> succeed. An attempt stopped by a signal before it finished (a preemption, a
   babysit that died mid-stop and was started again) -> start it again at once; it counts
   neither for nor against the budget.
2. a verdict that says a restart cannot help (transient is False) -> give up, a human must act.
3. the same error fingerprint as the attempt before, and no progress this time (it was not
   healthy, see 4, and its step counter did not move) -> give up: it is a loop, not bad luck.
4. more than max_restarts failed attempts in a row without a healthy one -> give up, budget spent.
   An attempt is healthy when it reached a step no earlier attempt reached, or ran for at least
   reset_after_s.
5. otherwise restart after backoff_s * backoff_factor^(n-1) (capped at backoff_max_s), scaled by a
   jitter factor in [1 - jitter, 1 + jitter], n being the failures in a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from babysit.records import AttemptRecord, Decision, DecisionKind, Outcome


@dataclass(frozen=True)
class RestartPolicy:
    max_restarts: int = 10
    backoff_s: float = 10.0
    backoff_factor: float = 2.0
    backoff_max_s: float = 600.0
    jitter: float = 0.25
    reset_after_s: float = 600.0


def new_high(attempt: AttemptRecord, earlier: Sequence[AttemptRecord]) -> bool:
    """The attempt reached a step that no earlier attempt reached."""
    best = max((a.last_step for a in earlier if a.last_step is not None), default=None)
    return attempt.last_step is not None and (best is None or attempt.last_step > best)


def healthy(attempt: AttemptRecord, earlier: Sequence[AttemptRecord], reset_after_s: float) -> bool:
    if new_high(attempt, earlier):
        return True
    return attempt.ended is not None and attempt.ended - attempt.started >= reset_after_s


def failures_in_a_row(history: Sequence[AttemptRecord], reset_after_s: float) -> int:
    """Failed attempts at the end of history since (and including) the last healthy one."""
    count = 0
    for i in range(len(history) - 1, -1, -1):
        attempt = history[i]
        if attempt.outcome == Outcome.SUCCEEDED:
            break
        if attempt.outcome == Outcome.STOPPED:
            continue
        count += 1
        if healthy(attempt, history[:i], reset_after_s):
            break
    return count


def backoff_delay(n: int, policy: RestartPolicy, uniform: float) -> float:
    try:
        base = min(policy.backoff_s * policy.backoff_factor ** max(n - 1, 0), policy.backoff_max_s)
    except OverflowError:  # a long streak with a large factor: the cap applies
        base = policy.backoff_max_s
    return max(0.0, base * (1 + policy.jitter * (2 * uniform - 1)))


def decide(history: Sequence[AttemptRecord], policy: RestartPolicy, uniform: float) -> Decision:
    """`history` ends with the attempt that just ended; `uniform` is a random number in [0, 1)."""
    current = history[-1]
    previous = history[-2] if len(history) > 1 else None
    if current.outcome == Outcome.SUCCEEDED:
        return Decision(DecisionKind.SUCCEED, f"attempt {current.number} finished successfully")
    what = current.summary or "failed"
    if current.outcome == Outcome.STOPPED:
        return Decision(
            DecisionKind.RESTART,
            f"attempt {current.number} was stopped before it finished ({what}); starting it "
            "again (not counted against the restart budget)",
        )
    if current.transient is False:
        return Decision(DecisionKind.GIVE_UP_NEEDS_HUMAN, f"attempt {current.number}: {what}")
    if (
        previous is not None
        and current.fingerprint is not None
        and current.fingerprint == previous.fingerprint
        and not current.made_progress
        and not healthy(current, history[:-1], policy.reset_after_s)
    ):
        return Decision(
            DecisionKind.GIVE_UP_NEEDS_HUMAN,
            f"attempt {current.number} died with the same error as attempt {previous.number} "
            f"without making progress: {what}. Restarting again would loop.",
        )
    n = failures_in_a_row(history, policy.reset_after_s)
    if n > policy.max_restarts:
        return Decision(
            DecisionKind.GIVE_UP_BUDGET,
            f"{n} failed attempt{'s' if n != 1 else ''} in a row since the last one that made "
            f"progress (restart budget max_restarts={policy.max_restarts} spent); last: {what}",
        )
    delay = backoff_delay(n, policy, uniform)
    return Decision(
        DecisionKind.RESTART,
        f"restarting in {delay:.1f}s (restart {n} of {policy.max_restarts} allowed in a row "
        "without progress)",
        delay,
    )
