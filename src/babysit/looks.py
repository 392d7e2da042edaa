"""The records of a stalled attempt: the Python stacks of its processes (grouped, with the odd
ones out), what babysit saw of its processes at one moment (a Look), and what two looks say
(Evidence). Standard library and records only.

    from babysit.looks import Evidence, HangVerdict, Look, StackReport

act takes the stacks and the looks, parse.stacks reads the tools' output into them, detect
weighs them, policy.hang decides on them, and the store keeps them as documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from babysit.records import Suspect


@dataclass(frozen=True)
class Frame:
    """One frame of a Python stack, innermost first in a Stack."""

    function: str
    file: str
    line: int | None = None


@dataclass(frozen=True)
class ThreadStack:
    name: str  # "MainThread", or the thread id as the tool printed it
    frames: tuple[Frame, ...]  # innermost first
    active: bool = True  # False: py-spy says the thread is idle (waiting on a lock, sleeping)


MAIN_THREAD = "MainThread"  # the name stacks give the main thread, whatever the tool printed
KERNEL_WAIT = "stuck in the kernel (D state)"  # a process no stack dump can reach


@dataclass(frozen=True)
class ProcessStack:
    """The Python stacks of one process of a hung attempt."""

    pid: int
    rank: int | None  # from the process's RANK environment variable
    host: str
    tool: str  # "py-spy" | "faulthandler" | "none"
    threads: tuple[ThreadStack, ...] = ()
    command: str = ""  # the process's command line, shortened
    error: str | None = None  # why no stack could be taken
    parent: int | None = None  # its parent's pid: tells a rank's own workers (DataLoader) apart
    raw: str = ""  # the tool's own output, as act took it, until parse.stacks reads it

    @property
    def main_thread(self) -> ThreadStack | None:
        """The thread that tells where the process is: the main thread, else the first active
        one, else the first with frames (grouping and the stored document agree on it)."""
        with_frames = [t for t in self.threads if t.frames]
        for t in with_frames:
            if t.name == MAIN_THREAD:
                return t
        active = [t for t in with_frames if t.active]
        return (active or with_frames)[0] if with_frames else None


@dataclass(frozen=True)
class StackGroup:
    """Processes whose main stacks are the same (the frames' functions and files)."""

    where: str  # plain words: "all_reduce (torch/distributed/distributed_c10d.py:2501)"
    frames: tuple[Frame, ...]  # innermost first
    pids: tuple[int, ...]
    ranks: tuple[int, ...]
    hosts: tuple[str, ...] = ()  # the nodes its processes ran on, sorted


@dataclass(frozen=True)
class StackReport:
    """Grouped stacks of every process of a hung attempt, and the odd ones out."""

    ts: float
    processes: tuple[ProcessStack, ...]
    groups: tuple[StackGroup, ...]  # largest first
    odd: tuple[StackGroup, ...]  # groups that differ from the majority (the suspects)
    summary: str  # "rank 1 (pid 4242) is in load_batch (train.py:40) while 3 ranks wait in ..."
    suspect: Suspect = field(default_factory=Suspect)


@dataclass(frozen=True)
class ProcessLook:
    """One process of a stalled attempt as the kernel shows it at one moment."""

    pid: int
    state: str  # psutil's words: "running", "sleeping", "disk-sleep", "stopped", "tracing-stop"
    cpu_s: float | None = None  # user + system CPU seconds so far (None: not readable)
    io_bytes: int | None = None  # bytes read and written through system calls so far
    rank: int | None = None


@dataclass(frozen=True)
class Look:
    """What babysit saw of a stalled attempt at one moment: its processes, their stacks, the
    files being written (path -> size: open for writing by the attempt, or in the checkpoint
    directory), and the GPUs' busiest utilisation (None: no GPU figure)."""

    ts: float
    processes: tuple[ProcessLook, ...]
    stacks: StackReport | None = None
    files: Mapping[str, int] = field(default_factory=dict)
    gpu_util_pct: float | None = None
    gpus: bool = False  # the machine has NVIDIA GPUs (with or without an NVML figure)


class HangVerdict(str, Enum):
    STUCK = "stuck"  # kill it now
    WORKING = "working"  # silent but busy: wait
    UNSURE = "unsure"  # no evidence either way: hang.kill_after_s decides


@dataclass(frozen=True)
class Evidence:
    """What two looks at a stalled attempt say, and the sign that decided: stuck ("stopped",
    "kernel_wait", "parked", "odd_rank", "idle"), working ("file_growing", "cpu", "gpu") or
    unsure ("debugger", "waiting", "none")."""

    verdict: HangVerdict
    sign: str
    reason: str  # plain words: "rank 1 (pid 4242) is stopped (state T) ..."
    looked_s: float = 0.0  # seconds between the two looks
    rank: int | None = None  # the rank to name, when one stands out
    pid: int | None = None
