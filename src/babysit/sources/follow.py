"""Follow a growing log file: new bytes, split into lines, as the writer appends them.

    f = Follower(Path("attempt-0001/stdout.log"), "stdout")
    chunk = f.poll(time.time())   # chunk.data: raw new bytes; chunk.lines: complete OutputLines
    ...
    chunk = f.poll(time.time(), final=True)  # the writer is gone: the last partial line too

Lines end at `\\n` or `\\r` (tqdm redraws with `\\r`). Bytes that are not UTF-8 are replaced, not
fatal. A line longer than `max_line_bytes` is cut there (marked truncated) and the rest of it is
skipped, so a 20 MB line with no newline costs a bounded amount of memory. The raw bytes are
handed back untouched for echoing.

Only regular files are read. A FIFO (`--metrics-file` pointing at a named pipe), a terminal or
another device is never opened for long: opening a FIFO blocks until a writer comes, which would
stop the supervising loop (and with it SIGTERM and Ctrl-C); reading one would also steal the
data from whoever else reads it. Such a path is left alone and `take_problem()` says why, once.
"""

from __future__ import annotations

import os
import stat
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from babysit.records import OutputLine

READ_CHUNK = 1 << 20


@dataclass
class Chunk:
    data: bytes = b""
    lines: list[OutputLine] = field(default_factory=list)


class Follower:
    def __init__(
        self,
        path: Path,
        stream: str,
        offset: int = 0,
        max_line_bytes: int = 64 * 1024,
        line_number: int = 0,
    ) -> None:
        self.path = path
        self.stream = stream
        self.offset = offset  # bytes read so far (the pending partial line included)
        self.max_line_bytes = max_line_bytes
        self.line_number = line_number
        self._pending = b""
        self._skipping = False  # inside an over-long line, dropping bytes until its end
        self._skip_start = 0  # where that over-long line began
        self._fd: int | None = None
        self._closer: weakref.finalize[[int], Follower] | None = None
        self.problem: str | None = None  # why the path is not read (not a regular file)
        self._told: str | None = None

    def take_problem(self) -> str | None:
        """The reason the path is not being read, the first time it is noticed (None after)."""
        if self.problem is None or self.problem == self._told:
            return None
        self._told = self.problem
        return self.problem

    @property
    def consumed(self) -> int:
        """Offset of the end of the last complete line: where a re-attach resumes reading.
        Inside an over-long line, its start (a resumed follower emits its head once more
        rather than its tail as a line of its own)."""
        if self._skipping:
            return self._skip_start
        return self.offset - len(self._pending)

    def poll(self, now: float, final: bool = False, max_bytes: int = 8 * READ_CHUNK) -> Chunk:
        chunk = Chunk()
        # stat first: it never opens the path (an open of a FIFO without a writer blocks, and
        # one with a writer waiting would wake it, then hand it EPIPE when we close).
        fd = self._open()
        if fd is None:
            return chunk
        try:
            st = os.fstat(fd)
            if not self._regular(st.st_mode):
                self.close()
                return chunk
            size = st.st_size
            if size < self.offset:  # truncated or replaced: start over
                self.offset, self._pending, self._skipping = 0, b"", False
            parts = []
            budget = max_bytes
            while self.offset < size and budget > 0:
                data = os.pread(fd, min(READ_CHUNK, budget), self.offset)
                if not data:
                    break
                self.offset += len(data)
                budget -= len(data)
                parts.append(data)
        finally:
            if final:
                self.close()
        chunk.data = b"".join(parts)
        self._split(chunk, now)
        if final and self.offset >= size and (self._pending or self._skipping):
            if self._pending:
                self._emit(chunk, self._pending, now, truncated=self._skipping)
            self._pending, self._skipping = b"", False
        return chunk

    def _regular(self, mode: int) -> bool:
        if stat.S_ISREG(mode):
            self.problem = None
            return True
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "not a regular file"
        self.problem = (
            f"{self.path} is {kind}: babysit only follows regular files that the run appends "
            "to, and leaves this one alone (reading a pipe would block babysit or steal the "
            "data from its reader). Have the run write to a plain file, e.g. metrics.jsonl"
        )
        return False

    def _open(self) -> int | None:
        """The file, kept open between polls: a log deleted under babysit (its home removed
        mid-run) is still read through the descriptor the writer shares; a new file at the path
        (rotated, replaced) is opened instead."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self._fd  # gone from its directory: read on through the open descriptor
        except OSError as exc:  # not allowed to look (a directory's mode): said, not fatal
            self.problem = f"cannot read {self.path}: {exc.strerror or exc}"
            return self._fd
        if not self._regular(st.st_mode):
            self.close()
            return None
        if self._fd is not None:
            held = os.fstat(self._fd)
            if (held.st_dev, held.st_ino) == (st.st_dev, st.st_ino):
                return self._fd
            self.close()  # another file under the name: opened (poll's size check as before)
        try:
            # O_NONBLOCK: had it become a FIFO since the stat, the open still returns at once.
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as exc:  # not allowed to read it: said once, supervision goes on
            self.problem = f"cannot read {self.path}: {exc.strerror or exc}"
            return None
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)  # a follower dropped unclosed
        return fd

    def close(self) -> None:
        """Let go of the file (a final poll does it; a later poll opens it again)."""
        if self._closer is not None:
            self._closer()
        self._fd, self._closer = None, None

    def _split(self, chunk: Chunk, now: float) -> None:
        data = self._pending + chunk.data if self._pending else chunk.data
        if self._skipping:  # inside an over-long line: drop bytes up to its end
            ends = [p for p in (data.find(b"\n"), data.find(b"\r")) if p >= 0]
            if not ends:
                self._pending = b""
                return
            data = data[min(ends) + 1 :]
            self._skipping = False
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        complete, rest = (data[: cut + 1], data[cut + 1 :]) if cut >= 0 else (b"", data)
        if complete:
            # One decode and one split for the whole chunk: this runs for every line of every
            # rank. splitlines() also breaks at \x0b, \x0c, \x1c-\x1e and U+2028, which only
            # binary garbage contains.
            out, n, stream, limit = chunk.lines, self.line_number, self.stream, self.max_line_bytes
            for text in complete.decode("utf-8", errors="replace").splitlines():
                if text:
                    n += 1
                    if len(text) > limit:
                        out.append(OutputLine(stream, n, text[:limit], now, True))
                    else:
                        out.append(OutputLine(stream, n, text, now, False))
            self.line_number = n
        if len(rest) > self.max_line_bytes:
            self._emit(chunk, rest[: self.max_line_bytes], now, truncated=True)
            self._skipping = True
            self._skip_start = self.offset - len(rest)
            rest = b""
        self._pending = rest

    def _emit(self, chunk: Chunk, raw: bytes, now: float, truncated: bool = False) -> None:
        if len(raw) > self.max_line_bytes:
            raw, truncated = raw[: self.max_line_bytes], True
        self.line_number += 1
        text = raw.decode("utf-8", errors="replace")
        chunk.lines.append(OutputLine(self.stream, self.line_number, text, now, truncated))
