"""`babysit triage`: the post-mortem of a crash log, as a verdict a person or a script reads.

    babysit triage slurm-1234.out
    babysit triage logs/ --json | jq .category

The triage stage reads the logs, documents.py turns its verdict into a document, views.triage
renders it; the home's store, when there is one, says whether the failure was seen before.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from babysit.cli.common import fail, home_option, load_config, open_store, plain_console
from babysit.errors import BabysitError


@click.command("triage")
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
def triage_command(
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
    from babysit.documents import (
        attempts_of,
        diagnosis_document,
        other_attempts,
        seen_before_line,
    )
    from babysit.triage import load_knowledge, triage_files
    from babysit.views.triage import print_diagnosis

    try:
        rule_files = list(rules)
        if not rule_files:
            configured = load_config(None, {}).triage.rules
            if configured:
                rule_files = [Path(configured)]
        report = triage_files(list(logs), load_knowledge(rule_files))
    except BabysitError as exc:
        fail(exc)
    d = report.diagnosis
    seen = _seen_before(home, d.fingerprint)
    seen = other_attempts(seen, attempts_of(report.files))  # not the attempt's own record
    doc = diagnosis_document(d, seen)
    if as_json:
        click.echo(json.dumps(doc, indent=2, allow_nan=False))
        return
    print_diagnosis(
        doc,
        plain_console(),
        seen_before_line(seen, d.suspect.host, time.time()),
        len(report.files),
        report.lines,
        report.skipped,
    )


def _seen_before(home: Path | None, fingerprint: str | None) -> list[dict[str, Any]]:
    """Earlier verdicts with this fingerprint from the home's store; [] without a store."""
    if fingerprint is None:
        return []
    try:
        with open_store(home) as store:
            return store.seen_before(fingerprint)
    except BabysitError:
        return []
