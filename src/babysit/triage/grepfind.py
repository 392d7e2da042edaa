"""Find many needles in one pass of grep, for the big logs where one `bytes.find` pass a needle
is the cost of triage.

    found = match_offsets_in_file("slurm-1234.out", (b"error", b"traceback"), 30.0)
    # -> (Matches(offsets=array('q', [812, 90411]), lines=array('q', [9, 1201])), False)
    starts = line_starts_in_bytes(block_lowercased, NEEDLES + RARE_NEEDLES)

GNU grep looks for all of a set of needles at once: on a 1 GB log of 512 ranks it finds babysit's
common needles several times faster than fourteen `bytes.find` passes, and a hundred needles in
a window of a few MB for the price of starting it. Two ways, the same matches (grep -o reports
the longest match at the leftmost place either way):

- as fixed strings (`-F`, one `-e` a needle), searched by grep's string matcher (kwset): its
  cost is in the bytes, ~3.9 s for the 380 needles of a 1 GB log's middle (GNU grep 3.8,
  benchmarks/triage_throughput.py), next to nothing for each match;
- `sparse`: as one extended regular expression, their alternation (`error|traceback|nccl warn`,
  each escaped), searched by grep's DFA in half that (2.0 s), but each match then found again
  by its regex matcher, ~40 us a match (22 s against 1.2 s on 570,000 matches in 60 MB): for a
  pass the caller expects to match few lines, with a cap on them past which it goes again as
  strings.

They return where the needles are (the matches in a file, the lines in a block), or None when
grep is missing, fails, runs past its time or its memory cap: the caller then searches in
Python, which is slower and finds the same lines.

grep runs with the C locale (bytes, ASCII case folding, as `bytes.lower()` does), `-a` (a log
with a stray NUL is still text), `-o -b` (the offset of each match, never the line itself: a
20 MB line costs no output; in a file, `-n` too: the line of each, so that the caller need not
count the lines of a big log's middle, where it found nothing), a cap on its address space (a
multi-GB line without a newline cannot take the machine's memory) and a cap on the matches it
reports (a log that says `error` on every line does not fill ours). It is our own child: killed
when its time is up or when we are interrupted (subprocess.run does that).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

MEMORY_CAP_KB = 512 * 1024  # grep's address space (ulimit -v): far above what a log needs
MAX_MATCHES = 2_000_000  # past this many matching lines, grep stops and the caller goes on
_OFFSET = re.compile(rb"^(\d+):", re.MULTILINE)


@dataclass
class Matches:
    """grep's matches in a file, in file order: each one's byte offset and line (from 1)."""

    offsets: array[int] = field(default_factory=lambda: array("q"))
    lines: array[int] = field(default_factory=lambda: array("q"))


def grep_path() -> str | None:
    """The grep to use, or None (then the Python search is used)."""
    return shutil.which("grep")


# What an extended regular expression gives a meaning to, outside brackets (POSIX; `]` and `}`
# alone are literal, and GNU grep warns of a backslash before a literal character).
_ERE_SPECIAL = re.compile(rb"([\\.\[()*+?{|^$])")


def alternation(needles: Sequence[bytes]) -> bytes:
    """The needles as one POSIX extended regular expression that matches any of them."""
    return b"|".join(_ERE_SPECIAL.sub(rb"\\\1", nd) for nd in needles)


def _command(
    grep: str,
    needles: Sequence[bytes],
    ignore_case: bool,
    most: int | None = None,
    numbered: bool = False,
    sparse: bool = False,
) -> list[bytes]:
    args = [b"-E" if sparse else b"-F", b"-a", b"-o", b"-b"]
    args += [b"-m", str(most or MAX_MATCHES).encode()]
    if ignore_case:
        args.append(b"-i")
    if numbered:  # `LINE:OFFSET:match`: costs grep nothing measurable on a 1 GB log
        args.append(b"-n")
    if sparse:
        args += [b"-e", alternation(needles)]
    else:
        for nd in needles:
            args += [b"-e", nd]
    # `ulimit -v` through sh: no preexec_fn (unsafe with threads), no prlimit (not everywhere).
    return [
        b"/bin/sh",
        b"-c",
        b'ulimit -v "$0" 2>/dev/null; exec "$@"',
        str(MEMORY_CAP_KB).encode(),
        grep.encode(),
        *args,
    ]


def _run(cmd: list[bytes], stdin: bytes | None, timeout_s: float) -> bytes | None:
    """grep's output (`OFFSET:match` lines, in the order of the input); None when it failed."""
    try:
        proc = subprocess.run(
            cmd,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=max(timeout_s, 0.01),
            env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if proc.returncode not in (0, 1):  # 1: nothing found; 2: trouble (memory, I/O)
        return None
    return proc.stdout


def _offsets(out: bytes) -> array[int]:
    """The matches' byte offsets, in order (grep reports them in the order of its input)."""
    return array("q", (int(m.group(1)) for m in _OFFSET.finditer(out)))


def line_starts_in_bytes(
    data: bytes, needles: Sequence[bytes], timeout_s: float = 30.0
) -> list[int] | None:
    """The starts of the lines of `data` (already lowercased) that hold one of `needles`
    (lowercase), sorted; None when grep cannot say."""
    grep = grep_path()
    if grep is None or not needles:
        return None
    out = _run(_command(grep, needles, ignore_case=False), data, timeout_s)
    if out is None:
        return None
    rfind = data.rfind
    starts: list[int] = []
    for o in _offsets(out):
        s = rfind(b"\n", 0, o) + 1
        if not starts or starts[-1] != s:
            starts.append(s)
    return starts


_MATCH = re.compile(rb"^(\d+):(\d+):(.*)$", re.MULTILINE)


def match_offsets_of_two_sets(
    path: str,
    needles: Sequence[bytes],
    rare: Sequence[bytes],
    timeout_s: float,
    most: int | None = None,
    sparse: bool = False,
) -> tuple[Matches, Matches, bool] | None:
    """One grep pass for two sets of needles (lowercase ASCII, matched ignoring case): the
    matches of `needles` and the matches that are `rare`'s alone, and whether grep may have
    stopped at `most` (default MAX_MATCHES) lines; None when grep cannot say. A rare match that
    holds a common needle (`failcnt` holds `fail`) counts as common: grep reports the longest of
    the needles that start at one place. `sparse`: the needles as one regular expression, for a
    file expected to hold few of them (above)."""
    out = _grep_file(path, (*needles, *rare) if needles else (), timeout_s, most, sparse)
    if out is None:
        return None
    common, alone = Matches(), Matches()
    kind: dict[bytes, bool] = {}  # the matched text (lowercased) -> common
    for m in _MATCH.finditer(out):
        text = m.group(3).lower()
        is_common = kind.get(text)
        if is_common is None:
            is_common = kind[text] = any(nd in text for nd in needles)
        into = common if is_common else alone
        into.lines.append(int(m.group(1)))
        into.offsets.append(int(m.group(2)))
    return common, alone, _capped(out, most)


def match_offsets_in_file(
    path: str, needles: Sequence[bytes], timeout_s: float, most: int | None = None
) -> tuple[Matches, bool] | None:
    """The matches of `needles` (lowercase ASCII, matched ignoring case) in the file at `path`,
    and whether grep may have stopped at `most` (default MAX_MATCHES) lines (then they cover
    the file only up to the last one); None when grep cannot say."""
    both = match_offsets_of_two_sets(path, needles, (), timeout_s, most)
    return None if both is None else (both[0], both[2])


def _grep_file(
    path: str, needles: Sequence[bytes], timeout_s: float, most: int | None, sparse: bool = False
) -> bytes | None:
    """grep's `LINE:OFFSET:match` lines for the file at `path`, ignoring case; None when it
    cannot say (no grep, no needles, a failure)."""
    grep = grep_path()
    if grep is None or not needles:
        return None
    cmd = [*_command(grep, needles, True, most, numbered=True, sparse=sparse), b"--", path.encode()]
    return _run(cmd, None, timeout_s)


def _capped(out: bytes, most: int | None) -> bool:
    """Whether grep may have stopped at `most` (default MAX_MATCHES) matching lines."""
    return out.count(b"\n") >= (most or MAX_MATCHES)
