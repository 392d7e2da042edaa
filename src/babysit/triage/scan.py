"""Stream a log and hand over only the lines that may matter: the cheap prefilter before regexes.

    stats = scan(open("slurm-1234.out", "rb"), "slurm-1234.out", engine.feed)

A 1 GB log from 512 ranks is mostly step lines. The file is read in 1 MiB chunks, lowercased
in C, and searched for a handful of needles (`error`, `traceback`, `nccl`-free words such as
`kill`, `timeout`, `sig`, ...) with `bytes.find`, one pass per needle; only the lines around a
hit are decoded and handed to the engine. A traceback hands over the lines after it (its
frames, and the exception that ends it, which need not contain a needle:
`pyarrow.lib.ArrowInvalid: ...`), and torchrun's failure summary hands over its block (host,
rank, exit code). A line the engine found meaningless whatever came before it (a UserWarning
repeated by 512 ranks) is remembered, its rank label aside, and not handed over again.

Bad input loses nothing and raises nothing: invalid UTF-8 is replaced, CR/LF and bare CR
(progress bars) split lines, a line longer than MAX_LINE_BYTES is cut (its head is still read),
NUL bytes are dropped (a log truncated under its writer starts with a hole of them; UTF-16 is
mostly them), escapes and other control bytes stay in the text. Only a file that is not text
(is_binary: the magic number of a checkpoint, an archive or a core dump, or a sample that is
mostly control bytes and invalid UTF-8 once its NULs are dropped) is reported and skipped.
"""

from __future__ import annotations

import bisect
import io
import itertools
import os
import re
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import BinaryIO

from babysit.triage.grepfind import (
    Matches,
    line_starts_in_bytes,
    match_offsets_in_file,
    match_offsets_of_two_sets,
)
from babysit.triage.needles import GREP_MIDDLE_NEEDLES, NEEDLES, RARE_NEEDLES

CHUNK_BYTES = 1 << 20
MAX_LINE_BYTES = 64 << 10  # the part of a huge line that is read; the rest is skipped
TAIL_BYTES = 32 << 10  # the end of a log kept for reading its last lines (triage/stall.py)
SMALL_FILE_BYTES = 64 << 20  # files up to this size are also searched for the rare needles
# A bigger log is searched for the rare needles at its edges in Python: how the job started (a
# state dict that does not fit, a rendezvous) and how it ended (the kernel's OOM kill pasted
# in, the eviction, the NaN, the scheduler's last word); in its middle only by grep's second
# pass over a regular file, kept while its matches stay under grepfind.MAX_MATCHES.
RARE_HEAD_BYTES = 4 << 20
RARE_TAIL_BYTES = 16 << 20
GREP_BLOCK_BYTES = 256 << 10  # blocks this big are searched for every needle by grep
GREP_TIMEOUT_S = 600.0  # a whole-file grep without a deadline of the caller's
# Past this many lines matching GREP_MIDDLE_NEEDLES (each decoded and matched in Python, ~40 us;
# Megatron's `number of nan iterations: 0` on every step) the middle goes without them.
MIDDLE_MATCHES = 20_000
_KERNELISH = (b"kernel:", b"nvrm:", b"] nvrm", b"kubelet", b"evicted", b"slurmstepd")
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


# The magic numbers of files that sit next to logs and are not text: gzip (inside a stream
# already unpacked), zip (torch.save, .npz), ELF (a core dump), numpy, pickle, HDF5, SQLite, PNG,
# xz, zstd.
_MAGIC: tuple[bytes, ...] = (
    b"\x1f\x8b",
    b"PK\x03\x04",
    b"\x7fELF",
    b"\x93NUMPY",
    b"\x80\x02",
    b"\x80\x03",
    b"\x80\x04",
    b"\x80\x05",
    b"\x89HDF\r\n\x1a\n",
    b"SQLite format 3\x00",
    b"\x89PNG\r\n\x1a\n",
    b"\xfd7zXZ\x00",
    b"\x28\xb5\x2f\xfd",
)
_SAMPLE_BYTES = 64 << 10
# Control bytes that no text holds; tab, newlines, form feed, backspace, bell and escape do
# (progress bars, colours, terminal titles).
_NOT_TEXT = bytes(b for b in range(32) if b not in b"\t\n\x0b\x0c\r\x1b\x07\x08\x00")
# Shares of the sample's bytes (NULs aside): random bytes are ~9% _NOT_TEXT and ~50% bad UTF-8;
# text is ~0% _NOT_TEXT (a stray byte or two a line at most), and bad UTF-8 only in a legacy
# encoding (GBK, Latin-1), which holds no control bytes either.
_CONTROL_SHARE = 0.05
_CONTROL_WITH_BAD_UTF8 = (0.01, 0.3)


def is_binary(head: bytes) -> bool:
    """Whether a file that starts with `head` is not text: a known magic number, or a sample
    (its NULs dropped) with many control bytes other than escapes, tabs, bells and backspaces,
    or some of them with much invalid UTF-8 (a tensor dump)."""
    if head.startswith(_MAGIC):
        return True
    if head[257:262] == b"ustar" or (head.startswith(b"BZh") and head[4:10] == b"1AY&SY"):
        return True  # tar, bzip2
    if head[8:10] == b'{"' and 2 <= int.from_bytes(head[:8], "little") < 100 << 20:
        return True  # safetensors: an 8-byte header length, then its JSON header
    sample = head[:_SAMPLE_BYTES].replace(b"\x00", b"")
    if len(sample) < 64:
        return False  # nothing (or only a hole of NULs) to judge: read it, it costs nothing
    n = len(sample)
    control = (n - len(sample.translate(None, _NOT_TEXT))) / n
    if control > _CONTROL_SHARE:
        return True
    low, bad = _CONTROL_WITH_BAD_UTF8
    return control > low and sample.decode("utf-8", "replace").count("\ufffd") / n > bad


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class _Chunker:
    """Split a stream into whole-line blocks; lines longer than MAX_LINE_BYTES are cut."""

    def __init__(self, stream: BinaryIO, stats: ScanStats) -> None:
        self.stream = stream
        self.stats = stats
        self.carry = b""
        self.skipping = False  # inside the rest of a cut line
        # Whether the blocks are still the file's bytes as they are (no NUL dropped, no line
        # cut): grep's offsets into the file hold only while they are.
        self.exact = True

    def blocks(self, first: bytes) -> list[bytes] | None:
        """The next whole-line blocks (ending in \\n, except at EOF); None at EOF."""
        data = first if first else self.stream.read(CHUNK_BYTES)
        if not data:
            if self.carry:
                rest, self.carry = self.carry, b""
                return [rest]
            return None
        self.stats.size_bytes += len(data)
        if b"\x00" in data:  # one memchr a chunk; the rest of the scan never sees a NUL
            data = data.replace(b"\x00", b"")
            self.exact = False
        if self.skipping:
            nl = data.find(b"\n")
            if nl < 0:
                return []
            self.skipping = False
            data = data[nl + 1 :]
        buf = self.carry + data if self.carry else data
        cut = buf.rfind(b"\n")
        if cut < 0:
            if len(buf) > MAX_LINE_BYTES:
                # A huge line: keep its head as a line of its own and skip to its end.
                self.stats.long_lines += 1
                self.carry = b""
                self.skipping = True
                self.exact = False
                return [buf[:MAX_LINE_BYTES] + b"\n"]
            self.carry = buf
            return []
        block, self.carry = buf[: cut + 1], buf[cut + 1 :]
        if len(self.carry) > MAX_LINE_BYTES:
            self.stats.long_lines += 1
            block += self.carry[:MAX_LINE_BYTES] + b"\n"
            self.carry = b""
            self.skipping = True
            self.exact = False
        return [block]


def _middle_needles(path: str, size: int) -> tuple[bytes, ...]:
    """The rare needles grep looks for in the middle of a log of `size` bytes: those of
    GREP_MIDDLE_NEEDLES that a sample of its middle does not hold on many lines (a needle on
    more than MIDDLE_MATCHES // 4 lines of the whole log, at the sample's rate, is chatter:
    Megatron's `number of nan iterations` on every step, NCCL's INFO lines, a warning each
    step); none when the ones left would still pass MIDDLE_MATCHES. Judged from its middle,
    not its head, whose start-up output says little of the training's lines."""
    try:
        with open(path, "rb") as f:
            f.seek(size // 2)
            sample = f.read(CHUNK_BYTES)
    except OSError:
        return GREP_MIDDLE_NEEDLES
    low = sample[sample.find(b"\n") + 1 :].lower()
    scale = size / max(len(low), 1)
    kept: list[bytes] = []
    total = 0.0
    for nd in GREP_MIDDLE_NEEDLES:
        expected = low.count(nd) * scale
        if expected <= MIDDLE_MATCHES // 4:
            kept.append(nd)
            total += expected
    return tuple(kept) if total <= MIDDLE_MATCHES else ()


def _fd_of(stream: BinaryIO, path: str) -> int | bool | None:
    """The descriptor of the open file `stream` reads; False when `path` now names another
    file (a log rotated or replaced since it was opened: grep read that one); None when the
    stream has no descriptor (then grep's offsets are trusted, and no line is left to count)."""
    try:
        fd = stream.fileno()
        here, there = os.fstat(fd), os.stat(path)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None
    return fd if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino) else False


def _grep_whole_file(
    path: str, size: int, deadline: float | None
) -> tuple[Matches, bool, tuple[bytes, ...]] | None:
    """grep's pass over a big file: its matches, whether grep stopped before the end
    (MAX_MATCHES lines), and the rare needles of the middle they hold too (none: the common
    ones alone); None when grep cannot say (then the blocks are searched in Python).

    The rare needles go in the same pass as the common ones (a second pass costs ~0.6 s a GB):
    the eviction, the NaN, the OOM kill that the run went on after, the start-up error of a
    log whose head is long. Only while they stay rare: those that a middle holds on many lines
    (judged from a sample: _middle_needles) are left out, and the middle is searched for the
    common needles alone when the rare matches still pass MIDDLE_MATCHES (again, when grep
    stopped before the common ones were all found)."""

    def left() -> float:
        return GREP_TIMEOUT_S if deadline is None else deadline - time.monotonic()

    middle = _middle_needles(path, size)
    if middle:
        both = match_offsets_of_two_sets(path, NEEDLES, middle, left())
        if both is None:
            return None
        common, alone, capped = both
        if len(alone.offsets) <= MIDDLE_MATCHES:
            return _merged(common, alone), capped, middle
        if not capped:
            return common, False, ()
    only = match_offsets_in_file(path, NEEDLES, left())
    return None if only is None else (only[0], only[1], ())


def _merged(a: Matches, b: Matches) -> Matches:
    """The matches of `a` and of `b` (each in file order), in file order."""
    pairs = sorted(
        itertools.chain(zip(a.offsets, a.lines, strict=True), zip(b.offsets, b.lines, strict=True))
    )
    return Matches(array("q", (o for o, _ in pairs)), array("q", (n for _, n in pairs)))


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
    text = _decode(raw).rstrip("\r\n")
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


class _Blocks:
    """Hands the whole-line blocks of one file to the sink, in file order: each block searched
    for the common needles (from grep's whole-file pass where it ran and still lines up with
    the block), or for every needle (the log's edges, small logs), then its windows.

    In a big log's middle, the lines grep found carry grep's line numbers, and the lines
    between them are not counted (a tenth of the time of a 1 GB log): they are counted only
    where a block needs its first line's number and grep numbers none of its lines (the tail,
    searched for every needle; a block grep does not cover), by reading them again through the
    open file (`fd`: the file read, not whatever its path names by then). Not under a deadline:
    reading them again could take as long as reading them did."""

    def __init__(self, sink: Sink, stats: ScanStats) -> None:
        self.sink = sink
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

    def _count_the_uncounted(self, upto: int) -> None:
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
                data = os.pread(self.fd, min(CHUNK_BYTES, upto - at), at)
                if not data:
                    break
                at += len(data)
                self.base += data.count(b"\n")
        except OSError:
            return  # unreadable now: its later lines are numbered from where counting stopped

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
        if (
            found is not None
            and not self.follow
            and (stats.first_progress or start > SMALL_FILE_BYTES)
        ):
            self._numbered(block, start, found)
            return
        if self.counted_to is not None and exact:
            self._number_from_ahead(block, start, ahead)
        self._count_the_uncounted(start)  # where that could not: read them again
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
            self._count_the_uncounted(start)
            self.base += block.count(b"\n", pos) + (
                pos < len(block) and not block.endswith(b"\n")
            )
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
        if not stats.first_progress and start <= SMALL_FILE_BYTES:
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


def scan(
    stream: BinaryIO,
    sink: Sink,
    size: int | None = None,
    rare: bool | None = None,
    deadline: float | None = None,
    path: str | None = None,
) -> ScanStats:
    """Read the whole stream (or up to `deadline`, time.monotonic()); hand the candidate lines
    to sink(lineno, text). `rare` True searches for RARE_NEEDLES everywhere; False only at the
    edges (the first RARE_HEAD_BYTES and the last RARE_TAIL_BYTES: how the job started and how
    it ended); None decides by size and content (a small file, a kernel or Kubernetes log: True;
    a big one: False; a stream of unknown size: True for its first SMALL_FILE_BYTES, then the
    edges). `path` names the file behind the stream when it is a regular one: a big one is
    then searched for the common needles by grep (grepfind.py) in one pass."""
    stats = ScanStats()
    head = stream.read(CHUNK_BYTES)
    if not head:
        return stats
    if is_binary(head):
        stats.binary = True
        stats.size_bytes = len(head)
        return stats
    kernelish = any(k in head.lower() for k in _KERNELISH)
    everywhere = rare is True or (
        rare is None and (kernelish or (size is not None and size <= SMALL_FILE_BYTES))
    )
    # Every needle up to this offset; then the common ones, except in the last RARE_TAIL_BYTES.
    head_bytes = SMALL_FILE_BYTES if rare is None and size is None else RARE_HEAD_BYTES
    stats.needles = NEEDLES + RARE_NEEDLES if everywhere or size is None else NEEDLES
    blocks = _Blocks(sink, stats)
    if (
        not everywhere
        and path is not None
        and size is not None
        and size > head_bytes + RARE_TAIL_BYTES  # a middle to search
    ):
        found = _grep_whole_file(path, size, deadline)
        fd = _fd_of(stream, path)
        if found is not None and fd is False:
            found = None  # the path names another file than the one read (rotated): no grep
        if found is not None:
            if deadline is None and isinstance(fd, int):
                blocks.fd = fd
            blocks.matches, capped, middle = found
            at = blocks.matches.offsets
            blocks.matched_to = at[-1] if capped and at else size + 1
            blocks.rare_middle = bool(middle)
            if middle:
                stats.needles = NEEDLES + middle  # everywhere (and every one at the edges)
    chunker = _Chunker(stream, stats)
    # Blocks wait here until RARE_TAIL_BYTES come after them, so that the log's end is searched
    # for every needle whatever its size (known or not), in file order.
    pending: deque[tuple[bytes, bool, bool]] = deque()
    waiting = 0
    first = head
    last_block = before_last = b""
    while True:
        got = chunker.blocks(first)
        first = b""
        if got is None:
            break
        if deadline is not None and time.monotonic() > deadline:
            stats.stopped_early = True
            break
        for block in got:
            if not block:
                continue
            before_last, last_block = last_block[-TAIL_BYTES:], block
            if everywhere:
                blocks.feed(block, True, chunker.exact)
                continue
            pending.append((block, chunker.exact, blocks.offset + waiting < head_bytes))
            waiting += len(block)
            while pending and waiting - len(pending[0][0]) >= RARE_TAIL_BYTES:
                old, exact, early = pending.popleft()
                waiting -= len(old)
                if not early and not blocks.rare_middle:
                    stats.needles = NEEDLES
                blocks.feed(old, early, exact, pending)
    while pending:
        old, exact, _ = pending.popleft()
        blocks.feed(old, True, exact, pending)
    blocks._count_the_uncounted(blocks.offset)  # stopped early (the deadline), uncounted
    stats.lines = blocks.base
    end = (before_last + last_block)[-TAIL_BYTES:]
    stats.tail = _decode(end[end.find(b"\n") + 1 :] if len(end) == TAIL_BYTES else end).splitlines()
    for raw in reversed(last_block.rstrip(b"\r\n").split(b"\n")[-5:]):
        text = _decode(raw[:2000]).strip()
        if text:
            stats.last_line = text.split("\r")[-1].strip() or text
            break
    return stats
