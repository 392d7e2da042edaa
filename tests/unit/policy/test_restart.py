"""babysit.policy.restart: decide(), the restart budget and backoff."""

from __future__ import annotations

import pytest

from babysit.policy.restart import (
    RestartPolicy,
    backoff_delay,
    decide,
    failures_in_a_row,
    healthy,
)
from babysit.records import AttemptRecord, DecisionKind, Outcome

FAST = RestartPolicy(
    max_restarts=2,
    backoff_s=10.0,
    backoff_factor=2.0,
    backoff_max_s=100.0,
    jitter=0.0,
    reset_after_s=600.0,
)


def failed(
    number: int,
    *,
    started: float | None = None,
    duration: float = 5.0,
    first: int | None = None,
    last: int | None = None,
    fp: str | None = None,
    transient: bool | None = None,
    summary: str | None = None,
) -> AttemptRecord:
    start = started if started is not None else number * 1000.0
    return AttemptRecord(
        number=number,
        started=start,
        ended=start + duration,
        outcome=Outcome.FAILED,
        exit_code=1,
        first_step=first,
        last_step=last,
        transient=transient,
        fingerprint=fp,
        summary=summary,
    )


def succeeded(number: int) -> AttemptRecord:
    return AttemptRecord(number, number * 1000.0, number * 1000.0 + 5, Outcome.SUCCEEDED, 0)


def test_success() -> None:
    d = decide([failed(1), succeeded(2)], FAST, 0.5)
    assert d.kind == DecisionKind.SUCCEED
    assert d.delay_s == 0.0
    assert "attempt 2" in d.reason


def test_success_even_when_budget_would_be_spent() -> None:
    history = [failed(i) for i in range(1, 10)] + [succeeded(10)]
    assert decide(history, FAST, 0.5).kind == DecisionKind.SUCCEED


def test_transient_false_needs_a_human() -> None:
    d = decide([failed(1, transient=False, summary="No module named 'foo'")], FAST, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    assert "No module named 'foo'" in d.reason


def test_transient_false_beats_progress() -> None:
    d = decide([failed(1, first=0, last=500, transient=False)], FAST, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN


def test_transient_true_restarts() -> None:
    assert decide([failed(1, transient=True)], FAST, 0.5).kind == DecisionKind.RESTART


def test_same_fingerprint_twice_without_progress_gives_up() -> None:
    history = [failed(1, fp="abc", first=0, last=50), failed(2, fp="abc", first=50, last=50)]
    d = decide(history, FAST, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    assert "attempt 1" in d.reason
    assert "attempt 2" in d.reason
    assert "loop" in d.reason


def test_same_fingerprint_twice_no_steps_at_all_gives_up() -> None:
    history = [failed(1, fp="abc"), failed(2, fp="abc")]
    assert decide(history, FAST, 0.5).kind == DecisionKind.GIVE_UP_NEEDS_HUMAN


def test_same_fingerprint_with_progress_restarts() -> None:
    history = [failed(1, fp="abc", first=0, last=50), failed(2, fp="abc", first=50, last=80)]
    assert decide(history, FAST, 0.5).kind == DecisionKind.RESTART


def test_different_fingerprints_restart() -> None:
    history = [failed(1, fp="abc"), failed(2, fp="def")]
    assert decide(history, FAST, 0.5).kind == DecisionKind.RESTART


def test_no_fingerprint_is_never_the_same() -> None:
    history = [failed(1, fp=None), failed(2, fp=None)]
    assert decide(history, FAST, 0.5).kind == DecisionKind.RESTART


def test_same_fingerprint_not_adjacent_restarts() -> None:
    history = [failed(1, fp="abc"), failed(2, fp="def"), failed(3, fp="abc")]
    big = RestartPolicy(max_restarts=10, jitter=0.0)
    assert decide(history, big, 0.5).kind == DecisionKind.RESTART


def test_budget_two_restarts_then_give_up() -> None:
    history: list[AttemptRecord] = []
    kinds = []
    for n in range(1, 4):
        history.append(failed(n))
        kinds.append(decide(history, FAST, 0.5).kind)
    assert kinds == [DecisionKind.RESTART, DecisionKind.RESTART, DecisionKind.GIVE_UP_BUDGET]
    d = decide(history, FAST, 0.5)
    assert "max_restarts=2" in d.reason
    assert "3 failed attempts" in d.reason


def test_max_restarts_zero_never_restarts() -> None:
    policy = RestartPolicy(max_restarts=0, jitter=0.0)
    assert decide([failed(1)], policy, 0.5).kind == DecisionKind.GIVE_UP_BUDGET
    # not even after a healthy attempt
    assert decide([failed(1, first=0, last=9999)], policy, 0.5).kind == DecisionKind.GIVE_UP_BUDGET


def test_new_highest_step_resets_the_count() -> None:
    history = [failed(1), failed(2), failed(3, first=0, last=100)]
    d = decide(history, FAST, 0.5)
    assert d.kind == DecisionKind.RESTART
    assert failures_in_a_row(history, FAST.reset_after_s) == 1
    assert d.delay_s == 2.0  # backoff starts over too: a prompt restart after training


def test_an_attempt_that_trained_is_restarted_promptly_and_the_failures_after_it_back_off() -> None:
    trained = failed(1, first=0, last=100)
    assert decide([trained], FAST, 0.5).delay_s == 2.0  # after_progress_s, not backoff_s
    assert decide([trained], FAST, 1.0).delay_s == 2.0  # jitter 0
    jittery = RestartPolicy(after_progress_s=4.0, jitter=0.25)
    assert decide([trained], jittery, 0.0).delay_s == 3.0
    assert decide([trained], jittery, 1.0).delay_s == 5.0
    # the failures in a row after it back off as before: n counts the attempt that trained
    history = [trained, failed(2, first=100, last=100)]
    assert decide(history, FAST, 0.5).delay_s == 20.0
    history.append(failed(3, first=100, last=100))
    assert decide(history, FAST, 0.5).kind == DecisionKind.GIVE_UP_BUDGET  # max_restarts=2
    # an attempt that ran reset_after_s counts as having trained even with no step seen
    assert decide([failed(1, duration=700.0)], FAST, 0.5).delay_s == 2.0
    # a first attempt that failed before any step waits backoff_s
    assert decide([failed(1)], FAST, 0.5).delay_s == 10.0
    assert decide([trained], RestartPolicy(after_progress_s=0.0), 0.9).delay_s == 0.0
    # a backoff set shorter than after_progress_s (--backoff 0: no wait) holds for it too
    assert decide([trained], RestartPolicy(backoff_s=0.0, jitter=0.0), 0.5).delay_s == 0.0
    assert decide([trained], RestartPolicy(backoff_s=1.0, jitter=0.0), 0.5).delay_s == 1.0


def test_reaching_an_old_high_again_is_not_healthy() -> None:
    history = [
        failed(1, first=0, last=100),
        failed(2, first=0, last=100),
        failed(3, first=0, last=90),
    ]
    assert failures_in_a_row(history, FAST.reset_after_s) == 3
    assert decide(history, FAST, 0.5).kind == DecisionKind.GIVE_UP_BUDGET


def test_long_attempt_resets_the_count() -> None:
    history = [failed(1), failed(2), failed(3, duration=600.0)]
    assert failures_in_a_row(history, FAST.reset_after_s) == 1
    assert decide(history, FAST, 0.5).kind == DecisionKind.RESTART


def test_attempt_just_short_of_reset_does_not_reset() -> None:
    history = [failed(1), failed(2), failed(3, duration=599.9)]
    assert decide(history, FAST, 0.5).kind == DecisionKind.GIVE_UP_BUDGET


def test_count_after_healthy_attempt() -> None:
    history = [failed(1), failed(2, first=0, last=10), failed(3), failed(4)]
    assert failures_in_a_row(history, FAST.reset_after_s) == 3
    assert decide(history, FAST, 0.5).kind == DecisionKind.GIVE_UP_BUDGET


def test_success_in_history_stops_the_count() -> None:
    history = [failed(1), failed(2), succeeded(3), failed(4)]
    assert failures_in_a_row(history, FAST.reset_after_s) == 1


def test_healthy() -> None:
    a = failed(2, first=0, last=10)
    assert healthy(a, [], 600.0)
    assert healthy(a, [failed(1, last=9)], 600.0)
    assert not healthy(a, [failed(1, last=10)], 600.0)
    assert not healthy(failed(2), [], 600.0)
    running = AttemptRecord(3, 0.0)  # not ended: duration unknown
    assert not healthy(running, [], 0.0)


def test_restart_reason_and_delay() -> None:
    d = decide([failed(1)], FAST, 0.5)
    assert d.kind == DecisionKind.RESTART
    assert d.delay_s == 10.0
    assert "restart 1 of 2" in d.reason


def test_decide_does_not_mutate_history() -> None:
    history = [failed(1), failed(2)]
    snapshot = list(history)
    decide(history, FAST, 0.5)
    assert history == snapshot


# -- backoff -------------------------------------------------------------------------------------


def test_backoff_grows_and_caps() -> None:
    got = [backoff_delay(n, FAST, 0.5) for n in range(1, 7)]
    assert got == [10.0, 20.0, 40.0, 80.0, 100.0, 100.0]


def test_backoff_n_zero_is_the_base() -> None:
    assert backoff_delay(0, FAST, 0.5) == 10.0


@pytest.mark.parametrize("n", [1, 2, 3, 10])
def test_jitter_bounds(n: int) -> None:
    policy = RestartPolicy(backoff_s=10.0, backoff_factor=2.0, backoff_max_s=100.0, jitter=0.25)
    base = min(10.0 * 2.0 ** (n - 1), 100.0)
    low = backoff_delay(n, policy, 0.0)
    high = backoff_delay(n, policy, 0.999999)
    assert low == pytest.approx(base * 0.75)
    assert high == pytest.approx(base * 1.25, rel=1e-5)
    assert high <= base * 1.25
    for u in (0.1, 0.5, 0.9):
        assert low <= backoff_delay(n, policy, u) <= high


def test_zero_backoff() -> None:
    policy = RestartPolicy(backoff_s=0.0, backoff_max_s=0.0, jitter=0.5)
    assert backoff_delay(5, policy, 0.0) == 0.0
    assert backoff_delay(5, policy, 0.99) == 0.0


def test_delay_never_negative() -> None:
    # Only the config refuses jitter >= 1; the policy itself must still never go negative.
    policy = RestartPolicy(jitter=1.5)
    assert backoff_delay(1, policy, 0.0) == 0.0


def test_backoff_large_n_is_capped_not_overflowing() -> None:
    assert backoff_delay(1100, RestartPolicy(jitter=0.0), 0.5) == 600.0


def test_a_scheduler_ending_that_a_restart_cannot_help_gives_up_instead_of_looping() -> None:
    # the kubelet evicting the pod for its own disk use: `preemption`, never charged, so only
    # the verdict can stop it (a review found it restarting at once, forever)
    import dataclasses

    from babysit.records import Category

    evicted = [
        dataclasses.replace(failed(n, transient=False), category=Category.PREEMPTION)
        for n in range(1, 4)
    ]
    d = decide(evicted, FAST, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    for transient in (True, None):  # a real preemption: again at once, charged to nothing
        pre = [dataclasses.replace(failed(1, transient=transient), category=Category.PREEMPTION)]
        d = decide(pre, FAST, 0.5)
        assert d.kind == DecisionKind.RESTART and d.delay_s == 0.0 and d.counts is False
