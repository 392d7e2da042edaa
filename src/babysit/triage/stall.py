"""Progress that stopped, as a log's last lines show it, read only when triage found no error:
- a stall: the last training step, then dated lines that go on for a long time without another
  one (a monitor's pulse, a heartbeat's warnings, a TPU's health poll);
- a loop: the log ends saying one thing again and again, that it retries or waits (`Server is
  not up yet. Retrying in 2.0 seconds...`), for something that never came;
- a lock wait: the log ends where torch loads a JIT-built extension, and no rank's log shows the
  build (its lock, left behind by a build that was killed, keeps every rank waiting);
- values gone NaN in its last lines (triage/nanend.py), or a loss that jumped (lossjump.py);
- quiet: no log's last lines hold a word of an ending (an exit, a signal, a kill, an error), so
  its process had not ended where the log stops, as far as it shows.

    quiet([["step 899 | loss 2.1", "step 900 | loss 2.1"]])  # -> True
    s = stalled(tail_lines)   # -> Stall(seconds=7207.0, step="iteration 45000/ 115311 | ...",
                              #          last="[2022-05-01 05:56:18] PULSE: ...") or None
    loop = looping(tail_lines)  # -> Loop(line="... Server is not up yet. Retrying ...",
                                #         count=40, remote=True) or None

A log that ends at its last step, or whose later lines carry no timestamp, says nothing of a
stall: the job may have been killed right after the step. Nor does one whose run said it was
done. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from babysit.triage.anatomy import anatomy
from babysit.triage.blocks import first_progress
from babysit.triage.engine import TRAINING_DONE
from babysit.triage.lossjump import Jump, jump_of
from babysit.triage.nanend import QUIET_LINES, NanEnd, nan_end_of

# The least time the log must go on after its last step: longer than a slow step, a checkpoint
# save or an evaluation between two steps usually takes, and than NCCL's timeout (10 to 30 min)
# ... and at least this many times the time between the last two steps the log dates.
STALL_MIN_S = 30 * 60
STALL_INTERVALS = 3
# When the log dates no earlier step (its steps carry no date, or the one before is out of
# reach), the time between steps is unknown: an evaluation or a slow epoch could be that long.
STALL_UNKNOWN_INTERVAL_S = 2 * 3600
_LOOK_BACK = 2000  # lines before the last step searched for the step before it
# The run's own word that it ended (HF's summary `{'train_runtime': ..., 'train_loss': ...}`,
# which reads like a step): what comes after is its post-processing, not a stall.
_ENDED = re.compile(r"'train_runtime'|\btrain_runtime\b")
# A timestamp with its zone (`Z`, `+02:00`): not comparable with a naive one, which may be local.
_ZONED = re.compile(r"\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)\b")


@dataclass(frozen=True)
class Stall:
    seconds: float  # from the last step (or the first dated line after it) to the last dated line
    step: str  # the last step's line
    last: str  # the last dated line
    exact: bool = True  # False: the step had no date, `seconds` counts from the line after it


def _step(line: str) -> bool:
    return first_progress(line.lower().encode()) >= 0


def _dated(line: str) -> tuple[float, str] | None:
    a = anatomy(line)
    if a.ts is None:
        return None
    kind = a.ts_kind or ""
    return a.ts, kind + ("+zone" if kind == "iso" and _ZONED.search(line) else "")


def stalled(lines: Sequence[str]) -> Stall | None:
    """Whether `lines` (a log's last lines, oldest first) end in a long run of dated lines
    after the last training step, with no step among them."""
    last_step = next((i for i in range(len(lines) - 1, -1, -1) if _step(lines[i])), None)
    if last_step is None or last_step == len(lines) - 1:
        return None
    after = lines[last_step:]
    if any(_ENDED.search(line) or TRAINING_DONE.search(line.strip()) for line in after):
        return None
    end = next(
        ((i, d) for i in range(len(lines) - 1, last_step, -1) if (d := _dated(lines[i]))), None
    )
    if end is None:
        return None
    end_at, (end_ts, kind) = end
    own = _dated(lines[last_step])
    exact = own is not None and own[1] == kind
    # The step has no date of its own (Megatron's iteration lines): from the first dated line
    # after it, which came later than the step did.
    start = (
        own
        if exact
        else next(
            (d for i in range(last_step + 1, end_at) if (d := _dated(lines[i])) and d[1] == kind),
            None,
        )
    )
    if start is None:
        return None
    interval = _interval(lines, last_step, start) if exact else -1.0  # -1: unknown
    seconds = end_ts - start[0]
    least = STALL_UNKNOWN_INTERVAL_S if interval < 0 else STALL_INTERVALS * interval
    if seconds < max(STALL_MIN_S, least):
        return None
    return Stall(seconds, lines[last_step].strip(), lines[end_at].strip(), exact)


def _interval(lines: Sequence[str], last_step: int, dated: tuple[float, str]) -> float:
    """The time between the last step and the dated step before it (-1: none in reach)."""
    for i in range(last_step - 1, max(-1, last_step - _LOOK_BACK), -1):
        if not _step(lines[i]):
            continue
        d = _dated(lines[i])
        if d is not None and d[1] == dated[1] and d[0] < dated[0]:
            return dated[0] - d[0]
    return -1.0


def _stalled_log(tails: Sequence[Sequence[str]]) -> tuple[Stall, Sequence[str]] | None:
    """The longest stall among a run's logs and the last lines it was read from; None when a
    log with a step in its last lines went on stepping (a hang stops every rank)."""
    found: list[tuple[Stall, Sequence[str]]] = []
    for tail in tails:
        s = stalled(tail)
        if s is not None:
            found.append((s, tail))
        elif any(_step(line) for line in tail):
            return None
    return max(found, key=lambda st: st[0].seconds, default=None)


# A loop: the least number of times the log's last line is said in a row, and what makes it a
# retry or a wait, as a verb (not a progress bar's or a heartbeat's repeat, not a count of
# waiting requests, not `Done waiting`).
LOOP_MIN = 3
_RETRIES = re.compile(
    r"(?i)\bretrying\b|\bretry(?:ing)? (?:in|after)\b|\bwill retry\b|"
    r"(?<!done )(?<!finished )\bwaiting (?:for|to|on|until)\b|\bwait(?:s|ed)? (?:for|until|on)\b|"
    r"\bnot (?:up|ready|available|reachable|online) yet\b|\breconnecting\b"
)
# What a retried line waits for is across the network when its words name one of these (not
# the names of the logger or the module that printed it: `agent.server.api`, `[api_server.py:12]`).
_REMOTE = re.compile(
    r"(?i)server|connect|socket|\bhttps?\b|\burl\b|endpoint|\bport\b|network|\bdns\b|"
    r"\bhost\b|address|\bapi\b|grpc|\bredis\b|master|coordinator|rendezvous"
)
_NAMES = re.compile(r"[\w-]+(?:\.[\w-]+)+(?::\d+)?\]?|\(\w+ pid=\d+[^)]*\)|^[\w.-]+: ")
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Loop:
    line: str  # the repeated line, its last time
    count: int  # how many times in a row the log ends with it
    remote: bool  # it names a server, a connection, a host: what it waits for is remote


def _shape(line: str) -> tuple[str, int | None, str | None]:
    """A line's words without its timestamps and numbers, and who printed it (rank, host)."""
    a = anatomy(line)
    return _DIGITS.sub("0", a.body.strip()), a.rank, a.host


def looping(lines: Sequence[str]) -> Loop | None:
    """Whether `lines` (a log's last lines, oldest first) end with one line said LOOP_MIN times
    or more in a row by one process (its timestamps and numbers aside) that says it retries or
    waits."""
    said = [line for line in lines if line.strip()]
    if not said:
        return None
    last = said[-1].strip()
    if not _RETRIES.search(last) or _step(last):
        return None
    shape = _shape(last)
    count = 0
    for line in reversed(said):
        if _shape(line) != shape:
            break
        count += 1
    if count < LOOP_MIN:
        return None
    words = _NAMES.sub(" ", anatomy(last).body)
    return Loop(last, count, bool(_REMOTE.search(words)))


def loop_of(tails: Sequence[Sequence[str]]) -> Loop | None:
    """The loop that a run's logs end in (the longest), or None."""
    found = [lp for tail in tails if (lp := looping(tail)) is not None]
    return max(found, key=lambda lp: lp.count, default=None)


@dataclass(frozen=True)
class LockWait:
    line: str  # torch's extension-root line a log ends with


# torch loading a JIT-built extension (DeepSpeed's ops, a repository's CUDA plugin): `Using
# /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...`, then, from the rank
# that holds the build's lock, the build's own lines; the other ranks wait for the lock without
# a word.
_EXTENSION_ROOT = re.compile(r"as PyTorch extensions root\.*\s*$")
_EXTENSION_BUILD = re.compile(
    r"Emitting ninja build file|Building extension module|Loading extension module|"
    r"ninja: no work to do|Detected CUDA files, patching ldflags"
)


def lock_wait_of(tails: Sequence[Sequence[str]]) -> LockWait | None:
    """A run whose logs wait for an extension build's lock: one of them ends at torch's
    extension-root line, and none of the build's own lines follows such a line in any of them
    (no rank built it: a lock that a killed build left behind). A build that a log shows going
    on, cut by the log's end, is not this; nor is a second extension's load after a first one
    built (its wait is left unread)."""
    ended = ""
    for tail in tails:
        said = [line for line in tail if line.strip()]
        if said and _EXTENSION_ROOT.search(said[-1]):
            ended = said[-1].strip()
    if not ended:
        return None
    for tail in tails:
        rooted = False
        for line in tail:
            if _EXTENSION_ROOT.search(line):
                rooted = True
            elif rooted and _EXTENSION_BUILD.search(line):
                return None
    return LockWait(ended)


# How a run's logs end, where triage found no error (triage/silence.py says it).
Ending = Stall | Loop | NanEnd | Jump | LockWait


def ending_of(tails: Sequence[Sequence[str]]) -> Ending | None:
    """How a run's logs end, where triage found no error: a stall (the stalled log's own retry
    loop, when it ends in one, says what it waited for), else a retry loop, else values gone NaN
    (triage/nanend.py), else a jump of the training loss (triage/lossjump.py), else a wait for an
    extension build's lock, else None."""
    found = _stalled_log(tails)
    if found is None:
        return loop_of(tails) or nan_end_of(tails) or jump_of(tails) or lock_wait_of(tails)
    stall, tail = found
    return looping(tail) or stall


# Words of a process that ended or failed (an exit, a signal by its name or the shell's words for
# it, a kill, an error, a stop, a shutdown, an eviction, the shell's report of a finished job,
# Jupyter's server restarting a kernel that died: `KernelRestarter: restarting kernel (1/5)`,
# `kernel e2dcf2e8-... restarted`): a log whose last lines hold none of them shows no sign that
# its process ended where it stops.
# Not an error metric's name (`val_error: 0.12`, `error_rate`), nor `sigma` or `signature`.
_ENDING_WORDS = re.compile(
    r"(?i)\bkill|exit|signal|(?-i:\bSIG[A-Z]{2,}\b)|terminat|core dump|non-zero|"
    r"error(?!_?rate\b|\s*[:=]\s*-?[\d.])|exception|traceback|fail|abort|cancel|\^C|interrupt|"
    r"timed? ?out|segmentation|\bstop|hangup|alarm clock|limit exceeded|shut ?down|closed by|"
    r"\bdied\b|evict|preempt|\boom|logout|^\[\d+\][+-]?\s+(?:Done|Exit)|"
    r"restarting kernel\b|\bkernel [\w-]+ restarted\b"
)


def quiet(tails: Sequence[Sequence[str]]) -> bool:
    """Whether every log's last 30 lines that are not blank hold no word of an ending (an exit,
    a signal, a kill, an error, a stop): the log stops while its process still went on, as a
    hung job's does. A job killed from outside leaves a word more often than not (the shell's
    `Killed`, a launcher's exit code, the scheduler's `CANCELLED`)."""
    for tail in tails:
        said = [line for line in tail if line.strip()][-QUIET_LINES:]
        if any(_ENDING_WORDS.search(line) for line in said):
            return False
    return bool(tails)
