"""The vital-sign detectors, each on small hand-made series (pure: no clock, no I/O)."""

from __future__ import annotations

import math
import random

from babysit.detect.hang import HangDetector, HangRule
from babysit.detect.numerics import NumericsDetector
from babysit.detect.rl import RLDetector, RLRule
from babysit.detect.spike import LOSS_RULE, SpikeDetector
from babysit.detect.throughput import ThroughputDetector, ThroughputRule
from babysit.detect.window import RobustWindow, median, quantile
from babysit.records import Activity, IncidentKind, Metric


def metric(step: int | None, ts: float = 0.0, **values: float) -> Metric:
    return Metric(step, values, ts, "test")


def noisy(n: int, level: float = 2.0, sd: float = 0.02, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [level + rng.gauss(0, sd) for _ in range(n)]


def test_window_statistics() -> None:
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([1.0, 2.0]) == 1.5
    assert math.isnan(median([]))
    assert quantile([1.0, 2.0, 3.0, 4.0], 0.99) == 4.0
    w = RobustWindow(size=4, refresh=1)
    for v in (1.0, 2.0, 3.0, 4.0, 100.0):
        w.add(v)
    med, scale = w.stats()
    assert len(w) == 4 and med == 3.5 and scale > 0


def test_loss_spike_once_per_episode_and_not_before_history() -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    assert d.feed(0, 50.0, 0.0) is None  # no history yet
    d.reset()
    out = [d.feed(s, v, float(s)) for s, v in enumerate(noisy(100))]
    assert not any(out)
    first = d.feed(100, 6.0, 100.0)
    assert first is not None and first.step == 100 and first.baseline is not None
    assert first.window[-1] == (100, 6.0) and len(first.window) > 1
    assert d.feed(101, 5.0, 101.0) is None  # the same episode
    for s in range(102, 110):
        d.feed(s, 2.0, float(s))
    assert d.feed(110, 6.0, 110.0) is not None  # a new episode


def test_spike_ignores_duplicate_steps_nan_and_restarts_baseline_on_rollback() -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    for s, v in enumerate(noisy(60)):
        d.feed(s, v, 0.0)
    assert d.feed(59, 9.0, 0.0) is None  # step 59 again (another rank)
    assert d.feed(60, math.nan, 0.0) is None
    assert d.feed(10, 6.0, 0.0) is None  # the counter went back: the baseline starts over
    assert len(d.level) == 1


def test_flat_curve_wiggles_are_not_spikes() -> None:
    d = SpikeDetector("loss", LOSS_RULE, IncidentKind.LOSS_SPIKE)
    for s in range(100):
        d.feed(s, 2.0, 0.0)  # MAD 0: the relative floor keeps tiny wiggles quiet
    assert d.feed(100, 2.1, 0.0) is None


def test_nonfinite_once_per_metric_and_skips_z_scores() -> None:
    d = NumericsDetector()
    out = d.feed(metric(1, loss=math.nan, grad_norm=math.inf, loss_z=math.nan))
    assert sorted(i.metric or "" for i in out) == ["grad_norm", "loss"]
    assert d.feed(metric(2, loss=math.nan)) == []
    d.feed(metric(3, loss=2.0))
    assert [i.metric for i in d.feed(metric(4, loss=math.nan))] == ["loss"]


def test_megatron_nan_iterations_and_loss_scale_collapse() -> None:
    d = NumericsDetector()
    assert d.feed(metric(1, nan_iterations=0.0)) == []
    assert [i.kind for i in d.feed(metric(2, nan_iterations=1.0))] == [IncidentKind.NONFINITE]
    for s, scale in enumerate([1.0] * 5):  # bf16: a constant 1.0 is not a collapse
        assert d.feed(metric(10 + s, loss_scale=scale)) == []
    d = NumericsDetector()
    scales = [65536.0, 32768.0, 4096.0, 512.0, 64.0, 32.0]
    kinds = [i.kind for s in scales for i in d.feed(metric(None, loss_scale=s))]
    assert kinds == [IncidentKind.LOSS_SCALE_COLLAPSE]


def _megatron_line(step: int, loss: str | None, skipped: int = 0) -> Metric:
    """A Megatron-LM iteration line as training_log builds it (a loss field only when set)."""
    from babysit.parse.metrics import parse_metrics
    from babysit.records import OutputLine

    text = (
        f" iteration {step:8d}/    8000 | consumed samples:       216512 | elapsed time per "
        "iteration (ms): 7613.1 | learning rate: 6.680E-06 | global batch size:    64 |"
        + (f" lm loss: {loss} |" if loss is not None else "")
        + f" loss scale: 1.0 | grad norm: 0.752 | number of skipped iterations: {skipped:3d} |"
    )
    m = parse_metrics(OutputLine("stdout", step, text, 0.0))
    assert m is not None and m.source == "megatron"
    return m


def test_a_megatron_loss_that_vanishes_from_the_iteration_line_is_a_nan() -> None:
    # Megatron's training_log prints a loss only when its average is above 0: a NaN loss leaves
    # the line without it (epfLLM/Megatron-LLM: `... global batch size: 64 | loss scale: ...`).
    d = NumericsDetector()
    assert d.feed(_megatron_line(3383, "7.334521E-01")) == []
    found = d.feed(_megatron_line(3385, None))
    assert [i.kind for i in found] == [IncidentKind.NONFINITE]
    assert found[0].metric == "loss" and found[0].step == 3385
    assert "missing from Megatron's iteration line at step 3385" in found[0].message
    assert d.feed(_megatron_line(3386, None)) == []  # once, until the loss is back
    assert d.feed(_megatron_line(3387, "7.1E-01")) == []
    assert len(d.feed(_megatron_line(3388, None))) == 1
    # an interval whose iterations were all skipped (fp16 overflow) leaves the loss out too
    fp16 = NumericsDetector()
    assert fp16.feed(_megatron_line(1, "2.5E+00")) == []
    assert fp16.feed(_megatron_line(2, None, skipped=1)) == []
    # a run whose lines never carried the loss (a format without it) raises nothing
    quiet = NumericsDetector()
    assert quiet.feed(_megatron_line(1, None)) == [] and quiet.feed(_megatron_line(2, None)) == []


def test_throughput_drop_needs_a_sustained_slowdown() -> None:
    d = ThroughputDetector(ThroughputRule())
    step = 0
    for v in noisy(40, level=7000, sd=50):
        assert d.feed(metric(step, tokens_per_s=v)) is None
        step += 1
    assert d.feed(metric(step, tokens_per_s=1000)) is None  # one slow step: nothing
    step += 1
    hits = [d.feed(metric(step + i, tokens_per_s=4000)) for i in range(12)]
    found = [h for h in hits if h is not None]
    assert len(found) == 1 and found[0].baseline is not None and found[0].baseline > 6500


def test_throughput_step_time_is_lower_is_better() -> None:
    d = ThroughputDetector(ThroughputRule(sustain=3))
    for s, v in enumerate(noisy(40, level=20, sd=0.2)):
        d.feed(metric(s, step_time_ms=v))
    hits = [d.feed(metric(40 + i, step_time_ms=40.0)) for i in range(3)]
    assert hits[-1] is not None and hits[-1].kind == IncidentKind.THROUGHPUT_DROP


def test_rl_entropy_collapse_kl_blowup_and_no_signal() -> None:
    d = RLDetector(RLRule())
    kinds: list[IncidentKind] = []
    for s in range(20):
        kinds += [i.kind for i in d.feed(metric(s, entropy=1.0, kl=0.001, reward_std=0.5))]
    for s in range(20, 30):
        kinds += [i.kind for i in d.feed(metric(s, entropy=0.05, kl=0.5, reward_std=0.0))]
    assert kinds.count(IncidentKind.ENTROPY_COLLAPSE) == 1
    assert kinds.count(IncidentKind.KL_BLOWUP) == 1
    assert kinds.count(IncidentKind.NO_LEARNING_SIGNAL) == 1


def test_hang_learned_from_the_cadence_and_flagged_once() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for s in range(20):
        h.progress(s, 100.0 + s)  # a step a second
    timeout = h.learned_timeout_s()
    assert timeout is not None and 4.5 < timeout < 5.5  # 2 x 1 s + 3 s
    assert h.check(119.0 + timeout - 0.1) is None
    inc = h.check(119.0 + timeout + 0.1)
    assert inc is not None and inc.step == 19 and inc.baseline == 1.0
    assert h.check(200.0) is None  # once per stall
    h.progress(20, 201.0)
    assert h.check(201.5) is None


def test_hang_allowances_startup_pause_and_checkpoint_writes() -> None:
    h = HangDetector(HangRule(startup_s=60.0, pause_s=100.0))
    h.new_attempt(0.0)
    assert h.check(59.0) is None and h.check(61.0) is not None  # no step within start-up
    h.new_attempt(100.0)
    for s in range(10):
        h.progress(s, 100.0 + s)
    h.activity(Activity("checkpoint", 110.0))
    assert h.check(150.0) is None  # announced: the pause allowance applies
    assert h.check(211.0) is not None
    h.progress(10, 300.0)
    h.activity(Activity("checkpoint_write", 320.0))  # a save growing its file: alive
    assert h.check(321.0) is None


def test_a_finished_save_ends_the_pause_allowance() -> None:
    h = HangDetector(HangRule(pause_s=1800.0))
    h.new_attempt(0.0)
    for s in range(20):
        h.progress(s, 1.0 + s)
    h.activity(Activity("checkpoint", 20.5))
    assert h.saving_since() == 20.5
    h.activity(Activity("checkpoint_saved", 23.0))  # the checkpoint of step 20 is complete
    assert h.saving_since() is None
    timeout = h.learned_timeout_s()
    assert timeout is not None and timeout < 10.0
    assert h.check(23.0 + timeout - 0.1) is None  # counted from the finished save
    assert h.check(23.0 + timeout + 0.1) is not None
    # Without an announced save it means nothing.
    h.progress(20, 100.0)
    h.activity(Activity("checkpoint_saved", 100.5))
    assert h.check(100.0 + timeout + 0.1) is not None


def test_after_a_long_save_the_timeout_is_at_least_the_saves_length() -> None:
    # A save that took 40 s (several files, pauses between them): until the next step, the
    # timeout after it is at least as long.
    h = HangDetector(HangRule(pause_s=1800.0))
    h.new_attempt(0.0)
    for s in range(20):
        h.progress(s, 1.0 + s)
    timeout = h.learned_timeout_s()
    assert timeout is not None and timeout < 10.0
    h.activity(Activity("checkpoint", 20.5))
    h.activity(Activity("checkpoint_saved", 60.5))
    assert h.check(60.5 + timeout + 1.0) is None
    assert h.check(60.5 + 40.1) is not None
    h.progress(20, 110.0)  # a step: the learned cadence again (the survived silence aside)
    assert h.save_s == 0.0


def test_hang_longest_survived_pause_is_not_flagged_again() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    ts = 0.0
    for s in range(30):
        ts += 0.05 if s != 15 else 20.0  # one long unannounced pause (an epoch boundary)
        h.progress(s, ts)
    timeout = h.learned_timeout_s()
    assert timeout is not None and timeout >= 24.0


# -- the cadence is the steps', not the reads' ---------------------------------------------------
# babysit reads the log every 0.2 s: a fast trainer's steps arrive by the dozen, all with the
# time of the read that saw them.


def read(h: HangDetector, steps: range, ts: float, source: str = "stdout") -> None:
    """One read of the log at `ts` that saw `steps`."""
    for s in steps:
        h.progress(s, ts, source)


def test_hang_cadence_is_learned_from_the_steps_each_read_saw() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    read(h, range(0, 30), 10.0)
    assert h.learned_timeout_s() is None  # one read: no interval known yet
    read(h, range(30, 60), 10.2)  # 30 steps in 0.2 s: 30 intervals of 6.7 ms, not one of 0.2 s
    typical, timeout = h.typical_interval_s(), h.learned_timeout_s()
    assert typical is not None and abs(typical - 0.2 / 30) < 1e-9
    assert timeout is not None and abs(timeout - (2 * 0.2 / 30 + 3.0)) < 1e-9
    assert h.check(10.2 + timeout - 0.01) is None
    inc = h.check(10.2 + timeout + 0.01)
    assert inc is not None and inc.step == 59 and inc.baseline == typical
    assert "steps usually come every 6.67ms" in inc.message  # the steps' cadence, not 0.2 s


def test_hang_a_read_of_a_few_steps_is_enough_when_they_are_five() -> None:
    """min_intervals counts step intervals, not reads: 5 steps seen after a first read do."""
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    read(h, range(0, 1), 5.0)
    read(h, range(1, 5), 5.2)
    assert h.learned_timeout_s() is None  # 4 intervals
    read(h, range(5, 6), 5.4)
    assert h.learned_timeout_s() is not None


def test_hang_timeout_never_under_the_floor_nor_the_reads_themselves() -> None:
    h = HangDetector(HangRule(floor_s=3.0))
    h.new_attempt(0.0)
    for r in range(10):
        read(h, range(1000 * r, 1000 * r + 1000), 0.2 * r)  # 5000 steps a second
    timeout = h.learned_timeout_s()
    assert timeout is not None and 3.0 <= timeout < 3.01
    # Without a floor, the reads still bound it: steps are never seen more often than that.
    bare = HangDetector(HangRule(floor_s=0.0))
    bare.new_attempt(0.0)
    for r in range(10):
        read(bare, range(1000 * r, 1000 * r + 1000), 0.2 * r)
    timeout = bare.learned_timeout_s()
    assert timeout is not None and 2 * 0.2 - 1e-9 <= timeout < 0.5
    assert bare.check(1.8 + timeout - 0.01) is None
    assert bare.check(1.8 + timeout + 0.01) is not None  # and it does fire after it


def test_hang_output_in_bursts_is_not_a_hang_between_bursts() -> None:
    """Block-buffered output: 100 steps of 0.1 s arrive together every 10 s."""
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for r in range(6):
        read(h, range(100 * r, 100 * r + 100), 10.0 * r)
    assert h.typical_interval_s() == 0.1
    # A burst late is no hang: the steps are only seen every 10 s (2 x 10 s, not 2 x 0.1 + 3 s).
    assert h.check(50.0 + 19.5) is None
    assert h.check(50.0 + 20.5) is not None  # two bursts missed


def test_hang_same_steps_from_two_sources_are_not_twice_as_many() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for r, ts in enumerate((1.0, 1.2, 1.4)):
        read(h, range(30 * r, 30 * r + 30), ts, "stdout")
        read(h, range(30 * r - 5, 30 * r + 25), ts, "client")  # the same steps, a bit behind
        h.progress(1000, ts, "stderr")  # another source's one line does not add up either
    typical = h.typical_interval_s()
    assert typical is not None and abs(typical - 0.2 / 30) < 1e-9


def test_hang_stamped_lines_teach_their_own_intervals() -> None:
    """babysit.client rows carry the time of the log() call: exact, even within one read."""
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for s in range(20):
        h.progress(s, 7.0, "client", stamp=5.0 + 0.01 * s)  # one read, 20 rows 10 ms apart
    typical, timeout = h.typical_interval_s(), h.learned_timeout_s()
    assert typical is not None and abs(typical - 0.01) < 1e-9
    assert timeout is not None and abs(timeout - 3.02) < 1e-9
    h.activity(Activity("eval", 7.1))
    h.progress(20, 30.0, "client", stamp=29.9)  # after an announced pause: not an interval
    assert h.typical_interval_s() == typical and h.learned_timeout_s() == timeout


def test_hang_reads_after_announced_pauses_and_counters_going_back_teach_nothing() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    read(h, range(0, 30), 1.0)
    read(h, range(30, 60), 1.2)
    h.activity(Activity("checkpoint", 1.2))  # the read ended on "saving checkpoint to ..."
    read(h, range(60, 61), 9.2)  # an 8 s save: announced, not the cadence
    read(h, range(0, 3), 9.4)  # the counter starts over (a restart): not new steps
    read(h, range(3, 33), 9.6)
    typical, timeout = h.typical_interval_s(), h.learned_timeout_s()
    assert typical is not None and abs(typical - 0.2 / 30) < 1e-9
    assert timeout is not None and timeout < 3.5 and h.longest < 1.0


def test_hang_metrics_without_a_step_count_one_by_one() -> None:
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for r in range(4):
        for _ in range(4):  # four HF dicts a read
            h.beat(1.0 + 0.2 * r, "stdout")
    typical = h.typical_interval_s()
    assert typical is not None and abs(typical - 0.05) < 1e-9


def test_hang_cadence_window_keeps_the_last_steps_and_survives_attempts() -> None:
    h = HangDetector(HangRule(window=50))
    h.new_attempt(0.0)
    for r in range(5):
        read(h, range(30 * r, 30 * r + 30), 1.0 + 3.0 * r)  # 0.1 s a step
    for r in range(5):
        read(h, range(150 + 30 * r, 180 + 30 * r), 20.0 + 0.3 * r)  # then 0.01 s a step
    typical = h.typical_interval_s()
    assert typical is not None and abs(typical - 0.01) < 1e-9  # 0.1 s is out of the window
    h.new_attempt(30.0)
    timeout = h.learned_timeout_s()
    assert timeout is not None  # a restart keeps what was learned
    assert h.check(30.0 + 1799.0) is None  # but before its first step: the start-up allowance
    read(h, range(0, 1), 40.0)
    assert h.check(40.0 + timeout + 0.01) is not None


def test_hang_a_backlog_read_does_not_hide_the_true_cadence() -> None:
    """Following a big log from its start: 8 MB of old lines a poll (0.5 s apart), then the
    run's real steps, 10 s each. A few of them are enough to be the timeout's cadence again."""
    h = HangDetector(HangRule())
    h.new_attempt(0.0)
    for r in range(5):
        read(h, range(50_000 * r, 50_000 * (r + 1)), 0.5 * r)  # 10 us a "step"
    for s in range(250_000, 250_004):
        read(h, range(s, s + 1), 2.0 + 10.0 * (s - 250_000))
    timeout = h.learned_timeout_s()
    assert timeout is not None and timeout >= 2 * 10.0 + 3.0


def test_client_stamps_count_when_stdout_told_the_same_step_first() -> None:
    # Steps come every 1.0 s by the client's own clock; the log reads that bring them are
    # uneven (0.6, 0.6, 1.8 s apart). stdout tells each step first, in the same read.
    h = HangDetector(HangRule())
    t = 0.0
    for n in range(1, 31):
        t += (0.6, 0.6, 1.8)[n % 3]
        h.progress(n, t, "stdout")
        h.progress(n, t, "client", stamp=100.0 + n)
    assert h.typical_interval_s() == 1.0
