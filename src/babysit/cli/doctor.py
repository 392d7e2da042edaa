"""`babysit doctor`: is this node fit to train on? The checks of supervise/doctor.py, rendered.

    babysit doctor                          # a table; exit 0, or 6 when a check failed
    babysit doctor --json --only gpu --only matmul
    babysit doctor --checkpoint-dir /nfs/ckpt --data-dir /nfs/data --budget 20

Imported only when the command runs (or --help lists it): the checks are not every command's
start-up cost. The flags win over the directories babysit.toml names.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console

from babysit.cli.common import config_option, fail, load_config
from babysit.errors import BabysitError, UsageError
from babysit.sources.health import CHECKS
from babysit.supervise.doctor import examine, targets_from_config
from babysit.views.doctor import doctor_document, doctor_table

__all__ = ["DOCTOR_FAILED", "doctor_command"]

DOCTOR_FAILED = 6  # `babysit doctor`: at least one check failed (0..5 belong to `babysit run`)


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
@config_option
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
    try:
        if not budget > 0:
            raise UsageError(f"--budget must be > 0 seconds, got {budget}")
        cfg = load_config(config_path, {})
    except BabysitError as exc:
        fail(exc)
    targets = targets_from_config(cfg, data_dirs, python, home=home)
    if checkpoint_dirs:
        targets = replace(targets, checkpoint_dirs=checkpoint_dirs)
    exam = examine(targets, budget, only)
    if as_json:
        doc = doctor_document(exam.results, exam.host, exam.elapsed_s)
        click.echo(json.dumps(doc, indent=2))
    else:
        doctor_table(exam.results, Console(), exam.host)
    if exam.failed:
        sys.exit(DOCTOR_FAILED)
