"""babysit's own live messages on the terminal, apart from the run's output.

    say = ConsoleReporter(Console(stderr=True))
    say(Level.WARN, "cannot write the store: disk full; supervision goes on")

Messages go to stderr, prefixed `babysit:`, so they never mix into a pipe of the run's stdout.
They quote the run's text (an error line, a summary): escapes and rich markup in it are shown,
never obeyed (views.safe), and secrets in it are hidden as in the store (babysit.redact).
"""

from __future__ import annotations

import contextlib

from rich.console import Console

from babysit.records import Level
from babysit.redact import redact_text
from babysit.views.safe import markup

_STYLES = {Level.INFO: "cyan", Level.OK: "green", Level.WARN: "yellow", Level.ERROR: "bold red"}


class ConsoleReporter:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)

    def __call__(self, level: Level, text: str) -> None:
        style = _STYLES.get(level, "")
        safe = markup(redact_text(text), newlines=True)
        with contextlib.suppress(OSError):  # a closed terminal must not stop the supervisor
            self.console.print(f"[{style}]babysit:[/] {safe}" if style else f"babysit: {safe}")
