"""The parse -> detect path on hostile input: never a crash, never a false alarm from the parse."""

from __future__ import annotations

import math
import random

from babysit.records import OutputLine
from babysit.supervise.pipeline import Pipeline


def lines(texts: list[str], ts0: float = 0.0, dt: float = 0.1) -> list[OutputLine]:
    return [OutputLine("stdout", i + 1, t, ts0 + i * dt) for i, t in enumerate(texts)]


def clean_run(steps: int = 300, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for s in range(steps):
        loss = 2.0 + 3.0 * math.exp(-s / 50) + rng.gauss(0, 0.02)
        out.append(f"iter {s}: loss {loss:.4f}, time {20 + rng.random():.2f}ms")
    return out


def test_hostile_lines_never_crash_and_never_alarm() -> None:
    rng = random.Random(1)
    garbage = [bytes(rng.randrange(256) for _ in range(200)).decode("utf-8", "replace")
               for _ in range(50)]
    texts = clean_run()
    hostile = [
        *garbage,
        "\x00\x01\x02 binary \xff",
        "x" * 65536,
        "{'lambda': 1.0, 'class': 2.0, 'loss': 2.1}",
        "step=-5 loss=2.0",
        "step=99999999999 loss=2.0",
        "[rank3]:[rank5]: step: 12 loss: nope grad_norm: ??",
        "{'loss': '2.345', 'grad_norm': 'x'}",
        "Epoch 0:  22%|██▏ | 4/18 [00:17<01:02,  4.47s/it, loss=, v_num=]",
        "iteration 5/ | lm loss: | grad norm: |",
        "step:  | loss:",
    ]
    mixed = []
    for i, t in enumerate(texts):
        mixed.append(t)
        if i % 3 == 0:
            mixed.append(hostile[i % len(hostile)])
    p = Pipeline()
    p.new_attempt(0.0)
    incidents = p.lines(lines(mixed))
    # The only alarm the hostile lines may raise is the step going absurd, never a spike/NaN.
    assert not [i for i in incidents if i.kind.value in ("loss_spike", "nonfinite")], incidents
    assert p.last_step is not None


def test_duplicate_steps_from_many_ranks_are_one_fact() -> None:
    texts = []
    for t in clean_run(200):
        texts += [f"[rank{r}]:{t}" for r in range(16)]
    p = Pipeline()
    p.new_attempt(0.0)
    assert p.lines(lines(texts, dt=0.001)) == []
    assert p.parser.lead_rank == 0


def test_time_going_backwards_and_restarted_steps() -> None:
    texts = clean_run(150) + clean_run(150, seed=2)  # the counter starts over (a restart)
    ls = lines(texts)
    ls = [OutputLine(x.stream, x.number, x.text, 1000.0 - x.ts, x.truncated) for x in ls]
    p = Pipeline()
    p.new_attempt(0.0)
    assert p.lines(ls) == []
    assert p.tick(ls[-1].ts + 1.0) == []  # a second after the last line: no hang


def test_real_spike_and_nan_still_seen_among_the_noise() -> None:
    texts = clean_run(200)
    texts[150] = "iter 150: loss 9.0000, time 20.00ms"
    texts[180] = "iter 180: loss nan, time 20.00ms"
    p = Pipeline()
    p.new_attempt(0.0)
    kinds = [(i.kind.value, i.step) for i in p.lines(lines(texts))]
    assert ("loss_spike", 150) in kinds and ("nonfinite", 180) in kinds


def test_errors_survived_are_forgotten() -> None:
    p = Pipeline()
    p.new_attempt(0.0)
    p.lines(lines(["RuntimeError: transient hiccup", "iter 5: loss 2.0, time 1ms"]))
    assert not p.errors
    p.lines(lines(["ValueError: the real one"]))
    assert [e.exc_type for e in p.errors] == ["ValueError"]


def test_lines_that_broke_parsers_are_skipped_not_raised() -> None:
    bar = "Epoch 0:  22%|██▏ | 4/18 [00:17<01:02,  4.47it/s, loss=10.072]"
    texts = [
        "[rank²]: hello",
        "iter " + "9" * 5000 + ": loss 1",
        "9" * 5000 + ": loss 1",
        bar * 900,
        '{"step": 99999999999999999999, "loss": NaN}',
    ]
    p = Pipeline()
    p.new_attempt(0.0)
    p.lines(lines(texts))  # never raises
    assert p.last_step is None or p.last_step < 1 << 62


def test_lead_rank_is_rank_zero_with_metrics() -> None:
    texts = ["[rank3]: Resuming training from step 0"]
    for s in range(60):
        loss = 9.0 if s == 50 else 2.0 + 0.01 * (s % 3)
        texts += [f"[rank{r}]:step: {s}  loss: {loss:.4f}  grad_norm: 0.8000" for r in (3, 0)]
    p = Pipeline()
    p.new_attempt(0.0)
    kinds = [(i.kind.value, i.step) for i in p.lines(lines(texts))]
    assert p.parser.lead_rank == 0 and p.last_step == 59
    assert ("loss_spike", 50) in kinds


def test_step_number_prefix_is_not_an_srun_label() -> None:
    texts = [f"{s}: loss={2.0 + 0.01 * (s % 3):.3f}" for s in range(100)]
    texts[80] = "80: loss=9.000"
    p = Pipeline()
    p.new_attempt(0.0)
    kinds = [i.kind.value for i in p.lines(lines(texts))]
    assert "loss_spike" in kinds


def test_metrics_without_a_step_keep_the_hang_clock_going() -> None:
    texts = [f"{{'loss': {2.0 + 0.01 * (i % 3)}, 'learning_rate': 1e-5, 'epoch': {i / 100}}}"
             for i in range(100)]
    p = Pipeline()
    p.new_attempt(0.0)
    ls = lines(texts, dt=1.0)
    p.lines(ls)
    assert p.tick(ls[-1].ts + 2.0) == []  # a dict a second: 2 s of quiet is no hang
    assert p.tick(ls[-1].ts + 60.0) != []  # a minute is


def test_two_sources_with_the_same_steps_do_not_reset_each_other() -> None:
    p = Pipeline()
    p.new_attempt(0.0)
    out = []
    for s in range(120):
        loss = 9.0 if s == 100 else 2.0 + 0.01 * (s % 3)
        out += p.lines([OutputLine("stdout", s, f"iter {s}: loss {loss:.4f}, time 1ms", s)])
        out += p.lines([OutputLine("client", s, f'{{"step": {s}, "loss": {loss}}}', s)])
    assert [(i.kind.value, i.step) for i in out].count(("loss_spike", 100)) == 1  # once


def test_every_value_incident_carries_its_evidence_window() -> None:
    texts = clean_run(60)
    texts[50] = "iter 50: loss nan, time 20.00ms"
    p = Pipeline()
    p.new_attempt(0.0)
    (nan,) = [i for i in p.lines(lines(texts)) if i.kind.value == "nonfinite"]
    assert len(nan.window) == 16 and nan.window[-1][0] == 50 and math.isnan(nan.window[-1][1])


def test_hang_cadence_from_the_steps_of_each_read() -> None:
    """A fast trainer: 30 steps a read (reads 0.2 s apart). The cadence is the steps', ~6.7 ms,
    not the reads' 0.2 s."""
    p = Pipeline()
    p.new_attempt(0.0)
    for r in range(3):
        ts = 10.0 + 0.2 * r
        p.lines([OutputLine("stdout", s + 1, f"iter {s}: loss 2.0, time 6.67ms", ts)
                 for s in range(30 * r, 30 * r + 30)])
    typical = p.hang.typical_interval_s()
    assert typical is not None and abs(typical - 0.2 / 30) < 1e-6, typical
    (inc,) = p.tick(10.4 + 3.1)
    assert "steps usually come every 6.67ms" in inc.message


def test_the_client_stamps_win_over_the_reads_even_after_stdout_told_the_step() -> None:
    """The client's rows carry the time of each log() call (10 ms apart here), and stdout tells
    each step just before its row: the stamps, not the 6.7 ms the reads suggest, are learned."""
    p = Pipeline()
    p.new_attempt(0.0)
    for r in range(3):
        ts = 10.0 + 0.2 * r
        out: list[OutputLine] = []
        for s in range(30 * r, 30 * r + 30):
            out.append(OutputLine("stdout", s + 1, f"iter {s}: loss 2.0, time 10.00ms", ts))
            row = f'{{"step": {s}, "ts": {9.0 + s / 100}, "loss": 2.0}}'
            out.append(OutputLine("client", s + 1, row, ts))
        p.lines(out)
    typical = p.hang.typical_interval_s()
    assert typical is not None and abs(typical - 0.01) < 1e-9, typical


def test_only_the_client_rows_are_trusted_for_their_own_time() -> None:
    p = Pipeline()
    p.new_attempt(0.0)
    # A metrics file of the user's own: its `ts` may mean anything (here: milliseconds).
    p.lines([OutputLine("metrics", s + 1, f'{{"step": {s}, "ts": {1000.0 * s}, "loss": 2.0}}', 5.0)
             for s in range(20)])
    assert p.hang.typical_interval_s() is None  # one read: nothing learned
    p.lines([OutputLine("client", s + 1, f'{{"step": {s}, "ts": {5.0 + 0.01 * s}, "loss": 2.0}}',
                        5.0) for s in range(20)])
    typical = p.hang.typical_interval_s()
    assert typical is not None and abs(typical - 0.01) < 1e-9
