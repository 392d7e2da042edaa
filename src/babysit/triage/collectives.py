"""What the collective timeouts of a log say beyond their rule: who is behind, whether the ranks
wait in different collectives (a desync), whether the job was still in its set-up.

    c = Collectives()
    c.note_rank(3)                      # every rank that printed a line
    c.note_world("... initialization options: size: 8, global rank: 0 ...")
    c.note_watchdog(1, body, text)      # a watchdog timeout's line, on rank 1
    c.suspects({0, 1, 2, 4, 5, 6, 7})   # -> ("7 of 8 ranks timed out; rank(s) 3 never ...", 3)
    c.desync()                          # -> None, or what differs
    c.at_set_up()                       # -> why it was the set-up's wait, or None

Bounded however many ranks report (100,000 at most are kept). Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

_SEQ = re.compile(r"SeqNum=(?P<seq>\d+)")
# The collective a watchdog timeout names (`[PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog
# caught collective operation timeout: WorkNCCL(SeqNum=80, OpType=ALLGATHER, ...)`): its process
# group (when the line says), sequence number and type, to tell ranks stuck in different
# collectives (a desync) from ranks waiting in one.
# The group is named by its GUID where the line has one: a PG ID counts the groups each process
# created, so two data-parallel groups of a pipeline share one on their own ranks.
_OP = re.compile(
    r"(?:\[PG ID (?P<pg>\d+)\b(?: PG GUID (?P<guid>[^\s\]]+))?[^\]]*\]\s*)?"
    r"Watchdog caught collective operation timeout: "
    r"WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>[A-Z_]+)\b"
)
_LAST_DONE = re.compile(r"last completed NCCL work: (?P<done>-?\d+)")
_NUMEL = re.compile(r"NumelIn=(?P<n>\d+)")
# The job's size, as the log states it: c10d's `ProcessGroupNCCL initialization options: size:
# 8, global rank: 0, TIMEOUT(ms): ...`, `world_size=8`, NCCL's `... rank 3 nranks 8 ...`,
# Lightning's `GLOBAL_RANK: 0, MEMBER: 1/8`.
_WORLD = re.compile(
    r"initialization options: size: (?P<a>\d{1,6})|"
    r"(?i:world[_ ]size)['\"]?\s*[:=]\s*(?P<b>\d{1,6})\b|"
    r"\brank \d{1,6} nranks (?P<c>\d{1,6})\b|MEMBER: \d{1,6}/(?P<d>\d{1,6})\b"
)
WORLD_HINTS = ("size", "SIZE", "nranks", "MEMBER")
# The collectives every rank calls with the same number of elements in (NCCL requires it): the
# same one at the same number with different sizes on two ranks is two different calls. Not
# all-to-all (uneven splits), gather or scatter (the root's side differs).
_SAME_SIZE = frozenset({
    "ALLREDUCE", "BROADCAST", "ALLGATHER", "_ALLGATHER_BASE", "REDUCE", "REDUCE_SCATTER",
    "_REDUCE_SCATTER_BASE",
})  # fmt: skip
# Point-to-point and coalesced work (SEND on one rank is RECV on its peer, at one number).
_P2P = re.compile(r"SEND|RECV|COALESCED")
# A group's first few collectives are its set-up (DDP's broadcast of the weights, a check of
# their shapes); a one-element one among them is a barrier (c10d's barrier is a one-element
# allreduce), where the ranks wait for one still preparing its data or its model.
SET_UP_COLLECTIVES = 5
_KEEP = 100_000


class TimedOut(NamedTuple):
    """The collective a rank's watchdog timeout names."""

    group: str | None  # its GUID, else its PG ID, else None (torch before 2.3 names none)
    named: bool  # by its GUID: the same group on every rank (a PG ID is per process)
    seq: int
    op: str
    numel: int | None  # NumelIn


def ranks_text(ranks: Iterable[int], limit: int = 8) -> str:
    r = sorted(ranks)
    shown = ", ".join(str(x) for x in r[:limit])
    return shown + (f" and {len(r) - limit} more" if len(r) > limit else "")


class Collectives:
    def __init__(self) -> None:
        # The ranks known to exist: every rank that printed a line, and the highest rank of a
        # world size the log states (a rank that never printed, e.g. the one that hung first,
        # still counts: the silent rank of a collective timeout is named from these).
        self.ranks_seen: set[int] = set()
        self.world_size: int | None = None
        self.watchdog: dict[int, tuple[int | None, int | None]] = {}  # rank -> (seq, done)
        self.ops: dict[int, TimedOut] = {}  # rank -> the collective its watchdog timeout names
        # The most collectives a watchdog line says had completed before its timeout (its
        # `last completed NCCL work: N`, else its SeqNum less one): 0 when the timeout came in
        # a process group's first collective, which no training step gets past.
        self.done: int | None = None
        # The largest NumelIn of the timed-out collectives: 1 for a barrier or a scalar's sync.
        self.numel: int | None = None

    # -- feeding ----------------------------------------------------------------------------

    def note_rank(self, rank: int) -> None:
        if len(self.ranks_seen) < _KEEP:
            self.ranks_seen.add(rank)

    def note_world(self, body: str) -> None:
        m = _WORLD.search(body)
        if m is None:
            return
        size = int(m["a"] or m["b"] or m["c"] or m["d"])
        if 1 <= size <= _KEEP and (self.world_size is None or size > self.world_size):
            self.world_size = size  # the largest stated: a subgroup's size is smaller
            self.ranks_seen.add(size - 1)

    def note_watchdog(self, rank: int | None, body: str, text: str) -> None:
        """A watchdog timeout's line: `body` without its prefixes, `text` the whole line (its
        prefix names the process group)."""
        seq_m = _SEQ.search(body)
        done_m = _LAST_DONE.search(body)
        completed = int(done_m["done"]) if done_m else int(seq_m["seq"]) - 1 if seq_m else None
        if completed is not None:
            self.done = max(completed, self.done or 0)
        numel_m = _NUMEL.search(body)
        if numel_m:
            self.numel = max(int(numel_m["n"]), self.numel or 0)
        if rank is None:
            return
        seq, done = self.watchdog.get(rank, (None, None))
        if seq_m:
            seq = int(seq_m["seq"])
        if done_m:
            done = int(done_m["done"])
        if len(self.watchdog) < _KEEP:
            self.watchdog[rank] = (seq, done)
            op_m = _OP.search(text)
            if op_m:
                self.ops[rank] = TimedOut(
                    op_m["guid"] or op_m["pg"],
                    op_m["guid"] is not None,
                    int(op_m["seq"]),
                    op_m["op"],
                    int(numel_m["n"]) if numel_m else None,
                )

    # -- what they say ----------------------------------------------------------------------

    def suspects(self, reported: set[int]) -> tuple[str, int | None]:
        """Who is behind, given the ranks that reported a timeout: the ranks that never
        reported one, or the rank whose last completed collective is the lowest."""
        seen = self.ranks_seen
        notes = []
        suspect: int | None = None
        if reported and seen:
            world = max(seen) + 1
            silent = sorted(set(range(world)) - reported)
            if 0 < len(silent) <= max(1, world // 8) and len(reported) >= 2:
                suspect = silent[0]
                notes.append(
                    f"{len(reported)} of {world} ranks timed out; rank(s) {ranks_text(silent)} "
                    "never reported: suspect them"
                )
        done = {r: d for r, (_, d) in self.watchdog.items() if d is not None}
        if len(done) >= 2 and len(set(done.values())) > 1:
            low = min(done.values())
            behind = sorted(r for r, d in done.items() if d == low)
            if len(behind) < len(done):
                notes.append(
                    f"rank(s) {ranks_text(behind)} completed the fewest collectives ({low})"
                )
                if suspect is None:
                    suspect = behind[0]
        return "; ".join(notes), suspect

    def desync(self) -> str | None:
        """Ranks that timed out in different collectives at the same sequence number of one
        process group, or in one collective with different sizes: their code paths differ (a
        collective one rank skips or adds, a tensor shaped by the rank's own data), which a
        restart meets again. None when every rank waits in the same collective."""
        by_seq: dict[tuple[str | None, int], dict[str, list[int]]] = {}
        sizes: dict[tuple[str | None, int, str], dict[int, list[int]]] = {}
        for rank, t in self.ops.items():
            if _P2P.search(t.op):
                continue  # a send and its receive share a number: a pipeline's pair
            by_seq.setdefault((t.group, t.seq), {}).setdefault(t.op, []).append(rank)
            if t.numel is not None and t.op in _SAME_SIZE and t.named:
                # Sizes only within a group the line names for sure: in a pipeline, the stages'
                # data-parallel groups all-reduce different sizes at the same numbers.
                key = (t.group, t.seq, t.op)
                sizes.setdefault(key, {}).setdefault(t.numel, []).append(rank)
        for (_, seq), kinds in sorted(by_seq.items(), key=lambda kv: kv[0][1]):
            if len(kinds) > 1:
                parts = [f"rank(s) {ranks_text(r)} in {op}" for op, r in sorted(kinds.items())]
                return (
                    f"the ranks timed out in different collectives at sequence number {seq} ("
                    + ", ".join(parts)
                    + "): their code paths differ, and a restart meets it again"
                )
        for (_, seq, op), by_numel in sorted(sizes.items(), key=lambda kv: kv[0][1]):
            if len(by_numel) > 1:
                parts = [
                    f"rank(s) {ranks_text(r)} with {n:,} elements"
                    for n, r in sorted(by_numel.items(), key=lambda kv: (len(kv[1]), kv[0]))
                ]
                return (
                    f"the ranks timed out in {op} at sequence number {seq} with different sizes "
                    f"({', '.join(parts)}): they are not in the same call (a collective one rank "
                    "skips or adds, or a tensor shaped by the rank's own data), and a restart "
                    "meets it again"
                )
        return None

    def at_set_up(self) -> str | None:
        """Why the timed-out collective was the set-up's (the group's first, or a barrier among
        its first SET_UP_COLLECTIVES), or None when it was not or the lines do not say."""
        if self.done == 0:
            return "in the process group's first collective: no collective had completed"
        if self.done is not None and self.done < SET_UP_COLLECTIVES and self.numel == 1:
            return f"in a barrier after only {self.done} collective(s): the set-up"
        return None
