"""What triage found: one finding a line a rule matched, grouped by rule, what each means, and
the order of two findings in time and in cause, whatever order the files and their lines came in.

    g = Group(first_finding)
    g.add(another)          # the earlier of the two becomes g.first (see `earlier`)
    earlier(kernel_xid79, rank_cuda_error)  # -> True: the kernel's word on a hardware fault first
    meaning(finding).category  # -> Category.GPU_HARDWARE: its rule's, or its Xid's entry's

Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from babysit.records import Category
from babysit.triage.knowledge import MAX_MIN_COUNT, Rule, Xid

MAX_SAMPLES = 6  # findings kept per group besides the earliest


@dataclass(frozen=True)
class Finding:
    rule: Rule
    xid: Xid | None
    file: int  # index into the files triaged
    line: int
    text: str
    body: str
    rank: int | None
    host: str | None
    gpu: str | None
    ts: float | None
    ts_kind: str | None
    seq: int  # order of arrival
    frames: tuple[tuple[int, str], ...] = ()  # the traceback it ends, head first: (line, text)
    exc_type: str | None = None
    # Weaker than its rule says: a glog warning (c10d's start-up chatter about IPv6 and ports),
    # or an exception class named inside a log message (`skipping sample 7: FileNotFoundError`)
    # rather than an exception that ended the program.
    weak: bool = False
    kernel: bool = False  # printed by the kernel or the GPU driver (see anatomy.Anatomy.kernel)


@dataclass
class Group:
    """All findings of one rule (one Xid code)."""

    first: Finding
    count: int = 1
    ranks: set[int] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    samples: list[Finding] = field(default_factory=list)
    # The different lines it holds, up to MAX_MIN_COUNT, enough for any rule's min_count (the
    # same line from every rank is one).
    bodies: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.bodies.add(self.first.body)

    def add(self, f: Finding) -> None:
        self.count += 1
        if len(self.bodies) < MAX_MIN_COUNT:
            self.bodies.add(f.body)
        if earlier(f, self.first):
            self.first = f
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append(f)
        if f.rank is not None and len(self.ranks) < 100_000:
            self.ranks.add(f.rank)
        if f.host is not None and len(self.hosts) < 10_000:
            self.hosts.add(f.host)


# What the kernel or the driver reports of these is the fault itself; the CUDA errors, NCCL
# errors and dead ranks the training processes report follow from it.
_ROOT_CATEGORIES = frozenset({Category.GPU_HARDWARE, Category.HOST_OOM})


def causal_tier(f: Finding) -> int:
    """0 for what the kernel or the GPU driver saw of a hardware fault (an Xid 79, a GPU fallen
    off the bus, the kernel's OOM killer); 1 for what the processes report; 2 for the driver's
    echo of a fault the application made (an Xid 13 or 31 after an illegal memory access).
    Whatever the clocks, the timestamps and the order of the files say, an Xid 79 in the kernel
    log explains a rank's `CUDA error: unspecified launch failure`, and a rank's illegal memory
    access explains the Xid 13 the driver logs for it."""
    if f.weak:
        return 1
    if not f.kernel and f.xid is None:
        return 1
    category = f.xid.category if f.xid is not None else f.rule.category
    return 0 if category in _ROOT_CATEGORIES else 2


def earlier(a: Finding, b: Finding) -> bool:
    """Whether a happened before b. First by cause: the kernel's and the driver's word on a
    hardware fault comes before what the processes report (`causal_tier`), which makes the
    choice the same whichever file is given first and whether or not both carry timestamps.
    Then by timestamp when both carry one of the same kind, else in the order the lines came
    (the file's order)."""
    ta, tb = causal_tier(a), causal_tier(b)
    if ta != tb:
        return ta < tb
    if a.ts is not None and b.ts is not None and a.ts_kind == b.ts_kind and a.ts != b.ts:
        return a.ts < b.ts
    return a.seq < b.seq


def before(f: Finding, g: Finding) -> bool:
    """Whether f came before g as far as the logs can tell: in one file, by its order (or
    timestamps); across files, by timestamps of one kind, and else yes (per-rank files without
    them: the rank that crashed is the one the others waited for)."""
    if f.file == g.file or (f.ts is not None and g.ts is not None and f.ts_kind == g.ts_kind):
        return earlier(f, g)
    return True


class Meaning(NamedTuple):
    category: Category
    role: str
    transient: bool | None
    suspect: str
    explain: str
    precedence: int
    confidence: float


def meaning(f: Finding) -> Meaning:
    """What a finding means: its rule's, or for an Xid its catalogue entry's."""
    rule = f.rule
    if f.xid is None or f.weak:
        weak = f.weak  # it may have mattered, but anything else explains the run better
        return Meaning(
            rule.category,
            rule.role,
            rule.transient,
            rule.suspect,
            rule.explain,
            min(rule.precedence, 9) if weak else rule.precedence,
            min(rule.confidence, 0.45) if weak else rule.confidence,
        )
    x = f.xid
    explain = f"Xid {x.code} ({x.name}): {x.explain}"
    precedence = rule.precedence if x.category == Category.GPU_HARDWARE else 60
    return Meaning(x.category, x.role, x.transient, x.suspect, explain, precedence, 0.9)
