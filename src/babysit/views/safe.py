"""Show text that came from a run (its log lines, error messages, command line) without letting
it drive the terminal it is printed on.

    console.print(f"[bold]summary:[/] {markup(summary)}")   # rich: markup escaped too
    lines.append(f"- {plain(message)}")                      # plain text: Markdown, click.echo

Logs are attacker-controlled text. Printed raw, `\\x1b]0;...\\x07` sets the window title,
`\\x1b]52;c;...\\x07` writes the clipboard, `\\x1bc` resets the terminal, CSI sequences move the
cursor and recolour or hide what follows, a C1 control (`\\x9b`) is a CSI by itself, BEL rings,
backspace and CR overwrite what babysit wrote, and the Unicode bidirectional overrides make a
line read differently than it is. plain() shows each of these as a Python-style escape
(`\\x1b`, `\\r`, `\\u202e`), so the text is still all there to read; tabs stay, and newlines stay
where the caller lays out several lines (`newlines=True`). markup() also escapes rich markup:
`[bold]` or `[link=...]` in a log line prints as written.

The run's own output, copied through to the terminal (act/echo.py), is the run's business and
is left as it is; everything babysit itself prints of the run's text goes through here.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 controls but tab and newline, DEL, C1 controls, the bidirectional marks and overrides,
# and the Unicode line and paragraph separators.
_UNSAFE = (
    "\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f"
    "\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069"
)
_UNSAFE_ONE_LINE = re.compile(f"[\\n{_UNSAFE}]")
_UNSAFE_LINES = re.compile(f"[{_UNSAFE}]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _show(m: re.Match[str]) -> str:
    c = m.group()
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object, newlines: bool = False) -> str:
    """`text` (str() of it) with every character that could drive a terminal shown as an
    escape; newlines kept only with `newlines=True`."""
    s = text if isinstance(text, str) else str(text)
    return (_UNSAFE_LINES if newlines else _UNSAFE_ONE_LINE).sub(_show, s)


def markup(text: object, newlines: bool = False) -> str:
    """plain(), then rich's markup escaped: safe to put inside a rich markup string."""
    return escape(plain(text, newlines))
