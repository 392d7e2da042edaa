"""The rank the others waited for: when a collective timed out on all ranks but one, or the
launcher (torchrun, srun) names the rank that failed first, that rank's own error (an
exception, a logged error, its NCCL's word on a peer it lost) explains the timeouts better than
the timeouts do.

    waited = silent_rank_error(engine, groups, root)  # root: the NCCL timeout's group
    waited.first.text  # -> "torch.OutOfMemoryError: CUDA out of memory. ..." on rank 49

Pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from babysit.records import Category
from babysit.triage.anatomy import anatomy
from babysit.triage.engine import Engine
from babysit.triage.findings import Finding, Group, before, earlier, meaning
from babysit.triage.logged import went_on
from babysit.triage.standins import ERROR_RECORD


def silent_rank_error(engine: Engine, groups: Iterable[Group], root: Group) -> Group | None:
    """The error behind a collective timeout, on the rank it points at: the launcher's first
    observed failure (torchrun's, or srun's first task that ended: launchers.py), or the rank
    that never reported the timeout (collectives.suspects) crashed on an exception (its
    traceback is in the log) before the others timed out, one that ranks below a timeout by
    itself (a RuntimeError no rule knows, a notebook's exception header: alone, they may follow
    a failure or say little; here the others waited for that rank). A line that only names an
    error (a warning, a logged exception the rank went on after) is not enough, unless the
    launcher names that rank as the one that failed first, on a Python error (exit code 1):
    then the last error it printed before the others timed out is why it exited (a logged
    `Uncaught AssertionError`, a notebook's out-of-memory, a shell's missing command), a line it
    logged at its error level too (log.error_record, alone only the weakest finding); and, when
    it printed no error and exited on one or on NCCL's abort (SIGABRT), its NCCL's word on a
    peer or a link it lost (alone a consequence: here the rank that did not time out, so why
    the others did)."""
    timeout = meaning(root.first)
    if timeout.category != Category.NCCL_TIMEOUT or timeout.role != "cause" or not root.ranks:
        return None
    wanted: set[int] = set()
    exited: int | None = None  # the rank the launcher saw fail first
    launched = engine.launchers.first_failure()
    exit_code = launched.exit if launched is not None else None
    if launched is not None and launched.rank is not None:
        exited = launched.rank
        wanted.add(exited)
    behind = engine.collectives.suspects(set(root.ranks))[1]
    if behind is not None:
        wanted.add(behind)
    timeouts = [root.first, *root.samples]
    best: Group | None = None  # the first error with its traceback
    last: tuple[Finding, Group] | None = None  # the named rank's last error, traceback or not
    lost: tuple[Finding, Group] | None = None  # its last word on a peer it lost
    for g in groups:
        m = meaning(g.first)
        cause = m.role == "cause" and m.precedence < timeout.precedence
        first = g.first
        if (
            cause
            and first.frames
            and first.rank in wanted
            and _before_all(first, root, timeouts)
            and (best is None or earlier(first, best.first))
        ):
            best = g
        if exited is None:
            continue
        for f in (g.first, *g.samples):  # the rank's own lines, the last of them
            if f.rank != exited or not _before_all(f, root, timeouts) or not _uncaught(f):
                continue
            if (cause or f.rule.id == ERROR_RECORD.id) and exit_code in (1, None):
                last = (f, g) if last is None or earlier(last[0], f) else last
            elif m.category == Category.NCCL_ERROR and exit_code in (1, -6, None):
                lost = (f, g) if lost is None or earlier(lost[0], f) else lost
    if best is not None:
        return best
    chosen = last or lost
    if chosen is None:
        return None
    f, g = chosen
    # (its own set of bodies: the group's __post_init__ adds the new first's to it)
    return g if f is g.first else dataclasses.replace(g, first=f, bodies=set(g.bodies))


def _before_all(f: Finding, root: Group, timeouts: list[Finding]) -> bool:
    """Whether f came before the timeouts (the root's first, and each of those in its own file)
    on a rank that did not time out itself: one that did is a victim."""
    if f.rank in root.ranks:
        return False
    return before(f, root.first) and all(before(f, t) for t in timeouts if t.file == f.file)


def _uncaught(f: Finding) -> bool:
    """Whether a finding may be the error that ended its program: a strong one, or a weak one
    quoted in a line (a notebook's header, `AttributeError    Traceback (most recent call
    last)`; a logger's `TRAINER: NameError: ...`, `CRITICAL Uncaught AssertionError: ...`) that
    is no warning; neither saying the program went on (a retry, a skipped sample, a tracker's
    own error)."""
    if went_on(f.text):
        return False
    if not f.weak:
        return True
    quoted = f.rule.id.startswith("python.") or "Traceback (most recent call last)" in f.text
    return quoted and not anatomy(f.text).warning


__all__ = ["silent_rank_error"]
