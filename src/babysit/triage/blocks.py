"""The lines of a log's blocks that scan hands to the engine, and how they are numbered: the
lines that hold a needle, the windows after them (a traceback's frames and its exception, a
launcher's failure summary), and the first training step's line.

    blocks = Blocks(partial(engine.feed, 0), ScanStats(), small=64 << 20)  # (line, text)
    blocks.feed(block, every=True, exact=True)  # a whole-line block, in file order
    blocks.base  # the lines counted so far

A big log's middle is searched by grep (scan.py, grepfind.py): the lines it found carry grep's
line numbers, and the lines between are counted only where a later block needs its first line's
number and no match of grep's numbers it. A line that the engine found meaningless whatever came
before it (a UserWarning repeated by 512 ranks) is remembered, its rank label aside, and not
handed over again.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from babysit.triage.grepfind import Matches, line_starts_in_bytes
from babysit.triage.needles import NEEDLES, RARE_NEEDLES

MAX_LINE_BYTES = 64 << 10  # the part of a huge line that is read; the rest is skipped
GREP_BLOCK_BYTES = 256 << 10  # blocks this big are searched for every needle by grep
_PREAD_BYTES = 1 << 20  # the lines left uncounted are read again this much at a time
# After a line holding one of these, the next lines are handed over too (needle, how many).
_FOLLOW: tuple[tuple[bytes, int], ...] = (
    # A deep Python 3.11 traceback is 3 lines a frame (code, carets): 60 frames and its end.
    (b"traceback (most recent call last)", 200),
    (b'file "', 3),
    (b"root cause (first observed failure)", 12),
    (b"failures:", 12),
    (b"terminate called after throwing", 2),
    (b"last error:", 2),
    (b"the first process to do so was:", 6),  # mpirun's: the process's name and exit code
)

# A training step's line, in the lowercased text, found from a literal at its start: a loss
# value (`loss: 2.31`, `'loss': 2.31`, `train_loss=2.3`, `loss 9.2`, `lm loss: 2.3e+00`, not
# `loss scale: 65536`), Megatron's `iteration 100/ 5000`, DeepSpeed's `step=10, skipped=0`.
_PROGRESS: tuple[tuple[bytes, re.Pattern[bytes]], ...] = (
    (
        b"loss",
        re.compile(rb"loss['\"]?(?:\s*[:=]\s*['\"]?(?:tensor\()?|\s+)[-+]?(?:\d|nan\b|inf\b)"),
    ),
    (b"iteration", re.compile(rb"iteration\s+\d+\s*/\s*\d+")),
    (b"step=", re.compile(rb"step=\d+, skipped=\d+")),
)


def first_progress(low: bytes) -> int:
    """Where the first training step in `low` (lowercased text) shows (an offset in its
    line), or -1."""
    best = -1
    for literal, rx in _PROGRESS:
        i = low.find(literal)
        while i >= 0 and (best < 0 or i < best):
            if rx.match(low, i):
                best = i
                break
            i = low.find(literal, i + 1)
    return best


# (1-based line number, text) -> whether the line meant nothing, whatever came before it
Sink = Callable[[int, str], bool]
_INERT_MAX = 200_000
# torchrun `[rank12]:`/`[default3]:`, srun `12: `, mpirun `[1,12]<stderr>:`
_RANK_LABEL = re.compile(rb"^(?:\[[A-Za-z_]*\d+\]: ?| {0,6}\d+: |\[\d+,\d+\]<std(?:out|err)>:)")


@dataclass
class ScanStats:
    lines: int = 0  # lines in the file
    handed: int = 0  # lines handed to the engine
    size_bytes: int = 0
    binary: bool = False
    long_lines: int = 0  # lines cut at MAX_LINE_BYTES
    last_line: str = ""  # the last non-empty line (for "the log ends with ...")
    needles: tuple[bytes, ...] = field(default=NEEDLES)
    stopped_early: bool = False  # the deadline passed before the end
    first_progress: int = 0  # the line of the first training step (0: none in the first 64 MB)
    tail: list[str] = field(default_factory=list)  # the last lines (TAIL_BYTES at most)
    # Why lines left uncounted could not be read again (the open file failed, or had shrunk),
    # from the byte `uncounted_at`: the line numbers after it are too low. "" when none.
    uncounted: str = ""
    uncounted_at: int = 0


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _hits(low: bytes, needles: tuple[bytes, ...]) -> list[int]:
    """Start offsets of the lines in `low` that contain a needle, sorted, unique."""
    starts: set[int] = set()
    find, rfind = low.find, low.rfind
    for nd in needles:
        p = find(nd)
        while p >= 0:
            s = rfind(b"\n", 0, p) + 1
            starts.add(s)
            e = find(b"\n", p)
            if e < 0:
                break
            p = find(nd, e)
    return sorted(starts)


def _follow_count(low_line: bytes) -> int:
    n = 0
    for nd, k in _FOLLOW:
        if nd in low_line and k > n:
            n = k
    return n


def _emit(raw: bytes, lineno: int, sink: Sink, stats: ScanStats, inert: set[int]) -> None:
    if len(raw) > MAX_LINE_BYTES:
        raw = raw[:MAX_LINE_BYTES]
    # The rank label differs between repeats; the message must not (digits decide rules:
    # `exit code 137`, `[Errno 28]`).
    key = hash(_RANK_LABEL.sub(b"", raw, count=1))  # 8 bytes a line, not the line
    if key in inert:
        return
    text = decode(raw).rstrip("\r\n")
    if "\r" in text:
        # Progress bars rewrite a line with bare CRs: each part is a line of its own.
        for part in text.split("\r"):
            if part.strip():
                sink(lineno, part)
                stats.handed += 1
        return
    stats.handed += 1
    if sink(lineno, text):
        if len(inert) >= _INERT_MAX:
            inert.clear()
        inert.add(key)


def _window(
    block: bytes,
    pos: int,
    lineno: int,
    follow: int,
    sink: Sink,
    stats: ScanStats,
    inert: set[int],
) -> tuple[int, int, int]:
    """Hand over the next `follow` lines from `pos` (the window after a trigger line); a
    trigger inside the window (a chained traceback) opens a window of its own. Returns the
    offset and line number reached, and the lines still owed (the window may go on in the
    next block)."""
    while follow and pos < len(block):
        e = block.find(b"\n", pos)
        end = len(block) if e < 0 else e
        lineno += 1
        _emit(block[pos:end], lineno, sink, stats, inert)
        follow = max(follow - 1, _follow_count(block[pos:end].lower()))
        pos = end + 1
    return pos, lineno, follow


class Blocks:
    """Hands the whole-line blocks of one file to the sink, in file order: each block searched
    for the common needles (from grep's whole-file pass where it ran and still lines up with
    the block), or for every needle (the log's edges, small logs), then its windows.

    In a big log's middle, the lines grep found carry grep's line numbers, and the lines
    between them are not counted (a tenth of the time of a 1 GB log): they are counted only
    where a block needs its first line's number and grep numbers none of its lines (the tail,
    searched for every needle; a block grep does not cover), by reading them again through the
    open file (`fd`: the file read, not whatever its path names by then). Not under a deadline:
    reading them again could take as long as reading them did."""

    def __init__(self, sink: Sink, stats: ScanStats, small: int) -> None:
        self.sink = sink
        # up to this offset, the first training step is looked for; past it in a big log,
        # grep's numbered matches are used whether or not a step was seen
        self.small = small
        self.stats = stats
        # the open file's descriptor, where its lines may be left to count later
        self.fd: int | None = None
        self.inert: set[int] = set()
        self.base = 0  # lines before the current block (before `counted_to`, while uncounted)
        self.counted_to: int | None = None  # the offset from which the lines are not counted
        self.follow = 0  # lines still to hand over after a frame or a failure summary
        self.offset = 0  # the file offset of the next block (exact while the chunker's is)
        self.matches: Matches | None = None  # grep's whole-file common-needle matches
        self.matched_to = -1  # the file offset up to which `matches` is complete
        self.rare_middle = False  # `matches` holds the rare needles' too
        self.next_match = 0

    def _grep_starts(self, block: bytes, exact: bool) -> list[tuple[int, int]] | None:
        """The starts of the block's lines with a common needle, from grep's whole-file pass,
        each with its line number; None where it does not cover the block."""
        start, end = self.offset, self.offset + len(block)
        if self.matches is None or not exact or end > self.matched_to:
            return None
        m, numbers = self.matches.offsets, self.matches.lines
        i = self.next_match
        while i < len(m) and m[i] < start:
            i += 1
        rfind = block.rfind
        starts: list[tuple[int, int]] = []
        while i < len(m) and m[i] < end:
            s = rfind(b"\n", 0, m[i] - start) + 1
            if not starts or starts[-1][0] != s:
                starts.append((s, numbers[i]))
            i += 1
        self.next_match = i
        return starts

    def _numbered_later(self) -> bool:
        """Whether a match of grep's lies after the blocks fed so far (it will number them)."""
        m = self.matches
        return self.fd is not None and m is not None and self.next_match < len(m.offsets)

    def count_the_uncounted(self, upto: int) -> None:
        """Count the lines left uncounted before the file offset `upto` (read again from the
        file): a block that needs its first line's number follows them."""
        if self.counted_to is None:
            return
        at, self.counted_to = self.counted_to, None
        if self.fd is None:
            return
        try:
            while at < upto:
                # (pread: the stream's own offset stays where its reading left it)
                data = os.pread(self.fd, min(_PREAD_BYTES, upto - at), at)
                if not data:
                    self.stats.uncounted, self.stats.uncounted_at = "the file was cut short", at
                    return
                at += len(data)
                self.base += data.count(b"\n")
        except OSError as e:
            # unreadable now: its later lines are numbered from where counting stopped
            self.stats.uncounted, self.stats.uncounted_at = str(e), at

    def _number_from_ahead(
        self, block: bytes, start: int, ahead: Iterable[tuple[bytes, bool, bool]]
    ) -> None:
        """Number the lines left uncounted before `block` (at `start`) from grep's next match,
        in it or in the blocks read after it (`ahead`: the tail, held until the end), by
        counting the lines between: a few MB, not the middle read again."""
        m = self.matches
        if m is None:
            return
        j = bisect.bisect_left(m.offsets, start)
        if j >= len(m.offsets) or m.offsets[j] >= self.matched_to:
            return
        off, newlines, at = m.offsets[j], 0, start
        for data, exact, _ in itertools.chain(((block, True, False),), ahead):
            if not exact:
                return  # a NUL dropped, a line cut: grep's offsets no longer line up
            if off < at + len(data):
                newlines += data.count(b"\n", 0, off - at)
                self.base, self.counted_to = m.lines[j] - 1 - newlines, None
                return
            newlines += data.count(b"\n")
            at += len(data)

    def feed(
        self,
        block: bytes,
        every: bool,
        exact: bool,
        ahead: Iterable[tuple[bytes, bool, bool]] = (),
    ) -> None:
        """Search one block: for every needle (`every`) or for the common ones. `ahead`: the
        blocks already read that follow it (block, exact, early)."""
        stats = self.stats
        found = None if every else self._grep_starts(block, exact)
        start = self.offset
        self.offset += len(block)
        if found is not None and not self.follow and (stats.first_progress or start > self.small):
            self._numbered(block, start, found)
            return
        if self.counted_to is not None and exact:
            self._number_from_ahead(block, start, ahead)
        self.count_the_uncounted(start)  # where that could not: read them again
        self._counted(block, start, every, found)

    def _numbered(self, block: bytes, start: int, found: list[tuple[int, int]]) -> None:
        """The middle of a big log: the lines grep found, numbered by grep, and their windows.
        The lines after the last window are counted only where no later match numbers them."""
        stats, sink, inert = self.stats, self.sink, self.inert
        pos, lineno, follow = 0, 0, 0
        for s, n in found:
            if s < pos:
                continue
            e = block.find(b"\n", s)
            end = len(block) if e < 0 else e
            _emit(block[s:end], n, sink, stats, inert)
            follow = _follow_count(block[s:end].lower())
            pos, lineno, follow = _window(block, end + 1, n, follow, sink, stats, inert)
        if found:
            self.base, self.counted_to = lineno, None  # the lines before pos, by grep's numbers
        if follow or not self._numbered_later():  # count the rest now, not read it again later
            self.count_the_uncounted(start)
            self.base += block.count(b"\n", pos) + (pos < len(block) and not block.endswith(b"\n"))
        elif self.counted_to is None:
            self.counted_to = start + pos
        self.follow = follow

    def _counted(
        self, block: bytes, start: int, every: bool, found: list[tuple[int, int]] | None
    ) -> None:
        """A block whose lines are counted: the log's edges, a small log, a block that grep
        does not cover or that a window runs into."""
        stats, sink, inert = self.stats, self.sink, self.inert
        low = block.lower()
        if not stats.first_progress and start <= self.small:
            at = first_progress(low)
            if at >= 0:
                stats.first_progress = self.base + low.count(b"\n", 0, at) + 1
        if every:
            starts = (
                line_starts_in_bytes(low, NEEDLES + RARE_NEEDLES)
                if len(low) >= GREP_BLOCK_BYTES
                else None
            )
            if starts is None:
                starts = _hits(low, NEEDLES + RARE_NEEDLES)
        else:
            starts = [s for s, _ in found] if found is not None else _hits(low, NEEDLES)
        # Lines owed from the previous block come first.
        pos, lineno, follow = _window(block, 0, self.base, self.follow, sink, stats, inert)
        for s in starts:
            if s < pos:
                continue
            lineno += block.count(b"\n", pos, s)
            e = block.find(b"\n", s)
            end = len(block) if e < 0 else e
            lineno += 1
            _emit(block[s:end], lineno, sink, stats, inert)
            follow = _follow_count(low[s:end])
            pos, lineno, follow = _window(block, end + 1, lineno, follow, sink, stats, inert)
        lineno += block.count(b"\n", pos)
        if pos < len(block) and not block.endswith(b"\n"):
            lineno += 1  # a last line without its newline
        self.base, self.follow = lineno, follow
