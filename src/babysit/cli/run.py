"""`babysit run`: launch a command and supervise it, restart after restart, to its end.

    babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py --out-dir out
    babysit run --budget gpu_hardware=3 --preflight -- srun python train.py
    babysit run --notify ntfy://ntfy.sh/my-run -- python train.py   # alerts (babysit[alerts])

The flags are overrides of babysit.toml's keys; the exit code says how the run ended
(babysit.records.ExitCode, documented in `babysit --help` and the README).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from babysit.cli.common import config_option, fail, home_option, load_config
from babysit.cli.duration import DURATION
from babysit.errors import BabysitError, UsageError
from babysit.records import ExitCode
from babysit.views.console import ConsoleReporter


@click.command(
    "run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--name", help="Run name (default: derived from the command, e.g. train.py -> train)."
)
@home_option
@config_option
@click.option("--max-restarts", type=int, help="Failed attempts in a row allowed (default 10).")
@click.option(
    "--backoff",
    type=DURATION,
    help="Wait before the first restart (90s, 5m, or seconds); doubles up to "
    "restart.backoff_max_s (default 10s).",
)
@click.option(
    "--grace",
    type=DURATION,
    help="Time between SIGTERM and SIGKILL on stop, e.g. 30s or 2m (default 30s).",
)
@click.option(
    "--checkpoint",
    help="Glob of checkpoints, e.g. 'out/ckpt_*.pt'; the newest "
    "complete one is passed as {checkpoint} and BABYSIT_RESUME_FROM.",
)
@click.option(
    "--resume-args",
    help="Arguments appended only when resuming from a checkpoint, e.g. '--init_from=resume'.",
)
@click.option(
    "--metrics-file",
    help='A JSONL file of metrics the run writes ({"step": 10, "loss": 2.3} per line), '
    "followed like the output.",
)
@click.option(
    "--tensorboard",
    help="A TensorBoard log directory the run writes; its scalars are read as metrics "
    "(needs pip install 'babysit[tensorboard]').",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    default=None,
    help="Do not copy the run's output to this terminal (it is still logged).",
)
@click.option(
    "--validate-checkpoint",
    help="A command that checks one checkpoint ({checkpoint} = its path, else appended); a "
    "non-zero exit passes over it to the one before.",
)
@click.option(
    "--hostfile",
    help="The run's hosts, one per line; each attempt gets a copy without banned hosts "
    "as {hostfile} and BABYSIT_HOSTFILE.",
)
@click.option("--min-nodes", type=int, help="Hosts the run needs (default: all of the hostfile).")
@click.option(
    "--preflight",
    is_flag=True,
    default=None,
    help="Run `babysit doctor`'s checks before each attempt; a failing node is banned.",
)
@click.option(
    "--budget",
    "budgets",
    multiple=True,
    metavar="CATEGORY=N",
    help="Restarts allowed for one failure category within budget.window_s (24h), e.g. "
    "gpu_hardware=3. Repeatable.",
)
@click.option(
    "--notify",
    "notify",
    multiple=True,
    metavar="URL",
    help="Send alerts to this apprise URL (ntfy://, slack://, mailto://, json://...; needs pip "
    "install 'babysit[alerts]'). Repeatable; replaces [alerts] notify of babysit.toml.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run_command(
    name: str | None,
    home: Path | None,
    config_path: Path | None,
    max_restarts: int | None,
    backoff: float | None,
    grace: float | None,
    checkpoint: str | None,
    resume_args: str | None,
    metrics_file: str | None,
    tensorboard: str | None,
    quiet: bool | None,
    validate_checkpoint: str | None,
    hostfile: str | None,
    min_nodes: int | None,
    preflight: bool | None,
    budgets: tuple[str, ...],
    notify: tuple[str, ...],
    command: tuple[str, ...],
) -> None:
    """Launch COMMAND and keep it running: restart from checkpoints, stop on bugs, log it all.

    \b
    Example:
      babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py --out-dir out
    """
    from babysit.supervise.run import Supervisor

    try:
        if not command:
            raise UsageError("missing command: babysit run [OPTIONS] -- COMMAND [ARGS]...")
        overrides = {
            "run.name": name,
            "run.home": str(home) if home else None,
            "run.resume_args": resume_args,
            "run.metrics_file": metrics_file,
            "run.tensorboard": tensorboard,
            "run.echo": (not quiet) if quiet else None,
            "restart.max_restarts": max_restarts,
            "restart.backoff_s": backoff,
            "stop.grace_s": grace,
            "checkpoint.glob": checkpoint,
            "checkpoint.validate": validate_checkpoint,
            "nodes.hostfile": hostfile,
            "nodes.min_nodes": min_nodes,
            "health.preflight": preflight,
            "alerts.notify": notify or None,
        }
        overrides.update(_budget_flags(budgets))
        if backoff is not None:
            # A --backoff above the configured cap (babysit.toml or the default) lifts the cap.
            cap = load_config(config_path, {}).restart.backoff_max_s
            if backoff > cap:
                overrides["restart.backoff_max_s"] = backoff
        cfg = load_config(config_path, overrides)
        from babysit.config import derive_run_name

        run_name = cfg.run.name or derive_run_name(command)
        sup = Supervisor(
            cfg, list(command), run_name, Path(cfg.run.home), Path.cwd(), ConsoleReporter()
        )
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: sup.request_stop(s))
        # A closed terminal (ssh dropped) must not end the supervision; the run never sees it.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        began = time.monotonic()
        code = sup.run()
        _summary(Path(cfg.run.home), run_name, int(code), time.monotonic() - began)
    except BabysitError as exc:
        fail(exc)
    except Exception:
        # A bug in babysit. The training runs in its own session and goes on without us.
        traceback.print_exc()
        click.echo(
            "babysit: internal error (a bug; please report the traceback above). The training, "
            "if it was started, is still running: run the same `babysit run` command again to "
            "re-attach to it.",
            err=True,
        )
        sys.exit(int(ExitCode.INTERNAL))
    sys.exit(int(code))


def _summary(home: Path, run_name: str, code: int, wall_s: float) -> None:
    """The run's summary on stderr (attempts, causes, steps redone, time lost), as the demo
    prints it; nothing when the store cannot be read (babysit already said why)."""
    from babysit.store import Store
    from babysit.views.summary import print_summary

    try:
        with Store.open(home, create=False) as store:
            attempts = store.attempts(run_name)
            incidents = store.incidents(run_name)
            diagnoses = store.diagnoses(run_name)
    except BabysitError:
        return
    if attempts:
        console = Console(stderr=True, highlight=False, soft_wrap=True)
        with contextlib.suppress(OSError):  # a closed terminal: the exit code still tells
            print_summary(console, run_name, home, attempts, incidents, diagnoses, code, wall_s)


def _budget_flags(budgets: tuple[str, ...]) -> dict[str, Any]:
    """--budget CATEGORY=N flags as config overrides: {"budget.CATEGORY": N}."""
    out: dict[str, Any] = {}
    for item in budgets:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise UsageError(f"--budget {item!r}: expected CATEGORY=N, e.g. gpu_hardware=3")
        out[f"budget.{key.strip()}"] = int(value)
    return out
