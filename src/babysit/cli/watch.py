"""`babysit watch`: the vital signs of a run babysit did not launch, read from its logs.

    babysit watch slurm-1234.out --json        # replay: what would babysit have seen?
    babysit watch --follow slurm-1234.out      # live: incidents go to the store

No restarts: supervise.watch replays or follows the files; this module prints the replay.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from babysit.cli.common import (
    config_option,
    fail,
    home_dir,
    home_option,
    load_config,
    plain_console,
)
from babysit.errors import BabysitError, UsageError
from babysit.store import Store
from babysit.views.console import ConsoleReporter
from babysit.views.safe import markup

if TYPE_CHECKING:
    from babysit.alerts import Alerts
    from babysit.alerts.settings import AlertRule


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
@click.option(
    "--notify",
    "notify",
    multiple=True,
    metavar="URL",
    help="With --follow: send alerts to this apprise URL (a failure pages, an incident warns; "
    "needs babysit[alerts]). Repeatable; replaces [alerts] notify of babysit.toml.",
)
@config_option
def watch_command(
    logs: tuple[Path, ...],
    follow: bool,
    name: str | None,
    home: Path | None,
    as_json: bool,
    notify: tuple[str, ...],
    config_path: Path | None,
) -> None:
    """Read the vital signs of a run babysit did not launch, from its log files.

    \b
    Examples:
      babysit watch slurm-1234.out --json        # replay: what would babysit have seen?
      babysit watch --follow slurm-1234.out      # live: report spikes, NaNs, slowdowns, hangs
      babysit watch -f slurm-1234.out --notify ntfy://ntfy.sh/my-run   # and alert a human

    With --follow, a file that does not exist yet is waited for (a pending job's
    slurm-%j.out), until Ctrl-C.
    """
    from babysit.detect.vitals import VitalsRules
    from babysit.supervise.watch import follow as follow_logs
    from babysit.supervise.watch import replay

    paths = list(logs)
    try:
        # babysit.toml's [hang] and [straggler] (and [alerts] below) apply as under `run`.
        cfg = load_config(config_path, {"alerts.notify": notify or None})
        rules, straggler = VitalsRules(hang=cfg.hang), cfg.straggler
        if follow and as_json:
            raise UsageError(
                "--json prints a replay's report; with --follow, incidents go to "
                "the store: read them with `babysit status RUN --json`"
            )
        if not follow:
            report = replay(paths, rules, straggler=straggler)
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
        say = ConsoleReporter()
        alerts = _alerts(cfg.alerts, run_name, home, say)  # a bad URL: exit 2 now
        if alerts is not None:
            alerts.start()
        with Store.open(home_dir(home)) as store:
            count = follow_logs(
                paths, store, run_name, say, lambda: bool(stop), rules, alerts=alerts,
                straggler=straggler,
            )  # fmt: skip
        if count is None:
            click.echo("babysit: stopped before the log appeared; nothing recorded", err=True)
        else:
            click.echo(
                f"babysit: stopped watching; {count} incident(s) recorded in run {run_name!r}",
                err=True,
            )
    except BabysitError as exc:
        fail(exc)


def _alerts(
    rule: AlertRule,
    run_name: str,
    home: Path | None,
    say: ConsoleReporter,
) -> Alerts | None:
    """The watch's alerts ([alerts] of babysit.toml, or --notify), or None when none are set;
    ConfigError (exit 2) for a URL apprise refuses."""
    import os

    from babysit.alerts import Alerts

    more = f"babysit logbook {run_name}" + (f" --home {home}" if home else "")
    return Alerts.open(rule, run_name, os.uname().nodename, more, None, say, watching=True)


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
