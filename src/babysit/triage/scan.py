"""Stream a log and hand over only the lines that may matter: the cheap prefilter before regexes.

    stats = scan(open("slurm-1234.out", "rb"), partial(engine.feed, 0), path="slurm-1234.out")

A 1 GB log from 512 ranks is mostly step lines. The file is read in 1 MiB chunks, lowercased
in C, and searched for a handful of needles (`error`, `traceback`, `nccl`-free words such as
`kill`, `timeout`, `sig`, ...) with `bytes.find`, one pass per needle, or by grep in one pass
over a big regular file (grepfind.py; what its middle is searched for: middle.py); only the
lines around a hit are decoded and handed to the engine (blocks.py). A traceback hands over the
lines after it (its frames, and the exception that ends it, which need not contain a needle:
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

import io
import itertools
import os
import time
from array import array
from collections import deque
from typing import BinaryIO

from babysit.triage.blocks import MAX_LINE_BYTES, Blocks, ScanStats, Sink, decode
from babysit.triage.grepfind import Matches, match_offsets_in_file, match_offsets_of_two_sets
from babysit.triage.middle import middle_needles
from babysit.triage.needles import NEEDLES, RARE_NEEDLES

CHUNK_BYTES = 1 << 20
TAIL_BYTES = 32 << 10  # the end of a log kept for reading its last lines (triage/stall.py)
SMALL_FILE_BYTES = 64 << 20  # files up to this size are also searched for the rare needles
# A bigger log is searched for the rare needles at its edges in Python: how the job started (a
# state dict that does not fit, a rendezvous) and how it ended (the kernel's OOM kill pasted
# in, the eviction, the NaN, the scheduler's last word); in its middle only by grep's second
# pass over a regular file, kept while its matches stay under grepfind.MAX_MATCHES.
RARE_HEAD_BYTES = 4 << 20
RARE_TAIL_BYTES = 16 << 20
GREP_TIMEOUT_S = 600.0  # a whole-file grep without a deadline of the caller's
# Past this many lines matching middle.GREP_MIDDLE_NEEDLES (each decoded and matched in Python,
# ~40 us; Megatron's `number of nan iterations: 0` on every step) the middle goes without them.
MIDDLE_MATCHES = 20_000
# A big file whose sample promises at most this many matches is searched with the needles as
# one regular expression (grepfind's `sparse`: ~2 s a GB less on the 1 GB log of
# benchmarks/triage_throughput.py, ~40 us a match more), and again as fixed strings when it
# holds more than twice as many after all (the first pass lost: 2.4 s on a 1 GB log whose last
# 200,000 lines hold `error`).
SPARSE_MATCHES = 20_000
_KERNELISH = (b"kernel:", b"nvrm:", b"] nvrm", b"kubelet", b"evicted", b"slurmstepd")
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


def _file_read(stream: BinaryIO, path: str) -> tuple[bool, int | None]:
    """Whether `path` still names the open file `stream` reads (False: a log rotated or replaced
    since it was opened, so grep read another one), and the descriptor to read that file's lines
    again through. (True, None) when it cannot tell, the stream having no descriptor or the path
    being gone: grep's offsets are trusted then, and no line is left to count later."""
    try:
        fd = stream.fileno()
        here, there = os.fstat(fd), os.stat(path)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return True, None
    same = (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
    return same, fd if same else None


def _grep_whole_file(
    path: str, size: int, deadline: float | None
) -> tuple[Matches, bool, tuple[bytes, ...]] | None:
    """grep's pass over a big file: its matches, whether grep stopped before the end
    (MAX_MATCHES lines), and the rare needles of the middle they hold too (none: the common
    ones alone); None when grep cannot say (then the blocks are searched in Python).

    The rare needles go in the same pass as the common ones (a second pass costs ~0.6 s a GB):
    the eviction, the NaN, the OOM kill that the run went on after, the start-up error of a
    log whose head is long. Only while they stay rare: those that a middle holds on many lines
    (judged from a sample: middle.middle_needles) are left out, and the middle is searched for the
    common needles alone when the rare matches still pass MIDDLE_MATCHES (again, when grep
    stopped before the common ones were all found)."""

    def left() -> float:
        return GREP_TIMEOUT_S if deadline is None else deadline - time.monotonic()

    middle, expected = middle_needles(path, size, MIDDLE_MATCHES)
    if middle:
        both = None
        if expected <= SPARSE_MATCHES:
            both = match_offsets_of_two_sets(
                path, NEEDLES, middle, left(), 2 * SPARSE_MATCHES, sparse=True
            )
            if both is not None and both[2]:  # more matches than the sample said: as strings
                both = None
        if both is None:
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
    blocks = Blocks(sink, stats, SMALL_FILE_BYTES)
    if (
        not everywhere
        and path is not None
        and size is not None
        and size > head_bytes + RARE_TAIL_BYTES  # a middle to search
    ):
        found = _grep_whole_file(path, size, deadline)
        same, fd = _file_read(stream, path)
        if not same:
            found = None  # the path names another file than the one read (rotated): no grep
        if found is not None:
            if deadline is None:
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
    blocks.count_the_uncounted(blocks.offset)  # stopped early (the deadline), uncounted
    stats.lines = blocks.base
    end = (before_last + last_block)[-TAIL_BYTES:]
    stats.tail = decode(end[end.find(b"\n") + 1 :] if len(end) == TAIL_BYTES else end).splitlines()
    for raw in reversed(last_block.rstrip(b"\r\n").split(b"\n")[-5:]):
        text = decode(raw[:2000]).strip()
        if text:
            stats.last_line = text.split("\r")[-1].strip() or text
            break
    return stats
