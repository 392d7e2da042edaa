"""supervise.judge.outcome_of: how an attempt ended, from babysit's own part in it."""

from __future__ import annotations

import signal
from pathlib import Path

from babysit.engines.process import Handle
from babysit.records import ExitStatus, Incident, IncidentKind, Outcome
from babysit.supervise.attempt import Live
from babysit.supervise.judge import outcome_of
from babysit.supervise.pipeline import Pipeline


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
