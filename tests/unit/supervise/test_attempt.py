"""One attempt (supervise/attempt.py, judged by judge.py) in-process on fakes: a NaN stops it
and rolls back, a hang is killed after hang.kill_after_s, a stop escalates to SIGKILL after the
grace. Driven through the Supervisor, on the fake clock: milliseconds each.

The behaviours of tests/e2e/test_rollback.py and the hang and stop tests of e2e/test_run.py.
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from babysit.records import ExitCode
from tests.fakes import Script, steps, traceback_lines
from tests.unit.supervise.harness import CKPT, Run

ROLLBACK = {**CKPT, "rollback.skip_before": 2, "rollback.skip_after": 3}
HANG = {"hang.floor_s": 0.5, "hang.kill_after_s": 5}
OOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"


def iters(first: int, last: int, loss: str = "2.50") -> list[tuple[float, str]]:
    """Step n printed at n/10 s after the launch (nanoGPT's format)."""
    return [(n / 10, f"iter {n}: loss {loss}, time 5.00ms") for n in range(first, last + 1)]


def saves(*at_steps: int) -> list[tuple[float, str]]:
    """The checkpoint of step n written when step n is printed."""
    return [(n / 10, f"out/ckpt_{n:06d}.pt") for n in at_steps]


# -- NaN and rollback ------------------------------------------------------------------------


def test_a_nan_stops_the_attempt_and_rolls_back_before_it(tmp_path: Path) -> None:
    # The loss is NaN at step 60, whose checkpoint may hold the bad update: the rollback
    # resumes from step 40, where a plain restart would take 60.
    nan = Script(
        [*iters(1, 59), (6.05, "iter 60: loss nan, time 5.00ms")],
        files=saves(20, 40, 60),
        ends_at=None,
    )
    r = Run(tmp_path, [nan, Script(steps(41, 70), ends_at=4)], **ROLLBACK)
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)]  # babysit stopped attempt 1 itself
    first, second = r.attempts()
    assert (first["outcome"], first["category"], first["anomaly_step"]) == (
        "killed",
        "numerical",
        60,
    )
    env = r.engine.launches[1].env
    assert env["BABYSIT_RESUME_FROM"] == str(tmp_path / "out" / "ckpt_000040.pt")
    assert env["BABYSIT_SKIP_STEPS"] == "58-63" and env["BABYSIT_RESUME_STEP"] == "40"
    assert "BABYSIT_LR_SCALE" not in env  # rollback.lr_scale is 1
    assert second["resume_step"] == 40 and second["skip_steps"] == [(58, 63)]
    assert second["outcome"] == "succeeded"
    assert "rollback" in r.kinds()


def test_a_nan_without_a_checkpoint_glob_is_noted_not_acted_on(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script([*iters(1, 9), (1.0, "iter 10: loss nan, time 5.00ms")], ends_at=2)])
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == [] and len(r.engine.launches) == 1
    notes = [e["message"] for e in r.events() if e["kind"] == "note"]
    assert any("no --checkpoint glob is set" in n for n in notes)


def test_a_rollback_babysit_was_killed_in_the_middle_of_is_carried_out(tmp_path: Path) -> None:
    # A script that ignores SIGTERM: babysit dies during the grace, its decision in the store.
    nan = Script(
        [*iters(1, 29), (3.05, "iter 30: loss nan, time 5.00ms")],
        files=saves(10, 20, 30),
        ends_at=None,
        obeys=False,
    )
    r = Run(tmp_path, [nan, Script(steps(21, 40), ends_at=3)], **ROLLBACK)
    r.killed_at(5.0)
    (row,) = r.attempts()
    assert row["outcome"] == "running" and row["anomaly_step"] == 30

    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM), (1, signal.SIGTERM)] and r.engine.kills == [1]
    first, _ = r.attempts()
    assert (first["outcome"], first["category"]) == ("killed", "numerical")
    env = r.engine.launches[1].env
    assert env["BABYSIT_RESUME_FROM"] == str(tmp_path / "out" / "ckpt_000020.pt")
    assert env["BABYSIT_SKIP_STEPS"] == "28-33"


# -- hangs -----------------------------------------------------------------------------------


def test_a_hang_is_killed_and_restarted(tmp_path: Path) -> None:
    # Steps every second up to step 10, then silence: the learned timeout is about 2 x 1 s +
    # floor_s; the kill comes kill_after_s after the last step.
    hung = Script(steps(1, 10, every_s=1.0), ends_at=None)
    r = Run(tmp_path, [hung, Script(steps(11, 15), ends_at=1)], **HANG)
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)]
    first, second = r.attempts()
    assert (first["outcome"], first["category"], first["last_step"]) == ("killed", "hang", 10)
    assert second["outcome"] == "succeeded"
    # step 10 was printed 9.1 s after the launch; killed kill_after_s later (within a poll)
    killed_at = r.engine.attempts[0].ended_at
    assert killed_at is not None and 14.1 - 1e-9 <= killed_at <= 14.1 + r.cfg.run.poll_s + 1e-9
    incidents = [e for e in r.events() if e["kind"] == "incident"]
    assert [e["data"]["incident"] for e in incidents] == ["hang"]
    assert "stacks" in r.kinds() and "killing hung attempt 1" in r.said.text


def test_a_hung_attempt_deaf_to_sigterm_gets_the_hang_grace_not_the_stop_grace(
    tmp_path: Path,
) -> None:
    deaf = Script(steps(1, 10, every_s=1.0), ends_at=None, obeys=False)
    cfg = {**HANG, "stop.grace_s": 600, "hang.kill_grace_s": 2}
    r = Run(tmp_path, [deaf, Script(steps(11, 15), ends_at=1)], **cfg)
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)] and r.engine.kills == [1]
    killed_at = r.engine.attempts[0].ended_at  # SIGTERM at 14.1 s, SIGKILL 2 s later
    assert killed_at is not None and killed_at == pytest.approx(14.1 + 2, abs=0.5)


def test_a_hung_script_that_exits_0_on_sigterm_is_killed_not_finished(tmp_path: Path) -> None:
    polite = Script(steps(1, 10, every_s=1.0), ends_at=None, exit_on_stop=0)
    r = Run(tmp_path, [polite, Script(steps(11, 15), ends_at=1)], **HANG)
    assert r.run() == ExitCode.OK, r.said.text
    first, second = r.attempts()
    assert (first["outcome"], first["exit_code"], first["category"]) == ("killed", 0, "hang")
    assert second["outcome"] == "succeeded"


def test_a_long_pause_that_ends_is_not_killed(tmp_path: Path) -> None:
    # Flagged after ~2.5 s of silence; progress comes back at 4 s, before kill_after_s.
    stdout = [*steps(1, 10, every_s=1.0), *steps(11, 15, every_s=1.0, start_s=13.1)]
    r = Run(tmp_path, [Script(stdout, ends_at=18)], **{**HANG, "hang.kill_after_s": 60})
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == []
    assert "it was a pause, not a hang" in r.said.text


def test_a_stall_then_a_crash_of_its_own_is_judged_by_the_crash(tmp_path: Path) -> None:
    oom = Script(
        steps(1, 10, every_s=1.0),
        [(20.0, line) for line in traceback_lines(OOM)],
        ends_at=20.0,
        exit_code=1,
    )
    r = Run(tmp_path, [oom, Script(ends_at=1)], **{**HANG, "hang.kill_after_s": 60})
    code = r.run()
    assert r.engine.signals == []  # babysit never killed it ...
    (row, *_) = r.attempts()
    assert "babysit killed it" not in (row["summary"] or "")  # ... so it must not say so
    assert (row["category"], row["transient"]) == ("cuda_oom", 0)
    assert code == ExitCode.NEEDS_HUMAN  # as without the stall: OOM never loops


def test_a_stall_then_a_clean_exit_is_a_plain_success(tmp_path: Path) -> None:
    stalled = Script(steps(1, 10, every_s=1.0), ends_at=20.0)
    r = Run(tmp_path, [stalled], **{**HANG, "hang.kill_after_s": 60})
    assert r.run() == ExitCode.OK, r.said.text
    (row,) = r.attempts()
    assert row["outcome"] == "succeeded"
    assert row["category"] is None and row["summary"] is None


def test_a_hung_attempt_is_still_killed_soon_after_a_reattach(tmp_path: Path) -> None:
    hung = Script(steps(1, 10, every_s=1.0), ends_at=None)
    r = Run(tmp_path, [hung, Script(ends_at=1)], **{**HANG, "hang.startup_s": 600})
    r.killed_at(12.0)  # the hang was flagged; the kill was due at 14.1 s
    assert r.run() == ExitCode.OK, r.said.text
    killed_at = r.engine.attempts[0].ended_at
    assert killed_at is not None and killed_at < 12.0 + 300
    assert "since start" not in r.said.text


# -- stopping --------------------------------------------------------------------------------


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 100), ends_at=None, obeys=False)])
    r.clock.at(3.0, lambda: r.sup.request_stop(signal.SIGTERM))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.signals == [(1, signal.SIGTERM)] and r.engine.kills == [1]
    assert r.engine.attempts[0].ended_at == pytest.approx(3.0 + 5.0, abs=0.3)  # stop.grace_s
    (row,) = r.attempts()
    assert row["outcome"] == "stopped" and row["signal"] == signal.SIGKILL
    assert "stopped by the operator (SIGTERM) after SIGKILL" in r.said.text
    assert "force_killed" in r.kinds()


def test_a_second_signal_kills_at_once(tmp_path: Path) -> None:
    r = Run(tmp_path, [Script(steps(1, 100), ends_at=None, obeys=False)], **{"stop.grace_s": 600})
    r.clock.at(3.0, lambda: r.sup.request_stop(signal.SIGINT))
    r.clock.at(4.0, lambda: r.sup.request_stop(signal.SIGINT))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.signals == [(1, signal.SIGINT)] and r.engine.kills == [1]
    assert r.engine.attempts[0].ended_at == pytest.approx(4.0, abs=0.2)  # not 600 s later
    assert "second signal" in r.said.text


# -- found in review: each failed before its fix ---------------------------------------------


def test_a_checkpoint_removed_during_the_backoff_is_not_resumed_from(tmp_path: Path) -> None:
    crash = Script(iters(1, 25), files=saves(10, 20), ends_at=2.6, exit_code=1)
    r = Run(tmp_path, [crash, Script(steps(11, 30), ends_at=3)], **CKPT)
    # The crash is seen by about 2.8 s; the next launch comes 1 s (the backoff) later.
    r.clock.at(3.3, lambda: (tmp_path / "out" / "ckpt_000020.pt").unlink())
    assert r.run() == ExitCode.OK, r.said.text
    env = r.engine.launches[1].env
    assert env["BABYSIT_RESUME_FROM"] == str(tmp_path / "out" / "ckpt_000010.pt")


def test_two_operator_signals_before_babysit_passes_the_first_on_kill_at_once(
    tmp_path: Path,
) -> None:
    r = Run(tmp_path, [Script(steps(1, 100), ends_at=None, obeys=False)], **{"stop.grace_s": 600})
    r.clock.at(3.0, lambda: (r.sup.request_stop(signal.SIGINT), r.sup.request_stop(signal.SIGINT)))
    assert r.run() == ExitCode.STOPPED, r.said.text
    assert r.engine.kills == [1]
    assert r.engine.attempts[0].ended_at == pytest.approx(3.0, abs=0.5)  # not 600 s later


# -- stragglers: ranks named with their nodes -------------------------------------------------


def test_a_multi_node_engines_rank_map_reaches_the_straggler_detector(tmp_path: Path) -> None:
    # Last session's gap: under Slurm the straggler detector had no rank -> node map (only a
    # one-node job named its host). A remote engine's map is asked for while the attempt runs.
    lines = [
        (0.1 + 0.5 * n, f"[rank{r}]:iter {n}: loss 2.50, time 5.00ms")
        for n in range(60)
        for r in (0, 1)
    ]
    r = Run(tmp_path, [Script(stdout=lines, ends_at=31.0)])
    asked: list[list[int]] = []

    def rank_hosts(handle: object, ranks: list[int]) -> dict[int, str]:
        asked.append(sorted(ranks))
        return {rank: f"node{rank + 1}" for rank in ranks}

    r.engine.remote = True  # type: ignore[misc]
    r.engine.rank_hosts = rank_hosts  # type: ignore[method-assign,assignment]
    assert r.run() == ExitCode.OK, r.said.text
    detector = r.sup.attempts.pipeline.straggler
    assert detector is not None
    assert dict(detector.hosts) == {0: "node1", 1: "node2"}
    assert asked and asked[0] == [0, 1]  # asked once they were seen, not again once mapped
    assert len(asked) == 1


def _map_asks(tmp_path: Path, answer: Callable[[int, list[int]], dict[int, str]]) -> list[float]:
    """A 200-second attempt of two ranks under a remote engine whose rank map answers
    answer(how many times it was asked, the ranks asked for): when it was asked."""
    lines = [
        (0.1 + 0.5 * n, f"[rank{r}]:iter {n}: loss 2.50, time 5.00ms")
        for n in range(400)
        for r in (0, 1)
    ]
    r = Run(tmp_path, [Script(stdout=lines, ends_at=201.0)])
    asked: list[float] = []

    def rank_hosts(handle: object, ranks: list[int]) -> dict[int, str]:
        asked.append(r.clock.monotonic())
        return answer(len(asked), ranks)

    r.engine.remote = True  # type: ignore[misc]
    r.engine.rank_hosts = rank_hosts  # type: ignore[method-assign,assignment]
    assert r.run() == ExitCode.OK, r.said.text
    return asked


def test_a_rank_no_line_maps_is_asked_for_less_and_less_often(tmp_path: Path) -> None:
    # A rank whose node no line of the output names: the engine rereads the attempt's output
    # each time it is asked; asked every 10 s for a whole run is wasted I/O. The gaps double.
    asked = _map_asks(tmp_path, lambda n, ranks: {0: "node1"} if 0 in ranks else {})
    gaps = [b - a for a, b in itertools.pairwise(asked)]
    assert len(asked) <= 6, asked  # 10 s apart for 200 s would be 20
    assert gaps == sorted(gaps) and gaps[1] >= 1.9 * gaps[0], gaps  # doubling from the first


def test_a_refresh_that_learns_a_node_brings_the_next_one_back_to_10_s(tmp_path: Path) -> None:
    asked = _map_asks(tmp_path, lambda n, ranks: {0: "node1"} if n == 3 else {})  # third only
    gaps = [b - a for a, b in itertools.pairwise(asked)]
    assert gaps[2] <= gaps[0] + 1.0 < gaps[1], gaps  # after the find: back to the short gap


def test_a_hang_right_after_a_directory_save_is_flagged_on_the_cadence(tmp_path: Path) -> None:
    # The HF Trainer's way: "Saving model checkpoint to out/checkpoint-10", its files written
    # one by one, trainer_state.json last (what makes the directory complete). Then silence.
    # The save is seen finished once the directory is complete and quiet: the hang is flagged
    # on the run's cadence, not after the 30-minute pause allowance.
    stdout = [*steps(1, 10, every_s=1.0), (9.2, "Saving model checkpoint to out/checkpoint-10")]
    files = [
        (9.5, "out/checkpoint-10/optimizer.bin"),
        (10.5, "out/checkpoint-10/trainer_state.json"),
    ]
    hung = Script(stdout, files=files, ends_at=None)
    cfg = {**HANG, "checkpoint.glob": "out/checkpoint-*", "checkpoint.settle_s": 0}
    r = Run(tmp_path, [hung, Script(steps(11, 15), ends_at=1)], **cfg)
    assert r.run() == ExitCode.OK, r.said.text
    first, _ = r.attempts()
    assert (first["outcome"], first["category"]) == ("killed", "hang")
    killed_at = r.engine.attempts[0].ended_at
    assert killed_at is not None and killed_at < 30.0, killed_at  # not 30 minutes on


def test_a_directory_save_still_being_written_keeps_its_allowance(tmp_path: Path) -> None:
    # The same save stalled for 40 s (a slow filesystem) before trainer_state.json: the
    # directory is not complete, so the pause allowance holds; training goes on, no hang.
    stdout = [
        *steps(1, 10, every_s=1.0),
        (9.2, "Saving model checkpoint to out/checkpoint-10"),
        *steps(11, 15, every_s=1.0, start_s=50.6),
    ]
    files = [
        (9.5, "out/checkpoint-10/optimizer.bin"),
        (50.5, "out/checkpoint-10/trainer_state.json"),
    ]
    cfg = {**HANG, "checkpoint.glob": "out/checkpoint-*", "checkpoint.settle_s": 0}
    r = Run(tmp_path, [Script(stdout, files=files, ends_at=56)], **cfg)
    assert r.run() == ExitCode.OK, r.said.text
    assert r.engine.signals == []
    assert [a["outcome"] for a in r.attempts()] == ["succeeded"]
