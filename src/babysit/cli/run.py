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
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from babysit.cli.common import config_option, fail, home_option, load_config
from babysit.cli.duration import DURATION
from babysit.errors import BabysitError, UsageError
from babysit.records import ExitCode, Level
from babysit.views.console import ConsoleReporter, LiveStatus


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
@click.option(
    "--status/--no-status",
    "status_line",
    default=None,
    help="The live status line at the bottom of the terminal (default: on when stdout is a "
    "terminal; --status elsewhere prints a plain status line every 5 minutes).",
)
@click.option(
    "--launcher",
    type=click.Choice(["local", "slurm"]),
    help="How attempts start: local (this box), or slurm (an sbatch job per attempt from a "
    "login node; a step of the job inside an allocation). Default: local, or slurm for a "
    "command that starts with srun inside an allocation.",
)
@click.option("--nodes", "slurm_nodes", type=int, help="slurm: nodes the job runs on (sbatch -N).")
@click.option("--partition", help="slurm: the partition (sbatch -p).")
@click.option(
    "--time", "slurm_time", help="slurm: the time limit per job (sbatch -t), e.g. 4:00:00."
)
@click.option(
    "--spares",
    type=int,
    default=0,
    help="slurm: ask for N+SPARES nodes, run on N; a bad node is left out of the next attempt "
    "inside the same allocation (srun --exclude), without queueing again.",
)
@click.option(
    "--sbatch-arg",
    "sbatch_args",
    multiple=True,
    metavar="ARG",
    help="slurm: one more sbatch argument, e.g. --sbatch-arg=--gres=gpu:8. Repeatable.",
)
@click.option(
    "--drain",
    is_flag=True,
    help="slurm: drain a node babysit bans (scontrol update State=DRAIN, the triage as the "
    "reason; needs the rights).",
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
    status_line: bool | None,
    launcher: str | None,
    slurm_nodes: int | None,
    partition: str | None,
    slurm_time: str | None,
    spares: int,
    sbatch_args: tuple[str, ...],
    drain: bool,
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
        say = ConsoleReporter()
        status = LiveStatus.open(status_line, say, command, cfg.run.total_steps)
        from babysit.engines import engine_for  # torchrun's engine for `torchrun ...`

        slurm = _slurm_engine(
            launcher, command, slurm_nodes, partition, slurm_time, spares, sbatch_args, drain,
            Path(cfg.run.home) / "runs" / run_name,
        )
        one_file = len(command) == 1 and "/" not in command[0] and Path(command[0]).is_file()
        if slurm is not None and one_file:  # `-- my_job.sbatch`: the file here, not on PATH
            command = (f"./{command[0]}",)
        sup = Supervisor(
            cfg, list(command), run_name, Path(cfg.run.home), Path.cwd(), say, status=status,
            engine=slurm or engine_for(command),
        )
        if slurm is not None:
            # While it waits for an allocation (--spares), Ctrl-C must still stop it.
            slurm.stopping = lambda: bool(sup.ctx.stop_signals)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: sup.request_stop(s))
        if slurm is not None:

            def terminated(s: int, _f: object) -> None:
                sup.request_stop(s)
                # Slurm's time limit without a warning signal: requeue at once (KillWait).
                threading.Thread(target=slurm.on_stop_signal, daemon=True).start()

            signal.signal(signal.SIGTERM, terminated)
            # Slurm's warning before the time limit (--signal=B:USR1@90 reaches babysit, the
            # batch shell): passed to the trainer like a stop, so it checkpoints; then requeued.
            def warned(s: int, _f: object) -> None:
                slurm.warned = True
                sup.request_stop(s)

            signal.signal(signal.SIGUSR1, warned)
        # A closed terminal (ssh dropped) must not end the supervision; the run never sees it.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        began = time.monotonic()
        code = ExitCode.INTERNAL
        try:
            code = sup.run()
        finally:
            status.close()  # the terminal as it was, before the summary
            if slurm is not None:
                done = slurm.finish(code)  # requeue (inside an allocation), release spares
                if done:
                    say(Level.INFO, done)
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


def _slurm_engine(
    launcher: str | None,
    command: tuple[str, ...],
    nodes: int | None,
    partition: str | None,
    time_limit: str | None,
    spares: int,
    sbatch_args: tuple[str, ...],
    drain: bool,
    run_dir: Path,
) -> Any:
    """The Slurm engine when --launcher slurm (or srun inside an allocation) asks for one."""
    import os

    from babysit.engines.slurm import SlurmRequest, slurm_engine

    slurm_flags = nodes is not None or partition or time_limit or spares or sbatch_args or drain
    if slurm_flags and launcher != "slurm":
        raise UsageError(
            "--nodes, --partition, --time, --spares, --sbatch-arg and --drain need "
            "--launcher slurm"
        )
    if spares < 0 or (nodes is not None and nodes < 1):
        raise UsageError("--nodes must be >= 1 and --spares >= 0")
    request = SlurmRequest(nodes, partition, time_limit, spares, sbatch_args, drain)
    return slurm_engine(launcher, command, os.environ, request, run_dir)


def _budget_flags(budgets: tuple[str, ...]) -> dict[str, Any]:
    """--budget CATEGORY=N flags as config overrides: {"budget.CATEGORY": N}."""
    out: dict[str, Any] = {}
    for item in budgets:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise UsageError(f"--budget {item!r}: expected CATEGORY=N, e.g. gpu_hardware=3")
        out[f"budget.{key.strip()}"] = int(value)
    return out
