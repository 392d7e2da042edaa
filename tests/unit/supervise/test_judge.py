"""supervise.judge.outcome_of: how an attempt ended, from babysit's own part in it."""

from __future__ import annotations

import signal
from pathlib import Path

from babysit.engines.process import Handle
from babysit.records import ExitCode, ExitStatus, Incident, IncidentKind, Outcome
from babysit.supervise.judge import outcome_of
from babysit.supervise.live import Live
from babysit.supervise.pipeline import Pipeline
from tests.fakes import Script
from tests.unit.supervise.harness import CKPT, Run


def live(tmp_path: Path, hang: bool = False, killed: bool = False) -> Live:
    lv = Live(1, Handle(0, 0.0, tmp_path, "tok"), [], 0.0, Pipeline())
    lv.hang = Incident(IncidentKind.HANG, "no progress", 10.0, 5, None, 8.0) if hang else None
    lv.killed = killed
    return lv


def test_babysits_own_kill_is_never_a_success_nor_a_stop(tmp_path: Path) -> None:
    polite = ExitStatus(0, None, 1.0, (signal.SIGTERM,))
    assert outcome_of(live(tmp_path, hang=True, killed=True), polite) == Outcome.KILLED


def test_an_outside_stop_is_a_stop_even_during_a_hang_babysit_did_not_act_on(
    tmp_path: Path,
) -> None:
    scancel = ExitStatus(None, signal.SIGTERM, 1.0, (signal.SIGTERM,))
    assert outcome_of(live(tmp_path, hang=True), scancel) == Outcome.STOPPED
    assert outcome_of(live(tmp_path), scancel) == Outcome.STOPPED


def test_exit_codes_and_signals_of_its_own(tmp_path: Path) -> None:
    assert outcome_of(live(tmp_path), ExitStatus(0, None, 1.0)) == Outcome.SUCCEEDED
    assert outcome_of(live(tmp_path), ExitStatus(1, None, 1.0)) == Outcome.FAILED
    assert outcome_of(live(tmp_path), ExitStatus(None, signal.SIGKILL, 1.0)) == Outcome.KILLED
    assert outcome_of(live(tmp_path), ExitStatus(None, None, 1.0)) == Outcome.LOST


# -- saying a thing once ---------------------------------------------------------------------


def test_a_divergence_is_told_in_full_once_then_named(tmp_path: Path) -> None:
    # The detector's sentence (40 words) was printed 4 times in 5 lines: when found, when the
    # attempt was stopped, when it ended, and in the rollback decision.
    def line(n: int, loss: float) -> tuple[float, str]:
        return (n / 10, f"iter {n}: loss {loss:.3f}, time 5.00ms")

    calm = [line(n, 2.5 + 0.01 * (n % 3)) for n in range(1, 70)]
    high = [line(n, 7.0 + 0.01 * (n % 3)) for n in range(70, 100)]
    saves = [(n / 10, f"out/ckpt_{n:06d}.pt") for n in (20, 40, 60)]
    after = [line(n, 2.5) for n in range(61, 80)]
    r = Run(
        tmp_path,
        [Script([*calm, *high], files=saves, ends_at=None), Script(after, ends_at=3)],
        **CKPT,
    )
    assert r.run() == ExitCode.OK, r.said.text
    found = [m for _, m in r.said.messages if "did not settle after its spike" in m]
    full = [m for m in found if "values later it is still" in m]
    assert len(full) == 1, r.said.text  # the detector's message, once
    assert len(found) >= 2  # the stop, the verdict and the decision name it
    ended = next(m for m in found if m.startswith("attempt 1 "))
    assert ended.endswith("babysit stopped it to roll back: loss did not settle after its "
                          "spike at step 70"), ended
