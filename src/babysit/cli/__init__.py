"""The `babysit` command line: the group, its exit codes, and one module per command group.

    babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py --out-dir out
    babysit status [RUN] [--json]
    babysit logbook [RUN] [--format md|json]
    babysit demo

    run.py     run                  watch.py   watch          triage.py  triage
    runs.py    status, logbook      nodes.py   nodes ...      demo.py    demo
    doctor.py  doctor (imported only when it runs)            common.py  --home, errors

Errors babysit expects (a bad flag, a missing command, an unwritable home) print one line and
exit with a documented code; only a bug in babysit prints a traceback. Commands import the
heavy parts (the supervisor, triage) when they run, so `babysit --help` stays fast.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import Any, ClassVar, NoReturn

import click

from babysit import __version__
from babysit.cli.demo import demo_command
from babysit.cli.nodes import nodes_command
from babysit.cli.note import note_command
from babysit.cli.notify import notify_command
from babysit.cli.report import report_command
from babysit.cli.run import run_command
from babysit.cli.runs import logbook_command, status_command
from babysit.cli.triage import triage_command
from babysit.cli.watch import watch_command

__all__ = ["cli", "main"]


class _Commands(click.Group):
    """Commands whose module is imported only when they run (or --help lists them): the
    doctor's checks are not every command's start-up cost."""

    LAZY: ClassVar[dict[str, tuple[str, str]]] = {
        "doctor": ("babysit.cli.doctor", "doctor_command"),
        "logs": ("babysit.cli.logs", "logs_command"),
        "rebuild": ("babysit.cli.rebuild", "rebuild_command"),
        "stop": ("babysit.cli.stop", "stop_command"),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """`babysit --help | head -1`: the group's own --help and --version, the same way."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError:
            _closed_pipe()

    def invoke(self, ctx: click.Context) -> object:
        """Every command: a reader that closed the pipe early (`| head`) is no error."""
        stdout_was_null = _is_devnull(1)
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _closed_pipe()
        except SystemExit as exc:
            # rich handles a closed pipe itself: /dev/null onto stdout, then SystemExit(1).
            if exc.code == 1 and not stdout_was_null and _is_devnull(1):
                _closed_pipe()
            raise

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            module, attr = self.LAZY[name]
            command: click.Command = getattr(importlib.import_module(module), attr)
            return command
        return super().get_command(ctx, name)


@click.group(
    cls=_Commands,
    commands=[
        demo_command,
        logbook_command,
        nodes_command,
        note_command,
        notify_command,
        report_command,
        run_command,
        status_command,
        triage_command,
        watch_command,
    ],
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="babysit")
def cli() -> None:
    """babysit: supervise a training run so nobody has to at 4am.

    \b
    Exit codes of `babysit run`:
      0  the command finished successfully
      1  a bug in babysit (please report it with the traceback)
      2  usage, configuration or store error (bad flag, command not found, home not
         writable, run already supervised)
      3  gave up: a human must fix code, config or data first (do not requeue as is)
      4  gave up after the restart budget on transient failures (a requeue may help)
      5  stopped by the operator (SIGINT/SIGTERM, e.g. Ctrl-C or scancel)

    \b
    Any command whose output is closed early (`babysit triage LOG | head -1`) stops
    quietly with exit code 141 (128 + SIGPIPE), as other Unix tools do.
    """


def main() -> None:
    cli()


CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `yes | head -1`'s `yes`


def _is_devnull(fd: int) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(os.devnull))
    except OSError:
        return False


def _closed_pipe() -> NoReturn:
    """Exit quietly with CLOSED_PIPE: no traceback, and no second error when Python flushes
    stdout at exit (it now goes to /dev/null)."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(CLOSED_PIPE)
