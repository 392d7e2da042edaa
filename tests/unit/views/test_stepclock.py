"""views.stepclock: when each step was printed, from the store's metrics samples."""

from __future__ import annotations

from babysit.views.stepclock import own_samples, run_step_s, step_clock, step_points


def test_step_clock_interpolates_and_never_trusts_a_late_last_sample() -> None:
    clock = step_clock([(100.0, 10), (110.0, 20), (150.0, 30)], None)
    assert clock is not None
    assert clock(15) == 105.0
    assert clock(30) == 120.0  # the last sample came 30 s late (a hang): extrapolated
    assert clock(5) == 95.0
    assert step_clock([], None) is None


def test_two_samples_take_the_run_s_cadence_when_it_is_known() -> None:
    # the second of two samples may be late: the run's own step time is better
    clock = step_clock([(100.0, 10), (200.0, 20)], 2.0)
    assert clock is not None and clock(15) == 110.0
    alone = step_clock([(100.0, 10), (200.0, 20)], None)  # else the two samples' own pace
    assert alone is not None and alone(15) == 150.0


def test_points_keep_each_step_at_its_earliest_sample() -> None:
    assert step_points([(12.0, 5), (10.0, 5), (11.0, 4), (14.0, 6)]) == [(10.0, 5), (14.0, 6)]


def test_an_attempt_s_own_samples_drop_the_previous_attempt_s_last_step() -> None:
    # babysit's first sample of attempt 2 may still carry the step attempt 1 ended on
    prev = {"number": 1, "last_step": 40}
    a = {"number": 2, "first_step": 30}
    samples = [(200.0, 40), (201.0, 40), (210.0, 31), (220.0, 41)]
    assert own_samples(samples, a, prev) == [(210.0, 31), (220.0, 41)]
    assert own_samples([(5.0, 1), (6.0, 2)], {"number": 1, "first_step": 2}, None) == [(6.0, 2)]


def test_the_run_s_step_time_from_samples_else_from_attempt_time() -> None:
    inner = {1: [(0.0, 0), (10.0, 10), (20.0, 20), (99.0, 21)]}  # the last sample is late
    assert run_step_s(inner, []) == (1.0, "samples")
    two = {1: [(0.0, 0), (30.0, 10)]}
    assert run_step_s(two, []) == (3.0, "samples")
    rows = [{"started": 0.0, "ended": 100.0, "first_step": 1, "last_step": 50}]
    assert run_step_s({}, rows) == (2.0, "attempt_time")
    assert run_step_s({}, [{"started": 0.0, "ended": None, "last_step": None}]) == (None, "none")
