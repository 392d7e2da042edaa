"""`babysit watch`: the vital signs of a run babysit did not launch, read from its logs.

    babysit watch slurm-1234.out --json        # replay: what would babysit have seen?
    babysit watch --follow slurm-1234.out      # live: incidents go to the store

No restarts: supervise.watch replays or follows the files; this module prints the replay.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import click

from babysit.cli.common import fail, home_dir, home_option, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.store import Store
from babysit.views.console import ConsoleReporter
from babysit.views.safe import markup


@click.command("watch")
@click.argument("logs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Keep watching as the files grow; record incidents in the store (hangs are detected "
    "only then).",
)
@click.option("--name", help="Run name in the store with --follow (default: from the file name).")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (replay only).")
def watch_command(
    logs: tuple[Path, ...], follow: bool, name: str | None, home: Path | None, as_json: bool
) -> None:
    """Read the vital signs of a run babysit did not launch, from its log files.

    \b
    Examples:
      babysit watch slurm-1234.out --json        # replay: what would babysit have seen?
      babysit watch --follow slurm-1234.out      # live: report spikes, NaNs, slowdowns, hangs

    With --follow, a file that does not exist yet is waited for (a pending job's
    slurm-%j.out), until Ctrl-C.
    """
    from babysit.supervise.watch import follow as follow_logs
    from babysit.supervise.watch import replay

    paths = list(logs)
    try:
        if follow and as_json:
            raise UsageError(
                "--json prints a replay's report; with --follow, incidents go to "
                "the store: read them with `babysit status RUN --json`"
            )
        if not follow:
            report = replay(paths)
            if as_json:
                click.echo(json.dumps(report, indent=2, allow_nan=False))
            else:
                _print_replay(report)
            return
        stop: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: stop.append(s))
        from babysit.config import derive_run_name

        run_name = name or derive_run_name([paths[0].stem])  # slurm-1234.out -> slurm-1234
        with Store.open(home_dir(home)) as store:
            count = follow_logs(paths, store, run_name, ConsoleReporter(), lambda: bool(stop))
        if count is None:
            click.echo("babysit: stopped before the log appeared; nothing recorded", err=True)
        else:
            click.echo(
                f"babysit: stopped watching; {count} incident(s) recorded in run {run_name!r}",
                err=True,
            )
    except BabysitError as exc:
        fail(exc)


def _print_replay(report: dict[str, Any]) -> None:
    console = plain_console()
    prog = report["progress"]
    console.print(
        f"{markup(', '.join(report['files']))}: {prog['lines']} lines, steps {prog['first_step']}→"
        f"{prog['last_step']}, {prog['metric_records']} metric lines"
    )
    if report["metrics"]:
        console.print("metrics: " + markup(", ".join(report["metrics"][:40])))
    if not report["incidents"]:
        console.print("[green]no incidents[/]")
    for inc in report["incidents"]:
        console.print(f"[yellow]{inc['kind']}[/] (line {inc['line']}): {markup(inc['message'])}")
    if report.get("triage"):
        from babysit.views.triage import print_diagnosis

        console.print("[bold]triage of the failure in the log:[/]")
        print_diagnosis(report["triage"], console)
