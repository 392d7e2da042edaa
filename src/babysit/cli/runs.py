"""`babysit status` and `babysit logbook`: what the store knows of the runs in a home.

    babysit status                      # every run in the home, one line each
    babysit status train --json         # one run: attempts, causes, recent events
    babysit logbook train --format md   # the chronicle

Both only read the store (views build the documents); neither touches a process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from babysit.cli.common import fail, home_option, open_store, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.store import Store
from babysit.views.document import run_document, supervisor_alive
from babysit.views.render import logbook_markdown, runs_table, status_tables


def run_documents(store: Store, run_name: str | None) -> list[dict[str, Any]]:
    """The document of RUN (a RunNotFound when there is none), or of every run in the store."""
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


@click.command("status")
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
def status_command(run_name: str | None, home: Path | None, as_json: bool) -> None:
    """Live state of RUN (or of every run in the home): attempts, causes, recent events.

    \b
    Example:
      babysit status train --json
    """
    try:
        with open_store(home) as store:
            docs = run_documents(store, run_name)
    except BabysitError as exc:
        fail(exc)
    if as_json:
        out: Any = docs[0] if run_name else {"runs": docs}
        click.echo(json.dumps(out, indent=2))
        return
    console = plain_console()
    if run_name:
        status_tables(docs[0], console)
    elif docs:
        runs_table(docs, console)
    else:
        console.print(f"no runs in {store.home}")


@click.command("logbook")
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
def logbook_command(run_name: str | None, home: Path | None, fmt: str) -> None:
    """The chronicle of RUN: every attempt and event (default: the most recent run).

    \b
    Example:
      babysit logbook train --format md > logbook.md
    """
    try:
        with open_store(home) as store:
            if run_name is None:
                runs = store.runs()
                if not runs:
                    raise UsageError(f"no runs in {store.home}")
                run_name = runs[0]["name"]
            doc = run_documents(store, run_name)[0]
    except BabysitError as exc:
        fail(exc)
    click.echo(json.dumps(doc, indent=2) if fmt == "json" else logbook_markdown(doc), nl=False)
    if fmt == "json":
        click.echo()
