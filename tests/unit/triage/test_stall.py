"""Progress that stopped, as the log's own timestamps show (triage.stall): pure, on lines."""

from __future__ import annotations

import io
from pathlib import Path

from babysit.records import Category
from babysit.triage import triage_files
from babysit.triage.scan import CHUNK_BYTES, TAIL_BYTES, scan
from babysit.triage.stall import Loop, Stall, ending_of, loop_of, looping, stalled


def _step(minute: int, n: int) -> str:
    return f"2024-05-12 07:{minute:02d}:00,000 INFO step {n} | loss: 2.31 | lr: 3e-4"


def _pulse(hour: int, minute: int) -> str:
    return f"[2024-05-12 {hour:02d}:{minute:02d}:00] PULSE: job 1528763 is running"


def test_dated_lines_long_after_the_last_step_are_a_stall() -> None:
    lines = [_step(0, 100), _step(1, 110), _pulse(8, 0), _pulse(9, 0)]
    s = stalled(lines)
    assert s is not None and s.exact and s.seconds == 2 * 3600 - 60
    assert "step 110" in s.step and s.last == _pulse(9, 0)


def test_no_stall_when_the_log_ends_stepping_or_goes_quiet_or_not_long() -> None:
    assert stalled([_step(0, 100), _pulse(7, 5), _step(10, 110)]) is None  # ends at a step
    assert stalled([_step(0, 100), "loading the next shard"]) is None  # nothing dated after
    assert stalled([_step(0, 100), _pulse(7, 20)]) is None  # 20 min: a save, an evaluation
    assert stalled([_pulse(7, 0), _pulse(9, 0)]) is None  # no step at all: nothing stopped


def test_a_run_that_steps_slowly_must_stop_for_several_of_its_intervals() -> None:
    slow = [
        "2024-05-12 01:00:00 INFO epoch 5 loss 0.57",
        "2024-05-12 03:00:00 INFO epoch 6 loss 0.5",
    ]
    assert stalled([*slow, "2024-05-12 05:30:00 INFO checkpoint written"]) is None  # 2.5 h < 6 h
    assert stalled([*slow, "2024-05-12 09:30:00 INFO heartbeat"]) is not None


def test_a_step_without_a_date_counts_from_the_first_dated_line_after_it() -> None:
    megatron = " iteration    45000/  115311 | lm loss: 2.113567E+00 | grad norm: 0.139 |"
    s = stalled([megatron, _pulse(3, 56), _pulse(4, 56), _pulse(5, 56)])
    assert s is not None and not s.exact and s.seconds == 2 * 3600


def test_a_run_stalls_only_when_no_log_went_on_stepping() -> None:
    stuck = [_step(0, 100), _step(1, 110), _pulse(8, 0)]
    assert isinstance(ending_of([stuck, ["rank 1 has no steps in its tail"]]), Stall)
    assert ending_of([stuck, [_pulse(7, 0), _step(59, 500)]]) is None


def test_triage_says_hang_when_a_log_shows_progress_that_stopped(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join([_step(0, 100), _step(1, 110), _pulse(8, 0), _pulse(9, 0)]) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.HANG and d.transient is None
    assert "went on for 1h59m after the last training step" in d.summary
    assert "py-spy dump" in d.action
    # an error in the log is its own story: no stall is read then
    log.write_text(log.read_text() + "RuntimeError: CUDA error: an illegal memory access\n")
    assert triage_files([log]).diagnosis.category != Category.HANG


def test_the_scanner_keeps_a_logs_last_lines_from_a_line_start() -> None:
    lines = [f"line {i} " + "x" * 90 for i in range(2000)]
    stats = scan(io.BytesIO(("\n".join(lines) + "\n").encode()), lambda n, t: False)
    assert stats.tail[-1] == lines[-1] and stats.tail[0] in lines
    assert sum(len(t) + 1 for t in stats.tail) <= TAIL_BYTES


def test_a_run_that_said_it_ended_did_not_stall() -> None:
    hf = "{'train_runtime': 1800.0, 'train_samples_per_second': 9.1, 'train_loss': 2.1}"
    lines = [_step(0, 100), _step(1, 110), hf, _pulse(8, 0), _pulse(9, 0)]
    assert stalled(lines) is None


def test_an_unknown_step_interval_asks_for_a_longer_silence() -> None:
    # one dated step in reach (the one before it out of the tail): an epoch, a validation could
    # last 33 min; two hours without a step is no epoch
    assert stalled([_step(0, 100), _pulse(7, 33)]) is None
    assert stalled([_step(0, 100), _pulse(9, 1)]) is not None


def test_timestamps_are_compared_across_a_months_end_and_only_within_one_kind() -> None:
    glog = [
        "I0430 23:57:50.1 12 train.py:88] completed step: 1520, loss: 2.81",
        "I0430 23:58:50.1 12 train.py:88] completed step: 1530, loss: 2.80",
        "I0501 00:04:00.0 12 checkpoints.py:40] Saving checkpoint",
    ]
    assert stalled(glog) is None  # 5 min, not a day
    naive_then_zoned = [_step(0, 100), _step(1, 110), "2024-05-12T07:10:00-07:00 heartbeat"]
    assert stalled(naive_then_zoned) is None  # a naive stamp may be local time


def test_the_scanner_keeps_the_last_lines_across_its_last_two_blocks() -> None:
    lines = [f"line {i} " + "x" * 90 for i in range(CHUNK_BYTES // 98 + 300)]
    stats = scan(io.BytesIO(("\n".join(lines) + "\n").encode()), lambda n, t: False)
    assert stats.tail[-1] == lines[-1] and stats.tail[0] in lines
    assert len(stats.tail) > 300  # more than the last block's lines


def _retry(second: int) -> str:
    return (
        f"2024-05-12 07:10:{second:02d} WARNING client - Connection to 10.1.4.7:8000 refused; "
        "retrying in 5 seconds (attempt " + str(second) + ")"
    )


def test_a_log_that_ends_retrying_one_line_is_a_loop_and_names_the_network_when_it_does() -> None:
    loop = looping([_step(0, 100), *(_retry(s) for s in range(0, 30, 5))])
    assert loop is not None and loop.count == 6 and loop.remote and loop.line == _retry(25)
    waits = [f"[rank1]: waiting for lock file /ckpt/step_{i}.lock to be freed" for i in (1, 1, 1)]
    local = looping([_step(0, 100), *waits])
    assert local is not None and local.count == 3 and not local.remote


def test_no_loop_from_counts_of_waiting_work_a_wait_that_ended_or_several_ranks() -> None:
    # vLLM's metrics: `Waiting: 3 reqs` is a count, not a wait
    metrics = [
        f"(APIServer pid=7) INFO 06-10 10:5{i}:03 [loggers.py:116] Engine 000: Running: 1{i} "
        f"reqs, Waiting: {i} reqs, GPU KV cache usage: 4.{i}%"
        for i in range(5)
    ]
    assert looping(metrics) is None
    done = [
        f"{r}: INFO:torch.distributed.elastic.agent.server.api:Done waiting for other agents. "
        f"Elapsed: 0.00{r} seconds"
        for r in range(4)
    ]
    assert looping(done) is None
    # the same wait said once by each of four ranks is no process retrying
    each = [f"[rank{r}]: waiting for lock file /ckpt/x.lock" for r in range(4)]
    assert looping(each) is None
    # a logger's or a module's name is not what the line waits for
    lock = ["INFO:torch.distributed.elastic.agent.server.api:waiting for lock file /c/x.lock"] * 3
    loop = looping(lock)
    assert loop is not None and not loop.remote


def test_a_stalled_log_s_own_loop_says_what_it_waited_for_another_log_s_does_not() -> None:
    stuck = [_step(0, 100), _step(1, 110), _pulse(8, 0), _pulse(9, 0)]
    sidecar = ["uploader: waiting for metrics server (attempt 1)"] * 3
    assert isinstance(ending_of([stuck, sidecar]), Stall)  # the stall, not the sidecar's loop
    own = [*stuck, *[f"[2024-05-12 09:00:0{i}] redis connection lost, retrying" for i in (1, 2, 3)]]
    end = ending_of([own, sidecar])
    assert isinstance(end, Loop) and end.remote and "redis" in end.line
    assert ending_of([["step 1 | loss: 2.0"], sidecar]) == looping(sidecar)


def test_no_loop_when_the_end_is_not_one_retried_line_said_three_times() -> None:
    assert looping([_step(0, 100), _retry(0), _retry(5)]) is None  # twice: not yet a loop
    assert looping([_retry(0), _retry(5), _retry(10), _step(1, 110)]) is None  # ends stepping
    assert looping([_pulse(7, 0), _pulse(8, 0), _pulse(9, 0)]) is None  # a heartbeat: no retry
    mixed = [_retry(0), "waiting for lock file /ckpt/a.lock", _retry(10)]
    assert looping(mixed) is None  # not one line
    assert looping(["", "  "]) is None
    busy = [f"epoch 3 | loss: 0.{n} | waiting for eval" for n in (41, 40, 39)]
    assert looping(busy) is None  # training steps, however they end
    assert loop_of([[_retry(0)] * 3, [_retry(0)] * 5, ["done"]]) == looping([_retry(0)] * 5)


def test_triage_reads_a_retry_loop_only_where_no_error_was_found(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("\n".join([_step(0, 100), *(_retry(s) for s in range(0, 40, 5))]) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.NETWORK and d.transient is None
    assert d.suspect.kind == "network"
    assert "the same thing 8 times in a row" in d.summary and "10.1.4.7:8000" in d.summary
    assert "curl or nc" in d.action
    log.write_text("\n".join([_step(0, 100), *["waiting for lock file /ckpt/x.lock"] * 4]))
    assert triage_files([log]).diagnosis.category == Category.HANG
    log.write_text(log.read_text() + "\ntorch.OutOfMemoryError: CUDA out of memory.\n")
    assert triage_files([log]).diagnosis.category == Category.CUDA_OOM
    # a stall that ends retrying: the loop says what the run waited for
    stuck = [_step(0, 100), _step(1, 110), _pulse(8, 0), *[_pulse(9, 0) + ", retrying"] * 3]
    log.write_text("\n".join(stuck) + "\n")
    assert triage_files([log]).diagnosis.category == Category.HANG  # (no remote named)
    stuck[-3:] = [f"[2024-05-12 09:00:0{i}] redis connection lost, retrying" for i in range(3)]
    log.write_text("\n".join(stuck) + "\n")
    d = triage_files([log]).diagnosis
    assert d.category == Category.NETWORK and "3 times in a row" in d.summary
