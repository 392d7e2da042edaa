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
import socket
import sys
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from babysit.config import Config
from babysit.records import CheckResult, CheckStatus
from babysit.sources.checkpoints import glob_directory
from babysit.sources.health import HealthTargets, run_checks

__all__ = ["Examination", "examine", "targets_from_config"]


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


def targets_from_config(
    cfg: Config, data_dirs: tuple[Path, ...] = (), python: str = sys.executable
) -> HealthTargets:
    """The directories babysit.toml names (its [health] data_dirs unless `data_dirs` are given):
    the same ones `babysit run --preflight` checks."""
    ckpt = glob_directory(cfg.checkpoint.glob) if cfg.checkpoint.glob else Path(".")
    if not data_dirs:
        parts = cfg.health.data_dirs.split(os.pathsep)
        data_dirs = tuple(Path(d.strip()).expanduser() for d in parts if d.strip())
    return HealthTargets((ckpt,), data_dirs, Path(cfg.run.home), python)


def examine(
    targets: HealthTargets, budget_s: float = 10.0, only: Collection[str] | None = None
) -> Examination:
    """Every check (or those named in `only`) on this node, within `budget_s` in all; a check
    still running then fails (a hung filesystem or driver)."""
    t0 = time.monotonic()
    results = tuple(run_checks(targets, budget_s, only or None))
    host = socket.gethostname()
    return Examination(results, host, time.monotonic() - t0)
