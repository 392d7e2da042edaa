"""The recovery policies: restart rules (budgets, storms, checkpoint progress, preemption,
never-loop), rollbacks past anomalies, node bans, checkpoint choice, and LOSS_DIVERGED."""

from __future__ import annotations

import pytest

from babysit.detect.spike import LOSS_RULE, SpikeDetector, SpikeRule
from babysit.policy.checkpoint import choose_checkpoint
from babysit.policy.nodes import BanRule, ban_for, in_force, usable_hosts
from babysit.policy.restart import RestartPolicy, charged, decide, failures_in_a_row
from babysit.policy.rollback import (
    RollbackRule,
    format_windows,
    is_loss,
    merge,
    on_incident,
    wants_rollback,
)
from babysit.records import (
    AttemptRecord,
    Ban,
    Category,
    Checkpoint,
    DecisionKind,
    Incident,
    IncidentKind,
    Outcome,
)

H = 3600.0
DAY = 86400.0
# No rule but the one a test is about: no storm, no checkpoint-progress rule, no jitter.
QUIET = RestartPolicy(
    max_restarts=10,
    backoff_s=10.0,
    jitter=0.0,
    storm_attempts=0,
    no_checkpoint_progress=0,
)


def attempt(
    number: int,
    category: Category | None = Category.NCCL_ERROR,
    *,
    started: float | None = None,
    duration: float = 60.0,
    outcome: Outcome = Outcome.FAILED,
    steps: tuple[int | None, int | None] | None = None,
    transient: bool | None = True,
    fingerprint: str | None = None,
    resume_step: int | None = None,
    anomaly_step: int | None = None,
    suspect_host: str | None = None,
) -> AttemptRecord:
    """An attempt that made progress (steps 100n..100n+50) unless told otherwise."""
    t0 = started if started is not None else number * 100.0
    first, last = steps if steps is not None else (100 * number, 100 * number + 50)
    return AttemptRecord(
        number,
        t0,
        t0 + duration,
        outcome,
        1 if outcome == Outcome.FAILED else None,
        None,
        first,
        last,
        category,
        transient,
        fingerprint if fingerprint is not None else f"fp{number}",
        f"attempt {number} failed",
        resume_step,
        suspect_host,
        anomaly_step,
    )


# -- restart: the basics ---------------------------------------------------------------------


def test_success_succeeds() -> None:
    d = decide([attempt(1, None, outcome=Outcome.SUCCEEDED)], QUIET, 0.5)
    assert d.kind == DecisionKind.SUCCEED


def test_stopped_attempt_restarts_at_once_uncharged() -> None:
    d = decide([attempt(1, None, outcome=Outcome.STOPPED)], QUIET, 0.5)
    assert d.kind == DecisionKind.RESTART and d.delay_s == 0.0 and d.counts is False
    assert "not counted" in d.reason


def test_preemption_restarts_at_once_and_is_charged_to_nothing() -> None:
    history = [attempt(n, Category.PREEMPTION) for n in range(1, 30)]
    policy = RestartPolicy(max_restarts=1, storm_attempts=2)
    d = decide(history, policy, 0.5, None, checkpoints=True, budgets={"preemption": 0})
    assert d.kind == DecisionKind.RESTART and d.counts is False and d.delay_s == 0.0
    assert "preempted" in d.reason
    assert not any(charged(a) for a in history)


def test_preemptions_between_failures_do_not_count_as_failures() -> None:
    history = [
        attempt(1, Category.NETWORK, steps=(None, None)),
        attempt(2, Category.PREEMPTION, steps=(None, None)),
        attempt(3, Category.PREEMPTION, steps=(None, None)),
        attempt(4, Category.NETWORK, steps=(None, None)),
    ]
    assert failures_in_a_row(history, reset_after_s=1e9) == 2


def test_not_transient_gives_up_for_a_human() -> None:
    d = decide([attempt(1, Category.USER_CODE, transient=False)], QUIET, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN


@pytest.mark.parametrize("cat", [Category.USER_CODE, Category.DATA, Category.CUDA_OOM])
def test_never_loop_categories_give_up_the_second_time(cat: Category) -> None:
    # The verdict was too weak to say "not transient", and each attempt made progress.
    first = decide([attempt(1, cat, transient=None)], QUIET, 0.5)
    assert first.kind == DecisionKind.RESTART
    d = decide([attempt(1, cat, transient=None), attempt(2, cat, transient=None)], QUIET, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    assert f"attempts 1 and 2 both ended with {cat.value}" in d.reason


def test_never_loop_looks_past_uncharged_attempts_only() -> None:
    cat = Category.CUDA_OOM
    through_preemption = [
        attempt(1, cat, transient=None),
        attempt(2, Category.PREEMPTION),
        attempt(3, cat, transient=None),
    ]
    assert decide(through_preemption, QUIET, 0.5).kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    broken = [
        attempt(1, cat, transient=None),
        attempt(2, Category.NETWORK),
        attempt(3, cat, transient=None),
    ]
    assert decide(broken, QUIET, 0.5).kind == DecisionKind.RESTART


def test_same_error_without_progress_is_a_loop() -> None:
    history = [
        attempt(1, fingerprint="x", steps=(None, 40)),
        attempt(2, fingerprint="x", steps=(40, 40)),
    ]
    d = decide(history, QUIET, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN and "would loop" in d.reason
    progressed = [history[0], attempt(2, fingerprint="x", steps=(40, 90))]
    assert decide(progressed, QUIET, 0.5).kind == DecisionKind.RESTART


# -- restart: per-category budgets -----------------------------------------------------------


def test_category_budget_spent_within_window() -> None:
    policy = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=0)
    budgets = {"nccl_error": 2}
    two = [attempt(n, Category.NCCL_ERROR) for n in (1, 2)]
    assert decide(two, policy, 0.5, budgets=budgets).kind == DecisionKind.RESTART
    d = decide([*two, attempt(3, Category.NCCL_ERROR)], policy, 0.5, budgets=budgets)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET
    assert "3 attempts ended with nccl_error within 24h" in d.reason
    assert "budget.nccl_error = 2" in d.reason


def test_budget_counts_only_its_category_and_its_window() -> None:
    policy = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=0)
    budgets = {"nccl_error": 2, "network": 0}
    history = [
        attempt(1, Category.NCCL_ERROR, started=0.0),  # ended more than an hour before the last
        attempt(2, Category.NETWORK, started=2 * H),  # another category (its own budget: 0)
        attempt(3, Category.NCCL_ERROR, started=2 * H + 100),
        attempt(4, Category.PREEMPTION, started=2 * H + 200),  # never charged
        attempt(5, Category.NCCL_ERROR, started=2 * H + 300),
    ]
    d = decide(history, policy, 0.5, budgets=budgets, budget_window_s=H)
    assert d.kind == DecisionKind.RESTART
    last = attempt(6, Category.NCCL_ERROR, started=2 * H + 400)
    d = decide([*history, last], policy, 0.5, budgets=budgets, budget_window_s=H)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET and "within 1h" in d.reason


def test_a_category_without_a_budget_is_only_held_by_max_restarts() -> None:
    policy = RestartPolicy(max_restarts=3, jitter=0.0, storm_attempts=0, no_checkpoint_progress=0)
    budgets = {"network": 1}
    history = [attempt(n, Category.SEGFAULT, steps=(10, 10)) for n in range(1, 4)]
    assert decide(history, policy, 0.5, budgets=budgets).kind == DecisionKind.RESTART
    last = attempt(4, Category.SEGFAULT, steps=(10, 10))
    d = decide([*history, last], policy, 0.5, budgets=budgets)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET and "max_restarts=3" in d.reason


def test_budget_is_judged_before_the_storm() -> None:
    policy = RestartPolicy(jitter=0.0, storm_attempts=2, no_checkpoint_progress=0)
    d = decide([attempt(1), attempt(2)], policy, 0.5, budgets={"nccl_error": 1})
    assert d.kind == DecisionKind.GIVE_UP_BUDGET and "budget.nccl_error" in d.reason


# -- restart: storms and checkpoint progress -------------------------------------------------


def test_restart_storm_gives_up() -> None:
    policy = RestartPolicy(
        jitter=0.0, storm_attempts=3, storm_window_s=1800.0, no_checkpoint_progress=0
    )
    fast = [attempt(n, started=60.0 * n, duration=5.0, steps=(None, None)) for n in (1, 2)]
    assert decide(fast, policy, 0.5).kind == DecisionKind.RESTART
    third = attempt(3, started=180.0, duration=5.0, steps=(40, 40))  # resumed, trained nothing
    d = decide([*fast, third], policy, 0.5)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET
    assert "restart storm: 3 attempts failed without training a step within 30 min" in d.reason
    assert "restart.storm_attempts = 3" in d.reason


def test_no_storm_when_failures_are_spread_out_or_uncharged() -> None:
    policy = RestartPolicy(
        jitter=0.0, storm_attempts=3, storm_window_s=1800.0, no_checkpoint_progress=0
    )
    idle = (None, None)
    spread = [attempt(n, started=n * 1000.0, duration=5.0, steps=idle) for n in (1, 2, 3)]
    assert decide(spread, policy, 0.5).kind == DecisionKind.RESTART
    preempted = [
        attempt(1, started=60.0, steps=idle),
        attempt(2, Category.PREEMPTION, started=120.0, steps=idle),
        attempt(3, started=180.0, steps=idle),
    ]
    assert decide(preempted, policy, 0.5).kind == DecisionKind.RESTART
    off = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=0)
    many = [attempt(n, started=float(n), steps=idle) for n in range(1, 8)]
    assert decide(many, off, 0.5).kind == DecisionKind.RESTART


def test_attempts_that_trained_or_were_rolled_back_are_no_storm() -> None:
    # Regression (chaos suite, mixed schedule): a run of faults 2-3 minutes apart, each
    # attempt training from its checkpoint before the next fault, gave up at step 892 of 1000
    # as a "restart storm"; the NaN rollback's stop was counted too.
    policy = RestartPolicy(
        jitter=0.0, storm_attempts=3, storm_window_s=1800.0, no_checkpoint_progress=0
    )
    trained = [
        attempt(n, started=60.0 * n, duration=50.0, steps=(100 * n, 100 * n + 80))
        for n in range(1, 6)
    ]
    assert decide(trained, policy, 0.5).kind == DecisionKind.RESTART
    rolled = [
        attempt(1, started=60.0, steps=(None, None)),
        attempt(2, Category.NUMERICAL, started=120.0, steps=(300, 300), anomaly_step=300),
        attempt(3, started=180.0, steps=(None, None)),
    ]
    assert decide(rolled, policy, 0.5).kind == DecisionKind.RESTART


def test_same_error_on_the_same_node_waits_for_the_ban() -> None:
    # Regression (chaos suite, bad node with a spare host): attempt 2 gave up as "the same
    # error without progress" before nodes.ban_after=3 could leave the node out.
    ecc = Category.GPU_HARDWARE
    bad = [
        attempt(n, ecc, steps=(None, None), fingerprint="ecc", suspect_host="node-b")
        for n in (1, 2)
    ]
    d = decide(bad, QUIET, 0.5, node_ban_pending=True)
    assert d.kind == DecisionKind.RESTART
    # Nowhere else to run (one node, or bans off): it is a loop.
    assert decide(bad, QUIET, 0.5).kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    # The same error on another node after the ban: not the node's fault, a loop.
    moved = [bad[0], attempt(2, ecc, steps=(None, None), fingerprint="ecc", suspect_host="node-c")]
    moved_d = decide(moved, QUIET, 0.5, node_ban_pending=True)
    assert moved_d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    # Nor does "no checkpoint progress" stop it while the attempts all failed on that node.
    policy = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=3)
    three = [
        attempt(n, ecc, steps=(None, None), fingerprint=f"ecc{n}", suspect_host="node-b")
        for n in (1, 2, 3)
    ]
    banned = decide(three, policy, 0.5, None, checkpoints=True, node_ban_pending=True)
    assert banned.kind == DecisionKind.RESTART
    stuck = decide(three, policy, 0.5, None, checkpoints=True)
    assert stuck.kind == DecisionKind.GIVE_UP_BUDGET and "no checkpoint progress" in stuck.reason


def test_a_ban_starts_the_backoff_over() -> None:
    # Three failures in a row on node-b, which is banned now: the next attempt runs without
    # it, so it waits the first backoff (10 s), not the third (40 s; 47 s in the chaos suite).
    bad = [
        attempt(n, Category.GPU_HARDWARE, steps=(None, None), fingerprint="ecc",
                suspect_host="node-b")
        for n in (1, 2, 3)
    ]  # fmt: skip
    d = decide(bad, QUIET, 0.5, node_ban_pending=True, node_banned=True)
    assert d.kind == DecisionKind.RESTART and d.delay_s == 10.0
    assert "restarting in 10.0s without the banned node (restart 3 of 10" in d.reason
    assert decide(bad, QUIET, 0.5, node_ban_pending=True).delay_s == 40.0


def test_no_checkpoint_progress_over_n_attempts_gives_up() -> None:
    policy = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=3)
    stuck = [attempt(n, resume_step=1200, started=n * 5000.0) for n in (1, 2, 3)]
    d = decide(stuck, policy, 0.5, newest_checkpoint_step=1200, checkpoints=True)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET
    assert "no checkpoint progress: the last 3 attempts all started from checkpoint step 1200" in (
        d.reason
    )
    assert "restart.no_checkpoint_progress = 3" in d.reason
    # A newer checkpoint was saved meanwhile: the next attempt starts further on.
    newer = decide(stuck, policy, 0.5, newest_checkpoint_step=1300, checkpoints=True)
    assert newer.kind == DecisionKind.RESTART
    # Without a checkpoint glob babysit cannot judge checkpoint progress.
    assert decide(stuck, policy, 0.5, None, checkpoints=False).kind == DecisionKind.RESTART
    # Fewer attempts than the rule needs.
    assert decide(stuck[1:], policy, 0.5, 1200, checkpoints=True).kind == DecisionKind.RESTART


def test_no_checkpoint_progress_from_scratch_and_rollbacks_exempt() -> None:
    policy = RestartPolicy(jitter=0.0, storm_attempts=0, no_checkpoint_progress=2)
    scratch = [attempt(n, resume_step=None, started=n * 5000.0) for n in (1, 2)]
    d = decide(scratch, policy, 0.5, newest_checkpoint_step=None, checkpoints=True)
    assert d.kind == DecisionKind.GIVE_UP_BUDGET and "scratch (no checkpoint yet)" in d.reason
    rolled = [attempt(1, resume_step=500, anomaly_step=900), attempt(2, resume_step=500)]
    assert decide(rolled, policy, 0.5, 500, checkpoints=True).kind == DecisionKind.RESTART


def test_restart_backoff_grows_with_failures_in_a_row() -> None:
    history = [attempt(n, steps=(10, 10), fingerprint=f"f{n}") for n in (1, 2, 3)]
    d = decide(history, QUIET, 0.5)
    assert d.kind == DecisionKind.RESTART and d.delay_s == pytest.approx(40.0)
    assert d.counts is True


# -- rollback --------------------------------------------------------------------------------


def nan(step: int | None, metric: str = "loss") -> Incident:
    return Incident(IncidentKind.NONFINITE, f"{metric} is nan", 0.0, step, metric, float("nan"))


def diverged(step: int) -> Incident:
    return Incident(IncidentKind.LOSS_DIVERGED, f"loss did not settle at {step}", 0.0, step, "loss")


def test_nan_loss_rolls_back_and_skips_its_data() -> None:
    d = on_incident(nan(1000), RollbackRule())
    assert d.kind == DecisionKind.ROLLBACK
    assert d.before_step == 999 and d.skip_steps == ((950, 1150),) and d.lr_scale is None
    assert "skipping the data of steps 950-1150" in d.reason
    margin = on_incident(nan(1000), RollbackRule(margin_steps=100, lr_scale=0.5))
    assert margin.before_step == 899 and margin.lr_scale == 0.5
    assert "learning rate x0.5" in margin.reason


def test_rollback_near_the_start_stays_at_step_zero() -> None:
    d = on_incident(nan(10), RollbackRule())
    assert d.before_step == 9 and d.skip_steps == ((0, 160),)
    assert on_incident(nan(0), RollbackRule()).before_step == 0


@pytest.mark.parametrize(
    ("inc", "rule"),
    [
        (nan(100, "grad_norm"), RollbackRule()),  # fp16 runs see inf grad norms by design
        (nan(100, "loss_scale"), RollbackRule()),
        (nan(100), RollbackRule(on_nan=False)),
        (diverged(100), RollbackRule(on_divergence=False)),
        (Incident(IncidentKind.LOSS_SPIKE, "spike", 0.0, 100, "loss"), RollbackRule()),
    ],
)
def test_what_does_not_roll_back(inc: Incident, rule: RollbackRule) -> None:
    assert not wants_rollback(inc, rule)
    assert on_incident(inc, rule).kind == DecisionKind.KEEP_WATCHING


def test_is_loss() -> None:
    assert is_loss("train/loss") and is_loss("val_LOSS")
    assert not is_loss("loss_scale") and not is_loss("grad_norm") and not is_loss(None)


def test_unsettled_spike_rolls_back() -> None:
    d = on_incident(diverged(400), RollbackRule())
    assert d.kind == DecisionKind.ROLLBACK and d.before_step == 399


def test_no_step_no_rollback() -> None:
    d = on_incident(nan(None), RollbackRule())
    assert d.kind == DecisionKind.KEEP_WATCHING and "no step counter" in d.reason


def test_second_anomaly_in_a_skipped_window_widens_it_third_pages() -> None:
    rule = RollbackRule(lr_scale=0.5)
    first = on_incident(nan(1000), rule)
    assert first.skip_steps == ((950, 1150),)
    second = on_incident(nan(1100), rule, earlier_anomalies=(1000,), windows=first.skip_steps)
    assert second.kind == DecisionKind.ROLLBACK
    assert second.skip_steps == ((950, 1400),)  # (1000, 1400) joined with the first window
    assert second.lr_scale == pytest.approx(0.25)
    assert "anomaly 2 here: the skip window is 2x wider" in second.reason
    third = on_incident(nan(1200), rule, (1000, 1100), second.skip_steps)
    assert third.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN
    assert "anomaly number 3 at the same place (earlier at steps 1000, 1100)" in third.reason


def test_anomaly_elsewhere_starts_over_and_windows_accumulate() -> None:
    d = on_incident(nan(5000), RollbackRule(), earlier_anomalies=(1000,), windows=((950, 1150),))
    assert d.kind == DecisionKind.ROLLBACK
    assert d.skip_steps == ((950, 1150), (4950, 5150))
    assert "wider" not in d.reason


def test_max_at_same_place_two_pages_on_the_second() -> None:
    rule = RollbackRule(max_at_same_place=2)
    d = on_incident(nan(1010), rule, (1000,), ((950, 1150),))
    assert d.kind == DecisionKind.GIVE_UP_NEEDS_HUMAN


def test_merge_windows() -> None:
    assert merge([(5, 10), (1, 3), (4, 4)]) == ((1, 10),)  # touching windows join
    assert merge([(1, 3), (5, 6)]) == ((1, 3), (5, 6))
    assert merge([(1, 100), (20, 30)]) == ((1, 100),)
    assert merge([]) == ()


def test_windows_format() -> None:
    assert format_windows(((150, 350), (900, 1100))) == "150-350,900-1100"
    assert format_windows(()) == ""


# -- node bans -------------------------------------------------------------------------------

RULE = BanRule(ban_after=3, window_s=DAY, ban_s=DAY, probation_s=DAY)


def test_ban_after_three_failures_in_the_window() -> None:
    now = 10 * DAY
    assert ban_for("gpu-17", [now - 100, now], None, now, RULE) is None
    ban = ban_for("gpu-17", [now - 200, now - 100, now], None, now, RULE, run="gpt")
    assert ban is not None
    assert ban.host == "gpu-17" and ban.by == "policy" and ban.run == "gpt"
    assert ban.since == now and ban.expires == now + DAY and ban.probation_s == DAY
    assert "3 failures blamed on it within 24h" in ban.reason


def test_old_failures_do_not_count() -> None:
    now = 10 * DAY
    assert ban_for("h", [now - 2 * DAY, now - 1.5 * DAY, now], None, now, RULE) is None


def test_no_ban_while_banned_or_when_banning_is_off() -> None:
    now = 10 * DAY
    current = Ban("h", "x", now - 10, now + 10, DAY, "policy")
    assert in_force(current, now)
    assert ban_for("h", [now - 2, now - 1, now], current, now, RULE) is None
    off = BanRule(ban_after=0)
    assert ban_for("h", [now - 2, now - 1, now], None, now, off) is None


def test_ban_until_unbanned_by_hand() -> None:
    now = 10 * DAY
    ban = ban_for("h", [now - 2, now - 1, now], None, now, BanRule(ban_s=0))
    assert ban is not None and ban.expires is None and in_force(ban, now + 1e9)


def test_probation_one_failure_rebans_for_twice_as_long() -> None:
    first = Ban("h", "3 failures", 0.0, 2 * H, DAY, "policy")  # a 2h ban
    failures_before = [-100.0, -50.0, 0.0]
    now = 3 * H  # expired an hour ago: on probation
    assert not in_force(first, now)
    # The failures that earned the first ban do not count again...
    assert ban_for("h", failures_before, first, now, RULE) is None
    # ...but one new failure while on probation bans it again, twice as long (at least twice
    # ban_s: a short ban lifted early must not come back shorter than a normal one).
    again = ban_for("h", [*failures_before, now], first, now, RULE)
    assert again is not None
    assert again.expires == now + 2 * max(2 * H, RULE.ban_s)
    assert "on probation" in again.reason and "3 failures" in again.reason
    # And once more: twice that again.
    assert again.expires is not None
    later = again.expires + H
    third = ban_for("h", [later], again, later, RULE)
    assert third is not None and third.expires == later + 4 * max(2 * H, RULE.ban_s)


def test_after_probation_a_single_failure_is_forgiven() -> None:
    first = Ban("h", "3 failures", 0.0, H, H, "policy")
    now = 3 * H  # ban ended at 1h, probation ended at 2h
    assert ban_for("h", [now], first, now, RULE) is None


def test_probation_after_a_lifted_ban_counts_from_the_lift() -> None:
    # store.last_bans() hands a lifted ban with `expires` = when it was lifted.
    lifted = Ban("h", "operator: flaky IB", 0.0, H, DAY, "operator")
    now = 2 * H
    again = ban_for("h", [now], lifted, now, RULE)
    assert again is not None and again.expires == now + 2 * max(H, RULE.ban_s)


def test_probation_reban_with_unlimited_bans_is_unlimited() -> None:
    rule = BanRule(ban_s=0)
    lifted = Ban("h", "by hand", 0.0, H, DAY, "operator")
    again = ban_for("h", [2 * H], lifted, 2 * H, rule)
    assert again is not None and again.expires is None


def test_usable_hosts() -> None:
    hosts = ["a", "b", "c"]
    assert usable_hosts(hosts, {"b"}, needed=3) == (["a", "c"], 1)
    assert usable_hosts(hosts, {"b"}, needed=2) == (["a", "c"], 0)
    assert usable_hosts(hosts, {"b"}, needed=0) == (["a", "c"], 1)  # 0: every host is needed
    assert usable_hosts(hosts, set(), needed=0) == (hosts, 0)
    assert usable_hosts(hosts, {"x"}, needed=0) == (hosts, 0)  # a ban elsewhere
    assert usable_hosts(hosts, {"a", "b", "c"}, needed=1) == ([], 1)


# -- choosing a checkpoint -------------------------------------------------------------------


def ckpt(step: int | None, complete: bool = True) -> Checkpoint:
    return Checkpoint(
        f"out/ckpt_{step}.pt", step, 0.0, 10, complete, None if complete else "truncated"
    )


def test_choose_newest_complete() -> None:
    found = [ckpt(300, complete=False), ckpt(200), ckpt(100)]
    chosen, passed = choose_checkpoint(found)
    assert chosen == ckpt(200) and passed == [ckpt(300, complete=False)]


def test_choose_before_step_for_a_rollback() -> None:
    found = [ckpt(None), ckpt(300), ckpt(200, complete=False), ckpt(100), ckpt(50)]
    assert choose_checkpoint(found)[0] == ckpt(None)  # newest first, as scanned
    chosen, passed = choose_checkpoint(found, before_step=250)
    # Too new (300) is not "passed over"; a checkpoint without a step cannot be placed.
    assert chosen == ckpt(100) and passed == [ckpt(200, complete=False)]
    assert choose_checkpoint(found, before_step=100)[0] == ckpt(100)  # at or before
    assert choose_checkpoint(found, before_step=49) == (None, [])
    assert choose_checkpoint([], before_step=10) == (None, [])


# -- LOSS_DIVERGED ---------------------------------------------------------------------------


def feed_flat(d: SpikeDetector, steps: range) -> list[Incident]:
    out = []
    for s in steps:
        inc = d.feed(s, 2.0 + 0.01 * ((s * 7) % 5 - 2), ts=float(s))
        if inc is not None:
            out.append(inc)
    return out


def test_spike_that_does_not_settle_diverges_once() -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    assert feed_flat(d, range(40)) == []
    incidents = [i for s in range(40, 80) if (i := d.feed(s, 9.0, ts=float(s))) is not None]
    kinds = [i.kind for i in incidents]
    assert kinds[:2] == [IncidentKind.LOSS_SPIKE, IncidentKind.LOSS_DIVERGED]
    assert kinds.count(IncidentKind.LOSS_DIVERGED) == 1
    div = incidents[1]
    assert div.step == 40  # where the trouble began: a rollback goes back past it
    assert div.window[-1] == (40 + LOSS_RULE.diverge_after - 1, 9.0)
    assert "did not settle after its spike at step 40" in div.message
    assert div.category == Category.LOSS_SPIKE


def test_spike_that_settles_does_not_diverge() -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    feed_flat(d, range(40))
    spike = [d.feed(s, 9.0, ts=float(s)) for s in range(40, 43)]
    after = feed_flat(d, range(43, 80))
    assert [i.kind for i in spike if i is not None] == [IncidentKind.LOSS_SPIKE]
    assert after == []


def test_divergence_off_by_default_rule() -> None:
    d = SpikeDetector("loss", SpikeRule(), IncidentKind.LOSS_SPIKE)
    feed_flat(d, range(40))
    kinds = [i.kind for s in range(40, 80) if (i := d.feed(s, 9.0, ts=float(s))) is not None]
    assert kinds == [IncidentKind.LOSS_SPIKE]


def test_jump_then_plateau_at_twice_the_level_diverges() -> None:
    # Regression (chaos suite, --spike-data-at): the loss jumped from 2.5 to 8.7 and sat at 5.0
    # (under half the peak's excess) for 20 steps; it was never judged diverged, no rollback,
    # and the final loss stayed well above a fault-free run's.
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    assert feed_flat(d, range(40)) == []
    wobble = [5.02, 4.98, 5.05, 4.97]
    values = [8.7] + [wobble[i % 4] for i in range(30)]
    incidents = [i for s, v in enumerate(values, 40) if (i := d.feed(s, v, float(s)))]
    kinds = [i.kind for i in incidents]
    assert kinds == [IncidentKind.LOSS_SPIKE, IncidentKind.LOSS_DIVERGED]
    assert incidents[1].step == 40


@pytest.mark.parametrize("half_life", [3.0, 8.0])
def test_spike_decaying_back_is_settling(half_life: float) -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    feed_flat(d, range(40))
    values = [2.0 + 7.0 * 0.5 ** (k / half_life) for k in range(40)]
    kinds = [i.kind for s, v in enumerate(values, 40) if (i := d.feed(s, v, float(s)))]
    assert kinds == [IncidentKind.LOSS_SPIKE]


def test_plateau_only_a_little_above_the_level_is_not_divergence() -> None:
    # A new level 15% above the old one after a spike (a data mix change): not a rollback.
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    feed_flat(d, range(40))
    values = [9.0] + [2.3 + 0.01 * (k % 3) for k in range(30)]
    kinds = [i.kind for s, v in enumerate(values, 40) if (i := d.feed(s, v, float(s)))]
    assert kinds == [IncidentKind.LOSS_SPIKE]
