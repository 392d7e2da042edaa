"""`babysit note RUN TEXT`: a person's entry in the run's logbook.

    babysit note train "restarted the data loader by hand; expect a dip at step 12k"
    babysit note train lowered the LR to 1e-4 after the spike    # the words are joined

The note is one `note` event of the run (data: source "human", author user@host), written to
the store and to events.jsonl like babysit's own events, so it works while a babysit supervises
the run (SQLite in WAL mode takes the two writers) and survives a `babysit rebuild`. It belongs
to the attempt running at the time, if any. Its text is redacted (babysit.redact) before it is
kept: a token pasted into a note does not stay in the home. `babysit logbook` shows the notes.

Exit codes: 0 written; 2 no such run or home, an empty or too long note, or a store that cannot
be written (the message names the runs that exist).
"""

from __future__ import annotations

import getpass
import os
import socket
import time
from pathlib import Path

import click

from babysit.cli.common import fail, home_option, open_store
from babysit.errors import BabysitError, UsageError
from babysit.records import Event, EventKind
from babysit.redact import redact_text
from babysit.store.writes import AddEventRow, MirrorEvent
from babysit.views.chronicle import HUMAN
from babysit.views.safe import plain

MAX_CHARS = 10_000


def author() -> str:
    """`user@host`, as `babysit stop` names who asked."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container)
        user = f"uid {os.getuid()}"
    return f"{user}@{socket.gethostname()}"


@click.command("note")
@click.argument("run_name", metavar="RUN")
@click.argument("words", metavar="TEXT", nargs=-1, required=True)
@home_option
def note_command(run_name: str, words: tuple[str, ...], home: Path | None) -> None:
    """Add a note to RUN's logbook (with your user@host and the time); `babysit logbook`
    shows it. Works while babysit supervises the run. Secrets in it are hidden (***).

    \b
    Examples:
      babysit note train "restarted the data loader by hand; expect a dip at step 12k"
      babysit note train lowered the LR to 1e-4 after the spike

    \b
    Exit codes: 0 written, 2 no such run (the message lists those that exist), an empty
                note, or a store that cannot be written.
    """
    text = redact_text(" ".join(words).strip())
    try:
        if not text:
            raise UsageError('the note is empty: babysit note RUN "what happened"')
        if len(text) > MAX_CHARS:
            raise UsageError(
                f"the note is {len(text):,} characters long; at most {MAX_CHARS:,} (put a "
                "longer text in a file and note where it is)"
            )
        with open_store(home) as store:
            store.run(run_name)  # RunNotFound names the runs that exist
            attempts = store.attempts(run_name)
            current = attempts[-1] if attempts and attempts[-1]["outcome"] == "running" else None
            event = Event(
                run_name,
                EventKind.NOTE,
                text,
                time.time(),
                current["number"] if current else None,
                {"source": HUMAN, "author": author()},
            )
            store.apply(AddEventRow(event))  # apply(): redacted again on the way in
            store.apply(MirrorEvent(event))
    except BabysitError as exc:
        fail(exc)
    on = f" (attempt {event.attempt})" if event.attempt is not None else ""
    click.echo(f"note added to run '{plain(run_name)}'{on}: {plain(text)}")
