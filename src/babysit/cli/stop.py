"""`babysit stop RUN`: ask the babysit that supervises RUN to stop it, as Ctrl-C would.

    babysit stop train --reason "loss diverged, fixing the LR"   # waits until it is stopped
    babysit stop train --no-wait

The request is a file in the run's directory (supervise/requests.py) that the supervising loop
reads within a second: it passes SIGTERM to the attempt, SIGKILLs what is left after the grace,
records who asked, and exits 5. A second `babysit stop` kills what is left at once. When no
babysit supervises the run any more, nothing is written: this says so, and how to end the
training it left running (its pids are in the store).

Exit codes: 0 stopped (or asked, with --no-wait; or nothing to stop), 2 usage or store error
(no such run), 3 a human must act (no babysit to ask and the training is still running, or the
run did not stop within --timeout).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import psutil

from babysit.cli.common import fail, home_option, open_store
from babysit.cli.duration import DURATION
from babysit.errors import BabysitError, StoreError
from babysit.records import ExitCode
from babysit.store import Store

OVER = ("succeeded", "failed", "stopped")
POLL_S = 0.5


@click.command("stop")
@click.argument("run_name", metavar="RUN")
@home_option
@click.option("--reason", default="", help="Why (it goes to the logbook with your name).")
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Wait until the run is stopped (Ctrl-C stops waiting, not the request).",
)
@click.option(
    "--timeout",
    type=DURATION,
    default=None,
    help="How long to wait, e.g. 2m (default: the run's stop grace + 1m).",
)
def stop_command(
    run_name: str, home: Path | None, reason: str, wait: bool, timeout: float | None
) -> None:
    """Stop RUN: its babysit passes SIGTERM to the training, SIGKILLs it after the grace
    period, records who asked, and exits 5. Run it again to kill at once.

    \b
    Examples:
      babysit stop train --reason "loss diverged, fixing the LR"
      babysit stop train --no-wait

    \b
    Exit codes: 0 stopped (or nothing to stop), 2 no such run,
                3 a human must act (no babysit left to ask, training still running;
                  or not stopped within --timeout).
    """
    from babysit.supervise.requests import StopRequest, write_stop_request
    from babysit.views.document import supervisor_alive

    try:
        with open_store(home) as store:
            run = store.run(run_name)
            attempts = store.attempts(run_name)
            run_dir = store.home / "runs" / run_name
    except BabysitError as exc:
        fail(exc)
    if run["state"] in OVER:
        click.echo(f"run {run_name!r} is already over ({run['state']}): nothing to stop")
        return
    host = os.uname().nodename
    elsewhere = run.get("supervisor_host") not in (None, host)
    if not elsewhere and not supervisor_alive(run, host):
        sys.exit(_no_babysit(run, attempts, host))
    request = StopRequest.now(reason)
    try:
        write_stop_request(run_dir, request)
    except OSError as exc:
        fail(StoreError(f"cannot write the stop request in {run_dir}: {exc}"))
    grace = _grace_s(run)
    where = f"pid {run['supervisor_pid']} on {run['supervisor_host']}"
    click.echo(
        f"asked babysit ({where}) to stop run {run_name!r}: SIGTERM to the training, SIGKILL "
        f"after {grace:g}s if it is still there"
        + (
            " (on another host: babysit there reads the request if the home is shared)"
            if elsewhere
            else ""
        )
    )
    if not wait:
        click.echo(f"follow it with: babysit status {run_name}")
        return
    limit = timeout if timeout is not None else grace + 60.0
    sys.exit(_wait(store.home, run_name, host, elsewhere, limit))


def _wait(home: Path, run_name: str, host: str, elsewhere: bool, limit_s: float) -> int:
    from babysit.views.document import supervisor_alive

    deadline = time.monotonic() + limit_s
    try:
        while True:
            with Store.open(home, create=False) as store:
                run = store.run(run_name)
            if run["state"] in OVER:
                code = run.get("exit_code")
                click.echo(
                    f"run {run_name!r} {run['state']}: {run.get('reason') or ''}"
                    + (f" (babysit exit code {code})" if code is not None else "")
                )
                return 0
            if not elsewhere and not supervisor_alive(run, host):
                click.echo(
                    f"babysit died before it stopped run {run_name!r}; run `babysit stop "
                    f"{run_name}` again to see what is left running",
                    err=True,
                )
                return int(ExitCode.NEEDS_HUMAN)
            if time.monotonic() >= deadline:
                click.echo(
                    f"run {run_name!r} is still {run['state']} after {limit_s:g}s; see "
                    f"`babysit status {run_name}` and `babysit logs {run_name}`",
                    err=True,
                )
                return int(ExitCode.NEEDS_HUMAN)
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        click.echo("not waiting any more; the stop request stands", err=True)
        return 0
    except BabysitError as exc:
        fail(exc)


def _grace_s(run: Mapping[str, Any]) -> float:
    try:
        return float(run["config"]["stop"]["grace_s"])
    except (KeyError, TypeError, ValueError):
        return 30.0


def _no_babysit(run: Mapping[str, Any], attempts: list[dict[str, Any]], host: str) -> int:
    """Nobody to ask: say so, and how to end the training left behind. Returns the exit code."""
    name = run["name"]
    was = (
        f" (babysit pid {run['supervisor_pid']} on {run['supervisor_host']} is gone)"
        if run.get("supervisor_pid")
        else ""
    )
    click.echo(f"no babysit supervises run {name!r} any more{was}: no stop request written")
    left = [a for a in attempts if a.get("ended") is None and a.get("launcher_pid")]
    if not left:
        click.echo(f"no attempt of {name!r} is recorded as running: nothing to stop")
        return 0
    a = left[-1]
    pgid, a_host = a["launcher_pid"], a.get("host") or host
    here = a_host == host
    running = _alive(pgid, a.get("launcher_started")) if here else None
    if running is False:
        click.echo(
            f"attempt {a['number']} (launcher pid {pgid}) is no longer running: nothing to stop"
        )
        return 0
    state = "is still running" if running else f"may still be running on {a_host}"
    click.echo(
        f"attempt {a['number']} {state}: launcher pid {pgid} (it leads process group {pgid})"
        + (f", training pid {a['pid']}" if a.get("pid") else "")
        + ".\nTo end it"
        + ("" if here else f", on {a_host}")
        + f": kill -TERM -- -{pgid}   (then, if still there after the grace: kill -KILL -- -{pgid})"
        + "\nOr supervise it again: run the same `babysit run` command; it re-attaches, then "
        f"`babysit stop {name}`."
    )
    return int(ExitCode.NEEDS_HUMAN)


def _alive(pid: int, started: float | None) -> bool:
    try:
        proc = psutil.Process(int(pid))
        return started is None or abs(proc.create_time() - float(started)) < 1.0
    except psutil.Error:
        return False
