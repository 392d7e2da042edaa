"""`babysit doctor`: is this node fit to train on? The checks of sources/health.py, rendered.

    babysit doctor                          # a table; exit 0, or 6 when a check failed
    babysit doctor --json --only gpu --only matmul
    babysit doctor --checkpoint-dir /nfs/ckpt --data-dir /nfs/data --budget 20

    targets = targets_from_config(cfg)      # the directories babysit.toml names
    results = run_checks(targets, budget_s=10.0)

Where checkpoints go defaults to the fixed part of babysit.toml's [checkpoint] glob (`out` of
`out/ckpt_*.pt`), else the working directory; the data directories to [health] data_dirs (the
ones `babysit run --preflight` checks too); babysit's home to [run] home.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console

from babysit.config import Config, load_config
from babysit.errors import BabysitError
from babysit.records import CheckStatus, ExitCode
from babysit.sources.checkpoints import glob_directory
from babysit.sources.health import CHECKS, HealthTargets, run_checks
from babysit.views.doctor import doctor_document, doctor_table

__all__ = ["DOCTOR_FAILED", "doctor_command", "targets_from_config"]

DOCTOR_FAILED = 6  # `babysit doctor`: at least one check failed (0..5 belong to `babysit run`)


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


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of a table.")
@click.option(
    "--checkpoint-dir",
    "checkpoint_dirs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Where checkpoints go (repeatable). Default: from [checkpoint] glob in babysit.toml, "
    "else the working directory.",
)
@click.option(
    "--data-dir",
    "data_dirs",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A directory the training reads data from (repeatable); its write (or, read-only, "
    "listing) latency is timed.",
)
@click.option(
    "--only",
    multiple=True,
    type=click.Choice(CHECKS),
    help="Run only this check (repeatable).",
)
@click.option(
    "--budget",
    type=float,
    default=10.0,
    show_default=True,
    help="Seconds the checks may take; a check still running then fails (a hung filesystem "
    "or driver).",
)
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    default=None,
    help="babysit's home, whose free space is checked. Default: [run] home in babysit.toml, "
    "else .babysit.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="Config file (default: ./babysit.toml when present).",
)
@click.option(
    "--python",
    default=sys.executable,
    show_default="babysit's own",
    help="The interpreter the matmul self-test runs in (the training's, with torch).",
)
def doctor_command(
    as_json: bool,
    checkpoint_dirs: tuple[Path, ...],
    data_dirs: tuple[Path, ...],
    only: tuple[str, ...],
    budget: float,
    home: Path | None,
    config_path: Path | None,
    python: str,
) -> None:
    """Check this node's health: GPUs (NVML: temperature, throttling, ECC, remapped rows),
    free disk, /dev/shm, filesystem latency, memory, and a matmul self-test that catches a
    device computing wrong results.

    \b
    Examples:
      babysit doctor                              # a table of every check
      babysit doctor --json --only gpu --only matmul
      babysit doctor --checkpoint-dir /nfs/ckpt --data-dir /nfs/data

    \b
    Exit codes: 0 nothing failed (warnings and skips allowed), 2 usage error,
                6 at least one check failed (do not trust this node with a run).
    """
    if not budget > 0:
        click.echo(f"babysit: error: --budget must be > 0 seconds, got {budget}", err=True)
        sys.exit(int(ExitCode.USAGE))
    try:
        cfg = load_config(config_path, {})
    except BabysitError as exc:
        click.echo(f"babysit: error: {exc}", err=True)
        sys.exit(int(ExitCode.USAGE))
    targets = targets_from_config(cfg, data_dirs, python)
    if checkpoint_dirs:
        targets = replace(targets, checkpoint_dirs=checkpoint_dirs)
    if home is not None:
        targets = replace(targets, home=home)
    t0 = time.monotonic()
    results = run_checks(targets, budget, only or None)
    host = socket.gethostname()
    if as_json:
        doc = doctor_document(results, host, time.monotonic() - t0)
        click.echo(json.dumps(doc, indent=2))
    else:
        doctor_table(results, Console(), host)
    if any(r.status is CheckStatus.FAIL for r in results):
        sys.exit(DOCTOR_FAILED)
