"""policy.compose: one Decision from the policies, for an incident and for an ended attempt."""

from __future__ import annotations

import dataclasses

from babysit.policy.compose import Rules, RunSoFar, on_ended, on_incident, stops_attempt
from babysit.policy.restart import BudgetRule, RestartPolicy
from babysit.policy.rollback import RollbackRule
from babysit.records import (
    AttemptRecord,
    Category,
    Checkpoint,
    Decision,
    DecisionKind,
    Incident,
    IncidentKind,
    Outcome,
)

QUIET = Rules(restart=RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=0))


def nan(step: int | None) -> Incident:
    return Incident(IncidentKind.NONFINITE, "loss is nan", 0.0, step, "loss", float("nan"))


def failed(n: int, category: Category = Category.NCCL_ERROR, **kw: object) -> AttemptRecord:
    return AttemptRecord(
        n,
        float(n),
        float(n) + 1,
        Outcome.FAILED,
        1,
        None,
        0,
        10,
        category,
        True,
        None,
        "x",
        **kw,  # type: ignore[arg-type]
    )


def ckpt(step: int | None) -> Checkpoint:
    return Checkpoint(f"ckpt_{step}.pt", step, 0.0, 1, True)


def test_a_nan_with_a_checkpoint_glob_rolls_back_and_stops_the_attempt() -> None:
    d = on_incident(nan(1000), RunSoFar(checkpoints=True), Rules())
    assert d.kind == DecisionKind.ROLLBACK and stops_attempt(d)
    assert d.before_step == 999 and d.skip_steps == ((950, 1150),)


def test_a_nan_without_a_checkpoint_glob_is_only_logged() -> None:
    d = on_incident(nan(1000), RunSoFar(checkpoints=False), Rules())
    assert d.kind == DecisionKind.KEEP_WATCHING and not stops_attempt(d)
    assert "no --checkpoint glob" in d.reason


def test_the_third_anomaly_at_one_place_pages() -> None:
    run = RunSoFar(anomalies=(1000, 1010), windows=((950, 1160),), checkpoints=True)
    d = on_incident(nan(1020), run, Rules(rollback=RollbackRule(max_at_same_place=3)))
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN and stops_attempt(d)


def test_a_pending_page_is_final() -> None:
    page = Decision(DecisionKind.GIVE_UP_NEEDS_HUMAN, "again at the same place")
    d = on_ended(RunSoFar([failed(1)], checkpoints=True), QUIET, 0.5, ckpt(900), page)
    assert d is page


def test_a_pending_rollback_replaces_a_plain_restart() -> None:
    rollback = Decision(DecisionKind.ROLLBACK, "roll back", before_step=999)
    d = on_ended(RunSoFar([failed(1)], checkpoints=True), QUIET, 0.5, ckpt(900), rollback)
    assert d is rollback


def test_a_pending_rollback_never_overrides_a_give_up() -> None:
    rollback = Decision(DecisionKind.ROLLBACK, "roll back", before_step=999)
    rules = Rules(restart=RestartPolicy(max_restarts=0, storm_attempts=0))
    d = on_ended(RunSoFar([failed(1)], checkpoints=True), rules, 0.5, ckpt(900), rollback)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET


def test_the_budget_rule_reaches_the_restart_policy() -> None:
    rules = Rules(restart=QUIET.restart, budget=BudgetRule(nccl_error=1))
    d = on_ended(RunSoFar([failed(1), failed(2)]), rules, 0.5, None)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET and "budget.nccl_error = 1" in d.reason


def test_checkpoint_progress_is_not_judged_without_steps_in_names() -> None:
    stuck = [failed(n, resume_step=None) for n in range(1, 5)]
    rules = Rules(restart=RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=3))
    judged = on_ended(RunSoFar(stuck, checkpoints=True), rules, 0.5, None)
    assert judged.kind == DecisionKind.GIVE_UP_BUDGET and "no checkpoint progress" in judged.reason
    unplaced = on_ended(RunSoFar(stuck, checkpoints=True), rules, 0.5, ckpt(None))
    assert unplaced.kind == DecisionKind.RESTART


def test_success_succeeds() -> None:
    ok = AttemptRecord(1, 0.0, 1.0, Outcome.SUCCEEDED, 0)
    assert on_ended(RunSoFar([ok]), QUIET, 0.5, None).kind == DecisionKind.SUCCEED


def test_a_nan_rebuilt_from_the_store_is_told_by_its_message_not_as_none() -> None:
    again = Incident(IncidentKind.NONFINITE, "loss is nan at step 200", 0.0, 200, "loss")
    d = on_incident(again, RunSoFar(checkpoints=True), Rules())
    assert d.kind == DecisionKind.ROLLBACK and "None" not in d.reason
    assert d.reason.startswith("loss is nan at step 200")


def test_the_time_a_killed_hang_sat_idle_counts_toward_the_backoff() -> None:
    run = RunSoFar([failed(1, Category.HANG)])  # it trained: after_progress_s applies
    rules = Rules(restart=dataclasses.replace(QUIET.restart, after_progress_s=10.0))
    plain = on_ended(run, rules, 0.5, None)
    assert plain.kind == DecisionKind.RESTART and plain.delay_s == 10.0
    d = on_ended(run, rules, 0.5, None, hung_s=8.0)
    assert d.kind == DecisionKind.RESTART and d.delay_s == 2.0
    assert d.reason.startswith("restarting in 2.0s")
    assert "counts the 8s the job sat hung" in d.reason
    assert on_ended(run, rules, 0.5, None, hung_s=60.0).delay_s == 0.0
