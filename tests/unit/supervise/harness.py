"""One babysit run on fakes (tests/fakes.py) with the real store under tmp_path.

    r = Run(tmp_path, [Script.crash(steps(1, 3), NETWORK_ERROR), Script(steps(4, 6))])
    assert r.run() == ExitCode.OK
    r.attempts(), r.events(), r.kinds(), r.state()      # what the store kept
    r.engine.launches, r.engine.signals, r.said.text    # what babysit did and said

`Run.killed_at(t)` ends babysit mid-loop at fake time t, as a SIGKILL would (its attempt left
running, its rows as they were); the next `run()` is a new babysit on the same run.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from babysit.config import build_config
from babysit.records import ExitCode
from babysit.store import Store
from babysit.supervise.context import Seams
from babysit.supervise.run import Supervisor
from tests.fakes import BabysitKilled, FakeClock, FakeEngine, Said, Script

NAME = "train"
COMMAND = [sys.executable, "train.py"]  # never run: only checked to exist
BASE: dict[str, Any] = {
    "restart.backoff_s": 1,
    "restart.after_progress_s": 1,
    "stop.grace_s": 5,
    "health.telemetry": False,  # no sampler thread
    "triage.kernel_log": False,  # the test host's dmesg is not the run's
}
NETWORK_ERROR = "ConnectionError: Connection reset by peer"


def backoff(seconds: float) -> dict[str, float]:
    """The delay before the next attempt, whether the one that failed had trained or not."""
    return {"restart.backoff_s": seconds, "restart.after_progress_s": seconds}


CKPT = {"checkpoint.glob": "out/ckpt_*.pt", "checkpoint.settle_s": 0}


class Run:
    """One babysit run on fakes: the clock, the engine, what was said, the store after."""

    def __init__(self, tmp_path: Path, scripts: list[Script], **config: Any) -> None:
        self.home = tmp_path / ".babysit"
        self.cwd = tmp_path
        self.clock = FakeClock()
        self.engine = FakeEngine(self.clock, scripts)
        self.said = Said()
        self.cfg = build_config({**BASE, **config})
        self.sup = self.supervisor()

    def supervisor(self) -> Supervisor:
        """A babysit on this run (a second one re-attaches, as after the first was killed)."""
        clock = self.clock
        seams = Seams(clock.sleep, clock.monotonic, clock.wall, lambda: 0.5, None, None)
        return Supervisor(
            self.cfg, COMMAND, NAME, self.home, self.cwd, self.said, seams, self.engine
        )

    def run(self) -> ExitCode:
        code = self.sup.run()
        assert "internal:" not in self.said.text, self.said.text  # a lifecycle edge not drawn
        return code

    def killed_at(self, when: float) -> None:
        """Run babysit until the fake clock reaches `when`, where it dies as if SIGKILLed."""
        self.clock.at(when, _kill_babysit)
        try:
            self.sup.run()
        except BabysitKilled:
            pass
        else:
            raise AssertionError(f"babysit ended before {when:g}s:\n{self.said.text}")
        self.sup = self.supervisor()  # the next babysit on this run

    def attempts(self) -> list[dict[str, Any]]:
        with Store.open(self.home, create=False) as store:
            return store.attempts(NAME)

    def events(self) -> list[dict[str, Any]]:
        with Store.open(self.home, create=False) as store:
            return store.events(NAME)

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events()]

    def state(self) -> str:
        with Store.open(self.home, create=False) as store:
            return str(store.run(NAME)["state"])


def _kill_babysit() -> None:
    raise BabysitKilled
