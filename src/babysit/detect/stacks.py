"""Group the stacks of a hung attempt's processes and name the odd ranks out.

    report = group_stacks(processes, ts)   # processes: ProcessStack records from a stack dump
    report.summary  # "rank 1 (pid 4242) is in load_batch (train.py:40) while 3 ranks wait in
                    #  all_reduce (torch/distributed/distributed_c10d.py:3252)"
    report.suspect  # Suspect(kind="code", host="node7", rank=1)

Which processes count: one per rank (a rank's own children that carry the same rank, its
DataLoader workers, are shown but not grouped), and no launcher (torchrun's agent has no rank)
while any process has a rank; without ranks, the processes whose parent is not among them.
Each counts with its main thread (else an active one). Processes are the same when their frames
name the same functions in the same files, whatever the lines. Groups come largest first; when
one group is larger than every other, the rest are the odd ones out; on a tie (two ranks: one in
user code, one waiting for it in an all_reduce) the groups waiting in torch.distributed (a
collective, a barrier, a store get) are taken as the majority. Pure: time comes from `ts`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from babysit.looks import KERNEL_WAIT, Frame, ProcessStack, StackGroup, StackReport, ThreadStack
from babysit.records import Suspect

# Frames in these files mean the process waits for the others (a collective, a barrier, the
# rendezvous store) rather than doing work of its own. Waiting on its own GPU is not that: a
# rank stuck there is the odd one out (its node is the suspect).
_WAIT_FILES = ("torch/distributed/", "deepspeed/comm/")
_GPU_FILES = ("torch/cuda/",)
_DATA_HINTS = ("torch/utils/data/", "datasets/", "webdataset/", "streaming/")
_DATA_WORDS = ("load", "read", "fetch", "batch", "next_data", "__getitem__", "download")


def waiting(frames: Sequence[Frame]) -> bool:
    """True when the innermost frame is in torch.distributed: the process waits for its peers
    rather than doing work of its own."""
    return bool(frames) and any(w in frames[0].file for w in _WAIT_FILES)


def on_gpu(frames: Sequence[Frame]) -> bool:
    """The innermost frame waits on the process's own GPU (torch.cuda.synchronize & co)."""
    return bool(frames) and any(w in frames[0].file for w in _GPU_FILES)


def display_file(path: str) -> str:
    """Library paths as they are (already short); the user's own files by their name."""
    return os.path.basename(path) if os.path.isabs(path) else path


def describe(frame: Frame) -> str:
    line = f":{frame.line}" if frame.line is not None else ""
    return f"{frame.function} ({display_file(frame.file)}{line})"


# The standard library's ways of waiting: a frame in one of them says how a process waits, the
# frame that called it says where (`read_shard`, not `Condition.wait`).
_PLUMBING = (
    "threading.py",
    "selectors.py",
    "socket.py",
    "queue.py",
    "subprocess.py",
    "ssl.py",
    "time.py",
    "multiprocessing/",
    "asyncio/",
    "concurrent/futures/",
)


def plumbing(frame: Frame) -> bool:
    f = frame.file.replace("\\", "/")
    return any(f.endswith(p) or f"/{p}" in f or f.startswith(p) for p in _PLUMBING)


def telling(frames: Sequence[Frame]) -> Frame:
    """The innermost frame that is not the standard library waiting on something."""
    return next((f for f in frames if not plumbing(f)), frames[0])


def where(frames: Sequence[Frame]) -> str:
    """`read_shard (train.py:29) in Condition.wait`: the telling frame, and how it waits."""
    tell = telling(frames)
    inner = frames[0]
    return describe(tell) if tell is inner else f"{describe(tell)} in {inner.function}"


def _key(frames: Sequence[Frame]) -> tuple[tuple[str, str], ...]:
    # py-spy prints qualified names (Agent._run), faulthandler bare ones (_run): compare the
    # last part, and files by their name, so that stacks from both tools group together.
    return tuple((f.function.rsplit(".", 1)[-1], os.path.basename(f.file)) for f in frames)


def _counted(processes: Sequence[ProcessStack]) -> list[ProcessStack]:
    by_pid = {p.pid: p for p in processes}
    if any(p.rank is not None for p in processes):
        return [
            p
            for p in processes
            if p.rank is not None
            and not (p.parent in by_pid and by_pid[p.parent].rank == p.rank)  # a rank's worker
        ]
    return [p for p in processes if p.parent not in by_pid]


def _ranks(ps: Sequence[ProcessStack]) -> tuple[int, ...]:
    return tuple(sorted(p.rank for p in ps if p.rank is not None))


def _who(ps: Sequence[ProcessStack], multi: bool = False) -> str:
    """ "rank 1 (pid 4242)", "3 ranks", "2 ranks (1, 5)", "process 4242", "3 processes";
    `multi` (the processes span several nodes): "rank 1 (pid 4242 on node2)"."""
    ranks = _ranks(ps)
    if len(ps) == 1:
        p = ps[0]
        pid = f"pid {p.pid} on {p.host}" if multi and p.host else f"pid {p.pid}"
        return f"rank {p.rank} ({pid})" if p.rank is not None else f"process {pid[4:]}"
    if len(ranks) == len(ps):
        listed = f" ({', '.join(map(str, ranks))})" if len(ranks) <= 8 else ""
        return f"{len(ps)} ranks{listed}"
    return f"{len(ps)} processes"


def _verb(ps: Sequence[ProcessStack], frames: Sequence[Frame]) -> str:
    plural = len(ps) > 1
    # Waiting for its peers (torch.distributed), or blocked in the standard library under a
    # frame of its own (a Condition, a queue, a sleep: `rank 1 waits in read_shard`).
    if waiting(frames) or (frames and telling(frames) is not frames[0]):
        return "wait in" if plural else "waits in"
    return "are in" if plural else "is in"


def _phrase(ps: Sequence[ProcessStack], g: StackGroup, multi: bool = False) -> str:
    return f"{_who(ps, multi)} {_verb(ps, g.frames)} {g.where}"


def _suspect_kind(frames: Sequence[Frame]) -> str:
    if on_gpu(frames):
        return "node"  # stuck on the GPU itself
    if any(h in f.file for f in frames for h in _DATA_HINTS):
        return "data"  # in a DataLoader or a dataset library
    name = telling(frames).function.rsplit(".", 1)[-1].lower() if frames else ""
    return "data" if any(w in name for w in _DATA_WORDS) else "code"


def group_stacks(processes: Sequence[ProcessStack], ts: float) -> StackReport:
    """Group `processes` by where their main thread is; name the odd ones out and whom to
    suspect. Processes whose stack could not be taken are named in the summary."""
    counted = _counted(processes)
    with_stack: list[tuple[ProcessStack, ThreadStack]] = []
    failed: list[ProcessStack] = []
    for p in counted:
        t = p.main_thread if p.error is None else None
        if t is None:
            failed.append(p)
        else:
            with_stack.append((p, t))

    buckets: dict[tuple[tuple[str, str], ...], list[tuple[ProcessStack, ThreadStack]]] = {}
    for p, t in with_stack:
        buckets.setdefault(_key(t.frames), []).append((p, t))
    groups = sorted(
        (
            StackGroup(
                where=where(members[0][1].frames),
                frames=members[0][1].frames,
                pids=tuple(p.pid for p, _ in members),
                ranks=_ranks([p for p, _ in members]),
                hosts=tuple(sorted({p.host for p, _ in members if p.host})),
            )
            for members in buckets.values()
        ),
        key=lambda g: (-len(g.pids), not waiting(g.frames), min(g.ranks, default=0), g.pids),
    )
    by_pid = {p.pid: p for p in processes}

    def members(g: StackGroup) -> list[ProcessStack]:
        return [by_pid[pid] for pid in g.pids]

    odd: tuple[StackGroup, ...] = ()
    if len(groups) > 1:
        top = len(groups[0].pids)
        leaders = [g for g in groups if len(g.pids) == top]
        if len(leaders) == 1:
            odd = tuple(groups[1:])
        elif any(waiting(g.frames) for g in leaders) and not all(
            waiting(g.frames) for g in leaders
        ):
            odd = tuple(g for g in groups if not waiting(g.frames) or len(g.pids) < top)

    multi = len({p.host for p in processes if p.host}) > 1
    summary, suspect = _summarize(groups, odd, members, with_stack, multi)
    if failed:
        p = failed[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        note = f"no stack for {_who([p], multi)}{more}: {p.error or 'no Python frames'}"
        summary = f"{summary}; {note}" if summary else note
        if not groups and len(failed) == 1:
            # Only a process stuck in the kernel blames its node; one that exited says nothing.
            kind = "node" if (p.error or "").startswith(KERNEL_WAIT) else "unknown"
            suspect = Suspect(kind=kind, host=p.host, rank=p.rank)
    return StackReport(
        ts=ts,
        processes=tuple(processes),
        groups=tuple(groups),
        odd=odd,
        summary=summary,
        suspect=suspect,
    )


def _summarize(
    groups: Sequence[StackGroup],
    odd: Sequence[StackGroup],
    members: Callable[[StackGroup], list[ProcessStack]],
    with_stack: Sequence[tuple[ProcessStack, ThreadStack]],
    multi: bool = False,
) -> tuple[str, Suspect]:
    if not groups:
        return "", Suspect()
    if len(groups) == 1:
        g = groups[0]
        ps = members(g)
        everyone = f"all {len(ps)} ranks" if g.ranks else f"all {len(ps)} processes"
        if len(ps) == 1:
            everyone = _who(ps, multi)
        if waiting(g.frames):
            return (
                f"{everyone} {_verb(ps, g.frames)} {g.where}: a collective no rank finished "
                "(suspect the network or a rank outside this node)",
                Suspect(kind="network"),
            )
        if on_gpu(g.frames):
            return (
                f"{everyone} {_verb(ps, g.frames)} {g.where}: waiting on the GPU itself "
                "(suspect the GPUs or the driver: nvidia-smi, the kernel log for Xid errors)",
                Suspect(kind="node", host=ps[0].host if len(ps) == 1 else None),
            )
        kind = _suspect_kind(g.frames)
        return f"{everyone} {_verb(ps, g.frames)} {g.where}", Suspect(kind=kind)
    majority = [g for g in groups if g not in odd]
    parts = [_phrase(members(g), g, multi) for g in odd]
    rest = ", ".join(_phrase(members(g), g, multi) for g in majority)
    if not odd:  # split evenly, nothing tells which side is wrong
        return f"the ranks are split: {rest}", Suspect()
    summary = f"{', '.join(parts)} while {rest}"
    odd_ps = [p for g in odd for p in members(g)]
    if len(odd_ps) == 1 and not all(waiting(g.frames) for g in odd):
        p = odd_ps[0]
        kind = _suspect_kind(odd[0].frames)
        return summary, Suspect(kind=kind, host=p.host, rank=p.rank)
    hosts = {p.host for p in odd_ps}
    all_hosts = {p.host for p, _ in with_stack}
    if len(hosts) == 1 and len(all_hosts) > 1:
        return summary, Suspect(kind="node", host=next(iter(hosts)))
    if all(waiting(g.frames) for g in odd):
        return summary, Suspect(kind="code")  # the majority is late, not the waiting few
    return summary, Suspect(kind=_suspect_kind(odd[0].frames))
