"""Restart or give up: the decision after an attempt ends. Pure: inputs are values.

    decide(history, RestartPolicy(max_restarts=10, ...), uniform=random.random(),
           newest_checkpoint_step=1200)

`history` holds the attempts that count for the budget, oldest first, ending with the attempt
that just ended (the store keeps them, so every budget below survives a babysit restart and a
requeue). Rules, in order:
1. exit 0 -> succeed. An attempt stopped by a signal before it finished (a babysit that died
   mid-stop and was started again) -> start it again at once, charged to no budget.
2. a verdict that says a restart cannot help (transient is False) -> give up, a human must act
   (a scheduler's ending too: a pod evicted for going over its own disk limit). Otherwise an
   attempt ended by a preemption or a scheduler time limit -> start it again at once, charged to
   no budget.
   user_code, data and cuda_oom never loop: the second attempt in a row ending with one of them
   gives up even when the verdict was too weak to say so the first time.
3. the same error fingerprint as the attempt before, and no progress this time (it was not
   healthy, see 6, and its step counter did not move) -> give up: it is a loop, not bad luck.
   Unless both blamed the same node and a ban took it out, or still can (`node_ban_pending`):
   the ban rule is counting, and the run should get to the attempt without the node.
4. the category's budget spent: more than budgets[category] attempts of that category ended
   within budget_window_s (BudgetRule, the [budget] section) -> give up.
5. a restart storm: storm_attempts attempts that failed fast (no step counter moved, and not
   ended by babysit for a rollback, which has its own budget) started within storm_window_s ->
   give up. An attempt that trained is not part of a storm however soon it failed.
   No checkpoint progress: the last no_checkpoint_progress attempts all started from the
   checkpoint the next one would start from (newest_checkpoint_step) -> give up; not while they
   all blamed one node that a ban takes out (`node_ban_pending`, as in 3).
6. more than max_restarts failed attempts in a row without a healthy one -> give up, budget spent.
   An attempt is healthy when it reached a step no earlier attempt reached, or ran for at least
   reset_after_s.
7. otherwise restart after backoff_s * backoff_factor^(n-1) (capped at backoff_max_s), scaled by a
   jitter factor in [1 - jitter, 1 + jitter], n being the failures in a row; n is 1 when the
   node the attempt failed on was just banned (`node_banned`): the next attempt runs elsewhere.
   An attempt that trained (healthy, as in 6) and then failed waits only after_progress_s
   (or backoff_s when shorter; jittered alike): torchrun's prompt restart for the fault that
   comes after hours of training, a crash loop's growing backoff for the failures in a row
   after it (backoff_s * factor^(n-1), n counting the attempt that trained: 20 s, 40 s, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from babysit.policy.nodes import duration
from babysit.records import AttemptRecord, Category, Decision, DecisionKind, Outcome

NEVER_LOOP = frozenset({Category.USER_CODE, Category.DATA, Category.CUDA_OOM})
NOT_CHARGED = frozenset({Category.PREEMPTION})


@dataclass(frozen=True)
class RestartPolicy:
    """The [restart] section of babysit.toml."""

    max_restarts: int = 10  # restarts in a row without new progress before giving up
    backoff_s: float = 10.0  # delay before the first restart; grows by backoff_factor
    backoff_factor: float = 2.0
    backoff_max_s: float = 600.0
    after_progress_s: float = 2.0  # delay before restarting an attempt that trained (rule 7)
    jitter: float = 0.25  # the delay is scaled by a random factor in [1 - jitter, 1 + jitter]
    reset_after_s: float = 600.0  # an attempt that ran this long counts as healthy
    storm_attempts: int = 5  # this many failed attempts within storm_window_s: stop (0: off)
    storm_window_s: float = 1800.0
    no_checkpoint_progress: int = 3  # attempts in a row resuming from one checkpoint (0: off)


@dataclass(frozen=True)
class BudgetRule:
    """The [budget] section of babysit.toml: restarts allowed per failure category within
    window_s (preemptions and time limits are never charged; user_code, data and cuda_oom never
    restart)."""

    window_s: float = 86400.0
    nccl_timeout: int = 10
    nccl_error: int = 10
    gpu_hardware: int = 5
    cuda_error_other: int = 5
    host_oom: int = 3
    segfault: int = 5
    filesystem_io: int = 10
    network: int = 10
    numerical: int = 5  # rollbacks after NaN
    loss_spike: int = 5  # rollbacks after spikes that did not settle
    hang: int = 5
    throughput_drop: int = 5
    unknown: int = 10

    def limits(self) -> dict[str, int]:
        """category -> restarts allowed within window_s."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "window_s"}


def charged(attempt: AttemptRecord) -> bool:
    """Failed attempts that count against budgets: not stopped, not preempted."""
    return attempt.outcome not in (
        Outcome.SUCCEEDED,
        Outcome.STOPPED,
        Outcome.RUNNING,
    ) and (attempt.category not in NOT_CHARGED)


def _above(attempt: AttemptRecord, best: int | None) -> bool:
    return attempt.last_step is not None and (best is None or attempt.last_step > best)


def _ran_long(attempt: AttemptRecord, reset_after_s: float) -> bool:
    return attempt.ended is not None and attempt.ended - attempt.started >= reset_after_s


def new_high(attempt: AttemptRecord, earlier: Sequence[AttemptRecord]) -> bool:
    """The attempt reached a step that no earlier attempt reached."""
    best = max((a.last_step for a in earlier if a.last_step is not None), default=None)
    return _above(attempt, best)


def healthy(attempt: AttemptRecord, earlier: Sequence[AttemptRecord], reset_after_s: float) -> bool:
    return new_high(attempt, earlier) or _ran_long(attempt, reset_after_s)


def failures_in_a_row(history: Sequence[AttemptRecord], reset_after_s: float) -> int:
    """Failed attempts at the end of history since (and including) the last healthy one."""
    # best[i]: the highest step reached before attempt i (one pass: the history can be long)
    best: list[int | None] = []
    top: int | None = None
    for a in history:
        best.append(top)
        if _above(a, top):
            top = a.last_step
    count = 0
    for i in range(len(history) - 1, -1, -1):
        attempt = history[i]
        if attempt.outcome == Outcome.SUCCEEDED:
            break
        if not charged(attempt):
            continue
        count += 1
        if _above(attempt, best[i]) or _ran_long(attempt, reset_after_s):
            break  # the healthy one
    return count


def backoff_delay(n: int, policy: RestartPolicy, uniform: float) -> float:
    try:
        base = min(policy.backoff_s * policy.backoff_factor ** max(n - 1, 0), policy.backoff_max_s)
    except OverflowError:  # a long streak with a large factor: the cap applies
        base = policy.backoff_max_s
    return max(0.0, base * (1 + policy.jitter * (2 * uniform - 1)))


def decide(
    history: Sequence[AttemptRecord],
    policy: RestartPolicy,
    uniform: float,
    newest_checkpoint_step: int | None = None,
    checkpoints: bool = False,
    budgets: Mapping[str, int] | None = None,
    budget_window_s: float = 86400.0,
    node_ban_pending: bool = False,
    node_banned: bool = False,
) -> Decision:
    """`history` ends with the attempt that just ended; `uniform` is a random number in [0, 1);
    `checkpoints`: the run has a checkpoint glob, so checkpoint progress can be judged, with
    `newest_checkpoint_step` the step the next attempt would start from (None: scratch);
    `budgets`: category -> restarts allowed within `budget_window_s` (BudgetRule.limits());
    `node_ban_pending`: the node this attempt was blamed on was just banned, or can still be,
    and left out of a later attempt (a ban rule is on and there are other nodes to run on)."""
    current = history[-1]
    charged_before = [a for a in history[:-1] if charged(a)]
    previous = history[-2] if len(history) > 1 else None
    if current.outcome == Outcome.SUCCEEDED:
        return Decision(DecisionKind.SUCCEED, f"attempt {current.number} finished successfully")
    what = current.summary or "failed"
    if current.outcome == Outcome.STOPPED:
        return Decision(
            DecisionKind.RESTART,
            f"attempt {current.number} was stopped before it finished ({what}); starting it "
            "again (not counted against the restart budget)",
            counts=False,
        )
    if current.transient is False:  # a scheduler's word too: the pod over its own disk limit
        return Decision(DecisionKind.GIVE_UP_NEEDS_HUMAN, f"attempt {current.number}: {what}")
    if current.category in NOT_CHARGED:
        return Decision(
            DecisionKind.RESTART,
            f"attempt {current.number} was preempted or hit a scheduler limit ({what}); "
            "starting it again (not counted against any restart budget)",
            counts=False,
        )
    last = charged_before[-1] if charged_before else None
    if current.category in NEVER_LOOP and last is not None and last.category == current.category:
        return Decision(
            DecisionKind.GIVE_UP_NEEDS_HUMAN,
            f"attempts {last.number} and {current.number} both ended with "
            f"{current.category.value}: restarting will not fix it ({what})",
        )
    if (
        previous is not None
        and current.fingerprint is not None
        and current.fingerprint == previous.fingerprint
        and not current.made_progress
        and not healthy(current, history[:-1], policy.reset_after_s)
        and not (node_ban_pending and _same_node(current, previous))
    ):
        return Decision(
            DecisionKind.GIVE_UP_NEEDS_HUMAN,
            f"attempt {current.number} died with the same error as attempt {previous.number} "
            f"without making progress: {what}. Restarting again would loop.",
        )
    spent = _budget_spent(current, history, budgets or {}, budget_window_s)
    if spent is not None:
        return Decision(DecisionKind.GIVE_UP_BUDGET, f"{spent}; last: {what}")
    storm = _storm(current, history, policy)
    if storm is not None:
        return Decision(DecisionKind.GIVE_UP_BUDGET, f"{storm}; last: {what}")
    if checkpoints:
        stuck = _no_checkpoint_progress(history, policy, newest_checkpoint_step, node_ban_pending)
        if stuck is not None:
            return Decision(DecisionKind.GIVE_UP_BUDGET, f"{stuck}; last: {what}")
    n = failures_in_a_row(history, policy.reset_after_s)
    if n > policy.max_restarts:
        return Decision(
            DecisionKind.GIVE_UP_BUDGET,
            f"{n} failed attempt{'s' if n != 1 else ''} in a row since the last one that made "
            f"progress (restart budget max_restarts={policy.max_restarts} spent); last: {what}",
        )
    if healthy(current, history[:-1], policy.reset_after_s):
        prompt = min(policy.after_progress_s, policy.backoff_s)
        delay = max(0.0, prompt * (1 + policy.jitter * (2 * uniform - 1)))
    else:
        delay = backoff_delay(1 if node_banned else n, policy, uniform)
    without = " without the banned node" if node_banned else ""
    return Decision(
        DecisionKind.RESTART,
        f"restarting in {delay:.1f}s{without} (restart {n} of {policy.max_restarts} allowed in "
        "a row without progress)",
        delay,
    )


def _budget_spent(
    current: AttemptRecord,
    history: Sequence[AttemptRecord],
    budgets: Mapping[str, int],
    window_s: float,
) -> str | None:
    if current.category is None or current.category.value not in budgets:
        return None
    allowed = budgets[current.category.value]
    end = current.ended if current.ended is not None else current.started
    count = sum(
        1
        for a in history
        if charged(a)
        and a.category == current.category
        and (a.ended if a.ended is not None else a.started) >= end - window_s
    )
    if count <= allowed:
        return None
    return (
        f"{count} attempts ended with {current.category.value} within "
        f"{duration(window_s)} (budget.{current.category.value} = {allowed} restarts)"
    )


def _same_node(a: AttemptRecord, b: AttemptRecord) -> bool:
    return a.suspect_host is not None and a.suspect_host == b.suspect_host


def failed_fast(attempt: AttemptRecord) -> bool:
    """A charged attempt that trained nothing and was not stopped for a rollback."""
    return charged(attempt) and not attempt.made_progress and attempt.anomaly_step is None


def _storm(
    current: AttemptRecord, history: Sequence[AttemptRecord], policy: RestartPolicy
) -> str | None:
    if policy.storm_attempts <= 0:
        return None
    end = current.ended if current.ended is not None else current.started
    recent = [a for a in history if failed_fast(a) and a.started >= end - policy.storm_window_s]
    if len(recent) < policy.storm_attempts:
        return None
    return (
        f"restart storm: {len(recent)} attempts failed without training a step within "
        f"{duration(policy.storm_window_s)} (restart.storm_attempts = {policy.storm_attempts}); "
        "something keeps failing fast"
    )


def _no_checkpoint_progress(
    history: Sequence[AttemptRecord],
    policy: RestartPolicy,
    newest: int | None,
    node_ban_pending: bool = False,
) -> str | None:
    n = policy.no_checkpoint_progress
    if n <= 0:
        return None
    tail = [a for a in history if charged(a)][-n:]
    if len(tail) < n or any(a.resume_step != newest for a in tail):
        return None
    if node_ban_pending and all(_same_node(a, history[-1]) for a in tail):
        return None  # the next attempt runs without the node they all failed on
    if any(a.anomaly_step is not None for a in tail):
        return None  # rollbacks resume from older checkpoints on purpose; their own rule pages
    where = f"checkpoint step {newest}" if newest is not None else "scratch (no checkpoint yet)"
    return (
        f"no checkpoint progress: the last {n} attempts all started from {where} and none saved "
        f"a newer checkpoint, so the next one would start there again "
        f"(restart.no_checkpoint_progress = {n})"
    )
