"""`babysit doctor`: is this node fit to train on? The checks of supervise/doctor.py, rendered.

    babysit doctor                          # a table; exit 0, or 6 when a check failed
    babysit doctor --json --only gpu --only matmul
    babysit doctor --checkpoint-dir /nfs/ckpt --data-dir /nfs/data --timeout 20s

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
from babysit.cli.duration import DURATION
from babysit.errors import BabysitError, UsageError
from babysit.sources.health import CHECKS
from babysit.supervise.doctor import examine, targets_from_config
from babysit.views.doctor import doctor_document, doctor_table

__all__ = ["DOCTOR_FAILED", "doctor_command"]

DOCTOR_FAILED = 6  # `babysit doctor`: at least one check failed (0..5 belong to `babysit run`)
DEFAULT_TIMEOUT_S = 10.0


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
    "--timeout",
    type=DURATION,
    default=None,
    help="How long the checks may take, e.g. 10s or 2m (default 10s); a check still running "
    "then fails (a hung filesystem or driver).",
)
@click.option("--budget", type=DURATION, default=None, hidden=True)  # the old name of --timeout
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
    timeout: float | None,
    budget: float | None,
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
    if budget is not None:
        click.echo(
            "babysit: warning: `doctor --budget` is now `--timeout` (`run --budget` counts "
            "restarts); --budget will go away",
            err=True,
        )
        timeout = budget if timeout is None else timeout
    timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
    try:
        if not timeout > 0:
            flag = "--budget" if budget is not None else "--timeout"  # the name typed
            raise UsageError(f"{flag} must be > 0 seconds, got {timeout:g}")
        cfg = load_config(config_path, {})
    except BabysitError as exc:
        fail(exc)
    targets = targets_from_config(cfg, data_dirs, python, home=home)
    if checkpoint_dirs:
        targets = replace(targets, checkpoint_dirs=checkpoint_dirs)
    exam = examine(targets, timeout, only)
    if as_json:
        doc = doctor_document(exam.results, exam.host, exam.elapsed_s)
        click.echo(json.dumps(doc, indent=2, allow_nan=False))
    else:
        doctor_table(exam.results, Console(), exam.host)
    if exam.failed:
        sys.exit(DOCTOR_FAILED)
