"""Triage: read crash logs, name the root cause, whom to blame, whether a restart can help.

    report = triage_paths([Path("logs/")])           # files, directories, "-" for stdin
    report.diagnosis.category, report.diagnosis.summary

The same engine runs for `babysit triage`, at the end of every attempt of `babysit run`, and
at the end of `babysit watch`. A stage: it imports the vocabulary and nothing else of babysit's.
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from babysit.errors import LogNotFound
from babysit.records import Diagnosis
from babysit.triage.engine import Engine
from babysit.triage.knowledge import Knowledge, load_knowledge
from babysit.triage.scan import ScanStats, scan
from babysit.triage.verdict import diagnose, normalise

STDIN = "-"
MAX_FILES = 10_000


@dataclass(frozen=True)
class TriageReport:
    diagnosis: Diagnosis
    files: tuple[str, ...]  # the files read, in order
    lines: int  # lines in them
    bytes: int
    skipped: tuple[str, ...] = ()  # "path (why)" for files not read: binary, unreadable


def expand(paths: Iterable[str | Path]) -> list[str]:
    """The files to read: directories walked (sorted, hidden entries skipped), "-" kept.
    LogNotFound names the first path that does not exist."""
    out: list[str] = []
    for p in paths:
        s = str(p)
        if s == STDIN:
            out.append(s)
            continue
        if os.path.isdir(s):
            for root, dirs, names in os.walk(s):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for n in sorted(names):
                    if not n.startswith("."):
                        out.append(os.path.join(root, n))
                if len(out) > MAX_FILES:
                    raise LogNotFound(
                        f"{s} holds more than {MAX_FILES} files; point triage at the run's "
                        "log directory"
                    )
            continue
        if not os.path.exists(s):
            raise LogNotFound(f"no such log file or directory: {s}")
        out.append(s)
    return out


def _open(path: str) -> Iterator[tuple[BinaryIO, int | None]]:
    if path == STDIN:
        yield sys.stdin.buffer, None
        return
    size = os.path.getsize(path)
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as g:
            yield g, None  # type: ignore[misc]
        return
    with open(path, "rb") as f:
        yield f, size


def triage_files(
    paths: Iterable[str | Path],
    kb: Knowledge | None = None,
    extra_lines: Iterable[tuple[str, Iterable[str]]] = (),
    rare: bool | None = None,
) -> TriageReport:
    """Triage the given logs as one run. `extra_lines` adds named in-memory sources (e.g. the
    kernel log read at the end of an attempt); `rare`: see scan.scan. LogNotFound for a path
    that does not exist; anything unreadable is skipped and named."""
    kb = kb if kb is not None else load_knowledge()
    files = expand(paths)
    engine = Engine(kb)
    names: list[str] = []
    skipped: list[str] = []
    lines = 0
    total_bytes = 0
    last_line = ""
    for path in files:
        index = len(names)
        names.append(path if path != STDIN else "<stdin>")
        try:
            for stream, size in _open(path):
                stats: ScanStats = scan(stream, partial(engine.feed, index), size, rare)
        except (OSError, EOFError) as e:
            names.pop()
            skipped.append(f"{path} (cannot read: {e})")
            continue
        if stats.binary:
            names.pop()
            skipped.append(f"{path} (binary, not a text log)")
            continue
        lines += stats.lines
        total_bytes += stats.size_bytes
        if stats.last_line:
            last_line = stats.last_line
        if stats.long_lines:
            skipped.append(
                f"{path} ({stats.long_lines} line(s) longer than 64 KiB: only their first "
                "64 KiB read)"
            )
    for name, src in extra_lines:
        index = len(names)
        names.append(name)
        for n, text in enumerate(src, 1):
            engine.feed(index, n, text)
            lines += 1
    engine.finish()
    note = ""
    if not names and skipped:
        note = f"no text log among {len(skipped)} file(s): " + "; ".join(skipped[:3])
    diagnosis = diagnose(engine, names, lines, last_line, note)
    return TriageReport(diagnosis, tuple(names), lines, total_bytes, tuple(skipped))


__all__ = [
    "Knowledge",
    "TriageReport",
    "expand",
    "load_knowledge",
    "normalise",
    "triage_files",
]
