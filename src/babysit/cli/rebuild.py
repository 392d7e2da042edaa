"""`babysit rebuild`: the store written again from its JSONL mirror, after babysit.db was deleted,
emptied or damaged.

    babysit rebuild                    # the home of this directory (.babysit, or [run] home)
    babysit rebuild --home /scratch/me/.babysit --json

The old database (and its -wal, -shm) is moved aside as babysit.db.bad-TIMESTAMP, never deleted;
events.jsonl is replayed into a fresh one (store/rebuild.py says what comes back and what not).
A babysit supervising a run of this home meanwhile notices within seconds and writes its own run
into the rebuilt store.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import click

from babysit.cli.common import fail, home_dir, home_option
from babysit.errors import BabysitError


@click.command("rebuild")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def rebuild_command(home: Path | None, as_json: bool) -> None:
    """Rebuild babysit.db from events.jsonl (after it was deleted, emptied or damaged).

    \b
    The old database is moved aside (babysit.db.bad-TIMESTAMP), never deleted.
    Runs, attempts, events and incidents come back; metrics samples, stack reports,
    triage documents and the node registry do not (events.jsonl does not hold them).

    \b
    Example:
      babysit rebuild --home .babysit
    """
    from babysit.store.home import home_mode
    from babysit.store.rebuild import NOT_REBUILT, rebuild

    path = home_dir(home).expanduser()
    try:
        mode = home_mode(os.environ)
        live = supervised_runs(path)
        done = rebuild(path, mode)
    except BabysitError as exc:
        fail(exc)
    if as_json:
        doc = {
            "db": str(done.db),
            "moved_aside": [str(p) for p in done.moved_aside],
            "runs": done.runs,
            "attempts": done.attempts,
            "events": done.events,
            "skipped_lines": done.skipped,
            "supervised_runs": live,
        }
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(
        f"rebuilt {done.db} from events.jsonl: {done.runs} run(s), {done.attempts} attempt(s), "
        f"{done.events} event(s)"
    )
    if done.moved_aside:
        click.echo(f"the old database is kept as {done.moved_aside[0]}")
    if done.skipped:
        click.echo(f"{done.skipped} unreadable line(s) of events.jsonl were skipped")
    click.echo(f"not rebuilt (events.jsonl does not hold them): {NOT_REBUILT}")
    for name in live:
        click.echo(
            f"run {name!r} is supervised by a babysit right now: it notices within seconds and "
            "writes what it knows of its run into the rebuilt store"
        )


def supervised_runs(home: Path) -> list[str]:
    """Runs of the home whose lock a live babysit holds."""
    out = []
    for lock in sorted((home / "runs").glob("*/supervisor.lock")):
        try:
            with lock.open("a") as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:
                    out.append(lock.parent.name)
        except OSError:
            continue
    return out
