"""What the launchers say about the process that failed first: torchrun's failure summary
(`Root Cause (first observed failure):`, then its host, rank and exit code), srun's word on
each task that ended badly (`srun: error: node-006: task 49: Exited with exit code 1`), the first
of them, printed when that task ended, and mpirun's (Open MPI's, Horovod's) on the first process
that exited badly (`The first process to do so was:`, then its name and exit code; `mpirun
noticed that process rank 7 with PID 0 on node gpu12 exited on signal 9 (Killed).`).

    seen = Launchers()
    seen.feed(0, "srun: error: node-006: task 49: Exited with exit code 1")
    seen.first_failure()  # -> FirstFailure(host="node-006", rank=49, exit=1, by="srun")

An srun task is a rank only where srun starts one process a rank (Megatron's and NeMo's way on
Slurm); under a launcher that starts the ranks itself (torchrun, DeepSpeed's, accelerate's: one
task a node), a task is a node, and its number says nothing of the rank: srun's word counts
only in logs where no such launcher shows. torchrun's summary, where there is one, wins.
Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK_HOST = re.compile(r"^\s*host\s*:\s*(?P<host>\S+)")
_BLOCK_RANK = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d+)")
_BLOCK_EXIT = re.compile(r"^\s*exitcode\s*:\s*(?P<code>-?\d+)")
# Slurm's srun/launch.c: `%s: %s %s: Exited with exit code %d` (hosts, `task` or `tasks`, their
# list: `49`, `0-7`, `9-10,12-15`), `%s: %s %s: %s%s` for a signal (strsignal's name, then
# ` (core dumped)` where it dumped core), `... Out Of Memory` for the cgroup's OOM kill.
_SRUN_EXIT = re.compile(
    r"^srun: error: (?P<host>\S+): tasks? (?P<tasks>\d[\d,-]*): "
    r"(?:Exited with exit code (?P<code>\d+)|(?P<signal>[A-Z][\w /]*?)(?: \(core dumped\))?)\s*$"
)
_SRUN_TERMINATING = "Terminating StepId="  # srun killing the step's other tasks (launch.c)
# Open MPI's help texts (orterun's and prun's `non-zero-exit`, `proc-aborted-signal`):
# `%s detected that one or more processes exited with non-zero status, thus causing / the job to
# be terminated. The first process to do so was: / Process name: %s / Exit code: %d`, the name
# `[[JOBFAMILY,JOB],VPID]`, the vpid the process's rank in its job; `%s noticed that process
# rank %s with PID %s on node %s exited on signal %d (%s).` Horovod's gloo runner says the
# first sentences the same way, its process named by its rank alone (`Process name: 1`).
_MPI_FIRST = "The first process to do so was:"
_MPI_NAME = re.compile(
    r"(?:^|\s)Process name:\s*(?:\[\[\d+,\d+\],(?P<vpid>\d+)\]|(?P<rank>\d+))\s*$"
)
_MPI_EXIT = re.compile(r"(?:^|\s)Exit code:\s*(?P<code>-?\d+)\s*$")
_MPI_SIGNAL = re.compile(
    r"\bnoticed that process rank (?P<rank>\d+) with PID \S+ on node (?P<host>\S+) exited on "
    r"signal (?P<signal>\d+)\b"
)
_MPI_LINES = 6  # the name and the exit code come within this many lines of `The first ...`
_SIGNALS = {
    "Hangup": 1,
    "Interrupt": 2,
    "Quit": 3,
    "Illegal instruction": 4,
    "Trace/breakpoint trap": 5,
    "Aborted": 6,
    "Bus error": 7,
    "Floating point exception": 8,
    "Killed": 9,
    "Out Of Memory": 9,  # the cgroup's OOM killer: a SIGKILL
    "Segmentation fault": 11,
    "Terminated": 15,
}
# Launchers that start the ranks themselves, one srun task a node (their own words, or their
# names on the command line srun was given).
_AGENTS = (
    "torch.distributed.elastic",
    "torch/distributed/elastic",  # its glog lines name the file
    "torch.distributed.run",
    "torchrun",
    "deepspeed.launcher",
    "accelerate launch",
)
_TORCHRUN_LABEL = re.compile(r"\[(?:rank\d{1,6}|default\d{1,4})\]:")


@dataclass(frozen=True)
class FirstFailure:
    """The process a launcher saw fail first: where, and how it ended (an exit code, or minus
    the signal that killed it); `by` names the launcher (`torchrun`, `srun`)."""

    host: str | None
    rank: int | None
    exit: int | None
    by: str


@dataclass
class Block:
    """torchrun's failure summary: `Root Cause (first observed failure):` or `Failures:`, then
    host and rank of each failure it lists."""

    root: bool
    host: str | None = None
    rank: int | None = None


class Launchers:
    def __init__(self) -> None:
        self.block: Block | None = None  # torchrun's summary being read
        self.block_file = -1
        self._root: tuple[str | None, int | None] | None = None  # (host, rank)
        self._root_exit: int | None = None
        self._srun: FirstFailure | None = None
        self._mpi: FirstFailure | None = None
        self._mpi_block: tuple[int, int] | None = None  # (file, lines left) after `The first ...`
        self._mpi_rank: int | None = None
        self._agent = False  # a launcher that starts the ranks itself showed

    def feed(self, file: int, stripped: str, text: str = "") -> None:
        """One line of file number `file`: its words (prefixes and blanks removed), and the line
        as it came (`text`: torchrun's label of a rank, `[rank3]:`, says torchrun started it)."""
        said = text or stripped  # (a glog prefix names the file: `torch/distributed/elastic/...`)
        if not self._agent and (
            any(a in said for a in _AGENTS) or _TORCHRUN_LABEL.match(said) is not None
        ):
            self._agent = True
        if self._srun is None and stripped.startswith("srun: error: "):
            self._read_srun(stripped)
        if self._mpi is None:
            self._read_mpi(file, stripped)
        self._track_block(file, stripped)

    def first_failure(self) -> FirstFailure | None:
        """torchrun's first observed failure, else srun's first task that ended badly, else
        mpirun's first process (each as a rank where no launcher agent showed), else None."""
        if self._root is not None:
            return FirstFailure(self._root[0], self._root[1], self._root_exit, "torchrun")
        if self._agent:
            return None
        return self._srun or self._mpi

    def _read_mpi(self, file: int, stripped: str) -> None:
        m = _MPI_SIGNAL.search(stripped)
        if m is not None:
            self._mpi = FirstFailure(m["host"], int(m["rank"]), -int(m["signal"]), "mpirun")
            return
        if _MPI_FIRST in stripped:
            self._mpi_block, self._mpi_rank = (file, _MPI_LINES), None
            return
        if self._mpi_block is None or self._mpi_block[0] != file:
            return
        left = self._mpi_block[1] - 1
        self._mpi_block = (file, left) if left > 0 else None
        name = _MPI_NAME.search(stripped)
        if name is not None:
            self._mpi_rank = int(name["vpid"] or name["rank"])
            return
        code = _MPI_EXIT.search(stripped)
        if code is not None:
            self._mpi = FirstFailure(None, self._mpi_rank, int(code["code"]), "mpirun")
            self._mpi_block = None

    def _read_srun(self, stripped: str) -> None:
        m = _SRUN_EXIT.match(stripped)
        if m is None:
            return
        if m["code"] is not None:
            code: int | None = int(m["code"])
        else:
            signal = _SIGNALS.get(m["signal"])
            code = -signal if signal is not None else None
        tasks = m["tasks"]
        rank = int(tasks) if tasks.isdigit() else None  # several at once: none of them first
        self._srun = FirstFailure(m["host"], rank, code, "srun")

    def _track_block(self, file: int, stripped: str) -> None:
        low = stripped[:40].lower()
        if low.startswith("root cause (first observed failure)"):
            self.block, self.block_file = Block(True), file
            return
        if low.startswith("failures:"):
            self.block, self.block_file = Block(False), file
            return
        if self.block is None or self.block_file != file:
            return
        if low.startswith("[") and "]:" in low[:8]:
            self.block.host = self.block.rank = None
            return
        if low.startswith("====="):
            self.block = None
            return
        hm = _BLOCK_HOST.match(stripped)
        if hm:
            self.block.host = hm["host"]
            if self.block.root and self._root is None:
                self._root = (hm["host"], None)
            return
        rm = _BLOCK_RANK.match(stripped)
        if rm:
            self.block.rank = int(rm["rank"])
            if self.block.root and self._root is not None and self._root[1] is None:
                self._root = (self._root[0], int(rm["rank"]))
            return
        em = _BLOCK_EXIT.match(stripped)
        if em and self.block.root and self._root_exit is None:
            self._root_exit = int(em["code"])


def srun_stopped_step(words: str) -> bool:
    """Whether a line's words are srun's that a task exited on an error of its own (an exit code,
    not a signal: `srun: error: node-3: task 1: Exited with exit code 1`), or that srun is
    terminating the step's other tasks (`srun: Terminating StepId=21941655.1`)."""
    if _SRUN_TERMINATING in words:
        return True
    m = _SRUN_EXIT.match(words.strip())
    return m is not None and m["code"] is not None and int(m["code"]) > 0


__all__ = ["Block", "FirstFailure", "Launchers", "srun_stopped_step"]
