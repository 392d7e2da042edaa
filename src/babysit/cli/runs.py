"""`babysit status` and `babysit logbook`: what the store knows of the runs in a home.

    babysit status                      # every run in the home, one line each
    babysit status train --json         # one run: attempts, causes, recent events
    babysit logbook train --format md   # the chronicle (md, html: one self-contained file, json)

Both only read the store (views build the documents); neither touches a process.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import click

from babysit.cli.common import fail, home_option, open_store, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.store import Store
from babysit.views.chronicle import LogbookRows, chronicle
from babysit.views.chronicle_md import chronicle_markdown
from babysit.views.document import run_document, supervisor_alive
from babysit.views.live import live_document, live_lines, total_from_bar, total_from_command
from babysit.views.render import logbook_markdown, runs_table, status_tables

OVER = ("succeeded", "failed", "stopped")


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


def live_status(store: Store, run_name: str) -> dict[str, Any]:
    """views.live's document of the run: its total steps from babysit.toml's [run]
    total_steps, the command's flags or the last progress bar in its current attempt's log."""
    run, attempts = store.run(run_name), store.attempts(run_name)
    logs = _attempt_logs(store.home, run_name, attempts[-1]) if attempts else []
    config_total = ((run.get("config") or {}).get("run") or {}).get("total_steps")
    total = (
        (config_total if isinstance(config_total, int) and config_total > 0 else None)
        or total_from_command(run.get("command") or [])
        or next((t for t in (total_from_bar(_tail_text(f)) for f in logs) if t), None)
    )
    mtimes = [f.stat().st_mtime for f in logs if f.is_file()]
    return live_document(
        attempts,
        store.metrics(run_name, limit=2_000),
        store.incidents(run_name),
        time.time(),
        total,
        max(mtimes) if mtimes else None,
    )


def _attempt_logs(home: Path, run_name: str, row: dict[str, Any]) -> list[Path]:
    base = row.get("log_dir") or home / "runs" / run_name / f"attempt-{row['number']:04d}"
    return [Path(base) / "stdout.log", Path(base) / "stderr.log"]


def _tail_text(path: Path, size: int = 64 * 1024) -> str:
    """The end of a log, for the last progress bar in it (never more than `size` bytes)."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(fh.seek(0, os.SEEK_END) - size, 0))
            return fh.read(size).decode("utf-8", "replace")
    except OSError:
        return ""


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
            for doc in docs:
                doc["live"] = live_status(store, doc["run"])
    except BabysitError as exc:
        fail(exc)
    if as_json:
        out: Any = docs[0] if run_name else {"runs": docs}
        click.echo(json.dumps(out, indent=2, allow_nan=False))
        return
    console = plain_console()
    if run_name:
        doc = docs[0]
        live = live_lines(doc["live"]) if doc["state"] not in OVER else []
        status_tables(doc, console, live=live)
    elif docs:
        runs_table(docs, console)
    else:
        console.print(f"no runs in {store.home}")


def run_chronicle(store: Store, run_name: str) -> dict[str, Any]:
    """views.chronicle's chronicle of RUN, from every row the store has of it (the metrics:
    the newest METRIC_ROWS samples)."""
    return chronicle(
        LogbookRows(
            store.run(run_name),
            store.attempts(run_name),
            store.events(run_name),
            store.incidents(run_name),
            store.diagnoses(run_name),
            store.stacks(run_name),
            store.metrics(run_name, limit=METRIC_ROWS),
        )
    )


METRIC_ROWS = 20_000


@click.command("logbook")
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json"]),
    default="md",
    show_default=True,
    help="md: Markdown; html: one self-contained page (inline CSS and SVG charts, nothing "
    "fetched, printable); json: the run's document with its `chronicle`.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (= --format json).")
def logbook_command(run_name: str | None, home: Path | None, fmt: str, as_json: bool) -> None:
    """The chronicle of RUN (default: the most recent run): a dated timeline of its attempts,
    the incidents with their triage, evidence, stacks and vital signs, every decision with its
    reason, and the notes people added (`babysit note`).

    \b
    Examples:
      babysit logbook train > logbook.md
      babysit logbook train --format html > logbook.html
      babysit logbook train --json | jq '.chronicle.incidents[] | {id, title}'
    """
    from babysit.views.chronicle_html import logbook_html

    if as_json:
        fmt = "json"
    try:
        with open_store(home) as store:
            if run_name is None:
                runs = store.runs()
                if not runs:
                    raise UsageError(f"no runs in {store.home}")
                run_name = runs[0]["name"]
            doc = run_documents(store, run_name)[0]
            chron = run_chronicle(store, run_name)
    except BabysitError as exc:
        fail(exc)
    if fmt == "json":
        click.echo(json.dumps({**doc, "chronicle": chron}, indent=2, allow_nan=False))
    elif fmt == "html":
        click.echo(logbook_html(doc, chron), nl=False)
    else:
        click.echo(logbook_markdown(doc, chronicle_markdown(chron)), nl=False)
