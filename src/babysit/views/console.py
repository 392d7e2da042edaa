"""babysit's own live messages on the terminal, apart from the run's output.

    say = ConsoleReporter(Console(stderr=True))
    say(Level.WARN, "cannot write the store: disk full; supervision goes on")

Messages go to stderr, prefixed `babysit:`, so they never mix into a pipe of the run's stdout.
"""

from __future__ import annotations

import contextlib

from rich.console import Console
from rich.markup import escape

from babysit.records import Level

_STYLES = {Level.INFO: "cyan", Level.OK: "green", Level.WARN: "yellow", Level.ERROR: "bold red"}


class ConsoleReporter:
    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False, soft_wrap=True)

    def __call__(self, level: Level, text: str) -> None:
        style = _STYLES.get(level, "")
        with contextlib.suppress(OSError):  # a closed terminal must not stop the supervisor
            self.console.print(
                f"[{style}]babysit:[/] {escape(text)}" if style else f"babysit: {escape(text)}"
            )
