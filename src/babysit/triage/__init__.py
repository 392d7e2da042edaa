"""Triage: read crash logs, name the root cause, whom to blame, whether a restart can help.

    report = triage_paths([Path("logs/")])           # files, directories, "-" for stdin
    report.diagnosis.category, report.diagnosis.summary

The same engine runs for `babysit triage`, at the end of every attempt of `babysit run`, and
at the end of `babysit watch`. A stage: it imports the vocabulary and nothing else of babysit's.
"""

from __future__ import annotations

import gzip
import io
import os
import select
import stat
import sys
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO, Protocol

from babysit.errors import LogNotFound
from babysit.records import Diagnosis
from babysit.triage.blocks import ScanStats
from babysit.triage.engine import Engine
from babysit.triage.knowledge import Knowledge, load_knowledge
from babysit.triage.scan import scan
from babysit.triage.stall import ending_of, quiet
from babysit.triage.verdict import diagnose, found_cause, normalise

STDIN = "-"
LONG_LINES_NOTE = "line(s) longer than 64 KiB: only their first 64 KiB read"
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


class _Reads(Protocol):
    def read(self, n: int, /) -> bytes: ...


class _Tolerant:
    """A stream whose read errors after the start end it instead (a .gz cut short by the crash
    that killed the job, a file on a failing disk): what was read still counts."""

    def __init__(self, stream: _Reads, fd: int | None = None) -> None:
        self.stream = stream
        self.fd = fd  # a regular file's descriptor (not a pipe's, not a .gz's packed bytes)
        # A gzip stream's read1 hands over what it decoded before an error in its next read
        # (a .gz cut short); its read(n) would lose that to the error.
        self.piece = getattr(stream, "read1", stream.read)
        self.error: Exception | None = None
        self.read_any = False

    def read(self, n: int) -> bytes:
        """Up to n bytes (n > 0), in 64 KiB pieces so that an error keeps the data before it."""
        if self.error is not None:
            return b""
        parts: list[bytes] = []
        got = 0
        while got < n:
            try:
                piece = self.piece(min(n - got, 1 << 16))
            except (OSError, EOFError, zlib.error) as e:
                if not self.read_any and not parts:
                    raise
                self.error = e
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
        data = b"".join(parts)
        self.read_any = self.read_any or bool(data)
        return data

    def fileno(self) -> int:
        """The regular file's descriptor (scan reads lines again through it, never moving it)."""
        if self.fd is None:
            raise io.UnsupportedOperation("not a regular file")
        return self.fd


def _mode(path: str) -> int:
    """The file's type and mode (stat, never open: that could block); 0 when it is gone or
    unreadable (opening it then says why) and for stdin."""
    if path == STDIN:
        return 0
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


@contextmanager
def _open(path: str, mode: int) -> Iterator[tuple[_Tolerant, int | None]]:
    """The file as a tolerant stream, unpacked when it is gzip (by its name or its first two
    bytes: a rotated `rank0.log.1`, `<(cat x.gz)`, `cat x.gz | babysit triage -`), with its size
    when it is known. `mode`: _mode(path)."""
    with ExitStack() as stack:
        raw: _Reads
        size: int | None = None
        fd: int | None = None
        if path == STDIN:
            if sys.stdin is None:
                raise OSError("stdin is closed")
            raw = sys.stdin.buffer
            head = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
        elif stat.S_ISFIFO(mode):
            raw = stack.enter_context(_open_pipe(path))
            head = raw.head[:2]
        else:
            size = os.path.getsize(path)
            f = raw = stack.enter_context(open(path, "rb"))
            head = f.read(2)
            f.seek(0)
            fd = f.fileno()
        if head == _GZIP_MAGIC or path.endswith(".gz"):
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]
            size = fd = None
        yield _Tolerant(raw, fd), size


_GZIP_MAGIC = b"\x1f\x8b"


class NoWriter(OSError):
    """A named pipe that nobody writes to: reading it would wait forever."""


# How long a named pipe may go without a writer before triage gives up on it (`babysit triage
# rank0.fifo` started before the program that writes to it).
PIPE_WRITER_WAIT_S = 10.0


@contextmanager
def _open_pipe(path: str, wait_s: float = PIPE_WRITER_WAIT_S) -> Iterator[_Prefixed]:
    """A pipe named on purpose (`<(zcat x)`, a FIFO): opened without waiting for a writer (a
    plain open blocks until one comes, perhaps never). NoWriter when none came within `wait_s`;
    else read as a file, waiting for what the writer sends (its first two bytes, to tell gzip,
    before the stream is handed over). A writer that closed without a word: an empty stream."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        head = b""
        if not poller.poll(int(wait_s * 1000)):  # (a FIFO that never had a writer: no event)
            try:
                head = os.read(fd, 1)  # b"": no writer; a byte: one came just now
            except BlockingIOError:
                pass  # a writer holds it open, silent so far: wait for what it sends
            else:
                if not head:
                    raise NoWriter(
                        f"a named pipe that no process wrote to within {wait_s:g} s: start what "
                        "writes to it first, or give triage the file it writes"
                    )
        os.set_blocking(fd, True)
        while len(head) < 2:
            piece = os.read(fd, 1 << 16)
            if not piece:
                break
            head += piece
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield _Prefixed(head, f)


class _Prefixed:
    """A stream that gives `head` first, then the rest of `rest`."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def read(self, n: int = -1, /) -> bytes:
        if self.head:
            piece = self.head if n < 0 else self.head[:n]
            self.head = self.head[len(piece) :]
            return piece
        return self.rest.read(n)


def triage_files(
    paths: Iterable[str | Path],
    kb: Knowledge | None = None,
    extra_lines: Iterable[tuple[str, Iterable[str]]] = (),
    rare: bool | None = None,
    budget_s: float | None = None,
    trained: bool | None = None,
) -> TriageReport:
    """Triage the given logs as one run. `extra_lines` adds named in-memory sources (e.g. the
    kernel log read at the end of an attempt); `rare`: see scan.scan; `budget_s`: stop
    reading after this long and decide on what was read (the live path: a restart waits);
    `trained`: True when the caller knows the attempt trained though its logs show no step
    triage reads (then a failure is not read as one of the set-up).
    LogNotFound for a path that does not exist; anything unreadable is skipped and named."""
    kb = kb if kb is not None else load_knowledge()
    deadline = time.monotonic() + budget_s if budget_s is not None else None
    paths = list(paths)
    given = {str(p) for p in paths}  # named on purpose: a FIFO there (`<(zcat x)`) is read
    files = expand(paths)
    engine = Engine(kb)
    names: list[str] = []
    skipped: list[str] = []
    lines = 0
    total_bytes = 0
    last_line = ""
    read: list[str] = []
    progress: dict[int, int] = {}  # file index -> the line of its first training step
    tails: list[list[str]] = []  # each log's last lines, while no error is found (stall.py)
    cut_short = False  # a log read only in part: its last lines read are not its end
    for path in files:
        # One index per file for good: findings point into `names` by index.
        index = len(names)
        names.append(path if path != STDIN else "<stdin>")
        if deadline is not None and time.monotonic() > deadline:
            skipped.append(f"{path} (not read: the time budget for triage ran out)")
            continue
        mode = _mode(path)
        special = bool(mode) and not stat.S_ISREG(mode)
        if special and path not in given:  # opening a FIFO met in a walk blocks
            skipped.append(f"{path} (not a regular file: a FIFO, socket or device; not read)")
            continue
        if special and not stat.S_ISFIFO(mode):  # /dev/zero never ends
            skipped.append(
                f"{path} (a device or socket, not a log file; not read: give '-' for stdin)"
            )
            continue
        try:
            with _open(path, mode) as (stream, size):
                stats: ScanStats = scan(
                    stream,  # type: ignore[arg-type]
                    partial(engine.feed, index),
                    size,
                    rare,
                    deadline,
                    path if size is not None else None,  # a regular file: grep may read it
                )
                if stream.error is not None:
                    cut_short = True
                    skipped.append(
                        f"{path} (read up to byte {stats.size_bytes:,}, then: {stream.error}; "
                        "the rest is lost, what came before counts)"
                    )
        except (OSError, EOFError, zlib.error) as e:
            skipped.append(f"{path} (cannot read: {e})")
            continue
        if stats.binary:
            skipped.append(f"{path} (binary, not a text log)")
            continue
        read.append(names[index])
        if stats.first_progress:
            progress[index] = stats.first_progress
        if stats.uncounted:
            skipped.append(
                f"{path} (line numbers after byte {stats.uncounted_at:,} are too low: the lines "
                f"from there could not be read again to be counted ({stats.uncounted}); every "
                "line was searched)"
            )
        if stats.stopped_early:
            cut_short = True
            skipped.append(
                f"{path} (only its first {stats.size_bytes / 1e6:,.0f} MB read: the time budget "
                "for triage ran out)"
            )
        lines += stats.lines
        total_bytes += stats.size_bytes
        if stats.last_line:
            last_line = stats.last_line
        if stats.long_lines:
            skipped.append(f"{path} ({stats.long_lines} {LONG_LINES_NOTE})")
        if not found_cause(engine, progress):  # a cause found stays found: no stall is read
            tails.append(stats.tail)
    for name, src in extra_lines:
        index = len(names)
        names.append(name)
        read.append(name)
        for n, text in enumerate(src, 1):
            engine.feed(index, n, text)
            lines += 1
    engine.finish()
    note = ""
    if not read and skipped:
        note = f"no text log among {len(skipped)} file(s): " + "; ".join(skipped[:3])
    # How the logs end, where no cause was found: long after progress stopped, or in a retry
    # loop (which says what the run waited for).
    ending = ending_of(tails) if not found_cause(engine, progress) else None
    # its process had not ended where the logs stop (as far as their ends, read whole, show)
    still = ending is None and not cut_short and quiet(tails)
    diagnosis = diagnose(
        engine, names, lines, last_line, note, read, progress, trained, ending, still
    )
    return TriageReport(diagnosis, tuple(read), lines, total_bytes, tuple(skipped))


__all__ = [
    "Knowledge",
    "TriageReport",
    "expand",
    "load_knowledge",
    "normalise",
    "triage_files",
]
