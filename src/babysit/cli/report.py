"""`babysit report`: where a run's time went (goodput), or the nodes of a whole home.

    babysit report train                    # productive vs lost time, by category and cause
    babysit report train --gpus 64 --json   # with GPU-hours lost, for scripts
    babysit report train --plot time.svg    # the timeline as a stacked bar
    babysit report --nodes                  # failures per node across runs, lemons, bans

Only reads the store; views/goodput.py computes, views/goodput_render.py draws the tables,
views/goodput_svg.py the plot.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from babysit.cli.common import fail, home_option, open_store, plain_console
from babysit.errors import BabysitError, UsageError
from babysit.views.goodput import goodput_document
from babysit.views.goodput_nodes import nodes_report
from babysit.views.goodput_render import goodput_tables, nodes_report_table
from babysit.views.goodput_svg import goodput_svg


def _plot_path(plot: Path | None) -> None:
    """An SVG only: refused before anything is read, with what to do instead."""
    if plot is None:
        return
    suffix = plot.suffix.lower()
    if suffix == ".png":
        raise UsageError(
            f"--plot {plot}: babysit writes SVG only (a PNG would need an imaging library); "
            f"use --plot {plot.with_suffix('.svg')} and convert it if you must "
            f"(rsvg-convert {plot.with_suffix('.svg')} -o {plot})"
        )
    if suffix != ".svg":
        raise UsageError(f"--plot {plot}: the file name must end in .svg")


@click.command("report")
@click.argument("run_name", metavar="[RUN]", required=False)
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--gpus",
    type=click.IntRange(min=1),
    default=None,
    help="GPUs the run holds: adds GPU-hours (lost) to every figure.",
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the run's timeline as a stacked bar to FILE.svg.",
)
@click.option(
    "--nodes", "nodes", is_flag=True, help="Every node across the home's runs instead of a run."
)
def report_command(
    run_name: str | None,
    home: Path | None,
    as_json: bool,
    gpus: int | None,
    plot: Path | None,
    nodes: bool,
) -> None:
    """Goodput of RUN (default: the most recent run): productive training against time lost
    to recomputation, restarts, hangs and backoff, by cause, with MTBF and MTTR.

    \b
    Examples:
      babysit report train
      babysit report train --gpus 64 --json | jq .categories.recomputation
      babysit report train --plot train-time.svg
      babysit report --nodes
    """
    now = time.time()
    try:
        if nodes and (run_name or plot or gpus):
            raise UsageError("--nodes covers every run of the home: no RUN, --plot or --gpus")
        _plot_path(plot)
        with open_store(home) as store:
            if nodes:
                by_run = {r["name"]: store.attempts(r["name"]) for r in store.runs()}
                doc = nodes_report(by_run, store.node_events(), store.bans(), now)
            else:
                if run_name is None:
                    runs = store.runs()
                    if not runs:
                        raise UsageError(f"no runs in {store.home}: nothing to report")
                    run_name = runs[0]["name"]
                run = store.run(run_name)  # RunNotFound names the runs there are
                doc = goodput_document(
                    run,
                    store.attempts(run_name),
                    store.progress_samples(run_name),
                    [i for i in store.incidents(run_name) if i["kind"] == "hang"],
                    now,
                    gpus,
                )
        if plot is not None:
            try:
                plot.write_text(goodput_svg(doc), encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot write --plot {plot}: {exc.strerror or exc}") from exc
    except BabysitError as exc:
        fail(exc)
    if as_json:
        click.echo(json.dumps(doc, indent=2, allow_nan=False))
        return
    console = plain_console()
    if nodes:
        nodes_report_table(doc, console)
    else:
        goodput_tables(doc, console)
    if plot is not None:
        console.print(f"timeline written to {plot}")
