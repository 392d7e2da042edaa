"""`babysit demo`: a real tiny GPT trained on the CPU under babysit, through injected faults.

    babysit demo [--workdir babysit-demo] [--steps 300]
    run_demo(Path("babysit-demo"), steps=300)   # -> ExitCode.OK when babysit brought it home

The trainer (examples/tinygpt/train.py) spikes its loss at 25% of the run, crashes with a
realistic NCCL error at 40%, meets a batch that turns its loss NaN at 56%, SIGKILLs itself (as
the host OOM killer would) at 73% and hangs at 88%. babysit flags the spike, restarts the run
from the newest complete checkpoint after each crash and the hang (taking every process's stack
first), and rolls back past the NaN, telling the trainer which steps' data to skip
(BABYSIT_SKIP_STEPS) and to halve its learning rate (BABYSIT_LR_SCALE); the run finishes.
Needs torch (the CPU build).
"""

from __future__ import annotations

import importlib.util
import shutil
import signal
import sys
import time
from pathlib import Path

import click
from rich.console import Console

from babysit.cli.common import fail
from babysit.errors import BabysitError, UsageError
from babysit.records import ExitCode
from babysit.store import Store
from babysit.views.console import ConsoleReporter
from babysit.views.summary import print_summary

RUN_NAME = "tinygpt"
MARKER = ".babysit-demo"


def trainer_path() -> Path:
    """The tiny GPT trainer: shipped in the wheel, or examples/ in a source checkout."""
    package = Path(__file__).resolve().parents[1]  # src/babysit (this is src/babysit/cli/)
    shipped = package / "_examples" / "tinygpt_train.py"
    if shipped.is_file():
        return shipped
    in_repo = package.parents[1] / "examples" / "tinygpt" / "train.py"
    if in_repo.is_file():
        return in_repo
    raise UsageError("the demo trainer (examples/tinygpt/train.py) is missing from this install")


def _prepare(workdir: Path) -> None:
    if workdir.exists():
        if not (workdir / MARKER).exists() and any(workdir.iterdir()):
            raise UsageError(
                f"{workdir} exists and is not a babysit demo directory; pass --workdir NEW_DIR"
            )
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / MARKER).write_text("made by `babysit demo`; safe to delete\n")


@click.command("demo")
@click.option(
    "--workdir",
    type=click.Path(path_type=Path),
    default=Path("babysit-demo"),
    show_default=True,
    help="Where the demo's checkpoints and logbook go (recreated).",
)
@click.option(
    "--steps", type=int, default=300, show_default=True, help="Training steps of the tiny GPT."
)
def demo_command(workdir: Path, steps: int) -> None:
    """Train a tiny GPT on the CPU under babysit, through injected faults, and show recovery.

    \b
    Example:
      babysit demo
    """
    try:
        code = run_demo(workdir, steps)
    except BabysitError as exc:
        fail(exc)
    sys.exit(int(code))


def run_demo(workdir: Path, steps: int = 300) -> ExitCode:
    # The supervisor is imported here, not at the top: `babysit --help` does not pay for it.
    from babysit.supervise.run import Supervisor

    if importlib.util.find_spec("torch") is None:
        raise UsageError(
            "the demo trains a tiny GPT with PyTorch, which is not installed in this "
            "environment: pip install 'torch==2.13.0' (the CPU build is enough), or run `make demo`"
        )
    if steps < 50:
        raise UsageError(f"--steps must be >= 50 for the demo's faults to fire, got {steps}")
    workdir = workdir.resolve()
    _prepare(workdir)
    out = workdir / "out"
    home = workdir / ".babysit"
    crash_at, kill_at = int(steps * 0.4), int(steps * 0.73)
    spike_at, hang_at = 2 * int(steps * 0.125), 2 * int(steps * 0.44)  # even: printed steps
    nan_at = 2 * int(steps * 0.28)
    # A hang is detected once the step cadence is known (steps seen over a few reads of the
    # log): a tiny run may hang before that, so it gets no hang.
    hang = steps >= 200
    ckpt_every = max(steps // 6, 10)
    command = [
        sys.executable,
        str(trainer_path()),
        "--out-dir",
        str(out),
        "--max-steps",
        str(steps),
        "--ckpt-every",
        str(ckpt_every),
        "--log-every",
        "2",
        "--eval-every",
        str(steps // 2),
        "--crash-at",
        str(crash_at),
        "--kill-at",
        str(kill_at),
        "--spike-at",
        str(spike_at),
        "--nan-at",
        str(nan_at),
        *(["--hang-at", str(hang_at)] if hang else []),
    ]
    from babysit.config import build_config

    cfg = build_config(
        {
            "run.name": RUN_NAME,
            "run.home": str(home),
            "restart.backoff_s": 1.0,
            "restart.max_restarts": 5,
            "stop.grace_s": 10.0,
            "checkpoint.glob": str(out / "ckpt_*.pt"),
            "hang.kill_after_s": 0.0,  # the demo restarts a hang as soon as it is detected
            # A short run: skip a few steps' data around the NaN, not PaLM's hundreds.
            "rollback.skip_before": 2,
            "rollback.skip_after": 6,
            "rollback.lr_scale": 0.5,
        }
    )
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    console.rule("[bold]babysit demo[/]")
    console.print(
        f"A tiny GPT trains for {steps} steps on the CPU, checkpointing every {ckpt_every}.\n"
        f"Injected faults: a loss spike at step {spike_at}, an NCCL error at step {crash_at}, a "
        f"batch that makes the loss NaN at step {nan_at}, a SIGKILL (as from the OOM killer) "
        f"at step {kill_at}" + (f", a hang at step {hang_at}" if hang else "") + ".\n"
        "babysit flags what it sees, restarts the run from the newest complete checkpoint "
        "after each crash and hang, and rolls back past the NaN, skipping its data.\n"
    )
    sup = Supervisor(cfg, command, RUN_NAME, home, workdir, ConsoleReporter(console))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: sup.request_stop(s))
    began = time.monotonic()
    code = sup.run()
    _summary(console, home, time.monotonic() - began, code)
    return code


def _summary(console: Console, home: Path, wall_s: float, code: ExitCode) -> None:
    with Store.open(home, create=False) as store:
        attempts = store.attempts(RUN_NAME)
        incidents = store.incidents(RUN_NAME)
        diagnoses = store.diagnoses(RUN_NAME)
    print_summary(console, RUN_NAME, home, attempts, incidents, diagnoses, int(code), wall_s)
