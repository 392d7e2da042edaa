"""Python stack dumps -> ThreadStack records (innermost frame first).

    parse_pyspy_json(out, pid)     # `py-spy dump --json --pid N`
    parse_pyspy_text(out)          # `py-spy dump --pid N` (older py-spy, no --json)
    parse_faulthandler(text)       # what faulthandler.register(..., all_threads=True) appended
    short_path("/venv/lib/python3.11/site-packages/torch/x.py")  # -> "torch/x.py"
    parse_stacks(processes)        # ProcessStacks from act.stackdump (raw output) -> threads

The main thread is named "MainThread" whatever the tool called it: py-spy by its thread id being
the pid, faulthandler (which prints no names before 3.14) by it being the last thread listed
(the interpreter lists the newest first) whose outermost frame is not threading's bootstrap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from babysit.looks import MAIN_THREAD, Frame, ProcessStack, ThreadStack

MAIN = MAIN_THREAD

_STDLIB = re.compile(r"/lib/python\d+(?:\.\d+)?t?/")
_PACKAGES = ("/site-packages/", "/dist-packages/")


def short_path(path: str) -> str:
    """Drop the install prefix: site-packages' and the standard library's ("threading.py")."""
    for marker in _PACKAGES:
        i = path.rfind(marker)
        if i >= 0:
            return path[i + len(marker) :]
    m = _STDLIB.search(path)
    return path[m.end() :] if m else path


def parse_stacks(processes: Sequence[ProcessStack]) -> list[ProcessStack]:
    """Read each process's `raw` dump (by its `tool`) into threads; the raw text is dropped.
    A dump with no Python stack in it becomes an error."""
    return [parse_process(p) for p in processes]


def parse_process(p: ProcessStack) -> ProcessStack:
    if p.error is not None or not p.raw:
        return replace(p, raw="")
    threads: tuple[ThreadStack, ...] = ()
    if p.tool == "faulthandler":
        threads = parse_faulthandler(p.raw)
    elif p.raw.lstrip().startswith("["):
        try:
            threads = parse_pyspy_json(p.raw, p.pid)
        except ValueError:
            threads = ()
    else:
        threads = parse_pyspy_text(p.raw)
    if not any(t.frames for t in threads):
        return replace(p, raw="", tool="none", error=f"{p.tool}'s dump held no Python stack")
    return replace(p, raw="", threads=threads)


# ---------------------------------------------------------------- py-spy


def parse_pyspy_json(text: str, pid: int | None = None) -> tuple[ThreadStack, ...]:
    """Threads of `py-spy dump --json`; raises ValueError when it is not that JSON."""
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError("py-spy --json printed no list of threads")
    threads = []
    for t in data:
        if not isinstance(t, dict):
            continue
        frames = tuple(_json_frame(f) for f in t.get("frames") or () if isinstance(f, dict))
        tid = t.get("os_thread_id") or t.get("thread_id")
        owner = pid if pid is not None else t.get("pid")
        name = t.get("thread_name") or str(tid)
        if tid is not None and tid == owner:
            name = MAIN
        threads.append(ThreadStack(name=str(name), frames=frames, active=bool(t.get("active"))))
    return _main_first(threads)


def _json_frame(f: dict[str, Any]) -> Frame:
    line = f.get("line")
    return Frame(
        function=str(f.get("name") or "?"),
        file=short_path(str(f.get("filename") or f.get("short_filename") or "?")),
        line=int(line) if isinstance(line, int) and line > 0 else None,
    )


_PS_PROCESS = re.compile(r"^Process (\d+):")
_PS_THREAD = re.compile(r'^Thread (\S+) \(([^)]*)\)(?::\s*"(.*)")?\s*$')
_PS_FRAME = re.compile(r"^\s+(.+?) \((.+?)(?::(\d+))?\)\s*$")


def parse_pyspy_text(text: str) -> tuple[ThreadStack, ...]:
    """Threads of `py-spy dump` as printed for people: `Thread 42 (idle): "MainThread"`, then
    one `    function (file:line)` per frame, innermost first."""
    pid: str | None = None
    threads: list[ThreadStack] = []
    head: tuple[str, bool] | None = None
    frames: list[Frame] = []

    def close() -> None:
        if head is not None:
            threads.append(ThreadStack(name=head[0], frames=tuple(frames), active=head[1]))

    for line in text.splitlines():
        if m := _PS_PROCESS.match(line):
            pid = m.group(1)
        elif m := _PS_THREAD.match(line):
            close()
            tid, state, name = m.groups()
            is_main = name == MAIN or (pid is not None and tid == pid)
            head = (MAIN if is_main else (name or tid), "active" in state)
            frames = []
        elif head is not None and (m := _PS_FRAME.match(line)):
            fn, path, lineno = m.groups()
            frames.append(Frame(fn, short_path(path), int(lineno) if lineno else None))
    close()
    return _main_first(threads)


# ---------------------------------------------------------------- faulthandler

_FH_THREAD = re.compile(
    r"^(Current thread|Thread) (0x[0-9a-fA-F]+)(?: \[([^\]]*)\])? \(most recent call first\):"
)
_FH_STACK = re.compile(r"^Stack \(most recent call first\):")
_FH_FRAME = re.compile(r'^\s+File "(.*)", line (\d+|\?+) in (.+?)\s*$')


def parse_faulthandler(text: str) -> tuple[ThreadStack, ...]:
    """Threads of a faulthandler dump (`Thread 0x7f.. (most recent call first):` then
    `  File "x.py", line 12 in fn` lines). Several dumps in `text`: the last one counts."""
    dumps: list[list[tuple[str, list[Frame]]]] = []
    current: list[tuple[str, list[Frame]]] | None = None
    for line in text.splitlines():
        m = _FH_THREAD.match(line)
        if m or _FH_STACK.match(line):
            name = (m.group(3) or m.group(2)) if m else "?"
            # A new dump starts when a thread id repeats (the text of two signals, appended).
            if current is None or any(n == name for n, _ in current):
                current = []
                dumps.append(current)
            current.append((name, []))
        elif current and (f := _FH_FRAME.match(line)):
            path, lineno, fn = f.groups()
            number = int(lineno) if lineno.isdigit() else None
            current[-1][1].append(Frame(fn, short_path(path), number))
    if not dumps:
        return ()
    threads = [ThreadStack(name=n, frames=tuple(fr)) for n, fr in dumps[-1]]
    mains = [i for i, t in enumerate(threads) if t.frames and not _bootstrapped(t.frames[-1])]
    if mains and not any(t.name == MAIN for t in threads):
        i = mains[-1]
        threads[i] = ThreadStack(name=MAIN, frames=threads[i].frames)
    return _main_first(threads)


def _bootstrapped(outermost: Frame) -> bool:
    """A thread started by threading (its outermost frame is Thread._bootstrap)."""
    return outermost.function.endswith("_bootstrap") and outermost.file.endswith("threading.py")


def _main_first(threads: list[ThreadStack]) -> tuple[ThreadStack, ...]:
    return tuple(sorted(threads, key=lambda t: t.name != MAIN))
