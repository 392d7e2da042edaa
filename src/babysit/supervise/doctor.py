"""The doctor's checks, wired: the directories babysit.toml names, checked by sources.health.

    targets = targets_from_config(cfg)              # the directories babysit.toml names
    exam = examine(targets, budget_s=10.0)          # every check, concurrently
    exam.results, exam.host, exam.elapsed_s, exam.failed

Where checkpoints go defaults to the fixed part of babysit.toml's [checkpoint] glob (`out` of
`out/ckpt_*.pt`), else the working directory; the data directories to [health] data_dirs (the
ones `babysit run --preflight` checks too); babysit's home to [run] home. `babysit doctor`
(cli/doctor.py) puts its flags over these and renders the results with views.doctor.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from babysit.config import Config
from babysit.records import CheckResult, CheckStatus
from babysit.sources.checkpoints import glob_directory
from babysit.sources.health import HealthTargets, run_checks
from babysit.supervise.prepare import resolve_path

__all__ = ["Examination", "examine", "targets_from_config", "training_python"]


@dataclass(frozen=True)
class Examination:
    """One node's checks: their results in the order they ran, where, and how long it took."""

    results: tuple[CheckResult, ...]
    host: str
    elapsed_s: float

    @property
    def failed(self) -> bool:
        """A check failed: do not trust this node with a run."""
        return any(r.status is CheckStatus.FAIL for r in self.results)


_LAUNCHERS = {"torchrun", "accelerate", "deepspeed", "composer", "lightning"}


def training_python(command: Sequence[str]) -> str:
    """The interpreter the training runs in, for the matmul self-test (babysit's own may lack
    torch): `python...` itself, or the `python` next to torchrun & co; else babysit's."""
    if command:
        prog = Path(command[0]).name
        found = shutil.which(command[0])
        if found and prog.startswith("python"):
            return found
        if found and prog in _LAUNCHERS:
            sibling = Path(found).parent / "python"
            if sibling.exists():
                return str(sibling)
    return sys.executable


def targets_from_config(
    cfg: Config,
    data_dirs: tuple[Path, ...] = (),
    python: str = sys.executable,
    cwd: Path | None = None,
    home: Path | None = None,
) -> HealthTargets:
    """The directories babysit.toml names (its [health] data_dirs unless `data_dirs` are given),
    resolved against the run's working directory like every path of the config: the ones both
    `babysit doctor` and `babysit run --preflight` (and the run's telemetry) check."""

    def place(path: str) -> Path:  # without a cwd: as written, relative to the current directory
        return resolve_path(path, cwd) if cwd is not None else Path(path).expanduser()

    glob = cfg.checkpoint.glob
    ckpt = glob_directory(str(place(glob))) if glob else (cwd or Path("."))
    if not data_dirs:
        parts = cfg.health.data_dirs.split(os.pathsep)
        data_dirs = tuple(place(d.strip()) for d in parts if d.strip())
    return HealthTargets((ckpt,), data_dirs, home or place(cfg.run.home), python)


def examine(
    targets: HealthTargets, budget_s: float = 10.0, only: Collection[str] | None = None
) -> Examination:
    """Every check (or those named in `only`) on this node, within `budget_s` in all; a check
    still running then fails (a hung filesystem or driver)."""
    t0 = time.monotonic()
    results = tuple(run_checks(targets, budget_s, only or None))
    host = socket.gethostname()
    return Examination(results, host, time.monotonic() - t0)
