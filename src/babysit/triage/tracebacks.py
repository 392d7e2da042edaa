"""What a traceback looks like in a log, for the engine that reads it line by line: its headers
(Python's, a DataLoader worker's quoted one, IPython's, Ray's, one glued after other words), the
exception's line and its repr, the chain between two tracebacks, and the lines a paste left
without their indentation.

    if any(text.startswith(h) for h in TB_HEADS): tb = Traceback([(line, text)])
    m = EXC_LINE.match("KeyError: 'label'")  # m["type"] == "KeyError"
    body = unflattened(tb, stripped, body)  # `File "..."` indented again
    framed(tb, 12, '  File "train.py", line 9, in main', ...)  # True: kept as tb's frame
    argless(tb, "nflows.transforms.base.InputOutsideDomain")  # its class, after `raise ...()`

Pure: patterns and a record (which framed() adds to), no state of the engine's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from babysit.triage.frames import FRAME, frames, own_file

# (and TensorFlow 1's words for the error a session's run raised, its op's traceback printed
# before: `InvalidArgumentError (see above for traceback): assertion failed: ...`)
EXC_LINE = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?P<type>[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Fault|Invalid|"
    r"Warning)|Exception)(?: \(see above for traceback\))?(?::\s?(?P<msg>.*))?$"
)
CHAIN = ("During handling of the above exception", "The above exception was the direct cause")


# IPython's (a notebook's) traceback header: the exception's type, then `Traceback (most recent
# call last)` (`IndexError                                Traceback (most recent call last)`); its
# frames (`Cell In[1], line 26`, `---> 26 history = model.fit(X, Y)`) follow, its message last.
IPYTHON_HEAD = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit))\s{2,}"
    r"Traceback \(most recent call last\)$"
)
TB_HEADS = ("Traceback (most recent call last)", "Original Traceback (most recent call last)")
# Ray's header of a task's or an actor's traceback, its frames right after it, alone on its line
# or after Ray's word that nobody handled it (`ray::WorkerDict.generate_sequences() (pid=1751030,
# ip=10.65.194.91, ...)`); not after an exception's name (`RayTaskError(RuntimeError): ray::...`),
# a finding of its own. Ray's logger may come first (`ERROR worker.py:78 -- Unhandled error ...`).
RAY_HEAD = re.compile(
    r"(?:^|Unhandled error \(suppress with [^)]*\): )ray::[\w.]+\(\) \(pid=\d+.*\)$"
)
# The header after other words on its line: a progress bar's last redraw whose carriage return
# was lost (a log copied by hand, a collector that drops it), a `^C`, another stream's output.
# Not an exception group's nested header (`  + Exception Group Traceback ...`, `  | Traceback`):
# what follows it is the group's, read line by line.
GLUED_HEAD = "Traceback (most recent call last):"
GROUP_MARKS = re.compile(r"^[\s|+]*(?:Exception Group )?$")
# An exception's name with no message of its own, before a glued header: the traceback that
# follows is its message (what it re-raised).
RERAISED = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception):$")
# An exception as its repr, alone on its line (`TypeError("__init__() got an unexpected keyword
# argument 'use_dropout'")`): how Hydra, Ray and loggers quote the error they wrap.
EXC_REPR = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*(?P<type>[A-Za-z_]\w*(?:Error|Exception))\((?P<q>['\"])(?P<msg>.+)(?P=q),?\)$"
)


# torch re-raising a DataLoader worker's exception in the main process; the worker's own
# traceback follows (`Original Traceback (most recent call last):`) and ends in the real error.
# The line may be cut (a capped log line, a paste): torch's words up to "DataLoader worker".
# `type`: the worker's exception, as the wrapper names it.
WORKER_WRAPPER = re.compile(
    r"Caught (?P<type>[\w.]+) in (?:DataLoader worker\b|pin memory thread for device \d+)"
)


@dataclass
class Traceback:
    lines: list[tuple[int, str]]  # (line number, text)
    func: str | None = None  # innermost frame's function
    worker: bool = False  # a DataLoader worker's own traceback, quoted by its wrapper
    own: bool = False  # holds a frame outside the standard library and site-packages
    file: str = ""  # the innermost frame's file
    indent: int = 0  # of its `File "..."` lines
    # A header began it (Python's, Ray's), or its frames began the log (the header cut off); not
    # frames without one elsewhere (a SyntaxError's, `traceback.print_stack()`'s)
    headed: bool = True
    flat: bool = False  # its frames came without their indentation (a paste lost it)


def worker_quoted(tb: Traceback) -> bool:
    """Whether a traceback is a DataLoader worker's own, quoted by torch after its wrapper's
    line (`Caught KeyError in DataLoader worker process 3.`) that the log lost: torch's
    `Original Traceback` header, and the worker's loop among its frames."""
    return tb.lines[0][1].startswith("Original Traceback") and any(
        t.endswith(", in _worker_loop") for _, t in tb.lines
    )


# The marks under a code line that Python 3.11+ prints (`^^^^^`, `~~~~^^^^`).
_CARETS = re.compile(r"^[~^]+$")
# What reads as an exception's line, not a frame's code, after a frame that has none (Cython's,
# `<string>`'s): a class name, dotted or not, alone or before a colon (`StopIteration`,
# `msgpack.exceptions.ExtraData: unpack(b) received extra data.`).
EXC_LIKE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?::\s|:?$)")


def unflattened(tb: Traceback, stripped: str, body: str) -> str:
    """A traceback's line that a paste left without its indentation (a quote in an issue, a
    forum's editor), indented again as Python printed it: a `File "..."` frame, and the code
    line (and its carets) under such a frame. Else `body` as it is."""
    if stripped.startswith('File "') and FRAME.match("  " + stripped):
        tb.flat = True
        return "  " + stripped
    if not tb.flat or not tb.lines or EXC_LINE.match(stripped) or EXC_LIKE.match(stripped):
        return body
    last = tb.lines[-1][1]
    if last.startswith('  File "') or (last.startswith("    ") and _CARETS.match(stripped)):
        return "    " + stripped
    return body


def framed(tb: Traceback, line: int, body: str, stripped: str) -> bool:
    """Whether the line is one of the traceback's frames (or a frame's code line, its carets),
    and if so it is kept in it: an indented line. An exception line indented less than the
    frames ends them: torchrun's Root Cause block quotes the worker's traceback two spaces in,
    its frames four."""
    indent = len(body) - len(body.lstrip())
    if body[:1] not in (" ", "\t") or (0 < indent < tb.indent and EXC_LINE.match(stripped)):
        return False
    fm = FRAME.match(body)
    if fm:
        tb.func = fm["func"]
        tb.file = fm["file"]
        tb.own = tb.own or own_file(fm["file"])
        tb.indent = indent
    tb.lines.append((line, body.rstrip()))
    if len(tb.lines) > 64:
        del tb.lines[2]  # keep the head and the innermost frames
    return True


# An exception glued to the end of a frame's code line, its newline lost (streams interleaved,
# a paste): `    return value.xlogy(rate) - (value + 1).lgamma()RuntimeError: CUDA out of
# memory. ...`. Only after a call's or a subscript's closing bracket, where code cannot go on
# with a class's name and a colon.
_GLUED_EXC = re.compile(r"[)\]](?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt): )")


def glued_exception(tb: Traceback, line: int, body: str) -> str | None:
    """The exception glued to the end of a frame's code line (see _GLUED_EXC), the code kept in
    the traceback's frames; None for any other line."""
    if "Error: " not in body and "Exception: " not in body and "Interrupt: " not in body:
        return None
    g = _GLUED_EXC.search(body)
    if g is None:
        return None
    code = body[: g.end()]
    framed(tb, line, code, code.strip())
    return body[g.end() :]


def argless(tb: Traceback, stripped: str) -> str | None:
    """The class of an exception raised without arguments, which Python prints alone on its
    line, ending the frames (`nflows.transforms.base.InputOutsideDomain` after `raise
    InputOutsideDomain()`): read as one where the innermost frame's statement raises that very
    class (`if bad: raise InputOutsideDomain()` too); not in the standard library, whose bare
    raises are its callers' to handle or wrap (`raise Empty` in multiprocessing's queues, under
    the DataLoader's `worker exited unexpectedly`). None for any other line."""
    if ":" in stripped or EXC_LIKE.match(stripped) is None or _stdlib(tb.file):
        return None
    where = frames(tb.lines)
    said = where[-1][2] if where else ""  # (not the carets Python 3.11+ prints under it)
    name = stripped.rsplit(".", 1)[-1]
    if re.search(rf"\braise\s+(?:[\w.]+\.)?{re.escape(name)}\b", said):
        return stripped[:80]
    return None


# The standard library's own files, by the interpreter's install layout (`/usr/lib/python3.11/`,
# `/lib64/python3.6/`, Windows' `...\Python311\lib\`), not an installed package's (site-packages,
# dist-packages) nor a project's own `lib` directory (`C:\proj\lib\model.py`).
_STDLIB = re.compile(r"[/\\]lib(?:64)?[/\\]python\d|(?i:python[\d.]*[/\\]lib[/\\])")


def _stdlib(path: str) -> bool:
    return (
        "site-packages" not in path
        and "dist-packages" not in path
        and _STDLIB.search(path) is not None
    )
