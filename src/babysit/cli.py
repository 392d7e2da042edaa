"""The `babysit` command line.

    babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py --out-dir out
    babysit status [RUN] [--json]
    babysit logbook [RUN] [--format md|json]
    babysit demo

Errors babysit expects (a bad flag, a missing command, an unwritable home) print one line and
exit with a documented code; only a bug in babysit prints a traceback.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import click
from rich.console import Console
from rich.markup import escape

from babysit import __version__
from babysit.config import derive_run_name, load_config
from babysit.errors import BabysitError, UsageError
from babysit.records import ExitCode
from babysit.store import Store
from babysit.views.console import ConsoleReporter
from babysit.views.document import run_document, supervisor_alive
from babysit.views.render import logbook_markdown, runs_table, status_tables

F = TypeVar("F", bound=Callable[..., Any])


def _fail(exc: BabysitError) -> None:
    """One line and exit 2: babysit's own expected errors (bad flags or config, a store it
    cannot use) all need the operator to change something before trying again."""
    click.echo(f"babysit: error: {exc}", err=True)
    sys.exit(int(ExitCode.USAGE))


def home_option(f: F) -> F:
    return click.option(
        "--home",
        type=click.Path(path_type=Path),
        default=None,
        help="babysit's home directory (the store, the logs). Default: .babysit in the working "
        "directory, or [run] home in babysit.toml.",
    )(f)


def _home(home: Path | None) -> Path:
    if home is not None:
        return home
    try:
        return Path(load_config(None, {}).run.home)
    except BabysitError:
        return Path(".babysit")


class _Commands(click.Group):
    """Commands whose module is imported only when they run (or --help lists them): the
    doctor's checks are not every command's start-up cost."""

    LAZY: ClassVar[dict[str, tuple[str, str]]] = {"doctor": ("babysit.doctor", "doctor_command")}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            module, attr = self.LAZY[name]
            command: click.Command = getattr(importlib.import_module(module), attr)
            return command
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
    """


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--name", help="Run name (default: derived from the command, e.g. train.py -> train)."
)
@home_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="Config file (default: ./babysit.toml when present).",
)
@click.option("--max-restarts", type=int, help="Failed attempts in a row allowed (default 10).")
@click.option(
    "--backoff",
    type=float,
    help="Seconds before the first restart; doubles up to restart.backoff_max_s (default 10).",
)
@click.option(
    "--grace", type=float, help="Seconds between SIGTERM and SIGKILL on stop (default 30)."
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
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(
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
    command: tuple[str, ...],
) -> None:
    """Launch COMMAND and keep it running: restart from checkpoints, stop on bugs, log it all.

    \b
    Example:
      babysit run --checkpoint 'out/ckpt_*.pt' -- python train.py --out-dir out
    """
    from babysit.supervise.supervisor import Supervisor

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
        }
        overrides.update(_budget_flags(budgets))
        if backoff is not None:
            # A --backoff above the configured cap (babysit.toml or the default) lifts the cap.
            cap = load_config(config_path, {}).restart.backoff_max_s
            if backoff > cap:
                overrides["restart.backoff_max_s"] = backoff
        cfg = load_config(config_path, overrides)
        run_name = cfg.run.name or derive_run_name(command)
        sup = Supervisor(
            cfg, list(command), run_name, Path(cfg.run.home), Path.cwd(), ConsoleReporter()
        )
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: sup.request_stop(s))
        # A closed terminal (ssh dropped) must not end the supervision; the run never sees it.
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        code = sup.run()
    except BabysitError as exc:
        _fail(exc)
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


def _budget_flags(budgets: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in budgets:
        key, sep, value = item.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise UsageError(f"--budget {item!r}: expected CATEGORY=N, e.g. gpu_hardware=3")
        out[f"budget.{key.strip()}"] = int(value)
    return out


def _open_store(home: Path | None) -> Store:
    return Store.open(_home(home), create=False)


def _docs(store: Store, run_name: str | None) -> list[dict[str, Any]]:
    runs = [store.run(run_name)] if run_name else store.runs()
    host = os.uname().nodename
    return [
        run_document(
            r,
            store.attempts(r["name"]),
            store.events(r["name"]),
            supervisor_alive(r, host),
            store.incidents(r["name"]),
            store.diagnoses(r["name"]),
            store.stacks(r["name"]),
        )
        for r in runs
    ]


@cli.command()
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def status(run_name: str | None, home: Path | None, as_json: bool) -> None:
    """Live state of RUN (or of every run in the home): attempts, causes, recent events.

    \b
    Example:
      babysit status train --json
    """
    try:
        with _open_store(home) as store:
            docs = _docs(store, run_name)
    except BabysitError as exc:
        _fail(exc)
    if as_json:
        out: Any = docs[0] if run_name else {"runs": docs}
        click.echo(json.dumps(out, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    if run_name:
        status_tables(docs[0], console)
    elif docs:
        runs_table(docs, console)
    else:
        console.print(f"no runs in {store.home}")


@cli.command()
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
def logbook(run_name: str | None, home: Path | None, fmt: str) -> None:
    """The chronicle of RUN: every attempt and event (default: the most recent run).

    \b
    Example:
      babysit logbook train --format md > logbook.md
    """
    try:
        with _open_store(home) as store:
            if run_name is None:
                runs = store.runs()
                if not runs:
                    raise UsageError(f"no runs in {store.home}")
                run_name = runs[0]["name"]
            doc = _docs(store, run_name)[0]
    except BabysitError as exc:
        _fail(exc)
    click.echo(json.dumps(doc, indent=2) if fmt == "json" else logbook_markdown(doc), nl=False)
    if fmt == "json":
        click.echo()


@cli.command()
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
def watch(
    logs: tuple[Path, ...], follow: bool, name: str | None, home: Path | None, as_json: bool
) -> None:
    """Read the vital signs of a run babysit did not launch, from its log files.

    \b
    Examples:
      babysit watch slurm-1234.out --json        # replay: what would babysit have seen?
      babysit watch --follow slurm-1234.out      # live: report spikes, NaNs, slowdowns, hangs
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
                click.echo(json.dumps(report, indent=2))
            else:
                _print_replay(report)
            return
        stop: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda s, _f: stop.append(s))
        run_name = name or derive_run_name([paths[0].stem])  # slurm-1234.out -> slurm-1234
        with Store.open(_home(home)) as store:
            count = follow_logs(paths, store, run_name, ConsoleReporter(), lambda: bool(stop))
        click.echo(
            f"babysit: stopped watching; {count} incident(s) recorded in run {run_name!r}",
            err=True,
        )
    except BabysitError as exc:
        _fail(exc)


def _seen_before(home: Path | None, fingerprint: str | None) -> list[dict[str, Any]]:
    """Earlier verdicts with this fingerprint from the home's store; [] without a store."""
    if fingerprint is None:
        return []
    try:
        with Store.open(_home(home), create=False) as store:
            return store.seen_before(fingerprint)
    except BabysitError:
        return []


@cli.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (stable keys).")
@click.option(
    "--rules",
    "rules",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Your team's rules file, tried before the shipped knowledge (repeatable). Default: "
    "[triage] rules in babysit.toml.",
)
@home_option
def triage(
    logs: tuple[str, ...], as_json: bool, rules: tuple[Path, ...], home: Path | None
) -> None:
    """Say what killed a run: the root cause among every rank's errors, whom to blame, whether
    a restart can help, and what to do.

    LOG is a log file (plain or .gz), a directory of per-rank logs, or - for stdin; several
    are read as one run. Exits 0 once triaged (even when the cause is unknown), 2 on a
    missing file or a bad rules file.

    \b
    Examples:
      babysit triage slurm-1234.out
      babysit triage logs/ --json | jq .category
      journalctl -k --since -1h | babysit triage - train.log
    """
    from babysit.triage import load_knowledge, triage_files
    from babysit.views.triage import diagnosis_document, print_diagnosis, seen_before_line

    try:
        rule_files = list(rules)
        if not rule_files:
            configured = load_config(None, {}).triage.rules
            if configured:
                rule_files = [Path(configured)]
        report = triage_files(list(logs), load_knowledge(rule_files))
    except BabysitError as exc:
        _fail(exc)
    d = report.diagnosis
    seen = _seen_before(home, d.fingerprint)
    doc = diagnosis_document(d, seen)
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    import time

    print_diagnosis(
        doc,
        Console(highlight=False, soft_wrap=True),
        seen_before_line(seen, d.suspect.host, time.time()),
        len(report.files),
        report.lines,
        report.skipped,
    )


@cli.group()
def nodes() -> None:
    """The node registry: failures blamed on each host, health checks, bans.

    \b
    Examples:
      babysit nodes list
      babysit nodes ban gpu-17 --reason "Xid 79 twice" --hours 48
      babysit nodes unban gpu-17 --reason "GPU replaced"
    """


@nodes.command("list")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def nodes_list(home: Path | None, as_json: bool) -> None:
    """Every host babysit knows: banned, on probation, or ok, with the reason."""
    from babysit.views.nodes import nodes_document, nodes_table

    try:
        window_s = load_config(None, {}).nodes.window_s
    except BabysitError:
        window_s = 86400.0
    try:
        with _open_store(home) as store:
            docs = nodes_document(store.node_events(), store.bans(), time.time(), window_s)
    except BabysitError as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps({"nodes": docs}, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    if docs:
        console.print(nodes_table(docs, window_s))
    else:
        console.print("no nodes recorded yet: no failure was blamed on a host, none was banned")


@nodes.command("ban")
@click.argument("host")
@home_option
@click.option("--reason", required=True, help="Why (it goes to the logbook and `nodes list`).")
@click.option("--hours", type=float, default=0.0, help="How long (default: until unbanned).")
def nodes_ban(host: str, home: Path | None, reason: str, hours: float) -> None:
    """Ban HOST: the next attempt of every run in this home leaves it out."""
    from babysit.records import Ban

    now = time.time()
    try:
        if hours < 0:
            raise UsageError(f"--hours must be >= 0, got {hours:g}")
        with Store.open(_home(home)) as store:
            expires = now + hours * 3600 if hours > 0 else None
            probation = load_config(None, {}).nodes.probation_s
            store.add_ban(Ban(host, reason, now, expires, probation, "operator"))
    except BabysitError as exc:
        _fail(exc)
    until = f"for {hours:g}h" if hours > 0 else "until `babysit nodes unban`"
    click.echo(f"banned {host} {until}: {reason}")


@nodes.command("unban")
@click.argument("host")
@home_option
@click.option("--reason", default="unbanned by the operator", help="Why (for the logbook).")
def nodes_unban(host: str, home: Path | None, reason: str) -> None:
    """Lift HOST's ban. It stays on probation: one more failure bans it again."""
    now = time.time()
    try:
        with _open_store(home) as store:
            if not store.active_bans(now) or host not in {b.host for b in store.active_bans(now)}:
                raise UsageError(f"{host} is not banned (see `babysit nodes list`)")
            store.lift_bans(host, now, reason)
    except BabysitError as exc:
        _fail(exc)
    click.echo(f"unbanned {host}: {reason}")


def _print_replay(report: dict[str, Any]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    prog = report["progress"]
    console.print(
        f"{', '.join(report['files'])}: {prog['lines']} lines, steps {prog['first_step']}→"
        f"{prog['last_step']}, {prog['metric_records']} metric lines"
    )
    if report["metrics"]:
        console.print("metrics: " + ", ".join(report["metrics"][:40]))
    if not report["incidents"]:
        console.print("[green]no incidents[/]")
    for inc in report["incidents"]:
        console.print(f"[yellow]{inc['kind']}[/] (line {inc['line']}): {escape(inc['message'])}")
    if report.get("triage"):
        from babysit.views.triage import print_diagnosis

        console.print("[bold]triage of the failure in the log:[/]")
        print_diagnosis(report["triage"], console)


@cli.command()
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
def demo(workdir: Path, steps: int) -> None:
    """Train a tiny GPT on the CPU under babysit, through injected faults, and show recovery.

    \b
    Example:
      babysit demo
    """
    from babysit.demo import run_demo

    try:
        code = run_demo(workdir, steps)
    except BabysitError as exc:
        _fail(exc)
    sys.exit(int(code))


def main() -> None:
    cli()
