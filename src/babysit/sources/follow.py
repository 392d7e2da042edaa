"""Follow a growing log file: new bytes, split into lines, as the writer appends them.

    f = Follower(Path("attempt-0001/stdout.log"), "stdout")
    chunk = f.poll(time.time())   # chunk.data: raw new bytes; chunk.lines: complete OutputLines
    ...
    chunk = f.poll(time.time(), final=True)  # the writer is gone: the last partial line too

Lines end at `\\n` or `\\r` (tqdm redraws with `\\r`). Bytes that are not UTF-8 are replaced, not
fatal. A line longer than `max_line_bytes` is cut there (marked truncated) and the rest of it is
skipped, so a 20 MB line with no newline costs a bounded amount of memory. The raw bytes are
handed back untouched for echoing.
"""

from __future__ import annotations

import os
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
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return chunk
        try:
            size = os.fstat(fd).st_size
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
            os.close(fd)
        chunk.data = b"".join(parts)
        self._split(chunk, now)
        if final and self.offset >= size and (self._pending or self._skipping):
            if self._pending:
                self._emit(chunk, self._pending, now, truncated=self._skipping)
            self._pending, self._skipping = b"", False
        return chunk

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
